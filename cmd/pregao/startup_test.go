package main

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// pregao serve listens before its snapshot loads: meanwhile /healthz is
// 200, /readyz 503 with the load's progress and the API 503 with a
// Retry-After; once the snapshot is published all three answer 200.
func TestServeListensBeforeLoading(t *testing.T) {
	snap, keys, key := serveFixture(t)
	release := make(chan struct{})
	beforeFirstLoad = func() { <-release }
	defer func() { beforeFirstLoad = nil }()

	m := lazyMain(t, snap, keys)
	stop, _ := runMain(t, m)
	base := "http://" + m.Addr()

	if st, _ := get(t, base+"/healthz", ""); st != 200 {
		t.Errorf("healthz while loading: %d", st)
	}
	if st, body := get(t, base+"/readyz", ""); st != 503 || !strings.Contains(body, "not ready: loading the snapshot") {
		t.Errorf("readyz while loading: %d %s", st, body)
	}
	req, _ := http.NewRequest("GET", base+"/v2/companies", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("API while loading: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	waitUntil(t, "ready once the load was released", func() bool {
		st, _ := get(t, base+"/readyz", "")
		return st == 200
	})
	if st, body := get(t, base+"/v2/companies", key); st != 200 {
		t.Errorf("API once loaded: %d %s", st, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// lazyMain is the server pregao serve makes: keys loaded, the snapshot
// not yet (Run loads it).
func lazyMain(t *testing.T, snap, keys string) *Main {
	t.Helper()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	m, err := newMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A first snapshot that cannot be loaded stops the server with the load's
// error (a process supervisor restarts it), after /readyz said 503.
func TestServeStopsWhenFirstLoadFails(t *testing.T) {
	_, keys, _ := serveFixture(t)
	bad := t.TempDir() + "/bad.snap"
	if err := os.WriteFile(bad, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	beforeFirstLoad = func() { <-release }
	defer func() { beforeFirstLoad = nil }()
	m := lazyMain(t, bad, keys)
	_, done := runMain(t, m)
	if st, _ := get(t, "http://"+m.Addr()+"/readyz", ""); st != 503 {
		t.Errorf("readyz before the load: %d", st)
	}
	close(release)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "bad.snap") {
			t.Errorf("Run: %v, want the load's error naming the file", err)
		}
	case <-time.After(waitBound):
		t.Fatalf("server still running %v after its snapshot failed to load", waitBound)
	}
}
