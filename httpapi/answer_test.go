package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
)

// Requests that ask the same thing in other words (parameter order, a
// zero-padded integer, a date for its midnight, case of a folded enum, a
// JSON body's whitespace and member order) get the same ETag and the same
// kept answer; requests that ask something else do not.
func TestAnswerKeyNormalized(t *testing.T) {
	ts := newTestServer(t, true)
	hits := func() float64 { return testutil.ToFloat64(ts.api.m.answerHits) }
	same := []struct{ method, a, b, bodyA, bodyB string }{
		{"GET", "/v2/companies/cash-corporate-actions?current=false&limit=2", "/v2/companies/cash-corporate-actions?limit=02&current=false", "", ""},
		{"GET", "/v2/companies/cash-corporate-actions?limit=3&start_date=2024-01-01", "/v2/companies/cash-corporate-actions?start_date=2024-01-01T00:00:00Z&limit=3&offset=", "", ""},
		{"GET", "/v2/quotes/ENHZ3?type=historical&start_date=2024-03-20&end_date=2024-03-27&format=csv", "/v2/quotes/ENHZ3?format=CSV&end_date=2024-03-27&start_date=2024-03-20&type=historical", "", ""},
		{"POST", "/v2/quotes", "/v2/quotes", `{"tickers":["ENHZ3","MSAZ3"],"type":"current"}`, "{ \"type\" : \"current\",\n \"tickers\" : [ \"ENHZ3\" ,\t\"MSAZ3\" ] }"},
		{"POST", "/v2/screener", "/v2/screener", `{"primaryOnly":false,"limit":5}`, `{"limit":5, "primaryOnly":false}`},
	}
	for _, c := range same {
		first := ts.do(c.method, c.a, testKeyDelayed, c.bodyA)
		h0 := hits()
		again := ts.do(c.method, c.b, testKeyDelayed, c.bodyB)
		if first.Code != 200 || again.Code != 200 {
			t.Fatalf("%s %s: status %d / %d: %s %s", c.method, c.a, first.Code, again.Code, first.Body, again.Body)
		}
		if hits() != h0+1 || again.Body.String() != first.Body.String() || again.Header().Get("ETag") != first.Header().Get("ETag") {
			t.Errorf("%s %s and %s: not the same answer (hit %v, ETags %s %s)", c.method, c.a+c.bodyA, c.b+c.bodyB, hits()-h0, first.Header().Get("ETag"), again.Header().Get("ETag"))
		}
	}
	other := []struct{ method, a, b, bodyA, bodyB string }{
		{"GET", "/v2/companies/cash-corporate-actions?limit=2", "/v2/companies/cash-corporate-actions?limit=3", "", ""},
		{"GET", "/v2/quotes/ENHZ3?type=historical&start_date=2024-03-20", "/v2/quotes/ENHZ3?type=historical&start_date=2024-03-20&format=csv", "", ""},
		{"POST", "/v2/quotes", "/v2/quotes", `{"tickers":["ENHZ3","MSAZ3"],"type":"current"}`, `{"tickers":["MSAZ3","ENHZ3"],"type":"current"}`},
	}
	for _, c := range other {
		first := ts.do(c.method, c.a, testKeyDelayed, c.bodyA)
		h0 := hits()
		again := ts.do(c.method, c.b, testKeyDelayed, c.bodyB)
		if hits() != h0 || (c.method == "GET" && again.Header().Get("ETag") == first.Header().Get("ETag")) {
			t.Errorf("%s %s and %s: answered as the same request", c.method, c.a+c.bodyA, c.b+c.bodyB)
		}
	}
}

