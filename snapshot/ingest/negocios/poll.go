package negocios

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// URLs is the one place that knows where B3 publishes its trade files.
// The endpoint has moved between portals (arquivos.b3.com.br until 2025,
// drp.b3.com.br from 2026; 2020-2021 answered with a text address of a
// signed blob instead of the file, which Poller follows): set Base for a
// mirror, a moved portal or a test server.
type URLs struct {
	// Base is the address the day and the ticker are appended to
	// (default DefaultBase).
	Base string
	// Query is appended to every address (default DefaultQuery: the
	// equities file; B3's derivatives file answers another type and is
	// refused, ErrDerivatives).
	Query string
}

// The current (2026) addresses: BASE/YYYY-MM-DD?type=2 is the day's
// equities file, BASE/TICKER/YYYY-MM-DD?type=2 one ticker's.
const (
	DefaultBase  = "https://drp.b3.com.br/rapinegocios/tickercsv"
	DefaultQuery = "type=2"
)

// Day returns the address of the whole day's file.
func (u URLs) Day(d engine.Date) string { return u.join(d.String()) }

// Ticker returns the address of one ticker's file of day d.
func (u URLs) Ticker(ticker string, d engine.Date) string {
	return u.join(url.PathEscape(ticker) + "/" + d.String())
}

func (u URLs) join(rest string) string {
	base, q := u.Base, u.Query
	if base == "" {
		base = DefaultBase
	}
	if q == "" {
		q = DefaultQuery
	}
	s := strings.TrimRight(base, "/") + "/" + rest
	if q != "-" {
		s += "?" + q
	}
	return s
}

// ErrDerivatives is returned for an answer holding B3's derivatives file
// (a _DRV text) where the equities one was asked: URLs.Query names the
// wrong type.
var ErrDerivatives = errors.New("negocios: the answer is the derivatives file (_DRV): set the URL query to the equities type")

