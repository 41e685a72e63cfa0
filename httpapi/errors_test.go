package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestErrorPaths covers every 400, 403 and 404 answer of the operations.
func TestErrorPaths(t *testing.T) {
	ts := newTestServer(t, true)
	d, e := testKeyDelayed, testKeyEOD
	cases := []struct {
		method, path, key, body string
		status                  int
		msg                     string
	}{
		// Rankings.
		{"GET", "/v2/indexes/NOPE/highs", d, "", 404, `index "NOPE" not found (indexes: IBOV, IFIX)`},
		{"GET", "/v2/indexes/IBOV/lows?limit=0", d, "", 400, "limit=0: want 1 to 100"},
		{"GET", "/v2/indexes/IBOV/lows?limit=101", d, "", 400, "want 1 to 100"},
		{"GET", "/v2/indexes/IBOV/lows?limit=ten", d, "", 400, "want an integer"},
		{"GET", "/v2/indexes/IBOV/highs?limit=5&limit=6", d, "", 400, "more than once"},
		{"GET", "/v2/indexes/IBOV/highs?top=5", d, "", 400, `unknown query parameter "top"`},
		// Batch quotes.
		{"POST", "/v2/quotes", d, ``, 400, "empty"},
		{"POST", "/v2/quotes?type=current", d, `{"tickers":["ENHZ3"]}`, 400, "accepts none"},
		{"POST", "/v2/screener?limit=5", d, `{}`, 400, "accepts none"},
		{"POST", "/v2/quotes", d, `{"tickers":[]}`, 400, "1 to 500"},
		{"POST", "/v2/quotes", d, `{"tickers":["petr4"]}`, 400, "petr4"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"interval":30}`, 400, "at least 60"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"type":"live"}`, 400, "current, historical or chart"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"interval":60,"start_date":"2024-03-01","end_date":"2024-03-28"}`, 400, "intraday window too long"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"interval":3600,"start_date":"2024-03-01"}`, 400, "at most 5 days"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"start_date":"2024-03-28","end_date":"2024-03-01"}`, 400, "after end_date"},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"],"extra":true}`, 400, `request body: unknown field "extra" (accepted: tickers, type, interval, start_date, end_date, adjusted)`},
		{"POST", "/v2/quotes", d, `{"tickers":["ENHZ3"]}[]`, 400, "after the JSON object"},
		{"POST", "/v2/quotes", e, `{"tickers":["ENHZ3"],"type":"current"}`, 403, "does not include type"},
		{"POST", "/v2/quotes", e, `{"tickers":["ENHZ3"],"interval":86400,"start_date":"2024-01-01","end_date":"2024-02-01"}`, 403, "interval, start_date and end_date"},
		{"GET", "/v2/quotes/ENHZ3?type=historical", e, "", 403, "does not include type"},
		{"GET", "/v2/quotes/ENHZ3?end_date=2024-01-01", e, "", 403, "end_date"},
		{"GET", "/v2/quotes/NOPE3", d, "", 404, "Ticker not found"},
		{"GET", "/v2/quotes/petr4", d, "", 404, "Ticker not found"}, // path tickers ignore case
		{"GET", "/v2/quotes/pe-r4", d, "", 400, "pe-r4"},
		{"GET", "/v2/quotes/ENHZ3?interval=59", d, "", 400, "interval=59"},
		{"GET", "/v2/quotes/ENHZ3?adjusted=1", d, "", 400, "want true or false"},
		{"GET", "/v2/stocks/variations?limit=1000", d, "", 400, "want 1 to 100"},
		// Companies.
		{"GET", "/v2/companies/NOPE", d, "", 404, `company "NOPE" not found`},
		{"GET", "/v2/companies/SELIC", d, "", 404, `company "SELIC" not found`},
		{"GET", "/v2/companies/ENHZ?show_logo=yes", d, "", 400, "show_logo"},
		{"GET", "/v2/companies?bdr=1", d, "", 400, "bdr"},
		{"GET", "/v2/companies/NOPE/ratios", d, "", 404, "not found"},
		{"GET", "/v2/companies/ENHZ/ratios?frequency=DAILY", d, "", 400, "QUARTERLY, ANNUAL, TTM, YTD"},
		{"GET", "/v2/companies/ENHZ/ratios?frequency=annual", d, "", 400, "frequency"},
		{"GET", "/v2/companies/ENHZ/ratios?ids=NOPE", d, "", 400, `unknown fundamental indicator id "NOPE"`},
		{"GET", "/v2/companies/ENHZ/ratios?ids=A,,B", d, "", 400, "empty item"},
		{"GET", "/v2/companies/ENHZ/ratios?reference_date=2024-13-01", d, "", 400, "not a calendar date: there is no month 13"},
		{"GET", "/v2/companies/ENHZ/ratios?publish_date=yesterday", d, "", 400, "ISO 8601"},
		{"GET", "/v2/companies/ENHZ/ratios/valuation?retrieval_date=2024-99-01", d, "", 400, "not a calendar date: there is no month 99"},
		{"GET", "/v2/companies/NOPE/ratios/valuation", d, "", 404, "not found"},
		{"GET", "/v2/companies/ENHZ/raw-reports?report_type=XYZ", d, "", 400, "report_type"},
		{"GET", "/v2/companies/ENHZ/raw-reports?quarter=5", d, "", 400, "want 1 to 4"},
		{"GET", "/v2/companies/ENHZ/raw-reports?aggregation=BOTH", d, "", 400, "INDIVIDUAL, CONSOLIDATED"},
		{"GET", "/v2/companies/ENHZ/raw-reports?flat=maybe", d, "", 400, "flat"},
		{"GET", "/v2/companies/NOPE/raw-reports", d, "", 404, "not found"},
		{"GET", "/v2/companies/ENHZ/reports?section=NOPE", d, "", 400, "section"},
		{"GET", "/v2/companies/NOPE/reports", d, "", 404, "not found"},
		{"GET", "/v2/companies/cash-corporate-actions?stock_type=FUND_UNIT", d, "", 400, "stock_type"},
		{"GET", "/v2/companies/cash-corporate-actions?current=no", d, "", 400, "current"},
		{"GET", "/v2/companies/cash-corporate-actions?start_date=2024-05-01&end_date=2024-04-01", d, "", 400, "after end_date"},
		{"GET", "/v2/companies/ENHZ/corporate-actions?stock_type=PSE", d, "", 400, "stock_type"},
		{"GET", "/v2/companies/ENHZ/corporate-actions?start_date=2024-05-01&end_date=2024-04-01", d, "", 400, "start_date 2024-05-01 is after end_date 2024-04-01"},
		{"GET", "/v2/companies/ENHZ/insider-transactions?start_date=2024-05-01&end_date=2024-04-01", d, "", 400, "is after end_date"},
		{"GET", "/v2/companies/ENHZ/insider-transactions?start_date=2024-05-01T00:00:00Z", d, "", 400, "YYYY-MM-DD"},
		{"GET", "/v2/companies/ENHZ/documents?start_date=2024-05-01&end_date=2024-04-01", d, "", 400, "is after end_date"},
		{"GET", "/v2/companies/NOPE/corporate-actions", d, "", 404, "not found"},
		{"GET", "/v2/companies/NOPE/insider-transactions", d, "", 404, "not found"},
		{"GET", "/v2/companies/NOPE/documents", d, "", 404, "not found"},
		{"GET", "/v2/companies/ENHZ/documents?limit=0", d, "", 400, "limit"},
		{"GET", "/v2/companies/NOPE/shares-history", d, "", 404, "not found"},
		{"GET", "/v2/companies/ENHZ/shares-history?x=1", d, "", 400, "accepted: start_date, end_date"},
		// Screener.
		{"POST", "/v2/screener", d, ``, 400, "empty"},
		{"POST", "/v2/screener", d, `{"limit":0}`, 400, "want 1 to 500"},
		{"POST", "/v2/screener", d, `{"limit":501}`, 400, "want 1 to 500"},
		{"POST", "/v2/screener", d, `{"limit":"10"}`, 400, `field "limit"`},
		{"POST", "/v2/screener", d, `{"primaryOnly":"yes"}`, 400, `field "primaryOnly"`},
		{"POST", "/v2/screener", d, `{"filter":[]}`, 400, `request body: unknown field "filter" (accepted: limit, offset, primaryOnly, filters, sort, as_of)`},
		{"POST", "/v2/screener", d, `{"primary_only":true}`, 400, `request body: unknown field "primary_only" (accepted: limit, offset, primaryOnly, filters, sort, as_of)`},
		{"POST", "/v2/screener", d, `{"PrimaryOnly":true}`, 400, `unknown field "PrimaryOnly"`}, // field names are exact
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","valor":1}]}`, 400, `request body: unknown field "filters[0].valor" (accepted: type, op, value, min, max, in, id)`},
		{"POST", "/v2/screener", d, `{"sort":[{"by":"volume"},{"by":"volume","dir":"asc"}]}`, 400, `request body: unknown field "sort[1].dir" (accepted: by, order)`},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","op":">","value":"1"}]}`, 400, `request body: field "filters[0].value": want a number, got a string`},
		{"POST", "/v2/screener", d, `{"limit":1.5}`, 400, `request body: field "limit": 1.5: want a whole number from 1 to 500`},
		{"POST", "/v2/screener", d, `{} {}`, 400, "after the JSON object"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"price","op":">","value":1}]}`, 400, "unknown filter type"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","op":"!=","value":1}]}`, 400, "unknown op"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","op":">"}]}`, 400, "needs value"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","op":"between","min":5}]}`, 400, "needs min and max"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","op":"between","min":5,"max":1}]}`, 400, "greater than max"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"volume","value":1}]}`, 400, "op is required"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"sector","in":["99"]}]}`, 400, "unknown sector"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"sector","in":[]}]}`, 400, "non-empty"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"droplet","id":"NOPE","op":">","value":1}]}`, 400, "unknown ratio id"},
		{"POST", "/v2/screener", d, `{"filters":[{"type":"droplet","op":">","value":1}]}`, 400, "needs an id"},
		{"POST", "/v2/screener", d, `{"sort":[{"by":"droplet:NOPE","order":"asc"}]}`, 400, "unknown ratio id"},
		{"POST", "/v2/screener", d, `{"sort":[{"by":"name","order":"asc"}]}`, 400, "unknown sort field"},
		{"POST", "/v2/screener", d, `{"sort":[{"by":"volume","order":"up"}]}`, 400, "want asc or desc"},
		// Funds.
		{"GET", "/v2/traded-funds/ENHZ3/ratios", d, "", 404, "fund"},
		{"GET", "/v2/traded-funds/NOPE11/ratios", d, "", 404, "fund"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?limit=501", d, "", 400, "limit"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?offset=-1", d, "", 400, "offset"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?id=P_NAV&ids=P_NAV", d, "", 400, "either id or ids"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?frequency=WEEKLY", d, "", 400, "frequency"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?ids=NOPE", d, "", 404, "not found"},
		{"GET", "/v2/traded-funds/GSUL11/ratios?reference_date=1999-01-01", d, "", 404, "no indicator found"},
		{"GET", "/v2/ratios/catalog?kind=OTHER", d, "", 400, "kind"},
	}
	for _, tc := range cases {
		name := tc.method + " " + tc.path + " " + tc.body
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			checkError(t, ts.do(tc.method, tc.path, tc.key, tc.body), tc.status, tc.msg)
		})
	}
}

