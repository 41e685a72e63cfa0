package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// limitedKeys: the delayed plan limited to 1 request a second in bursts of
// 2, the eod key overriding it with no limit... or with its own.
func limitedKeys(t *testing.T, eodLimit *Limit) *Keys {
	t.Helper()
	f := KeysFile{Limits: map[string]Limit{PlanDelayed: {PerSecond: 0.001, Burst: 2}}}
	for _, k := range []struct{ key, name, plan string }{{testKeyDelayed, "app-one", PlanDelayed}, {testKeyEOD, "app-two", PlanEOD}} {
		_, e, err := NewKey(k.name, k.plan, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		e.SHA256 = sha256Hex(k.key)
		if k.plan == PlanEOD {
			e.Limit = eodLimit
		}
		f.Keys = append(f.Keys, e)
	}
	keys, err := NewKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func TestRateLimit(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.SetKeys(limitedKeys(t, nil))
	for i, want := range []string{"1", "0"} {
		w := ts.do("GET", "/v2/companies", testKeyDelayed, "")
		if w.Code != 200 || w.Header().Get("RateLimit-Limit") != "2" || w.Header().Get("RateLimit-Remaining") != want || w.Header().Get("RateLimit-Reset") == "" {
			t.Fatalf("request %d: %d, headers %v", i, w.Code, w.Header())
		}
	}
	w := ts.do("GET", "/v2/companies", testKeyDelayed, "")
	var e struct{ Error struct{ Status int } }
	if w.Code != 429 || json.Unmarshal(w.Body.Bytes(), &e) != nil || e.Error.Status != 429 ||
		w.Header().Get("Retry-After") == "" || w.Header().Get("RateLimit-Remaining") != "0" {
		t.Fatalf("third request: %d %s %v", w.Code, w.Body, w.Header())
	}
	if !strings.Contains(w.Body.String(), "retry in") {
		t.Errorf("message %s", w.Body)
	}
	// The eod plan has no limit: its key is unaffected and carries no header.
	for range 5 {
		if w := ts.do("GET", "/v2/companies", testKeyEOD, ""); w.Code != 200 || w.Header().Get("RateLimit-Limit") != "" {
			t.Fatalf("eod key: %d %v", w.Code, w.Header())
		}
	}
	if got := testutil.ToFloat64(ts.api.m.rateLimited.WithLabelValues("app-one")); got != 1 {
		t.Errorf("pregao_rate_limited_total{key=app-one} = %v, want 1", got)
	}
	// A reload of the same keys keeps the emptied bucket.
	ts.api.SetKeys(limitedKeys(t, nil))
	if w := ts.do("GET", "/v2/companies", testKeyDelayed, ""); w.Code != 429 {
		t.Errorf("after a reload: %d, want the bucket kept (429)", w.Code)
	}
	// Public routes are never limited.
	if w := ts.do("GET", "/healthz", "", ""); w.Code != 200 {
		t.Errorf("healthz: %d", w.Code)
	}
}

// TestRateLimitPerKey: a key's own limit overrides its plan's.
func TestRateLimitPerKey(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.SetKeys(limitedKeys(t, &Limit{PerSecond: 0.001, Burst: 1}))
	if w := ts.do("GET", "/v2/companies", testKeyEOD, ""); w.Code != 200 || w.Header().Get("RateLimit-Limit") != "1" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	if w := ts.do("GET", "/v2/companies", testKeyEOD, ""); w.Code != 429 {
		t.Fatalf("second: %d", w.Code)
	}
}

func TestLimitsValidated(t *testing.T) {
	for _, f := range []KeysFile{
		{Limits: map[string]Limit{"gold": {PerSecond: 1}}},
		{Limits: map[string]Limit{PlanEOD: {PerSecond: -1}}},
		{Limits: map[string]Limit{PlanEOD: {PerSecond: 1, Burst: -2}}},
		{Keys: []KeyEntry{{Name: "x", Plan: PlanEOD, SHA256: sha256Hex("pg_x"), Limit: &Limit{PerSecond: -3}}}},
	} {
		if _, err := NewKeys(f); err == nil {
			t.Errorf("%+v: accepted", f)
		}
	}
	k, err := NewKeys(KeysFile{Limits: map[string]Limit{PlanEOD: {PerSecond: 2.5}}, Keys: []KeyEntry{{Name: "x", Plan: PlanEOD, SHA256: sha256Hex("pg_x")}}})
	if err != nil || k.find("pg_x").lim.limit.Burst != 3 {
		t.Errorf("default burst: %v %+v", err, k)
	}
}
