package negocios

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot/ingest/fetch/fetchtest"
)

// standIn is a stand-in for B3's trade-file endpoint serving answers
// from testdata/poll (fetchtest: ETag, conditional requests, faults).
type standIn struct {
	*fetchtest.Server
	url   string
	extra map[string]http.HandlerFunc // paths answered otherwise
}

func newStandIn(tb testing.TB) *standIn {
	tb.Helper()
	s := &standIn{Server: fetchtest.New(), extra: map[string]http.HandlerFunc{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := s.extra[r.URL.Path]; h != nil {
			h(w, r)
			return
		}
		s.Server.ServeHTTP(w, r)
	}))
	tb.Cleanup(ts.Close)
	s.url = ts.URL
	return s
}

// serve makes path answer testdata/poll/name.
func (s *standIn) serve(tb testing.TB, path, name string) {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "poll", name))
	if err != nil {
		tb.Fatal(err)
	}
	s.Mu.Lock()
	s.Files[path] = b
	s.Mu.Unlock()
}

// clock is a fake time for the pace: Sleep advances it and records.
type clock struct {
	now   time.Time
	slept []time.Duration
}

func (c *clock) Now() time.Time { return c.now }
func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	return nil
}

func pollConfig(s *standIn, c *clock, tickers ...string) PollConfig {
	return PollConfig{Day: d0, Tickers: tickers, URLs: URLs{Base: s.url + "/rapinegocios/tickercsv"}, Sleep: c.Sleep, Now: c.Now}
}

const tickerPath = "/rapinegocios/tickercsv/"

// fileBars aggregates testdata/poll files from scratch: the oracle.
func fileBars(tb testing.TB, cfg Config, names ...string) *Aggregator {
	tb.Helper()
	a := NewAggregator(d0, cfg)
	for _, n := range names {
		a.Apply(readAll(tb, openFile(tb, filepath.Join("testdata", "poll", n), Options{})))
	}
	return a
}

func sameBars(tb testing.TB, got, want *Aggregator) {
	tb.Helper()
	if !reflect.DeepEqual(got.Tickers(), want.Tickers()) {
		tb.Fatalf("tickers %v, want %v", got.Tickers(), want.Tickers())
	}
	for _, t := range want.Tickers() {
		if g, w := got.Bars(nil, t), want.Bars(nil, t); !reflect.DeepEqual(g, w) {
			tb.Errorf("%s: bars %+v\nwant %+v", t, g, w)
		}
		g, _ := got.Daily(t)
		w, _ := want.Daily(t)
		if g != w {
			tb.Errorf("%s: daily %+v, want %+v", t, g, w)
		}
	}
}