// TestEchoTruncated: input repeated in a message is cut to maxEcho bytes
// (on a rune boundary) with its length, whatever its size and route.
func TestEchoTruncated(t *testing.T) {
	ts := newTestServer(t, true)
	long := strings.Repeat("A", 1<<20)
	accented := strings.Repeat("é", 100)
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/v2/quotes/" + long, "", `ticker "` + strings.Repeat("A", 64) + `…(1048576 bytes)"`},
		{"GET", "/v2/companies?" + long + "=1", "", `unknown query parameter "` + strings.Repeat("A", 64) + `…(1048576 bytes)"`},
		{"GET", "/v2/companies?bdr=" + accented, "", `query parameter bdr="` + strings.Repeat("é", 32) + `…(200 bytes)": want true or false`},
		{"POST", "/v2/quotes", `{"tickers":["` + strings.Repeat("B", 5000) + `"]}`, `…(5000 bytes)`},
		{"POST", "/v2/quotes", `{"tickers":["PETR4"],"type":"` + strings.Repeat("C", 5000) + `"}`, `…(5000 bytes)`},
		{"POST", "/v2/screener", `{"` + strings.Repeat("D", 5000) + `":1}`, `unknown field "` + strings.Repeat("D", 64) + `…(5000 bytes)"`},
	} {
		w := ts.do(c.method, c.path, testKeyDelayed, c.body)
		var e struct{ Error struct{ Message string } }
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Code/100 != 4 {
			t.Errorf("%s %.40s: %d %.200s", c.method, c.path, w.Code, w.Body.String())
			continue
		}
		if len(e.Error.Message) > 400 || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s %.40s %.40s: message of %d bytes %.300q, want it short and containing %q", c.method, c.path, c.body, len(e.Error.Message), e.Error.Message, c.want)
		}
	}
}

// TestCNPJWithSlash: a CNPJ written with its punctuation, the slash sent
// URL-encoded, names the company; a raw slash stays a path separator.
func TestCNPJWithSlash(t *testing.T) {
	ts := newTestServer(t, true)
	want := ts.do("GET", "/v2/companies/12345678000195", testKeyDelayed, "")
	if want.Code != 200 {
		t.Fatalf("%d", want.Code)
	}
	for _, p := range []string{"/v2/companies/12.345.678%2F0001-95", "/v2/companies/12.345.678%2f0001-95", "/v2/companies/12.345.678%2F0001-95/ratios"} {
		w := ts.do("GET", p, testKeyDelayed, "")
		if w.Code != 200 || (!strings.HasSuffix(p, "ratios") && w.Body.String() != want.Body.String()) {
			t.Errorf("%s: %d %.100s", p, w.Code, w.Body)
		}
	}
	if w := ts.do("GET", "/v2/companies/12.345.678/0001-95", testKeyDelayed, ""); w.Code != 404 {
		t.Errorf("raw slash: %d, want 404", w.Code)
	}
}
