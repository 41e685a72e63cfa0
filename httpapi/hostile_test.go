package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestLongPathEchoBounded: a 404 for a name of 1 MB (the docs page's
// files, /files/{name}) quotes it cut, as every message quotes input
// (docs/api.md, Errors): the answer does not grow with the request.
func TestLongPathEchoBounded(t *testing.T) {
	ts := newTestServer(t, true)
	ts.withFiles(t)
	long := strings.Repeat("A", 1<<20)
	for _, p := range []string{"/docs/" + long, "/v2/files/" + long, "/docs/" + strings.Repeat("é", 1000)} {
		w := ts.do("GET", p, testKeyDelayed, "")
		checkError(t, w, 404, "bytes)")
		if w.Body.Len() > 300 {
			t.Errorf("GET %.40s…: error body of %d bytes", p, w.Body.Len())
		}
	}
}

// TestFileServeErrorsJSON: the errors http.ServeContent writes itself on
// GET /files/{name} (412 on a failed If-Match or If-Unmodified-Since, 416
// on a Range that does not parse) are the API's JSON errors, like every
// other 4xx (docs/api.md, Errors), without the file's validators.
func TestFileServeErrorsJSON(t *testing.T) {
	ts := newTestServer(t, true)
	ts.withFiles(t)
	const path = "/v2/files/companies.csv.gz"
	for _, tc := range []struct {
		hdr, value string
		status     int
		want       string
	}{
		{"If-Match", `"nope"`, 412, `If-Match "\"nope\""`},
		{"If-Match", "garbage", 412, `precondition failed: If-Match "garbage" does not list the file's ETag "`},
		{"If-Unmodified-Since", "Mon, 01 Jan 1990 00:00:00 GMT", 412, `If-Unmodified-Since "Mon, 01 Jan 1990 00:00:00 GMT" is before the file's Last-Modified (`},
		{"Range", "bytes=abc", 416, `range "bytes=abc": want bytes=FIRST-LAST`},
		{"Range", "bytes=5-1", 416, "within the file's"},
		{"Range", "items=0-1", 416, "range"},
		{"Range", "bytes=99999999999999999999-", 416, "range"},
		{"Range", "bytes=" + strings.Repeat("9", 1000) + "-", 416, "…(1007 bytes)"},
	} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		r.Header.Set(tc.hdr, tc.value)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		checkError(t, w, tc.status, tc.want)
		for _, h := range []string{"Etag", "Content-Disposition", "Last-Modified"} {
			if v := w.Header().Get(h); v != "" {
				t.Errorf("%s %q: %d with %s %q", tc.hdr, tc.value, w.Code, h, v)
			}
		}
		if tc.status == 416 && w.Header().Get("Content-Range") == "" {
			t.Errorf("%s %q: 416 without Content-Range", tc.hdr, tc.value)
		}
	}
	// What ServeContent answers well stays as it was.
	for _, tc := range []struct {
		hdr, value string
		status     int
	}{{"Range", "bytes=0-1", 206}, {"If-Match", "*", 200}, {"Range", "bytes=0-0,2-3", 206}} {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		r.Header.Set(tc.hdr, tc.value)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		if w.Code != tc.status {
			t.Errorf("%s %q: %d, want %d", tc.hdr, tc.value, w.Code, tc.status)
		}
	}
}

// TestCompressedBodyRefused: a request body with a Content-Encoding is a
// 415 that says so (with Accept-Encoding: identity), not a JSON syntax
// error at byte 0; identity is a body as any other.
func TestCompressedBodyRefused(t *testing.T) {
	ts := newAdminTestServer(t, DefaultConfig())
	ts.api.SetLiveSink(newFakeSink())
	gz := "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
	for _, tc := range []struct{ path, key, enc, body string }{
		{"/v2/quotes", testKeyDelayed, "gzip", gz},
		{"/v2/screener", testKeyDelayed, "br", gz},
		{"/v2/quotes/total-return", testKeyDelayed, "zstd", gz},
		{"/v2/admin/live/trades?seq=1", testKeyAdmin, "gzip", gz},
	} {
		r := httptest.NewRequest("POST", tc.path, strings.NewReader(tc.body))
		r.Header.Set("Authorization", "Bearer "+tc.key)
		r.Header.Set("Content-Encoding", tc.enc)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		checkError(t, w, 415, `Content-Encoding "`+tc.enc+`" is not accepted`)
		if got := w.Header().Get("Accept-Encoding"); got != "identity" {
			t.Errorf("%s: Accept-Encoding %q", tc.path, got)
		}
	}
	r := httptest.NewRequest("POST", "/v2/quotes", strings.NewReader(`{"tickers":["ENHZ3"]}`))
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	r.Header.Set("Content-Encoding", "Identity")
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("Content-Encoding identity: %d %s", w.Code, w.Body)
	}
}