// PollConfig configures a Poller. Zero fields take the defaults said.
type PollConfig struct {
	// Day is the session polled (required).
	Day engine.Date
	// Tickers, when set, are polled one file each (during the session,
	// when B3 publishes them about 15 minutes late); when empty, the
	// whole day's file is (the next morning).
	Tickers []string
	URLs    URLs
	// HTTP is the client (default: one with a 60 s timeout).
	HTTP *http.Client
	// Pace is the least time between two requests (default 1 s): one
	// request a second keeps a poll of 100 tickers under two minutes.
	Pace time.Duration
	// MaxBytes bounds one answer (default 256 MiB: a whole-market day
	// zipped is about 50 MB).
	MaxBytes int64
	// StatePath, when set, is the file holding the per-ticker
	// watermarks between runs (JSON; written atomically).
	StatePath string
	// Aggregate configures the Aggregator.
	Aggregate Config
	// Strict stops at a malformed row (the poll fails); by default rows
	// are read leniently, counted and skipped (Batch.Skipped).
	Strict bool
	// UserAgent is sent with every request (default "pregao").
	UserAgent string
	// Sleep waits d or until ctx ends (default: a timer; tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// TickerState is what a Poller remembers of one instrument's file.
type TickerState struct {
	// Watermark is the highest trade id applied (0: none): a poll
	// applies the file's trades above it (ids grow with time per
	// instrument and day: a trade published late below it would be
	// missed) and the cancellations not yet applied.
	Watermark int64   `json:"watermark"`
	Cancelled []int64 `json:"cancelled,omitempty"` // ids whose cancellation was applied, ascending
	// ETag and LastModified of the file's last answer (per-ticker
	// mode), sent back so that an unchanged file costs no body.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// PollState is a Poller's memory, saved at StatePath.
type PollState struct {
	Day     string                  `json:"day"` // YYYY-MM-DD
	Tickers map[string]*TickerState `json:"tickers"`
	// DayFile records the whole day's file's validators (whole-day mode).
	DayFile *TickerState `json:"day_file,omitempty"`
}

// Batch is what one Poll applied.
type Batch struct {
	// Changes are the bars that changed (see Aggregator.Apply).
	Changes
	Requests    int     // requests made
	NotModified int     // files unchanged since the last poll
	Missing     int     // files not (yet) published: 404 or empty
	Rows        int     // new rows applied (trades above the watermarks, cancellations not applied before)
	Skipped     int64   // malformed rows skipped
	Errors      []error // files that failed this time (asked again next poll)
}

// Poller polls B3's trade files of one session and aggregates them. A
// Poll is resumable: the watermarks are saved at StatePath, and a Poller
// started again with the same state applies rows up to them without
// reporting their bars (the consumer had them) before reporting what is
// new. It is not safe for concurrent use.
type Poller struct {
	cfg      PollConfig
	agg      *Aggregator
	state    PollState
	known    map[string]bool // tickers whose rows up to the watermark are in agg
	cancels  map[string]map[int64]bool
	last     time.Time // last request
	notUntil time.Time // a Retry-After
	dirty    bool      // state changed since saved
}

// NewPoller returns a Poller of cfg, reading the state at cfg.StatePath
// if there is one for cfg.Day (a state of another day is ignored).
func NewPoller(cfg PollConfig) (*Poller, error) {
	if cfg.Day <= 0 || !cfg.Day.Valid() {
		return nil, errors.New("negocios: PollConfig.Day is required")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Pace == 0 {
		cfg.Pace = time.Second
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = 256 << 20
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "pregao"
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Poller{cfg: cfg, agg: NewAggregator(cfg.Day, cfg.Aggregate), known: map[string]bool{}, cancels: map[string]map[int64]bool{},
		state: PollState{Day: cfg.Day.String(), Tickers: map[string]*TickerState{}}}
	if cfg.StatePath != "" {
		b, err := os.ReadFile(cfg.StatePath)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, err
		default:
			var st PollState
			if err := json.Unmarshal(b, &st); err != nil {
				return nil, fmt.Errorf("negocios: %s: %w", cfg.StatePath, err)
			}
			if st.Day == p.state.Day && st.Tickers != nil {
				p.state = st
				for t, ts := range st.Tickers {
					m := map[int64]bool{}
					for _, id := range ts.Cancelled {
						m[id] = true
					}
					p.cancels[t] = m
					// Rebuilding the Aggregator needs the whole file
					// again: no validators until then.
					ts.ETag, ts.LastModified = "", ""
				}
				p.state.DayFile = nil
			}
		}
	}
	return p, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Aggregator returns the Poller's Aggregator (its bars, daily bars and
// Stats); the caller must not Apply to it.
func (p *Poller) Aggregator() *Aggregator { return p.agg }

// State returns a copy of the watermarks.
func (p *Poller) State() PollState {
	st := PollState{Day: p.state.Day, Tickers: make(map[string]*TickerState, len(p.state.Tickers))}
	for t, ts := range p.state.Tickers {
		c := *ts
		c.Cancelled = slices.Clone(ts.Cancelled)
		st.Tickers[t] = &c
	}
	if p.state.DayFile != nil {
		c := *p.state.DayFile
		st.DayFile = &c
	}
	return st
}

// Save writes the state to StatePath (atomically), if set and changed.
// Poll saves at its start, so a batch is acknowledged by asking for the
// next: a process killed after a Poll returned and before the next one
// reports that batch's bars again when it restarts (harmless to a
// consumer that applies them "last writer wins").
func (p *Poller) Save() error {
	if p.cfg.StatePath == "" || !p.dirty {
		return nil
	}
	for t, ts := range p.state.Tickers {
		ts.Cancelled = ts.Cancelled[:0]
		for id := range p.cancels[t] {
			ts.Cancelled = append(ts.Cancelled, id)
		}
		slices.Sort(ts.Cancelled)
	}
	b, err := json.MarshalIndent(&p.state, "", " ")
	if err != nil {
		return err
	}
	err = atomicfile.WriteFile(p.cfg.StatePath, 0o600, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("negocios: saving %s: %w", p.cfg.StatePath, err)
	}
	p.dirty = false
	return nil
}

// Poll fetches the session's files once (every ticker of
// PollConfig.Tickers in order, or the day's file), at the configured
// pace, and applies what is new: trades above their ticker's watermark
// and cancellations not applied yet. A file that fails (network, HTTP
// status, a malformed file in strict mode) is in Batch.Errors and asked
// again, whole, by the next Poll; a file not yet published (404) is
// counted in Missing. Poll returns an error only when ctx ends or the
// state cannot be saved.
func (p *Poller) Poll(ctx context.Context) (Batch, error) {
	var b Batch
	if err := p.Save(); err != nil {
		return b, err
	}
	if len(p.cfg.Tickers) == 0 {
		if p.state.DayFile == nil {
			p.state.DayFile = &TickerState{}
		}
		if err := p.pollFile(ctx, &b, p.cfg.URLs.Day(p.cfg.Day), p.state.DayFile, ""); err != nil {
			return b, err
		}
	}
	for _, t := range p.cfg.Tickers {
		if err := p.pollFile(ctx, &b, p.cfg.URLs.Ticker(t, p.cfg.Day), p.ticker(t), t); err != nil {
			return b, err
		}
	}
	b.Changes = p.agg.flush()
	return b, nil
}

// ticker returns the state of ticker, created when absent.
func (p *Poller) ticker(t string) *TickerState {
	ts := p.state.Tickers[t]
	if ts == nil {
		ts = &TickerState{}
		p.state.Tickers[t] = ts
		p.dirty = true
	}
	return ts
}

// pollFile fetches one file (u, whose validators are in fs; only, when
// set, the one ticker it may hold) and applies its new rows, streaming.
// It returns an error only when ctx ended.
func (p *Poller) pollFile(ctx context.Context, b *Batch, u string, fs *TickerState, only string) error {
	f, v, err := p.open(ctx, b, u, fs)
	if err != nil || f == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err != nil {
			b.Errors = append(b.Errors, err)
		}
		return nil
	}
	defer f.Close()
	// Decisions are taken against the watermarks as they were before
	// this file, which need not be sorted. A ticker with a watermark the
	// Aggregator does not hold yet (a restarted Poller) is rebuilt from
	// the rows up to it, silently (their bars were reported before the
	// restart); its new rows are held until then.
	type mark struct {
		start, top int64
		rebuild    bool
		ts         *TickerState
		cancels    map[int64]bool
		held       []Trade // new rows of a ticker being rebuilt
	}
	marks := map[string]*mark{}
	var foreign int
	for f.Next() {
		r := f.Trade()
		if only != "" && r.Ticker != only {
			foreign++
			continue
		}
		if !p.agg.accepts(r.Ticker) {
			p.agg.apply(r) // counted once per row (Stats.Ignored); no state kept
			continue
		}
		m := marks[r.Ticker]
		if m == nil {
			ts := p.ticker(r.Ticker)
			c := p.cancels[r.Ticker]
			if c == nil {
				c = map[int64]bool{}
				p.cancels[r.Ticker] = c
			}
			m = &mark{start: ts.Watermark, top: ts.Watermark, rebuild: !p.known[r.Ticker] && (ts.Watermark > 0 || len(c) > 0), ts: ts, cancels: c}
			marks[r.Ticker] = m
		}
		var fresh bool
		switch {
		case r.Action == ActionCancel:
			fresh = !m.cancels[r.ID]
			m.cancels[r.ID] = true
		default:
			fresh = r.ID > m.start || m.start == 0 // 0: none applied
			m.top = max(m.top, r.ID)
		}
		switch {
		case fresh && m.rebuild:
			m.held = append(m.held, *r)
		case fresh || m.rebuild:
			p.agg.apply(r)
		}
		if fresh {
			b.Rows++
		}
	}
	for t, m := range marks {
		if m.rebuild {
			p.agg.settleSilently(t)
			for i := range m.held {
				p.agg.apply(&m.held[i])
			}
		}
		p.known[t] = true
		if m.top != m.ts.Watermark {
			m.ts.Watermark = m.top
		}
		p.dirty = true
	}
	b.Skipped += f.Stats().Skipped
	if foreign > 0 {
		b.Errors = append(b.Errors, fmt.Errorf("%s: %d rows of other instruments than %s, skipped", f.Name, foreign, only))
	}
	if err := f.Err(); err != nil {
		b.Errors = append(b.Errors, err)
		return nil // validators not kept: the whole file again next time
	}
	if v.etag != fs.ETag || v.lastModified != fs.LastModified {
		fs.ETag, fs.LastModified = v.etag, v.lastModified
		p.dirty = true
	}
	return nil
}

// validators are an answer's ETag and Last-Modified.
type validators struct{ etag, lastModified string }

// open fetches u and opens the trade file it answers (following the
// 2020-2021 answers that give the file's address). A nil File with a nil
// error is an unchanged or missing file.
func (p *Poller) open(ctx context.Context, b *Batch, u string, fs *TickerState) (*File, validators, error) {
	body, v, err := p.get(ctx, b, u, fs)
	if err != nil || body == nil {
		return nil, v, err
	}
	if s := strings.TrimSpace(string(body)); len(body) < 4096 && (strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")) &&
		!strings.ContainsAny(s, " \n") {
		body, _, err = p.get(ctx, b, s, &TickerState{})
		if err != nil || body == nil {
			return nil, v, err
		}
	}
	f, err := OpenBytes(body, u, Options{Lenient: !p.cfg.Strict})
	if err != nil {
		return nil, v, err
	}
	if strings.Contains(strings.ToUpper(f.Name), "_DRV") {
		f.Close()
		return nil, v, fmt.Errorf("%s: %w", f.Name, ErrDerivatives)
	}
	return f, v, nil
}

// get makes one GET at the pace, conditional on fs's validators. A nil
// body with a nil error is a 304, a 404 or an empty answer.
func (p *Poller) get(ctx context.Context, b *Batch, u string, fs *TickerState) ([]byte, validators, error) {
	var v validators
	wait := p.cfg.Pace - p.cfg.Now().Sub(p.last)
	if w := p.notUntil.Sub(p.cfg.Now()); w > wait {
		wait = w
	}
	if wait > 0 && !p.last.IsZero() {
		if err := p.cfg.Sleep(ctx, wait); err != nil {
			return nil, v, err
		}
	}
	p.last = p.cfg.Now()
	b.Requests++
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, v, err
	}
	req.Header.Set("User-Agent", p.cfg.UserAgent)
	if fs.ETag != "" {
		req.Header.Set("If-None-Match", fs.ETag)
	}
	if fs.LastModified != "" {
		req.Header.Set("If-Modified-Since", fs.LastModified)
	}
	resp, err := p.cfg.HTTP.Do(req)
	if err != nil {
		return nil, v, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotModified:
		b.NotModified++
		return nil, v, nil
	case http.StatusNotFound:
		b.Missing++
		return nil, v, nil
	case http.StatusTooManyRequests, http.StatusServiceUnavailable:
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			p.notUntil = p.cfg.Now().Add(min(time.Duration(s)*time.Second, 10*time.Minute))
		}
		return nil, v, fmt.Errorf("%s: %s", u, resp.Status)
	default:
		return nil, v, fmt.Errorf("%s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, p.cfg.MaxBytes+1))
	if err != nil {
		return nil, v, fmt.Errorf("%s: %w", u, err)
	}
	if int64(len(body)) > p.cfg.MaxBytes {
		return nil, v, fmt.Errorf("%s: answer larger than %d bytes", u, p.cfg.MaxBytes)
	}
	v = validators{resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")}
	if len(bytes.TrimSpace(body)) == 0 {
		b.Missing++
		return nil, v, nil
	}
	return body, v, nil
}
