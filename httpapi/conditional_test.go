package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

func doH(ts *testServer, method, path, key, body string, hdr ...string) *httptest.ResponseRecorder {
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

func TestConditionalGet(t *testing.T) {
	ts := newTestServer(t, true)
	w := doH(ts, "GET", "/v2/companies/ENHZ", testKeyDelayed, "")
	etag := w.Header().Get("ETag")
	if w.Code != 200 || !strings.HasPrefix(etag, `"`) || w.Header().Get("Cache-Control") == "" || w.Header().Get("Last-Modified") == "" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	for _, inm := range []string{etag, "W/" + etag, `"x", ` + etag} {
		w := doH(ts, "GET", "/v2/companies/ENHZ", testKeyDelayed, "", "If-None-Match", inm)
		if w.Code != 304 || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d %q", inm, w.Code, w.Body)
		}
	}
	if w := doH(ts, "GET", "/v2/companies/ENHZ", testKeyDelayed, "", "If-None-Match", `"other"`); w.Code != 200 {
		t.Errorf("other etag: %d", w.Code)
	}
	// Another query, another plan, another Dataset: another ETag.
	for _, o := range []*httptest.ResponseRecorder{
		doH(ts, "GET", "/v2/companies/ENHZ?show_sector=true", testKeyDelayed, ""),
		doH(ts, "GET", "/v2/companies/ENHZ", testKeyEOD, ""),
	} {
		if o.Header().Get("ETag") == etag || o.Header().Get("ETag") == "" {
			t.Errorf("same or no ETag %q for another request", o.Header().Get("ETag"))
		}
	}
	ts.api.Prepare(ts.store.Current(), "0123456789abcdef", ts.store.Current().AsOf())
	ts.store.Publish(ts.store.Current()) // the same data under a snapshot id
	if got := doH(ts, "GET", "/v2/companies/ENHZ", testKeyDelayed, "").Header().Get("ETag"); !strings.HasPrefix(got, `"0123456789abcdef-`) {
		t.Errorf("ETag %s: want the snapshot id first", got)
	}
	// POST answers carry no validators; errors are never 304.
	if w := doH(ts, "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"]}`); w.Header().Get("ETag") != "" {
		t.Errorf("POST with an ETag")
	}
	if w := doH(ts, "GET", "/v2/companies/NOPE", testKeyDelayed, "", "If-None-Match", "*"); w.Code != 404 {
		t.Errorf("If-None-Match: * on an unknown company: %d, want 404", w.Code)
	}
}

func decode(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "gzip":
		z, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = z
	case "zstd":
		z, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer z.Close()
		r = z
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCompression(t *testing.T) {
	ts := newTestServer(t, true)
	for _, path := range []string{"/v2/companies", "/v2/companies/cash-corporate-actions", "/v2/companies/cash-corporate-actions?current=true", "/v2/ratios/catalog", "/v2/quotes/ENHZ3?type=historical&start_date=2000-01-01"} {
		plain := doH(ts, "GET", path, testKeyDelayed, "")
		if plain.Code != 200 || plain.Header().Get("Content-Encoding") != "" || !strings.Contains(plain.Header().Get("Vary"), "Accept-Encoding") {
			t.Fatalf("%s: %d %v", path, plain.Code, plain.Header())
		}
		for _, c := range []struct{ ae, want string }{
			{"gzip", "gzip"}, {"gzip, zstd", "zstd"}, {"zstd;q=0, gzip;q=0.5", "gzip"}, {"br", ""}, {"gzip;q=0", ""},
		} {
			for range 2 { // the second time from the precompressed form, if any
				w := doH(ts, "GET", path, testKeyDelayed, "", "Accept-Encoding", c.ae)
				want := c.want
				if plain.Body.Len() < compressMin {
					want = ""
				}
				if got := w.Header().Get("Content-Encoding"); got != want {
					t.Errorf("%s, Accept-Encoding %q: Content-Encoding %q, want %q", path, c.ae, got, want)
					continue
				}
				if got := decode(t, want, w.Body.Bytes()); !bytes.Equal(got, plain.Body.Bytes()) {
					t.Errorf("%s, %q: decoded answer differs (%d bytes, want %d)", path, c.ae, len(got), plain.Body.Len())
				}
			}
		}
	}
	if ts.api.info(ts.store.Current()).cashAll.Load().zst.Load() == nil {
		t.Error("the cash list's zstd form was not kept")
	}
}

// TestStreamedCompression: a streamed answer compresses as it goes and
// decodes to the identity answer.
func TestStreamedCompression(t *testing.T) {
	if testing.Short() {
		t.Skip("long dataset")
	}
	ts := newTestServer(t, false)
	ts.store.Publish(mustLong(t))
	body := `{"tickers":["` + strings.Join(func() []string {
		var s []string
		for _, as := range mustLong(t).Assets() {
			s = append(s, as.Ticker)
		}
		return s
	}(), `","`) + `"],"type":"historical","start_date":"2010-01-01"}`
	plain := doH(ts, "POST", "/v2/quotes", testKeyDelayed, body)
	for _, enc := range []string{"gzip", "zstd"} {
		w := doH(ts, "POST", "/v2/quotes", testKeyDelayed, body, "Accept-Encoding", enc)
		if w.Header().Get("Content-Encoding") != enc || !bytes.Equal(decode(t, enc, w.Body.Bytes()), plain.Body.Bytes()) {
			t.Errorf("%s: %v, %d bytes", enc, w.Header(), w.Body.Len())
		}
		t.Logf("%s: %d bytes -> %d on the wire", enc, plain.Body.Len(), w.Body.Len())
	}
}

