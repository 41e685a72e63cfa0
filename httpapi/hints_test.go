package httpapi

import (
	"strings"
	"testing"
)

// A day that is not in the calendar is named so, and a path without the
// API prefix (or with another version) hints at the right one.
func TestErrorHints(t *testing.T) {
	ts := newTestServer(t, true)
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v2/quotes/ENHZ3?start_date=2026-02-30", "", 400, `start_date="2026-02-30": not a calendar date: February 2026 has 28 days`},
		{"GET", "/v2/quotes/ENHZ3?start_date=2024-02-30", "", 400, `not a calendar date: February 2024 has 29 days`},
		{"GET", "/v2/companies/cash-corporate-actions?start_date=2026-13-01", "", 400, `not a calendar date: there is no month 13`},
		{"GET", "/v2/companies/cash-corporate-actions?end_date=2026-04-31T10:00:00Z", "", 400, `not a calendar date: April 2026 has 30 days`},
		{"GET", "/v2/quotes/ENHZ3?start_date=yesterday", "", 400, `want a date YYYY-MM-DD`},
		{"POST", "/v2/quotes", `{"tickers":["ENHZ3"],"start_date":"2026-02-29"}`, 400, `"2026-02-29": not a calendar date: February 2026 has 28 days`},
		{"GET", "/companies/ENHZ", "", 404, `no operation at GET /companies/ENHZ; the API's paths start with /v2: GET /v2/companies/ENHZ`},
		{"GET", "/v1/companies/ENHZ", "", 404, `the API's paths start with /v2: GET /v2/companies/ENHZ`},
		{"POST", "/quotes", `{}`, 404, `the API's paths start with /v2: POST /v2/quotes`},
	} {
		checkError(t, ts.do(c.method, c.path, testKeyDelayed, c.body), c.status, c.want)
	}
	w := ts.do("GET", "/nothing/here", testKeyDelayed, "")
	checkError(t, w, 404, "no operation at GET /nothing/here")
	if strings.Contains(w.Body.String(), "start with") {
		t.Errorf("a hint for a path that is no operation anywhere: %s", w.Body)
	}
}
