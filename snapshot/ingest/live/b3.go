package live

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// B3Config configures a B3 feed.
type B3Config struct {
	// Session, when set, is the one session polled: the feed ends
	// (io.EOF) once it is complete. NoDate (or 0): the feed follows the
	// calendar, moving to each new session (CurrentSession; in whole-day
	// mode the previous weekday's, whose file B3 publishes the next
	// morning).
	Session engine.Date
	// Tickers, when set, are polled one file each during the session
	// (B3 publishes them about 15 minutes late); empty: the whole day's
	// file.
	Tickers []string
	// URLs is where B3 publishes the files (negocios.URLs: a mirror, a
	// moved portal, a test server).
	URLs negocios.URLs
	// Interval is the time between the starts of two polls (default
	// DefaultB3Interval); Pace the least time between two requests
	// (default DefaultB3Pace).
	Interval, Pace time.Duration
	// StateDir, when set, holds the poller's watermarks of each session
	// (b3-YYYY-MM-DD.json), so that a restart resumes.
	StateDir string
	// HTTP is the client (default: negocios' own).
	HTTP *http.Client
	// AfterMarket puts after-market trades in the bars.
	AfterMarket bool
	// UserAgent is sent with every request (default "pregao").
	UserAgent string
	// Now and Sleep replace the wall clock (tests).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// The defaults of B3Config's Interval and Pace.
const (
	DefaultB3Interval = time.Minute
	DefaultB3Pace     = time.Second
)

// B3 polls B3's trade files (see the package documentation).
type B3 struct {
	cfg      B3Config
	day      engine.Date // the session polled
	poller   *negocios.Poller
	seq      uint64
	complete bool      // the session polled is complete
	polled   time.Time // the start of the last poll
	errs     map[string]int64
	aggBase  map[string]int64 // counts of the pollers of earlier sessions
	lastErrs []error
}

// NewB3 returns a B3 feed of cfg.
func NewB3(cfg B3Config) (*B3, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultB3Interval
	}
	if cfg.Pace <= 0 {
		cfg.Pace = DefaultB3Pace
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	for _, t := range cfg.Tickers {
		if !engine.ValidTicker(t) {
			return nil, errorf("b3: %q is not a ticker", t)
		}
	}
	b := &B3{cfg: cfg, errs: map[string]int64{}, aggBase: map[string]int64{}}
	b.day = b.target(cfg.Now())
	return b, nil
}

// target returns the session to poll at t.
func (b *B3) target(t time.Time) engine.Date {
	switch {
	case b.cfg.Session != 0 && b.cfg.Session.Valid():
		return b.cfg.Session
	case len(b.cfg.Tickers) == 0:
		return PrevWeekday(LocalDate(t)) // the last weekday before today: its file is out the next morning
	}
	return CurrentSession(t)
}

// Session returns the session polled.
func (b *B3) Session() engine.Date { return b.day }

// Clock reports the wall clock.
func (b *B3) Clock() (time.Time, bool) { return b.cfg.Now(), false }

// Resume numbers the next batch seq+1.
func (b *B3) Resume(seq uint64, _ time.Time) { b.seq = seq }

// Errors returns the bad input counted so far, by reason.
func (b *B3) Errors() map[string]int64 {
	m := make(map[string]int64, len(Reasons))
	for k, v := range b.errs {
		m[k] += v
	}
	for k, v := range b.aggBase {
		m[k] += v
	}
	if b.poller != nil {
		addAggStats(m, b.poller.Aggregator().Stats())
		m[ReasonOutOfOrder] += b.poller.Aggregator().Stats().OutOfOrder
	}
	return m
}

// poller returns the poller of session d, made when the session changed.
func (b *B3) pollerOf(d engine.Date) (*negocios.Poller, error) {
	if b.poller != nil && b.poller.Aggregator().Day() == d {
		return b.poller, nil
	}
	cfg := negocios.PollConfig{Day: d, Tickers: b.cfg.Tickers, URLs: b.cfg.URLs, HTTP: b.cfg.HTTP, Pace: b.cfg.Pace,
		Aggregate: negocios.Config{AfterMarket: b.cfg.AfterMarket, Accept: engine.ValidTicker}, UserAgent: b.cfg.UserAgent,
		Sleep: b.cfg.Sleep, Now: b.cfg.Now}
	if b.cfg.StateDir != "" {
		cfg.StatePath = filepath.Join(b.cfg.StateDir, "b3-"+d.String()+".json")
	}
	p, err := negocios.NewPoller(cfg)
	if err != nil {
		return nil, err
	}
	if b.poller != nil {
		st := b.poller.Aggregator().Stats()
		tmp := map[string]int64{}
		addAggStats(tmp, st)
		tmp[ReasonOutOfOrder] += st.OutOfOrder
		for k, v := range tmp {
			b.aggBase[k] += v
		}
	}
	b.poller = p
	return p, nil
}

// Next polls B3 once, Interval after the previous poll began, and
// returns the bars that changed. A session is complete once its whole
// day's file was read (whole-day mode), or with the first poll that
// begins at its SessionEnd or later (per-ticker mode). After a complete
// session the feed waits for the next one (calendar) or ends (a fixed
// Session).
func (b *B3) Next(ctx context.Context) (Step, error) {
	now := b.cfg.Now()
	if b.complete {
		// The complete session's last batch is acknowledged by this call
		// (the server logged it): its state can be saved.
		if err := b.poller.Save(); err != nil {
			b.errs[ReasonState]++
		}
		next := b.target(now)
		if next == b.day {
			if b.cfg.Session != 0 && b.cfg.Session.Valid() {
				return Step{}, io.EOF
			}
			// Wait for the next session, polling the calendar at the
			// interval (no request is made).
			if err := b.cfg.Sleep(ctx, b.cfg.Interval); err != nil {
				return Step{}, err
			}
			return Step{Session: b.day, At: b.cfg.Now()}, nil
		}
		// A new session: announced by a step without a batch, so that
		// the server opens its log and Resumes the numbering first.
		b.day, b.complete, b.seq = next, false, 0
		return Step{Session: b.day, At: now}, nil
	} else if t := b.target(now); t != b.day {
		b.errs[ReasonFetch]++ // the session passed before it was complete (no file: a holiday, or B3 late)
		b.day, b.seq = t, 0
		return Step{Session: b.day, At: now}, nil
	}
	if !b.polled.IsZero() {
		if d := b.polled.Add(b.cfg.Interval).Sub(now); d > 0 {
			if err := b.cfg.Sleep(ctx, d); err != nil {
				return Step{}, err
			}
			now = b.cfg.Now()
		}
	}
	p, err := b.pollerOf(b.day)
	if err != nil {
		b.errs[ReasonState]++
		return Step{}, err
	}
	b.polled = now
	batch, err := p.Poll(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Step{}, ctx.Err()
		}
		b.errs[ReasonState]++
		return Step{}, err
	}
	b.errs[ReasonFetch] += int64(len(batch.Errors))
	b.errs[ReasonMalformed] += batch.Skipped
	switch {
	case len(b.cfg.Tickers) > 0:
		b.complete = !now.Before(SessionEnd(b.day))
	default:
		got := batch.Requests - batch.NotModified - batch.Missing - len(batch.Errors)
		b.complete = got > 0 && len(batch.Errors) == 0
	}
	step := Step{Session: b.day, At: b.cfg.Now()}
	if len(batch.Bars) > 0 || b.complete {
		bars := make([]engine.LiveBar, len(batch.Bars))
		for i := range batch.Bars {
			bars[i] = LiveBar(&batch.Bars[i])
		}
		b.seq++
		step.Batch = &engine.LiveBatch{Seq: b.seq, Session: b.day, Bars: bars, Complete: b.complete}
	}
	b.lastErrs = batch.Errors
	return step, nil
}

// LastErrors returns the errors of the files that failed in the last
// poll (asked again by the next).
func (b *B3) LastErrors() []error { return b.lastErrs }

var _ Feed = (*B3)(nil)
