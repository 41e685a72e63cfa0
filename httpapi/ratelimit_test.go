package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	// The series follow the keys: the removed keys' go, as the
	// admission's per-key series do, so key churn does not grow them.
	if n := testutil.CollectAndCount(ts.api.m.rateLimited); n != 2 {
		t.Errorf("pregao_rate_limited_total: %d series for 2 keys", n)
	}
	ts.api.SetKeys(testKeys(t))
	if n, want := testutil.CollectAndCount(ts.api.m.rateLimited), testKeys(t).Len(); n != want {
		t.Errorf("pregao_rate_limited_total after the keys changed: %d series, want %d (app-one's and app-two's gone)", n, want)
	}
	ts.api.SetKeys(limitedKeys(t, nil))
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

// FuzzKeysFile: any keys file is read without a panic; one that reads is
// valid (known plans, limits ≥ 0 with a burst) and reads back the same
// after a write.
func FuzzKeysFile(f *testing.F) {
	f.Add([]byte(`{"keys":[{"name":"a","plan":"eod","sha256":"` + strings.Repeat("ab", 32) + `","created_at":"2026-01-01T00:00:00Z","limit":{"per_second":2.5}}],"limits":{"delayed":{"per_second":10,"burst":20}}}`))
	f.Add([]byte(`{"keys":[],"allow_empty":true}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"limits":{"eod":{"per_second":-1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "keys.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		kf, err := ReadKeysFile(path)
		if err != nil {
			return
		}
		k, err := NewKeys(kf)
		if err != nil {
			t.Fatalf("ReadKeysFile accepted what NewKeys refuses: %v", err)
		}
		for _, st := range k.byDigest {
			if st.lim != nil && (st.lim.limit.PerSecond <= 0 || st.lim.limit.Burst < 1) {
				t.Fatalf("limiter with %+v", st.lim.limit)
			}
		}
		if k.Len() != len(kf.Keys) {
			t.Fatalf("%d keys indexed of %d", k.Len(), len(kf.Keys))
		}
	})
}

// TestRateLimitedRemovedKey: a request past its key check when a keys
// reload removes its key, then answered 429, does not bring the removed
// key's pregao_rate_limited_total series back.
func TestRateLimitedRemovedKey(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.SetKeys(limitedKeys(t, nil))
	for range 2 { // app-one's burst
		if w := ts.do("GET", "/v2/companies", testKeyDelayed, ""); w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	r := httptest.NewRequest("GET", "/v2/companies", nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	c := newCall()
	c.out.begin(httptest.NewRecorder(), r, routeCompanies, ts.api)
	if st := ts.api.authenticate(c, r); st != 0 {
		t.Fatalf("key check: %d", st)
	}
	ts.api.SetKeys(testKeys(t)) // app-one and app-two go
	if st := ts.api.limit(c); st != 429 {
		t.Fatalf("limit: %d, want 429", st)
	}
	if n, want := testutil.CollectAndCount(ts.api.m.rateLimited), testKeys(t).Len(); n != want {
		t.Errorf("pregao_rate_limited_total: %d series, want %d (the removed key's counted back)", n, want)
	}
}
