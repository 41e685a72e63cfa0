package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
)

// TestServeRemoteSnapshot: serve loads a snapshot from a URL into its
// cache, reloads a new publication, refuses a corrupt one while the
// previous keeps serving, and starts from the cached copy when the origin
// is down.
func TestServeRemoteSnapshot(t *testing.T) {
	defer func(d time.Duration) { fetchRetryDelay = d }(fetchRetryDelay)
	fetchRetryDelay = time.Millisecond
	snap, keys, key := serveFixture(t)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	body, etag, down := good, `"v1"`, false
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, tag, d := body, etag, down
		mu.Unlock()
		if d {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("ETag", tag)
		http.ServeContent(w, r, "s.snap", time.Unix(0, 0), bytes.NewReader(b))
	}))
	defer origin.Close()
	publish := func(b []byte, tag string) { mu.Lock(); body, etag = b, tag; mu.Unlock() }

	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.SnapshotCache = origin.URL+"/snaps/latest.snap", keys, t.TempDir()
	m, stop := startServe(t, cfg, nil)
	defer stop()
	base := "http://" + m.Addr()
	if code, b := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	first := m.Store.Current()
	publish(good, `"v1b"`) // the same bytes under a new ETag: no reload
	if err := m.Reload(); err != nil || m.Store.Current() != first {
		t.Fatalf("the same bytes again: %v, dataset replaced %v", err, m.Store.Current() != first)
	}
	good = otherSnapshot(t)
	publish(good, `"v2"`)
	// The download was verified whole before it replaced the local copy:
	// its reload does not verify its blocks again before publishing.
	var verifyFirst []bool
	loadStarts = func(opt snapshot.LoadOptions) { verifyFirst = append(verifyFirst, opt.VerifyFirst) }
	defer func() { loadStarts = nil }()
	if err := m.Reload(); err != nil || m.Store.Current() == first {
		t.Fatalf("a new publication: %v, dataset replaced %v", err, m.Store.Current() != first)
	}
	if !slices.Equal(verifyFirst, []bool{false}) {
		t.Errorf("the reload of a fetched copy verified its blocks first: %v", verifyFirst)
	}
	second := m.Store.Current()
	if err := m.Reload(); err != nil || m.Store.Current() != second {
		t.Fatalf("unchanged: %v, replaced %v", err, m.Store.Current() != second)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-10] ^= 0xff
	publish(bad, `"v3"`)
	if err := m.Reload(); err == nil || m.Store.Current() != second {
		t.Fatalf("a corrupt publication: %v, replaced %v", err, m.Store.Current() != second)
	}
	if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatal("the previous snapshot stopped serving")
	}
	// A restart while the origin is down serves the cached copy.
	mu.Lock()
	down = true
	mu.Unlock()
	m2, stop2 := startServe(t, cfg, nil)
	defer stop2()
	if m2.Store.Current() == nil {
		t.Fatal("no dataset from the cached copy")
	}
	// Without a cached copy, a failed first fetch is an error.
	cfg.SnapshotCache = t.TempDir()
	if _, err := NewMain(cfg, io.Discard); err == nil {
		t.Error("started without any snapshot")
	}
}

// otherSnapshot returns the bytes of a snapshot of serveFixture's bundle
// built at another time: a new publication, other bytes.
func otherSnapshot(t testing.TB) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "other.snap")
	if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", p, snapshot.WriteOptions{BuildTime: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fetchProgress moves /readyz's progress through a download's attempts
// (one cut short, one resumed from its bytes, one started over) and then
// its verification.
func TestFetchProgress(t *testing.T) {
	var p snapshot.Progress
	f := fetchProgress(&p)
	check := func(phase string, done, total int64) {
		t.Helper()
		if s := p.State(); s.Phase != phase || s.Done != done || s.Total != total {
			t.Errorf("progress %+v, want %s %d of %d", s, phase, done, total)
		}
	}
	f(0, 1000)
	f(400, 1000)
	check("fetch", 400, 1000)
	f(400, 1000) // resumed where it stopped
	f(700, 1000)
	check("fetch", 700, 1000)
	f(0, 1000) // started over
	f(100, 1000)
	check("fetch", 100, 1000)
	f(1000, 1000)
	f(-1, 1000)
	check("verify download", 0, 0)
	f(0, -1) // the next fetch, of unknown size
	f(10, -1)
	check("fetch", 10, 0)
}
