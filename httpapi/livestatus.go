package httpapi

import (
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
)

// LiveStatus is the state of the live session that /readyz reports in
// its "live" object.
type LiveStatus struct {
	Feed    string      // the feed: replay, b3 or push
	Session engine.Date // the session's day (NoDate: none yet, a replica of the stream before its first batch)
	Seq     uint64      // the last batch applied (0: none yet)
	// Watermark is the end of the latest minute holding a bar (zero: no
	// bar yet).
	Watermark time.Time
	// Lag is how far the watermark is behind the feed's clock (0 once
	// the session is complete).
	Lag time.Duration
	// Complete says the feed has nothing more for the session.
	Complete bool
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
	// Position.Next when the stream agreed with it.
	Start    uint64
	Position engine.StreamPosition
	// Gaps counts the gaps the replica found since it started (stream
	// sequences gone from the stream, batch sequence numbers skipped in
	// a session), SessionGaps those in the live session while no
	// snapshot has taken it over (its minutes carried only by the
	// missing batches are missing); LastGap is the last one (nil: none).
	Gaps, SessionGaps int64
	LastGap           *StreamGap
}

// StreamGap is a gap in the live stream: the missing sequences First to
// Last, stream sequences (Kind "stream": messages gone from the stream)
// or batch sequence numbers of Session (Kind "batch"), found at stream
// sequence StreamSeq (the message after them).
type StreamGap struct {
	Kind        string
	Session     engine.Date // NoDate: the message after the gap is not a batch
	First, Last uint64
	StreamSeq   uint64
}

// SetLiveStatus makes /readyz carry a "live" object with what fn returns
// while it reports true (a live session runs): fn is called by each
// /readyz answer (concurrently) and must be cheap. nil: no live object.
func (a *API) SetLiveStatus(fn func() (LiveStatus, bool)) {
	if fn == nil {
		a.liveStatus.Store(nil)
		return
	}
	a.liveStatus.Store(&fn)
}

// appendLiveStatus appends `,"live":{...}` when a live session runs.
func (a *API) appendLiveStatus(dst []byte) []byte {
	fn := a.liveStatus.Load()
	if fn == nil {
		return dst
	}
	s, ok := (*fn)()
	if !ok {
		return dst
	}
	dst = append(dst, `,"live":{"feed":`...)
	dst = appendString(dst, s.Feed)
	if s.Session.Valid() {
		dst = append(dst, `,"session":"`...)
		dst = s.Session.AppendFormat(dst)
		dst = append(dst, `","seq":`...)
	} else {
		dst = append(dst, `,"session":null,"seq":`...)
	}
	dst = strconv.AppendUint(dst, s.Seq, 10)
	dst = append(dst, `,"watermark":`...)
	dst = appendTime(dst, s.Watermark)
	dst = append(dst, `,"lag_seconds":`...)
	dst = strconv.AppendFloat(dst, max(s.Lag, 0).Seconds(), 'f', -1, 64)
	dst = append(dst, `,"complete":`...)
	dst = strconv.AppendBool(dst, s.Complete)
	if st := s.Stream; st != nil {
		dst = append(dst, `,"stream":{"sequence":`...)
		dst = strconv.AppendUint(dst, st.Sequence, 10)
		dst = append(dst, `,"pending":`...)
		dst = strconv.AppendUint(dst, st.Pending, 10)
		dst = append(dst, `,"lag_seconds":`...)
		dst = strconv.AppendFloat(dst, max(st.Lag, 0).Seconds(), 'f', -1, 64)
		dst = append(dst, `,"redeliveries":`...)
		dst = strconv.AppendInt(dst, st.Redeliveries, 10)
		dst = append(dst, `,"connected":`...)
		dst = strconv.AppendBool(dst, st.Connected)
		dst = append(dst, `,"stale_seconds":`...)
		dst = strconv.AppendFloat(dst, max(st.Stale, 0).Seconds(), 'f', -1, 64)
		dst = append(dst, `,"caught_up":`...)
		dst = strconv.AppendBool(dst, st.CaughtUp)
		dst = append(dst, `,"start":`...)
		dst = strconv.AppendUint(dst, st.Start, 10)
		dst = append(dst, `,"snapshot_position":`...)
		if p := st.Position; p.Known() {
			dst = append(dst, `{"next":`...)
			dst = strconv.AppendUint(dst, p.Next, 10)
			dst = append(dst, `,"name":`...)
			dst = appendString(dst, p.Name)
			dst = append(dst, `,"session":`...)
			dst = appendDate(dst, p.Session)
			dst = append(dst, `,"batch":`...)
			dst = strconv.AppendUint(dst, p.Batch, 10)
			dst = append(dst, '}')
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"gaps":`...)
		dst = strconv.AppendInt(dst, st.Gaps, 10)
		dst = append(dst, `,"session_gaps":`...)
		dst = strconv.AppendInt(dst, st.SessionGaps, 10)
		dst = append(dst, `,"last_gap":`...)
		if g := st.LastGap; g == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, `{"kind":`...)
			dst = appendString(dst, g.Kind)
			if g.Session.Valid() {
				dst = append(dst, `,"session":"`...)
				dst = g.Session.AppendFormat(dst)
				dst = append(dst, '"')
			} else {
				dst = append(dst, `,"session":null`...)
			}
			dst = append(dst, `,"first":`...)
			dst = strconv.AppendUint(dst, g.First, 10)
			dst = append(dst, `,"last":`...)
			dst = strconv.AppendUint(dst, g.Last, 10)
			dst = append(dst, `,"stream_sequence":`...)
			dst = strconv.AppendUint(dst, g.StreamSeq, 10)
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// catchingUp returns why the replica is not ready yet while it catches
// up the live stream (""): ready otherwise.
func (a *API) catchingUp() string {
	fn := a.liveStatus.Load()
	if fn == nil {
		return ""
	}
	s, ok := (*fn)()
	if !ok || s.Stream == nil || s.Stream.CaughtUp {
		return ""
	}
	if !s.Stream.Connected {
		return "catching up the live stream: not connected to it yet"
	}
	return "catching up the live stream: " + strconv.FormatUint(s.Stream.Pending, 10) + " messages behind, at sequence " + strconv.FormatUint(s.Stream.Sequence, 10)
}