// An error answer carries no validators, so a client that sends back an
// ETag it saw never turns an error into a 304.
func TestErrorsHaveNoValidators(t *testing.T) {
	ts := newTestServer(t, true)
	for _, path := range []string{"/v2/companies/NOPE", "/v2/companies/ENHZ/ratios?frequency=MONTHLY", "/v2/companies?nope=1", "/v2/quotes/ENHZ3?format=xml"} {
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Code < 400 {
			t.Fatalf("%s: status %d", path, w.Code)
		}
		if w.Header().Get("ETag") != "" || w.Header().Get("Last-Modified") != "" || strings.Contains(w.Header().Get("Cache-Control"), "max-age") {
			t.Errorf("%s: error %d with validators: ETag %q, Last-Modified %q, Cache-Control %q", path, w.Code, w.Header().Get("ETag"), w.Header().Get("Last-Modified"), w.Header().Get("Cache-Control"))
		}
	}
	// The ETag a 200 carries, sent back on a request that fails, is not
	// a 304 either (the query's error comes first).
	ok := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	r := httptest.NewRequest("GET", "/v2/companies/ENHZ?nope=1", nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	r.Header.Set("If-None-Match", ok.Header().Get("ETag"))
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	checkError(t, w, 400, "nope")
}

// A missing header and an unknown key are told apart.
func TestAuthMessages(t *testing.T) {
	ts := newTestServer(t, true)
	checkError(t, ts.do("GET", "/v2/ratios/catalog", "", ""), 401, "send the header Authorization")
	checkError(t, ts.do("GET", "/v2/ratios/catalog", "pg_wrong", ""), 401, "unknown API key")
}

// Requests without a valid key are limited per client address: past the
// burst they still get the 401 the specification asks for, with
// Retry-After, counted and logged once per trip; valid keys from the same
// address, and other addresses, are not slowed.
func TestAuthFailuresLimited(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AuthFailures = &Limit{PerSecond: 0.001, Burst: 3}
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	api := New(cfg, store, testKeys(t), nil, reg, slog.New(slog.NewTextHandler(&logs, nil)))
	do := func(key, remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v2/ratios/catalog", nil)
		r.RemoteAddr = remote
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w
	}
	for i := range 3 {
		checkError(t, do("pg_guess"+strconv.Itoa(i), "198.51.100.7:4000"), 401, "unknown API key")
	}
	for i := range 5 {
		w := do("pg_more"+strconv.Itoa(i), "198.51.100.7:4001") // another port, the same address
		checkError(t, w, 401, "unknown API key (check it, or ask for a new one); too many requests without a valid API key from this address: retry in")
		if w.Header().Get("Retry-After") == "" || w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("limited 401: Retry-After %q, WWW-Authenticate %q", w.Header().Get("Retry-After"), w.Header().Get("WWW-Authenticate"))
		}
	}
	checkError(t, do("", "198.51.100.7:4002"), 401, "send the header Authorization")
	if w := do(testKeyDelayed, "198.51.100.7:4003"); w.Code != 200 {
		t.Errorf("a valid key from a limited address: status %d", w.Code)
	}
	if w := do("pg_guess", "203.0.113.9:4000"); w.Header().Get("Retry-After") != "" {
		t.Errorf("another address: Retry-After %q", w.Header().Get("Retry-After"))
	}
	if got := metricValue(t, reg, "pregao_auth_failures_total", "limited"); got != 6 {
		t.Errorf("limited: %v, want 6", got)
	}
	if got := metricValue(t, reg, "pregao_auth_failures_total", "refused"); got != 4 {
		t.Errorf("refused: %v, want 4", got)
	}
	if n := strings.Count(logs.String(), "requests without a valid API key limited"); n != 1 {
		t.Errorf("the trip was logged %d times, want once:\n%s", n, logs.String())
	}
	// Off: PerSecond 0.
	cfg.AuthFailures = &Limit{}
	off := New(cfg, store, testKeys(t), nil, nil, nil)
	for range 50 {
		r := httptest.NewRequest("GET", "/v2/ratios/catalog", nil)
		w := httptest.NewRecorder()
		off.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Fatalf("limit off: status %d", w.Code)
		}
	}
}

// A client that keeps retrying a wrong key faster than the limit makes one
// trip, logged once, however long it keeps on: not a line each time a
// token comes back (26 lines in 5 s before). Once the bucket is full
// again the next trip is logged anew.
func TestAuthFailuresOneLogPerTrip(t *testing.T) {
	var logs bytes.Buffer
	al := newAuthLimiter(Limit{PerSecond: 5, Burst: 20}, slog.New(slog.NewTextHandler(&logs, nil)))
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	limited := 0
	for i := range 500 { // 100 a second for 5 s
		if _, ok := al.fail("192.0.2.1:5000", t0.Add(time.Duration(i)*10*time.Millisecond)); !ok {
			limited++
		}
	}
	if n := strings.Count(logs.String(), "limited"); n != 1 || limited < 400 {
		t.Fatalf("5 s at 100/s: %d log lines, %d limited; want 1 line, over 400 limited:\n%s", n, limited, logs.String())
	}
	// Quiet for less than the refill of the burst (4 s): the same trip.
	t1 := t0.Add(5*time.Second + 3*time.Second)
	for i := range 100 {
		al.fail("192.0.2.1:5000", t1.Add(time.Duration(i)*10*time.Millisecond))
	}
	if n := strings.Count(logs.String(), "limited"); n != 1 {
		t.Fatalf("after a 3 s pause: %d log lines, want 1", n)
	}
	// Quiet long enough for the bucket to be full: a new trip.
	t2 := t1.Add(time.Second + 5*time.Second)
	for i := range 100 {
		al.fail("192.0.2.1:5000", t2.Add(time.Duration(i)*10*time.Millisecond))
	}
	if n := strings.Count(logs.String(), "limited"); n != 2 {
		t.Fatalf("after a 5 s pause: %d log lines, want 2", n)
	}
}

