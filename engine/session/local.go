package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// local is the local driver: the feed of this process (a replay, B3's
// trade files, or the pushes it takes as the push endpoints' sink), its
// numbering and its session log. A batch is durable before it is
// acknowledged: appended to the session log file and then applied to the
// head (head non-nil), or published to the live stream and acknowledged
// by it (bus non-nil: the stream driver applies it, here and on every
// replica).
//
// mu serializes every writer of the session: the feed's steps, the
// pushes, the session's start and end. It is never held while a feed
// waits or fetches, and taken before the head's lock, never after.
type local struct {
	cfg   *settings
	feed  live.Feed // nil: push
	head  *head     // nil: the batches go to the stream only
	clock *Clock    // the feed's
	// virtual says the feed's clock is its own (a replay's).
	virtual bool
	met     *metrics
	log     *slog.Logger
	// now is the wall clock of the push session's calendar (tests).
	now func() time.Time
	// setSink makes the push feed the push endpoints' sink (nil: none).
	setSink func(engine.LiveSink)

	// state is the session as published to the stream (bus non-nil),
	// for a feed's own readiness and gauges.
	state atomic.Pointer[State]

	// bus is the live stream the feed publishes to (nil: the session log
	// file in cfg.dir, applied here), set before start; ctx ends the
	// retries of a feed that cannot reach it. dups counts the batches the
	// stream already held.
	bus  *bus.Bus
	ctx  context.Context
	dups atomic.Int64

	// degraded is why the session log cannot take batches for now (nil:
	// it can), for /readyz.
	degraded atomic.Pointer[string]

	mu      sync.Mutex
	started bool // the first session was opened
	// stopped says the driver's loop ended (the process shuts down): the
	// session log is closed, and a push is refused as unavailable (send
	// it again, to this server restarted or another), never as closed.
	stopped  bool
	session  engine.Date
	slog     sessionLog // nil: no session open (or the log is broken)
	seq      uint64     // the last batch made durable
	lastAt   time.Time  // the feed's clock of batch seq (zero: unknown)
	complete bool
	trades   *live.Trades // push: the session's aggregation of pushed trades
	// broken is why the session log could not be written (nil: it can):
	// the log is closed and reopened with backoff (recoverLog); batches
	// are refused meanwhile with engine.ErrLiveUnavailable.
	broken error
	// unopened says the session's log could not be opened (broken says
	// why): it is opened again, the session read back from it, with
	// backoff (openWaiting for a feed, recoverLog for pushes).
	unopened bool
	// unrestored says the first session's log has not been opened yet:
	// its batches, if it has any, are not read back, so the session is
	// still restoring (/readyz 503, priced routes 503) until recoverLog
	// opens it, rather than serving the snapshot's prices as the day's.
	unrestored bool
	// digests holds the digest (engine.LiveDigest) of each batch of a
	// push session made durable, by seq.
	digests map[uint64]string
	// feedErrs and tradeErrs are the error counts already added to the
	// metrics.
	feedErrs, tradeErrs map[string]int64
}

// sessionLog is where a batch goes before it is acknowledged: the
// session log file (live.Log), or the live stream (streamLog).
type sessionLog interface {
	Append(*live.Record) error
	Undo() error
	Close() error
	Last() uint64
}

// newLocal builds the feed of cfg (a replay reads its recording now, so
// that a bad folder stops the command at once).
func newLocal(cfg *settings, h *head, log *slog.Logger, met *metrics, now func() time.Time) (*local, error) {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("--live-dir: %w", err)
	}
	l := &local{cfg: cfg, head: h, log: log.With("feed", cfg.kind), clock: &Clock{}, met: met, now: now, session: engine.NoDate,
		feedErrs: map[string]int64{}, tradeErrs: map[string]int64{}}
	l.state.Store(&State{Session: engine.NoDate})
	switch cfg.kind {
	case FeedReplay:
		var from time.Duration
		if hm, err := time.Parse("15:04", cfg.from); err == nil {
			from = time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute
		}
		rp, err := live.NewReplay(live.ReplayConfig{Dir: cfg.replay, Session: cfg.session, Speed: cfg.speed, From: from})
		if err != nil {
			return nil, fmt.Errorf("--feed %s:%s: %w", FeedReplay, cfg.replay, err)
		}
		l.feed = rp
		l.log.Info("replay loaded", "recording", rp.String())
	case FeedB3:
		b, err := live.NewB3(cfg.b3)
		if err != nil {
			return nil, fmt.Errorf("--feed b3: %w", err)
		}
		l.feed = b
	}
	if l.feed != nil {
		var start time.Time
		start, l.virtual = l.feed.Clock()
		l.clock.set(start, l.virtual)
	}
	return l, nil
}

