package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/julienschmidt/httprouter"
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
		ac.put(uint64(i), 7, "k", kept{raw: make([]byte, 1000)}, nil)
	}
	if b, n := ac.size(); b > ac.limit || n == 0 {
		t.Errorf("kept %d bytes in %d entries, bound %d", b, n, ac.limit)
	}
	ac.put(1<<40, 7, "k", kept{raw: []byte("a")}, nil)
	if ac.get(1<<40, 8, "k") != nil {
		t.Error("a different second hash got the entry")
	}
	if e := ac.get(1<<40, 7, "k"); e == nil || string(e.ans.raw) != "a" {
		t.Error("entry not found")
	}
	ac.put(1<<41, 7, "k", kept{raw: make([]byte, maxCachedAnswer+1)}, nil)
	if ac.get(1<<41, 7, "k") != nil {
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

// A large answer (over maxCachedAnswer, streamed) is kept the second time
// it is asked, not the first, and sent whole afterwards with the same
// bytes; compressed requests get the kept bytes compressed; an answer over
// largeMax, or past the budget of captures in flight, is never kept.
func TestAnswerCacheLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a long-history dataset")
	}
	api, ds := longAPI(t, DefaultConfig())
	var tickers []string
	for _, as := range ds.Assets() {
		if len(tickers) < 20 { // an answer of about 16 MB
			tickers = append(tickers, as.Ticker)
		}
	}
	body := `{"tickers":["` + strings.Join(tickers, `","`) + `"],"type":"historical","start_date":"2000-01-01"}`
	setup := func(cacheBytes int64) *API {
		cfg := DefaultConfig()
		cfg.AnswerCacheBytes = cacheBytes
		a, _ := longAPI(t, cfg)
		return a
	}
	serve := func(api *API, enc string) *countingWriter {
		r, _ := http.NewRequest("POST", "/v2/quotes", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if enc != "" {
			r.Header.Set("Accept-Encoding", enc)
		}
		w := &countingWriter{h: http.Header{}, keep: &bytes.Buffer{}}
		api.ServeHTTP(w, r)
		if w.status != 200 {
			t.Fatalf("status %d", w.status)
		}
		return w
	}
	in := api.info(api.store.Current()) // the default bound
	first := serve(api, "")
	if first.n <= maxCachedAnswer || first.n > in.answers.largeMax() {
		t.Fatalf("answer of %d bytes: the test wants one over %d and up to %d", first.n, maxCachedAnswer, in.answers.largeMax())
	}
	kept := func() int64 { b, _ := in.answers.size(); return b }
	if kept() != 0 || first.maxWrite > 4<<20 { // the streaming budget (TestStreamedAnswerMemory)
		t.Fatalf("first request: %d bytes kept, largest write %d: a large answer asked once must be streamed and not kept", kept(), first.maxWrite)
	}
	second := serve(api, "")
	if kept() < second.n || !bytes.Equal(second.keep.Bytes(), first.keep.Bytes()) {
		t.Fatalf("second request: %d bytes kept for a %d-byte answer (or it differs)", kept(), second.n)
	}
	if api.captured.Load() != 0 {
		t.Errorf("captures in flight hold %d bytes after the request", api.captured.Load())
	}
	hits := testutil.ToFloat64(api.m.answerHits)
	third := serve(api, "")
	if chunks := (first.n + captureChunk - 1) / captureChunk; testutil.ToFloat64(api.m.answerHits) != hits+1 || third.writes > int(chunks) || !bytes.Equal(third.keep.Bytes(), first.keep.Bytes()) ||
		third.h.Get("Content-Length") != strconv.FormatInt(first.n, 10) {
		t.Fatalf("third request: %d writes, Content-Length %q, %d bytes: want the kept answer with its length, a write per kept chunk (%d)", third.writes, third.h.Get("Content-Length"), third.n, chunks)
	}
	gz := serve(api, "gzip")
	zr, err := gzip.NewReader(gz.keep)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if gz.h.Get("Content-Encoding") != "gzip" || !bytes.Equal(plain, first.keep.Bytes()) {
		t.Errorf("gzip request of a kept large answer: Content-Encoding %q, %d bytes once inflated", gz.h.Get("Content-Encoding"), len(plain))
	}
	for _, e := range in.answers.entries {
		if e.ans.gz.Load() != nil {
			t.Error("the compressed form of a large answer was kept")
		}
	}

	// A bound whose quarter is below the answer: never captured, however
	// often asked.
	small := setup(first.n * 3)
	sin := small.info(small.store.Current())
	for range 4 {
		serve(small, "")
	}
	if b, _ := sin.answers.size(); b != 0 {
		t.Errorf("an answer over largeMax (%d) was kept: %d bytes", sin.answers.largeMax(), b)
	}
	// The budget of captures in flight spent: the capture gives up.
	busy := setup(0)
	bin := busy.info(busy.store.Current())
	busy.captured.Store(captureBudget - 1<<20)
	serve(busy, "")
	serve(busy, "")
	if b, _ := bin.answers.size(); b != 0 || busy.captured.Load() != captureBudget-1<<20 {
		t.Errorf("captures over budget: %d bytes kept, %d held", b, busy.captured.Load())
	}
	busy.captured.Store(0)
	serve(busy, "")
	if b, _ := bin.answers.size(); b == 0 {
		t.Error("a capture given up for the budget is tried again the next time")
	}
}

