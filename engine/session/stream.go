package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// The stream driver: a replica's live session, applied from the live
// stream (NATS JetStream, package bus) in order, the replica beside the
// feed included, so that replicas at the same stream sequence hold the
// same session and give the same answers.
//
// Where a booting replica starts: its snapshot covers every session up
// to its last (Dataset.LastSession); the batches of those sessions are
// not applied (counted as covered). When the snapshot records its
// position in the stream (engine.Meta.Stream: the first sequence it does
// not cover, from the session log copy pregao update read), the replica
// checks the message before it is the batch the snapshot names and
// consumes from there; otherwise (no position, or one the stream
// contradicts: counted, reason "snapshot") it looks up the last batch of
// its last session in the stream and consumes after it. It answers
// /readyz 200 once it has applied the stream up to its head (a message
// delivered with none after it).

// streamState is what /readyz and the gauges read of the stream,
// published whole.
type streamState struct {
	seq     uint64    // the last stream sequence handed over
	pending uint64    // messages after it when it was delivered
	stored  time.Time // when the stream stored it
}

// startPoint is where the replica started consuming: from the
// snapshot's position, or (lookup) after its last session's last batch.
type startPoint struct {
	from     uint64
	position engine.StreamPosition // the snapshot's (zero: none)
	lookup   bool
}

// stream applies the stream's batches to the head.
type stream struct {
	head *head
	log  *slog.Logger
	met  *metrics

	bus      atomic.Pointer[bus.Bus] // set by run
	sstate   atomic.Pointer[streamState]
	from     atomic.Pointer[startPoint] // set by start
	caughtUp atomic.Bool
	// downSince is when the stream was last found unreachable (unix ns;
	// 0: reachable).
	downSince    atomic.Int64
	started      time.Time
	redeliveries atomic.Int64
}

func newStream(h *head, log *slog.Logger, met *metrics) *stream {
	s := &stream{head: h, log: log.With("live", "stream"), met: met, started: time.Now()}
	s.sstate.Store(&streamState{})
	return s
}

// start returns the stream sequence to consume from: the snapshot's
// position when the stream agrees with it (checkPosition), else after
// the last batch of the last session the snapshot covers; and the
// stream's head. The clock is the one of the last batch covered.
func (s *stream) start(ctx context.Context, b *bus.Bus) (from, head uint64, err error) {
	if b.Server() != nil {
		// The embedded server's stream is this process's to make.
		if _, err := b.EnsureStream(ctx); err != nil {
			return 0, 0, err
		}
	}
	if head, _, err = b.Head(ctx); err != nil {
		return 0, 0, err
	}
	d := s.head.store.Current()
	if d == nil {
		return 1, head, nil
	}
	pos := d.Meta().Stream
	var why string // what contradicts the snapshot's position
	if pos.Known() {
		var bt *bus.Batch
		if bt, why, err = checkPosition(ctx, b, pos); err != nil {
			return 0, 0, err
		}
		if why == "" && pos.Session > d.LastSession() {
			// Starting there would skip the batches of sessions the
			// snapshot has no data of.
			why = "the snapshot's last session is " + d.LastSession().String() + ", before the position's"
		}
		if why == "" {
			s.setClock(bt)
			s.from.Store(&startPoint{from: pos.Next, position: pos})
			return pos.Next, head, nil
		}
	}
	from = 1
	if d.LastSession().Valid() {
		seq, bt, err := b.LastOfSession(ctx, d.LastSession())
		if err != nil {
			return 0, 0, err
		}
		if seq > 0 {
			from = seq + 1
		}
		s.setClock(bt)
	}
	if why != "" {
		// Once the lookup answered: start is tried again on errors.
		s.met.feedErrors.WithLabelValues(reasonSnapshot).Inc()
		s.log.Warn("live stream: the snapshot's position does not match the stream; starting after its last session's last batch instead",
			"snapshot_position", pos.String(), "stream", why, "from_sequence", from)
	}
	s.from.Store(&startPoint{from: from, position: pos, lookup: true})
	return from, head, nil
}

// setClock takes batch bt's clock as the API's (nil: none).
func (s *stream) setClock(bt *bus.Batch) {
	if bt != nil {
		s.head.clock.set(time.UnixMilli(bt.Record.At), bt.Virtual)
	}
}