// firstSession returns the session the driver starts with.
func (l *local) firstSession() engine.Date {
	switch {
	case l.cfg.session.Valid():
		return l.cfg.session
	case l.feed != nil:
		return l.feed.Session()
	}
	return live.CurrentSession(l.now())
}

// start opens the first session: the snapshot is published by then. A
// push feed becomes the push endpoints' sink. A session log that cannot
// be opened (a folder not writable, a full disk) is opened again with
// backoff, the session restoring (not ready) meanwhile, as its batches
// are not read back: a feed waits for it; a push session takes pushes
// meanwhile, refusing them as unavailable (503). It reports whether the
// session is restored (or given up) when it returns.
func (l *local) start() (restored bool, err error) {
	l.mu.Lock()
	sd := l.firstSession()
	if l.feed != nil {
		err = l.openWaiting(l.ctx, sd)
	} else if err = l.openSession(sd); err != nil && l.unopened && l.ctx != nil && l.ctx.Err() == nil {
		l.log.Error("session log could not be opened: the session is not restored (not ready) and pushes are refused (503) until it opens; trying again", "session", sd.String(), "err", err.Error())
		l.unrestored = true
		go l.recoverLog(l.ctx, sd)
		err = nil
	}
	l.started = true
	restored = !l.unrestored
	l.mu.Unlock()
	if err == nil && l.feed == nil && l.setSink != nil {
		l.setSink(l)
	}
	return restored, err
}

// openWaiting opens session sd for a feed, trying again while its log
// cannot be opened (1 s, doubling up to 30 s) until ctx ends: the feed
// waits, so that it numbers no batch before the session is read back.
// At the process's first session the session is restoring (not ready)
// while it waits: its log may hold the day's batches (restoreFile).
// The caller holds l.mu, released while it waits.
func (l *local) openWaiting(ctx context.Context, sd engine.Date) error {
	err := l.openSession(sd)
	for wait := time.Second; err != nil && l.unopened && ctx != nil && ctx.Err() == nil; wait = min(2*wait, 30*time.Second) {
		l.log.Error("session log could not be opened: the feed waits; trying again", "session", sd.String(), "err", err.Error(), "retry", wait.String())
		l.mu.Unlock()
		live.Sleep(ctx, wait)
		l.mu.Lock()
		if ctx.Err() != nil {
			break
		}
		err = l.openSession(sd)
	}
	return err
}

// loop runs the feed, or the push session's calendar, until ctx ends,
// then closes the session log.
func (l *local) loop(ctx context.Context) {
	if l.feed != nil {
		l.runFeed(ctx)
	} else {
		l.runPushCalendar(ctx)
	}
	l.mu.Lock()
	l.stopped = true
	if l.slog != nil {
		l.slog.Close()
		l.slog = nil
	}
	l.mu.Unlock()
}

// openSession starts session sd: the previous session's log is closed,
// sd's opened and read back (restoreFile, or restoreStream with a
// stream). The caller holds l.mu.
func (l *local) openSession(sd engine.Date) error {
	if l.slog != nil {
		l.slog.Close()
		l.slog = nil
	}
	l.session, l.seq, l.lastAt, l.complete = sd, 0, time.Time{}, false
	l.setBroken(nil)
	l.newTrades()
	prune(l.cfg.dir, l.cfg.keep, sd, l.log)
	var err error
	if l.bus != nil {
		err = l.restoreStream(sd)
	} else {
		err = l.restoreFile(sd)
	}
	if err != nil {
		l.openFailed(err)
		return err
	}
	l.unopened = false
	if l.feed != nil {
		l.feed.Resume(l.seq, l.lastAt)
	}
	l.closeIfRolled()
	l.publishState()
	return nil
}

