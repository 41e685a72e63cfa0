package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReloadSeriesFromStart: both reload results are exported at 0 before
// any reload, so that an alert on increase(...{result="error"}) fires on
// the first failure after a restart.
func TestReloadSeriesFromStart(t *testing.T) {
	ts := newTestServer(t, true)
	body := ts.do("GET", "/metrics", "", "").Body.String()
	for _, want := range []string{`pregao_snapshot_reloads_total{result="error"} 0`, `pregao_snapshot_reloads_total{result="ok"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// pregao_http_requests_in_flight counts a request from its route's start
// to its end: one while a stream waits to subscribe, none once it ended.
func TestRequestsInFlight(t *testing.T) {
	ls := newLiveStreamSetup(t)
	reg := prometheus.NewRegistry()
	api := ls.api(testKeys(t), reg)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.EndStreams()
	inFlight := func() float64 { return metricValue(t, reg, "pregao_http_requests_in_flight", "") }
	if n := inFlight(); n != 0 {
		t.Fatalf("in flight before any request: %v", n)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	defer func(h func()) { beforeStreamSubscribe = h }(beforeStreamSubscribe)
	beforeStreamSubscribe = func() {
		close(entered)
		<-release
		api.EndStreams()
	}
	done := make(chan struct{})
	go func() { // the answer's headers come after the subscription
		defer close(done)
		req, _ := http.NewRequest("GET", srv.URL+"/v2/stream/quotes?tickers="+ls.ld.tickers[0], nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream never reached its subscription")
	}
	if n := inFlight(); n != 1 {
		t.Errorf("in flight while the stream subscribes: %v, want 1", n)
	}
	close(release)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream ended by the shutdown is still open")
	}
	deadline := time.Now().Add(10 * time.Second)
	for inFlight() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the handler returns after the client saw the end
	}
	if n := inFlight(); n != 0 {
		t.Errorf("in flight after the stream ended: %v, want 0", n)
	}
}

// BenchmarkInFlightCount counts a request in and out from every core at
// once: with a Gauge (a compare-and-swap loop on a float, each way), as
// before, and with the atomic add the API uses.
func BenchmarkInFlightCount(b *testing.B) {
	b.Run("gauge", func(b *testing.B) {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "g"})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g.Inc()
				g.Dec()
			}
		})
	})
	b.Run("atomic", func(b *testing.B) {
		var m metrics
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.inflight.Add(1)
				m.inflight.Add(-1)
			}
		})
	})
}