// An IPv6 client holds a whole /64 (a host picks its addresses in it at
// will): its addresses share one bucket, so that stepping through them
// does not give it a fresh burst each. Another /64, and IPv4 addresses
// (also written as IPv4-mapped IPv6), keep buckets of their own.
func TestAuthFailuresIPv6Prefix(t *testing.T) {
	al := newAuthLimiter(Limit{PerSecond: 0.001, Burst: 20}, slog.New(slog.DiscardHandler))
	now := time.Unix(1e9, 0)
	refused := 0
	for i := range 1000 {
		if _, ok := al.fail("[2001:db8:1:2:"+strconv.FormatInt(int64(i), 16)+"::1]:4000", now); ok {
			refused++
		}
	}
	if refused != 20 {
		t.Errorf("1000 addresses of one /64: %d refused unlimited, want the burst of 20", refused)
	}
	for _, remote := range []string{"[2001:db8:1:3::1]:4000", "198.51.100.7:4000", "[::ffff:198.51.100.8]:4000"} {
		if _, ok := al.fail(remote, now); !ok {
			t.Errorf("%s: limited by another prefix's failures", remote)
		}
	}
	for range 19 {
		al.fail("198.51.100.7:4001", now)
	}
	if _, ok := al.fail("[::ffff:198.51.100.7]:4000", now); ok {
		t.Error("an IPv4 address written as IPv4-mapped IPv6 has a bucket of its own")
	}
}

// The buckets' table is bounded whatever the number of addresses.
func TestAuthLimiterBounded(t *testing.T) {
	al := newAuthLimiter(Limit{PerSecond: 1, Burst: 1}, slog.New(slog.DiscardHandler))
	now := time.Unix(1e9, 0)
	for i := range 100_000 {
		al.fail("10."+strconv.Itoa(i>>16)+"."+strconv.Itoa(i>>8&255)+"."+strconv.Itoa(i&255)+":1", now)
	}
	if len(al.slots) != authSlots {
		t.Errorf("%d slots for 100,000 addresses, want %d", len(al.slots), authSlots)
	}
}

// One key flooding distinct requests churns its own answers: the entries
// another key made stay, and an entry a second key asked for no longer
// counts in its maker's share.
func TestAnswerCacheFair(t *testing.T) {
	var ac answerCache
	ac.limit = 1 << 20
	for i := range 100 { // b: 100 × 3 KiB, a third of the bound
		ac.put(uint64(i), 1, "b", kept{raw: make([]byte, 3<<10)}, nil)
	}
	for i := range 5000 { // a: 15 MiB of distinct answers
		ac.put(uint64(1000+i), 1, "a", kept{raw: make([]byte, 3<<10)}, nil)
	}
	for i := range 100 {
		if ac.get(uint64(i), 1, "b") == nil {
			t.Fatalf("b's answer %d was evicted by a's flood", i)
		}
	}
	if b, _ := ac.size(); b > ac.limit {
		t.Errorf("%d bytes kept, bound %d", b, ac.limit)
	}
	a := ac.owned["a"]
	// b asks for one of a's entries: shared, out of a's share.
	k := a.keys[0]
	before := a.bytes
	if ac.get(k, 1, "b") == nil {
		t.Fatal("a's entry not found")
	}
	if ac.owned["a"].bytes >= before || !ac.entries[k].shared.Load() {
		t.Error("an entry asked by two keys still counts in its maker's share")
	}
	checkOwned(t, &ac)
}

// checkOwned checks the cache's bookkeeping: every entry not shared is in
// its owner's list at its place, and the counts add up.
func checkOwned(t *testing.T, ac *answerCache) {
	t.Helper()
	var all, large int64
	for k, e := range ac.entries {
		all += e.size
		if isLarge(e.ans.size()) {
			large += e.size
		}
		if e.shared.Load() {
			continue
		}
		o := ac.owned[e.owner]
		if o == nil || e.pos >= len(o.keys) || o.keys[e.pos] != k {
			t.Fatalf("entry %d of %q not at its place in its owner's list", k, e.owner)
		}
	}
	if all != ac.bytes || large != ac.large {
		t.Errorf("counted %d bytes (%d large), entries hold %d (%d)", ac.bytes, ac.large, all, large)
	}
}