// TestPollTickers polls two tickers' files as they grow: the first poll
// reports every bar, the next only the minutes that new trades and a
// cancellation changed, an unchanged file costs a 304, and the bars are
// the aggregation of the latest files.
func TestPollTickers(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1045.zip")
	s.serve(t, tickerPath+"LITA11/2026-11-19", "LITA11.zip")
	c := &clock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	p, err := NewPoller(pollConfig(s, c, "PLAE3", "LITA11"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Poll(context.Background())
	if err != nil || len(b.Errors) != 0 || b.Requests != 2 || b.Rows != 6 {
		t.Fatalf("poll 1: %+v, %v", b, err)
	}
	if len(b.Bars) != 5 || len(b.Daily) != 2 {
		t.Errorf("poll 1 changes %+v", b.Changes)
	}
	if !reflect.DeepEqual(c.slept, []time.Duration{time.Second}) {
		t.Errorf("slept %v, want the pace between two requests", c.slept)
	}
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1130.zip")
	b, err = p.Poll(context.Background())
	if err != nil || len(b.Errors) != 0 || b.Rows != 3 || b.NotModified != 1 {
		t.Fatalf("poll 2: %+v, %v", b, err)
	}
	var minutes []int64
	for _, x := range b.Bars {
		minutes = append(minutes, x.Time)
	}
	// 10:05 lost its only trade (30, cancelled), 10:45 gained 50, 11:30 is new.
	want := []int64{minute(10, 5), minute(10, 45), minute(11, 30)}
	if !reflect.DeepEqual(minutes, want) || !b.Bars[0].Removed || len(b.Daily) != 1 || b.Daily[0].Ticker != "PLAE3" {
		t.Errorf("poll 2 changes %+v, want minutes %v", b.Changes, want)
	}
	sameBars(t, p.Aggregator(), fileBars(t, Config{}, "PLAE3_1130.zip", "LITA11.zip"))
	b, err = p.Poll(context.Background())
	if err != nil || b.Bars != nil || b.Rows != 0 || b.NotModified != 2 {
		t.Errorf("poll 3: %+v, %v", b, err)
	}
	st := p.State()
	if st.Tickers["PLAE3"].Watermark != 60 || !reflect.DeepEqual(st.Tickers["PLAE3"].Cancelled, []int64(nil)) && p.cfg.StatePath != "" {
		t.Errorf("state %+v", st.Tickers["PLAE3"])
	}
	if a := p.Aggregator().Stats(); a.Duplicates != 0 || a.Trades != 8 || a.Cancels != 1 {
		t.Errorf("aggregator stats %+v: rows applied twice?", a)
	}
}

// TestPollResume: a Poller started again from its saved state rebuilds
// its bars from the files without reporting what was reported before,
// then reports only what is new.
func TestPollResume(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1045.zip")
	c := &clock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	cfg := pollConfig(s, c, "PLAE3")
	cfg.StatePath = filepath.Join(t.TempDir(), "poll.json")
	p, err := NewPoller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := p.Poll(context.Background()); err != nil || b.Rows != 4 {
		t.Fatalf("poll: %+v, %v", b, err)
	}
	if err := p.Save(); err != nil {
		t.Fatal(err)
	}
	// Killed here; started again while the file grew.
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1130.zip")
	q, err := NewPoller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if st := q.State(); st.Tickers["PLAE3"].Watermark != 40 || st.Tickers["PLAE3"].ETag != "" {
		t.Fatalf("restored state %+v", st.Tickers["PLAE3"])
	}
	b, err := q.Poll(context.Background())
	if err != nil || b.Rows != 3 || b.NotModified != 0 {
		t.Fatalf("poll after restart: %+v, %v", b, err)
	}
	var minutes []int64
	for _, x := range b.Bars {
		minutes = append(minutes, x.Time)
	}
	if want := []int64{minute(10, 5), minute(10, 45), minute(11, 30)}; !reflect.DeepEqual(minutes, want) {
		t.Errorf("reported minutes %v, want %v (10:00 was reported before the restart)", minutes, want)
	}
	if b.Bars[1].Trades != 2 || b.Bars[1].Volume != 23610*100+23620*100 {
		t.Errorf("10:45 bar %+v: want its trade from before the restart too", b.Bars[1])
	}
	sameBars(t, q.Aggregator(), fileBars(t, Config{}, "PLAE3_1130.zip"))
	// Poll saves the state it starts from: the cancellation is remembered.
	if _, err := q.Poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, _ := NewPoller(cfg)
	if st := r.State(); !reflect.DeepEqual(st.Tickers["PLAE3"].Cancelled, []int64{30}) || st.Tickers["PLAE3"].Watermark != 60 {
		t.Errorf("saved state %+v", st.Tickers["PLAE3"])
	}
	// A state file that is not one is an error, not a fresh start.
	bad := cfg
	bad.StatePath = filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad.StatePath, []byte("{"), 0o644)
	if _, err := NewPoller(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("bad state: %v", err)
	}
	// A state of another day is not used.
	cfg.Day = d0 + 1
	if r, _ := NewPoller(cfg); len(r.State().Tickers) != 0 {
		t.Errorf("state of %s used for %s", d0, cfg.Day)
	}
}

// TestPollDay polls the whole day's file: instruments Accept refuses are
// counted and kept out of the state, after-market trades are recorded
// outside the bars, and the unchanged file costs a 304.
func TestPollDay(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, tickerPath+"2026-11-19", "20261119_NEGOCIOSAVISTA.zip")
	c := &clock{now: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	cfg := pollConfig(s, c)
	cfg.Aggregate.Accept = func(t string) bool { return t != "DI1F27" }
	p, err := NewPoller(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Poll(context.Background())
	if err != nil || len(b.Errors) != 0 || b.Rows != 10 {
		t.Fatalf("poll: %+v, %v", b, err)
	}
	if st := p.Aggregator().Stats(); st.Ignored != 1 || st.Excluded != 1 || st.Cancels != 1 {
		t.Errorf("stats %+v", st)
	}
	if _, ok := p.State().Tickers["DI1F27"]; ok {
		t.Error("state kept for a refused instrument")
	}
	sameBars(t, p.Aggregator(), fileBars(t, cfg.Aggregate, "20261119_NEGOCIOSAVISTA.zip"))
	if b, err := p.Poll(context.Background()); err != nil || b.NotModified != 1 || b.Bars != nil {
		t.Errorf("second poll %+v, %v", b, err)
	}
	if s.Count(tickerPath+"2026-11-19") != 2 {
		t.Errorf("%d requests", s.Count(tickerPath+"2026-11-19"))
	}
}

// TestPollFaults: a failing file is reported and asked again whole; a
// missing one is counted; Retry-After holds the next request back; a
// derivatives file, a file of another ticker, an oversized answer and a
// malformed row in strict mode are errors; lenient mode skips the row.
func TestPollFaults(t *testing.T) {
	s := newStandIn(t)
	ctx := context.Background()
	c := &clock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	p, _ := NewPoller(pollConfig(s, c, "PLAE3", "LITA11"))
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "PLAE3_1045.zip")
	s.extra[tickerPath+"LITA11/2026-11-19"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "30")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}
	b, err := p.Poll(ctx)
	if err != nil || len(b.Errors) != 1 || !strings.Contains(b.Errors[0].Error(), "503") || b.Rows != 4 {
		t.Fatalf("poll 1: %+v, %v", b, err)
	}
	c.slept = nil
	delete(s.extra, tickerPath+"LITA11/2026-11-19")
	s.serve(t, tickerPath+"LITA11/2026-11-19", "LITA11.zip")
	b, err = p.Poll(ctx)
	if err != nil || len(b.Errors) != 0 || b.Rows != 2 || len(c.slept) == 0 || c.slept[0] < 29*time.Second {
		t.Fatalf("poll 2: %+v, %v, slept %v (want Retry-After)", b, err, c.slept)
	}

	// Missing, derivatives, foreign rows, oversized.
	s.Mu.Lock()
	s.Gone[tickerPath+"LITA11/2026-11-19"] = true
	s.Mu.Unlock()
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "derivatives.zip")
	b, _ = p.Poll(ctx)
	if b.Missing != 1 || len(b.Errors) != 1 || !errors.Is(b.Errors[0], ErrDerivatives) {
		t.Errorf("missing and derivatives: %+v", b)
	}
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "LITA11.zip")
	b, _ = p.Poll(ctx)
	if len(b.Errors) != 1 || !strings.Contains(b.Errors[0].Error(), "2 rows of other instruments than PLAE3") || b.Rows != 0 {
		t.Errorf("foreign rows: %+v", b)
	}
	small := pollConfig(s, c, "PLAE3")
	small.MaxBytes = 100
	q, _ := NewPoller(small)
	if b, _ := q.Poll(ctx); len(b.Errors) != 1 || !strings.Contains(b.Errors[0].Error(), "larger than 100 bytes") {
		t.Errorf("oversized: %+v", b)
	}

	// A malformed row: strict fails the file (asked whole again), lenient
	// skips it.
	s.serve(t, tickerPath+"PLAE3/2026-11-19", "malformed.txt")
	strict := pollConfig(s, c, "PLAE3")
	strict.Strict = true
	q, _ = NewPoller(strict)
	b, _ = q.Poll(ctx)
	var le *LineError
	if len(b.Errors) != 1 || !errors.As(b.Errors[0], &le) || le.Field != "PrecoNegocio" || q.State().Tickers["PLAE3"].ETag != "" {
		t.Errorf("strict: %+v", b)
	}
	q, _ = NewPoller(pollConfig(s, c, "PLAE3"))
	if b, _ := q.Poll(ctx); len(b.Errors) != 0 || b.Skipped != 1 || b.Rows != 2 {
		t.Errorf("lenient: %+v", b)
	}

	// A cancelled context ends the poll.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := q.Poll(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestPollTextAddress follows a 2020-2021 answer: the address of the
