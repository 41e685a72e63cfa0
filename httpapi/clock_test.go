package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// serverAt returns a test server whose clock is stopped at t.
func serverAt(t *testing.T, at time.Time) *testServer {
	t.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(mustSmall(t))
	ts.api = New(DefaultConfig(), ts.store, testKeys(t), fixedClock(at), ts.reg, nil)
	return ts
}

func currentQuote(t *testing.T, ts *testServer, key, ticker string) map[string]any {
	t.Helper()
	body := `{"tickers":["` + ticker + `"],"type":"current"}`
	if key == testKeyEOD {
		body = `{"tickers":["` + ticker + `"]}`
	}
	w := ts.do("POST", "/v2/quotes", key, body)
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var m map[string]map[string]any
	json.Unmarshal(w.Body.Bytes(), &m)
	return m[ticker]
}

func TestDelayedPlanSeesFifteenMinutesAgo(t *testing.T) {
	// ENHZ3 has 1-minute bars at 13:00..13:03 UTC on 2024-03-28.
	day := time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		at        time.Time
		wantDate  string
		wantClose float64
	}{
		// 13:10: the cut-off is 12:55, before the first bar: the previous session.
		{day.Add(13*time.Hour + 10*time.Minute), "2024-03-27T00:00:00Z", 44.2},
		// 13:16:30: cut-off 13:01:30, only the 13:00 bar is complete.
		{day.Add(13*time.Hour + 16*time.Minute + 30*time.Second), "2024-03-28T13:00:00Z", 44.28},
		// 13:30: every bar is complete (the running session).
		{day.Add(13*time.Hour + 30*time.Minute), "2024-03-28T13:03:00Z", 44.02},
		// After the close and the delay: the daily session.
		{day.Add(21 * time.Hour), "2024-03-28T00:00:00Z", 44.75},
	}
	for _, tc := range cases {
		q := currentQuote(t, serverAt(t, tc.at), testKeyDelayed, "ENHZ3")
		if q["date"] != tc.wantDate || q["close_price"] != tc.wantClose {
			t.Errorf("at %v: %v %v, want %s %v", tc.at, q["date"], q["close_price"], tc.wantDate, tc.wantClose)
		}
	}
	// The same clocks for the eod plan: always the previous session.
	for _, at := range []time.Time{day.Add(13 * time.Hour), day.Add(21 * time.Hour)} {
		q := currentQuote(t, serverAt(t, at), testKeyEOD, "ENHZ3")
		if q["date"] != "2024-03-27T00:00:00Z" {
			t.Errorf("eod at %v: %v", at, q["date"])
		}
	}
	// Rankings follow the clock too (slow path): at 13:10 the last
	// complete session is 2024-03-27.
	w := serverAt(t, day.Add(13*time.Hour+10*time.Minute)).do("GET", "/v2/indexes/IBOV/highs", testKeyDelayed, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"updated_at":"2024-03-27T20:00:00Z"`) {
		t.Errorf("rankings at 13:10: %d %s", w.Code, w.Body)
	}
	// Historical daily bars exclude the session not yet closed.
	w = serverAt(t, day.Add(13*time.Hour)).do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"start_date":"2024-03-27","end_date":"2024-03-28"}`)
	if strings.Contains(w.Body.String(), "2024-03-28T00:00:00Z") || !strings.Contains(w.Body.String(), "2024-03-27T00:00:00Z") {
		t.Errorf("historical at 13:00: %s", w.Body)
	}
}

func TestSessionDate(t *testing.T) {
	// 01:00 UTC is still the previous day in Brasília (UTC-3).
	if d := sessionDate(time.Date(2024, 3, 28, 1, 0, 0, 0, time.UTC)); d != engine.MakeDate(2024, 3, 27) {
		t.Errorf("sessionDate = %v", d)
	}
}

func TestMetricsCountRoutes(t *testing.T) {
	ts := newTestServer(t, true)
	ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	ts.do("GET", "/v2/companies/NOPE", testKeyDelayed, "")
	ts.do("GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, "")
	ts.do("GET", "/v2/companies/ENHZ", "", "")
	ts.do("GET", "/v2/zzz", "", "")
	r := httptest.NewRequest("GET", "/metrics", nil)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	for _, want := range []string{
		`pregao_http_requests_total{code="200",route="/companies/:id"} 1`,
		`pregao_http_requests_total{code="404",route="/companies/:id"} 1`,
		`pregao_http_requests_total{code="401",route="/companies/:id"} 1`,
		`pregao_http_requests_total{code="200",route="/companies/cash-corporate-actions"} 1`,
		`pregao_http_requests_total{code="404",route="(unmatched)"} 1`,
		`pregao_http_request_duration_seconds_bucket{route="/companies/:id",le="2.5e-05"}`,
		`pregao_http_panics_total 0`,
	} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestWarmBuildsViews(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.Warm()
	in := ts.api.info(mustSmall(t))
	if in.delayed.Load() == nil || in.eod.Load() == nil {
		t.Error("Warm did not build the quote views")
	}
	New(DefaultConfig(), &engine.Store{}, nil, nil, nil, nil).Warm() // no dataset: no-op
}
