// live.go owns serve's live session (issue 24): the feed chosen with
// --feed (replay:DIR, b3 or push), the applier that hands its batches
// to the engine.Store, the session log in --live-dir that makes each one
// durable before it is acknowledged, the push endpoints' sink, the
// handover to the snapshot that covers the session, the feed's clock,
// /readyz's live object and the pregao_live_* metrics.
//
// One mutex (liveRunner.mu) serializes every writer of the session: the
// feed's steps, the pushes, the session's start and end. It is never
// held while a feed waits or fetches, and the snapshot and keys reloads
// never take it (a publish only signals the handover loop).

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/live/bus"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// The feeds of --feed.
const (
	feedReplay = "replay"
	feedB3     = "b3"
	feedPush   = "push"
)

// liveConfig is the live session's part of ServeConfig, checked.
type liveConfig struct {
	kind    string      // feedReplay, feedB3 or feedPush
	replay  string      // the recording's folder (replay)
	speed   float64     // replay: K times real time; 0: max
	from    string      // replay: the São Paulo time (HH:MM) from which speed applies ("": the start)
	dir     string      // --live-dir
	session engine.Date // --live-session; NoDate: the feed's
	keep    int         // session logs kept
	b3      live.B3Config
}

// parseLiveConfig checks the live flags of cfg; a zero kind is no feed.
func parseLiveConfig(cfg *ServeConfig) (liveConfig, error) {
	lc := liveConfig{session: engine.NoDate, keep: cfg.LiveKeep}
	switch f := cfg.Feed; {
	case f == "":
		return lc, nil
	case strings.HasPrefix(f, feedReplay+":") && len(f) > len(feedReplay)+1:
		lc.kind, lc.replay = feedReplay, f[len(feedReplay)+1:]
	case f == feedB3 || f == feedPush:
		lc.kind = f
	default:
		return lc, fmt.Errorf("serve: --feed %q: want replay:DIR, b3 or push", f)
	}
	if cfg.LiveDir == "" {
		return lc, errors.New("serve: --feed needs --live-dir, the folder of the session logs (and the b3 feed's state)")
	}
	lc.dir = cfg.LiveDir
	switch s := cfg.FeedSpeed; s {
	case "max":
	default:
		k, err := strconv.ParseFloat(s, 64)
		if err != nil || !(k > 0) || math.IsInf(k, 0) {
			return lc, fmt.Errorf("serve: --feed-speed %q: want max or a speed above 0 (60: a minute a second)", s)
		}
		lc.speed = k
	}
	if cfg.FeedFrom != "" {
		if _, err := time.Parse("15:04", cfg.FeedFrom); err != nil || lc.kind != feedReplay {
			return lc, fmt.Errorf("serve: --feed-from %q: want HH:MM (São Paulo time), with --feed replay:DIR", cfg.FeedFrom)
		}
		lc.from = cfg.FeedFrom
	}
	if cfg.LiveSession != "" {
		d, err := engine.ParseDate(cfg.LiveSession)
		if err != nil {
			return lc, fmt.Errorf("serve: --live-session %q: want YYYY-MM-DD", cfg.LiveSession)
		}
		lc.session = d
	}
	if lc.keep < 1 {
		return lc, fmt.Errorf("serve: --live-keep %d: want 1 or more sessions", lc.keep)
	}
	if lc.kind == feedB3 {
		if cfg.B3Interval <= 0 || cfg.B3Pace <= 0 {
			return lc, fmt.Errorf("serve: --b3-interval %s, --b3-pace %s: want durations above 0", cfg.B3Interval, cfg.B3Pace)
		}
		lc.b3 = live.B3Config{Session: lc.session, URLs: negocios.URLs{Base: cfg.B3URL}, Interval: cfg.B3Interval, Pace: cfg.B3Pace,
			StateDir: lc.dir, UserAgent: "pregao/" + currentBuild().Version}
		for _, t := range strings.Split(cfg.B3Tickers, ",") {
			if t = strings.ToUpper(strings.TrimSpace(t)); t != "" {
				if !engine.ValidTicker(t) {
					return lc, fmt.Errorf("serve: --b3-tickers: %q is not a ticker", t)
				}
				lc.b3.Tickers = append(lc.b3.Tickers, t)
			}
		}
	}
	return lc, nil
}

