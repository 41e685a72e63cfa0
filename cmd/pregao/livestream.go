// livestream.go owns serve's live stream (issue 28, --live): the
// session's batches go through NATS JetStream (package bus) rather than
// straight from the feed into the engine.Store. The feed side (a serve
// with --feed, or pregao feed) publishes each batch and every replica,
// the one beside the feed included, applies them from the stream in
// order (streamApplier), so that replicas at the same stream sequence
// hold the same session and give the same answers.
//
// The stream is also the session log: a restarted feed reads its
// session back from it (streamLog, liveRunner.openStreamSession) and
// numbers its next batch after the last one there.
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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/live/bus"
)

// feedStream is /readyz's feed of a replica without a feed of its own.
const feedStream = "stream"

// Reasons the stream's bad input is counted under
// (pregao_live_feed_errors_total).
const (
	reasonMessage = "message" // a message that does not decode
	reasonGap     = "gap"     // stream sequences missing, or a batch sequence skipped
	reasonSession = "session" // a batch of an earlier session than the live one
	reasonBus     = "bus"     // the stream could not be reached
	// reasonSnapshot: the snapshot's position names a batch the stream
	// does not hold there (another stream, one made again).
	reasonSnapshot = "snapshot"
)

// liveStreamFlags adds the live stream's flags serve and pregao feed
// share beyond --live: its size cap and a cluster's credentials and TLS.
func liveStreamFlags(fs *flag.FlagSet, cfg *ServeConfig) {
	fs.Int64Var(&cfg.LiveMaxBytes, "live-max-bytes", cfg.LiveMaxBytes, "the live stream's size cap in bytes: beyond it the oldest batches are dropped, as beyond --live-retention (0: no cap)")
	fs.StringVar(&cfg.LiveCreds, "live-creds", cfg.LiveCreds, "--live nats://: the `file` of a NATS user's credentials (.creds: its JWT and nkey seed); default none")
	fs.StringVar(&cfg.LiveTLSCA, "live-tls-ca", cfg.LiveTLSCA, "--live nats://: PEM `file` of the CAs the NATS servers' certificates are checked against (default: the system's); makes the connection TLS")
	fs.StringVar(&cfg.LiveTLSCert, "live-tls-cert", cfg.LiveTLSCert, "--live nats://: PEM `file` of the client certificate, for NATS servers that verify clients (with --live-tls-key)")
	fs.StringVar(&cfg.LiveTLSKey, "live-tls-key", cfg.LiveTLSKey, "--live nats://: PEM `file` of the client certificate's key (with --live-tls-cert)")
}

