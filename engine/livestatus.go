package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"time"
)

// The live session as its keeper (package engine/session) reports it and
// the HTTP layer shows it: /readyz's "live" object, the push endpoints'
// trades and their refusals. They are declared here, beside the Store the
// session writes, so that the keeper fills them and the HTTP layer reads
// them without either declaring them.

// LiveStatus is the state of the live session that /readyz reports in
// its "live" object.
type LiveStatus struct {
	Feed    string // the feed: replay, b3 or push; "stream" for a replica without a feed of its own
	Session Date   // the session's day (NoDate: none yet, a replica of the stream before its first batch)
	Seq     uint64 // the last batch applied (0: none yet)
	// Watermark is the end of the latest minute holding a bar (zero: no
	// bar yet).
	Watermark time.Time
	// Lag is how far the watermark is behind the feed's clock (0 once
	// the session is complete).
	Lag time.Duration
	// Complete says the feed has nothing more for the session.
	Complete bool
	// Restoring says the session is being read back from its log (a
	// restart): /readyz answers 503 until it is done, so that no request
	// is answered with the session half restored.
	Restoring bool
	// Degraded says why the session cannot take batches for now ("":
	// it can): its log could not be written, and is reopened with
	// backoff; pushes meanwhile get 503, the feed waits. The session
	// keeps serving what it holds.
	Degraded string
	// Gaps counts the gaps found in the live session's batches since the
	// process started, whatever their source (the stream's, a session
	// log's damaged records), SessionGaps those of the session under way
	// while no snapshot has taken it over (its minutes carried only by
	// the missing batches are missing); LastGap is the last one (nil:
	// none).
	Gaps, SessionGaps int64
	LastGap           *LiveGap
	// Stream is the state of the live stream the session is applied
	// from (serve --live); nil without one.
	Stream *StreamStatus
}

// StreamStatus is what /readyz reports of the live stream (NATS
// JetStream) a replica applies the session's batches from.
type StreamStatus struct {
	// Sequence is the last stream sequence applied (0: none yet).
	Sequence uint64
	// Pending is how many messages of the stream are not applied yet,
	// Lag how long the oldest of them has waited (0 when none).
	Pending uint64
	Lag     time.Duration
	// Redeliveries counts the batches delivered again (a sequence number
	// already applied: nothing changed).
	Redeliveries int64
	// Connected says the replica reaches the stream; Stale is how long
	// it has not (0 while connected): it serves its last state meanwhile.
	Connected bool
	Stale     time.Duration
	// CaughtUp says the replica has applied the stream up to its head
	// once since it started: /readyz answers 503 before.
	CaughtUp bool
	// Start is the stream sequence the replica started consuming from
	// (0: not started yet); Position the position in the stream recorded
	// in the snapshot it started with (zero: none). Start is
	// Position.Next when the stream agreed with it; Lookup says it did
	// not (or there was none), and Start follows the last batch of the
	// snapshot's last session instead (not shown on /readyz).
	Start    uint64
	Position StreamPosition
	Lookup   bool
	// Gaps counts the gaps the replica found since it started (stream
	// sequences gone from the stream, batch sequence numbers skipped in
	// a session), SessionGaps those in the live session while no
	// snapshot has taken it over (its minutes carried only by the
	// missing batches are missing); LastGap is the last one (nil: none).
	Gaps, SessionGaps int64
	LastGap           *LiveGap
}

// LiveGap is a gap in the live session's batches: the missing sequences
// First to Last, stream sequences (Kind "stream": messages gone from the
// stream) or batch sequence numbers of Session (Kind "batch": skipped in
// the stream; Kind "log": damaged records of the session log, set
// aside), found at stream sequence StreamSeq (the message after them; 0
// for a log's).
type LiveGap struct {
	Kind        string
	Session     Date // NoDate: the message after the gap is not a batch
	First, Last uint64
	StreamSeq   uint64
}

// LiveTrade is one trade (or its cancellation) of the live session, as a
// push carries it and the session log keeps it.
type LiveTrade struct {
	Ticker      string
	Time        int64 // unix milliseconds, UTC
	Price       Num   // BRL per share
	Quantity    int64 // shares
	ID          string
	Cancel      bool // cancels the trade ID (unique per ticker and day)
	AfterMarket bool // the after-market session (B3 session 6)
}

// LiveSink receives the batches of the push endpoints (POST
// /admin/live/bars and /admin/live/trades). Its methods are called
// concurrently; an implementation serializes them.
type LiveSink interface {
	// NextSeq is the sequence number the next pushed batch must carry.
	NextSeq() uint64
	// Applied returns the digest (LiveDigest) of the batch numbered seq
	// of the session under way, and false when the session holds no such
	// batch: a second pusher's batch of that number is "applied already"
	// only when its digest is the same.
	Applied(seq uint64) (digest string, ok bool)
	// PushBars applies a batch of whole 1-minute bars numbered seq.
	PushBars(seq uint64, bars []LiveBar) error
	// PushTrades aggregates a batch of trades numbered seq into bars and
	// applies them.
	PushTrades(seq uint64, trades []LiveTrade) error
	// Closed returns, when the session is over (complete, or handed over
	// to the snapshot of its day), an error wrapping ErrLiveClosed that
	// says so; nil while it takes batches.
	Closed() error
}

// ErrLiveSeq is what a LiveSink's Push methods return (wrapped or not)
// for a batch whose seq is not NextSeq: nothing of it is applied, and the
// push endpoints answer 409 naming NextSeq.
var ErrLiveSeq = errors.New("live batch out of sequence")

// ErrLiveClosed is what a LiveSink's Push methods return (wrapped) for a
// batch of a session that is over (complete, or handed over to the
// snapshot of its day): nothing of it is applied, and the push
// endpoints answer 409.
var ErrLiveClosed = errors.New("live session closed")

// ErrLiveUnavailable is what a LiveSink's Push methods return (wrapped)
// when a batch cannot be made durable for now (the live stream is
// unreachable): nothing of it is applied, and the push endpoints answer
// 503; the client sends the same batch again.
var ErrLiveUnavailable = errors.New("live feed unavailable for now")

// LiveDigest returns the digest of a pushed batch's content: of its
// trades when it has any (a push of trades), else of its bars; 32
// lower-case hexadecimal digits (the first 128 bits of a SHA-256 of every
// field, in order). Two batches with the same lines in the same order
// have the same digest, whatever their sequence number or arrival time.
func LiveDigest(bars []LiveBar, trades []LiveTrade) string {
	h := sha256.New()
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(n Num) { b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(n))) }
	i64 := func(n int64) { b = binary.AppendVarint(b, n) }
	flag := func(v bool) {
		if v {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	if len(trades) > 0 {
		b = append(b, 't')
		for i := range trades {
			t := &trades[i]
			str(t.Ticker)
			i64(t.Time)
			num(t.Price)
			i64(t.Quantity)
			str(t.ID)
			flag(t.Cancel)
			flag(t.AfterMarket)
			h.Write(b)
			b = b[:0]
		}
	} else {
		b = append(b, 'b')
		for i := range bars {
			x := &bars[i]
			str(x.Ticker)
			i64(x.Time)
			flag(x.Removed)
			if x.Removed {
				h.Write(b) // a minute taken out has no values
				b = b[:0]
				continue
			}
			num(x.Open)
			num(x.High)
			num(x.Low)
			num(x.Close)
			num(x.Volume)
			i64(x.Quantity)
			i64(x.Trades)
			h.Write(b)
			b = b[:0]
		}
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)[:16])
}
