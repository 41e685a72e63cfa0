package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
)

// lockedBuffer is a bytes.Buffer safe for the log's writer goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// loggedServer is a test server whose API logs to the returned buffer.
func loggedServer(t *testing.T, json bool, sample float64) (*testServer, *AccessLog, *lockedBuffer) {
	t.Helper()
	var buf lockedBuffer
	al := NewAccessLog(&buf, json, sample)
	t.Cleanup(al.Close)
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AccessLog = al
	ts.api = New(cfg, ts.store, testKeys(t), nil, ts.reg, nil)
	return ts, al, &buf
}

// One logfmt line per request, with the route template, status, the body
// bytes actually written, the key's name and the request id also sent in
// X-Request-Id; a client's valid id is kept, an invalid one replaced.
func TestAccessLogText(t *testing.T) {
	ts, al, buf := loggedServer(t, false, 1)
	ok := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	id := ok.Header().Get("X-Request-Id")
	if ok.Code != 200 || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
		t.Fatalf("status %d, X-Request-Id %q", ok.Code, id)
	}
	r := httptest.NewRequest("GET", "/v2/companies/ENHZ", nil)
	r.Header.Set("X-Request-Id", "lb-7f3a/42")
	kept := httptest.NewRecorder()
	ts.api.ServeHTTP(kept, r)
	r = httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set("X-Request-Id", "has space")
	replaced := httptest.NewRecorder()
	ts.api.ServeHTTP(replaced, r)
	ts.do("GET", "/nowhere", "", "")
	al.Close()

	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf)
	}
	want := []string{
		`method=GET route=/companies/:id path=/v2/companies/ENHZ status=200 bytes=` + strconv.Itoa(ok.Body.Len()) + ` duration=\S+ key=delayed request_id=` + id + ` remote=192.0.2.1:1234$`,
		`route=/companies/:id path=/v2/companies/ENHZ status=401 bytes=\d+ duration=\S+ key="" request_id=lb-7f3a/42 `,
		`route=/healthz path=/healthz status=200 .* key="" request_id=[0-9a-f]{16} `,
		`route=\(unmatched\) path=/nowhere status=404 `,
	}
	for i, w := range want {
		if !regexp.MustCompile(`^time=\S+Z level=INFO msg=access `).MatchString(lines[i]) || !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d:\n%s\nwant %s", i, lines[i], w)
		}
	}
	if got := kept.Header().Get("X-Request-Id"); got != "lb-7f3a/42" {
		t.Errorf("client's id answered as %q", got)
	}
	if got := replaced.Header().Get("X-Request-Id"); got == "has space" || len(got) != 16 {
		t.Errorf("invalid client id answered as %q", got)
	}
}

// The JSON lines parse, with numbers as numbers.
func TestAccessLogJSON(t *testing.T) {
	ts, al, buf := loggedServer(t, true, 1)
	w := ts.do("GET", `/v2/companies/EN"HZ`, testKeyEOD, "")
	al.Close()
	var e struct {
		Msg, Method, Route, Path, Key, RequestID string
		Status                                   int
		Bytes                                    int
		Duration                                 float64
	}
	line := strings.TrimSpace(buf.String())
	if err := json.Unmarshal([]byte(strings.ReplaceAll(line, "request_id", "requestid")), &e); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	if e.Msg != "access" || e.Route != "/companies/:id" || e.Path != `/v2/companies/EN"HZ` || e.Status != w.Code || e.Bytes != w.Body.Len() || e.Key != "eod" || e.RequestID != w.Header().Get("X-Request-Id") || e.Duration <= 0 {
		t.Errorf("line %s\nparsed %+v (answer %d, %d bytes)", line, e, w.Code, w.Body.Len())
	}
}