// file, as text.
func TestPollTextAddress(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, "/blob/abc.zip", "LITA11.zip")
	s.extra[tickerPath+"LITA11/2026-11-19"] = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(s.url + "/blob/abc.zip?sig=x\n"))
	}
	c := &clock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	p, _ := NewPoller(pollConfig(s, c, "LITA11"))
	b, err := p.Poll(context.Background())
	if err != nil || len(b.Errors) != 0 || b.Rows != 2 || b.Requests != 2 {
		t.Fatalf("poll: %+v, %v", b, err)
	}
}

// TestURLs: the address scheme in one place.
func TestURLs(t *testing.T) {
	var u URLs
	if got := u.Day(d0); got != "https://drp.b3.com.br/rapinegocios/tickercsv/2026-11-19?type=2" {
		t.Errorf("day %s", got)
	}
	if got := u.Ticker("PETR4", d0); got != "https://drp.b3.com.br/rapinegocios/tickercsv/PETR4/2026-11-19?type=2" {
		t.Errorf("ticker %s", got)
	}
	u = URLs{Base: "https://arquivos.b3.com.br/rapinegocios/tickercsv/", Query: "-"}
	if got := u.Ticker("A B", d0); got != "https://arquivos.b3.com.br/rapinegocios/tickercsv/A%20B/2026-11-19" {
		t.Errorf("legacy %s", got)
	}
	if _, err := NewPoller(PollConfig{}); err == nil {
		t.Error("a Poller without a day")
	}
}
