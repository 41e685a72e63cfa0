package main

import (
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// Two format 6 snapshots (daily and intraday bars mapped; the second's
// daily prices twice the first's) reloaded in turn, again and again, as serve reloads
// (Load, Prepare, Publish), while clients ask for daily histories,
// charts of 1-minute bars, quotes and rankings: every answer is, byte for byte, the answer of
// the snapshot its ETag names (or, from a Dataset replaced during the
// request, whose ETag has a seed of its own, one of the two), though
// each reload maps a file beside the served one and the collector
// releases the replaced mappings meanwhile (a mapping released under a
// reader faults, or reads the other snapshot's bars at the same
// address); once it is done, only the served one stays mapped (run
// with -race).
func TestMappedSnapshotReloadUnderRequests(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, HistoryFrom: 2024, IntradayTickers: 2, IntradaySessions: 2})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "a.snap"), filepath.Join(dir, "b.snap")}
	if err := snapshot.WriteFile(files[0], u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	for i := range u.Daily {
		s := &u.Daily[i]
		for _, col := range [][]engine.Num{s.Open, s.High, s.Low, s.Close, s.Volume} {
			for r := range col {
				col[r] *= 2
			}
		}
	}
	if err := snapshot.WriteFile(files[1], u, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	settleMappings()
	files0, _ := mapfile.Held()
	store := &engine.Store{}
	first, hdr, err := snapshot.Load(files[0], snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys, key := delayedKey(t, first)
	api := httpapi.New(httpapi.DefaultConfig(), store, keys, httpapi.SnapshotClock{Store: store}, prometheus.NewRegistry(), nil)
	load := func(path string) string {
		ds, h, err := snapshot.Load(path, snapshot.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		api.Prepare(ds, h.ID, h.BuildTime)
		store.Publish(ds)
		return h.ID
	}
	var paths []string
	for _, a := range first.Assets() {
		if a.Intraday.Len() > 0 && len(paths) < 2 {
			paths = append(paths, "/v2/quotes/"+a.Ticker+"?type=chart")
		}
		if a.Daily.Len() > 20 && len(paths) < 8 {
			paths = append(paths, "/v2/quotes/"+a.Ticker+"?type=historical&start_date=2000-01-01&end_date=2100-01-01",
				"/v2/quotes/"+a.Ticker+"?type=historical&start_date=2000-01-01&end_date=2100-01-01&adjusted=true")
		}
	}
	paths = append(paths, "/v2/indexes/IBOV/highs?limit=10", "/v2/stocks/variations?limit=5")
	// Ratio points, read where they lie in the mapping too.
	nr := 0
	for _, is := range first.Issuers() {
		if len(is.Ratios()) > 0 && !is.IsFund() && len(is.Assets) > 0 && nr < 2 {
			paths = append(paths, "/v2/companies/"+is.ID+"/ratios?show_calculation=true",
				"/v2/companies/"+is.Assets[0].Ticker+"/ratios/valuation?show_calculation=true")
			nr++
		}
	}
	if nr == 0 {
		t.Fatal("no company with ratios in the demo")
	}
	first, _ = nil, hdr
	get := func(p string) (int, string, string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", p, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		api.ServeHTTP(w, r)
		id, _, _ := strings.Cut(strings.Trim(w.Header().Get("Etag"), `"`), "-")
		return w.Code, id, w.Body.String()
	}
	want := map[string]map[string]string{} // by snapshot id, then path
	var ids []string
	for _, f := range files {
		id := load(f)
		ids = append(ids, id)
		want[id] = map[string]string{}
		for _, p := range paths {
			code, gotID, body := get(p)
			if code != 200 || gotID != id {
				t.Fatalf("GET %s: %d from snapshot %q (want %q) %.200s", p, code, gotID, id, body)
			}
			want[id][p] = body
		}
	}
	if len(want) != 2 || want[ids[0]][paths[0]] == want[ids[1]][paths[0]] || ids[0] != hdr.ID {
		t.Fatal("the two snapshots do not answer differently")
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := r; !stop.Load(); n++ {
				p := paths[n%len(paths)]
				code, id, body := get(p)
				ok := code == 200 && body == want[id][p]
				if want[id] == nil {
					// Served by a Dataset replaced since its request began:
					// its ETag has a seed of its own (httpapi's info), and
					// its answer is one of the two snapshots'.
					ok = code == 200 && (body == want[ids[0]][p] || body == want[ids[1]][p])
				}
				if !ok {
					t.Errorf("GET %s during reloads: %d from snapshot %q, %d bytes that are not its answer", p, code, id, len(body))
					return
				}
			}
		}()
	}
	const reloads = 20
	for i := range reloads {
		load(files[i%2])
		runtime.GC() // releases the mappings of the Datasets nobody reads
	}
	stop.Store(true)
	wg.Wait()
	for range 50 {
		runtime.GC()
		if n, _ := mapfile.Held(); n <= files0+1 {
			return
		}
	}
	n, _ := mapfile.Held()
	t.Errorf("%d mappings held after the reloads, want at most 1 (the served snapshot's)", n-files0)
}

// settleMappings runs the collector until the mappings of Datasets no
// longer reachable (earlier tests') are released.
func settleMappings() {
	for prev := int64(-1); ; {
		runtime.GC()
		runtime.Gosched()
		n, _ := mapfile.Held()
		if n == prev {
			return
		}
		prev = n
	}
}