// liveClock is the API's clock with a feed: a replay's virtual time, or
// the wall clock.
type liveClock struct {
	virtual bool
	ns      atomic.Int64
}

func (c *liveClock) Now() time.Time {
	if !c.virtual {
		return time.Now()
	}
	return time.Unix(0, c.ns.Load()).UTC()
}

func (c *liveClock) set(t time.Time) {
	if c.virtual {
		c.ns.Store(t.UnixNano())
	}
}

// liveState is what /readyz and the gauges read, published whole.
type liveState struct {
	running   bool
	session   engine.Date
	seq       uint64
	watermark int64 // unix seconds (0: no bar)
	complete  bool
	rolled    bool // the snapshot of the session's day replaced it
}

// liveRunner runs the live session of a serve.
type liveRunner struct {
	cfg   liveConfig
	store *engine.Store
	log   *slog.Logger
	feed  live.Feed // nil: push
	clock *liveClock
	met   *liveMetrics
	// retry is the wait after a feed's transient error (tests shorten it).
	retry time.Duration
	// now is the wall clock of the push session's calendar (tests).
	now func() time.Time

	state   atomic.Pointer[liveState]
	publish chan struct{} // a snapshot was published (handover loop)

	// bus is the live stream the feed publishes to (--live; nil: the
	// session log file in --live-dir, applied here), set before start;
	// ctx ends the retries of a feed that cannot reach it. dups counts
	// the batches the stream already held.
	bus  *bus.Bus
	ctx  context.Context
	dups atomic.Int64
	// started is set once the first session is open (r.mu).
	started bool

	mu       sync.Mutex
	session  engine.Date
	slog     sessionLog // nil: no session open
	seq      uint64
	complete bool
	rolled   bool
	trades   *live.Trades // push: the session's aggregation of pushed trades
	lastLive *engine.Live // the session as last applied (counters' deltas)
	// feedErrs and tradeErrs are the error counts already added to the
	// metrics.
	feedErrs, tradeErrs map[string]int64
	// lastMinute is each ticker's latest minute with a bar, for the
	// handover's check.
	lastMinute map[string]int64
}

// sessionLog is where a batch goes before it is acknowledged: the
// session log file (live.Log), or the live stream (streamLog).
type sessionLog interface {
	Append(*live.Record) error
	Undo() error
	Close() error
	Last() uint64
}

// newLiveRunner builds the feed of cfg (a replay reads its recording now,
// so that a bad folder stops serve at once).
func newLiveRunner(cfg liveConfig, store *engine.Store, log *slog.Logger, met *liveMetrics) (*liveRunner, error) {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return nil, fmt.Errorf("serve: --live-dir: %w", err)
	}
	r := &liveRunner{cfg: cfg, store: store, log: log.With("feed", cfg.kind), clock: &liveClock{}, met: met, retry: 5 * time.Second,
		now: time.Now, publish: make(chan struct{}, 1), feedErrs: map[string]int64{}, tradeErrs: map[string]int64{}, lastMinute: map[string]int64{}}
	r.state.Store(&liveState{})
	switch cfg.kind {
	case feedReplay:
		var from time.Duration
		if hm, err := time.Parse("15:04", cfg.from); err == nil {
			from = time.Duration(hm.Hour())*time.Hour + time.Duration(hm.Minute())*time.Minute
		}
		rp, err := live.NewReplay(live.ReplayConfig{Dir: cfg.replay, Session: cfg.session, Speed: cfg.speed, From: from})
		if err != nil {
			return nil, fmt.Errorf("serve: --feed %s:%s: %w", feedReplay, cfg.replay, err)
		}
		r.feed = rp
		r.log.Info("replay loaded", "recording", rp.String())
	case feedB3:
		b, err := live.NewB3(cfg.b3)
		if err != nil {
			return nil, fmt.Errorf("serve: --feed b3: %w", err)
		}
		r.feed = b
	}
	if r.feed != nil {
		start, virtual := r.feed.Clock()
		r.clock.virtual = virtual
		r.clock.set(start)
	}
	return r, nil
}

