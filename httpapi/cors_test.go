package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func send(t *testing.T, srv *httptest.Server, method, path string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestHeadAndOptions: HEAD answers every GET route with its headers and
// no body; OPTIONS answers 204 with Allow.
func TestHeadAndOptions(t *testing.T) {
	ts := newTestServer(t, true)
	srv := httptest.NewServer(ts.api)
	defer srv.Close()
	auth := "Bearer " + testKeyDelayed
	for _, p := range []string{"/healthz", "/readyz", "/v2/companies/ENHZ", "/v2/companies", "/v2/quotes/ENHZ3?type=current", "/v2/companies/cash-corporate-actions"} {
		// The same request but for its method (Go's client asks a GET for
		// gzip on its own, not a HEAD).
		get, gbody := send(t, srv, "GET", p, "Authorization", auth, "Accept-Encoding", "gzip")
		head, hbody := send(t, srv, "HEAD", p, "Authorization", auth, "Accept-Encoding", "gzip")
		if head.StatusCode != get.StatusCode || hbody != "" || gbody == "" || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || head.Header.Get("ETag") != get.Header.Get("ETag") {
			t.Errorf("HEAD %s: %d %q %v; GET %d", p, head.StatusCode, hbody, head.Header, get.StatusCode)
		}
	}
	for p, want := range map[string]string{"/v2/quotes": "POST", "/v2/companies/ENHZ": "GET", "/healthz": "HEAD"} {
		resp, body := send(t, srv, "OPTIONS", p)
		if resp.StatusCode != 204 || body != "" || !strings.Contains(resp.Header.Get("Allow"), want) || !strings.Contains(resp.Header.Get("Allow"), "OPTIONS") {
			t.Errorf("OPTIONS %s: %d Allow %q", p, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if resp, _ := send(t, srv, "OPTIONS", "/v2/nothing"); resp.StatusCode != 404 {
		t.Errorf("OPTIONS on an unknown path: %d", resp.StatusCode)
	}
	if resp, _ := send(t, srv, "DELETE", "/v2/companies/ENHZ"); resp.StatusCode != 405 || !strings.Contains(resp.Header.Get("Allow"), "HEAD") {
		t.Errorf("DELETE: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestCORS(t *testing.T) {
	newSrv := func(origins ...string) *httptest.Server {
		cfg := DefaultConfig()
		cfg.CORSOrigins = origins
		ts := newTestServer(t, true)
		return httptest.NewServer(New(cfg, ts.store, testKeys(t), nil, prometheus.NewRegistry(), nil))
	}
	srv := newSrv("https://app.example.com", "https://other.example")
	defer srv.Close()
	auth := "Bearer " + testKeyDelayed
	resp, _ := send(t, srv, "GET", "/v2/companies/ENHZ", "Authorization", auth, "Origin", "https://app.example.com")
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "ETag") {
		t.Errorf("allowed origin: %v", resp.Header)
	}
	// A page reads every header the API documents, the live session's
	// and the push feed's too.
	for _, h := range []string{"ETag", "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "X-Request-Id", "X-Total-Count", "Link", "X-Live-Seq", "X-Live-Next-Seq", "X-Live-Batch-Digest"} {
		if !slices.Contains(strings.Split(resp.Header.Get("Access-Control-Expose-Headers"), ", "), h) {
			t.Errorf("%s not exposed: %q", h, resp.Header.Get("Access-Control-Expose-Headers"))
		}
	}
	resp, _ = send(t, srv, "GET", "/v2/companies/ENHZ", "Origin", "https://app.example.com") // no key: the 401 is readable
	if resp.StatusCode != 401 || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("401: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = send(t, srv, "GET", "/v2/companies/ENHZ", "Authorization", auth, "Origin", "https://evil.example")
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.StatusCode != 200 {
		t.Errorf("other origin: %d %v", resp.StatusCode, resp.Header)
	}
	resp, body := send(t, srv, "OPTIONS", "/v2/quotes", "Origin", "https://other.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
	if resp.StatusCode != 204 || body != "" || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") || resp.Header.Get("Access-Control-Allow-Origin") != "https://other.example" {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// A stream's reader resuming from another origin (a fetch-based
	// EventSource sends Last-Event-ID on a reconnection).
	resp, _ = send(t, srv, "OPTIONS", "/v2/stream/quotes?tickers=ENHZ3", "Origin", "https://app.example.com", "Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization,last-event-id")
	if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Last-Event-ID") {
		t.Errorf("preflight of a stream's reconnection: %d %v", resp.StatusCode, resp.Header)
	}
	any := newSrv("*")
	defer any.Close()
	if resp, _ := send(t, any, "GET", "/healthz", "Origin", "https://x.example"); resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("*: %v", resp.Header)
	}
	none := newSrv()
	defer none.Close()
	if resp, _ := send(t, none, "GET", "/healthz", "Origin", "https://x.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" || len(resp.Header.Values("Vary")) != 0 {
		t.Errorf("no CORS configured: %v", resp.Header)
	}
}

// TestIndexRoutes: GET /indexes lists the indexes; GET /indexes/{symbol}
// the portfolio by weight; an unknown symbol is a 404 naming the indexes.
func TestIndexRoutes(t *testing.T) {
	ts := newTestServer(t, true)
	ds := ts.store.Current()
	w := ts.do("GET", "/v2/indexes", testKeyDelayed, "")
	var list []struct {
		Symbol        string
		PortfolioDate string `json:"portfolio_date"`
		MemberCount   int    `json:"member_count"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &list) != nil || len(list) != len(ds.Indexes()) || len(list) == 0 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for _, ix := range list {
		w := ts.do("GET", "/v2/indexes/"+strings.ToLower(ix.Symbol), testKeyDelayed, "")
		var p struct {
			Symbol  string
			Members []struct {
				Ticker              string
				Weight              *float64
				TheoreticalQuantity *float64 `json:"theoretical_quantity"`
			}
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Symbol != ix.Symbol || len(p.Members) != ix.MemberCount {
			t.Fatalf("%s: %d %s", ix.Symbol, w.Code, w.Body)
		}
		sum := 0.0
		for i, m := range p.Members {
			if m.Weight == nil {
				continue
			}
			sum += *m.Weight
			if i > 0 && p.Members[i-1].Weight != nil && *p.Members[i-1].Weight < *m.Weight {
				t.Errorf("%s: members not by weight descending", ix.Symbol)
			}
		}
		if sum > 1.0001 {
			t.Errorf("%s: weights sum to %v", ix.Symbol, sum)
		}
	}
	checkError(t, ts.do("GET", "/v2/indexes/NOPE", testKeyDelayed, ""), 404, "indexes:")
	if w := ts.do("GET", "/v2/indexes?x=1", testKeyDelayed, ""); w.Code != 400 {
		t.Errorf("unknown parameter: %d", w.Code)
	}
}

// TestCompanySearch: GET /companies?search= finds by ticker, symbol and
// name, ignoring case and accents, best match first.
func TestCompanySearch(t *testing.T) {
	ts := newTestServer(t, true)
	ids := func(q string) []string {
		w := ts.do("GET", "/v2/companies?search="+q, testKeyDelayed, "")
		var cs []struct {
			ID string `json:"company_id"`
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &cs) != nil {
			t.Fatalf("%s: %d %s", q, w.Code, w.Body)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	const enhz, msaz = "12345678000195", "33444555000172"
	for q, want := range map[string]string{
		"enhz3": enhz, "ENHZ": enhz, "enh": enhz, "ehzn3": enhz, // a former ticker
		"minera%C3%A7%C3%A3o": msaz, "mineracao": msaz, "serra%20azul": msaz, "horizonte": enhz,
	} {
		if got := ids(q); len(got) == 0 || got[0] != want {
			t.Errorf("search=%s: %v, want %s first", q, got, want)
		}
	}
	if got := ids("zzzzqq"); len(got) != 0 {
		t.Errorf("no match: %v", got)
	}
	checkError(t, ts.do("GET", "/v2/companies?search="+strings.Repeat("a", 101), testKeyDelayed, ""), 400, "at most 100")
	// Nothing to search for once folded (spaces, a lone accent) is no
	// search, as an empty value is: the plain list, on both list routes.
	for _, route := range []string{"/v2/companies", "/v2/traded-funds"} {
		plain := ts.do("GET", route, testKeyDelayed, "").Body.String()
		for _, q := range []string{"%20", "%20%20%09", "%CC%81", ""} {
			if w := ts.do("GET", route+"?search="+q, testKeyDelayed, ""); w.Code != 200 || w.Body.String() != plain {
				t.Errorf("%s?search=%s: %d, not the plain list: %.200s", route, q, w.Code, w.Body)
			}
		}
	}
}

// A compressed answer's ETag is the weak form of the identity one's
// (RFC 9110 8.8.3: a strong ETag names one representation's bytes), and
// If-None-Match compares weakly, so each form revalidates the other; a
// 304 carries the form its 200 would.
func TestETagPerCoding(t *testing.T) {
	ts := newTestServer(t, true)
	const path = "/v2/companies/cash-corporate-actions?limit=50"
	get := func(hd map[string]string) *httptest.ResponseRecorder {
		return ts.doHeaders("GET", path, testKeyDelayed, hd)
	}
	id := get(nil)
	strong := id.Header().Get("ETag")
	if id.Code != 200 || id.Header().Get("Content-Encoding") != "" || strings.HasPrefix(strong, "W/") || len(id.Body.Bytes()) < compressMin {
		t.Fatalf("identity: %d, Content-Encoding %q, ETag %q, %d bytes", id.Code, id.Header().Get("Content-Encoding"), strong, id.Body.Len())
	}
	for _, enc := range []string{"gzip", "zstd"} {
		w := get(map[string]string{"Accept-Encoding": enc})
		if w.Header().Get("Content-Encoding") != enc || w.Header().Get("ETag") != "W/"+strong {
			t.Errorf("%s: Content-Encoding %q, ETag %q; want W/%s", enc, w.Header().Get("Content-Encoding"), w.Header().Get("ETag"), strong)
		}
		if w := get(map[string]string{"Accept-Encoding": enc, "If-None-Match": strong}); w.Code != 304 || w.Header().Get("ETag") != "W/"+strong {
			t.Errorf("%s revalidated with the identity ETag: %d, ETag %q", enc, w.Code, w.Header().Get("ETag"))
		}
	}
	if w := get(map[string]string{"If-None-Match": "W/" + strong}); w.Code != 304 || w.Header().Get("ETag") != strong {
		t.Errorf("identity revalidated with the compressed form's ETag: %d, ETag %q", w.Code, w.Header().Get("ETag"))
	}
	// An answer too small to compress keeps its strong ETag.
	w := ts.doHeaders("GET", "/v2/companies/ENHZ", testKeyDelayed, map[string]string{"Accept-Encoding": "gzip"})
	if w.Body.Len() < compressMin && (w.Header().Get("Content-Encoding") != "" || strings.HasPrefix(w.Header().Get("ETag"), "W/")) {
		t.Errorf("a small answer: Content-Encoding %q, ETag %q", w.Header().Get("Content-Encoding"), w.Header().Get("ETag"))
	}
}

// A kept answer sent compressed, and its 304, cost no allocation more
// than the same answer in identity: the ETag's weak form is made with
// the strong one, once, not per request.
func TestWeakETagNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts need a build without -race (make test runs it in its second pass)")
	}
	ts := newTestServer(t, true)
	const path = "/v2/companies/cash-corporate-actions?limit=50"
	allocs := func(hd map[string]string) float64 {
		req, _ := http.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		for k, v := range hd {
			req.Header.Set(k, v)
		}
		w := &discard{h: http.Header{}}
		serve := func() {
			w.body.Reset()
			clear(w.h)
			ts.api.ServeHTTP(w, req)
		}
		serve()
		serve() // kept after the first
		if w.status != 0 && w.status != 200 && w.status != 304 {
			t.Fatalf("%v: status %d", hd, w.status)
		}
		if enc := hd["Accept-Encoding"]; enc != "" && !strings.HasPrefix(w.h.Get("ETag"), "W/") {
			t.Fatalf("%v: ETag %q, want the weak form", hd, w.h.Get("ETag"))
		}
		return testing.AllocsPerRun(100, serve)
	}
	identity := allocs(nil)
	strong := ts.doHeaders("GET", path, testKeyDelayed, nil).Header().Get("ETag")
	for _, hd := range []map[string]string{
		{"Accept-Encoding": "gzip"},
		{"Accept-Encoding": "zstd"},
		{"Accept-Encoding": "gzip", "If-None-Match": strong},
	} {
		if n := allocs(hd); n > identity {
			t.Errorf("%v: %v allocations a request, identity %v", hd, n, identity)
		}
	}
}
