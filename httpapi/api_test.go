package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// smallBundle is the small hand-written bundle the golden answers come from.
const smallBundle = "testdata/small"

var (
	smallOnce sync.Once
	smallDS   *engine.Dataset
	smallErr  error
)

// mustSmall loads the small bundle once: bundle.Read, ratios.Derive,
// engine.Build.
func mustSmall(tb testing.TB) *engine.Dataset {
	tb.Helper()
	smallOnce.Do(func() {
		u, err := bundle.Read(smallBundle)
		if err != nil {
			smallErr = err
			return
		}
		d, err := ratios.Derive(u)
		if err != nil {
			smallErr = err
			return
		}
		u.Derived = d
		smallDS, smallErr = engine.Build(u)

	})
	if smallErr != nil {
		tb.Fatalf("loading %s: %v", smallBundle, smallErr)
	}
	return smallDS
}

const (
	testKeyDelayed = "pg_00000000000000000000000000000001"
	testKeyEOD     = "pg_00000000000000000000000000000002"
)

func testKeys(tb testing.TB) *Keys {
	tb.Helper()
	var f KeysFile
	for _, k := range []struct{ key, name, plan string }{{testKeyDelayed, "delayed", PlanDelayed}, {testKeyEOD, "eod", PlanEOD}} {
		_, e, err := NewKey(k.name, k.plan, time.Unix(0, 0))
		if err != nil {
			tb.Fatal(err)
		}
		e.SHA256 = sha256Hex(k.key)
		f.Keys = append(f.Keys, e)
	}
	keys, err := NewKeys(f)
	if err != nil {
		tb.Fatal(err)
	}
	return keys
}

type testServer struct {
	api   *API
	store *engine.Store
	reg   *prometheus.Registry
}

func newTestServer(tb testing.TB, publish bool) *testServer {
	tb.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	if publish {
		ts.store.Publish(mustSmall(tb))
	}
	ts.api = New(DefaultConfig(), ts.store, testKeys(tb), nil, ts.reg, nil)
	ts.api.SetFiles(&fakeFiles{dir: tb.TempDir()})
	return ts
}

