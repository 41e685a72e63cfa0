package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// smallDeferred builds the small bundle's Dataset with its deferred kinds
// left out, and returns them for FinishDeferred.
func smallDeferred(tb testing.TB) (ds *engine.Dataset, late *engine.Universe) {
	tb.Helper()
	u, err := bundle.Read(smallBundle)
	if err != nil {
		tb.Fatal(err)
	}
	if u.Derived, err = ratios.Derive(u); err != nil {
		tb.Fatal(err)
	}
	late = &engine.Universe{CashActions: u.CashActions, FundReports: u.FundReports, InsiderReports: u.InsiderReports, Documents: u.Documents}
	u.CashActions, u.FundReports, u.InsiderReports, u.Documents = nil, nil, nil, nil
	if ds, err = engine.BuildWith(u, engine.BuildOptions{Deferred: true}); err != nil {
		tb.Fatal(err)
	}
	return ds, late
}

// deferredServer serves ds as serve serves its first snapshot.
func deferredServer(tb testing.TB, ds *engine.Dataset) *testServer {
	tb.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.api = New(DefaultConfig(), ts.store, testKeys(tb), nil, ts.reg, nil)
	ts.api.SetFiles(&fakeFiles{dir: tb.TempDir()})
	ts.api.PrepareLater(ds, "", time.Time{})
	ts.store.Publish(ds)
	ts.api.Published()
	return ts
}

// deferredSample is one request of every route's samples.
type deferredSample struct {
	rt                *Route
	method, path, key string
	body              string
}

// deferredSamples returns, for every route that answers from the
// Dataset, its sample request, then one with each of its query
// parameters.
func deferredSamples(t *testing.T, ts *testServer) []deferredSample {
	var out []deferredSample
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Root || rt.Admin || rt.Stream {
			continue
		}
		base, body, key := samplePath(rt), sampleBody(rt), sampleKey(t, ts, rt)
		out = append(out, deferredSample{rt, rt.Method, base, key, body})
		for j := range rt.Params {
			if p := &rt.Params[j]; p.In == InQuery {
				out = append(out, deferredSample{rt, rt.Method, base + "?" + url.Values{p.Name: {sampleValue(rt, p)}}.Encode(), key, body})
			}
		}
	}
	return out
}

// waits reports whether s waits for the deferred kinds (readsDeferred).
func (s deferredSample) waits() bool {
	r := httptest.NewRequest(s.method, s.path, nil)
	return readsDeferred(nil, &call{route: s.rt, body: []byte(s.body)}, r)
}

