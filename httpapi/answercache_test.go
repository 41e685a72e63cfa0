package httpapi

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
)

// A repeated request is answered from the answer cache with the same
// bytes and headers (X-Total-Count too); another query, body, plan or
// representation is not; POST bodies key their answers.
func TestAnswerCache(t *testing.T) {
	ts := newTestServer(t, true)
	hits := func() float64 { return testutil.ToFloat64(ts.api.m.answerHits) }
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v2/companies/ENHZ/ratios?frequency=TTM", ""},
		{"GET", "/v2/companies/cash-corporate-actions?current=false&limit=2", ""},
		{"GET", "/v2/quotes/ENHZ3?start_date=2024-03-20&end_date=2024-03-27&format=csv", ""},
		{"POST", "/v2/quotes", `{"tickers":["ENHZ3","MSAZ3"],"type":"current"}`},
		{"POST", "/v2/screener", `{"primaryOnly":false}`},
	} {
		first := ts.do(c.method, c.path, testKeyDelayed, c.body)
		h0 := hits()
		again := ts.do(c.method, c.path, testKeyDelayed, c.body)
		if hits() != h0+1 {
			t.Errorf("%s %s: not answered from the cache", c.method, c.path)
		}
		if first.Code != 200 || again.Body.String() != first.Body.String() || again.Header().Get("Content-Type") != first.Header().Get("Content-Type") ||
			again.Header().Get("X-Total-Count") != first.Header().Get("X-Total-Count") || again.Header().Get("ETag") != first.Header().Get("ETag") {
			t.Errorf("%s %s: kept answer differs:\n%.200s\n%.200s", c.method, c.path, first.Body, again.Body)
		}
	}
	h0 := hits()
	ts.do("GET", "/v2/companies/ENHZ/ratios?frequency=ANNUAL", testKeyDelayed, "")
	ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"type":"current"}`)
	ts.do("GET", "/v2/companies/ENHZ/ratios?frequency=TTM", testKeyEOD, "")
	if hits() != h0 {
		t.Errorf("another query, body or plan hit the cache (%v hits)", hits()-h0)
	}
	// Errors are not kept.
	ts.do("GET", "/v2/companies/NOPE", testKeyDelayed, "")
	if w := ts.do("GET", "/v2/companies/NOPE", testKeyDelayed, ""); w.Code != 404 || hits() != h0 {
		t.Errorf("an error answer was kept")
	}
}

// The cache holds no more than its bound, never answers another request's
// bytes on a hash collision, and is off with a negative bound.
func TestAnswerCacheBounds(t *testing.T) {
	var ac answerCache
	ac.limit = 10_000
	for i := range 100 {
		ac.put(uint64(i), 7, make([]byte, 1000), "")
	}
	if b, n := ac.size(); b > ac.limit || n == 0 {
		t.Errorf("kept %d bytes in %d entries, bound %d", b, n, ac.limit)
	}
	ac.put(1<<40, 7, []byte("a"), "")
	if ac.get(1<<40, 8) != nil {
		t.Error("a different second hash got the entry")
	}
	if e := ac.get(1<<40, 7); e == nil || string(e.ans.raw) != "a" {
		t.Error("entry not found")
	}
	ac.put(1<<41, 7, make([]byte, maxCachedAnswer+1), "")
	if ac.get(1<<41, 7) != nil {
		t.Error("an answer over maxCachedAnswer was kept")
	}
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = -1
	api := New(cfg, store, testKeys(t), nil, prometheus.NewRegistry(), nil)
	off := &testServer{api: api, store: store}
	off.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	off.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	if n := testutil.ToFloat64(api.m.answerHits); n != 0 {
		t.Errorf("cache off: %v hits", n)
	}
	if b, _ := api.info(store.Current()).answers.size(); b != 0 {
		t.Errorf("cache off: %d bytes kept", b)
	}
}
