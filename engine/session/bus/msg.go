package bus

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// The stream's name, its subjects and the headers of a message.
const (
	StreamName    = "PREGAO_LIVE"
	SubjectPrefix = "pregao.live."
	HeaderSession = "Pregao-Session"
	HeaderSeq     = "Pregao-Seq"
	// HeaderClock is "virtual" on the batches of a feed whose clock is
	// its own (a replay): replicas take the record's At as their clock.
	HeaderClock = "Pregao-Clock"
)

// MaxMessage bounds a message's body: a batch of every ticker's minute
// is far below it (about 200 bytes a bar).
const MaxMessage = 8 << 20

// Subject returns the subject of session sd's batches.
func Subject(sd engine.Date) string { return SubjectPrefix + sd.String() }

// Batch is one message of the stream, decoded.
type Batch struct {
	Session engine.Date
	Record  *live.Record
	// Virtual says the feed's clock is its own (a replay's): Record.At
	// is the time the API answers as of.
	Virtual bool
}

// LiveBatch returns the batch as the engine applies it.
func (b *Batch) LiveBatch() *engine.LiveBatch {
	return &engine.LiveBatch{Seq: b.Record.Seq, Session: b.Session, Bars: b.Record.Bars, Complete: b.Record.Complete, At: b.Record.At}
}

// ErrMessage wraps every reason Decode refuses a message.
var ErrMessage = errors.New("not a live batch message")

// Encode returns the message of record rec of session sd, with its
// deduplication id (MsgID); virtual marks a feed whose clock is its own.
// rec.Stream is left out: a message's stream sequence is the stream's.
func Encode(sd engine.Date, rec *live.Record, virtual bool) (*nats.Msg, error) {
	if rec.Stream != 0 {
		r := *rec
		r.Stream = 0
		rec = &r
	}
	line := live.AppendRecord(nil, rec)
	if len(line) > MaxMessage {
		return nil, fmt.Errorf("%w: batch %d is %d bytes, above %d", ErrMessage, rec.Seq, len(line), MaxMessage)
	}
	m := nats.NewMsg(Subject(sd))
	m.Data = line
	m.Header.Set(HeaderSession, sd.String())
	m.Header.Set(HeaderSeq, strconv.FormatUint(rec.Seq, 10))
	m.Header.Set(nats.MsgIdHdr, msgID(sd, rec.Seq, line))
	if virtual {
		m.Header.Set(HeaderClock, "virtual")
	}
	return m, nil
}

// msgID is SESSION/SEQ/CRC, CRC the record line's checksum.
func msgID(sd engine.Date, seq uint64, line []byte) string {
	return sd.String() + "/" + strconv.FormatUint(seq, 10) + "/" + string(line[:8])
}

// Decode decodes a message: subject, its headers (header returns a
// header's value) and body. The session header, the subject and the
// record's sequence number must agree, and the record must be whole
// (its checksum matches).
func Decode(subject string, header func(string) string, data []byte) (*Batch, error) {
	if len(data) > MaxMessage {
		return nil, fmt.Errorf("%w: %d bytes", ErrMessage, len(data))
	}
	s := header(HeaderSession)
	sd, err := engine.ParseDate(s)
	if err != nil {
		return nil, fmt.Errorf("%w: session header %.40q", ErrMessage, s)
	}
	if subject != Subject(sd) {
		return nil, fmt.Errorf("%w: subject %.60q, the session header says %s", ErrMessage, subject, sd)
	}
	hs := header(HeaderSeq)
	seq, err := strconv.ParseUint(hs, 10, 64)
	if err != nil || seq == 0 || strings.HasPrefix(hs, "+") || strings.HasPrefix(hs, "0") {
		return nil, fmt.Errorf("%w: sequence header %.40q", ErrMessage, hs)
	}
	rec, err := live.DecodeRecord(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMessage, err)
	}
	if rec.Seq != seq {
		return nil, fmt.Errorf("%w: record %d under sequence header %d", ErrMessage, rec.Seq, seq)
	}
	if id := header(nats.MsgIdHdr); id != "" && id != msgID(sd, seq, data) {
		return nil, fmt.Errorf("%w: deduplication id %.80q is not the record's", ErrMessage, id)
	}
	var virtual bool
	switch c := header(HeaderClock); c {
	case "":
	case "virtual":
		virtual = true
	default:
		return nil, fmt.Errorf("%w: clock header %.40q", ErrMessage, c)
	}
	return &Batch{Session: sd, Record: rec, Virtual: virtual}, nil
}

// DecodeMsg decodes a NATS message (Decode).
func DecodeMsg(subject string, h nats.Header, data []byte) (*Batch, error) {
	return Decode(subject, h.Get, data)
}
