package session

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// Options are what New takes beside Config: the parts the command owns.
type Options struct {
	// Log receives the session's log lines (nil: discarded).
	Log *slog.Logger
	// Registerer receives the pregao_live_* metrics (nil: a registry of
	// its own, not exposed).
	Registerer prometheus.Registerer
	// Version is the build's: it names the stream connection and the b3
	// feed's user agent.
	Version string
	// SetSink is called with the push feed's sink once its session is
	// open (nil: nobody takes pushes).
	SetSink func(engine.LiveSink)
	// Now is the wall clock of the push session's calendar (nil:
	// time.Now; tests set it).
	Now func() time.Time
}

// Session is the live session of a process: a serve (with a Store:
// the head, fed by the local driver or by the stream driver, and the
// local driver publishing to the stream beside it) or a feed alone
// (without a Store: the local driver publishing to a cluster's stream).
// Its methods are safe for concurrent use.
type Session struct {
	cfg    settings
	log    *slog.Logger
	met    *metrics
	head   *head   // nil: a feed alone
	local  *local  // nil: no feed here
	stream *stream // nil: no stream to apply from
	clock  *Clock  // the API's: the head's, else the feed's
	bus    *bus.Bus
}

// New checks cfg and builds the session over store (nil for a feed that
// only publishes to a stream), registering its metrics on
// opts.Registerer whether or not a feed or a stream runs; a replay reads
// its recording now, so that a bad folder is an error at once. Errors
// name the flag. Nothing runs before Run.
func New(cfg Config, store *engine.Store, opts Options) (*Session, error) {
	st, err := cfg.check(opts.Version)
	if err != nil {
		return nil, err
	}
	if store == nil && (st.kind == "" || st.kind == FeedPush || st.bus.URL == "" || st.bus.URL == bus.Embedded) {
		return nil, errors.New("a feed alone takes --feed replay:DIR or b3 and --live nats://")
	}
	s := &Session{cfg: st, log: opts.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	reg := opts.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	s.met = newMetrics(reg, s)
	if store != nil {
		registerStreamGauges(reg, s)
		s.clock = &Clock{}
		s.head = newHead(store, s.log, s.met, s.clock)
	}
	if st.kind != "" {
		// With a stream, the stream driver applies the batches, the
		// feed's here included: the feed only publishes them.
		h := s.head
		if st.bus.URL != "" {
			h = nil
		}
		now := opts.Now
		if now == nil {
			now = time.Now
		}
		if s.local, err = newLocal(&s.cfg, h, s.log, s.met, now); err != nil {
			return nil, err
		}
		s.local.setSink = opts.SetSink
		if h != nil || s.head == nil {
			// The API's clock and the lag's are the feed's (virtual
			// for a replay) when it applies here, or runs alone.
			s.clock = s.local.clock
			if h != nil {
				h.clock = s.clock
			}
		}
	}
	if st.bus.URL != "" && s.head != nil {
		s.stream = newStream(s.head, s.log, s.met)
	}
	if s.local != nil && s.local.head != nil {
		// Not ready until the first session is read back from its log.
		s.head.restoring.Store(true)
	}
	return s, nil
}

// Clock is the API's clock: the stream's (the clock of the last batch
// applied when its feed's is virtual), else the feed's (a replay's
// virtual time), else the wall clock.
func (s *Session) Clock() *Clock {
	if s.clock == nil {
		return &Clock{}
	}
	return s.clock
}

// ClockName names the API's clock: "stream", "replay" (a feed's virtual
// clock), "wall" (a feed's), or "" without a feed or a stream (the
// command's own clock).
func (s *Session) ClockName() string {
	switch {
	case s.stream != nil:
		return "stream"
	case s.local == nil:
		return ""
	case s.local.virtual:
		return "replay"
	}
	return "wall"
}

// Runs reports whether there is anything to run: a feed or a stream.
func (s *Session) Runs() bool { return s.local != nil || s.stream != nil }

// Published tells the session that a snapshot was published (it may
// take the session over). It never blocks.
func (s *Session) Published() {
	if s.head != nil {
		s.head.published()
	}
}

// State returns the session's state as last published: the head's, or
// a feed alone's (nil: no session to report).
func (s *Session) State() *State {
	switch {
	case s.head != nil && s.Runs():
		return s.head.state.Load()
	case s.local != nil:
		return s.local.state.Load()
	}
	return nil
}

// FeedState returns the state of the feed of a process that publishes
// it to a stream (what the stream has acknowledged); nil otherwise.
func (s *Session) FeedState() *State {
	if s.local != nil && s.local.head == nil {
		return s.local.state.Load()
	}
	return nil
}

// gaugeState is State for the gauges.
func (s *Session) gaugeState() *State { return s.State() }

// sessionGaps is the gaps of the session under way (0 without a head).
func (s *Session) sessionGaps() int64 {
	if s.head == nil {
		return 0
	}
	return s.head.sessionGaps.Load()
}

// lag is how far the session's watermark is behind its clock.
func (s *Session) lag() time.Duration {
	st := s.State()
	if st == nil {
		return 0
	}
	return lag(st, s.Clock().Now())
}

// Restoring reports whether the session is being read back from its
// log (a restart), so that what it holds is not whole yet. It is an
// atomic load.
func (s *Session) Restoring() bool { return s.head != nil && s.head.restoring.Load() }

// Status is /readyz's live object: false when there is none (no feed
// and no stream, or a feed whose session is not open yet). A replica of
// the stream always has one (a replica catching up answers 503).
func (s *Session) Status() (engine.LiveStatus, bool) {
	switch {
	case s.stream != nil:
		feed := "stream"
		if s.local != nil {
			feed = s.cfg.kind
		}
		st := s.head.status(feed)
		st.Stream = s.stream.status()
		return st, true
	case s.head != nil && s.local != nil && (s.head.state.Load().Running || s.head.restoring.Load()):
		st := s.head.status(s.cfg.kind)
		if d := s.local.degraded.Load(); d != nil {
			st.Degraded = *d
		}
		return st, true
	}
	return engine.LiveStatus{}, false
}

// OpenStream opens the live stream (the embedded server starts), once:
// Run opens it otherwise, retrying.
func (s *Session) OpenStream() error {
	if s.bus != nil || s.cfg.bus.URL == "" {
		return nil
	}
	bc := s.cfg.bus
	bc.Log = s.log.With("live", "stream")
	b, err := bus.Open(bc)
	if err != nil {
		return err
	}
	s.bus = b
	attrs := []any{"url", bus.Redact(bc.URL), "replicas", bc.Replicas, "retention", bc.MaxAge.String(), "max_bytes", bc.MaxBytes,
		"tls", bc.TLSCA != "" || bc.TLSCert != "" || strings.Contains(bc.URL, "tls://"), "creds", bc.Creds != ""}
	if b.Server() != nil {
		attrs = append(attrs, "store", bc.Dir, "listen", bc.Listen)
	}
	s.log.Info("live stream opened", attrs...)
	return nil
}

// streamOpenRetry is how long Run waits before it opens the live stream
// again after it failed.
const streamOpenRetry = 10 * time.Second

// Run runs the session until ctx ends; the snapshot is published by
// then. The stream is opened first (Open fails at once on credentials or
// TLS the servers refuse: tried again every 10 s, each new error logged
// once, while a serve serves its snapshot alone); then the feed's first
// session opens (its log read back: a restart loses nothing) and the
// feed, or the push calendar, runs beside the handover loop and the
// stream driver. Run returns the error of a feed alone that cannot
// start; a serve's is logged and its snapshot keeps serving.
func (s *Session) Run(ctx context.Context) error {
	if !s.Runs() {
		return nil
	}
	for last := ""; s.cfg.bus.URL != ""; {
		err := s.OpenStream()
		if err == nil {
			break
		}
		if s.head == nil {
			return err
		}
		if msg := err.Error(); msg != last {
			s.log.Error("live stream not opened: serving the snapshot alone, trying again", "every", streamOpenRetry.String(), "err", msg)
			last = msg
		}
		if live.Sleep(ctx, streamOpenRetry) != nil {
			return nil
		}
	}
	if s.bus != nil {
		defer s.bus.Close()
	}
	var wg sync.WaitGroup
	if s.head != nil {
		wg.Go(func() { s.head.handovers(ctx, s.closeIfRolled) })
	}
	if s.stream != nil {
		wg.Go(func() { s.stream.run(ctx, s.bus) })
	}
	err := s.runLocal(ctx)
	if err != nil && s.head != nil {
		s.log.Error("live session not started: serving the snapshot alone", "err", err.Error())
		err = nil
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// runLocal runs the local driver, if any, until ctx ends.
func (s *Session) runLocal(ctx context.Context) error {
	l := s.local
	if l == nil {
		return nil
	}
	l.bus, l.ctx = s.bus, ctx
	restored, err := l.start()
	if l.head != nil && restored {
		// Restored, or given up (the snapshot serves alone). A log not
		// opened yet keeps the session restoring until recoverLog opens
		// it.
		l.head.restoring.Store(false)
	}
	if err != nil {
		return err
	}
	l.loop(ctx)
	return nil
}

// closeIfRolled closes the local driver's session log once the head
// handed the session over.
func (s *Session) closeIfRolled() {
	if l := s.local; l != nil {
		l.mu.Lock()
		l.closeIfRolled()
		l.mu.Unlock()
	}
}