// firstSession returns the session the runner starts with.
func (r *liveRunner) firstSession() engine.Date {
	switch {
	case r.cfg.session.Valid():
		return r.cfg.session
	case r.feed != nil:
		return r.feed.Session()
	}
	return live.CurrentSession(r.now())
}

// start starts the first session: the snapshot is published by then.
func (r *liveRunner) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() { r.started = true }()
	return r.openSession(r.firstSession())
}

// loop runs the feed, or the push session's calendar, and the handover
// loop until ctx ends, then closes the session log.
func (r *liveRunner) loop(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { r.handovers(ctx) })
	if r.feed != nil {
		r.runFeed(ctx)
	} else {
		r.runPushCalendar(ctx)
	}
	wg.Wait()
	r.mu.Lock()
	if r.slog != nil {
		r.slog.Close()
		r.slog = nil
	}
	r.mu.Unlock()
}

// openSession starts session sd: the previous session's log is closed,
// sd's opened (created when absent) and its records applied again (a
// restart), a torn tail cut and counted. A log that cannot be read as
// sd's is moved aside (counted) and a new one started. The caller holds
// r.mu.
func (r *liveRunner) openSession(sd engine.Date) error {
	if r.slog != nil {
		r.slog.Close()
		r.slog = nil
	}
	if r.bus != nil {
		return r.openStreamSession(sd)
	}
	if err := r.store.StartLive(sd); err != nil {
		return err
	}
	r.session, r.seq, r.complete, r.rolled = sd, 0, false, false
	r.lastLive = nil
	clear(r.lastMinute)
	if r.cfg.kind == feedPush {
		r.trades = live.NewTrades(sd, false)
		clear(r.tradeErrs)
	}
	path := filepath.Join(r.cfg.dir, live.LogName(sd))
	start := time.Now()
	restored, refused := 0, 0
	apply := func(rec *live.Record) error {
		if rec.Trades != nil && r.trades != nil {
			r.trades.Apply(rec.Trades)
		}
		b := engine.LiveBatch{Seq: rec.Seq, Session: sd, Bars: rec.Bars, Complete: rec.Complete}
		if _, err := r.store.ApplyLive(&b); err != nil {
			refused++
			r.met.feedErrors.WithLabelValues(reasonRefused).Inc()
			return nil
		}
		r.note(&b)
		restored++
		return nil
	}
	l, info, err := live.OpenLog(path, sd, apply)
	if err != nil && !errors.Is(err, os.ErrPermission) {
		aside := fmt.Sprintf("%s.bad-%d", path, time.Now().Unix())
		r.met.feedErrors.WithLabelValues(reasonLog).Inc()
		r.log.Error("session log unreadable: moved aside, the session starts empty", "file", path, "moved_to", aside, "err", err.Error())
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("session log %s: %w (and it cannot be moved aside: %v)", path, err, rerr)
		}
		if err := r.store.StartLive(sd); err != nil {
			return err
		}
		restored, refused = 0, 0
		r.lastLive = nil
		if r.trades != nil {
			r.trades = live.NewTrades(sd, false)
		}
		l, info, err = live.OpenLog(path, sd, apply)
	}
	if err != nil {
		return err
	}
	r.slog = l
	r.seq = l.Last()
	if info.Cut > 0 {
		r.met.feedErrors.WithLabelValues(reasonLogCut).Inc()
		r.log.Warn("session log: torn or corrupt tail cut", "file", path, "bytes_cut", info.Cut, "reason", info.CutReason.Error())
	}
	r.countDeltas()
	if r.feed != nil {
		r.feed.Resume(r.seq)
	}
	r.log.Info("live session started", "session", sd.String(), "log", path, "batches_restored", restored, "refused", refused,
		"seq", r.seq, "restore_seconds", time.Since(start).Seconds())
	r.prune()
	r.checkRolled()
	r.publishState()
	return nil
}