// parseBusConfig checks --live and its companions; a zero URL is no
// stream. Credentials and TLS files are read and checked here, so that
// a bad one is refused at startup.
func parseBusConfig(cfg *ServeConfig) (bus.Config, error) {
	bc := bus.Config{URL: cfg.Live, Listen: cfg.LiveListen, Replicas: cfg.LiveReplicas, MaxAge: cfg.LiveRetention, MaxBytes: cfg.LiveMaxBytes,
		Creds: cfg.LiveCreds, TLSCA: cfg.LiveTLSCA, TLSCert: cfg.LiveTLSCert, TLSKey: cfg.LiveTLSKey, Name: "pregao " + currentBuild().Version}
	secured := cfg.LiveCreds != "" || cfg.LiveTLSCA != "" || cfg.LiveTLSCert != "" || cfg.LiveTLSKey != ""
	switch u := cfg.Live; {
	case u == "":
		if cfg.LiveListen != "" {
			return bc, errors.New("serve: --live-listen needs --live embedded")
		}
		if secured {
			return bc, errors.New("serve: --live-creds and --live-tls-* need --live nats://")
		}
		if cfg.LiveMaxBytes != 0 {
			return bc, errors.New("serve: --live-max-bytes needs --live")
		}
		return bc, nil
	case u == bus.Embedded:
		if cfg.LiveDir == "" {
			return bc, errors.New("serve: --live embedded needs --live-dir, the folder of the stream's store")
		}
		bc.Dir = cfg.LiveDir + "/jetstream"
		if bc.Replicas == 0 {
			bc.Replicas = 1
		}
		if bc.Replicas != 1 {
			return bc, fmt.Errorf("serve: --live-replicas %d: the embedded server holds 1 copy", bc.Replicas)
		}
		if secured {
			return bc, errors.New("serve: --live-creds and --live-tls-* are for a NATS cluster (--live nats://), not --live embedded")
		}
		if l := cfg.LiveListen; l != "" {
			if _, _, err := net.SplitHostPort(l); err != nil {
				return bc, fmt.Errorf("serve: --live-listen %q: want host:port", l)
			}
		}
	default:
		for _, x := range strings.Split(u, ",") {
			if !strings.HasPrefix(x, "nats://") && !strings.HasPrefix(x, "tls://") || len(x) <= len("nats://") {
				return bc, fmt.Errorf("serve: --live %q: want embedded, or nats://HOST:PORT of a NATS cluster (comma-separated)", bus.Redact(u))
			}
		}
		if cfg.LiveListen != "" {
			return bc, errors.New("serve: --live-listen needs --live embedded")
		}
		if bc.Replicas == 0 {
			bc.Replicas = 3
		}
		if bc.Replicas < 1 || bc.Replicas > 5 {
			return bc, fmt.Errorf("serve: --live-replicas %d: want 1 to 5 (3 on a 3-node cluster)", bc.Replicas)
		}
	}
	if cfg.LiveRetention < 0 {
		return bc, fmt.Errorf("serve: --live-retention %s: want a duration above 0", cfg.LiveRetention)
	}
	if cfg.LiveMaxBytes < 0 {
		return bc, fmt.Errorf("serve: --live-max-bytes %d: want 0 (no cap) or a number of bytes", cfg.LiveMaxBytes)
	}
	if err := bc.Check(); err != nil {
		return bc, fmt.Errorf("serve: --live-creds, --live-tls-*: %s", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return bc, nil
}

// streamOpenRetry is how long serve waits before it opens the live
// stream again after Open failed.
const streamOpenRetry = 10 * time.Second

// errBus wraps a failure to reach the stream (the batch may be published
// again).
var errBus = fmt.Errorf("live stream unreachable: %w", httpapi.ErrLiveUnavailable)

// streamLog is the session log of a feed that publishes to the stream:
// an append is a publish acknowledged by the stream. A copy of the
// session log file is kept in --live-dir beside it (file), for pregao
// update --session-log (the roll), each record with its stream sequence
// (live.Record.Stream: the snapshot's position in the stream); the
// stream is the log of record: the copy is completed from it when the
// feed starts.
type streamLog struct {
	bus     *bus.Bus
	session engine.Date
	last    uint64
	timeout time.Duration
	dups    *atomic.Int64 // batches the stream already held
	virtual bool          // the feed's clock is its own (bus.Batch.Virtual)
	file    *live.Log     // nil: no copy (it could not be opened)
	fileErr func(error)   // a failed append to the copy
}

func (s *streamLog) Append(rec *live.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	seq, dup, err := s.bus.Publish(ctx, s.session, rec, s.virtual)
	if err != nil {
		if errors.Is(err, bus.ErrMessage) {
			return err
		}
		return fmt.Errorf("%w: %v", errBus, err)
	}
	if dup {
		s.dups.Add(1)
	}
	s.last = rec.Seq
	rec.Stream = seq // the copy keeps it: pregao update --session-log's position
	if s.file != nil && rec.Seq > s.file.Last() {
		if err := s.file.Append(rec); err != nil {
			s.fileErr(err)
		}
	}
	return nil
}

// Undo does nothing: the feed side checks a batch before it publishes
// it (engine.LiveBatch.Check), so a batch is never taken back.
func (s *streamLog) Undo() error { return nil }
func (s *streamLog) Close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}
func (s *streamLog) Last() uint64 { return s.last }

// openStreamSession is openSession for a feed that publishes to the
// stream: session sd's batches already there are read back (the trades
// a push aggregated, the last sequence number). Nothing is applied to
// the Store: the replicas apply from the stream. The caller holds r.mu.
func (r *liveRunner) openStreamSession(sd engine.Date) error {
	r.session, r.seq, r.complete, r.rolled = sd, 0, false, false
	r.lastLive = nil
	clear(r.lastMinute)
	if r.cfg.kind == feedPush {
		r.trades = live.NewTrades(sd, false)
		clear(r.tradeErrs)
	}
	start := time.Now()
	restored := 0
	// The copy of the session log file: what the stream holds beyond it
	// is appended as it is read back.
	path := filepath.Join(r.cfg.dir, live.LogName(sd))
	file, _, err := live.OpenLog(path, sd, func(*live.Record) error { return nil })
	if err != nil && !errors.Is(err, os.ErrPermission) {
		aside := fmt.Sprintf("%s.bad-%d", path, time.Now().Unix())
		r.log.Error("session log copy unreadable: moved aside, written again from the stream", "file", path, "moved_to", aside, "err", err.Error())
		if os.Rename(path, aside) == nil {
			file, _, err = live.OpenLog(path, sd, func(*live.Record) error { return nil })
		}
	}
	if err != nil {
		r.met.feedErrors.WithLabelValues(reasonLog).Inc()
		r.log.Error("no copy of the session log in --live-dir: pregao update --session-log will lack this session", "err", err.Error())
		file = nil
	}
	fileErr := func(err error) {
		r.met.feedErrors.WithLabelValues(reasonLog).Inc()
		r.log.Error("session log copy: append failed (the stream has the batch)", "err", err.Error())
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		bad, err := r.bus.ReadSession(ctx, sd, func(rec *live.Record) error {
			if rec.Seq <= r.seq {
				return nil
			}
			if file != nil && rec.Seq > file.Last() {
				if err := file.Append(rec); err != nil {
					fileErr(err)
				}
			}
			if rec.Trades != nil && r.trades != nil {
				r.trades.Apply(rec.Trades)
			}
			r.note(&engine.LiveBatch{Seq: rec.Seq, Session: sd, Bars: rec.Bars, Complete: rec.Complete})
			restored++
			return nil
		})
		cancel()
		if bad > 0 {
			r.met.feedErrors.WithLabelValues(reasonMessage).Add(float64(bad))
		}
		// The first session waits for the stream as long as it takes; a
		// later one (a push's rebuild, the next day) gives up after a
		// while rather than hold the session's lock.
		if err == nil || r.ctx == nil || r.ctx.Err() != nil || r.started && time.Since(start) > 30*time.Second {
			if err != nil {
				if file != nil {
					file.Close()
				}
				return err
			}
			break
		}
		// Not read whole: start again from nothing once the stream answers.
		r.met.feedErrors.WithLabelValues(reasonBus).Inc()
		r.log.Warn("live stream: the session could not be read back; retrying", "session", sd.String(), "err", err.Error())
		r.seq, r.complete, restored = 0, false, 0
		clear(r.lastMinute)
		if r.cfg.kind == feedPush {
			r.trades = live.NewTrades(sd, false)
		}
		select {
		case <-r.ctx.Done():
			if file != nil {
				file.Close()
			}
			return r.ctx.Err()
		case <-time.After(r.retry):
		}
	}
	r.slog = &streamLog{bus: r.bus, session: sd, last: r.seq, timeout: 10 * time.Second, dups: &r.dups, virtual: r.clock.virtual,
		file: file, fileErr: fileErr}
	if r.feed != nil {
		r.feed.Resume(r.seq)
	}
	r.log.Info("live session started on the stream", "session", sd.String(), "batches_in_stream", restored, "seq", r.seq,
		"read_seconds", time.Since(start).Seconds(), "log_copy", path)
	r.prune()
	r.publishState()
	return nil
}

// publishBatch is apply for a feed that publishes to the stream: the
// batch is checked as every replica will (a batch they would refuse is
// refused here, never published), published, and acknowledged once the
// stream holds it. The caller holds r.mu.
func (r *liveRunner) publishBatch(b *engine.LiveBatch, trades []live.Trade, at time.Time) error {
	if err := b.Check(r.session); err != nil {
		r.met.batches.WithLabelValues("refused").Inc()
		r.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		r.log.Warn("live batch refused", "seq", b.Seq, "bars", len(b.Bars), "err", err.Error())
		return err
	}
	rec := live.Record{Seq: b.Seq, At: at.UnixMilli(), Complete: b.Complete, Bars: b.Bars, Trades: trades}
	t0 := time.Now()
	if err := r.slog.Append(&rec); err != nil {
		r.met.feedErrors.WithLabelValues(reasonBus).Inc()
		r.log.Error("live stream: batch not published", "seq", b.Seq, "err", err.Error())
		return err
	}
	r.met.logAppend.Observe(time.Since(t0).Seconds())
	r.met.published.Inc()
	r.note(b)
	r.publishState()
	return nil
}

// streamState is what /readyz and the gauges read of the stream,
// published whole.
type streamState struct {
	seq     uint64    // the last stream sequence handed over
	pending uint64    // messages after it when it was delivered
	stored  time.Time // when the stream stored it
}

// streamApplier applies the stream's batches to the Store: the live
// session of a replica.
type streamApplier struct {
	bus   atomic.Pointer[bus.Bus] // set by run
	clock *streamClock
	store *engine.Store
	log   *slog.Logger
	met   *liveMetrics
	feed  string // /readyz's feed: the local feed's kind, or feedStream

	state    atomic.Pointer[liveState]
	sstate   atomic.Pointer[streamState]
	from     atomic.Pointer[startPoint] // set by start
	caughtUp atomic.Bool
	// downSince is when the stream was last found unreachable (unix ns;
	// 0: reachable).
	downSince    atomic.Int64
	started      time.Time
	redeliveries atomic.Int64
	publish      chan struct{}
	// gaps counts the gaps found (noteGap), sessionGaps those of the
	// live session while it is not rolled; lastGap is the last one.
	gaps, sessionGaps atomic.Int64
	lastGap           atomic.Pointer[httpapi.StreamGap]

	mu         sync.Mutex
	session    engine.Date
	seq        uint64 // the session's last batch applied
	complete   bool
	rolled     bool
	lastLive   *engine.Live
	lastMinute map[string]int64
}

func newStreamApplier(store *engine.Store, log *slog.Logger, met *liveMetrics, feed string, clock *streamClock) *streamApplier {
	if feed == "" {
		feed = feedStream
	}
	a := &streamApplier{clock: clock, store: store, log: log.With("live", "stream"), met: met, feed: feed,
		publish: make(chan struct{}, 1), lastMinute: map[string]int64{}, started: time.Now(), session: engine.NoDate}
	a.state.Store(&liveState{session: engine.NoDate})
	a.sstate.Store(&streamState{})
	return a
}

// start returns the stream sequence to consume from: the snapshot's
// position when the stream agrees with it (checkPosition), else after
// the last batch of the last session the snapshot covers; and the
// stream's head. The clock is the one of the last batch covered.
func (a *streamApplier) start(ctx context.Context, b *bus.Bus) (from, head uint64, err error) {
	if b.Server() != nil {
		// The embedded server's stream is this process's to make.
		if _, err := b.EnsureStream(ctx); err != nil {
			return 0, 0, err
		}
	}
	if head, _, err = b.Head(ctx); err != nil {
		return 0, 0, err
	}
	from = 1
	d := a.store.Current()
	if d == nil {
		return from, head, nil
	}
	pos := d.Meta().Stream
	var why string // what contradicts the snapshot's position
	if pos.Known() {
		var bt *bus.Batch
		bt, why, err = checkPosition(ctx, b, pos)
		if err != nil {
			return 0, 0, err
		}
		if why == "" && pos.Session > d.LastSession() {
			// Starting there would skip the batches of sessions the
			// snapshot has no data of.
			why = "the snapshot's last session is " + d.LastSession().String() + ", before the position's"
		}
		if why == "" {
			if bt != nil {
				a.clock.set(bt)
			}
			a.from.Store(&startPoint{from: pos.Next, position: pos})
			return pos.Next, head, nil
		}
	}
	if d.LastSession().Valid() {
		seq, bt, err := b.LastOfSession(ctx, d.LastSession())
		if err != nil {
			return 0, 0, err
		}
		if seq > 0 {
			from = seq + 1
		}
		if bt != nil {
			a.clock.set(bt)
		}
	}
	if why != "" {
		// Once the lookup answered: start is tried again on errors.
		a.met.feedErrors.WithLabelValues(reasonSnapshot).Inc()
		a.log.Warn("live stream: the snapshot's position does not match the stream; starting after its last session's last batch instead",
			"snapshot_position", fmtStreamPosition(pos), "stream", why, "from_sequence", from)
	}
	a.from.Store(&startPoint{from: from, position: pos, lookup: true})
	return from, head, nil
}

// startPoint is where the replica started consuming: from the
// snapshot's position, or (lookup) after its last session's last batch.
type startPoint struct {
	from     uint64
	position engine.StreamPosition // the snapshot's (zero: none)
	lookup   bool
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
func (a *streamApplier) run(ctx context.Context, b *bus.Bus) {
	a.bus.Store(b)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { a.handovers(ctx) })
	var from, head uint64
	for {
		var err error
		// Short tries: after the loss of a node the stream answers once
		// a new leader is elected (a few seconds), and a request sent
		// before then is never answered.
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		from, head, err = a.start(sctx, b)
		cancel()
		if err == nil {
			break
		}
		a.down()
		a.met.feedErrors.WithLabelValues(reasonBus).Inc()
		a.log.Warn("live stream unreachable; retrying", "err", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
	a.up()
	if head < from {
		a.setCaughtUp(from - 1)
	}
	how := "the snapshot's position"
	if sp := a.from.Load(); sp == nil || sp.lookup {
		how = "after the last batch of the snapshot's last session"
	}
	a.log.Info("applying the live stream", "from_sequence", from, "head", head, "from", how)
	b.Consume(ctx, from, a.deliver, func(err error) {
		if errors.Is(err, bus.ErrNoStream) {
			return // no feed has published yet
		}
		a.down()
		a.log.Warn("live stream consumer", "err", err.Error())
	})
}

// up and down note whether the stream is reachable.
func (a *streamApplier) up() { a.downSince.Store(0) }
func (a *streamApplier) down() {
	a.downSince.CompareAndSwap(0, time.Now().UnixNano())
}

func (a *streamApplier) setCaughtUp(seq uint64) {
	if !a.caughtUp.Swap(true) {
		a.log.Info("live stream caught up: ready", "sequence", seq)
	}
}

// deliver applies one message: a batch of a session the snapshot covers
// is skipped, one of a later session starts it, one of an earlier
// session than the live one is refused; a message that does not decode,
// a sequence gap and a batch the engine refuses are counted and logged.
// Nothing is applied in part.
func (a *streamApplier) deliver(d *bus.Delivery) {
	a.up()
	a.mu.Lock()
	defer a.mu.Unlock()
	defer func() {
		a.sstate.Store(&streamState{seq: d.StreamSeq, pending: d.Pending, stored: d.Stored})
		if d.Pending == 0 {
			a.setCaughtUp(d.StreamSeq) // at the head: nothing after it
		}
		a.publishState()
	}()
	if d.Gap > 0 {
		sd := engine.NoDate
		if d.Batch != nil {
			sd = d.Batch.Session
		}
		a.noteGap(&httpapi.StreamGap{Kind: "stream", Session: sd, First: d.StreamSeq - d.Gap, Last: d.StreamSeq - 1, StreamSeq: d.StreamSeq})
		a.log.Warn("live stream: messages missing before this one (gone from the stream); applying on", "stream_seq", d.StreamSeq, "missing", d.Gap,
			"first_missing", d.StreamSeq-d.Gap)
	}
	if d.Err != nil {
		a.met.feedErrors.WithLabelValues(reasonMessage).Inc()
		a.log.Warn("live stream: a message that is not a batch, skipped", "stream_seq", d.StreamSeq, "err", d.Err.Error())
		return
	}
	bt := d.Batch
	base := a.store.Current()
	switch {
	case base != nil && bt.Session <= base.LastSession():
		a.met.batches.WithLabelValues("covered").Inc()
		return
	case a.session.Valid() && bt.Session < a.session:
		a.met.batches.WithLabelValues("refused").Inc()
		a.met.feedErrors.WithLabelValues(reasonSession).Inc()
		a.log.Warn("live stream: a batch of an earlier session than the live one, refused", "stream_seq", d.StreamSeq,
			"session", bt.Session.String(), "live_session", a.session.String(), "seq", bt.Record.Seq)
		return
	case bt.Session != a.session:
		if err := a.store.StartLive(bt.Session); err != nil {
			a.met.batches.WithLabelValues("refused").Inc()
			a.log.Error("live session not started", "session", bt.Session.String(), "err", err.Error())
			return
		}
		a.session, a.seq, a.complete, a.rolled, a.lastLive = bt.Session, 0, false, false, nil
		clear(a.lastMinute)
		// A gap of the stream just before concerned the session before,
		// or this one's first batches, which the batch check below
		// counts.
		a.sessionGaps.Store(0)
		a.log.Info("live session started from the stream", "session", bt.Session.String(), "stream_seq", d.StreamSeq)
	}
	b := bt.LiveBatch()
	if b.Seq <= a.seq {
		a.met.batches.WithLabelValues("redelivered").Inc()
		a.met.redeliveries.Inc()
		a.redeliveries.Add(1)
		return
	}
	if b.Seq > a.seq+1 {
		a.noteGap(&httpapi.StreamGap{Kind: "batch", Session: a.session, First: a.seq + 1, Last: b.Seq - 1, StreamSeq: d.StreamSeq})
		a.log.Warn("live stream: batches missing before this one; applying on (the minutes only they carried are missing until a later batch or the session's snapshot)",
			"session", a.session.String(), "seq", b.Seq, "after", a.seq, "stream_seq", d.StreamSeq)
	}
	if a.rolled {
		a.met.batches.WithLabelValues("covered").Inc()
		a.seq = b.Seq
		return
	}
	t0 := time.Now()
	applied, err := a.store.ApplyLive(b)
	a.met.publish.Observe(time.Since(t0).Seconds())
	switch {
	case err != nil:
		a.met.batches.WithLabelValues("refused").Inc()
		a.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		a.log.Warn("live batch refused", "seq", b.Seq, "stream_seq", d.StreamSeq, "bars", len(b.Bars), "err", err.Error())
		return
	case !applied:
		a.met.batches.WithLabelValues("redelivered").Inc()
		a.met.redeliveries.Inc()
		a.redeliveries.Add(1)
		return
	}
	a.met.batches.WithLabelValues("applied").Inc()
	a.met.applyDelay.Observe(max(time.Since(d.Stored), 0).Seconds())
	a.clock.set(bt)
	a.seq = b.Seq
	a.complete = a.complete || b.Complete
	for i := range b.Bars {
		x := &b.Bars[i]
		if !x.Removed && x.Time > a.lastMinute[x.Ticker] {
			a.lastMinute[x.Ticker] = x.Time
		}
	}
	a.countDeltas()
	a.checkRolled()
}

// noteGap counts gap g (pregao_live_feed_errors_total{reason="gap"},
// /readyz's gaps and last_gap) and, while the live session is not
// rolled, in the session's gaps (pregao_live_stream_session_gaps). The
// stream is never held for a gap: the batches after it are applied (a
// batch replaces whole minutes), and the minutes only the missing ones
// carried stay missing until a later batch repeats them or the
// session's snapshot takes it over. The caller holds a.mu.
func (a *streamApplier) noteGap(g *httpapi.StreamGap) {
	a.met.feedErrors.WithLabelValues(reasonGap).Inc()
	a.gaps.Add(1)
	a.lastGap.Store(g)
	if a.session.Valid() && !a.rolled {
		a.sessionGaps.Add(1)
	}
}

// countDeltas adds the engine's counters' growth to the metrics. The
// caller holds a.mu.
func (a *streamApplier) countDeltas() {
	v := a.store.View()
	if v == nil || v.Live == nil {
		return
	}
	a.met.addDeltas(v.Live, a.lastLive)
	a.lastLive = v.Live
}

// published tells the handover loop that a snapshot was published.
func (a *streamApplier) published() { notify(a.publish) }

// handovers checks, after each snapshot published, whether it took the
// session over (liveRunner.handovers).
func (a *streamApplier) handovers(ctx context.Context) {
	onSignal(ctx, a.publish, func() {
		a.mu.Lock()
		a.checkRolled()
		a.publishState()
		a.mu.Unlock()
	})
}

// checkRolled ends the live session once it is complete and the base's
// last session reaches its day, logged as liveRunner.checkRolled logs it
// (logHandover). The caller holds a.mu.
func (a *streamApplier) checkRolled() {
	v := a.store.View()
	if a.rolled || !a.complete || v == nil || v.Live == nil || v.Base.LastSession() < a.session {
		return
	}
	a.store.EndLive()
	a.rolled = true
	a.sessionGaps.Store(0) // the snapshot has the whole session
	a.met.handovers.Inc()
	logHandover(a.log, v.Base, a.session, a.seq, a.lastMinute)
}

// publishState publishes what /readyz and the gauges read. The caller
// holds a.mu.
func (a *streamApplier) publishState() {
	a.state.Store(nextState(a.store, a.state.Load(),
		&liveState{running: a.session.Valid(), session: a.session, seq: a.seq, complete: a.complete, rolled: a.rolled}))
}

// streamStatus is /readyz's stream object.
func (a *streamApplier) streamStatus() *httpapi.StreamStatus {
	ss := a.sstate.Load()
	s := &httpapi.StreamStatus{Sequence: ss.seq, Pending: ss.pending, Redeliveries: a.redeliveries.Load(),
		CaughtUp: a.caughtUp.Load(), Gaps: a.gaps.Load(), SessionGaps: a.sessionGaps.Load(), LastGap: a.lastGap.Load()}
	if sp := a.from.Load(); sp != nil {
		s.Start, s.Position = sp.from, sp.position
	}
	if b := a.bus.Load(); b != nil {
		s.Connected = b.Connected() && a.downSince.Load() == 0
	}
	if ss.pending > 0 && !ss.stored.IsZero() {
		s.Lag = max(time.Since(ss.stored), 0)
	}
	if !s.Connected {
		// Since the connection was lost, else since the stream was last
		// found unreachable, else since the start (never reached).
		switch b, t := a.bus.Load(), a.downSince.Load(); {
		case b != nil && !b.DownSince().IsZero():
			s.Stale = time.Since(b.DownSince())
		case t != 0:
			s.Stale = time.Since(time.Unix(0, t))
		default:
			s.Stale = time.Since(a.started)
		}
	}
	return s
}

// status is /readyz's live object of a replica applying the stream: the
// session (when one runs) and the stream's state, always (a replica
// catching up answers 503).
func (a *streamApplier) status() (httpapi.LiveStatus, bool) {
	st := a.state.Load()
	s := httpapi.LiveStatus{Feed: a.feed, Session: st.session, Seq: st.seq, Complete: st.complete, Stream: a.streamStatus(),
		Lag: watermarkLag(st, a.clock.Now())}
	if st.watermark > 0 {
		s.Watermark = time.Unix(st.watermark, 0).UTC()
	}
	return s, true
}

// streamClock is the API's clock with a live stream: the clock of the
// last batch applied when its feed's is its own (a replay's virtual
// time), else the wall clock.
type streamClock struct {
	virtual atomic.Bool
	ms      atomic.Int64
}

func (c *streamClock) Now() time.Time {
	if c.virtual.Load() {
		return time.UnixMilli(c.ms.Load()).UTC()
	}
	return time.Now()
}

// set takes batch b's clock.
func (c *streamClock) set(b *bus.Batch) {
	if b.Virtual {
		c.ms.Store(b.Record.At)
	}
	c.virtual.Store(b.Virtual)
}

// streamStatus is /readyz's live object with --live.
func (m *Main) streamStatus() (httpapi.LiveStatus, bool) { return m.stream.status() }

// startStream opens the live stream (the embedded server starts) once
// the first snapshot is published, then runs the feed, if any, which
// publishes to it, and the applier, until ctx ends.
func (m *Main) startStream(ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() {
		bc := m.busCfg
		bc.Log = m.log.With("live", "stream")
		// Open fails at once on credentials or TLS the servers refuse:
		// tried again (a Secret's files updated in place, an account
		// pushed to the cluster), each new error logged once.
		b, err := bus.Open(bc)
		for last := ""; err != nil; b, err = bus.Open(bc) {
			if msg := err.Error(); msg != last {
				m.log.Error("live stream not opened: serving the snapshot alone, trying again", "every", streamOpenRetry.String(), "err", msg)
				last = msg
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(streamOpenRetry):
			}
		}
		defer b.Close()
		attrs := []any{"url", bus.Redact(bc.URL), "replicas", bc.Replicas, "retention", bc.MaxAge.String(), "max_bytes", bc.MaxBytes,
			"tls", bc.TLSCA != "" || bc.TLSCert != "" || strings.Contains(bc.URL, "tls://"), "creds", bc.Creds != ""}
		if b.Server() != nil {
			attrs = append(attrs, "store", m.busCfg.Dir, "listen", m.busCfg.Listen)
		}
		m.log.Info("live stream opened", attrs...)
		var inner sync.WaitGroup
		if m.live != nil {
			m.live.bus, m.live.ctx = b, ctx
			inner.Go(func() {
				if err := m.live.start(); err != nil {
					m.log.Error("live feed not started", "err", err.Error())
					return
				}
				if m.live.cfg.kind == feedPush {
					m.API.SetLiveSink(m.live)
				}
				m.live.loop(ctx)
			})
		}
		m.stream.run(ctx, b)
		inner.Wait()
	})
}

// registerStreamMetrics registers the live stream's gauges (0 without
// one).
func registerStreamMetrics(reg prometheus.Registerer, applier func() *streamApplier) {
	gauge := func(name, help string, f func(*httpapi.StreamStatus) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			if a := applier(); a != nil {
				return f(a.streamStatus())
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
	reg.MustRegister(
		gauge("pregao_live_stream_sequence", "Last stream sequence of the live stream applied (or skipped) by this replica.", func(s *httpapi.StreamStatus) float64 { return float64(s.Sequence) }),
		gauge("pregao_live_stream_lag_messages", "Messages of the live stream not applied yet by this replica.", func(s *httpapi.StreamStatus) float64 { return float64(s.Pending) }),
		gauge("pregao_live_stream_lag_seconds", "How long the oldest message of the live stream not applied yet has waited (0: none).", func(s *httpapi.StreamStatus) float64 { return s.Lag.Seconds() }),
		gauge("pregao_live_stream_connected", "1 while this replica reaches the live stream.", func(s *httpapi.StreamStatus) float64 { return b(s.Connected) }),
		gauge("pregao_live_stream_stale_seconds", "How long this replica has not reached the live stream (0 while it does): it serves its last state meanwhile.", func(s *httpapi.StreamStatus) float64 { return s.Stale.Seconds() }),
		gauge("pregao_live_stream_session_gaps", "Gaps (stream messages gone, batch sequence numbers skipped) in the live session this replica applies, while no snapshot has taken it over: its minutes only the missing batches carried are missing.", func(s *httpapi.StreamStatus) float64 { return float64(s.SessionGaps) }),
		gauge("pregao_live_stream_caught_up", "1 once this replica has applied the live stream up to its head since it started (/readyz answers 503 before).", func(s *httpapi.StreamStatus) float64 { return b(s.CaughtUp) }),
	)
}