// openFailed notes that the session's log could not be opened (err): the
// session is degraded (/readyz) and refuses batches as unavailable until
// it is opened again. The caller holds l.mu.
func (l *local) openFailed(err error) {
	l.met.feedErrors.WithLabelValues(reasonLog).Inc()
	l.unopened = true
	l.setBroken(err)
	if l.head != nil {
		l.head.mu.Lock()
		l.head.publishState()
		l.head.mu.Unlock()
	}
	l.publishState()
}

// newTrades starts the push session's aggregation of trades (and its
// batches' digests) anew.
func (l *local) newTrades() {
	if l.cfg.kind == FeedPush {
		l.trades = live.NewTrades(l.session, false)
		l.digests = map[uint64]string{}
		clear(l.tradeErrs)
	}
}

// noteDurable records rec's batch as durable. The caller holds l.mu.
func (l *local) noteDurable(rec *live.Record) {
	l.seq, l.lastAt = rec.Seq, time.UnixMilli(rec.At)
	l.complete = l.complete || rec.Complete
	if l.digests != nil {
		l.digests[rec.Seq] = engine.LiveDigest(rec.Bars, rec.Trades)
	}
}

// commit makes batch b durable and applies it (with the trades it came
// from, for a push; at is the feed's clock): checked as the engine (and,
// with a stream, every replica) will check it, a batch it would refuse
// refused here, never logged or published; then appended to the session
// log and applied to the head (a batch the head still refuses taken out
// of the log again), or, with a stream, published. A log that cannot be
// written is broken: closed, reopened with backoff, and the batch
// refused meanwhile (engine.ErrLiveUnavailable: send it again). The
// caller holds l.mu and has checked b.Seq is l.seq+1 or above.
func (l *local) commit(b *engine.LiveBatch, trades []live.Trade, at time.Time) error {
	if l.broken != nil {
		return fmt.Errorf("%w: batch %d not taken: the session log is unavailable (%v); it is reopened, send the batch again", engine.ErrLiveUnavailable, b.Seq, l.broken)
	}
	if l.slog == nil {
		return fmt.Errorf("%w: batch %d: the live session %s is over (the snapshot of its day serves it)", engine.ErrLiveClosed, b.Seq, l.session)
	}
	// A batch the engine would refuse is refused before it is logged:
	// a crash before a logged batch is taken out of the log again would
	// restore it as one applied.
	if err := b.Check(l.session); err != nil {
		l.met.batches.WithLabelValues("refused").Inc()
		l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		l.log.Warn("live batch refused", "seq", b.Seq, "bars", len(b.Bars), "err", err.Error())
		return err
	}
	b.At = at.UnixMilli()
	rec := live.Record{Seq: b.Seq, At: b.At, Complete: b.Complete, Bars: b.Bars, Trades: trades}
	t0 := time.Now()
	if err := l.slog.Append(&rec); err != nil {
		if l.head == nil && errors.Is(err, bus.ErrMessage) {
			// Larger than a message of the stream may be: as the
			// engine's refusals, whole (a push's 400, not a 500).
			l.met.batches.WithLabelValues("refused").Inc()
			l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
			l.log.Warn("live batch refused", "seq", b.Seq, "bars", len(b.Bars), "trades", len(trades), "err", err.Error())
			return fmt.Errorf("%w: batch %d cannot go through the live stream (%v): send its lines in smaller batches", engine.ErrLiveBatch, b.Seq, err)
		}
		if l.head == nil {
			l.met.feedErrors.WithLabelValues(reasonBus).Inc()
			l.log.Error("live stream: batch not published", "seq", b.Seq, "err", err.Error())
			return err
		}
		l.met.feedErrors.WithLabelValues(reasonLog).Inc()
		l.log.Error("session log append failed: batch not applied; the log is reopened", "seq", b.Seq, "err", err.Error())
		l.breakLog(err)
		return fmt.Errorf("%w: batch %d not taken: the session log could not be written (%v); send it again", engine.ErrLiveUnavailable, b.Seq, err)
	}
	l.met.logAppend.Observe(time.Since(t0).Seconds())
	if l.head == nil {
		l.met.published.Inc()
		l.noteDurable(&rec)
		l.publishState()
		return nil
	}
	l.head.mu.Lock()
	out, err := l.head.apply(b, false)
	if out == applied {
		l.head.publishState()
	}
	l.head.mu.Unlock()
	if out != applied {
		if uerr := l.slog.Undo(); uerr != nil {
			l.log.Error("session log: a refused batch could not be taken out; the next restart refuses it again", "seq", b.Seq, "err", uerr.Error())
		}
		return err
	}
	l.noteDurable(&rec)
	l.closeIfRolled()
	return nil
}

