package httpapi

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// eodRouteCases are, for every priced route, what an eod key may ask
// (answered from its one session) and what asks for another session (a
// 403 naming the options). TestEODHistoryPerRoute fails when a priced
// route has no case: a route that shows prices (a file, a stream) must
// call eodHistory and be listed here.
var eodRouteCases = []struct {
	route   string
	method  string
	path    string
	body    string
	refused []struct{ path, body, names string }
}{
	{routeQuote, "GET", "/v2/quotes/ENHZ3?adjusted=true", "", []struct{ path, body, names string }{
		{"/v2/quotes/ENHZ3?start_date=2023-01-01", "", "start_date"},
		{"/v2/quotes/ENHZ3?type=historical&end_date=2024-03-01", "", "type and end_date"},
		{"/v2/quotes/ENHZ3?interval=86400", "", "interval"},
	}},
	{routeQuotes, "POST", "/v2/quotes", `{"tickers":["ENHZ3","MSAZ3"]}`, []struct{ path, body, names string }{
		{"/v2/quotes", `{"tickers":["ENHZ3"],"start_date":"2023-01-01","end_date":"2024-03-01"}`, "start_date and end_date"},
	}},
	{routeQuoteCurrent, "GET", "/v2/quotes/ENHZ3/current", "", nil},
	{routeQuotesCurrent, "POST", "/v2/quotes/current", `{"tickers":["ENHZ3","MSAZ3"]}`, nil},
	// The routes of another type show other sessions as a whole.
	{routeQuoteHistorical, "GET", "", "", []struct{ path, body, names string }{
		{"/v2/quotes/ENHZ3/historical", "", "historical quotes"},
		{"/v2/quotes/ENHZ3/historical.csv?start_date=2023-01-01", "", "historical quotes"},
	}},
	{routeQuoteChart, "GET", "", "", []struct{ path, body, names string }{
		{"/v2/quotes/ENHZ3/chart", "", "chart quotes"},
		{"/v2/quotes/ENHZ3/chart.csv", "", "chart quotes"},
	}},
	{routeQuotesHistorical, "POST", "", "", []struct{ path, body, names string }{
		{"/v2/quotes/historical", `{"tickers":["ENHZ3"]}`, "historical quotes"},
		{"/v2/quotes/historical.csv", `{"tickers":["ENHZ3"]}`, "historical quotes"},
	}},
	{routeQuotesChart, "POST", "", "", []struct{ path, body, names string }{
		{"/v2/quotes/chart", `{"tickers":["ENHZ3"]}`, "chart quotes"},
	}},
	{routeTotalReturn, "GET", "/v2/quotes/ENHZ3/total-return?method=net", "", []struct{ path, body, names string }{
		{"/v2/quotes/ENHZ3/total-return?start_date=2023-01-01", "", "start_date"},
		{"/v2/quotes/ENHZ3/total-return?end_date=2024-03-01", "", "end_date"},
	}},
	{routeTotalReturnBatch, "POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3","MSAZ3"]}`, []struct{ path, body, names string }{
		{"/v2/quotes/total-return", `{"tickers":["ENHZ3"],"start_date":"2023-01-01"}`, "start_date"},
	}},
	{routeHighs, "GET", "/v2/indexes/IBOV/highs", "", nil},
	{routeLows, "GET", "/v2/indexes/IBOV/lows", "", nil},
	{routeVariations, "GET", "/v2/stocks/variations", "", nil},
	{routeScreener, "POST", "/v2/screener", `{"limit":5}`, []struct{ path, body, names string }{
		{"/v2/screener", `{"as_of":"2024-01-15"}`, "as_of"},
	}},
}

// The eod plan's one rule, route by route: every priced route, and its
// CSV form, shows an eod key its one session (the previous one, D-1) and
// refuses, 403 naming them, the options that would show another.
func TestEODHistoryPerRoute(t *testing.T) {
	ts := newTestServer(t, true)
	covered := map[string]bool{}
	for _, c := range eodRouteCases {
		covered[c.route] = true
	}
	for r := range eodCoveredElsewhere {
		covered[r] = true
	}
	for i := range routeTable {
		// A CSV form (path.csv) is its route's case.
		if rt := &routeTable[i]; (rt.Priced || rt.Stream) && !covered[strings.TrimSuffix(rt.Path, ".csv")] {
			t.Errorf("priced route %s %s has no eod case: call eodHistory in it and add one", rt.Method, rt.Path)
		}
	}

	// D-1: the session of an eod current quote; the delayed key sees a
	// later one, so the checks below have teeth.
	var q struct{ Date string }
	w := ts.do("GET", "/v2/quotes/ENHZ3", testKeyEOD, "")
	if err := json.Unmarshal(w.Body.Bytes(), &q); err != nil || q.Date == "" {
		t.Fatalf("eod quote: %v %s", err, w.Body)
	}
	d1 := q.Date
	var dq struct{ Date string }
	json.Unmarshal(ts.do("GET", "/v2/quotes/ENHZ3?type=current", testKeyDelayed, "").Body.Bytes(), &dq)
	if dq.Date <= d1 {
		t.Fatalf("delayed sees %s, eod %s: want the delayed key ahead", dq.Date, d1)
	}

	for _, c := range eodRouteCases {
		t.Run(c.method+" "+c.route, func(t *testing.T) {
			for _, x := range c.refused {
				checkError(t, ts.do(c.method, x.path, testKeyEOD, x.body), 403, "does not include "+x.names+": it gives previous-session (D-1) prices only")
				if c.route != routeScreener || x.body == "" {
					continue
				}
				if w := ts.do(c.method, x.path, testKeyDelayed, x.body); w.Code != 200 {
					t.Errorf("the delayed key asking %s: %d %s", x.body, w.Code, w.Body)
				}
			}
			if c.path == "" { // refused as a whole
				return
			}
			w := ts.do(c.method, c.path, testKeyEOD, c.body)
			if w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			dates := sessionDates(t, w.Body.Bytes())
			if len(dates) == 0 && c.route != routeScreener { // screener rows carry no date
				t.Fatalf("no dated value in %.300s", w.Body)
			}
			for _, d := range dates {
				if d != d1[:10] {
					t.Errorf("eod answer shows %s, want only %s: %.300s", d, d1, w.Body)
					break
				}
			}
			if r := findRoute(c.route); r.CSV != "" {
				csvW := doAcceptKey(ts, c.method, csvPath(r, c.path), c.body, "text/csv", testKeyEOD)
				recs := readCSV(t, csvW)
				col := -1
				for i, h := range recs[0] {
					if h == "date" {
						col = i
					}
				}
				if col < 0 || len(recs) < 2 {
					t.Fatalf("CSV %v", recs)
				}
				for _, r := range recs[1:] {
					if r[col] != "" && r[col][:10] != d1[:10] {
						t.Errorf("CSV row %v: want the session %s only", r, d1)
					}
				}
			}
		})
	}
	// Index levels, through the quote route: the level of the one session.
	w = ts.do("GET", "/v2/quotes/IBOV", testKeyEOD, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"date":"`+d1[:10]) {
		t.Errorf("eod index level: %d %.300s, want the session %s", w.Code, w.Body, d1)
	}
	checkError(t, ts.do("GET", "/v2/quotes/IBOV?type=historical&start_date=2024-01-01", testKeyEOD, ""), 403, "does not include type and start_date")
}

