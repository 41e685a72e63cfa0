package httpapi

import (
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
