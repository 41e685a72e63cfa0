package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowOrigin serves a snapshot with an ETag; once slow is set, a full
// answer sends its body at rate bytes a second (started is closed at its
// first byte).
type slowOrigin struct {
	mu      sync.Mutex
	body    []byte
	etag    string
	rate    int
	started chan struct{}
	once    sync.Once
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
	w.WriteHeader(200)
	o.once.Do(func() { close(o.started) })
	for i := 0; i < len(body); i += rate / 4 {
		if _, err := w.Write(body[i:min(len(body), i+rate/4)]); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// TestKeysRevokedDuringSlowFetch: while a remote snapshot crawls in at
// 1 KiB/s, a key removed from the keys file is refused within a second
// (the watch reloads keys without waiting for the download), the
// previous snapshot keeps serving, and the shutdown does not wait for
// the download.
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
	case <-time.After(5 * time.Second):
		t.Fatal("the watch did not start the download")
	}
	time.Sleep(100 * time.Millisecond) // well into the download
	if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatalf("key before its removal: %d", code)
	}
	if err := runKeys(context.Background(), []string{"remove", "--file", keys, "--name", "test"}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for {
		code, _ := get(t, base+"/v2/companies/ENHZ", key)
		if code == 401 {
			break
		}
		if time.Since(revoked) > time.Second {
			t.Fatalf("a removed key still answered %d after %s, during a slow download", code, time.Since(revoked))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("removed key refused %s after the keys file changed", time.Since(revoked).Round(time.Millisecond))
	if m.Store.Current() != first {
		t.Error("the dataset changed during the download")
	}
	var stopped atomic.Bool
	go func() {
		time.Sleep(5 * time.Second)
		if !stopped.Load() {
			t.Error("shutdown waits for the download")
		}
	}()
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	stopped.Store(true)
}

// TestShutdownDuringFirstFetch: a shutdown while the first snapshot
// crawls in stops the download (nothing is left writing in the cache)
// and returns at once.
func TestShutdownDuringFirstFetch(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	o := &slowOrigin{body: good, etag: `"v1"`, rate: 1024, started: make(chan struct{})}
	srv := httptest.NewServer(o)
	defer srv.Close()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.SnapshotCache, cfg.Addr = srv.URL+"/s.snap", keys, t.TempDir(), "127.0.0.1:0"
	m, err := newMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := runMain(t, m)
	select {
	case <-o.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the first fetch did not start")
	}
	start := time.Now()
	if err := stop(); err != nil {
		t.Errorf("Run: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the shutdown took %s during the first fetch", d)
	}
	if m.Store.Current() != nil {
		t.Error("a snapshot was loaded after the shutdown")
	}
}
