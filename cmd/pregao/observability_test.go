package main

import (
	"bufio"
	"context"
	"github.com/pregao/pregao/httpapi"
	"io"
	"os"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// exportedMetrics starts serve on the small fixture, sends one API request
// and one reload, scrapes /metrics and returns every sample name it
// exposes: a counter or gauge by its name, a histogram as name_bucket,
// name_sum and name_count, a summary as name, name_sum and name_count.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitBound):
			t.Error("no shutdown")
		}
	}()
	base := "http://" + m.Addr()
	if code, body := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatalf("company %d %s", code, body)
	}
	// A limited plan, and a request over its limit: the rate-limited
	// counter has a series.
	if err := httpapi.UpdateKeysFile(keys, func(f *httpapi.KeysFile) error {
		f.Limits = map[string]httpapi.Limit{httpapi.PlanDelayed: {PerSecond: 0.001, Burst: 1}, httpapi.PlanEOD: {PerSecond: 0.001, Burst: 1}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	get(t, base+"/v2/companies/ENHZ", key)
	if code, body := get(t, base+"/v2/companies/ENHZ", key); code != 429 {
		t.Fatalf("over the limit: %d %s", code, body)
	}
	code, body := get(t, base+"/metrics", "")
	if code != 200 {
		t.Fatalf("metrics %d", code)
	}
	names := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		switch name := f[2]; f[3] {
		case "histogram":
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case "summary":
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}

// TestDeployMetricsExported: every metric name that the Grafana dashboard
// and the Prometheus rules in deploy/ use is one the server exports (up is
// Prometheus's own), and the dashboard shows what an operator needs. The
// PromQL itself is parsed by the deploy module's tests (cd deploy && go
// test ./...), which also check that every selector names a metric this
// test sees (prefix pregao_, go_ or process_, or up).
func TestDeployMetricsExported(t *testing.T) {
	exported := exportedMetrics(t)
	name := regexp.MustCompile(`\b(?:pregao|go|process)_[a-zA-Z0-9_:]*[a-zA-Z0-9]`)
	files := map[string][]string{}
	for _, f := range []string{"../../deploy/grafana/pregao.json", "../../deploy/prometheus/alerts.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		for _, n := range name.FindAllString(string(b), -1) {
			used[n] = true
		}
		for n := range used {
			files[f] = append(files[f], n)
			if strings.HasPrefix(n, "process_") && runtime.GOOS != "linux" {
				continue // the process collector exports these on Linux only
			}
			if !exported[n] {
				t.Errorf("%s uses %s, which the server does not export", strings.TrimPrefix(f, "../../"), n)
			}
		}
		sort.Strings(files[f])
	}
	dash := map[string]bool{}
	for _, n := range files["../../deploy/grafana/pregao.json"] {
		dash[n] = true
	}
	for _, want := range []string{
		"pregao_http_requests_total", "pregao_http_request_duration_seconds_bucket",
		"pregao_http_requests_in_flight", "pregao_snapshot_age_seconds", "pregao_snapshot_reloads_total",
		"pregao_build_info", "pregao_keys_loaded", "pregao_rate_limited_total", "go_memstats_heap_inuse_bytes", "go_gc_duration_seconds_count",
	} {
		if !dash[want] {
			t.Errorf("the dashboard does not show %s", want)
		}
	}
	if len(files["../../deploy/prometheus/alerts.yml"]) == 0 {
		t.Error("the alerting rules use no pregao metric")
	}
}
