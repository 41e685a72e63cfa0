package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// withPosition writes the snapshot at src again, at dst, with position
// pos.
func withPosition(t *testing.T, src, dst string, pos engine.StreamPosition) {
	t.Helper()
	u, _, err := snapshot.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	u.Meta.Stream = pos
	if err := snapshot.WriteFile(dst, u, snapshot.WriteOptions{Level: 1}); err != nil {
		t.Fatal(err)
	}
}

// TestReplicaStartsAtSnapshotPosition: a replica whose snapshot records
// its position in the stream consumes from there when the message before
// it is the batch the snapshot names, or is gone from the stream (its
// limits) with the position still inside it; a position the stream
// contradicts is counted (reason "snapshot") and the replica looks its
// last session up, as it does without a position.
//
// The stream holds batches 1 to 4 of the snapshot's last session (stream
// sequences 1 to 4): the lookup starts after them (5), the position of
// batch 2 at 3, so the replica then skips batches 3 and 4 as covered.
func TestReplicaStartsAtSnapshotPosition(t *testing.T) {
	f := liveFixtureOf(t)
	d := loadDataset(t, f.base)
	last := d.LastSession()
	at := func(next, batch uint64) engine.StreamPosition {
		return engine.StreamPosition{Next: next, Name: bus.StreamName, Session: last, Batch: batch}
	}
	other := at(3, 2)
	other.Name = "OTHER"
	later := at(3, 2)
	later.Session = last + 1
	for _, c := range []struct {
		name      string
		pos       engine.StreamPosition
		deleted   uint64 // a message removed from the stream (0: none)
		from      uint64
		lookup    bool
		covered   int
		errors    int
		readyzPos string
	}{
		{name: "no position", from: 5, lookup: true},
		{name: "position", pos: at(3, 2), from: 3, covered: 2, readyzPos: `"next":3`},
		{name: "batch gone", pos: at(3, 2), deleted: 2, from: 3, covered: 2, readyzPos: `"next":3`},
		{name: "position at the head", pos: at(5, 4), from: 5},
		{name: "another batch", pos: at(3, 9), from: 5, lookup: true, errors: 1},
		{name: "another stream", pos: other, from: 5, lookup: true, errors: 1},
		{name: "beyond the stream", pos: at(50, 49), from: 5, lookup: true, errors: 1},
		{name: "a later session", pos: later, from: 5, lookup: true, errors: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			liveDir := filepath.Join(dir, "live")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			b, err := bus.Open(bus.Config{URL: bus.Embedded, Dir: filepath.Join(liveDir, "jetstream")})
			if err != nil {
				t.Fatal(err)
			}
			for i := uint64(1); i <= 4; i++ {
				if seq, _, err := b.Publish(ctx, last, &live.Record{Seq: i, At: last.Time().Add(14 * time.Hour).UnixMilli(), Complete: i == 4}, false); err != nil || seq != i {
					t.Fatalf("publish %d: %d %v", i, seq, err)
				}
			}
			if c.deleted > 0 {
				s, _ := b.EnsureStream(ctx)
				if err := s.DeleteMsg(ctx, c.deleted); err != nil {
					t.Fatal(err)
				}
			}
			b.Close()
			snap := f.base
			if c.pos.Known() {
				snap = filepath.Join(dir, "base.snap")
				withPosition(t, f.base, snap, c.pos)
			}
			m, stop := serveLive(t, f, snap, func(cfg *ServeConfig) { cfg.Live.Stream, cfg.Live.Dir = bus.Embedded, liveDir })
			defer stop()
			waitStream(t, m, 0, false)
			if sp := streamOf(m); sp.Start != c.from || sp.Lookup != c.lookup || sp.Position != c.pos {
				t.Fatalf("started at %d (lookup %v, position %+v), want from %d (lookup %v, position %+v)", sp.Start, sp.Lookup, sp.Position, c.from, c.lookup, c.pos)
			}
			_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
			for _, want := range []string{
				`pregao_live_batches_total{result="covered"} ` + jsonNum(uint64(c.covered)),
				`pregao_live_feed_errors_total{reason="snapshot"} ` + jsonNum(uint64(c.errors)),
			} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("metrics lack %q", want)
				}
			}
			code, rz := readyzBody(t, m)
			if code != 200 || c.readyzPos != "" && !strings.Contains(rz, c.readyzPos) {
				t.Errorf("readyz %d %s, want it to show %s", code, rz, c.readyzPos)
			}
		})
	}
}
