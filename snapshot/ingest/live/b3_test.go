package live

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// standIn is a stand-in for B3's trade-file endpoint: paths answered
// with files of negocios' testdata/poll, 404 otherwise.
type standIn struct {
	mu       sync.Mutex
	files    map[string][]byte
	status   map[string]int
	requests int
	url      string
}

const b3Path = "/rapinegocios/tickercsv/"

func newStandIn(t *testing.T) *standIn {
	s := &standIn{files: map[string][]byte{}, status: map[string]int{}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		if r.URL.Query().Get("type") != "2" {
			http.Error(w, "bad type", http.StatusBadRequest)
			return
		}
		if st := s.status[r.URL.Path]; st != 0 {
			http.Error(w, "fault", st)
			return
		}
		b, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(ts.Close)
	s.url = ts.URL + "/rapinegocios/tickercsv"
	return s
}

// serve makes path answer testdata/poll/name of package negocios.
func (s *standIn) serve(t *testing.T, path, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "negocios", "testdata", "poll", name))
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.files[b3Path+path] = b
	s.mu.Unlock()
}

func (s *standIn) fail(path string, status int) {
	s.mu.Lock()
	s.status[b3Path+path] = status
	s.mu.Unlock()
}

// pollOracle aggregates testdata/poll files at once, as LiveBars.
func pollOracle(t *testing.T, names ...string) map[string]map[int64]engine.LiveBar {
	t.Helper()
	agg := negocios.NewAggregator(sd, negocios.Config{Accept: engine.ValidTicker})
	for _, n := range names {
		f, err := negocios.Open(filepath.Join("..", "negocios", "testdata", "poll", n), negocios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rows []negocios.Trade
		for f.Next() {
			rows = append(rows, *f.Trade())
		}
		f.Close()
		agg.Apply(rows)
	}
	m := map[string]map[int64]engine.LiveBar{}
	for _, tk := range agg.Tickers() {
		for _, b := range agg.Bars(nil, tk) {
			if m[tk] == nil {
				m[tk] = map[int64]engine.LiveBar{}
			}
			m[tk][b.Time] = LiveBar(&b)
		}
	}
	return m
}

func next(t *testing.T, f Feed) Step {
	t.Helper()
	s, err := f.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestB3PerTicker: the feed polls each ticker's file at the interval,
// numbers its batches from 1, reports what changed (a cancellation as a
// removed minute), completes the session with the first poll from its
// end, then ends (a fixed session). The bars are the files' aggregation.
func TestB3PerTicker(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, "PLAE3/2026-11-19", "PLAE3_1045.zip")
	s.serve(t, "LITA11/2026-11-19", "LITA11.zip")
	c := &fakeClock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	f, err := NewB3(B3Config{Session: sd, Tickers: []string{"PLAE3", "LITA11"}, URLs: negocios.URLs{Base: s.url}, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	if start, virtual := f.Clock(); virtual || !start.Equal(c.now) || f.Session() != sd {
		t.Fatalf("clock %v %v, session %s", start, virtual, f.Session())
	}
	var steps []Step
	s1 := next(t, f)
	if s1.Batch == nil || s1.Batch.Seq != 1 || len(s1.Batch.Bars) != 5 || s1.Batch.Complete || s1.Session != sd {
		t.Fatalf("step 1 %+v", s1)
	}
	steps = append(steps, s1)
	s.serve(t, "PLAE3/2026-11-19", "PLAE3_1130.zip")
	t0 := c.now
	s2 := next(t, f)
	if s2.Batch == nil || s2.Batch.Seq != 2 || len(s2.Batch.Bars) != 3 || !s2.Batch.Bars[0].Removed {
		t.Fatalf("step 2 %+v", s2.Batch)
	}
	if d := s2.At.Sub(t0); d < time.Minute || d > time.Minute+5*time.Second {
		t.Errorf("step 2 %v after step 1, want the interval (60 s) and the pace", d)
	}
	steps = append(steps, s2)
	if s3 := next(t, f); s3.Batch != nil {
		t.Errorf("an unchanged poll gave a batch %+v", s3.Batch)
	}
	c.now = SessionEnd(sd)
	s4 := next(t, f)
	if s4.Batch == nil || s4.Batch.Seq != 3 || !s4.Batch.Complete || len(s4.Batch.Bars) != 0 {
		t.Fatalf("step at the end of the day %+v", s4.Batch)
	}
	steps = append(steps, s4)
	if _, err := f.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after a fixed session's end: %v, want io.EOF", err)
	}
	if got, want := fold(steps), pollOracle(t, "PLAE3_1130.zip", "LITA11.zip"); !reflect.DeepEqual(got, want) {
		t.Errorf("bars\n%v\nwant\n%v", got, want)
	}
}

// TestB3Resume: a feed started again with the state folder of the one
// before numbers its batches after the Seq resumed and reports only what
// is new.
func TestB3Resume(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, "PLAE3/2026-11-19", "PLAE3_1045.zip")
	c := &fakeClock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	cfg := B3Config{Session: sd, Tickers: []string{"PLAE3"}, URLs: negocios.URLs{Base: s.url}, StateDir: t.TempDir(), Now: c.Now, Sleep: c.Sleep}
	f, _ := NewB3(cfg)
	s1 := next(t, f)
	next(t, f) // the next poll acknowledges the first (saves its state)
	// Killed; started again after the file grew, the log holding batch 1.
	s.serve(t, "PLAE3/2026-11-19", "PLAE3_1130.zip")
	g, _ := NewB3(cfg)
	g.Resume(1, time.Time{})
	s2 := next(t, g)
	if s2.Batch == nil || s2.Batch.Seq != 2 || len(s2.Batch.Bars) != 3 {
		t.Fatalf("after the restart: %+v", s2.Batch)
	}
	if got, want := fold([]Step{s1, s2}), pollOracle(t, "PLAE3_1130.zip"); !reflect.DeepEqual(got, want) {
		t.Errorf("bars\n%v\nwant\n%v", got, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.StateDir, "b3-2026-11-19.json")); err != nil {
		t.Error(err)
	}
}

// TestB3WholeDay: in whole-day mode the feed polls the day's file until B3
// publishes it (a 404 is no error and no batch), then applies it whole in
// one Complete batch; its state is saved when the next call acknowledges
// that batch.
func TestB3WholeDay(t *testing.T) {
	s := newStandIn(t)
	c := &fakeClock{now: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}
	state := t.TempDir()
	f, _ := NewB3(B3Config{Session: sd, URLs: negocios.URLs{Base: s.url}, StateDir: state, Now: c.Now, Sleep: c.Sleep})
	if st := next(t, f); st.Batch != nil || len(f.LastErrors()) != 0 {
		t.Fatalf("day's file not out yet: %+v, %v", st.Batch, f.LastErrors())
	}
	s.serve(t, "2026-11-19", "20261119_NEGOCIOSAVISTA.zip")
	st := next(t, f)
	if st.Batch == nil || st.Batch.Seq != 1 || !st.Batch.Complete {
		t.Fatalf("day's file: %+v", st.Batch)
	}
	if got, want := fold([]Step{st}), pollOracle(t, "20261119_NEGOCIOSAVISTA.zip"); !reflect.DeepEqual(got, want) {
		t.Errorf("bars\n%v\nwant\n%v", got, want)
	}
	if _, err := os.Stat(filepath.Join(state, "b3-2026-11-19.json")); err == nil {
		t.Error("the state saved before the server took the last batch")
	}
	if _, err := f.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after the day: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "b3-2026-11-19.json")); err != nil {
		t.Errorf("the state is not saved once the last batch is taken: %v", err)
	}
	// Following the calendar, the session is the last weekday before
	// today (its file is out the next morning).
	g, _ := NewB3(B3Config{URLs: negocios.URLs{Base: s.url}, Now: c.Now, Sleep: c.Sleep})
	if g.Session() != sd {
		t.Errorf("whole-day session on %v: %s, want %s", c.now, g.Session(), sd)
	}
}