// Large answers hold at most half of the bound: they evict large ones
// first, and never the small answers below that half.
func TestAnswerCacheLargeShare(t *testing.T) {
	var ac answerCache
	ac.limit = 16 * maxCachedAnswer // large answers: up to 4, within 8
	for i := range 100 {
		ac.put(uint64(i), 1, "k", kept{raw: make([]byte, 1000)}, nil)
	}
	_, small := ac.size()
	for i := range 20 {
		ac.put(uint64(1000+i), 1, "k", kept{raw: make([]byte, 2*maxCachedAnswer)}, nil)
		if ac.large > ac.limit/2 || ac.bytes > ac.limit {
			t.Fatalf("after %d large answers: %d bytes large, %d in all, bound %d", i+1, ac.large, ac.bytes, ac.limit)
		}
	}
	if _, n := ac.size(); n-3 != small { // 3 × (8 MiB + 256 B) within 32 MiB
		t.Errorf("%d entries, want the %d small ones and 3 large", n, small)
	}
	if ac.put(2000, 1, "k", kept{raw: make([]byte, ac.largeMax()+1)}, nil); ac.get(2000, 1, "k") != nil {
		t.Error("an answer over largeMax was kept")
	}
	var cnt int64
	for _, e := range ac.entries {
		cnt += e.size
	}
	if cnt != ac.bytes {
		t.Errorf("counted %d bytes, entries hold %d", ac.bytes, cnt)
	}
}

// A capture whose streamed answer fails halfway (the connection is cut),
// or whose handler panics, gives its bytes back to the budget of captures
// in flight.
func TestAnswerCacheCaptureCut(t *testing.T) {
	ts := newTestServer(t, true)
	fail, crash := false, false
	rt := &Route{Method: "GET", Path: "/test/large", serve: func(a *API, c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
		chunk := bytes.Repeat([]byte("x"), streamChunk)
		for range 20 { // 5 MiB, over maxCachedAnswer
			dst = c.flush(append(dst, chunk...))
		}
		if fail {
			return dst, errors.New("failed halfway")
		}
		if crash {
			panic("a handler bug")
		}
		return dst, nil
	}}
	h := ts.api.wrap(rt)
	serve := func() (cut bool) {
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					panic(p)
				}
				cut = true
			}
		}()
		r := httptest.NewRequest("GET", "/test/large", nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		h(httptest.NewRecorder(), r, nil)
		return false
	}
	serve() // noted by the doorkeeper
	fail = true
	if !serve() {
		t.Fatal("a failed streamed answer was not cut")
	}
	if n := ts.api.captured.Load(); n != 0 {
		t.Errorf("a cut capture holds %d bytes of the budget", n)
	}
	fail, crash = false, true // a panic after the answer started: recovered, 500 logged
	serve()
	if n := ts.api.captured.Load(); n != 0 {
		t.Errorf("the capture of a handler that panicked holds %d bytes of the budget", n)
	}
	crash = false
	fail = false
	serve()
	if b, _ := ts.api.info(ts.store.Current()).answers.size(); b < 20*streamChunk {
		t.Errorf("after the cut, the next request's answer was not kept (%d bytes kept)", b)
	}
}