// Sampling keeps the fraction asked of ordinary answers and every 5xx.
func TestAccessLogSampling(t *testing.T) {
	none := &AccessLog{sample: 0}
	if none.sampled(200) || none.sampled(404) || !none.sampled(500) || !none.sampled(503) {
		t.Error("sample 0: want only 5xx")
	}
	tenth := &AccessLog{sample: 0.1}
	n := 0
	for range 100_000 {
		if tenth.sampled(200) {
			n++
		}
	}
	if n < 9_000 || n > 11_000 {
		t.Errorf("sample 0.1: %d of 100000 logged", n)
	}
	ts, al, buf := loggedServer(t, false, 0)
	ts.do("GET", "/healthz", "", "")
	ts.do("GET", "/v2/companies", testKeyDelayed, "")
	al.Close()
	if buf.String() != "" {
		t.Errorf("sample 0 logged 200s:\n%s", buf)
	}
}

// blockedWriter blocks every Write until released.
type blockedWriter struct{ release chan struct{} }

func (b blockedWriter) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

// A writer that falls behind costs lines, counted, never memory beyond
// the cap nor a request's time.
func TestAccessLogDropsWhenBehind(t *testing.T) {
	bw := blockedWriter{release: make(chan struct{})}
	al := NewAccessLog(bw, false, 1)
	reg := prometheus.NewRegistry()
	cfg := DefaultConfig()
	cfg.AccessLog = al
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	api := New(cfg, store, testKeys(t), nil, reg, nil)
	long := "/" + strings.Repeat("x", 300) // lines of ~500 bytes
	for range 3 * maxPending / 400 {
		api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", long, nil))
	}
	dropped := testutil.ToFloat64(api.m.logDropped)
	al.mu.Lock()
	pending := len(al.pending)
	al.mu.Unlock()
	if dropped == 0 || pending > maxPending {
		t.Errorf("dropped %v lines, %d bytes pending (cap %d)", dropped, pending, maxPending)
	}
	close(bw.release)
	al.Close()
	// Lines after Close are dropped, not written.
	api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", long, nil))
	if got := testutil.ToFloat64(api.m.logDropped); got != dropped+1 {
		t.Errorf("after Close: dropped %v, want %v", got, dropped+1)
	}
}

// Requests logged from many goroutines at once, with Close coming among
// them: every line is written once, whole and in the order it was added,
// or counted dropped; none is lost or torn.
func TestAccessLogConcurrentClose(t *testing.T) {
	ts, al, buf := loggedServer(t, false, 1)
	const workers, each = 8, 300
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if g == 0 && i == each/2 {
					al.Close() // among the others' requests
				}
				ts.api.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", fmt.Sprintf("/nowhere/%d/%d", g, i), nil))
			}
		}()
	}
	wg.Wait()
	path := regexp.MustCompile(` path=/nowhere/(\d+)/(\d+) status=404 `)
	seen, last := map[string]bool{}, map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		m := path.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(line, "time=") || !strings.Contains(line, " remote=") {
			t.Fatalf("a line torn or foreign: %q", line)
		}
		if seen[m[0]] {
			t.Fatalf("%s written twice", m[0])
		}
		seen[m[0]] = true
		i, _ := strconv.Atoi(m[2])
		if p, ok := last[m[1]]; ok && i < p { // one goroutine's requests, one after the other
			t.Fatalf("goroutine %s: request %d written after %d", m[1], i, p)
		}
		last[m[1]] = i
	}
	dropped := testutil.ToFloat64(ts.api.m.logDropped)
	if got := float64(len(seen)) + dropped; got != workers*each {
		t.Errorf("%d lines written and %v dropped, want %d in all", len(seen), dropped, workers*each)
	}
	if dropped == 0 || len(seen) == 0 {
		t.Errorf("%d written, %v dropped: Close did not fall among the requests", len(seen), dropped)
	}
}