// do serves one request and returns the recorder.
func (ts *testServer) do(method, path, key, body string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

// checkError checks an error answer: status, JSON content type and body
// {"error":{"status":N,"message":"..."}} whose message contains want.
func checkError(tb testing.TB, w *httptest.ResponseRecorder, status int, want string) {
	tb.Helper()
	if w.Code != status {
		tb.Errorf("status %d, want %d; body %s", w.Code, status, w.Body)
		return
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type %q", ct)
	}
	var e struct {
		Error struct {
			Status  int    `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(w.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		tb.Errorf("error body %s: %v", w.Body, err)
		return
	}
	if e.Error.Status != status || !strings.Contains(e.Error.Message, want) {
		tb.Errorf("error body %s; want status %d and message containing %q", w.Body, status, want)
	}
}

// golden compares body (re-indented) with testdata/name.golden.json.
func golden(tb testing.TB, name string, body []byte) {
	tb.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		tb.Fatalf("%s: invalid JSON %v: %s", name, err, body)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		tb.Fatal(err)
	}
	buf.WriteByte('\n')
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test ./httpapi -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		tb.Errorf("%s differs from %s (go test ./httpapi -update to accept):\n%s", name, path, buf.String())
	}
}

func TestRouterBuilds(t *testing.T) {
	// Building the router must not panic (httprouter refuses conflicting
	// static and parameter segments) with any prefix.
	for _, p := range []string{"/v2", "", "/api/v9/"} {
		cfg := DefaultConfig()
		cfg.Prefix = p
		New(cfg, &engine.Store{}, nil, nil, prometheus.NewRegistry(), nil)
	}
}

// TestHealthzVersion: /healthz reports Config.Version, JSON-escaped.
func TestHealthzVersion(t *testing.T) {
	f := func(version, want string) {
		t.Helper()
		cfg := DefaultConfig()
		cfg.Version = version
		a := New(cfg, &engine.Store{}, testKeys(t), nil, nil, nil)
		w := httptest.NewRecorder()
		a.ServeHTTP(w, httptest.NewRequest("GET", "/healthz", nil))
		if w.Code != 200 || w.Body.String() != want {
			t.Errorf("version %q: %d %s, want %s", version, w.Code, w.Body, want)
		}
	}
	f("v1.2.3", `{"status":"ok","version":"v1.2.3"}`)
	f("v0.1.0-3-gabc1234-dirty", `{"status":"ok","version":"v0.1.0-3-gabc1234-dirty"}`)
	f(`odd"<version>`, `{"status":"ok","version":"odd\"<version>"}`)
	f("", `{"status":"ok","version":"unknown"}`)
}

func TestPublicRoutes(t *testing.T) {
	ts := newTestServer(t, false)
	if w := ts.do("GET", "/healthz", "", ""); w.Code != 200 || w.Body.String() != `{"status":"ok","version":"unknown"}` {
		t.Errorf("healthz %d %s", w.Code, w.Body)
	}
	checkError(t, ts.do("GET", "/readyz", "", ""), 503, "no snapshot")
	// Before a snapshot, authenticated routes answer 503.
	checkError(t, ts.do("GET", "/v2/indexes/IBOV/highs", testKeyDelayed, ""), 503, "no snapshot")
	// While the first snapshot loads, both say how far it has gone; the
	// API's 503 says when to retry and /healthz stays 200.
	ts.api.SetLoadStatus(func() LoadStatus {
		return LoadStatus{Phase: "decode", Done: 120_300_000, Total: 265_000_000, Elapsed: 3200 * time.Millisecond}
	})
	const progress = "loading the snapshot: decode 45% (120.3 of 265.0 MB), 3.2 s elapsed"
	checkError(t, ts.do("GET", "/readyz", "", ""), 503, "not ready: "+progress)
	w := ts.do("GET", "/v2/companies", testKeyDelayed, "")
	checkError(t, w, 503, progress+"; retry shortly")
	if got := w.Header().Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After %q while loading, want 5", got)
	}
	if w := ts.do("GET", "/healthz", "", ""); w.Code != 200 {
		t.Errorf("healthz while loading: %d", w.Code)
	}
	ts.api.SetLoadStatus(func() LoadStatus { return LoadStatus{Phase: "index", Elapsed: time.Second} })
	checkError(t, ts.do("GET", "/readyz", "", ""), 503, "loading the snapshot: index, 1.0 s elapsed")
	ts.api.SetLoadStatus(nil)
	checkError(t, ts.do("GET", "/readyz", "", ""), 503, "not ready: no snapshot loaded yet")
	ts.store.Publish(mustSmall(t))
	if w := ts.do("GET", "/readyz", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"ready"`) {
		t.Errorf("readyz %d %s", w.Code, w.Body)
	}
	w = ts.do("GET", "/metrics", "", "")
	if w.Code != 200 {
		t.Fatalf("metrics %d", w.Code)
	}
	for _, want := range []string{"pregao_http_requests_total", `route="/readyz"`, "pregao_http_request_duration_seconds_bucket", "go_goroutines", "pregao_http_requests_in_flight"} {
		if !strings.Contains(w.Body.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, true)
	for _, h := range []string{"", "Bearer", "Bearer ", "Basic " + testKeyDelayed, "Bearer pg_wrong", "Bearer " + testKeyDelayed + "x", testKeyDelayed} {
		r := httptest.NewRequest("GET", "/v2/ratios/catalog", nil)
		if h != "" {
			r.Header.Set("Authorization", h)
		}
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		checkError(t, w, 401, "unauthorized")
		if w.Header().Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
	}
	// Lower-case scheme is accepted (RFC 7235: case-insensitive).
	r := httptest.NewRequest("GET", "/v2/indexes/IBOV/highs", nil)
	r.Header.Set("Authorization", "bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	if w.Code == 401 {
		t.Error("lower-case bearer refused")
	}
	// POST routes are authenticated before the body is read.
	checkError(t, ts.do("POST", "/v2/quotes", "", `{"tickers":["AAAA3"]}`), 401, "unauthorized")
	checkError(t, ts.do("POST", "/v2/screener", "nope", `{}`), 401, "unauthorized")
}

func TestRouterErrors(t *testing.T) {
	ts := newTestServer(t, true)
	checkError(t, ts.do("GET", "/v2/nothing", testKeyDelayed, ""), 404, "no operation")
	checkError(t, ts.do("GET", "/v1/quotes", testKeyDelayed, ""), 404, "no operation")
	checkError(t, ts.do("GET", "/v2/quotes/", testKeyDelayed, ""), 404, "no operation")
	w := ts.do("DELETE", "/v2/quotes", testKeyDelayed, "")
	checkError(t, w, 405, "not allowed")
	if w.Header().Get("Allow") == "" {
		t.Error("405 without Allow")
	}
	checkError(t, ts.do("GET", "/v2/quotes", testKeyDelayed, ""), 405, "POST")
}

func TestBodyCap(t *testing.T) {
	ts := newTestServer(t, true)
	big := `{"tickers":["` + strings.Repeat("A", 2<<20) + `"]}`
	checkError(t, ts.do("POST", "/v2/quotes", testKeyDelayed, big), 413, "larger than")
	// Without a Content-Length the cap applies while reading.
	r := httptest.NewRequest("POST", "/v2/quotes", struct{ *strings.Reader }{strings.NewReader(big)})
	r.ContentLength = -1
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	checkError(t, w, 413, "larger than")
}

func TestPanicRecovered(t *testing.T) {
	ts := newTestServer(t, true)
	h := ts.api.wrap(&Route{Method: "GET", Path: "/boom", serve: func(a *API, c *call, dst []byte, r *http.Request, _ httprouterParams) ([]byte, error) {
		panic("boom")
	}})
	r := httptest.NewRequest("GET", "/boom", nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	h(w, r, nil)
	checkError(t, w, 500, "internal server error")
	if got := testutilCounter(t, ts.reg, "pregao_http_panics_total"); got != 1 {
		t.Errorf("panics counter %v", got)
	}
}

type httprouterParams = httprouter.Params

func sha256Hex(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// testutilCounter returns the value of a counter without labels.
func testutilCounter(tb testing.TB, reg *prometheus.Registry, name string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.Metric) > 0 {
			return mf.Metric[0].GetCounter().GetValue()
		}
	}
	return 0
}

func TestFailureLogged(t *testing.T) {
	for st, want := range map[int]bool{200: false, 400: false, 404: false, 429: false, 500: true, 502: true, 503: false, 504: true} {
		if got := failure(st); got != want {
			t.Errorf("failure(%d) = %v, want %v", st, got, want)
		}
	}
	// /readyz answers 503 while the snapshot loads and while draining: an
	// expected state, not an error line per probe.
	var logged strings.Builder
	store := &engine.Store{}
	api := New(DefaultConfig(), store, testKeys(t), nil, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(&logged, nil)))
	api.SetLoadStatus(func() LoadStatus { return LoadStatus{Phase: "decode", Elapsed: time.Second} })
	for _, draining := range []bool{false, true} {
		api.SetDraining(draining)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		if w.Code != 503 {
			t.Fatalf("readyz %d, want 503", w.Code)
		}
	}
	if strings.Contains(logged.String(), "level=ERROR") {
		t.Errorf("a 503 from /readyz was logged as an error:\n%s", logged.String())
	}
}
