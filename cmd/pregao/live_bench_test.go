package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestLiveReplayScale replays a whole held-back demo session through the
// server's path (session log append and fsync, then Store.ApplyLive, per
// batch) over the held-back snapshot, and reports the apply's p50, p99
// and maximum, the log append's, and the resident memory the session
// adds (after a collection; and at its peak). Targets: RSS growth 150 MB
// at scale 1. Outside make test (it needs the scale's files, which make
// live-bench generates):
//
//	make live-bench SCALE=1
func TestLiveReplayScale(t *testing.T) {
	snap, rec := os.Getenv("PREGAO_LIVE_SNAPSHOT"), os.Getenv("PREGAO_LIVE_RECORDING")
	if snap == "" || rec == "" {
		t.Skip("PREGAO_LIVE_SNAPSHOT and PREGAO_LIVE_RECORDING not set (make live-bench)")
	}
	ds, _, err := snapshot.Load(snap, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store := &engine.Store{}
	store.Publish(ds)
	debug.FreeOSMemory()
	rss0 := rssBytes()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapInuse
	t0 := time.Now()
	rp, err := live.NewReplay(live.ReplayConfig{Dir: rec})
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(t0)
	if err := store.StartLive(rp.Session()); err != nil {
		t.Fatal(err)
	}
	l, _, err := live.OpenLog(filepath.Join(t.TempDir(), live.LogName(rp.Session())), rp.Session(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var apply, appendT []time.Duration
	peak, bars := rss0, 0
	var atClose uint64 // heap in use at the close, the replay's aggregation still held
	t1 := time.Now()
	for {
		st, err := rp.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if closeAt := int64(rp.Session())*86400 + int64(engine.SessionCloseUTC/time.Second); atClose == 0 && st.At.Unix() >= closeAt {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			atClose = ms.HeapInuse
		}
		b := st.Batch
		if b == nil {
			continue
		}
		a0 := time.Now()
		if err := l.Append(&live.Record{Seq: b.Seq, At: st.At.UnixMilli(), Complete: b.Complete, Bars: b.Bars}); err != nil {
			t.Fatal(err)
		}
		a1 := time.Now()
		if ok, err := store.ApplyLive(b); !ok || err != nil {
			t.Fatal(ok, err)
		}
		appendT, apply = append(appendT, a1.Sub(a0)), append(apply, time.Since(a1))
		bars += len(b.Bars)
		if b.Seq%50 == 0 {
			peak = max(peak, rssBytes())
		}
	}
	wall := time.Since(t1)
	peak = max(peak, rssBytes())
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap1 := ms.HeapInuse
	debug.FreeOSMemory()
	rss1 := rssBytes()
	q := func(d []time.Duration, p int) time.Duration { return d[min(len(d)-1, len(d)*p/100)] }
	slices.Sort(apply)
	slices.Sort(appendT)
	lv := store.View().Live
	t.Logf("session %s: %d rows read in %v; %d batches, %d bars (%d corrections) replayed in %v", rp.Session(), rp.Rows(), read.Round(time.Millisecond),
		len(apply), bars, lv.Corrections, wall.Round(time.Millisecond))
	t.Logf("Store.ApplyLive: p50 %v, p99 %v, max %v", q(apply, 50), q(apply, 99), apply[len(apply)-1])
	t.Logf("session log append+fsync: p50 %v, p99 %v, max %v; log %.1f MB", q(appendT, 50), q(appendT, 99), appendT[len(appendT)-1], float64(l.Size())/1e6)
	t.Logf("RSS: %.0f MB with the snapshot, +%.0f MB after the session (collected), +%.0f MB at the peak (uncollected garbage); heap in use +%.0f MB at the close (the replay's rows and aggregation held), +%.0f MB after the session",
		float64(rss0)/1e6, float64(rss1-rss0)/1e6, float64(peak-rss0)/1e6, (float64(atClose)-float64(heap0))/1e6, (float64(heap1)-float64(heap0))/1e6)
	if g := rss1 - rss0; g > 150e6 {
		t.Errorf("the session adds %.0f MB of RSS, target 150", float64(g)/1e6)
	}
	if !lv.Complete {
		t.Error("the session is not complete")
	}
}