// The rule as a function, for the routes to come (files, streams).
func TestEODHistoryRule(t *testing.T) {
	eod := &call{key: KeyEntry{Plan: PlanEOD}}
	delayed := &call{key: KeyEntry{Plan: PlanDelayed}}
	if err := eodHistory(eod, nil); err != nil {
		t.Errorf("eod, nothing sent: %v", err)
	}
	if err := eodHistory(delayed, []string{"start_date"}); err != nil {
		t.Errorf("delayed: %v", err)
	}
	err := eodHistory(eod, []string{"start_date", "end_date", "as_of"})
	var he *Error
	if !errors.As(err, &he) || he.Status != 403 || !strings.Contains(he.Message, "start_date, end_date and as_of") {
		t.Errorf("eod with a window: %v", err)
	}
}

// sessionDates returns the sessions an answer shows: every "date" of its
// datapoints, and a ranking's "session" and "updated_at", as YYYY-MM-DD.
func sessionDates(t *testing.T, body []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for k, v := range x {
				if s, ok := v.(string); ok && (k == "date" || k == "session" || k == "updated_at") && len(s) >= 10 {
					out = append(out, s[:10])
				}
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(v)
	return out
}

// eodCoveredElsewhere are the priced routes whose eod rule another test
// checks: the stream has no option that asks for another session; it
// sends an eod key the previous session's daily bars (its plan's hub).
// The files: an eod key gets those without prices (a whole history of
// prices is other sessions).
var eodCoveredElsewhere = map[string]string{routeStreamQuotes: "TestStreamIndexAndEOD",
	routeFiles: "TestFilesList", routeFile: "TestFilesEOD"}

// csvPath is the path of the CSV form of the request of path on r: its
// .csv route's, or path itself (an untyped route, CSV by Accept).
func csvPath(r *Route, path string) string {
	if r.Untyped {
		return path
	}
	p, q, _ := strings.Cut(path, "?")
	if q != "" {
		q = "?" + q
	}
	return p + ".csv" + q
}

func findRoute(path string) *Route {
	for i := range routeTable {
		if routeTable[i].Path == path {
			return &routeTable[i]
		}
	}
	return nil
}

func doAcceptKey(ts *testServer, method, path, body, accept, key string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Accept", accept)
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

// TestEODValuationBeforeItsCut: the valuation ratios are priced at a
// session's close (MARKET_CAP ÷ the share count, a multiple × its
// per-share figure), so an eod key, whose quotes stop at D-1, gets none
// priced at the snapshot's last session D (with or without as_of): its
// TTM series end at D-1 instead, priced at the closes its quotes show,
// the point the delayed key gets with as_of D-1; the ratio route and its
// CSV form, the company's and the list's market_cap agree. The delayed
// key keeps D's.
func TestEODValuationBeforeItsCut(t *testing.T) {
	ts := newTestServer(t, true)
	last := ts.store.Current().LastSession().String() // D: 2024-03-28
	var quote struct{ Date string }
	if err := json.Unmarshal(ts.do("GET", "/v2/quotes/ENHZ3", testKeyEOD, "").Body.Bytes(), &quote); err != nil {
		t.Fatal(err)
	}
	prev := quote.Date[:10] // D-1, the eod key's session
	if prev >= last {
		t.Fatalf("the eod quote is dated %s, the snapshot's last session %s: the fixture shows no cut", quote.Date, last)
	}
	type point struct {
		Value         *float64 `json:"value"`
		ReferenceDate string   `json:"reference_date"`
	}
	valuation := func(key, query string) map[string]map[string][]point {
		w := ts.do("GET", "/v2/companies/ENHZ/ratios/valuation?"+query, key, "")
		var v map[string]map[string][]point
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %s", query, w.Code, w.Body)
		}
		return v
	}
	same := func(a, b *float64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
	delayed := valuation(testKeyDelayed, "frequency=TTM")["MARKET_CAP"]["TTM"]
	if got := delayed[len(delayed)-1]; got.ReferenceDate[:10] != last || got.Value == nil {
		t.Fatalf("delayed: last MARKET_CAP point %+v, want a value at %s", got, last)
	}
	// Every TTM valuation series: the eod key's ends at D-1 with the
	// delayed key's point as of D-1, the earlier points as they are.
	asOfPrev := valuation(testKeyDelayed, "frequency=TTM&as_of="+prev)
	eodAll := valuation(testKeyEOD, "frequency=TTM")
	checked := 0
	for id, byFreq := range valuation(testKeyDelayed, "frequency=TTM") {
		eod, old := eodAll[id]["TTM"], asOfPrev[id]["TTM"]
		if len(old) == 0 || old[len(old)-1].ReferenceDate[:10] != prev {
			continue
		}
		checked++
		all := byFreq["TTM"]
		if len(eod) == 0 || eod[len(eod)-1].ReferenceDate[:10] != prev || !same(eod[len(eod)-1].Value, old[len(old)-1].Value) {
			t.Errorf("%s: the eod key's last point %+v, want the delayed key's as of %s %+v", id, eod[len(eod)-1:], prev, old[len(old)-1])
		}
		for _, p := range eod[:len(eod)-1] {
			if p.ReferenceDate[:10] >= prev || !slices.ContainsFunc(all, func(q point) bool { return q.ReferenceDate == p.ReferenceDate && same(q.Value, p.Value) }) {
				t.Errorf("%s: the eod key's point %+v is not one of the delayed key's before %s", id, p, prev)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("%d TTM valuation series with a point at %s as of it", checked, prev)
	}
	// The eod plan's screener prices its columns at the same session:
	// its multiples are the series' last points.
	var screened struct {
		Data []struct {
			Ticker string
			Sort   []struct{ Value *float64 }
		}
	}
	body := `{"primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":">","value":-1e9}],"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}],"limit":500}`
	if err := json.Unmarshal(ts.do("POST", "/v2/screener", testKeyEOD, body).Body.Bytes(), &screened); err != nil {
		t.Fatal(err)
	}
	classOf := map[string]string{"ENHZ3": "CS", "ENHZ4": "PS", "ENHZ11": "UNIT"}
	matched := 0
	for _, r := range screened.Data {
		class, ok := classOf[r.Ticker]
		if !ok {
			continue
		}
		pe := eodAll["PRICE_TO_EARNINGS_"+class]["TTM"]
		if len(pe) == 0 || len(r.Sort) != 1 || !same(pe[len(pe)-1].Value, r.Sort[0].Value) || pe[len(pe)-1].ReferenceDate[:10] != prev {
			t.Errorf("%s: the eod screener's PRICE_TO_EARNINGS %+v, the valuation route's last point %+v", r.Ticker, r.Sort, pe[len(pe)-1:])
		}
		matched++
	}
	if matched != len(classOf) {
		t.Errorf("%d of ENHZ's classes in the eod screener", matched)
	}
	eod := valuation(testKeyEOD, "frequency=TTM&ids=MARKET_CAP")["MARKET_CAP"]["TTM"]
	want := eod[len(eod)-1]
	if want.ReferenceDate[:10] != prev || want.Value == nil || *want.Value == *delayed[len(delayed)-1].Value {
		t.Fatalf("eod: last MARKET_CAP point %+v, want a value at %s other than D's", want, prev)
	}
	for _, p := range valuation(testKeyEOD, "frequency=TTM&ids=MARKET_CAP&as_of="+last)["MARKET_CAP"]["TTM"] {
		if p.ReferenceDate[:10] >= last {
			t.Errorf("eod with as_of=%s: a MARKET_CAP point at %s", last, p.ReferenceDate)
		}
	}
	if w := ts.do("GET", "/v2/companies/ENHZ/ratios/valuation.csv?frequency=TTM", testKeyEOD, ""); w.Code != 200 || strings.Contains(w.Body.String(), ","+last+"T00:00:00Z,") ||
		!strings.Contains(w.Body.String(), ","+prev+"T00:00:00Z,") {
		t.Errorf("eod: the CSV form holds a point of %s, or none of %s: %d\n%s", last, prev, w.Code, w.Body)
	}
	for _, key := range []string{testKeyEOD, testKeyDelayed} {
		want := want.Value
		if key == testKeyDelayed {
			want = delayed[len(delayed)-1].Value
		}
		var detail struct {
			MarketCap struct{ Value *float64 } `json:"market_cap"`
		}
		if err := json.Unmarshal(ts.do("GET", "/v2/companies/ENHZ?show_market_cap=true", key, "").Body.Bytes(), &detail); err != nil {
			t.Fatal(err)
		}
		if !same(detail.MarketCap.Value, want) {
			t.Errorf("key %s: the company's market_cap %v, want %v", key[len(key)-1:], detail.MarketCap.Value, want)
		}
		var list []struct {
			Symbol    string
			MarketCap struct{ Value *float64 } `json:"market_cap"`
		}
		if err := json.Unmarshal(ts.do("GET", "/v2/companies?show_market_cap=true", key, "").Body.Bytes(), &list); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range list {
			if c.Symbol == "ENHZ" {
				found = true
				if !same(c.MarketCap.Value, want) {
					t.Errorf("key %s: the list's market_cap of ENHZ %v, want %v", key[len(key)-1:], c.MarketCap.Value, want)
				}
			}
		}
		if !found {
			t.Errorf("key %s: ENHZ not in the list", key[len(key)-1:])
		}
	}
}
