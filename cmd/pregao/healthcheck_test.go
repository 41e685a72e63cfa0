package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// healthcheck exits 0 on a 200 from /readyz, 1 (unhealthy, for a
// container's HEALTHCHECK) on anything else or no answer, and with --wait
// asks again until the server is ready.
func TestHealthcheck(t *testing.T) {
	var ready atomic.Bool
	var refused atomic.Int64 // 503 answers
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			refused.Add(1)
			http.Error(w, `{"error":{"status":503,"message":"not ready: loading the snapshot"}}`, http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"status":"ready","as_of":"2026-11-19T21:30:00Z"}`))
	}))
	defer srv.Close()
	check := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if got := mainStatus(append([]string{"healthcheck"}, args...), &out, &errOut); got != want {
			t.Errorf("healthcheck %v: status %d, want %d (%s%s)", args, got, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	if msg := check(1, "--url", srv.URL+"/readyz"); !strings.Contains(msg, "503") {
		t.Errorf("not ready: %q", msg)
	}
	// Ready once --wait has been refused twice: it asks again.
	before := refused.Load()
	go func() {
		for end := time.Now().Add(waitBound); refused.Load() < before+2 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		ready.Store(true)
	}()
	if msg := check(0, "--url", srv.URL+"/readyz", "--wait", waitBound.String()); !strings.Contains(msg, "ready") {
		t.Errorf("ready: %q", msg)
	}
	check(1, "--url", "http://127.0.0.1:1/readyz")

	for addr, want := range map[string]string{
		"":               "http://127.0.0.1:8080/readyz",
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/readyz",
		"10.1.2.3:8080":  "http://10.1.2.3:8080/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"localhost:8081": "http://localhost:8081/readyz",
	} {
		if got := defaultHealthURL(addr); got != want {
			t.Errorf("defaultHealthURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

// The exit statuses README.md states: 0 for -h (the usage asked for and
// printed), 2 for a bad flag and for a snapshot that cannot be loaded.
func TestExitStatus(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"serve", "-h"}, 0},
		{[]string{"verify", "-h"}, 0},
		{[]string{"serve", "--no-such-flag"}, 2},
		{[]string{"verify", filepath.Join(t.TempDir(), "missing.snap")}, 2},
	} {
		var out, errOut bytes.Buffer
		if got := mainStatus(c.args, &out, &errOut); got != c.want {
			t.Errorf("pregao %v: status %d, want %d (%s%s)", c.args, got, c.want, out.String(), errOut.String())
		}
	}
}