// breakLog closes the session log that could not be written (err) and
// starts reopening it with backoff (recoverLog). The session's numbering
// and what the Store holds stay. The caller holds l.mu.
func (l *local) breakLog(err error) {
	l.slog.Close()
	l.slog = nil
	l.setBroken(err)
	if l.ctx != nil {
		go l.recoverLog(l.ctx, l.session)
	}
}

// setBroken sets why the log is broken (nil: it is not), for /readyz.
// The caller holds l.mu.
func (l *local) setBroken(err error) {
	l.broken = err
	if err == nil {
		l.degraded.Store(nil)
		return
	}
	msg := fmt.Sprintf("the session log cannot be written (%v): it is reopened; batches wait meanwhile", err)
	l.degraded.Store(&msg)
}

// recoverLog reopens session sd's broken log, waiting 1 s, then twice as
// long after each failure up to 30 s, until it opens or ctx ends.
func (l *local) recoverLog(ctx context.Context, sd engine.Date) {
	for wait := time.Second; ; wait = min(2*wait, 30*time.Second) {
		if live.Sleep(ctx, wait) != nil {
			return
		}
		l.mu.Lock()
		if l.broken == nil || l.session != sd {
			l.mu.Unlock()
			return
		}
		var err error
		if l.unopened {
			err = l.openSession(sd)
		} else {
			err = l.reopen()
		}
		if err == nil {
			l.log.Info("session log reopened: the session takes batches again", "session", sd.String(), "seq", l.seq)
			if l.unrestored {
				l.unrestored = false
				if l.head != nil {
					l.head.restoring.Store(false) // read back (a stream's restore leaves it): ready
				}
			}
		} else {
			l.log.Warn("session log still cannot be opened; retrying", "err", err.Error(), "retry", min(2*wait, 30*time.Second).String())
		}
		l.mu.Unlock()
		if err == nil {
			return
		}
	}
}

// reopen opens the session's log again without restarting the session:
// the push aggregation is rebuilt from its records, and records beyond
// the last batch made durable (a write that failed after it reached the
// file) are applied; the Store keeps what it holds. On error the log is
// (still) broken. The caller holds l.mu.
func (l *local) reopen() error {
	if l.slog != nil {
		l.slog.Close()
		l.slog = nil
	}
	l.newTrades()
	path := filepath.Join(l.cfg.dir, live.LogName(l.session))
	seq := l.seq
	var late []*live.Record
	lg, info, err := live.OpenLog(path, l.session, func(rec *live.Record) error {
		if rec.Trades != nil && l.trades != nil {
			l.trades.Apply(rec.Trades)
		}
		if l.digests != nil {
			l.digests[rec.Seq] = engine.LiveDigest(rec.Bars, rec.Trades)
		}
		if rec.Seq > seq {
			late = append(late, rec)
		}
		return nil
	})
	if err != nil {
		l.setBroken(err)
		return err
	}
	l.slog = lg
	l.setBroken(nil)
	l.head.mu.Lock()
	l.noteDamage(l.session, path, &info)
	for _, rec := range late {
		if out, _ := l.head.apply(&engine.LiveBatch{Seq: rec.Seq, Session: l.session, Bars: rec.Bars, Complete: rec.Complete, At: rec.At}, false); out == applied {
			l.noteDurable(rec)
		}
	}
	l.head.publishState()
	l.head.mu.Unlock()
	return nil
}

