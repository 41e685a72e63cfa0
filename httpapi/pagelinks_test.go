package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every list that takes limit and offset answers a page with
// X-Total-Count (the whole filtered list) and Link (RFC 8288: next, prev,
// first, last), and the pages walked by the next links are the whole
// list; both headers are exposed to browsers through CORS.
func TestPagesTotalAndLinks(t *testing.T) {
	ts := newTestServer(t, true)
	ts.api.corsAllow = newCORSOrigins([]string{"*"})
	targets := map[string]string{
		routeIndexes:       "/v2/indexes",
		routeCompanies:     "/v2/companies?bdr=true",
		routeCash:          "/v2/companies/cash-corporate-actions?bdr=true",
		routeCompanyCash:   "/v2/companies/ENHZ/cash-corporate-actions",
		routeFundCash:      "/v2/traded-funds/GSUL11/cash-corporate-actions",
		routeRawReports:    "/v2/companies/ENHZ/raw-reports?flat=true",
		routeReports:       "/v2/companies/ENHZ/reports",
		routeShareActions:  "/v2/companies/ENHZ/corporate-actions",
		routeInsider:       "/v2/companies/ENHZ/insider-transactions",
		routeDocuments:     "/v2/companies/ENHZ/documents",
		routeSharesHistory: "/v2/companies/ENHZ/shares-history",
		routeFundRatios:    "/v2/traded-funds/GSUL11/ratios",
		routeSectors:       "/v2/sectors",
		routeCatalog:       "/v2/ratios/catalog",
		routeFunds:         "/v2/traded-funds",
	}
	for i := range routeTable {
		rt := &routeTable[i]
		if !paginated(rt) || rt.Media == mediaCSV { // a CSV form's pages: TestCSVRoutes
			continue
		}
		target, ok := targets[rt.Path]
		if !ok {
			t.Errorf("%s: a paginated list without a case here", rt.Path)
			continue
		}
		t.Run(rt.Path, func(t *testing.T) {
			get := func(target string) *httptest.ResponseRecorder {
				r := httptest.NewRequest("GET", target, nil)
				r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
				r.Header.Set("Origin", "https://app.example")
				w := httptest.NewRecorder()
				ts.api.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
				}
				return w
			}
			whole := get(target)
			total, err := strconv.Atoi(whole.Header().Get("X-Total-Count"))
			if err != nil {
				t.Fatalf("GET %s: X-Total-Count %q", target, whole.Header().Get("X-Total-Count"))
			}
			if exp := whole.Header().Get("Access-Control-Expose-Headers"); !strings.Contains(exp, "X-Total-Count") || !strings.Contains(exp, "Link") {
				t.Errorf("Access-Control-Expose-Headers %q", exp)
			}
			if n := countItems(t, whole.Body.Bytes()); rt.Path != routeFundRatios && rt.Path != routeDocuments && n != total {
				t.Errorf("GET %s: %d items, X-Total-Count %d", target, n, total)
			}
			if total < 1 {
				t.Fatalf("GET %s: no item: the fixture needs one", target)
			}
			sep := "?"
			if strings.Contains(target, "?") {
				sep = "&"
			}
			next := target + sep + "limit=1"
			seen, prev := 0, ""
			for next != "" && seen <= total {
				w := get(next)
				if got := w.Header().Get("X-Total-Count"); got != strconv.Itoa(total) {
					t.Errorf("GET %s: X-Total-Count %s, want %d", next, got, total)
				}
				seen += countItems(t, w.Body.Bytes())
				links := parseLinks(w.Header().Get("Link"))
				if total == 1 { // the first page is the whole list
					if l := w.Header().Get("Link"); l != "" {
						t.Errorf("GET %s: the whole list, Link %q", next, l)
					}
					break
				}
				if links["first"] == "" || links["last"] == "" {
					t.Errorf("GET %s: Link %q", next, w.Header().Get("Link"))
				}
				if seen < total && links["next"] == "" {
					t.Errorf("GET %s: %d of %d items seen, no next in %q", next, seen, total, w.Header().Get("Link"))
				}
				if prev != "" && links["prev"] == "" {
					t.Errorf("GET %s: no prev in %q", next, w.Header().Get("Link"))
				}
				prev, next = next, links["next"]
			}
			if seen != total {
				t.Errorf("the pages of %s hold %d items, X-Total-Count %d", target, seen, total)
			}
			// A first page holding every item is the whole list: no Link.
			if l := get(target + sep + "limit=" + strconv.Itoa(max(total, 1))).Header().Get("Link"); l != "" {
				t.Errorf("GET %s with limit=%d (every item): Link %q", target, total, l)
			}
			// Past the end, prev is the last page (a fund's ratios past
			// their end are a 404: no point found).
			if rt.Path != routeFundRatios {
				w := get(target + sep + "limit=1&offset=" + strconv.Itoa(total+50))
				if links := parseLinks(w.Header().Get("Link")); links["prev"] != links["last"] || links["next"] != "" {
					t.Errorf("GET past the end: Link %q: want prev the last page", w.Header().Get("Link"))
				}
			}
		})
	}
}

// countItems counts the items of a list answer: an array's, or the points
// of an object of objects of arrays (fund ratios).
func countItems(t *testing.T, body []byte) int {
	t.Helper()
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil {
		return len(list)
	}
	var byID map[string]map[string][]json.RawMessage
	if err := json.Unmarshal(body, &byID); err != nil {
		t.Fatalf("%v: %.200s", err, body)
	}
	n := 0
	for _, f := range byID {
		for _, pts := range f {
			n += len(pts)
		}
	}
	return n
}

var linkRE = regexp.MustCompile(`<([^>]*)>; rel="(\w+)"`)

// parseLinks returns a Link header's targets by rel.
func parseLinks(h string) map[string]string {
	out := map[string]string{}
	for _, m := range linkRE.FindAllStringSubmatch(h, -1) {
		out[m[2]] = m[1]
	}
	return out
}