// Reasons the runner counts beside the feeds' (live.Reasons).
const (
	reasonRefused = "refused"  // a batch the engine refused
	reasonLog     = "log"      // the session log could not be written or read
	reasonLogCut  = "log_cut"  // a torn or corrupt tail cut from a session log
	reasonStalled = "feed"     // a feed's transient failure
	reasonSeq     = "sequence" // a push with another sequence number than the next
)

// note records what batch b (applied) changed: the counters' deltas, the
// session's state and each ticker's latest minute. The caller holds r.mu.
func (r *liveRunner) note(b *engine.LiveBatch) {
	r.seq = b.Seq
	r.complete = r.complete || b.Complete
	for i := range b.Bars {
		x := &b.Bars[i]
		if !x.Removed && x.Time > r.lastMinute[x.Ticker] {
			r.lastMinute[x.Ticker] = x.Time
		}
	}
}

// countDeltas adds the engine's counters' growth since the last call to
// the metrics. The caller holds r.mu.
func (r *liveRunner) countDeltas() {
	v := r.store.View()
	if v == nil || v.Live == nil {
		return
	}
	r.met.addDeltas(v.Live, r.lastLive)
	r.lastLive = v.Live
}

// addDeltas adds the growth of the engine's live counters from p (nil:
// none yet) to l to the metrics.
func (m *liveMetrics) addDeltas(l, p *engine.Live) {
	if p == nil {
		p = &engine.Live{}
	}
	m.bars.Add(float64(l.Bars - p.Bars))
	m.corrections.Add(float64(l.Corrections - p.Corrections))
	m.aside.Add(float64(l.Aside - p.Aside))
	m.covered.Add(float64(l.Covered - p.Covered))
}

// apply logs batch b (with the trades it came from, for a push) and
// applies it; a batch the engine refuses is taken out of the log again.
// The caller holds r.mu and has checked b.Seq is r.seq+1 or above.
func (r *liveRunner) apply(b *engine.LiveBatch, trades []live.Trade, at time.Time) error {
	if r.slog == nil {
		return fmt.Errorf("%w: batch %d: the live session %s is over (the snapshot of its day serves it)", engine.ErrLiveBatch, b.Seq, r.session)
	}
	if r.bus != nil {
		return r.publishBatch(b, trades, at)
	}
	rec := live.Record{Seq: b.Seq, At: at.UnixMilli(), Complete: b.Complete, Bars: b.Bars, Trades: trades}
	t0 := time.Now()
	if err := r.slog.Append(&rec); err != nil {
		r.met.feedErrors.WithLabelValues(reasonLog).Inc()
		r.log.Error("session log append failed: batch not applied", "seq", b.Seq, "err", err.Error())
		return err
	}
	r.met.logAppend.Observe(time.Since(t0).Seconds())
	t1 := time.Now()
	applied, err := r.store.ApplyLive(b)
	r.met.publish.Observe(time.Since(t1).Seconds())
	if err != nil || !applied {
		if uerr := r.slog.Undo(); uerr != nil {
			r.log.Error("session log: a refused batch could not be taken out; the next restart refuses it again", "seq", b.Seq, "err", uerr.Error())
		}
		if err == nil {
			r.met.batches.WithLabelValues("redelivered").Inc()
			return nil
		}
		r.met.batches.WithLabelValues("refused").Inc()
		r.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		r.log.Warn("live batch refused", "seq", b.Seq, "bars", len(b.Bars), "err", err.Error())
		return err
	}
	r.met.batches.WithLabelValues("applied").Inc()
	r.note(b)
	r.countDeltas()
	r.checkRolled()
	r.publishState()
	return nil
}

