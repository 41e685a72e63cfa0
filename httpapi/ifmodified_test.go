package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// If-Modified-Since at or after the answer's Last-Modified is a 304; an
// older date, a malformed one, or an If-None-Match that does not match
// (which takes precedence) gets the answer.
func TestIfModifiedSince(t *testing.T) {
	ts := newTestServer(t, true)
	get := func(hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v2/companies/ENHZ", nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		return w
	}
	first := get(nil)
	lm := first.Header().Get("Last-Modified")
	at, err := http.ParseTime(lm)
	if first.Code != 200 || err != nil {
		t.Fatalf("%d, Last-Modified %q: %v", first.Code, lm, err)
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"same instant", map[string]string{"If-Modified-Since": lm}, http.StatusNotModified},
		{"later", map[string]string{"If-Modified-Since": at.Add(time.Hour).Format(http.TimeFormat)}, http.StatusNotModified},
		{"earlier", map[string]string{"If-Modified-Since": at.Add(-time.Second).Format(http.TimeFormat)}, http.StatusOK},
		{"malformed", map[string]string{"If-Modified-Since": "yesterday"}, http.StatusOK},
		{"If-None-Match decides", map[string]string{"If-Modified-Since": lm, "If-None-Match": `"other"`}, http.StatusOK},
	} {
		w := get(c.hdr)
		if w.Code != c.want {
			t.Errorf("%s: %d, want %d", c.name, w.Code, c.want)
		}
		if c.want == http.StatusNotModified && (w.Body.Len() != 0 || w.Header().Get("ETag") == "") {
			t.Errorf("%s: 304 with %d bytes, ETag %q", c.name, w.Body.Len(), w.Header().Get("ETag"))
		}
	}
}