// checkPosition checks the snapshot's position pos against the stream:
// the message at pos.Next-1 must be the batch pos names (returned), or
// be gone from the stream (its limits) with pos.Next within the stream
// (first <= pos.Next <= last+1). why says what contradicts pos ("" when
// nothing does); err is a failure to ask the stream.
func checkPosition(ctx context.Context, b *bus.Bus, pos engine.StreamPosition) (bt *bus.Batch, why string, err error) {
	if pos.Name != bus.StreamName {
		return nil, fmt.Sprintf("the stream is %s, not %s", bus.StreamName, pos.Name), nil
	}
	first, last, err := b.Bounds(ctx)
	if err != nil {
		return nil, "", err
	}
	bt, err = b.Message(ctx, pos.Next-1)
	switch {
	case errors.Is(err, bus.ErrGone):
		if pos.Next > last+1 || first > pos.Next || first == 0 {
			return nil, fmt.Sprintf("message %d is not in the stream, which holds %d to %d", pos.Next-1, first, last), nil
		}
		return nil, "", nil // gone by the stream's limits: the position still stands
	case errors.Is(err, bus.ErrMessage):
		return nil, fmt.Sprintf("message %d is not a batch: %v", pos.Next-1, err), nil
	case err != nil:
		return nil, "", err
	case bt.Session != pos.Session || bt.Record.Seq != pos.Batch:
		return nil, fmt.Sprintf("message %d is batch %d of session %s", pos.Next-1, bt.Record.Seq, bt.Session), nil
	}
	return bt, "", nil
}

// run applies the stream of b until ctx ends.
func (s *stream) run(ctx context.Context, b *bus.Bus) {
	s.bus.Store(b)
	var from, head uint64
	for {
		var err error
		// Short tries: after the loss of a node the stream answers once
		// a new leader is elected (a few seconds), and a request sent
		// before then is never answered.
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		from, head, err = s.start(sctx, b)
		cancel()
		if err == nil {
			break
		}
		s.down()
		s.met.feedErrors.WithLabelValues(reasonBus).Inc()
		s.log.Warn("live stream unreachable; retrying", "err", err.Error())
		if live.Sleep(ctx, 250*time.Millisecond) != nil {
			return
		}
	}
	s.up()
	if head < from {
		s.setCaughtUp(from - 1)
	}
	how := "the snapshot's position"
	if sp := s.from.Load(); sp == nil || sp.lookup {
		how = "after the last batch of the snapshot's last session"
	}
	s.log.Info("applying the live stream", "from_sequence", from, "head", head, "from", how)
	b.Consume(ctx, from, s.deliver, func(err error) {
		if errors.Is(err, bus.ErrNoStream) {
			return // no feed has published yet
		}
		s.down()
		s.log.Warn("live stream consumer", "err", err.Error())
	})
}

// up and down note whether the stream is reachable.
func (s *stream) up() { s.downSince.Store(0) }
func (s *stream) down() {
	s.downSince.CompareAndSwap(0, time.Now().UnixNano())
}

func (s *stream) setCaughtUp(seq uint64) {
	if !s.caughtUp.Swap(true) {
		s.log.Info("live stream caught up: ready", "sequence", seq)
	}
}

