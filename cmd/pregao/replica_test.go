package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/httpapi"
)

// TestReplicas (make replica-test; PREGAO_REPLICA_BIN=pregao binary,
// PREGAO_SOAK_SNAPSHOT=snapshot, nginx on PATH) runs two `pregao serve`
// replicas that load their snapshot from a local object store (an HTTP
// origin with ETags), behind an nginx load balancer; it sends an open-loop
// load through nginx, publishes a new snapshot to the store while it runs,
// waits for both replicas to pick it up, and fails on any failed request.
func TestReplicas(t *testing.T) {
	bin, src := os.Getenv("PREGAO_REPLICA_BIN"), os.Getenv("PREGAO_SOAK_SNAPSHOT")
	if bin == "" || src == "" {
		t.Skip("set PREGAO_REPLICA_BIN and PREGAO_SOAK_SNAPSHOT (make replica-test)")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install nginx)")
	}
	rate := 500.0
	if v := os.Getenv("PREGAO_SOAK_RATE"); v != "" {
		rate, _ = strconv.ParseFloat(v, 64)
	}
	snapA, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The new publication: the same data rebuilt is the same bytes, so
	// the test publishes the same file under a new version (ETag): every
	// replica downloads, verifies and loads it as it would new data.
	var mu sync.Mutex
	body, etag := snapA, `"a"`
	gets := map[string]int{}
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, tag := body, etag
		if r.Header.Get("If-None-Match") != tag {
			gets[tag]++
		}
		mu.Unlock()
		w.Header().Set("ETag", tag)
		http.ServeContent(w, r, "latest.snap", time.Unix(0, 0), bytes.NewReader(b))
	}))
	defer origin.Close()

	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.json")
	var key string
	if err := httpapi.UpdateKeysFile(keys, func(f *httpapi.KeysFile) (err error) {
		key, err = f.AddKey("replicas", httpapi.PlanDelayed, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := range 2 {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "serve", "--snapshot", origin.URL+"/snaps/latest.snap", "--snapshot-cache", filepath.Join(dir, "cache"+strconv.Itoa(i)),
			"--keys", keys, "--addr", addr, "--watch", "1s")
		log, _ := os.Create(filepath.Join(dir, "replica"+strconv.Itoa(i)+".log"))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
		addrs = append(addrs, addr)
	}
	for _, a := range addrs {
		waitReady(t, "http://"+a+"/readyz", waitBound)
	}
	lb := freeAddr(t)
	conf := fmt.Sprintf(`pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
worker_processes 1;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  upstream pregao { server %[2]s max_fails=0; server %[3]s max_fails=0; keepalive 64; }
  server {
    listen %[4]s;
    location / {
      proxy_pass http://pregao;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`, dir, addrs[0], addrs[1], lb)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ng := exec.Command(nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	ng.Stderr = os.Stderr
	if err := ng.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ng.Process.Signal(os.Interrupt); ng.Wait() }()
	waitReady(t, "http://"+lb+"/readyz", waitBound)

	paths := []string{"/v2/quotes/PETR4?type=current", "/v2/indexes/IBOV/highs?limit=10", "/v2/companies?show_sector=true"}
	if code, _ := getStatus("http://"+lb+paths[0], key); code != 200 {
		paths[0] = "/v2/ratios/catalog" // a snapshot without PETR4
	}
	const dur = 40 * time.Second
	start := time.Now()
	done := make(chan []loadSample)
	go func() { done <- openLoad("http://"+lb, paths, key, rate, dur, start) }()
	time.Sleep(10 * time.Second)
	mu.Lock()
	etag = `"b"`
	mu.Unlock()
	published := time.Since(start)
	var switched []time.Duration
	for _, a := range addrs {
		switched = append(switched, waitReloaded(t, "http://"+a+"/metrics", waitBound).Sub(start))
	}
	samples := <-done
	failed := 0
	var lat []time.Duration
	for _, s := range samples {
		if !s.ok {
			failed++
		}
		lat = append(lat, s.lat)
	}
	mu.Lock()
	t.Logf("%d requests at %.0f/s through nginx to 2 replicas, %d failed; p50 %v, p99 %v", len(samples), rate, failed, quantile(lat, .5), quantile(lat, .99))
	t.Logf("new snapshot published at %.1fs; replicas serving it at %.1fs and %.1fs; downloads of it: %d (one per replica)", published.Seconds(), switched[0].Seconds(), switched[1].Seconds(), gets[`"b"`])
	mu.Unlock()
	if failed > 0 {
		t.Errorf("%d requests failed", failed)
	}
}

// freeAddr returns a loopback address free now, for a server the test
// starts on it (and may stop and start again on the same address). Its
// port is below the kernel's ephemeral range, where no other listener
// asking for any port (another package's test server) and no outgoing
// connection is given it meanwhile. (A port from the ephemeral range,
// closed here and bound again at a restart, can be: a restarted
// embedded stream server that cannot listen leaves its session retrying
// the stream, disconnected, for the rest of the test, the way
// TestServeLiveEmbedded failed once under a full parallel run.)
func freeAddr(t *testing.T) string {
	t.Helper()
	low := ephemeralLow()
	for range 200 {
		port := 20000 + rand.IntN(max(low-20000, 1))
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken
		}
		l.Close()
		return l.Addr().String()
	}
	t.Fatal("no free port below the ephemeral range")
	return ""
}

// ephemeralLow returns the first port of the kernel's ephemeral range
// (Linux's ip_local_port_range; 32768, its default, elsewhere).
func ephemeralLow() int {
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 21000 {
				return n
			}
		}
	}
	return 32768
}

func getStatus(url, key string) (int, error) {
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func waitReady(t *testing.T, url string, within time.Duration) {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if code, _ := getStatus(url, ""); code == 200 {
			return
		}
	}
	t.Fatalf("%s not ready within %v", url, within)
}

// waitReloaded waits until the replica's pregao_snapshot_reloads_total
// {result="ok"} is at least 1 and returns the time it saw it.
func waitReloaded(t *testing.T, metrics string, within time.Duration) time.Time {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(metrics)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, `pregao_snapshot_reloads_total{result="ok"}`) && !strings.HasSuffix(l, " 0") {
				resp.Body.Close()
				return time.Now()
			}
		}
		resp.Body.Close()
	}
	t.Fatalf("%s: no reload within %v", metrics, within)
	return time.Time{}
}