// publishState publishes what /readyz and the gauges read. The caller
// holds r.mu.
func (r *liveRunner) publishState() {
	r.state.Store(nextState(r.store, r.state.Load(),
		&liveState{running: r.slog != nil || r.rolled, session: r.session, seq: r.seq, complete: r.complete, rolled: r.rolled}))
}

// status is /readyz's live object.
func (r *liveRunner) status() (httpapi.LiveStatus, bool) {
	st := r.state.Load()
	if !st.running {
		return httpapi.LiveStatus{}, false
	}
	s := httpapi.LiveStatus{Feed: r.cfg.kind, Session: st.session, Seq: st.seq, Complete: st.complete, Lag: r.lag(st)}
	if st.watermark > 0 {
		s.Watermark = time.Unix(st.watermark, 0).UTC()
	}
	return s, true
}

// sessionOpen is 10:00 at B3's local time: the regular session's open.
const sessionOpen = 13 * time.Hour

// lag is how far the session's watermark is behind the feed's clock: 0
// once complete; before the open, nothing is late; for a session of an
// earlier day still incomplete (a day's file not out yet), from that
// day's end.
func (r *liveRunner) lag(st *liveState) time.Duration { return watermarkLag(st, r.clock.Now()) }

// watermarkLag is how far st's watermark is behind now (liveRunner.lag).
func watermarkLag(st *liveState, now time.Time) time.Duration {
	if st.complete || !st.running {
		return 0
	}
	ref := st.session.Time().Add(sessionOpen)
	if live.LocalDate(now) > st.session {
		ref = live.SessionEnd(st.session)
	}
	if w := time.Unix(st.watermark, 0); st.watermark > 0 && w.After(ref) {
		ref = w
	}
	return max(now.Sub(ref), 0)
}

// runFeed takes the feed's steps until ctx ends: a step of a new session
// starts it; a batch above the last applied is logged and applied (those
// up to it, a restarted replay's, are skipped); the clock moves on.
func (r *liveRunner) runFeed(ctx context.Context) {
	for {
		st, err := r.feed.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, io.EOF) {
			r.log.Info("feed finished: nothing more for the session", "session", r.session.String(), "seq", r.seq)
			<-ctx.Done()
			return
		}
		r.mu.Lock()
		r.countFeedErrors()
		r.mu.Unlock()
		if err != nil {
			r.met.feedErrors.WithLabelValues(reasonStalled).Inc()
			r.log.Warn("feed failed; retrying", "err", err.Error(), "retry", r.retry.String())
			select {
			case <-ctx.Done():
				return
			case <-time.After(r.retry):
			}
			continue
		}
		r.mu.Lock()
		if st.Session.Valid() && st.Session != r.session && !r.cfg.session.Valid() {
			if err := r.openSession(st.Session); err != nil {
				r.log.Error("live session not started", "session", st.Session.String(), "err", err.Error())
			}
		}
		if b := st.Batch; b != nil {
			switch {
			case b.Seq <= r.seq:
				r.met.batches.WithLabelValues("redelivered").Inc()
			case b.Session != r.session:
				r.met.batches.WithLabelValues("refused").Inc()
				r.met.feedErrors.WithLabelValues(reasonRefused).Inc()
			default:
				// A batch the stream did not take is published again (the
				// feed waits): a replica never misses one.
				for err := r.apply(b, nil, st.At); errors.Is(err, errBus) && ctx.Err() == nil; err = r.apply(b, nil, st.At) {
					r.mu.Unlock()
					select {
					case <-ctx.Done():
					case <-time.After(min(r.retry, time.Second)):
					}
					r.mu.Lock()
				}
			}
		}
		r.clock.set(st.At)
		r.publishState()
		r.mu.Unlock()
	}
}

// countFeedErrors adds the feed's bad input counted since the last call
// to the metrics. The caller holds r.mu.
func (r *liveRunner) countFeedErrors() {
	for k, v := range r.feed.Errors() {
		if d := v - r.feedErrs[k]; d > 0 {
			r.met.feedErrors.WithLabelValues(k).Add(float64(d))
			r.feedErrs[k] = v
		}
	}
}

