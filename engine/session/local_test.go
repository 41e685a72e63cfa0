package session

import (
	"testing"
	"time"

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