// An answer of a page or more is kept in pages of the pool (the last
// part to its size, on the heap), and a flood of distinct such answers
// through a full cache reuses the pages the evicted ones give back
// instead of allocating an answer's size each time.
func TestKeptLargeAnswersReusePages(t *testing.T) {
	pages := &chunkPool{size: keptPage, maxFree: 8}
	ac := &answerCache{limit: 4 << 20, pool: &chunkPool{}, pages: pages}
	body := make([]byte, 7*keptPage+1000) // an as_of screener page's size
	for i := range body {
		body[i] = byte(i)
	}
	k := keptCopy(body, pages)
	if len(k.parts) != 8 || k.n != len(body) || cap(k.parts[0]) != keptPage || len(k.parts[7]) != 1000 || cap(k.parts[7]) >= keptPage {
		t.Fatalf("parts %d, n %d", len(k.parts), k.n)
	}
	ans := cachedAnswer{parts: k.parts, n: k.n}
	if got := ans.flat(); string(got) != string(body) {
		t.Fatal("the parts do not hold the answer")
	}
	for _, b := range k.parts {
		ac.give(b)
	}
	if small := keptCopy(body[:1000], pages); small.parts != nil || len(small.raw) != 1000 {
		t.Error("a small answer is not one copy")
	}
	for i := range 400 { // 400 distinct answers of 113 KiB through a 4 MiB cache
		k := keptCopy(body, pages)
		if !ac.put(uint64(i)+1, uint64(i)+1, "flood", k, nil) {
			t.Fatalf("answer %d not kept", i)
		}
	}
	b, n := ac.size()
	if b > ac.limit {
		t.Errorf("the cache holds %d bytes, bound %d", b, ac.limit)
	}
	// Pages made: those the kept answers hold, the free list, and the few
	// in between; not 7 per answer.
	if made, held := pages.made.Load(), int64(n*7+8+14); made > held {
		t.Errorf("%d pages made for %d answers kept at once (at most %d)", made, n, held)
	}
	if out := pages.out.Load(); out != int64(n*7) {
		t.Errorf("%d pages out, the %d answers kept hold %d", out, n, n*7)
	}
	// A page goes back to its own pool only: never a chunk of the other,
	// nor a heap slice of its size.
	ac.give(make([]byte, 0, keptPage))
	ac.give(make([]byte, 0, captureChunk))
	if pages.out.Load() != int64(n*7) || ac.pool.held() != 0 {
		t.Error("a slice the pools did not make was taken back")
	}
}

