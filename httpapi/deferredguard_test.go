package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestDeferredKindsOnlyTheirRoutesWaitEOD is
// TestDeferredKindsOnlyTheirRoutesWait's first half with the eod plan's
// key: its view is an earlier session than the delayed plan's, and no
// request that is not declared to read the deferred kinds may read them
// there either (one that did would wait in the engine, unbounded, and
// answer from empty lists if the kinds then failed to load). Those it
// declares beyond the delayed key's (the valuations of the session the
// plan shows, whose dividend yield counts cash: valuing) wait, and
// once the kinds are in answer what the whole Dataset answers.
func TestDeferredKindsOnlyTheirRoutesWaitEOD(t *testing.T) {
	whole := newTestServer(t, true)
	ds, late := smallDeferred(t)
	part := deferredServer(t, ds)
	samples := deferredSamples(t, part)
	deferredSamples(t, whole)
	eod, ok := part.api.keys.Load().Lookup(testKeyEOD)
	if !ok || eod.Plan != PlanEOD {
		t.Fatalf("the eod test key: %+v", eod)
	}
	n := 0
	var waiting []deferredSample
	for _, s := range samples {
		if s.key != testKeyDelayed || s.waits() {
			continue
		}
		s.key = testKeyEOD
		c := &call{route: s.rt, body: []byte(s.body), key: eod, ds: ds, now: part.api.clock.Now()}
		if readsDeferred(part.api, c, httptest.NewRequest(s.method, s.path, nil)) {
			if !s.rt.valued {
				t.Errorf("%s %s: the eod key waits on a route that shows no valuation", s.method, s.path)
			}
			waiting = append(waiting, s)
			continue
		}
		n++
		answersAtOnce(t, whole, part, s)
	}
	if n < 50 || len(waiting) < 3 {
		t.Fatalf("only %d samples sent at once, %d waiting", n, len(waiting))
	}
	if err := ds.FinishDeferred(late, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range waiting {
		w, want := part.do(s.method, s.path, s.key, s.body), whole.do(s.method, s.path, s.key, s.body)
		if w.Code != want.Code || sameID(w.Body.String()) != sameID(want.Body.String()) {
			t.Errorf("%s %s (key %s) once the deferred kinds are in: %d %.300s\nwant %d %.300s", s.method, s.path, s.key, w.Code, w.Body, want.Code, want.Body)
		}
	}
	if w := part.do(http.MethodGet, "/readyz", "", ""); w.Code != 200 {
		t.Fatalf("/readyz: %d %s", w.Code, w.Body)
	}
}

// TestDeferredWaitsCounted: pregao_deferred_waits_total counts each
// request that waited for the deferred kinds, whether it was then
// answered or its client left; a request that does not read them, or
// one sent once they are in, is not counted.
func TestDeferredWaitsCounted(t *testing.T) {
	ds, late := smallDeferred(t)
	ts := deferredServer(t, ds)
	waits := func() float64 { return testutil.ToFloat64(ts.api.m.deferredWaits) }
	const doc = "/v2/companies/ENHZ/documents"
	pending := make(chan *httptest.ResponseRecorder, 2)
	for range 2 {
		go func() { pending <- ts.do(http.MethodGet, doc, testKeyDelayed, "") }()
	}
	for deadline := time.Now().Add(10 * time.Second); waits() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waits %v, want 2", waits())
		}
	}
	if w := ts.do(http.MethodGet, "/v2/quotes/ENHZ3/current", testKeyDelayed, ""); w.Code != 200 {
		t.Fatalf("quote: %d %s", w.Code, w.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, doc, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	if w.Body.Len() != 0 { // 499, nothing sent: TestClientGoneWhileDeferredIs499
		t.Fatalf("a request whose client left: %d %s", w.Code, w.Body)
	}
	if got := waits(); got != 3 {
		t.Fatalf("waits %v, want 3 (two waiting, one whose client left; the quote not)", got)
	}
	if err := ds.FinishDeferred(late, nil); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if w := <-pending; w.Code != 200 {
			t.Errorf("a request that waited: %d %s", w.Code, w.Body)
		}
	}
	if w := ts.do(http.MethodGet, doc, testKeyDelayed, ""); w.Code != 200 {
		t.Fatalf("documents once in: %d %s", w.Code, w.Body)
	}
	if got := waits(); got != 3 {
		t.Fatalf("waits %v after the kinds are in, want 3", got)
	}
}