// Logging a request allocates nothing: a client's id is kept, a made-up
// one comes from a batch (an allocation per 64 requests).
func TestAccessLogAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled items")
	}
	ts, _, _ := loggedServer(t, false, 1)
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set("X-Request-Id", "client-id")
	w := httptest.NewRecorder()
	plain := newTestServer(t, true)
	base := testing.AllocsPerRun(200, func() { w.Body.Reset(); clear(w.Header()); plain.api.ServeHTTP(w, r) })
	logged := testing.AllocsPerRun(200, func() { w.Body.Reset(); clear(w.Header()); ts.api.ServeHTTP(w, r) })
	if logged > base {
		t.Errorf("logged request: %.0f allocations, unlogged %.0f", logged, base)
	}
	r.Header.Del("X-Request-Id")
	madeUp := testing.AllocsPerRun(640, func() { w.Body.Reset(); clear(w.Header()); ts.api.ServeHTTP(w, r) })
	if madeUp > base+0.1 {
		t.Errorf("logged request with an id made up: %.2f allocations, unlogged %.0f", madeUp, base)
	}
}

// Made-up request ids are 16 hex digits, different from each other, from
// any number of goroutines; a header value given out is never changed.
func TestRequestIDs(t *testing.T) {
	const workers, each = 4, 1000
	got := make([][][]string, workers)
	batches := make([]*idBatch, workers) // each goroutine's, as a logWriter's
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				got[g] = append(got[g], newRequestIDHeader(&batches[g]))
			}
		}()
	}
	wg.Wait()
	hexID := regexp.MustCompile(`^[0-9a-f]{16}$`)
	seen := map[string]bool{}
	for _, hs := range got {
		for _, h := range hs {
			if len(h) != 1 || cap(h) != 1 || !hexID.MatchString(h[0]) {
				t.Fatalf("header value %q (cap %d): want one id of 16 hex digits, not appendable in place", h, cap(h))
			}
			if seen[h[0]] {
				t.Fatalf("id %s given twice", h[0])
			}
			seen[h[0]] = true
		}
	}
	first, last := got[0][0][0], got[0][each-1][0]
	for range 3 * idsPerBatch {
		newRequestIDHeader(&batches[0])
	}
	if got[0][each-1][0] != last {
		t.Errorf("a value given out changed from %s to %s", last, got[0][each-1][0])
	}
	if got[0][0][0] != first {
		t.Errorf("a value given out changed from %s to %s", first, got[0][0][0])
	}
}

// The cost of the access log on a small answer: off, every request
// logged, one in a hundred (the writer discards).
func BenchmarkAccessLog(b *testing.B) {
	for _, c := range []struct {
		name   string
		sample float64
		on     bool
	}{{"off", 0, false}, {"all", 1, true}, {"sample-0.01", 0.01, true}} {
		b.Run(c.name, func(b *testing.B) {
			store := &engine.Store{}
			store.Publish(mustSmall(b))
			cfg := DefaultConfig()
			if c.on {
				al := NewAccessLog(io.Discard, false, c.sample)
				defer al.Close()
				cfg.AccessLog = al
			}
			api := New(cfg, store, testKeys(b), nil, nil, nil)
			r := httptest.NewRequest("GET", "/v2/companies/ENHZ", nil)
			r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				w.Body.Reset()
				clear(w.Header())
				api.ServeHTTP(w, r)
			}
		})
	}
}

// A line's time is the one time.AppendFormat writes (UTC, milliseconds),
// the second formatted once and reused.
func TestAccessLogStamp(t *testing.T) {
	var l AccessLog
	base := time.Date(2026, 11, 26, 1, 2, 3, 0, time.FixedZone("BRT", -3*3600))
	for _, d := range []time.Duration{0, 999 * time.Millisecond, time.Second + 7*time.Millisecond, 59*time.Minute + 120*time.Millisecond, 30 * 24 * time.Hour, -time.Second + 5*time.Millisecond} {
		tm := base.Add(d)
		got := string(l.appendStamp(nil, tm))
		want := tm.UTC().Format("2006-01-02T15:04:05.000Z07:00")
		if got != want {
			t.Errorf("%v: %s, want %s", tm, got, want)
		}
	}
}

