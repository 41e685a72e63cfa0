package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fuzzServe serves one request and checks the answer is a 200 with valid
// JSON or a JSON 4xx, never a 5xx or a panic.
func fuzzServe(t *testing.T, ts *testServer, method, path, body string) {
	path, rawQuery, _ := strings.Cut(path, "?")
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.URL.RawQuery = rawQuery // any bytes, as a client may send them
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	if w.Code >= 500 || (w.Code != 200 && w.Code < 400) {
		t.Fatalf("%s %s %q: %d %s", method, path, body, w.Code, w.Body)
	}
	if !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%s %s %q: invalid JSON %s", method, path, body, w.Body)
	}
}

func FuzzScreenerBody(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"limit":5,"primaryOnly":false}`,
		`{"filters":[{"type":"close_price","op":"between","min":1,"max":50},{"type":"sector","in":["10"]}],"sort":[{"by":"volume","order":"asc"}]}`,
		`{"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS_CS","op":">=","value":0}],"sort":[{"by":"droplet:NET_MARGIN","order":"desc"}]}`,
		`{"filters":[{"type":"employee_count","op":"==","value":8420}]}`, `{"limit":1e3}`, `[]`, `{"filters":null}`,
	} {
		f.Add(s)
	}
	ts := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzServe(t, ts, "POST", "/v2/screener", body)
	})
}

func FuzzQuotesHandler(f *testing.F) {
	for _, s := range []string{
		`{"tickers":["ENHZ3","SELIC"],"type":"current"}`, `{"tickers":["ENHZ3"],"type":"chart"}`,
		`{"tickers":["ENHZ3","MSAZ3"],"interval":120,"start_date":"2024-03-28","end_date":"2024-03-28","adjusted":true}`,
		`{"tickers":["ENHZ3"],"interval":604800,"start_date":"1970-01-01","end_date":"2024-03-28"}`,
		`{"tickers":["ENHZ3"],"interval":1099511627776,"start_date":"0001-01-01"}`,
	} {
		f.Add(s)
	}
	ts := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzServe(t, ts, "POST", "/v2/quotes", body)
	})
}

func FuzzTotalReturnHandler(f *testing.F) {
	for _, s := range []string{
		`{"tickers":["ENHZ3","SELIC","XXXX3"],"method":"net"}`, `{"tickers":["ENHZ3"],"start_date":"0001-01-01","end_date":"9999-12-31"}`,
		`{"tickers":["MSAZ3","EHZN3"],"start_date":"2024-03-26","end_date":"2024-03-26","method":"gross"}`,
		`{"tickers":["ENHZ3"],"method":null,"start_date":null}`, `{"tickers":"ENHZ3"}`,
	} {
		f.Add(s)
	}
	ts := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, body string) {
		fuzzServe(t, ts, "POST", "/v2/quotes/total-return", body)
	})
}

// FuzzGetQuery drives every GET operation with arbitrary query strings.
func FuzzGetQuery(f *testing.F) {
	paths := []string{
		"/v2/indexes/IBOV/highs", "/v2/quotes/ENHZ3", "/v2/stocks/variations", "/v2/companies",
		"/v2/companies/ENHZ", "/v2/companies/ENHZ3/ratios", "/v2/companies/ENHZ/ratios/valuation",
		"/v2/companies/ENHZ/raw-reports", "/v2/companies/ENHZ/reports", "/v2/companies/cash-corporate-actions",
		"/v2/companies/ENHZ/corporate-actions", "/v2/companies/ENHZ/insider-transactions",
		"/v2/companies/ENHZ/documents", "/v2/companies/ENHZ/shares-history", "/v2/traded-funds/GSUL11/ratios",
		"/v2/ratios/catalog", "/v2/quotes/ENHZ3/total-return",
	}
	for i, q := range []string{"limit=3", "type=chart", "limit=1", "bdr=true&show_sector=true", "show_market_cap=true&show_logo=true",
		"ids=NET_MARGIN&show_calculation=true", "frequency=TTM&latest_by_reference_date=true", "flat=true&year=2023&quarter=4",
		"section=CASH_FLOW", "current=false&start_date=2024-01-01", "stock_type=UNIT", "aggregation=INDIVIDUAL",
		"limit=1&offset=1", "x=1", "id=P_NAV&reference_date=2024-02-01", "kind=FUND", "method=net&start_date=2000-01-01"} {
		f.Add(uint8(i), q)
	}
	ts := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, which uint8, q string) {
		path := paths[int(which)%len(paths)]
		fuzzServe(t, ts, "GET", path+"?"+q, "")
	})
}

// FuzzRouter drives the whole router with arbitrary methods, paths, query
// strings and bodies (authenticated): every answer is a 2xx with valid JSON
// or a JSON 4xx, never a 5xx or a panic.
func FuzzRouter(f *testing.F) {
	methods := []string{"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"}
	for _, s := range []struct {
		m                 uint8
		path, query, body string
	}{
		{0, "indexes/IBOV/highs", "limit=5", ""},
		{0, "indexes/%00/lows", "", ""},
		{0, "quotes/enhz3", "type=chart", ""},
		{1, "quotes", "", `{"tickers":["ENHZ3","SELIC"],"type":"current"}`},
		{1, "screener", "", `{"filters":[{"type":"sector","in":["10"]}]}`},
		{0, "companies/cash-corporate-actions", "stock_type=UNIT&bdr=true", ""},
		{0, "companies/ENHZ/ratios/valuation", "ids=price_to_earnings_ps", ""},
		{0, "companies/ENHZ3/raw-reports", "flat=true", ""},
		{0, "companies/../..//ENHZ", "", ""},
		{0, "traded-funds/gsul11/ratios", "id=P_NAV", ""},
		{2, "companies/ENHZ", "", "{}"},
		{4, "companies", "", ""},
		{0, "companies/ENHZ/corporate-actions", "start_date=2024-13-01", ""},
		{0, "stocks/variations", "limit=0", ""},
		{0, "ratios/catalog", "kind=fund", ""},
		{0, "quotes/enhz3/total-return", "method=net", ""},
		{1, "quotes/total-return", "", `{"tickers":["ENHZ3","GSUL11"],"start_date":"2023-01-01"}`},
	} {
		f.Add(s.m, s.path, s.query, s.body)
	}
	ts := newTestServer(f, true)
	f.Fuzz(func(t *testing.T, m uint8, path, query, body string) {
		method := methods[int(m)%len(methods)]
		u := "/v2/" + strings.TrimLeft(path, "/")
		r, err := http.NewRequest(method, "http://pregao.test/", strings.NewReader(body))
		if err != nil {
			t.Skip()
		}
		r.URL.Path = u
		r.URL.RawPath = ""
		r.URL.RawQuery = query
		r.RequestURI = u
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		if w.Code >= 500 || w.Code < 200 || (w.Code >= 300 && w.Code < 400) {
			t.Fatalf("%s %s?%s %q: %d %s", method, u, query, body, w.Code, w.Body)
		}
		if method != "HEAD" && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %s?%s %q: invalid JSON %s", method, u, query, body, w.Body)
		}
		if w.Code >= 400 && w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d with Content-Type %q", method, u, w.Code, w.Header().Get("Content-Type"))
		}
	})
}