// closeIfRolled closes the session log once the head handed the session
// over to its snapshot: later batches of it are refused. The caller
// holds l.mu.
func (l *local) closeIfRolled() {
	if l.head != nil && l.slog != nil && l.head.isRolled(l.session) {
		l.slog.Close()
		l.slog = nil
	}
}

// publishState publishes the state of a feed that publishes to the
// stream (the head publishes its own). The caller holds l.mu.
func (l *local) publishState() {
	if l.head == nil {
		l.state.Store(&State{Running: l.slog != nil, Session: l.session, Seq: l.seq, Complete: l.complete})
	}
}

// runFeed takes the feed's steps until ctx ends: a step of a new session
// starts it; a batch above the last made durable is committed (those up
// to it, a restarted replay's, are skipped); the clock moves on.
func (l *local) runFeed(ctx context.Context) {
	for {
		st, err := l.feed.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, io.EOF) {
			l.log.Info("feed finished: nothing more for the session", "session", l.session.String(), "seq", l.seq)
			<-ctx.Done()
			return
		}
		l.mu.Lock()
		l.countErrors(l.feed.Errors(), l.feedErrs)
		l.mu.Unlock()
		if err != nil {
			l.met.feedErrors.WithLabelValues(reasonStalled).Inc()
			l.log.Warn("feed failed; retrying", "err", err.Error(), "retry", l.cfg.retry.String())
			if live.Sleep(ctx, l.cfg.retry) != nil {
				return
			}
			continue
		}
		l.mu.Lock()
		l.step(ctx, &st)
		l.mu.Unlock()
	}
}

// step takes one step of the feed. The caller holds l.mu.
func (l *local) step(ctx context.Context, st *live.Step) {
	if st.Session.Valid() && st.Session != l.session && !l.cfg.session.Valid() {
		if err := l.openWaiting(ctx, st.Session); err != nil {
			l.log.Error("live session not started", "session", st.Session.String(), "err", err.Error())
		}
	}
	if b := st.Batch; b != nil {
		switch {
		case b.Seq <= l.seq:
			l.met.batches.WithLabelValues("redelivered").Inc()
		case b.Session != l.session:
			l.met.batches.WithLabelValues("refused").Inc()
			l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		default:
			// A batch the stream or a broken log did not take is
			// committed again (the feed waits): none is missed.
			for err := l.commit(b, nil, st.At); errors.Is(err, engine.ErrLiveUnavailable) && ctx.Err() == nil; err = l.commit(b, nil, st.At) {
				l.mu.Unlock()
				live.Sleep(ctx, min(l.cfg.retry, time.Second))
				l.mu.Lock()
				if b.Seq <= l.seq {
					// Taken meanwhile: the reopened log held it (its
					// write failed after it reached the file).
					l.met.batches.WithLabelValues("redelivered").Inc()
					break
				}
			}
		}
	}
	l.clock.set(st.At, l.virtual)
	if l.head != nil {
		l.head.mu.Lock()
		l.head.publishState()
		l.head.mu.Unlock()
	}
	l.publishState()
}

// countErrors adds the bad input counted since the last call (errs,
// cumulative) to the metrics; seen holds what was added. The caller
// holds l.mu.
func (l *local) countErrors(errs, seen map[string]int64) {
	for k, v := range errs {
		if d := v - seen[k]; d > 0 {
			l.met.feedErrors.WithLabelValues(k).Add(float64(d))
			seen[k] = v
		}
	}
}