// A route's request is timed once: the access log's duration is the one
// the request-duration histogram observed.
func TestAccessLogDurationIsTheMetric(t *testing.T) {
	ts, al, buf := loggedServer(t, false, 1)
	if w := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, ""); w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	al.Close()
	m := regexp.MustCompile(` duration=(\S+) `).FindStringSubmatch(buf.String())
	if m == nil {
		t.Fatalf("no duration in %q", buf)
	}
	mfs, err := ts.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == "pregao_http_request_duration_seconds" {
			for _, mm := range mf.GetMetric() {
				sum += mm.GetHistogram().GetSampleSum()
				n += mm.GetHistogram().GetSampleCount()
			}
		}
	}
	if n != 1 {
		t.Fatalf("%d observations, want 1", n)
	}
	if want := strconv.FormatFloat(sum, 'f', 6, 64); m[1] != want || sum <= 0 {
		t.Errorf("logged duration %s s, histogram observed %s s", m[1], want)
	}
}

// A line's duration and status are the bytes strconv formats: the
// integer forms are checked against AppendFloat and AppendInt around
// every rounding edge, at the bound and past it, and on random
// durations.
func TestAppendSecondsAndStatus(t *testing.T) {
	float := func(d time.Duration) string { return string(strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64)) }
	check := func(d time.Duration) {
		t.Helper()
		if got, want := string(appendSeconds(nil, d)), float(d); got != want {
			t.Fatalf("%d ns: %s, want %s", int64(d), got, want)
		}
	}
	for _, base := range []time.Duration{0, time.Microsecond, time.Millisecond, 123456789, time.Second, 59 * time.Second, time.Hour, maxExactDuration - time.Second, maxExactDuration, 30 * 24 * time.Hour, 1 << 62} {
		for off := time.Duration(-1001); off <= 1001; off++ {
			check(base + off)
		}
	}
	check(math.MaxInt64)
	check(math.MinInt64)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		check(time.Duration(rng.Int64N(int64(2 * maxExactDuration))))
		check(time.Duration(rng.Int64N(int64(10 * time.Millisecond))))
	}
	for _, st := range []int{-1, 0, 7, 42, 99, 100, 200, 304, 404, 503, 999, 1000, 12345} {
		if got, want := string(appendStatus(nil, st)), strconv.Itoa(st); got != want {
			t.Errorf("status %d: %s, want %s", st, got, want)
		}
	}
}

func FuzzAppendSeconds(f *testing.F) {
	for _, d := range []int64{0, 500, 1500, 999999500, int64(maxExactDuration) - 500, int64(maxExactDuration), -1} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, ns int64) {
		d := time.Duration(ns)
		if got, want := string(appendSeconds(nil, d)), string(strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64)); got != want {
			t.Fatalf("%d ns: %s, want %s", ns, got, want)
		}
	})
}

// appendLogfmt quotes exactly the values with a byte its table marks.
func TestAppendLogfmtQuotes(t *testing.T) {
	for c := range 256 {
		s := "a" + string([]byte{byte(c)}) + "b"
		want := s
		if c <= ' ' || c >= 0x7f || c == '"' || c == '=' {
			want = strconv.Quote(s)
		}
		if got := string(appendLogfmt(nil, s)); got != want {
			t.Errorf("byte %#x: %s, want %s", c, got, want)
		}
	}
	if got := string(appendLogfmt(nil, "")); got != `""` {
		t.Errorf("empty: %s", got)
	}
}

// The cost of one access-log line, as text and as JSON.
func BenchmarkAccessLogLine(b *testing.B) {
	l := &AccessLog{}
	e := entry{start: time.Date(2026, 11, 26, 1, 2, 3, 456e6, time.UTC), method: "GET", route: "/indexes/:symbol/highs",
		path: "/v2/indexes/IBOV/highs", status: 200, bytes: 2207, duration: 38123 * time.Nanosecond,
		key: "perf", id: "cd8757f15c638407", remote: "127.0.0.1:40312"}
	var buf []byte
	b.Run("text", func(b *testing.B) {
		for b.Loop() {
			buf = e.appendText(buf[:0], l)
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			buf = e.appendJSON(buf[:0], l)
		}
	})
}
