package session

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
)

// State is the live session as last published: what /readyz, the gauges
// and a feed's own readiness read. It is published whole and never
// modified afterwards.
type State struct {
	Running   bool        // a session was started (and not given up)
	Session   engine.Date // the session's day (NoDate: none yet)
	Seq       uint64      // the last batch applied (or, for a feed that publishes to a stream, published)
	Watermark int64       // end of the latest minute holding a bar, unix seconds (0: none)
	Complete  bool        // the feed has nothing more for the session
	Rolled    bool        // the snapshot of the session's day took it over
}

// head is the live session as applied to the Store: the state both
// drivers feed (the local driver from its feed and session log, the
// stream driver from the stream). It applies batches, hands the session
// over to the snapshot of its day, counts gaps and publishes State.
//
// mu serializes its writers; a driver that holds its own lock takes mu
// after it, never before. The Store's snapshot reloads never take mu: a
// publish only signals the handover loop (signal).
type head struct {
	store *engine.Store
	log   *slog.Logger
	met   *metrics
	clock *Clock // the API's

	state  atomic.Pointer[State]
	signal chan struct{} // a snapshot was published (handovers)
	// restoring is set while the local driver reads a session back from
	// its log (and, with a local driver, from New to its first session).
	restoring atomic.Bool
	// gaps counts the gaps found (noteGap), sessionGaps those of the
	// live session while it is not rolled; lastGap is the last one.
	gaps, sessionGaps atomic.Int64
	lastGap           atomic.Pointer[engine.LiveGap]

	mu         sync.Mutex
	session    engine.Date
	seq        uint64 // the last batch applied
	complete   bool
	rolled     bool
	lastLive   liveCounts       // the counters of the session as last applied (their deltas)
	lastMinute map[string]int64 // each ticker's latest minute with a bar (the handover's check)
}

func newHead(store *engine.Store, log *slog.Logger, met *metrics, clock *Clock) *head {
	h := &head{store: store, log: log, met: met, clock: clock, signal: make(chan struct{}, 1), session: engine.NoDate,
		lastMinute: map[string]int64{}}
	h.state.Store(&State{Session: engine.NoDate})
	return h
}

// start begins session sd, empty, in the Store. The caller holds h.mu.
func (h *head) start(sd engine.Date) error {
	if err := h.store.StartLive(sd); err != nil {
		return err
	}
	h.session, h.seq, h.complete, h.rolled, h.lastLive = sd, 0, false, false, liveCounts{}
	clear(h.lastMinute)
	h.sessionGaps.Store(0)
	return nil
}

// outcome is what became of a batch given to apply.
type outcome int

const (
	applied     outcome = iota
	redelivered         // its Seq was applied already: nothing changed
	refused             // the engine refused it: nothing changed
	covered             // the snapshot took the session over: not applied
)

// apply applies batch b of the live session to the Store and counts it;
// attrs go with the log line of a refusal. A batch read back from a
// session log (restoring) is counted only when refused, and the
// counters' deltas and the handover are left to the end of the restore.
// The caller holds h.mu and publishes the state.
func (h *head) apply(b *engine.LiveBatch, restoring bool, attrs ...any) (outcome, error) {
	if h.rolled {
		h.met.batches.WithLabelValues("covered").Inc()
		h.seq = b.Seq
		return covered, nil
	}
	t0 := time.Now()
	ok, err := h.store.ApplyLive(b)
	if !restoring {
		h.met.publish.Observe(time.Since(t0).Seconds())
	}
	switch {
	case err != nil:
		h.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		if !restoring {
			h.met.batches.WithLabelValues("refused").Inc()
			h.log.Warn("live batch refused", append([]any{"seq", b.Seq, "bars", len(b.Bars), "err", err.Error()}, attrs...)...)
		}
		return refused, err
	case !ok:
		if !restoring {
			h.met.batches.WithLabelValues("redelivered").Inc()
		}
		return redelivered, nil
	}
	h.seq = b.Seq
	h.complete = h.complete || b.Complete
	for i := range b.Bars {
		x := &b.Bars[i]
		if !x.Removed && x.Time > h.lastMinute[x.Ticker] {
			h.lastMinute[x.Ticker] = x.Time
		}
	}
	if !restoring {
		h.met.batches.WithLabelValues("applied").Inc()
		h.countDeltas()
		h.checkRolled()
	}
	return applied, nil
}

