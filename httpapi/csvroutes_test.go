package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Each CSV form's route (path.csv) answers what its route answers with
// format=csv (or, for a POST, Accept: text/csv), byte for byte (a GET's
// ETag its own: another path), whatever Accept says, and varies by no Accept;
// it takes no format, and its pages link to its pages. Every route with
// a CSV form has one.
func TestCSVRoutes(t *testing.T) {
	ts := newTestServer(t, true)
	do := func(method, target, body, accept string) *httptest.ResponseRecorder {
		var r *http.Request
		if body != "" {
			r = httptest.NewRequest(method, target, strings.NewReader(body))
		} else {
			r = httptest.NewRequest(method, target, nil)
		}
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		return w
	}
	forms := map[string]bool{}
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Media != mediaCSV {
			continue
		}
		base := strings.TrimSuffix(rt.Path, ".csv")
		forms[rt.Method+" "+base] = true
		path := samplePath(rt)
		basePath := strings.TrimSuffix(path, ".csv")
		for _, p := range rt.Params {
			if p.In == InQuery && (p.Name == "ids" || p.Name == "id") {
				sep := "?"
				if strings.Contains(basePath, "?") {
					sep = "&"
				}
				path += "?" + p.Name + "=" + sampleValue(rt, &p)
				basePath += sep + p.Name + "=" + sampleValue(rt, &p)
				break
			}
		}
		var want *httptest.ResponseRecorder
		if rt.Method == http.MethodGet {
			sep := "?"
			if strings.Contains(basePath, "?") {
				sep = "&"
			}
			want = do(rt.Method, basePath+sep+"format=csv", "", "")
		} else {
			want = do(rt.Method, basePath, sampleBody(rt), "text/csv")
		}
		for _, accept := range []string{"", "application/json"} {
			got := do(rt.Method, path, sampleBody(rt), accept)
			if got.Code != 200 || got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
				!strings.HasPrefix(got.Header().Get("Content-Type"), "text/csv") || (got.Header().Get("ETag") == "") != (rt.Method == http.MethodPost) {
				t.Errorf("%s %s (Accept %q): %d %s %s %.200q\nwant %d %s %s %.200q", rt.Method, path, accept,
					got.Code, got.Header().Get("Content-Type"), got.Header().Get("ETag"), got.Body,
					want.Code, want.Header().Get("Content-Type"), want.Header().Get("ETag"), want.Body)
			}
			if v := strings.Join(got.Header().Values("Vary"), ","); strings.Contains(v, "Accept,") || strings.HasSuffix(v, "Accept") {
				t.Errorf("%s %s: Vary %q", rt.Method, path, v)
			}
		}
		if rt.Method == http.MethodGet {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			checkError(t, do(rt.Method, path+sep+"format=json", "", ""), 400, `unknown query parameter "format"`)
		}
	}
	for i := range routeTable {
		if rt := &routeTable[i]; rt.CSV != "" && rt.Media == "" && !rt.Untyped && !forms[rt.Method+" "+rt.Path] {
			t.Errorf("%s %s: no route of its CSV form", rt.Method, rt.Path)
		}
	}
	if len(forms) != 14 {
		t.Errorf("%d CSV forms' routes, want 14", len(forms))
	}
	// A page of a CSV form links to the CSV form's other pages.
	w := do("GET", "/v2/companies/ENHZ/cash-corporate-actions.csv?limit=1", "", "")
	if w.Code != 200 || w.Header().Get("X-Total-Count") == "" || !strings.Contains(w.Header().Get("Link"), "</v2/companies/ENHZ/cash-corporate-actions.csv?limit=1&offset=1>; rel=\"next\"") {
		t.Errorf("a page of a CSV form: %d X-Total-Count %q Link %q", w.Code, w.Header().Get("X-Total-Count"), w.Header().Get("Link"))
	}
}