// TestB3BadInput: a file with a malformed row, B3's derivatives file where
// the equities one was asked, a server error: counted, never an error of
// Next, and the good rows applied.
func TestB3BadInput(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, "PLAE3/2026-11-19", "malformed.txt")
	s.serve(t, "LITA11/2026-11-19", "derivatives.zip")
	s.fail("VALE3/2026-11-19", http.StatusInternalServerError)
	c := &fakeClock{now: time.Date(2026, 11, 19, 14, 0, 0, 0, time.UTC)}
	f, _ := NewB3(B3Config{Session: sd, Tickers: []string{"PLAE3", "LITA11", "VALE3", "ABEV3"}, URLs: negocios.URLs{Base: s.url}, Now: c.Now, Sleep: c.Sleep})
	st := next(t, f)
	if st.Batch == nil || len(st.Batch.Bars) != 1 || st.Batch.Bars[0].Trades != 2 {
		t.Fatalf("batch %+v", st.Batch)
	}
	e := f.Errors()
	if e[ReasonMalformed] != 1 || e[ReasonFetch] != 2 || len(f.LastErrors()) != 2 {
		t.Errorf("errors %v, last %v", e, f.LastErrors())
	}
	if _, err := NewB3(B3Config{Tickers: []string{"petr4!"}}); err == nil {
		t.Error("a ticker that is not one: no error")
	}
}

// TestB3Calendar: following the calendar, the feed waits after a complete
// session without asking B3 anything, and announces the next session (a
// step without a batch) at its start, 09:30 local of the next weekday.
func TestB3Calendar(t *testing.T) {
	s := newStandIn(t)
	s.serve(t, "PLAE3/2026-11-20", "PLAE3_1045.zip") // another day's rows: counted, left out
	c := &fakeClock{now: time.Date(2026, 11, 19, 21, 40, 0, 0, time.UTC)}
	f, _ := NewB3(B3Config{Tickers: []string{"PLAE3"}, URLs: negocios.URLs{Base: s.url}, Now: c.Now, Sleep: c.Sleep})
	if f.Session() != sd {
		t.Fatalf("session %s", f.Session())
	}
	if st := next(t, f); st.Batch == nil || !st.Batch.Complete {
		t.Fatalf("a poll after the end: %+v", st.Batch)
	}
	n := s.requests
	if st := next(t, f); st.Batch != nil || st.Session != sd || s.requests != n {
		t.Fatalf("waiting for the next session: %+v, %d requests", st, s.requests-n)
	}
	c.now = time.Date(2026, 11, 20, 12, 30, 0, 0, time.UTC)
	st := next(t, f)
	if st.Session != sd+1 || st.Batch != nil {
		t.Fatalf("the next session: %+v", st)
	}
	f.Resume(7, time.Time{})
	st = next(t, f)
	if st.Batch != nil || f.Errors()[ReasonWrongDay] != 4 {
		t.Errorf("a file of rows of another day: %+v, errors %v", st.Batch, f.Errors())
	}
}