// deliver applies one message: a batch of a session the snapshot covers
// is skipped, one of a later session starts it, one of an earlier
// session than the live one is refused; a message that does not decode,
// a sequence gap and a batch the engine refuses are counted and logged.
// Nothing is applied in part.
func (s *stream) deliver(d *bus.Delivery) {
	s.up()
	h := s.head
	h.mu.Lock()
	defer h.mu.Unlock()
	defer func() {
		s.sstate.Store(&streamState{seq: d.StreamSeq, pending: d.Pending, stored: d.Stored})
		if d.Pending == 0 {
			s.setCaughtUp(d.StreamSeq) // at the head: nothing after it
		}
		h.publishState()
	}()
	if d.Gap > 0 {
		sd := engine.NoDate
		if d.Batch != nil {
			sd = d.Batch.Session
		}
		h.noteGap(&engine.LiveGap{Kind: "stream", Session: sd, First: d.StreamSeq - d.Gap, Last: d.StreamSeq - 1, StreamSeq: d.StreamSeq})
		s.log.Warn("live stream: messages missing before this one (gone from the stream); applying on", "stream_seq", d.StreamSeq, "missing", d.Gap,
			"first_missing", d.StreamSeq-d.Gap)
	}
	if d.Err != nil {
		s.met.feedErrors.WithLabelValues(reasonMessage).Inc()
		s.log.Warn("live stream: a message that is not a batch, skipped", "stream_seq", d.StreamSeq, "err", d.Err.Error())
		return
	}
	if !s.session(d) {
		return
	}
	b := d.Batch.LiveBatch()
	if b.Seq <= h.seq {
		s.redelivered()
		return
	}
	if b.Seq > h.seq+1 {
		h.noteGap(&engine.LiveGap{Kind: "batch", Session: h.session, First: h.seq + 1, Last: b.Seq - 1, StreamSeq: d.StreamSeq})
		s.log.Warn("live stream: batches missing before this one; applying on (the minutes only they carried are missing until a later batch or the session's snapshot)",
			"session", h.session.String(), "seq", b.Seq, "after", h.seq, "stream_seq", d.StreamSeq)
	}
	switch out, _ := h.apply(b, false, "stream_seq", d.StreamSeq); out {
	case redelivered:
		s.met.redeliveries.Inc()
		s.redeliveries.Add(1)
	case applied:
		s.met.applyDelay.Observe(max(time.Since(d.Stored), 0).Seconds())
		s.setClock(d.Batch)
	}
}

// session checks the session of d's batch against the head's: false
// when the batch is not applied (a session the snapshot covers, an
// earlier one than the live one, one the Store cannot start); a later
// session is started. The caller holds s.head.mu.
func (s *stream) session(d *bus.Delivery) bool {
	h, bt := s.head, d.Batch
	base := h.store.Current()
	switch {
	case base != nil && bt.Session <= base.LastSession():
		h.met.batches.WithLabelValues("covered").Inc()
		return false
	case h.session.Valid() && bt.Session < h.session:
		h.met.batches.WithLabelValues("refused").Inc()
		h.met.feedErrors.WithLabelValues(reasonSession).Inc()
		s.log.Warn("live stream: a batch of an earlier session than the live one, refused", "stream_seq", d.StreamSeq,
			"session", bt.Session.String(), "live_session", h.session.String(), "seq", bt.Record.Seq)
		return false
	case bt.Session != h.session:
		// A gap of the stream just before concerned the session before,
		// or this one's first batches, which the batch check counts.
		if err := h.start(bt.Session); err != nil {
			h.met.batches.WithLabelValues("refused").Inc()
			s.log.Error("live session not started", "session", bt.Session.String(), "err", err.Error())
			return false
		}
		s.log.Info("live session started from the stream", "session", bt.Session.String(), "stream_seq", d.StreamSeq)
	}
	return true
}

// redelivered counts a batch delivered again.
func (s *stream) redelivered() {
	s.met.batches.WithLabelValues("redelivered").Inc()
	s.met.redeliveries.Inc()
	s.redeliveries.Add(1)
}

// status is /readyz's stream object.
func (s *stream) status() *engine.StreamStatus {
	ss := s.sstate.Load()
	st := &engine.StreamStatus{Sequence: ss.seq, Pending: ss.pending, Redeliveries: s.redeliveries.Load(),
		CaughtUp: s.caughtUp.Load(), Gaps: s.head.gaps.Load(), SessionGaps: s.head.sessionGaps.Load(), LastGap: s.head.lastGap.Load()}
	if sp := s.from.Load(); sp != nil {
		st.Start, st.Position, st.Lookup = sp.from, sp.position, sp.lookup
	}
	b := s.bus.Load()
	if b != nil {
		st.Connected = b.Connected() && s.downSince.Load() == 0
	}
	if ss.pending > 0 && !ss.stored.IsZero() {
		st.Lag = max(time.Since(ss.stored), 0)
	}
	if !st.Connected {
		// Since the connection was lost, else since the stream was last
		// found unreachable, else since the start (never reached).
		switch t := s.downSince.Load(); {
		case b != nil && !b.DownSince().IsZero():
			st.Stale = time.Since(b.DownSince())
		case t != 0:
			st.Stale = time.Since(time.Unix(0, t))
		default:
			st.Stale = time.Since(s.started)
		}
	}
	return st
}
