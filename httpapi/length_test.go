package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// An answer whose size is known when it is written carries its
// Content-Length (one write, no chunked framing): a fresh answer sent as
// it is, a kept one in every coding, a CSV form. Answers compressed as
// they are sent have none.
func TestContentLength(t *testing.T) {
	kept := newTestServer(t, true)
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = -1 // off: every answer made per request
	fresh := New(cfg, kept.store, testKeys(t), nil, prometheus.NewRegistry(), nil)
	tk := kept.store.Current().Assets()[0].Ticker
	path := "/v2/companies/" + tk + "/ratios"            // an answer over compressMin
	const screener = `{"primaryOnly":false,"limit":100}` // made per request
	var plain []byte
	for _, c := range []struct {
		name   string
		api    *API
		path   string
		body   string
		enc    string
		length bool
	}{
		{"fresh", fresh, "/v2/screener", screener, "", true},
		{"fresh, gzip", fresh, "/v2/screener", screener, "gzip", false},
		{"fresh CSV", fresh, path + "?format=csv", "", "", true},
		{"first", kept.api, path, "", "", true},
		{"kept", kept.api, path, "", "", true},
		{"kept, gzip", kept.api, path, "", "gzip", true},
		{"kept, gzip again", kept.api, path, "", "gzip", true},
		{"kept, zstd", kept.api, path, "", "zstd", true},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		if c.body != "" {
			r = httptest.NewRequest("POST", c.path, strings.NewReader(c.body))
		}
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if c.enc != "" {
			r.Header.Set("Accept-Encoding", c.enc)
		}
		w := httptest.NewRecorder()
		c.api.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", c.name, w.Code, w.Body)
		}
		body := w.Body.Bytes()
		cl := w.Header().Get("Content-Length")
		if got := w.Header().Get("Content-Encoding"); got != c.enc {
			t.Fatalf("%s: Content-Encoding %q, want %q", c.name, got, c.enc)
		}
		if !c.length {
			if cl != "" {
				t.Errorf("%s: Content-Length %q on an answer compressed as it is sent", c.name, cl)
			}
			continue
		}
		if cl != strconv.Itoa(len(body)) {
			t.Errorf("%s: Content-Length %q, body of %d bytes", c.name, cl, len(body))
		}
		switch c.enc {
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(zr)
		case "zstd":
			continue // decoded by TestCompression
		}
		if len(body) < compressMin {
			t.Fatalf("%s: answer of %d bytes: the test wants one over %d", c.name, len(body), compressMin)
		}
		if c.path == path+"?format=csv" && !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") {
			t.Errorf("%s: Content-Type %q", c.name, w.Header().Get("Content-Type"))
		}
		if c.path == path {
			if len(body) < compressMin {
				t.Fatalf("%s: answer of %d bytes: the test wants one over %d", c.name, len(body), compressMin)
			}
			if plain == nil {
				plain = body
			} else if !bytes.Equal(body, plain) {
				t.Errorf("%s: not the first answer's bytes", c.name)
			}
		}
	}
}
