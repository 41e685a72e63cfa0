package session

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// runSession runs s until the returned stop is called, once its first
// session is open (State().Running).
func runSession(t *testing.T, s *Session) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	waitFor(t, "the session to start", func() bool { st := s.State(); return st != nil && st.Running })
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	}
}

// waitFor waits until cond holds, failing the test after a minute (the
// deadline of a loaded machine, not a duration the test relies on).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// TestPush: with the push feed the session is the push endpoints' sink:
// a batch must carry the next sequence number (else ErrLiveSeq naming
// it: a retry is idempotent), a batch with a bad bar or trade is refused
// whole (engine.ErrLiveBatch) without taking a number, pushed trades are
// aggregated; a restart restores the bars, the numbering and the
// aggregation (a later cancellation finds its trade); at the session's
// end the session completes it, and the next weekday's starts at its
// start.
func TestPush(t *testing.T) {
	f := fixtureOf(t)
	tk, dir, day := f.ticker, t.TempDir(), f.day
	at := func(h, m int) int64 { return int64(day)*86400 + int64(h*3600+m*60) }
	now := time.Unix(at(14, 0), 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	start := func() (*Session, *engine.Store, engine.LiveSink, func()) {
		store := storeOf(f.base)
		cfg := DefaultConfig()
		cfg.Feed, cfg.Dir = "push", dir
		var sink engine.LiveSink
		var sinkMu sync.Mutex
		s, err := New(cfg, store, Options{Now: clock, SetSink: func(x engine.LiveSink) { sinkMu.Lock(); sink = x; sinkMu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		stop := runSession(t, s)
		var r engine.LiveSink
		waitFor(t, "the push sink", func() bool { sinkMu.Lock(); defer sinkMu.Unlock(); r = sink; return r != nil })
		return s, store, r, stop
	}
	s, store, r, stop := start()
	if r.NextSeq() != 1 || s.State().Session != day {
		t.Fatalf("next %d, session %s", r.NextSeq(), s.State().Session)
	}
	bar := engine.LiveBar{Ticker: tk, Time: at(13, 0), Open: 10, High: 11, Low: 9, Close: 10.5, Volume: 1000, Quantity: 100, Trades: 3}
	if err := r.PushBars(1, []engine.LiveBar{bar}); err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{1, 3} {
		if err := r.PushBars(seq, []engine.LiveBar{bar}); !errors.Is(err, engine.ErrLiveSeq) || !strings.Contains(err.Error(), "the next is 2") {
			t.Errorf("push %d after 1: %v", seq, err)
		}
	}
	bad := bar
	bad.High = 1
	if err := r.PushBars(2, []engine.LiveBar{bar, bad}); !errors.Is(err, engine.ErrLiveBatch) || r.NextSeq() != 2 {
		t.Errorf("a bad bar: %v, next %d", err, r.NextSeq())
	}
	ms := func(h, m, s int) int64 { return at(h, m)*1000 + int64(s)*1000 }
	trades := []engine.LiveTrade{
		{Ticker: tk, Time: ms(13, 5, 1), Price: 20, Quantity: 10, ID: "t-1"},
		{Ticker: tk, Time: ms(13, 5, 2), Price: 21, Quantity: 10, ID: "77"},
	}
	if err := r.PushTrades(2, trades); err != nil {
		t.Fatal(err)
	}
	if err := r.PushTrades(3, []engine.LiveTrade{{Ticker: tk, Time: ms(13, 6, 0), Price: -1, Quantity: 1, ID: "x"}}); !errors.Is(err, engine.ErrLiveBatch) || r.NextSeq() != 3 {
		t.Errorf("a bad trade: %v, next %d", err, r.NextSeq())
	}
	minutes := func(store *engine.Store) []engine.Bar {
		v := store.View()
		a, _ := v.Base.Asset(tk)
		return v.AppendMinutes(nil, a, at(12, 59), at(13, 59), false)
	}
	got := minutes(store)
	if len(got) != 2 || got[1].Volume != 410 || got[1].Close != 21 {
		t.Fatalf("bars %+v", got)
	}
	stop()

	// Restarted: the two batches are back, the numbering goes on and the
	// aggregation knows trade t-1.
	s, store, r, stop = start()
	defer func() { stop() }()
	if again := minutes(store); r.NextSeq() != 3 || !reflect.DeepEqual(again, got) {
		t.Fatalf("after the restart: next %d, bars %+v", r.NextSeq(), again)
	}
	if err := r.PushTrades(3, []engine.LiveTrade{{Ticker: tk, Time: ms(13, 5, 1), Price: 20, Quantity: 10, ID: "t-1", Cancel: true}}); err != nil {
		t.Fatal(err)
	}
	if got := minutes(store); len(got) != 2 || got[1].Volume != 210 || got[1].Open != 21 {
		t.Errorf("after the cancellation: %+v", got)
	}
	info, _ := readLog(filepath.Join(dir, live.LogName(day)))
	if info.Records != 3 || info.Last != 3 {
		t.Errorf("log %+v", info)
	}
	// The end of the session: the session completes it (seq 4).
	mu.Lock()
	now = live.SessionEnd(day)
	mu.Unlock()
	if r.NextSeq() != 5 || !s.State().Complete || !store.View().Live.Complete {
		t.Errorf("after the end: next %d, state %+v", r.NextSeq(), *s.State())
	}
	// The next weekday's session starts at its start, empty.
	mu.Lock()
	now = live.SessionStart(live.NextWeekday(day)).Add(time.Second)
	mu.Unlock()
	if r.NextSeq() != 1 || s.State().Session != live.NextWeekday(day) || store.View().Live.Session != live.NextWeekday(day) {
		t.Errorf("the next session: next %d, state %+v", r.NextSeq(), *s.State())
	}
	if _, err := os.Stat(filepath.Join(dir, live.LogName(live.NextWeekday(day)))); err != nil {
		t.Error(err)
	}
}

// readLog reads the session log at path.
func readLog(path string) (live.LogInfo, error) {
	fh, err := os.Open(path)
	if err != nil {
		return live.LogInfo{}, err
	}
	defer fh.Close()
	return live.ReadLog(fh, nil)
}

// TestDamagedLogRestored: a session log damaged in the middle costs the
// damaged records only: the restart restores every valid record after
// them, sets the damaged bytes aside beside the log, and reports the
// missing batches as a gap of kind log (Status, the gauge, the error
// counter); the push numbering goes on after the last record.
func TestDamagedLogRestored(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	path := filepath.Join(dir, live.LogName(f.day))
	lg, _, err := live.OpenLog(path, f.day, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := int64(f.day)*86400 + 13*3600
	for i := 1; i <= 36; i++ {
		p := engine.Num(10 + i%5)
		bar := engine.LiveBar{Ticker: f.ticker, Time: t0 + int64(i)*60, Open: p, High: p, Low: p, Close: p, Volume: p * 100, Quantity: 100, Trades: 1}
		if err := lg.Append(&live.Record{Seq: uint64(i), At: (t0 + int64(i)*60 + 61) * 1000, Bars: []engine.LiveBar{bar}}); err != nil {
			t.Fatal(err)
		}
	}
	lg.Close()
	b, _ := os.ReadFile(path)
	// A flipped byte in the 18th record.
	lines := 0
	for i := range b {
		if b[i] == '\n' {
			if lines++; lines == 18 {
				b[i+20] ^= 1
				break
			}
		}
	}
	os.WriteFile(path, b, 0o644)
	store := storeOf(f.base)
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	now := func() time.Time { return time.Unix(t0+3600, 0) }
	s, err := New(cfg, store, Options{Registerer: reg, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	st, ok := s.Status()
	if v := store.View(); !ok || st.Seq != 36 || v.Live == nil || v.Live.Seq != 36 {
		t.Fatalf("restored to batch %d (live %+v), want 36", st.Seq, v.Live)
	}
	want := &engine.LiveGap{Kind: "log", Session: f.day, First: 18, Last: 18}
	if st.SessionGaps != 1 || st.Gaps != 1 || st.LastGap == nil || *st.LastGap != *want {
		t.Errorf("gaps %d/%d, last %+v; want %+v", st.Gaps, st.SessionGaps, st.LastGap, want)
	}
	if g := gaugeValue(t, reg, "pregao_live_session_gaps"); g != 1 {
		t.Errorf("pregao_live_session_gaps %v", g)
	}
	if n := counterValue(t, reg, "pregao_live_feed_errors_total", "reason", reasonLogDamaged); n != 1 {
		t.Errorf("damaged records counted %v", n)
	}
	aside, _ := filepath.Glob(path + ".damaged-*")
	if len(aside) != 1 {
		t.Fatalf("set aside: %v", aside)
	}
	if next := s.local.NextSeq(); next != 37 {
		t.Errorf("next push %d, want 37", next)
	}
	if info, err := readLog(path); err != nil || info.Records != 35 || len(info.Damaged) != 0 {
		t.Errorf("the log after the restore: %+v, %v", info, err)
	}
}

// pushSession starts a push session of day over the base in dir (the
// wall clock of its calendar at now) and returns it, its Store and its
// sink.
func pushSession(t *testing.T, f *fixture, dir string, now func() time.Time, logs ...*lockedBuilder) (*Session, *engine.Store, *local, func()) {
	t.Helper()
	store := storeOf(f.base)
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	opts := Options{Now: now}
	if len(logs) > 0 {
		opts.Log = testLog(logs[0])
	}
	s, err := New(cfg, store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := s.Status(); !ok || !st.Restoring {
		t.Errorf("before its first session is read back: status %+v, %t; want restoring", st, ok)
	}
	stop := runSession(t, s)
	if st, ok := s.Status(); !ok || st.Restoring {
		t.Errorf("running: status %+v, %t", st, ok)
	}
	return s, store, s.local, stop
}

// minuteBar is ticker's bar of minute m (from 10:00 in São Paulo) of day.
func minuteBar(ticker string, day engine.Date, m int) engine.LiveBar {
	p := engine.Num(10 + m%7)
	return engine.LiveBar{Ticker: ticker, Time: int64(day)*86400 + 13*3600 + int64(m)*60, Open: p, High: p, Low: p, Close: p, Volume: p * 100, Quantity: 100, Trades: 1}
}

// TestPushRules: one rule for every push. A batch of a ticker the
// snapshot does not know is taken and held aside (as from the other
// feeds), never served; each batch's digest is kept (also across a
// restart) so that a second pusher's batch under a number applied is told
// apart from a retry; once the session is complete, a push of bars or of
// trades is refused as closed (engine.ErrLiveClosed).
func TestPushRules(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	t0 := int64(f.day)*86400 + 13*3600
	var mu sync.Mutex
	now := time.Unix(t0+3600, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, store, r, stop := pushSession(t, f, dir, clock)
	bars := []engine.LiveBar{minuteBar(f.ticker, f.day, 1), minuteBar("ZZZZ3", f.day, 1)}
	if err := r.PushBars(1, bars); err != nil {
		t.Fatal(err)
	}
	v := store.View()
	if _, known := v.Base.Asset("ZZZZ3"); known || v.Live.Aside != 1 || v.Live.Bars != 2 {
		t.Errorf("an unknown ticker: known %t, aside %d of %d bars", known, v.Live.Aside, v.Live.Bars)
	}
	trades := []engine.LiveTrade{{Ticker: f.ticker, Time: (t0 + 150) * 1000, Price: 11, Quantity: 10, ID: "1"}}
	if err := r.PushTrades(2, trades); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{1: engine.LiveDigest(bars, nil), 2: engine.LiveDigest(nil, trades)}
	check := func(when string) {
		t.Helper()
		for seq, d := range want {
			if got, ok := r.Applied(seq); !ok || got != d {
				t.Errorf("%s: batch %d's digest %q (%t), want %q", when, seq, got, ok, d)
			}
		}
		if _, ok := r.Applied(3); ok {
			t.Errorf("%s: a digest for a batch not applied", when)
		}
	}
	check("applied")
	if err := r.Closed(); err != nil {
		t.Errorf("Closed while the session runs: %v", err)
	}
	stop()
	s, store, r, stop := pushSession(t, f, dir, clock)
	defer func() { stop() }()
	check("after a restart")
	// The end of the session: complete, then closed to pushes.
	mu.Lock()
	now = live.SessionEnd(f.day)
	mu.Unlock()
	if next := r.NextSeq(); next != 4 || !s.State().Complete {
		t.Fatalf("after the end: next %d, state %+v", next, *s.State())
	}
	if err := r.Closed(); !errors.Is(err, engine.ErrLiveClosed) || !strings.Contains(err.Error(), "is over (complete at batch 3)") {
		t.Errorf("Closed after the end: %v", err)
	}
	for _, err := range []error{r.PushBars(4, bars[:1]), r.PushTrades(4, trades)} {
		if !errors.Is(err, engine.ErrLiveClosed) || !strings.Contains(err.Error(), "is over (complete at batch 3)") {
			t.Errorf("a push into the complete session: %v", err)
		}
	}
	if v := store.View(); v.Live.Seq != 3 {
		t.Errorf("the closed session changed: seq %d", v.Live.Seq)
	}
}

// TestLogBroken: a session log that cannot be written (here: its file
// gone and a folder in its place, so that it cannot be opened either)
// refuses batches with engine.ErrLiveUnavailable (503: send again)
// without losing its numbering or what the Store holds, says so on its
// status (degraded), reopens the log with backoff, and takes batches
// again once the log can be written.
func TestLogBroken(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	t0 := int64(f.day)*86400 + 13*3600
	var logs lockedBuilder
	s, store, r, stop := pushSession(t, f, dir, func() time.Time { return time.Unix(t0+3600, 0) }, &logs)
	defer stop()
	for seq := uint64(1); seq <= 3; seq++ {
		if err := r.PushBars(seq, []engine.LiveBar{minuteBar(f.ticker, f.day, int(seq))}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, live.LogName(f.day))
	r.mu.Lock()
	r.slog.(*live.Log).Close() // the next append fails
	r.mu.Unlock()
	if err := os.Rename(path, path+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	err := r.PushBars(4, []engine.LiveBar{minuteBar(f.ticker, f.day, 4)})
	if !errors.Is(err, engine.ErrLiveUnavailable) {
		t.Fatalf("a push to a broken log: %v, want ErrLiveUnavailable", err)
	}
	st, _ := s.Status()
	if st.Degraded == "" || r.NextSeq() != 4 || st.Seq != 3 || store.View().Live.Seq != 3 {
		t.Fatalf("broken: status %+v, next %d", st, r.NextSeq())
	}
	if err := r.PushBars(4, []engine.LiveBar{minuteBar(f.ticker, f.day, 4)}); !errors.Is(err, engine.ErrLiveUnavailable) {
		t.Errorf("while broken: %v", err)
	}
	waitFor(t, "a reopen to fail", func() bool { return strings.Contains(logs.String(), "session log still cannot be opened; retrying") })
	// The disk is fixed: the log reopens, the session takes batches again.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".saved", path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to reopen", func() bool { st, _ := s.Status(); return st.Degraded == "" })
	if err := r.PushBars(4, []engine.LiveBar{minuteBar(f.ticker, f.day, 4)}); err != nil {
		t.Fatal(err)
	}
	if info, err := readLog(path); err != nil || info.Records != 4 || store.View().Live.Seq != 4 {
		t.Errorf("after the recovery: log %+v, %v", info, err)
	}
}

// TestPushTimes: a pushed minute or trade lies within the session's
// hours (09:30 to 18:30 in São Paulo) and at most a minute past the
// server's clock; one that does not makes the batch a refusal
// (engine.ErrLiveBatch, saying which line and why) that takes no number.
func TestPushTimes(t *testing.T) {
	f := fixtureOf(t)
	day := f.day
	at := func(h, m int) int64 { return int64(day)*86400 + int64(h*3600+m*60) } // UTC
	var mu sync.Mutex
	now := time.Unix(at(14, 0), 0) // 11:00 in São Paulo
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	_, store, r, stop := pushSession(t, f, t.TempDir(), clock)
	defer stop()
	bar := func(sec int64) engine.LiveBar {
		b := minuteBar(f.ticker, day, 0)
		b.Time = sec
		return b
	}
	for _, c := range []struct {
		name string
		bar  engine.LiveBar
		want string
	}{
		{"22:00 the evening before, in São Paulo (01:00 UTC of the day)", bar(at(1, 0)), "outside session"},
		{"09:00 in São Paulo, before the session's hours", bar(at(12, 0)), "outside session"},
		{"18:30 in São Paulo, its end", bar(at(21, 30)), "outside session"},
		{"the next day", bar(at(24+13, 0)), "outside session"},
		{"two minutes past the server's clock", bar(at(14, 2)), "ahead of the server's clock"},
	} {
		err := r.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, day, 1), c.bar})
		if !errors.Is(err, engine.ErrLiveBatch) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bar 2 ("+f.ticker+")") {
			t.Errorf("%s: %v, want a refusal of bar 2: %s", c.name, err, c.want)
		}
	}
	// A trade at 23:30 in São Paulo is of the session's local day, but
	// not of its hours.
	late := engine.LiveTrade{Ticker: f.ticker, Time: (at(24+2, 30)) * 1000, Price: 11, Quantity: 10, ID: "late"}
	if err := r.PushTrades(1, []engine.LiveTrade{late}); !errors.Is(err, engine.ErrLiveBatch) || !strings.Contains(err.Error(), "trade 1") || !strings.Contains(err.Error(), "outside session") {
		t.Errorf("a trade at 23:30 in São Paulo: %v", err)
	}
	ahead := engine.LiveTrade{Ticker: f.ticker, Time: (at(14, 1)+30)*1000 + 1, Price: 11, Quantity: 10, ID: "ahead"}
	if err := r.PushTrades(1, []engine.LiveTrade{ahead}); !errors.Is(err, engine.ErrLiveBatch) || !strings.Contains(err.Error(), "ahead") {
		t.Errorf("a trade 90 s past the server's clock: %v", err)
	}
	if next := r.NextSeq(); next != 1 {
		t.Fatalf("the refusals took numbers: next %d", next)
	}
	// A minute up to one past the clock (clocks apart), and the session's
	// first and last minutes, are taken.
	ok := []engine.LiveBar{bar(at(12, 30)), bar(at(14, 1)), bar(at(21, 29))}
	if err := r.PushBars(1, ok[:2]); err != nil {
		t.Fatal(err)
	}
	if v := store.View(); v.Live.Seq != 1 || v.Live.Bars != 2 {
		t.Errorf("after the batch: seq %d, %d bars", v.Live.Seq, v.Live.Bars)
	}
	mu.Lock()
	now = time.Unix(at(21, 29), 0)
	mu.Unlock()
	if err := r.PushBars(2, ok[2:]); err != nil {
		t.Errorf("the session's last minute: %v", err)
	}
}

// TestPushNotClosed: a push session is told closed (engine.ErrLiveClosed,
// a 409 its pusher takes as the session's end) only when it is over. A
// session whose log cannot be written for now, and one whose server is
// shutting down, refuse a batch as unavailable (a 503: send it again),
// and Closed says nil, so that the 409 of a conflicting body names the
// next seq instead of the session's end; after the shutdown the
// calendar starts no session.
func TestPushNotClosed(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	t0 := int64(f.day)*86400 + 13*3600
	var mu sync.Mutex
	now := time.Unix(t0+3600, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// The calendar's session (no Config.Day): the day's, from f.day's
	// wall clock.
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir = "push", dir
	s, err := New(cfg, storeOf(f.base), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	stop := runSession(t, s)
	r := s.local
	if st := s.State(); st.Session != f.day {
		t.Fatalf("session %s, want %s", st.Session, f.day)
	}
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	if err := r.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, f.day, 1)}); err != nil {
		t.Fatal(err)
	}
	notClosed := func(when string, err error) {
		t.Helper()
		if !errors.Is(err, engine.ErrLiveUnavailable) || errors.Is(err, engine.ErrLiveClosed) {
			t.Errorf("%s: a push: %v, want ErrLiveUnavailable", when, err)
		}
		if err := r.Closed(); err != nil {
			t.Errorf("%s: Closed: %v, want nil", when, err)
		}
		if next := r.NextSeq(); next != 2 {
			t.Errorf("%s: next %d, want 2", when, next)
		}
	}
	// The log cannot be written: its file gone, a folder in its place.
	path := filepath.Join(dir, live.LogName(f.day))
	r.mu.Lock()
	r.slog.(*live.Log).Close()
	r.mu.Unlock()
	if err := os.Rename(path, path+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := r.PushBars(2, []engine.LiveBar{minuteBar(f.ticker, f.day, 2)}); !errors.Is(err, engine.ErrLiveUnavailable) {
		t.Fatalf("a push to a broken log: %v", err)
	}
	notClosed("the log broken", r.PushBars(2, []engine.LiveBar{minuteBar(f.ticker, f.day, 2)}))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".saved", path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to reopen", func() bool { st, _ := s.Status(); return st.Degraded == "" })
	// The server shuts down: the session's Run ends, its log closed.
	stop()
	stopped = true
	notClosed("after the shutdown", r.PushBars(2, []engine.LiveBar{minuteBar(f.ticker, f.day, 2)}))
	// The calendar starts no session after the shutdown.
	mu.Lock()
	now = live.SessionStart(live.NextWeekday(f.day)).Add(time.Second)
	mu.Unlock()
	notClosed("the next day, after the shutdown", r.PushBars(2, []engine.LiveBar{minuteBar(f.ticker, f.day, 2)}))
	if _, err := os.Stat(filepath.Join(dir, live.LogName(live.NextWeekday(f.day)))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a session log opened after the shutdown: %v", err)
	}
}

// writeLog writes session day's log in dir holding batches 1 to n of
// ticker (minuteBar's).
func writeLog(t *testing.T, dir string, f *fixture, n int) {
	t.Helper()
	lg, _, err := live.OpenLog(filepath.Join(dir, live.LogName(f.day)), f.day, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	for i := 1; i <= n; i++ {
		b := minuteBar(f.ticker, f.day, i)
		if err := lg.Append(&live.Record{Seq: uint64(i), At: (b.Time + 61) * 1000, Bars: []engine.LiveBar{b}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLogOpenedLater: a session log that cannot be opened when the push
// session starts (here: the live folder is a file) leaves the session
// degraded, its pushes refused as unavailable (503: send again), and is
// opened again with backoff: once the folder is back, the session is
// read back from its log and takes pushes after its last batch.
func TestLogOpenedLater(t *testing.T) {
	f := fixtureOf(t)
	dir := filepath.Join(t.TempDir(), "live")
	t0 := int64(f.day)*86400 + 13*3600
	store := storeOf(f.base)
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	var sinkMu sync.Mutex
	var sink engine.LiveSink
	s, err := New(cfg, store, Options{Now: func() time.Time { return time.Unix(t0+3600, 0) },
		SetSink: func(x engine.LiveSink) { sinkMu.Lock(); sink = x; sinkMu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "live")
	if err := os.Rename(dir, ready); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	waitFor(t, "the session to report its log", func() bool { st, ok := s.Status(); return ok && st.Degraded != "" })
	var r engine.LiveSink
	waitFor(t, "the push sink", func() bool { sinkMu.Lock(); defer sinkMu.Unlock(); r = sink; return r != nil })
	if err := r.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, f.day, 1)}); !errors.Is(err, engine.ErrLiveUnavailable) {
		t.Fatalf("a push while the log cannot be opened: %v, want ErrLiveUnavailable", err)
	}
	if err := r.Closed(); err != nil {
		t.Errorf("Closed while the log cannot be opened: %v", err)
	}
	// Its batches (if any) are not read back: the session is restoring
	// (not ready), not the snapshot's prices served as the day's.
	if !s.Restoring() {
		t.Error("not restoring while the log cannot be opened")
	}
	// The folder is back, with the log of batches 1 and 2.
	writeLog(t, ready, f, 2)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(ready, dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to open", func() bool { st, _ := s.Status(); return st.Degraded == "" && st.Seq == 2 })
	if next, v := r.NextSeq(), store.View(); next != 3 || v.Live == nil || v.Live.Seq != 2 || s.Restoring() {
		t.Fatalf("after the open: next %d, live %+v, restoring %t", next, v.Live, s.Restoring())
	}
	if err := r.PushBars(3, []engine.LiveBar{minuteBar(f.ticker, f.day, 3)}); err != nil {
		t.Fatal(err)
	}
	if info, err := readLog(filepath.Join(dir, live.LogName(f.day))); err != nil || info.Records != 3 {
		t.Errorf("the log: %+v, %v", info, err)
	}
}

// TestNextSessionOpenedLater: at the next weekday's start, a session log
// that cannot be opened (the live folder gone, a file in its place)
// leaves the new session degraded, its pushes refused as unavailable
// rather than closed, and is opened again with backoff.
func TestNextSessionOpenedLater(t *testing.T) {
	f := fixtureOf(t)
	dir := filepath.Join(t.TempDir(), "live")
	t0 := int64(f.day)*86400 + 13*3600
	var mu sync.Mutex
	now := time.Unix(t0+3600, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir = "push", dir // the calendar's sessions
	s, err := New(cfg, storeOf(f.base), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	r := s.local
	if err := r.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, f.day, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, dir+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := live.NextWeekday(f.day)
	mu.Lock()
	now = live.SessionStart(next).Add(time.Second)
	mu.Unlock()
	if n := r.NextSeq(); n != 1 || s.State().Session != next {
		t.Fatalf("the next session: next seq %d, state %+v", n, *s.State())
	}
	nb := minuteBar(f.ticker, next, -30) // 09:30 in São Paulo
	if err := r.PushBars(1, []engine.LiveBar{nb}); !errors.Is(err, engine.ErrLiveUnavailable) {
		t.Fatalf("a push while the next session's log cannot be opened: %v, want ErrLiveUnavailable", err)
	}
	if st, ok := s.Status(); !ok || st.Degraded == "" || st.Session != next {
		t.Errorf("status %+v, %t; want the next session, degraded", st, ok)
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".saved", dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to open", func() bool { st, _ := s.Status(); return st.Degraded == "" })
	if err := r.PushBars(1, []engine.LiveBar{nb}); err != nil {
		t.Fatal(err)
	}
	if info, err := readLog(filepath.Join(dir, live.LogName(next))); err != nil || info.Records != 1 {
		t.Errorf("the next session's log: %+v, %v", info, err)
	}
}

// TestLogKeptOnOpenError: a session log that cannot be opened for
// another reason than not being this session's log (a full disk as its
// damaged records are set aside, a read error; here: a folder at its
// path) is left where it is, with its records, and opened again with
// backoff; only a file that is not a session log, or another session's,
// is moved aside (TestLiveBadLogMovedAside in cmd/pregao).
func TestLogKeptOnOpenError(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	path := filepath.Join(dir, live.LogName(f.day))
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := int64(f.day)*86400 + 13*3600
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	s, err := New(cfg, storeOf(f.base), Options{Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	if aside, _ := filepath.Glob(path + ".bad-*"); len(aside) > 0 {
		t.Fatalf("moved aside: %v", aside)
	}
	waitFor(t, "the session to report its log", func() bool { st, ok := s.Status(); return ok && st.Degraded != "" })
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Fatalf("the entry at the log's path: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to open", func() bool { st, _ := s.Status(); return st.Degraded == "" })
	if err := s.local.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, f.day, 1)}); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedLastRecordIsAGap: a damaged last record (a whole line, its
// checksum wrong) costs that batch, as one in the middle does, and is
// reported the same way: a gap of kind log naming the batch after the
// last record kept, counted in the session's gaps; the next push takes
// that number again.
func TestDamagedLastRecordIsAGap(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	writeLog(t, dir, f, 5)
	path := filepath.Join(dir, live.LogName(f.day))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1
	b[last+20] ^= 1 // in record 5's JSON: its checksum no longer matches
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	t0 := int64(f.day)*86400 + 13*3600
	s, err := New(cfg, storeOf(f.base), Options{Registerer: reg, Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	st, _ := s.Status()
	want := &engine.LiveGap{Kind: "log", Session: f.day, First: 5, Last: 5}
	if st.Seq != 4 || st.SessionGaps != 1 || st.LastGap == nil || *st.LastGap != *want {
		t.Errorf("seq %d, session gaps %d, last gap %+v; want 4, 1, %+v", st.Seq, st.SessionGaps, st.LastGap, want)
	}
	if g := gaugeValue(t, reg, "pregao_live_session_gaps"); g != 1 {
		t.Errorf("pregao_live_session_gaps %v", g)
	}
	if next := s.local.NextSeq(); next != 5 {
		t.Errorf("next push %d, want 5", next)
	}
}

// TestRefusedBatchNotRestored: a batch the engine refuses is refused
// before it is logged (nothing appended: a crash cannot leave it in the
// log); and a refused batch a log holds anyway (an older version's
// crash between its append and its removal) is not restored as applied:
// its retry is not told "applied already with this body".
func TestRefusedBatchNotRestored(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	t0 := int64(f.day)*86400 + 13*3600
	bad := minuteBar(f.ticker, f.day, 2)
	bad.High = bad.Low - 1
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	now := func() time.Time { return time.Unix(t0+3600, 0) }
	s, err := New(cfg, storeOf(f.base), Options{Registerer: reg, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	stop := runSession(t, s)
	r := s.local
	if err := r.PushBars(1, []engine.LiveBar{minuteBar(f.ticker, f.day, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := r.PushBars(2, []engine.LiveBar{bad}); !errors.Is(err, engine.ErrLiveBatch) {
		t.Fatalf("a bad bar: %v", err)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "pregao_live_log_append_duration_seconds" {
			if n := mf.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1 {
				t.Errorf("%d appends to the log, want 1 (the refused batch appended)", n)
			}
		}
	}
	stop()
	// The log holds the refused batch after all.
	path := filepath.Join(dir, live.LogName(f.day))
	lg, _, err := live.OpenLog(path, f.day, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := lg.Append(&live.Record{Seq: 2, At: (t0 + 3600) * 1000, Bars: []engine.LiveBar{bad}}); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	_, store, r, stop := pushSession(t, f, dir, now)
	defer stop()
	if d, ok := r.Applied(2); ok {
		t.Errorf("the refused batch 2 restored as applied (digest %s)", d)
	}
	if _, ok := r.Applied(1); !ok {
		t.Error("batch 1 not restored")
	}
	if v := store.View(); v.Live == nil || v.Live.Seq != 1 {
		t.Errorf("live %+v, want batch 1 applied", v.Live)
	}
}
