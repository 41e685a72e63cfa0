package live

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// smallDemo is a demo market small enough for quick tests.
var smallDemo = demo.Size{Companies: 30, SponsoredBDRs: 2, UnsponsoredBDRs: 2, FIIs: 10, ETFs: 4, IntradayTickers: 4, IntradaySessions: 2,
	ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2026}

var recordingOnce struct {
	sync.Once
	file string
	day  engine.Date
	err  error
}

// TestMain removes the recording the tests share.
func TestMain(m *testing.M) {
	code := m.Run()
	if recordingOnce.file != "" {
		os.RemoveAll(filepath.Dir(recordingOnce.file))
	}
	os.Exit(code)
}

// recording returns a folder holding the small demo's last session as
// B3's trade file (generated once per test binary, copied per test).
func recording(t *testing.T) (string, engine.Date) {
	t.Helper()
	r := &recordingOnce
	r.Do(func() {
		dir, err := os.MkdirTemp("", "live-recording-")
		if err != nil {
			r.err = err
			return
		}
		_, sess := demo.GenerateSession(3, smallDemo, nil)
		r.day = sess.Day
		r.file, _, r.err = negocios.WriteDay(dir, sess.Day, sess.Each)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(r.file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(r.file)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, r.day
}

// drain takes every step of f until io.EOF.
func drain(t *testing.T, f Feed) []Step {
	t.Helper()
	var steps []Step
	for {
		s, err := f.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return steps
		}
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, s)
		if len(steps) > 1e6 {
			t.Fatal("no end")
		}
	}
}

// fold applies the batches of steps "last writer wins per ticker and
// minute" and returns the bars held, by ticker.
func fold(steps []Step) map[string]map[int64]engine.LiveBar {
	m := map[string]map[int64]engine.LiveBar{}
	for _, s := range steps {
		if s.Batch == nil {
			continue
		}
		for _, b := range s.Batch.Bars {
			if m[b.Ticker] == nil {
				m[b.Ticker] = map[int64]engine.LiveBar{}
			}
			if b.Removed {
				delete(m[b.Ticker], b.Time)
			} else {
				m[b.Ticker][b.Time] = b
			}
		}
	}
	for t, x := range m {
		if len(x) == 0 {
			delete(m, t)
		}
	}
	return m
}

// wholeDay aggregates every file of dir in one Apply: the oracle.
func wholeDay(t *testing.T, dir string, day engine.Date) map[string]map[int64]engine.LiveBar {
	t.Helper()
	agg := negocios.NewAggregator(day, negocios.Config{Accept: engine.ValidTicker})
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		f, err := negocios.Open(filepath.Join(dir, e.Name()), negocios.Options{Lenient: true})
		if err != nil {
			continue
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

// TestReplayDeterministic: two replays of one recording give the same
// steps, batch for batch: Seq from 1 without a gap, the clock by Step
// from the first minute, no bar before its minute ended, the last batch
// Complete at the end of the day, then io.EOF.
func TestReplayDeterministic(t *testing.T) {
	dir, day := recording(t)
	run := func() []Step {
		r, err := NewReplay(ReplayConfig{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if r.Session() != day {
			t.Fatalf("session %s, want %s", r.Session(), day)
		}
		return drain(t, r)
	}
	a, b := run(), run()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two replays of one recording differ")
	}
	var seq uint64
	for i, s := range a {
		if i > 0 && !s.At.After(a[i-1].At) {
			t.Fatalf("step %d at %v, not after %v", i, s.At, a[i-1].At)
		}
		if s.Batch == nil {
			continue
		}
		if seq++; s.Batch.Seq != seq || s.Batch.Session != day {
			t.Fatalf("step %d: batch %d of %s, want %d of %s", i, s.Batch.Seq, s.Batch.Session, seq, day)
		}
		for _, bar := range s.Batch.Bars {
			if bar.Time+60 > s.At.Unix() {
				t.Fatalf("step %d at %v: bar of %s minute %v not ended", i, s.At, bar.Ticker, time.Unix(bar.Time, 0).UTC())
			}
		}
		if s.Batch.Complete != (i == len(a)-1) {
			t.Fatalf("step %d of %d: complete %v", i, len(a), s.Batch.Complete)
		}
	}
	// The end of the day: 18:30 local, or the minute after the last row
	// when later (a late cancellation).
	last, r := a[len(a)-1], rowsEnd(t, dir)
	end := SessionEnd(day)
	if r.After(end) {
		end = r
	}
	if last.Batch == nil || !last.Batch.Complete || !last.At.Equal(end) || SessionEnd(day) != time.Date(2026, 11, 19, 21, 30, 0, 0, time.UTC) {
		t.Fatalf("last step %+v, want at %v", last, end)
	}
}

// rowsEnd returns the end of the minute of the last row of dir's files.
func rowsEnd(t *testing.T, dir string) time.Time {
	var last int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		f, err := negocios.Open(filepath.Join(dir, e.Name()), negocios.Options{Lenient: true})
		if err != nil {
			continue
		}
		for f.Next() {
			last = max(last, f.Trade().Minute()+60)
		}
		f.Close()
	}
	return time.Unix(last, 0).UTC()
}

// TestReplayGivesTheSession: the batches of a replay, applied last writer
// wins, hold the bars of the whole day's file aggregated at once; the
// replay is independent of its step.
func TestReplayGivesTheSession(t *testing.T) {
	dir, day := recording(t)
	want := wholeDay(t, dir, day)
	for _, step := range []time.Duration{5 * time.Second, 7 * time.Second, time.Minute, 20 * time.Minute} {
		r, err := NewReplay(ReplayConfig{Dir: dir, Step: step})
		if err != nil {
			t.Fatal(err)
		}
		got := fold(drain(t, r))
		if len(want) == 0 || !reflect.DeepEqual(got, want) {
			t.Fatalf("step %v: %d tickers replayed, %d in the day's file, or bars differ", step, len(got), len(want))
		}
		if e := r.Errors(); e[ReasonDuplicate]+e[ReasonMalformed]+e[ReasonWrongDay]+e[ReasonBadPrice] != 0 {
			t.Errorf("errors on the demo's file: %v", e)
		}
	}
}

// fakeClock is a wall clock that Sleep advances.
type fakeClock struct {
	now   time.Time
	slept time.Duration
	naps  int
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.now, c.slept, c.naps = c.now.Add(d), c.slept+d, c.naps+1
	return nil
}

// TestReplayPace: at speed K the replay takes (virtual span)/K of wall
// time, each step due at its time; the batches resumed go without
// waiting, and the clock is anchored where they end.
func TestReplayPace(t *testing.T) {
	dir, _ := recording(t)
	c := &fakeClock{now: time.Unix(1e9, 0)}
	r, err := NewReplay(ReplayConfig{Dir: dir, Speed: 60, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	start, _ := r.Clock()
	steps := drain(t, r)
	// The last step jumps to the end of the day without waiting.
	span := steps[len(steps)-2].At.Sub(start)
	if d := c.slept - span/60; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("slept %v for %v of virtual time at speed 60, want %v", c.slept, span, span/60)
	}
	// Resumed after batch k (applied at its time): the replay goes on
	// from there without making batches 1 to k again, the same steps as
	// the replay played whole, the pace from k's time.
	const k = 40
	var atK time.Time
	for _, s := range steps {
		if s.Batch != nil && s.Batch.Seq == k {
			atK = s.At
		}
	}
	c2 := &fakeClock{now: time.Unix(1e9, 0)}
	r2, _ := NewReplay(ReplayConfig{Dir: dir, Speed: 60, Now: c2.Now, Sleep: c2.Sleep})
	r2.Resume(k, atK)
	rest := drain(t, r2)
	for _, s := range rest {
		if s.Batch != nil {
			if s.Batch.Seq != k+1 {
				t.Fatalf("the first batch after resuming at %d is %d", k, s.Batch.Seq)
			}
			break
		}
	}
	span = rest[len(rest)-2].At.Sub(atK)
	if d := c2.slept - span/60; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("after resuming: slept %v for %v of virtual time", c2.slept, span)
	}
	if !reflect.DeepEqual(rest, steps[len(steps)-len(rest):]) {
		t.Error("a resumed replay gives other steps")
	}
	// Resumed without the batch's time: walked again, without waiting.
	c3 := &fakeClock{now: time.Unix(1e9, 0)}
	r3, _ := NewReplay(ReplayConfig{Dir: dir, Speed: 60, Now: c3.Now, Sleep: c3.Sleep})
	r3.Resume(k, time.Time{})
	for {
		s, err := r3.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s.Batch != nil && s.Batch.Seq == k {
			break
		}
	}
	if c3.naps != 0 {
		t.Fatalf("%d waits before the resumed batch", c3.naps)
	}
	// Resumed after the last batch: nothing more.
	last := steps[len(steps)-1]
	r4, _ := NewReplay(ReplayConfig{Dir: dir, Speed: 60, Now: c3.Now, Sleep: c3.Sleep})
	r4.Resume(last.Batch.Seq, last.At)
	if _, err := r4.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("resumed after the last batch: %v, want io.EOF", err)
	}
}

// TestReplayCancelledWait: a wait cut by the context gives the step again,
// whole, on the next call: nothing lost, nothing twice.
func TestReplayCancelledWait(t *testing.T) {
	dir, _ := recording(t)
	want := func() []Step {
		r, _ := NewReplay(ReplayConfig{Dir: dir})
		return drain(t, r)
	}()
	c := &fakeClock{now: time.Unix(1e9, 0)}
	cancelEvery := 0
	r, _ := NewReplay(ReplayConfig{Dir: dir, Speed: 1, Now: c.Now, Sleep: func(ctx context.Context, d time.Duration) error {
		if cancelEvery++; cancelEvery%3 == 0 {
			return context.Canceled
		}
		return c.Sleep(ctx, d)
	}})
	var got []Step
	for {
		s, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, context.Canceled) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%d steps with cancelled waits, %d without, or they differ", len(got), len(want))
	}
}

// badRows is a trade file of session sd with one row of each kind of bad
// input, and good rows of PLAE3 and LITA11.
const badRows = "DataReferencia;CodigoInstrumento;AcaoAtualizacao;PrecoNegocio;QuantidadeNegociada;HoraFechamento;CodigoIdentificadorNegocio;TipoSessaoPregao;DataNegocio;CodigoParticipanteComprador;CodigoParticipanteVendedor\n" +
	"2026-11-19;PLAE3;0;23,480;100;100000123;10;1;2026-11-19;3;8\n" +
	"2026-11-19;PLAE3;0;x;1;100000200;20;1;2026-11-19;;\n" + // malformed price
	"2026-11-19;PLAE3;0;23,500;100;100100300;30;1;2026-11-19;3;8\n" +
	"2026-11-19;PLAE3;0;23,490;100;100050000;25;1;2026-11-19;3;8\n" + // out of order (older than trade 30)
	"2026-11-19;PLAE3;0;23,500;100;100100300;30;1;2026-11-19;3;8\n" + // duplicate
	"2026-11-19;PLAE3;0;-1,000;100;100200000;40;1;2026-11-19;3;8\n" + // negative price
	"2026-11-19;PLAE3;0;0,000;100;100200000;41;1;2026-11-19;3;8\n" + // zero price
	"2026-11-19;PLAE3;0;23,000;0;100200000;42;1;2026-11-19;3;8\n" + // zero quantity
	"2026-11-19;PLAE3;2;23,000;100;100300000;99;1;2026-11-19;3;8\n" + // cancels an unknown trade
	"2026-11-19;PLAE3;7;23,000;100;100300000;43;1;2026-11-19;3;8\n" + // unknown action
	"2026-11-19;PLAE3;0;23,000;100;100300000;44;3;2026-11-19;3;8\n" + // unknown session
	"2026-11-19;PETR4XYZ;0;23,000;100;100300000;1;1;2026-11-19;3;8\n" + // not a ticker
	"2026-11-19;PLAE3;0;23,000;100;100300000;45;1;2026-11-18;3;8\n" + // another day
	"2026-11-19;LITA11;0;101,010;5;100112004;10;1;2026-11-19;127;72\n" +
	"too;few;fields\n"

// TestReplayBadInput: every kind of bad row, a file of another day and a
// file that is not a trade file are counted by reason and left out; the
// bars are those of the good rows.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte(badRows), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# not a trade file\n"), 0o644)
	other := strings.ReplaceAll(strings.SplitN(badRows, "\n", 3)[0]+"\n2026-11-18;PLAE3;0;23,480;100;100000123;10;1;2026-11-18;3;8\n", "x", "x")
	os.WriteFile(filepath.Join(dir, "other-day.txt"), []byte(other), 0o644)
	r, err := NewReplay(ReplayConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Session() != sd {
		t.Fatalf("session %s, want %s (most rows)", r.Session(), sd)
	}
	got := fold(drain(t, r))
	want := map[string]map[int64]engine.LiveBar{
		"PLAE3": {
			minute(13, 0): {Ticker: "PLAE3", Time: minute(13, 0), Open: 23.48, High: 23.49, Low: 23.48, Close: 23.49, Volume: 2348 + 2349, Quantity: 200, Trades: 2},
			minute(13, 1): {Ticker: "PLAE3", Time: minute(13, 1), Open: 23.5, High: 23.5, Low: 23.5, Close: 23.5, Volume: 2350, Quantity: 100, Trades: 1},
		},
		"LITA11": {minute(13, 1): {Ticker: "LITA11", Time: minute(13, 1), Open: 101.01, High: 101.01, Low: 101.01, Close: 101.01, Volume: 505.05, Quantity: 5, Trades: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bars\n%v\nwant\n%v", got, want)
	}
	e := r.Errors()
	for reason, n := range map[string]int64{ReasonMalformed: 2, ReasonOutOfOrder: 1, ReasonDuplicate: 1, ReasonBadPrice: 2, ReasonBadQuantity: 1,
		ReasonUnknownCancel: 1, ReasonBadCode: 2, ReasonBadTicker: 1, ReasonWrongDay: 2, ReasonFetch: 1} {
		if e[reason] != n {
			t.Errorf("%s: %d, want %d (all: %v)", reason, e[reason], n, e)
		}
	}
	// A session given: the other day's rows are the bad ones.
	r, err = NewReplay(ReplayConfig{Dir: dir, Session: sd - 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := fold(drain(t, r)); len(got) != 1 || len(got["PLAE3"]) != 2 || r.Errors()[ReasonWrongDay] != 12 {
		t.Errorf("session %s: %v, errors %v", sd-1, got, r.Errors())
	}
	if _, err := NewReplay(ReplayConfig{Dir: dir, Session: sd + 1}); err == nil {
		t.Error("a session the recording has no row of: no error")
	}
	if _, err := NewReplay(ReplayConfig{Dir: filepath.Join(dir, "absent")}); err == nil {
		t.Error("no folder: no error")
	}
}

// TestReplayFrom: with From, the steps before that time of the day go
// without waiting, those after at the speed; the steps are the same.
func TestReplayFrom(t *testing.T) {
	dir, _ := recording(t)
	c := &fakeClock{now: time.Unix(1e9, 0)}
	all, err := NewReplay(ReplayConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	steps := drain(t, all)
	start, _ := all.Clock()
	// The middle of the recording, as a time of its day in São Paulo.
	mid := steps[len(steps)/2].At
	day := start.UTC().Add(-3 * time.Hour).Truncate(24 * time.Hour)
	from := mid.UTC().Add(-3 * time.Hour).Sub(day)
	r, err := NewReplay(ReplayConfig{Dir: dir, Speed: 60, From: from, Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	got := drain(t, r)
	if !reflect.DeepEqual(got, steps) {
		t.Fatal("a replay with From gives other steps")
	}
	span := got[len(got)-2].At.Sub(mid)
	if d := c.slept - span/60; d < -2*time.Second/60*5 || d > 2*time.Second/60*5 {
		t.Errorf("slept %v, want about %v (the virtual time after From at speed 60)", c.slept, span/60)
	}
}
