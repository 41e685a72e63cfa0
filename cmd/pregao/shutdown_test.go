package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestShutdownDrains: on shutdown /readyz turns 503 at once while the API
// keeps answering for the drain, each answer closing its connection; a
// request in flight when the shutdown starts is answered whole.
func TestShutdownDrains(t *testing.T) {
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.Drain = snap, keys, "127.0.0.1:0", 600*time.Millisecond
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	api := m.srv.Handler
	slow := make(chan struct{})
	m.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("slow") != "" {
			close(slow)
			time.Sleep(900 * time.Millisecond) // past the drain
			r.URL.RawQuery = ""
		}
		api.ServeHTTP(w, r)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	base := "http://" + m.Addr()
	if code, _ := get(t, base+"/readyz", ""); code != 200 {
		t.Fatalf("readyz before shutdown: %d", code)
	}
	inflight := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/v2/ratios/catalog?slow=1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("request in flight during shutdown: %v", err)
			inflight <- 0
			return
		}
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Errorf("answer in flight cut: %v", err)
		}
		inflight <- resp.StatusCode
	}()
	<-slow
	cancel()
	time.Sleep(100 * time.Millisecond)
	if code, body := get(t, base+"/readyz", ""); code != 503 {
		t.Errorf("readyz while draining: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", base+"/v2/ratios/catalog", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("API while draining: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !resp.Close {
		t.Errorf("API while draining: %d, Connection: close %v", resp.StatusCode, resp.Close)
	}
	if code := <-inflight; code != 200 {
		t.Errorf("request in flight: %d", code)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still listening after shutdown")
	}
}

// TestShutdownOutlastsWrites: the shutdown never gives up on an answer
// before that answer's own write timeout.
func TestShutdownOutlastsWrites(t *testing.T) {
	cfg := DefaultServeConfig()
	if cfg.ShutdownTimeout <= cfg.WriteTimeout {
		t.Errorf("default shutdown timeout %s <= write timeout %s", cfg.ShutdownTimeout, cfg.WriteTimeout)
	}
	cfg.ShutdownTimeout = time.Second
	m := &Main{cfg: cfg}
	if got := m.shutdownTimeout(); got <= cfg.WriteTimeout {
		t.Errorf("shutdownTimeout() = %s with write timeout %s", got, cfg.WriteTimeout)
	}
}

// TestShutdownUnderLoad: clients behave as a load balancer does (they
// stop sending once /readyz answers 503) while SIGTERM-style shutdown
// runs with a drain: not one request sent is lost or answered with an
// error.
func TestShutdownUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Drain = snap, keys, 500*time.Millisecond
	m, stop := startServe(t, cfg, nil)
	base := "http://" + m.Addr()
	var ready atomic.Bool
	ready.Store(true)
	go func() { // the load balancer's probe: an error or a non-200 is "not ready"
		for ready.Load() {
			resp, err := http.Get(base + "/readyz")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != 200 {
				ready.Store(false)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(10 * time.Second) // a shutdown that never ends fails, not hangs
	var sent, failed atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ready.Load() && time.Now().Before(deadline) {
				req, _ := http.NewRequest("POST", base+"/v2/quotes", strings.NewReader(`{"tickers":["ENHZ3"],"type":"current"}`))
				req.Header.Set("Authorization", "Bearer "+key)
				sent.Add(1)
				resp, err := client.Do(req)
				if err != nil {
					failed.Add(1)
					t.Log(err)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					failed.Add(1)
					t.Logf("status %d", resp.StatusCode)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	shutdown := make(chan error, 1)
	go func() { shutdown <- stop() }() // as SIGTERM
	wg.Wait()
	if err := <-shutdown; err != nil {
		t.Errorf("Run: %v", err)
	}
	t.Logf("%d requests sent, %d failed", sent.Load(), failed.Load())
	if sent.Load() == 0 || failed.Load() != 0 {
		t.Errorf("%d of %d requests failed during the shutdown", failed.Load(), sent.Load())
	}
}