// runPushCalendar completes the push session at its end (a batch without
// bars, which takes a sequence number) and, unless --live-session fixes
// it, starts the next weekday's at its start.
func (r *liveRunner) runPushCalendar(ctx context.Context) {
	for {
		r.mu.Lock()
		r.rollPush()
		until := live.SessionEnd(r.session)
		switch {
		case r.complete && r.cfg.session.Valid():
			until = time.Time{}
		case r.complete:
			until = live.SessionStart(live.NextWeekday(r.session))
		}
		r.mu.Unlock()
		if until.IsZero() {
			<-ctx.Done()
			return
		}
		t := time.NewTimer(max(until.Sub(r.now()), 0) + time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// rollPush completes the push session once its end has passed, and
// starts the session of the calendar when it is a later one. The caller
// holds r.mu.
func (r *liveRunner) rollPush() {
	now := r.now()
	if r.slog != nil && !r.complete && !now.Before(live.SessionEnd(r.session)) {
		b := &engine.LiveBatch{Seq: r.seq + 1, Session: r.session, Bars: []engine.LiveBar{}, Complete: true}
		if err := r.apply(b, nil, now); err == nil {
			r.log.Info("push session complete", "session", r.session.String(), "seq", b.Seq)
		}
	}
	if r.cfg.session.Valid() {
		return
	}
	if sd := live.CurrentSession(now); sd > r.session {
		if err := r.openSession(sd); err != nil {
			r.log.Error("live session not started", "session", sd.String(), "err", err.Error())
		}
	}
}

// NextSeq is the sequence number the next push must carry.
func (r *liveRunner) NextSeq() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rollPush()
	return r.seq + 1
}

// PushBars applies a pushed batch of whole 1-minute bars.
func (r *liveRunner) PushBars(seq uint64, bars []engine.LiveBar) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rollPush()
	if err := r.checkSeq(seq); err != nil {
		return err
	}
	return r.apply(&engine.LiveBatch{Seq: seq, Session: r.session, Bars: slices.Clone(bars)}, nil, r.now())
}

// PushTrades aggregates a pushed batch of trades and applies the bars
// that changed. A batch holding a trade no bar can come from is refused
// whole, before anything is aggregated. Should its log append fail, the
// session is started again from its log, so that the aggregation holds
// exactly the batches applied.
func (r *liveRunner) PushTrades(seq uint64, trades []httpapi.LiveTrade) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rollPush()
	if err := r.checkSeq(seq); err != nil {
		return err
	}
	ts := make([]live.Trade, len(trades))
	for i, t := range trades {
		ts[i] = live.Trade{Ticker: t.Ticker, Time: t.Time, Price: t.Price, Quantity: t.Quantity, ID: t.ID, Cancel: t.Cancel, AfterMarket: t.AfterMarket}
	}
	if r.trades == nil || r.slog == nil {
		return fmt.Errorf("%w: batch %d: the live session %s is over (the snapshot of its day serves it)", engine.ErrLiveBatch, seq, r.session)
	}
	if err := r.trades.Check(ts); err != nil {
		r.met.batches.WithLabelValues("refused").Inc()
		r.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		return err
	}
	bars := r.trades.Apply(ts)
	err := r.apply(&engine.LiveBatch{Seq: seq, Session: r.session, Bars: bars}, ts, r.now())
	for k, v := range r.trades.Errors() {
		if d := v - r.tradeErrs[k]; d > 0 {
			r.met.feedErrors.WithLabelValues(k).Add(float64(d))
			r.tradeErrs[k] = v
		}
	}
	if err != nil {
		// The aggregation took trades that are not applied: rebuild it
		// (and the session) from the log.
		if oerr := r.openSession(r.session); oerr != nil {
			r.log.Error("live session could not be started again after a failed push", "err", oerr.Error())
		}
	}
	return err
}