// A kept answer held in pages is sent as it was made, whole or
// compressed, and the cache's hit gives the same bytes.
func TestKeptPagesAnswerSent(t *testing.T) {
	ts := newTestServer(t, true)
	const path = "/v2/companies/ENHZ/ratios" // 37 KB
	first := ts.do("GET", path, testKeyDelayed, "")
	if first.Code != 200 || first.Body.Len() < keptPage {
		t.Fatalf("%d, %d bytes: want an answer of a page or more", first.Code, first.Body.Len())
	}
	out := ts.api.pages.out.Load()
	if out < int64(first.Body.Len()/keptPage) {
		t.Fatalf("%d pages out for an answer of %d bytes", out, first.Body.Len())
	}
	again := ts.do("GET", path, testKeyDelayed, "")
	if again.Body.String() != first.Body.String() {
		t.Error("the kept answer differs from the one made")
	}
	r := httptest.NewRequest("GET", path, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	r.Header.Set("Accept-Encoding", "gzip")
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	zr, err := gzip.NewReader(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(zr); string(got) != first.Body.String() {
		t.Error("the gzip form of the kept answer differs")
	}
}

// A call keeps no large answer-key scratch across requests: the
// canonical body and the query key of a large request are dropped.
func TestCallKeepsNoLargeKeyScratch(t *testing.T) {
	c := newCall()
	c.s.keyBody = make([]byte, 600<<10)
	c.s.qkey = make([]byte, 100<<10)
	c.s.canon.mem = make([]member, 10000)
	c.body = make([]byte, 0, 900<<10)
	c.reset()
	if cap(c.s.keyBody) > maxKeptScratch || cap(c.s.qkey) > maxKeptScratch || cap(c.s.canon.mem)*32 > maxKeptScratch {
		t.Errorf("kept: keyBody %d, qkey %d, canon %d", cap(c.s.keyBody), cap(c.s.qkey), cap(c.s.canon.mem))
	}
}

// The tables of bodies and queries seen hold a bounded number of bytes,
// counted (pregao_answer_cache_key_bytes), whatever the requests: long
// query strings are not kept in them.
func TestKeyTablesBounded(t *testing.T) {
	ts := newTestServer(t, true)
	long := strings.Repeat("X", 5000)
	for i := range 3000 {
		ts.do("GET", fmt.Sprintf("/v2/companies/ENHZ/ratios?ids=%s%d", long, i), testKeyDelayed, "")
		ts.do("GET", fmt.Sprintf("/v2/companies/ENHZ/ratios?ids=ID%d", i), testKeyDelayed, "")
		ts.do("POST", "/v2/screener", fmt.Sprintf(`{"limit":%d}%s`, 1+i%400, strings.Repeat(" ", i%7)), testKeyDelayed)
	}
	got := ts.api.keyBytes.Load()
	bound := int64(querySlots*(2*maxAliasQuery+aliasOverhead) + bodySlots*(int(unsafe.Sizeof(bodyAlias{}))+aliasOverhead))
	if got <= 0 || got > bound {
		t.Errorf("key tables: %d bytes, bound %d", got, bound)
	}
	var sum int64
	for i := range ts.api.queries {
		sum += ts.api.queries[i].Load().bytes()
	}
	for i := range ts.api.bodies {
		if ts.api.bodies[i].Load() != nil {
			sum += int64(unsafe.Sizeof(bodyAlias{})) + aliasOverhead
		}
	}
	if sum != got {
		t.Errorf("counted %d, held %d", got, sum)
	}
	if metricValue(t, ts.reg, "pregao_answer_cache_key_bytes", "") != float64(got) {
		t.Error("the metric is not the count")
	}
}

// When its Dataset is replaced, a cache gives its chunks back to the pool
// (they live outside the heap: nothing else would) and keeps nothing more.
func TestAnswerCacheClosedWithItsDataset(t *testing.T) {
	ts := newTestServer(t, true)
	a := ts.api
	in := a.info(a.store.Current())
	body := make([]byte, 2*keptPage+10)
	for i := range 3 {
		if !in.answers.put(uint64(i)+1, 1, "k", keptCopy(body, in.answers.pages), nil) {
			t.Fatal("not kept")
		}
	}
	sending := in.answers.get(1, 1, "k") // a request still sending one
	out0 := a.pages.out.Load() - 6       // the answers the requests before kept
	if got := a.pages.out.Load() - out0; got != 6 {
		t.Fatalf("%d pages out, want 6", got)
	}
	// A new Dataset (another copy of the same bundle's) is published and
	// served.
	next := *a.store.Current()
	a.store.Publish(&next)
	if w := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, ""); w.Code != 200 {
		t.Fatal(w.Code)
	}
	if got := a.pages.out.Load(); got != 2 {
		t.Errorf("%d pages out after the replace, want the 2 being sent", got)
	}
	sending.release(&in.answers)
	if got := a.pages.out.Load(); got != 0 {
		t.Errorf("%d pages out after the send", got)
	}
	if in.answers.put(9, 9, "k", kept{raw: []byte("x")}, nil) {
		t.Error("a closed cache kept an answer")
	}
}
