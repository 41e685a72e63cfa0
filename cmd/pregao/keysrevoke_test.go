package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowOrigin serves a snapshot with an ETag; once slow is set, a full
// answer sends its body at rate bytes a second (started is closed at its
// first byte; sent counts the bytes written, whole says the body was
// sent to its end).
type slowOrigin struct {
	mu      sync.Mutex
	body    []byte
	etag    string
	rate    int
	started chan struct{}
	once    sync.Once
	sent    atomic.Int64
	whole   atomic.Bool
	length  bool // send Content-Length with the slow body
}

func (o *slowOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	body, etag, rate := o.body, o.etag, o.rate
	o.mu.Unlock()
	w.Header().Set("ETag", etag)
	if rate == 0 || r.Header.Get("If-None-Match") == etag {
		http.ServeContent(w, r, "s.snap", time.Unix(0, 0), bytes.NewReader(body))
		return
	}
	if o.length {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(200)
	o.once.Do(func() { close(o.started) })
	for i := 0; i < len(body); i += rate / 4 {
		n, err := w.Write(body[i:min(len(body), i+rate/4)])
		o.sent.Add(int64(n))
		if err != nil {
			return
		}
		w.(http.Flusher).Flush()
		if i+rate/4 >= len(body) {
			o.whole.Store(true)
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// TestKeysRevokedDuringSlowFetch: while a remote snapshot crawls in at
// 1 KiB/s (about 11 s for the test's snapshot), a key removed from the
// keys file is refused before the download ends (the watch reloads keys
// without waiting for it), the previous snapshot keeps serving, and the
// shutdown does not wait for the download (the body is never sent
// whole).
func TestKeysRevokedDuringSlowFetch(t *testing.T) {
	snap, keys, key := serveFixture(t)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "other"}, &other, io.Discard); err != nil {
		t.Fatal(err)
	}
	o := &slowOrigin{body: good, etag: `"v1"`, started: make(chan struct{})}
	srv := httptest.NewServer(o)
	defer srv.Close()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.SnapshotCache, cfg.Watch = srv.URL+"/s.snap", keys, t.TempDir(), 50*time.Millisecond
	m, stop := startServe(t, cfg, nil)
	base := "http://" + m.Addr()
	first := m.Store.Current()
	o.mu.Lock()
	o.etag, o.rate = `"v2"`, 1024
	o.mu.Unlock()
	select {
	case <-o.started:
	case <-time.After(waitBound):
		t.Fatal("the watch did not start the download")
	}
	waitUntil(t, "the download under way", func() bool { return o.sent.Load() >= 512 }) // two writes of the origin
	if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatalf("key before its removal: %d", code)
	}
	if err := runKeys(context.Background(), []string{"remove", "--file", keys, "--name", "test"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	waitUntil(t, "the removed key refused", func() bool {
		code, _ := get(t, base+"/v2/companies/ENHZ", key)
		return code == 401
	})
	if o.whole.Load() {
		t.Fatalf("the removed key was refused only after the download ended (%s after the change)", time.Since(revoked))
	}
	t.Logf("removed key refused %s after the keys file changed, %d of %d bytes downloaded", time.Since(revoked).Round(time.Millisecond), o.sent.Load(), len(good))
	if m.Store.Current() != first {
		t.Error("the dataset changed during the download")
	}
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if o.whole.Load() {
		t.Error("the shutdown waited for the download")
	}
}

// TestShutdownDuringFirstFetch: while the first snapshot crawls in,
// /readyz says how many of its bytes are in; a shutdown then stops the
// download (nothing is left writing in the cache), returns at once and
// logs the stop as such, not as a failure to keep a copy it never had.
func TestShutdownDuringFirstFetch(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	o := &slowOrigin{body: good, etag: `"v1"`, rate: 1024, started: make(chan struct{}), length: true}
	srv := httptest.NewServer(o)
	defer srv.Close()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.SnapshotCache, cfg.Addr = srv.URL+"/s.snap", keys, t.TempDir(), "127.0.0.1:0"
	var log syncBuffer
	m, err := newMain(cfg, &log)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := runMain(t, m)
	select {
	case <-o.started:
	case <-time.After(waitBound):
		t.Fatal("the first fetch did not start")
	}
	want := fmt.Sprintf("of %.1f MB)", float64(len(good))/1e6)
	for deadline := time.Now().Add(waitBound); ; time.Sleep(10 * time.Millisecond) {
		code, body := get(t, "http://"+m.Addr()+"/readyz", "")
		if code == 503 && strings.Contains(body, "loading the snapshot: fetch ") && strings.Contains(body, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz during the fetch: %d %s, want the fetch's bytes (%s)", code, body, want)
		}
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if o.whole.Load() {
		t.Errorf("the shutdown waited for the download (%s)", time.Since(start))
	}
	if m.Store.Current() != nil {
		t.Error("a snapshot was loaded after the shutdown")
	}
	if l := log.String(); !strings.Contains(l, "snapshot fetch stopped: shutting down") || strings.Contains(l, "keeping the local copy") || strings.Contains(l, "reason=canceled") {
		t.Errorf("the log of a fetch stopped by the shutdown:\n%s", l)
	}
}

// TestShutdownDuringReloadFetch: a shutdown that stops the download of a
// new publication is no failed reload: neither
// pregao_snapshot_reloads_total{result="error"} (which
// PregaoSnapshotReloadFailing alerts on) nor
// pregao_snapshot_fetch_failures_total counts it, and it is logged as a
// stop.
func TestShutdownDuringReloadFetch(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	o := &slowOrigin{body: good, etag: `"v1"`, started: make(chan struct{})}
	srv := httptest.NewServer(o)
	defer srv.Close()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.SnapshotCache, cfg.Watch = srv.URL+"/s.snap", keys, t.TempDir(), 50*time.Millisecond
	var log syncBuffer
	m, stop := startServe(t, cfg, &log)
	o.mu.Lock()
	o.etag, o.rate = `"v2"`, 1024
	o.mu.Unlock()
	select {
	case <-o.started:
	case <-time.After(waitBound):
		t.Fatal("the watch did not start the download")
	}
	if err := stop(); err != nil { // Run returns once the reload's goroutine has
		t.Errorf("Run: %v", err)
	}
	if o.whole.Load() {
		t.Fatal("the shutdown waited for the download: nothing was stopped")
	}
	if n := counterValue(t, m.Registry, "pregao_snapshot_reloads_total", "result", "error"); n != 0 {
		t.Errorf(`pregao_snapshot_reloads_total{result="error"} = %v after a shutdown during a fetch, want 0`, n)
	}
	if n := counterValue(t, m.Registry, "pregao_snapshot_reloads_total", "result", "ok"); n != 0 {
		t.Errorf(`pregao_snapshot_reloads_total{result="ok"} = %v, want 0`, n)
	}
	mf, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range mf {
		if f.GetName() != "pregao_snapshot_fetch_failures_total" {
			continue
		}
		for _, c := range f.GetMetric() {
			if v := c.GetCounter().GetValue(); v != 0 {
				t.Errorf("pregao_snapshot_fetch_failures_total%v = %v, want 0", c.GetLabel(), v)
			}
		}
	}
	if l := log.String(); !strings.Contains(l, "snapshot fetch stopped: shutting down") || strings.Contains(l, "snapshot fetch failed") {
		t.Errorf("the log of a fetch stopped by the shutdown:\n%s", l)
	}
}