// TestDeferredKindsOnlyTheirRoutesWait serves the small Dataset with its
// deferred kinds left out, as serve's first snapshot is: every request
// that is not declared to read them answers at once what the whole
// Dataset answers (one that read them would wait in the engine, and the
// test would stop on its deadline); those declared wait, and once the
// kinds are in answer what the whole Dataset answers.
func TestDeferredKindsOnlyTheirRoutesWait(t *testing.T) {
	whole := newTestServer(t, true)
	ds, late := smallDeferred(t)
	part := deferredServer(t, ds)
	if w := part.do(http.MethodGet, "/readyz", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"deferred":"loading"`) {
		t.Fatalf("/readyz while deferred: %d %s", w.Code, w.Body)
	}
	samples := deferredSamples(t, part)
	deferredSamples(t, whole) // the same keys and sinks
	var waiting []deferredSample
	declared := map[*Route]bool{}
	for _, s := range samples {
		if s.waits() {
			waiting = append(waiting, s)
			declared[s.rt] = true
			continue
		}
		answersAtOnce(t, whole, part, s)
	}
	for i := range routeTable {
		if rt := &routeTable[i]; rt.Deferred && !declared[rt] {
			t.Errorf("%s %s: declared Deferred, but no sample waits", rt.Method, rt.Path)
		}
	}
	if len(waiting) < 12 {
		t.Fatalf("%d requests wait: the declarations are not read", len(waiting))
	}
	// A request that ends before the kinds are in is not kept waiting
	// (nothing is sent: its client left; a 499 in the log and metrics).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := waiting[0]
	r := httptest.NewRequestWithContext(ctx, s.method, s.path, strings.NewReader(s.body))
	r.Header.Set("Authorization", "Bearer "+s.key)
	w := httptest.NewRecorder()
	part.api.ServeHTTP(w, r)
	if w.Body.Len() != 0 || w.Header().Get("Retry-After") != "" {
		t.Fatalf("%s %s ended while waiting: %d %s", s.method, s.path, w.Code, w.Body)
	}
	// One that waits longer than deferredWaitMax is told to retry.
	defer func(d time.Duration) { deferredWaitMax = d }(deferredWaitMax)
	deferredWaitMax = time.Millisecond
	if w := part.do(s.method, s.path, s.key, s.body); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "still loading") {
		t.Fatalf("%s %s past the wait's bound: %d %s", s.method, s.path, w.Code, w.Body)
	}
	deferredWaitMax = time.Hour
	// One waits, then answers; then the others answer (sent one at a
	// time: a key's burst released at once meets its admission share).
	pending := make(chan *httptest.ResponseRecorder, 1)
	go func() { pending <- part.do(waiting[1].method, waiting[1].path, waiting[1].key, waiting[1].body) }()
	if err := ds.FinishDeferred(late, nil); err != nil {
		t.Fatal(err)
	}
	for i, s := range waiting[1:] {
		var w *httptest.ResponseRecorder
		if i == 0 {
			w = <-pending
		} else {
			w = part.do(s.method, s.path, s.key, s.body)
		}
		want := whole.do(s.method, s.path, s.key, s.body)
		if w.Code != want.Code || sameID(w.Body.String()) != sameID(want.Body.String()) {
			t.Errorf("%s %s after the deferred kinds: %d %.300s\nwant %d %.300s", s.method, s.path, w.Code, w.Body, want.Code, want.Body)
		}
	}
	if w := part.do(http.MethodGet, "/readyz", "", ""); w.Code != 200 || strings.Contains(w.Body.String(), "deferred") {
		t.Fatalf("/readyz once the deferred kinds are in: %d %s", w.Code, w.Body)
	}
}

// snapshotID is the files list's snapshot id, which names a Dataset (the
// two servers' differ).
var snapshotID = regexp.MustCompile(`"snapshot":"[0-9a-f]+"`)

// answersAtOnce checks that s, a request not declared to read the
// deferred kinds, is answered by part (its kinds held back) at once and
// as whole (the Dataset with them) answers it.
func answersAtOnce(t *testing.T, whole, part *testServer, s deferredSample) {
	t.Helper()
	want := whole.do(s.method, s.path, s.key, s.body)
	got := make(chan *httptest.ResponseRecorder, 1)
	go func() { got <- part.do(s.method, s.path, s.key, s.body) }()
	select {
	case w := <-got:
		if w.Code != want.Code || sameID(w.Body.String()) != sameID(want.Body.String()) {
			t.Errorf("%s %s (key %s) before the deferred kinds: %d %.300s\nwant %d %.300s", s.method, s.path, s.key, w.Code, w.Body, want.Code, want.Body)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s %s (key %s) waits for the deferred kinds, but is not declared to read them (Route.Deferred)", s.method, s.path, s.key)
	}
}

// sameID returns body with its snapshot id, if any, left out.
func sameID(body string) string { return snapshotID.ReplaceAllString(body, `"snapshot":""`) }

// TestReadsDeferredLiveScreener: beside a live session the screener
// reprices the dividend yield with the session's cash, a deferred kind:
// it waits for them; without one it does not.
func TestReadsDeferredLiveScreener(t *testing.T) {
	var rt *Route
	for i := range routeTable {
		if routeTable[i].Path == routeScreener {
			rt = &routeTable[i]
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/v2/screener", nil)
	if readsDeferred(nil, &call{route: rt, body: []byte(`{}`)}, r) {
		t.Error("the screener without a live session waits for the deferred kinds")
	}
	if !readsDeferred(nil, &call{route: rt, body: []byte(`{}`), live: &engine.Live{}}, r) {
		t.Error("the screener beside a live session does not wait for the deferred kinds")
	}
}

// TestDeferredKindsFailed: a Dataset whose deferred kinds could not be
// loaded answers no request (503 with Retry-After, as a damaged
// snapshot), and /readyz says why.
func TestDeferredKindsFailed(t *testing.T) {
	ds, _ := smallDeferred(t)
	ts := deferredServer(t, ds)
	pending := make(chan *httptest.ResponseRecorder, 1)
	go func() { pending <- ts.do(http.MethodGet, "/v2/companies/ENHZ/documents", testKeyDelayed, "") }()
	if err := ds.FinishDeferred(nil, errors.New("cash_actions: bad part")); err == nil {
		t.Fatal("FinishDeferred with a load error returned nil")
	}
	for _, w := range []*httptest.ResponseRecorder{
		<-pending,
		ts.do(http.MethodGet, "/v2/companies/ENHZ/documents", testKeyDelayed, ""),
		ts.do(http.MethodGet, "/v2/quotes/ENHZ3/current", testKeyDelayed, ""),
	} {
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "could not be loaded whole") {
			t.Errorf("after a failed deferred load: %d %s", w.Code, w.Body)
		}
	}
	if w := ts.do(http.MethodGet, "/readyz", "", ""); w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "bad part") {
		t.Fatalf("/readyz: %d %s", w.Code, w.Body)
	}
}
