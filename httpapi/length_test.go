package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// An answer whose size is known when it is written goes out with a
// Content-Length, not chunked: a fresh one sent as it is (short or long),
// a kept one in every coding, a CSV form. An answer compressed as it is
// sent may be either (net/http counts what fits in its buffer).
func TestContentLength(t *testing.T) {
	kept := newTestServer(t, true)
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = -1 // off: every answer made per request
	fresh := New(cfg, kept.store, testKeys(t), nil, prometheus.NewRegistry(), nil)
	servers := map[*API]*httptest.Server{}
	for _, a := range []*API{kept.api, fresh} {
		servers[a] = httptest.NewServer(a)
		defer servers[a].Close()
	}
	tk := kept.store.Current().Assets()[0].Ticker
	path := "/v2/companies/" + tk + "/ratios" // a long answer, made per request
	const short = `{"primaryOnly":false,"limit":2}`
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}} // bodies as sent
	var plain []byte
	for _, c := range []struct {
		name   string
		api    *API
		path   string
		body   string
		enc    string
		length bool
		min    int // the answer's least length
	}{
		{"fresh", fresh, path, "", "", true, chunkingSize + 1},
		{"fresh, short", fresh, "/v2/screener", short, "", true, 1},
		{"fresh, gzip", fresh, path, "", "gzip", false, 1},
		{"fresh CSV", fresh, path + "?format=csv", "", "", true, chunkingSize + 1},
		{"first", kept.api, path, "", "", true, chunkingSize + 1},
		{"kept", kept.api, path, "", "", true, chunkingSize + 1},
		{"kept, gzip", kept.api, path, "", "gzip", true, 1},
		{"kept, gzip again", kept.api, path, "", "gzip", true, 1},
		{"kept, zstd", kept.api, path, "", "zstd", true, 1},
	} {
		method, body := "GET", io.Reader(nil)
		if c.body != "" {
			method, body = "POST", strings.NewReader(c.body)
		}
		r, _ := http.NewRequest(method, servers[c.api].URL+c.path, body)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if c.enc != "" {
			r.Header.Set("Accept-Encoding", c.enc)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, %v: %s", c.name, resp.StatusCode, err, b)
		}
		if got := resp.Header.Get("Content-Encoding"); got != c.enc {
			t.Fatalf("%s: Content-Encoding %q, want %q", c.name, got, c.enc)
		}
		chunked := len(resp.TransferEncoding) > 0
		if c.length && (chunked || resp.ContentLength != int64(len(b))) {
			t.Errorf("%s: Content-Length %d, chunked %v, body of %d bytes: want its length", c.name, resp.ContentLength, chunked, len(b))
		}
		if !chunked && resp.ContentLength != int64(len(b)) {
			t.Errorf("%s: Content-Length %d, body of %d bytes", c.name, resp.ContentLength, len(b))
		}
		if len(b) < c.min {
			t.Fatalf("%s: answer of %d bytes: the test wants at least %d", c.name, len(b), c.min)
		}
		switch c.enc {
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			b, _ = io.ReadAll(zr)
		case "zstd":
			continue // decoded by TestCompression
		}
		if c.path == path {
			if plain == nil {
				plain = b
			} else if !bytes.Equal(b, plain) {
				t.Errorf("%s: not the first answer's bytes", c.name)
			}
		}
	}
}
