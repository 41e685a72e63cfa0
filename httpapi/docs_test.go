package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

// /docs serves the page with a policy that keeps it on this server, its
// files with their types, 304 on a matching ETag, compressed when asked;
// /docs/ redirects to the page; an unknown file is a JSON 404.
func TestDocsPage(t *testing.T) {
	ts := newTestServer(t, true)
	w := ts.do("GET", "/docs", "", "")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") || !strings.Contains(w.Body.String(), `<div id="pregao-docs">`) {
		t.Fatalf("/docs: %d %s\n%s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") || strings.Contains(csp, "http") {
		t.Errorf("CSP %q", csp)
	}
	if !strings.Contains(w.Body.String(), `<link rel="icon" type="image/svg+xml" href="docs/favicon.svg">`) {
		t.Errorf("/docs names no icon:\n%s", w.Body)
	}
	for file, ctype := range map[string]string{"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css", "init.js": "text/javascript", "favicon.svg": "image/svg+xml"} {
		w := ts.do("GET", "/docs/"+file, "", "")
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), ctype) || w.Body.Len() == 0 {
			t.Errorf("/docs/%s: %d %q, %d bytes", file, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
		r := httptest.NewRequest("GET", "/docs/"+file, nil)
		r.Header.Set("If-None-Match", w.Header().Get("ETag"))
		nm := httptest.NewRecorder()
		ts.api.ServeHTTP(nm, r)
		if nm.Code != 304 || nm.Body.Len() != 0 {
			t.Errorf("/docs/%s with its ETag: %d, %d bytes", file, nm.Code, nm.Body.Len())
		}
	}
	r := httptest.NewRequest("GET", "/docs/swagger-ui-bundle.js", nil)
	r.Header.Set("Accept-Encoding", "gzip, zstd")
	z := httptest.NewRecorder()
	ts.api.ServeHTTP(z, r)
	if z.Header().Get("Content-Encoding") != "zstd" || z.Body.Len() > 700_000 {
		t.Errorf("compressed bundle: %q, %d bytes", z.Header().Get("Content-Encoding"), z.Body.Len())
	}
	if w := ts.do("GET", "/docs/", "", ""); w.Code != 301 || w.Header().Get("Location") != "../docs" {
		t.Errorf("/docs/: %d → %q", w.Code, w.Header().Get("Location"))
	}
	checkError(t, ts.do("GET", "/docs/nope.js", "", ""), 404, "no file nope.js")
	if w := ts.do("GET", "/openapi.json", "", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"openapi": "3.1.0"`) {
		t.Errorf("/openapi.json: %d", w.Code)
	}
}

// The page and its start-up name no other host (the viewer's own URLs
// to other hosts are documentation links, and the policy blocks any
// request to them); the vendored files are the ones PROVENANCE.md names.
func TestDocsOffline(t *testing.T) {
	for _, f := range []string{"docsui/index.html", "docsui/init.js"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`).Find(b); m != nil {
			t.Errorf("%s names another host: %s", f, m)
		}
	}
	init, _ := os.ReadFile("docsui/init.js")
	if !strings.Contains(string(init), "validatorUrl: null") {
		t.Error("init.js leaves the viewer's online validator on")
	}
	prov, err := os.ReadFile("docsui/PROVENANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		b, err := os.ReadFile("docsui/" + f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if !strings.Contains(string(prov), hex.EncodeToString(sum[:])+"  "+f) {
			t.Errorf("%s: checksum %x not in PROVENANCE.md", f, sum)
		}
	}
}