// The compressed forms of kept answers count against the bound, and stop
// counting when their answer goes.
func TestAnswerCacheCountsForms(t *testing.T) {
	var ac answerCache
	ac.limit = 1 << 20
	body := bytes.Repeat([]byte(`{"ticker":"ENHZ3","close_price":44.52},`), 1000)
	ac.put(1, 1, "k", kept{raw: body}, nil)
	before, _ := ac.size()
	e := ac.get(1, 1, "k")
	gz, _ := e.ans.encoded(encGzip)
	zs, _ := e.ans.encoded(encZstd)
	e.ans.encoded(encGzip) // made once
	after, _ := ac.size()
	if after != before+int64(cap(gz)+cap(zs)) {
		t.Errorf("with its forms: %d bytes, want %d + %d + %d", after, before, cap(gz), cap(zs))
	}
	ac.mu.Lock()
	ac.remove(1, ac.entries[1])
	ac.mu.Unlock()
	var want int64
	for _, e := range ac.entries {
		want += e.size
	}
	if b, _ := ac.size(); b != want {
		t.Errorf("after eviction: %d bytes counted, entries hold %d (forms of an evicted entry still counted?)", b, want)
	}
}

// The chunks of a captured answer evicted while a request sends it go back
// to the pool only when that request is done.
func TestAnswerCacheEvictWhileSending(t *testing.T) {
	var ac answerCache
	ac.limit = 8 << 20
	ac.pool = &chunkPool{}
	var budget atomic.Int64
	var k capture
	k.start(ac.largeMax(), &budget, ac.pool)
	k.add(bytes.Repeat([]byte("x"), 3*captureChunk))
	parts, n := k.handOver()
	if !ac.put(1, 1, "k", kept{parts: parts, n: n}, nil) || budget.Load() != 0 {
		t.Fatalf("not kept, or the budget still holds %d", budget.Load())
	}
	e := ac.get(1, 1, "k") // a request sending it
	if e == nil {
		t.Fatal("not found")
	}
	ac.mu.Lock()
	ac.remove(1, ac.entries[1]) // evicted
	ac.mu.Unlock()
	if ac.get(1, 1, "k") != nil || ac.pool.held() != 0 {
		t.Fatalf("evicted entry: found again, or its chunks pooled (%d bytes) while being sent", ac.pool.held())
	}
	if got := string(e.ans.flat()); got != strings.Repeat("x", 3*captureChunk) {
		t.Fatal("the bytes of an entry being sent changed")
	}
	e.release(&ac)
	if ac.pool.held() != 3*captureChunk {
		t.Errorf("after the send: %d bytes pooled, want the 3 chunks", ac.pool.held())
	}
}