// TestCompaniesStatus: GET /companies lists active companies (and those of
// unknown status) by default; status= lists the others; each company says
// its status.
func TestCompaniesStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("long dataset")
	}
	ts := newTestServer(t, false)
	ts.store.Publish(mustLong(t))
	count := func(q string) map[string]int {
		w := doH(ts, "GET", "/v2/companies"+q, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", q, w.Code, w.Body)
		}
		var cs []struct{ Status *string }
		if err := json.Unmarshal(w.Body.Bytes(), &cs); err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, c := range cs {
			s := "null"
			if c.Status != nil {
				s = *c.Status
			}
			m[s]++
		}
		return m
	}
	def, all, canc := count(""), count("?status=ALL"), count("?status=cancelled")
	if def["CANCELLED"] != 0 || def["SUSPENDED"] != 0 || def["ACTIVE"] == 0 {
		t.Errorf("default: %v", def)
	}
	if len(canc) != 1 || canc["CANCELLED"] == 0 {
		t.Errorf("cancelled: %v", canc)
	}
	if all["CANCELLED"] != canc["CANCELLED"] || all["ACTIVE"] != def["ACTIVE"] {
		t.Errorf("all %v, default %v, cancelled %v", all, def, canc)
	}
	if w := doH(ts, "GET", "/v2/companies?status=GONE", testKeyDelayed, ""); w.Code != 400 {
		t.Errorf("status=GONE: %d", w.Code)
	}
}

// TestPartialViewNoLastModified: a priced answer whose view holds less
// than its snapshot changes with the clock under the snapshot's build
// time: the eod plan on the evening its snapshot's last session closed
// (that session is still "the current one"), the delayed plan within
// QuoteDelay of the snapshot's last data. It carries no Last-Modified, so
// that If-Modified-Since the build time is a 200, not a 304 on a quote
// that changed since; once the view holds the whole snapshot, the build
// time is back and answers 304.
func TestPartialViewNoLastModified(t *testing.T) {
	ds := mustSmall(t)
	store := &engine.Store{}
	store.Publish(ds)
	clk := &movingClock{}
	api := New(DefaultConfig(), store, testKeys(t), clk, prometheus.NewRegistry(), nil)
	in := api.info(ds)
	built := in.lastModified[0]
	ticker := ds.Assets()[0].Ticker
	ts := &testServer{api: api, store: store}
	get := func(key, ims string) *httptest.ResponseRecorder {
		return doH(ts, "GET", "/v2/quotes/"+ticker, key, "", "If-Modified-Since", ims)
	}
	last := ds.LastSession()
	lastClose := timeUnix(in.latestVisible)
	for _, c := range []struct {
		name, key      string
		partial, whole time.Time
	}{
		{"eod", testKeyEOD, engine.SessionClose(last).Add(time.Hour), engine.SessionClose(last).Add(14 * time.Hour)},
		{"delayed", testKeyDelayed, lastClose.Add(QuoteDelay - 5*time.Minute), lastClose.Add(QuoteDelay)},
	} {
		clk.set(c.partial)
		early := get(c.key, "")
		if w := get(c.key, built); w.Code != 200 || w.Header().Get("Last-Modified") != "" {
			t.Errorf("%s, a partial view, If-Modified-Since the build time: %d, Last-Modified %q", c.name, w.Code, w.Header().Get("Last-Modified"))
		}
		clk.set(c.whole)
		w := get(c.key, "")
		if w.Code != 200 || w.Header().Get("Last-Modified") != built || w.Body.String() == early.Body.String() {
			t.Errorf("%s, the whole view: %d, Last-Modified %q (want %q), the partial view's body: %v", c.name, w.Code, w.Header().Get("Last-Modified"), built, w.Body.String() == early.Body.String())
		}
		if w := get(c.key, built); w.Code != 304 {
			t.Errorf("%s, the whole view, If-Modified-Since the build time: %d", c.name, w.Code)
		}
	}
}