// noteGap counts gap g (pregao_live_feed_errors_total{reason="gap"},
// /readyz's gaps and last_gap) and, while the live session is not
// rolled, in the session's gaps. A gap never holds the session: the
// batches after it are applied (a batch replaces whole minutes), and the
// minutes only the missing ones carried stay missing until a later batch
// repeats them or the session's snapshot takes it over. The caller holds
// h.mu.
func (h *head) noteGap(g *engine.LiveGap) {
	h.met.feedErrors.WithLabelValues(reasonGap).Inc()
	h.gaps.Add(1)
	h.lastGap.Store(g)
	if h.session.Valid() && !h.rolled {
		h.sessionGaps.Add(1)
	}
}

// countDeltas adds the engine's counters' growth since the last call to
// the metrics. The caller holds h.mu.
func (h *head) countDeltas() {
	v := h.store.View()
	if v == nil || v.Live == nil {
		return
	}
	now := countsOf(v.Live)
	h.met.addDeltas(now, h.lastLive)
	h.lastLive = now
}

// checkRolled ends the live session once it is complete and the base's
// last session reaches its day: the snapshot of the day took it over
// (Store.Publish already dropped every ticker whose history there
// reaches the session, in the same pointer swap as the new base). The
// caller holds h.mu.
func (h *head) checkRolled() {
	v := h.store.View()
	if h.rolled || !h.complete || v == nil || v.Live == nil || v.Base.LastSession() < h.session {
		return
	}
	h.store.EndLive()
	h.rolled = true
	h.sessionGaps.Store(0) // the snapshot has the whole session
	h.met.handovers.Inc()
	logHandover(h.log, v.Base, h.session, h.seq, h.lastMinute)
}

// isRolled reports whether session sd was handed over to its snapshot.
func (h *head) isRolled(sd engine.Date) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.rolled && h.session == sd
}

// logHandover logs the handover of session (its last batch seq) to the
// snapshot base, counting the tickers whose 1-minute bars in base end
// before their last live minute (lastMinute: a gap the snapshot has) and
// those base does not list; either makes it a warning.
func logHandover(log *slog.Logger, base *engine.Dataset, session engine.Date, seq uint64, lastMinute map[string]int64) {
	short, absent := 0, 0
	for t, m := range lastMinute {
		a, ok := base.Asset(t)
		switch {
		case !ok:
			absent++
		case a.Intraday.Len() == 0 || a.Intraday.Times[a.Intraday.Len()-1] < m:
			short++
		}
	}
	lvl := slog.LevelInfo
	if short > 0 || absent > 0 {
		lvl = slog.LevelWarn
	}
	log.Log(context.Background(), lvl, "live session handed over to the snapshot of its day", "session", session.String(), "seq", seq,
		"tickers", len(lastMinute), "tickers_with_fewer_minutes_in_the_snapshot", short, "tickers_not_in_the_snapshot", absent)
}

// published tells the handover loop that a snapshot was published. It
// never blocks.
func (h *head) published() { notify(h.signal) }

// handovers checks, after each snapshot published, whether it took the
// session over, then runs then (nil: nothing) without h.mu, until ctx
// ends.
func (h *head) handovers(ctx context.Context, then func()) {
	onSignal(ctx, h.signal, func() {
		h.mu.Lock()
		h.checkRolled()
		h.publishState()
		h.mu.Unlock()
		if then != nil {
			then()
		}
	})
}

// publishState publishes what /readyz and the gauges read, the
// watermark from the Store's live session (a handed-over session keeps
// the last one). The caller holds h.mu.
func (h *head) publishState() {
	st := &State{Running: h.session.Valid(), Session: h.session, Seq: h.seq, Complete: h.complete, Rolled: h.rolled}
	if v := h.store.View(); v != nil && v.Live != nil {
		st.Watermark = v.Live.Watermark
	} else if old := h.state.Load(); old.Session == st.Session {
		st.Watermark = old.Watermark
	}
	h.state.Store(st)
}

// status is /readyz's live object of the session the head holds, its
// feed named feed.
func (h *head) status(feed string) engine.LiveStatus {
	st := h.state.Load()
	s := engine.LiveStatus{Feed: feed, Session: st.Session, Seq: st.Seq, Complete: st.Complete, Lag: lag(st, h.clock.Now()),
		Restoring: h.restoring.Load(), Gaps: h.gaps.Load(), SessionGaps: h.sessionGaps.Load(), LastGap: h.lastGap.Load()}
	if st.Watermark > 0 {
		s.Watermark = time.Unix(st.Watermark, 0).UTC()
	}
	return s
}

// notify sends on c (of capacity 1) unless a signal is pending: it never
// blocks, and signals sent before the receiver wakes count once.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// onSignal runs fn for each signal on c until ctx ends.
func onSignal(ctx context.Context, c <-chan struct{}, fn func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c:
			fn()
		}
	}
}