// A flood of distinct 3 MB answers, each asked twice, holds the cache to
// its bound in memory: the captured chunks are kept without copies and
// reused after eviction, so the heap after a collection stays within the
// bound, and the flood allocates a fraction of what it sends.
func TestAnswerCacheFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.2 GB")
	}
	ts := newTestServer(t, true)
	chunk := bytes.Repeat([]byte("y"), streamChunk)
	rt := &Route{Method: "GET", Path: "/test/flood", Params: []Param{{Name: "n", In: InQuery, Type: TypeInteger, Min: 0, Max: 1 << 20}},
		serve: func(a *API, c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
			q := c.query(r)
			q.integer("n")
			if err := q.err(); err != nil {
				return nil, err
			}
			for range 12 { // 3 MiB
				dst = c.flush(append(dst, chunk...))
			}
			return dst, nil
		}}
	h := ts.api.wrap(rt)
	serve := func(n int) {
		r := httptest.NewRequest("GET", "/test/flood?n="+strconv.Itoa(n), nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		w := &countingWriter{h: http.Header{}}
		h(w, r, nil)
		if w.status != 200 || w.n != 12*streamChunk {
			t.Fatalf("status %d, %d bytes", w.status, w.n)
		}
	}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	rss0 := rssBytes()
	for n := range 200 {
		serve(n)
		serve(n)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	kept, entries := ts.api.info(ts.store.Current()).answers.size()
	grown := int64(m1.HeapInuse) - int64(m0.HeapInuse)
	allocated := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("bound %d MiB: %d entries, %d MiB kept; heap in use after a collection +%d MiB, allocated %d MiB for 1200 MiB sent; resident +%d MiB",
		DefaultAnswerCacheBytes>>20, entries, kept>>20, grown>>20, allocated>>20, (rssBytes()-rss0)>>20)
	if kept > DefaultAnswerCacheBytes || entries < 35 {
		t.Errorf("%d bytes kept in %d entries, bound %d", kept, entries, DefaultAnswerCacheBytes)
	}
	if limit := int64(DefaultAnswerCacheBytes + maxFreeChunks*captureChunk + 16<<20); grown > limit {
		t.Errorf("heap in use grew %d MiB, over the bound and the pool (%d MiB)", grown>>20, limit>>20)
	}
	if allocated > 400<<20 {
		t.Errorf("the flood allocated %d MiB: captures are copied or not reused", allocated>>20)
	}
	if n := ts.api.captured.Load(); n != 0 {
		t.Errorf("captures in flight hold %d bytes after the flood", n)
	}
}

// rssBytes is the process's resident size (Linux; 0 elsewhere).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// The cache's size and evictions are metrics.
func TestAnswerCacheMetrics(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = 64 << 10
	reg := prometheus.NewRegistry()
	ts := &testServer{api: New(cfg, store, testKeys(t), nil, reg, nil), store: store, reg: reg}
	for _, id := range []string{"ENHZ", "MSAZ", "ENHZ3", "MSAZ3", "ENHZ4"} {
		ts.do("GET", "/v2/companies/"+id+"/ratios", testKeyDelayed, "")
	}
	b, n := ts.api.info(store.Current()).answers.size()
	if got := metricValue(t, reg, "pregao_answer_cache_bytes", ""); got != float64(b) || b == 0 {
		t.Errorf("pregao_answer_cache_bytes %v, cache %d", got, b)
	}
	if got := metricValue(t, reg, "pregao_answer_cache_entries", ""); got != float64(n) {
		t.Errorf("pregao_answer_cache_entries %v, cache %d", got, n)
	}
	if got := metricValue(t, reg, "pregao_answer_cache_evictions_total", ""); got == 0 {
		t.Error("no eviction counted with a 64 KiB bound")
	}
}

// FuzzCanonicalJSON: the canonical form of a JSON document is JSON, means
// the same, and is its own canonical form.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2,{"d":null,"c":"x"}]}`, ` { "a" : "\"}" } `, `[]`, `{}`, `"s"`, `-1.5e3`, `{"a":1,"a":2}`, `{"tickers":["A"],"type":"current"}`, `[1,]`, `{"a"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var c canonJSON
		out, ok := c.appendCanonical(nil, src)
		if !ok {
			return
		}
		if !json.Valid(src) {
			return // a document the handler refuses anyway
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form of %q is not JSON: %q", src, out)
		}
		var x, y any
		if json.Unmarshal(src, &x) != nil || json.Unmarshal(out, &y) != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("%q and its canonical form %q differ", src, out)
		}
		again, ok := c.appendCanonical(nil, out)
		if !ok || !bytes.Equal(again, out) {
			t.Fatalf("canonical form not stable: %q -> %q", out, again)
		}
	})
}

// metricValue returns the value of a counter or gauge of reg: the series
// with a label of that value, or the first one when label is "".
func metricValue(tb testing.TB, reg *prometheus.Registry, name, label string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			if label != "" && (len(m.Label) == 0 || m.Label[0].GetValue() != label) {
				continue
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// FuzzCanonicalFast: the compact form, when it says its members are in
// order, is the canonical form the sorting path makes.
func FuzzCanonicalFast(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[2, 3]}`, ` {"b":1,"a":2}`, `[1 ,2]`, `{"a":"x y"}`, `1 2`, `{"a":tr ue}`, `{"a":{"c":1,"b":2}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		fast, sorted, ok := appendCompact(nil, src)
		if !ok || !sorted || !json.Valid(src) {
			return
		}
		var c canonJSON
		c.src = src
		slow, _, ok := c.value(nil, skipWS(src, 0), 0)
		if !ok || !bytes.Equal(fast, slow) {
			t.Fatalf("%q: compact %q, canonical %q (%v)", src, fast, slow, ok)
		}
	})
}

// A call keeps its buffers across requests, but not a push's body.
func TestCallResetDropsLargeBody(t *testing.T) {
	c := newCall()
	c.body = make([]byte, 10, 64<<10)
	c.reset()
	if cap(c.body) != 64<<10 || len(c.body) != 0 {
		t.Errorf("a 64 KiB body buffer: cap %d, len %d after reset", cap(c.body), len(c.body))
	}
	c.body = make([]byte, 10, 2<<20)
	c.reset()
	if cap(c.body) != 0 {
		t.Errorf("a 2 MiB body buffer kept by the pooled call (cap %d)", cap(c.body))
	}
}
