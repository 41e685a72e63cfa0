package httpapi

import (
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
)

// countingBlocks counts the verifications requests ask for; safe for
// concurrent use.
type countingBlocks struct {
	engine.Blocks
	asked atomic.Int64
}

func (b *countingBlocks) All() error              { b.asked.Add(1); return b.Blocks.All() }
func (b *countingBlocks) Ticker(t string) error   { b.asked.Add(1); return b.Blocks.Ticker(t) }
func (b *countingBlocks) Company(id string) error { b.asked.Add(1); return b.Blocks.Company(id) }

// PrepareLater returns before the quote views are made (serve publishes
// its first snapshot without waiting for them), and the rankings asked
// meanwhile, from many clients at once, wait for those views: they
// answer as after Prepare, reading no column block (pricedBlocks), and
// the views are made once.
func TestPrepareLaterRequestsWait(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lazy.snap")
	scopeSnapshot(t, path)
	load := func() *engine.Dataset {
		ds, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	ref := load()
	ix := ref.Indexes()[0].Symbol
	paths := []string{"/indexes/" + ix + "/highs?limit=10", "/indexes/" + ix + "/lows", "/stocks/variations"}
	keys := []string{testKeyDelayed, testKeyEOD}
	clk := fixedClock(ref.AsOf())
	refTS := scopeServer(t, ref, &clk)
	want := map[string]string{}
	for _, p := range paths {
		for _, k := range keys {
			w := refTS.do("GET", DefaultConfig().Prefix+p, k, "")
			if w.Code != http.StatusOK {
				t.Fatalf("%s: %d %.300s", p, w.Code, w.Body.String())
			}
			want[p+k] = w.Body.String()
		}
	}

	ds := load()
	blocks := &countingBlocks{Blocks: ds.Blocks()}
	ds.SetBlocks(blocks)
	started, release := make(chan struct{}), make(chan struct{})
	var made atomic.Int64
	beforePrepViews = func() {
		made.Add(1)
		close(started)
		<-release
	}
	defer func() { beforePrepViews = nil }()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.api = New(DefaultConfig(), ts.store, testKeys(t), &clk, ts.reg, nil)
	ts.api.PrepareLater(ds, "", time.Time{}) // returns with the views still to make
	ts.store.Publish(ds)
	<-started
	in := ts.api.dsnext.Load()
	if in == nil || in.ds != ds || in.delayed.Load() != nil || in.eod.Load() != nil {
		t.Fatal("the views were made before PrepareLater returned")
	}
	var wg sync.WaitGroup
	for range 4 {
		for _, p := range paths {
			for _, k := range keys {
				wg.Go(func() {
					w := ts.do("GET", DefaultConfig().Prefix+p, k, "")
					if w.Code != http.StatusOK || w.Body.String() != want[p+k] {
						t.Errorf("%s (%s): %d %.300s, want the answer after Prepare", p, k, w.Code, w.Body.String())
					}
				})
			}
		}
	}
	close(release)
	wg.Wait()
	if n := blocks.asked.Load(); n != 0 {
		t.Errorf("%d block verifications asked: the rankings did not wait for the prepared views", n)
	}
	if n := made.Load(); n != 1 {
		t.Errorf("the views were prepared %d times, want once", n)
	}
}
