package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDeferredKindsOnlyTheirRoutesWaitEOD is
// TestDeferredKindsOnlyTheirRoutesWait's first half with the eod plan's
// key: its view is an earlier session than the delayed plan's, and no
// request that is not declared to read the deferred kinds may read them
// there either (one that did would wait in the engine, unbounded, and
// answer from empty lists if the kinds then failed to load).
func TestDeferredKindsOnlyTheirRoutesWaitEOD(t *testing.T) {
	whole := newTestServer(t, true)
	ds, late := smallDeferred(t)
	part := deferredServer(t, ds)
	samples := deferredSamples(t, part)
	deferredSamples(t, whole)
	n := 0
	for _, s := range samples {
		if s.key != testKeyDelayed || s.waits() {
			continue
		}
		n++
		s.key = testKeyEOD
		want := whole.do(s.method, s.path, s.key, s.body)
		got := make(chan *httptest.ResponseRecorder, 1)
		go func() { got <- part.do(s.method, s.path, s.key, s.body) }()
		select {
		case w := <-got:
			if w.Code != want.Code || sameID(w.Body.String()) != sameID(want.Body.String()) {
				t.Errorf("%s %s (eod) before the deferred kinds: %d %.300s\nwant %d %.300s", s.method, s.path, w.Code, w.Body, want.Code, want.Body)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s %s (eod) waits for the deferred kinds, but is not declared to read them (Route.Deferred)", s.method, s.path)
		}
	}
	if n < 50 {
		t.Fatalf("only %d samples sent", n)
	}
	if err := ds.FinishDeferred(late, nil); err != nil {
		t.Fatal(err)
	}
	if w := part.do(http.MethodGet, "/readyz", "", ""); w.Code != 200 {
		t.Fatalf("/readyz: %d %s", w.Code, w.Body)
	}
}