// checkSeq refuses a push whose sequence number is not the next. The
// caller holds r.mu.
func (r *liveRunner) checkSeq(seq uint64) error {
	if seq != r.seq+1 {
		r.met.feedErrors.WithLabelValues(reasonSeq).Inc()
		return fmt.Errorf("%w: batch %d, the next is %d", httpapi.ErrLiveSeq, seq, r.seq+1)
	}
	return nil
}

var _ httpapi.LiveSink = (*liveRunner)(nil)

// published tells the handover loop that a snapshot was published. It
// never blocks.
func (r *liveRunner) published() { notify(r.publish) }

// handovers checks, after each snapshot published, whether it took the
// session over.
func (r *liveRunner) handovers(ctx context.Context) {
	onSignal(ctx, r.publish, func() {
		r.mu.Lock()
		r.checkRolled()
		r.publishState()
		r.mu.Unlock()
	})
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

// checkRolled ends the live session once it is complete and the base's
// last session reaches its day: the snapshot of the day took it over
// (Store.Publish already dropped every ticker whose history there
// reaches the session, in the same pointer swap as the new base). It
// logs the tickers whose 1-minute bars in the snapshot end before their
// last live minute (a gap the snapshot has) and those the snapshot does
// not list. The caller holds r.mu.
func (r *liveRunner) checkRolled() {
	v := r.store.View()
	if r.bus != nil {
		return // the replicas hand the session over (streamApplier)
	}
	if r.rolled || !r.complete || v == nil || v.Live == nil || v.Base.LastSession() < r.session {
		return
	}
	base := v.Base
	r.store.EndLive()
	r.rolled = true
	r.met.handovers.Inc()
	if r.slog != nil {
		r.slog.Close()
		r.slog = nil
	}
	logHandover(r.log, base, r.session, r.seq, r.lastMinute)
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

// nextState returns st with the watermark of the store's live session,
// else the previous state's of the same session (a handed-over session
// keeps it).
func nextState(store *engine.Store, old, st *liveState) *liveState {
	if v := store.View(); v != nil && v.Live != nil {
		st.watermark = v.Live.Watermark
	} else if old != nil && old.session == st.session {
		st.watermark = old.watermark
	}
	return st
}

// prune removes the session logs (and b3 states) of all but the newest
// cfg.keep sessions. The caller holds r.mu.
func (r *liveRunner) prune() {
	ents, err := os.ReadDir(r.cfg.dir)
	if err != nil {
		return
	}
	var days []engine.Date
	for _, e := range ents {
		if d, ok := live.ParseLogName(e.Name()); ok {
			days = append(days, d)
		}
	}
	slices.Sort(days)
	if len(days) <= r.cfg.keep {
		return
	}
	oldest := days[len(days)-r.cfg.keep]
	for _, e := range ents {
		var d engine.Date
		var ok bool
		if d, ok = live.ParseLogName(e.Name()); !ok {
			name, isB3 := strings.CutPrefix(e.Name(), "b3-")
			name, isJSON := strings.CutSuffix(name, ".json")
			x, err := engine.ParseDate(name)
			if !isB3 || !isJSON || err != nil {
				continue
			}
			d = x
		}
		if d < oldest && d != r.session {
			if err := os.Remove(filepath.Join(r.cfg.dir, e.Name())); err == nil {
				r.log.Info("pruned a session's files", "file", e.Name())
			}
		}
	}
}

// liveMetrics are the pregao_live_* metrics, registered whether or not a
// feed runs (their series at 0).
type liveMetrics struct {
	batches                           *prometheus.CounterVec
	bars, corrections, aside, covered prometheus.Counter
	publish, logAppend                prometheus.Histogram
	feedErrors                        *prometheus.CounterVec
	handovers                         prometheus.Counter
	// The live stream's (--live): batches published by the feed side,
	// batches delivered again to a replica, and the delay from a batch's
	// publish to its apply on a replica.
	published, redeliveries prometheus.Counter
	applyDelay              prometheus.Histogram
}

// registerLiveMetrics registers the live metrics on reg; state returns
// the runner's state (nil: no feed).
func registerLiveMetrics(reg prometheus.Registerer, state func() *liveState, lag func() time.Duration) *liveMetrics {
	m := &liveMetrics{
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_live_batches_total",
			Help: "Batches of the live session by result: applied, redelivered (a sequence number already applied: nothing changed) or refused (a bar a minute cannot hold, another session: nothing applied)."}, []string{"result"}),
		bars: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_total",
			Help: "1-minute bars applied to the live session, corrections included."}),
		corrections: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_corrections_total",
			Help: "Live bars that changed or removed a minute already held (a cancelled or late trade)."}),
		aside: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_aside_total",
			Help: "Live bars of tickers the snapshot does not know (an IPO's first day), held aside and served from the next snapshot."}),
		covered: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_bars_covered_total",
			Help: "Live bars of tickers whose history in the snapshot already covers the session (the snapshot serves them)."}),
		publish: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_publish_duration_seconds",
			Help:    "Time to apply a live batch and publish the new view (Store.ApplyLive).",
			Buckets: []float64{10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 100e-3, 1}}),
		logAppend: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_log_append_duration_seconds",
			Help:    "Time to append a batch to the session log and make it durable (write and fsync).",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 1}}),
		feedErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_live_feed_errors_total",
			Help: "Bad input and failures of the live feed by reason: malformed rows, trades of another day, bad prices, quantities or codes, rows that are not tickers, duplicates, cancellations of unknown trades, out-of-order trades, fetch failures, refused batches, session log failures, torn log tails cut, pushes out of sequence."}, []string{"reason"}),
		handovers: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_handovers_total",
			Help: "Live sessions handed over to the snapshot of their day."}),
		published: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_stream_published_total",
			Help: "Batches the feed published to the live stream (--live) and the stream acknowledged."}),
		redeliveries: prometheus.NewCounter(prometheus.CounterOpts{Name: "pregao_live_stream_redeliveries_total",
			Help: "Batches of the live stream delivered again to this replica (a sequence number already applied: nothing changed)."}),
		applyDelay: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "pregao_live_stream_apply_delay_seconds",
			Help:    "Time from a batch's store in the live stream to its apply on this replica (visible to requests).",
			Buckets: []float64{250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5, 30}}),
	}
	gauge := func(name, help string, f func(*liveState) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if st := state(); st != nil {
				return f(st)
			}
			return 0
		})
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	reg.MustRegister(m.batches, m.bars, m.corrections, m.aside, m.covered, m.publish, m.logAppend, m.feedErrors, m.handovers,
		m.published, m.redeliveries, m.applyDelay,
		gauge("pregao_live_running", "1 while a live session runs (a feed is configured and its session started).", func(s *liveState) float64 { return b(s.running) }),
		gauge("pregao_live_complete", "1 once the feed has nothing more for the session.", func(s *liveState) float64 { return b(s.complete) }),
		gauge("pregao_live_seq", "Sequence number of the last batch applied to the live session.", func(s *liveState) float64 { return float64(s.seq) }),
		gauge("pregao_live_watermark_seconds", "End of the latest minute holding a live bar, unix seconds (0: none).", func(s *liveState) float64 { return float64(s.watermark) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "pregao_live_lag_seconds",
			Help: "How far the live session's watermark is behind the feed's clock (0 when complete or before the open)."}, func() float64 { return lag().Seconds() }),
	)
	for _, res := range []string{"applied", "redelivered", "refused", "covered"} {
		m.batches.WithLabelValues(res)
	}
	for _, reason := range append(slices.Clone(live.Reasons), reasonRefused, reasonLog, reasonLogCut, reasonStalled, reasonSeq,
		reasonMessage, reasonGap, reasonSession, reasonBus, reasonSnapshot) {
		m.feedErrors.WithLabelValues(reason)
	}
	return m
}
