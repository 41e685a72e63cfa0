package httpapi

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// freshSmall builds a Dataset of the small bundle of its own (mustSmall's
// is shared, and never collected).
func freshSmall(tb testing.TB) *engine.Dataset {
	tb.Helper()
	u, err := bundle.Read(smallBundle)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := ratios.Derive(u)
	if err != nil {
		tb.Fatal(err)
	}
	u.Derived = d
	ds, err := engine.Build(u)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

// heldWriter is a ResponseRecorder whose first Write waits for release
// (after telling writing): a request in flight on its Dataset.
type heldWriter struct {
	*httptest.ResponseRecorder
	writing, release chan struct{}
	held             bool
}

func (w *heldWriter) Write(b []byte) (int, error) {
	if !w.held {
		w.held = true
		close(w.writing)
		<-w.release
	}
	return w.ResponseRecorder.Write(b)
}

// warmRequests are answered before the publish: they fill the replaced
// Dataset's info, quote views, screener and answer cache.
var warmRequests = []struct{ method, path, body string }{
	{"GET", "/v2/companies", ""},
	{"GET", "/v2/companies/ENHZ", ""},
	{"GET", "/v2/companies?search=energia", ""},
	{"GET", "/v2/quotes/ENHZ3?type=current", ""},
	{"GET", "/v2/quotes/ENHZ3", ""},
	{"POST", "/v2/quotes", `{"tickers":["ENHZ3"]}`},
	{"POST", "/v2/screener", `{}`},
	{"GET", "/v2/companies/cash-corporate-actions", ""},
	{"GET", "/v2/sectors", ""},
	{"GET", "/v2/ratios/catalog", ""},
	{"GET", "/v2/traded-funds/GSUL11/ratios", ""},
	{"GET", "/v2/indexes/IBOV", ""},
}

// After a publish and Published, nothing of the API holds the replaced
// Dataset: an idle server (no request after the publish) lets it be
// collected, and so does one whose request on it, in flight across the
// publish, finishes afterwards.
func TestPublishedDropsReplacedDataset(t *testing.T) {
	for _, inflight := range []bool{false, true} {
		store := &engine.Store{}
		old := freshSmall(t)
		store.Publish(old)
		api := New(DefaultConfig(), store, testKeys(t), nil, nil, nil)
		api.Prepare(old, "0123456789abcdef", old.AsOf())
		api.Published()
		for range 2 { // the second time from the answer cache
			for _, r := range warmRequests {
				req := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
				req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
				w := httptest.NewRecorder()
				api.ServeHTTP(w, req)
				if w.Code >= 500 {
					t.Fatalf("%s %s: %d %s", r.method, r.path, w.Code, w.Body)
				}
			}
		}
		var done chan struct{}
		var hw *heldWriter
		if inflight {
			hw = &heldWriter{ResponseRecorder: httptest.NewRecorder(), writing: make(chan struct{}), release: make(chan struct{})}
			done = make(chan struct{})
			req := httptest.NewRequest("GET", "/v2/companies/ENHZ?show_sector=true", nil)
			req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			go func() {
				defer close(done)
				api.ServeHTTP(hw, req)
			}()
			<-hw.writing
		}
		wp := weak.Make(old)
		next := freshSmall(t)
		api.Prepare(next, "fedcba9876543210", next.AsOf())
		store.Publish(next)
		api.Published()
		old = nil
		if inflight {
			close(hw.release)
			<-done
			if hw.Code != http.StatusOK {
				t.Errorf("the request in flight: %d %s", hw.Code, hw.Body)
			}
		}
		for range 2 {
			runtime.GC()
		}
		if wp.Value() != nil {
			t.Errorf("in flight %v: the replaced Dataset is still reachable", inflight)
		}
		runtime.KeepAlive(next)
		runtime.KeepAlive(api) // a serving API
	}
}

// With a live session, a priced answer's X-Live-Seq value is made once
// per batch and kept: it holds no session, whose base is the Dataset a
// publish then replaces.
func TestPublishedLiveDropsReplacedDataset(t *testing.T) {
	store := &engine.Store{}
	old := freshSmall(t)
	store.Publish(old)
	api := New(DefaultConfig(), store, testKeys(t), nil, nil, nil)
	api.Published()
	sd := old.LastSession() + 1
	if err := store.StartLive(sd); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.ApplyLive(&engine.LiveBatch{Seq: 7, Session: sd, Bars: []engine.LiveBar{}}); !ok || err != nil {
		t.Fatalf("batch: %v %v", ok, err)
	}
	get := func() string {
		req := httptest.NewRequest("GET", "/v2/quotes/ENHZ3?type=current", nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		return w.Header().Get("X-Live-Seq")
	}
	if h := get(); h != "7" {
		t.Fatalf("X-Live-Seq %q, want 7", h)
	}
	wp := weak.Make(old)
	next := freshSmall(t)
	store.Publish(next)
	api.Published()
	old = nil
	for range 2 {
		runtime.GC()
	}
	if wp.Value() != nil {
		t.Error("the replaced Dataset is still reachable")
	}
	if h := get(); h != "7" {
		t.Errorf("after the publish: X-Live-Seq %q, want 7", h)
	}
	runtime.KeepAlive(next)
	runtime.KeepAlive(api)
}
