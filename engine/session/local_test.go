package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestNeverBlocksReload: the publish of a snapshot (and the signal a
// serve sends the session with it) never waits for the session's
// writer, which may hold its lock for a while (a log's fsync, a restore
// at the next day's start); the handover check runs once the writer is
// free, and a session the snapshot does not cover goes on over it.
func TestNeverBlocksReload(t *testing.T) {
	f := fixtureOf(t)
	store := storeOf(f.base)
	// A session still to come: the calendar does not complete it, and
	// no snapshot covers it.
	sd := live.NextWeekday(live.LocalDate(time.Now()))
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", t.TempDir(), sd.String()
	s, err := New(cfg, store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	s.local.mu.Lock()
	released := false
	defer func() {
		if !released {
			s.local.mu.Unlock()
		}
	}()
	done := make(chan struct{})
	go func() {
		store.Publish(f.full)
		s.Published()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a snapshot's publish waits for the live session's writer")
	}
	if st, ok := s.Status(); !ok || st.Session != sd {
		t.Errorf("status %+v, %t", st, ok)
	}
	s.local.mu.Unlock()
	released = true
	// The session is not complete: it goes on over the new snapshot (the
	// handover check, run once the writer is free, leaves it).
	if err := s.local.PushBars(1, nil); err != nil {
		t.Fatal(err)
	}
	if v := store.View(); v.Live == nil || v.Live.Seq != 1 || v.Base != store.Current() || v.Base != f.full {
		t.Error("the live session did not go on over the new snapshot")
	}
}

// stepFeed is a live.Feed whose steps a test sends.
type stepFeed struct {
	day   engine.Date
	steps chan live.Step
}

func (f *stepFeed) Session() engine.Date     { return f.day }
func (f *stepFeed) Clock() (time.Time, bool) { return time.Time{}, false }
func (f *stepFeed) Resume(uint64, time.Time) {}
func (f *stepFeed) Errors() map[string]int64 { return nil }
func (f *stepFeed) Next(ctx context.Context) (live.Step, error) {
	select {
	case st := <-f.steps:
		return st, nil
	case <-ctx.Done():
		return live.Step{}, ctx.Err()
	}
}

// TestFeedBatchFoundOnReopen: a feed's batch whose append failed is
// committed again once the log reopens, unless the reopened log holds
// it already (the write failed after it reached the file: the reopen
// applies it): then it is done, and the feed goes on with its next
// batch, instead of breaking the log again on every try.
func TestFeedBatchFoundOnReopen(t *testing.T) {
	f := fixtureOf(t)
	dir := t.TempDir()
	t0 := int64(f.day)*86400 + 13*3600
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	s, err := New(cfg, storeOf(f.base), Options{Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := &stepFeed{day: f.day, steps: make(chan live.Step)}
	s.local.feed = feed // the local driver runs it as it runs a replay
	defer runSession(t, s)()
	batch := func(seq int) *engine.LiveBatch {
		return &engine.LiveBatch{Seq: uint64(seq), Session: f.day, Bars: []engine.LiveBar{minuteBar(f.ticker, f.day, seq)}}
	}
	send := func(seq int) {
		t.Helper()
		select {
		case feed.steps <- live.Step{Session: f.day, Batch: batch(seq), At: time.Unix(t0+3600, 0)}:
		case <-time.After(time.Minute):
			t.Fatalf("the feed waited a minute to take batch %d", seq)
		}
	}
	for seq := 1; seq <= 3; seq++ {
		send(seq)
	}
	waitFor(t, "batch 3", func() bool { return s.State().Seq == 3 })
	// The log cannot be written: its file gone, a folder in its place.
	path := filepath.Join(dir, live.LogName(f.day))
	s.local.mu.Lock()
	s.local.slog.(*live.Log).Close()
	s.local.mu.Unlock()
	if err := os.Rename(path, path+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	send(4)
	waitFor(t, "the log to break", func() bool { st, _ := s.Status(); return st.Degraded != "" })
	// Batch 4 reached the file after all; the file is back.
	lg, _, err := live.OpenLog(path+".saved", f.day, nil)
	if err != nil {
		t.Fatal(err)
	}
	b4 := batch(4)
	if err := lg.Append(&live.Record{Seq: 4, At: (t0 + 3600) * 1000, Bars: b4.Bars}); err != nil {
		t.Fatal(err)
	}
	lg.Close()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".saved", path); err != nil {
		t.Fatal(err)
	}
	send(5)
	waitFor(t, "batch 5", func() bool { st, _ := s.Status(); return st.Seq == 5 && st.Degraded == "" })
	if info, err := readLog(path); err != nil || info.Records != 5 || info.Last != 5 {
		t.Errorf("the log: %+v, %v", info, err)
	}
}

// TestFeedStartRestoring: a feed's first session whose log cannot be
// opened at start (the live folder a file) may hold the day's batches
// not read back: the session stays restoring (not ready, the priced
// routes 503) while the feed waits, rather than the snapshot's prices
// served as the day's; once the log opens, it is ready.
func TestFeedStartRestoring(t *testing.T) {
	f := fixtureOf(t)
	dir := filepath.Join(t.TempDir(), "live")
	t0 := int64(f.day)*86400 + 13*3600
	cfg := DefaultConfig()
	cfg.Feed, cfg.Dir, cfg.Day = "push", dir, f.day.String()
	s, err := New(cfg, storeOf(f.base), Options{Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	s.local.feed = &stepFeed{day: f.day, steps: make(chan live.Step)}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("not a folder\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer runSession(t, s)()
	waitFor(t, "a failed open", func() bool {
		s.local.mu.Lock()
		defer s.local.mu.Unlock()
		return s.local.unopened
	})
	time.Sleep(50 * time.Millisecond) // the first failure's aftermath
	if !s.Restoring() {
		t.Error("not restoring while the first session's log cannot be opened")
	}
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the log to open and the session to be ready", func() bool { return !s.Restoring() })
}
