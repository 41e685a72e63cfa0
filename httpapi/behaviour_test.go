package httpapi

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// getJSON serves a request that must succeed and decodes its answer.
func (ts *testServer) getJSON(t *testing.T, method, path, key, body string) any {
	t.Helper()
	w := ts.do(method, path, key, body)
	if w.Code != 200 {
		t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
	}
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func arr(v any) []any          { a, _ := v.([]any); return a }

func TestRankingOrder(t *testing.T) {
	ts := newTestServer(t, true)
	for _, key := range []string{testKeyDelayed, testKeyEOD} {
		for _, side := range []string{"highs", "lows"} {
			r := arr(obj(ts.getJSON(t, "GET", "/v2/indexes/IBOV/"+side, key, ""))["ranking"])
			if len(r) < 2 {
				t.Fatalf("%s: %d entries", side, len(r))
			}
			for i := 1; i < len(r); i++ {
				a, b := obj(r[i-1])["variation"].(float64), obj(r[i])["variation"].(float64)
				if side == "highs" && a < b || side == "lows" && a > b {
					t.Errorf("%s not ordered: %v then %v", side, a, b)
				}
				if int(obj(r[i])["position"].(float64)) != i+1 {
					t.Errorf("position %v at %d", obj(r[i])["position"], i)
				}
			}
		}
	}
	if r := arr(obj(ts.getJSON(t, "GET", "/v2/indexes/IBOV/lows?limit=1", testKeyDelayed, ""))["ranking"]); len(r) != 1 {
		t.Errorf("limit=1: %d entries", len(r))
	}
}

func TestBatchQuotesPerTickerError(t *testing.T) {
	ts := newTestServer(t, true)
	m := obj(ts.getJSON(t, "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["NOPE3","ENHZ3","ENHZ3"],"type":"current"}`))
	if len(m) != 2 {
		t.Errorf("want 2 keys (duplicates answered once), got %v", m)
	}
	e := obj(obj(m["NOPE3"])["error"])
	if e["status"] != 404.0 || e["message"] != "Ticker not found" {
		t.Errorf("NOPE3: %v", m["NOPE3"])
	}
	if obj(m["ENHZ3"])["close_price"] == nil {
		t.Errorf("ENHZ3: %v", m["ENHZ3"])
	}
}

func TestQuoteWindowAndAdjustment(t *testing.T) {
	ts := newTestServer(t, true)
	// The intraday window is at most 5 days: 5 is fine, 6 is a 400.
	ts.getJSON(t, "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"interval":60,"start_date":"2024-03-23","end_date":"2024-03-28"}`)
	checkError(t, ts.do("POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"interval":60,"start_date":"2024-03-22","end_date":"2024-03-28"}`), 400, "at most 5 days")
	// Daily intervals have no window limit.
	ts.getJSON(t, "POST", "/v2/quotes", testKeyDelayed, `{"tickers":["ENHZ3"],"interval":86400,"start_date":"2000-01-01","end_date":"2024-03-28"}`)
	// MSAZ3 split 1:2 with prior_ex_date 2024-03-26 (in this copy of the bundle): adjusted closes up
	// to that date are halved, later ones unchanged.
	body := `{"tickers":["MSAZ3"],"start_date":"2024-03-01","end_date":"2024-03-28"%s}`
	raw := arr(obj(ts.getJSON(t, "POST", "/v2/quotes", testKeyDelayed, strings.Replace(body, "%s", "", 1)))["MSAZ3"])
	adj := arr(obj(ts.getJSON(t, "POST", "/v2/quotes", testKeyDelayed, strings.Replace(body, "%s", `,"adjusted":true`, 1)))["MSAZ3"])
	if len(raw) == 0 || len(raw) != len(adj) {
		t.Fatalf("%d raw, %d adjusted", len(raw), len(adj))
	}
	halved := 0
	for i := range raw {
		r, a := obj(raw[i]), obj(adj[i])
		rc, ac := r["close_price"].(float64), a["close_price"].(float64)
		f := r["adjustment_factor"].(float64)
		if d := r["date"].(string)[:10]; d <= "2024-03-26" {
			if f != 2 || ac*2 != rc {
				t.Errorf("%s: close %v adjusted %v factor %v", d, rc, ac, f)
			}
			halved++
		} else if f != 1 || ac != rc {
			t.Errorf("%s: close %v adjusted %v factor %v", d, rc, ac, f)
		}
	}
	if halved == 0 {
		t.Error("no session before the split")
	}
}

func TestRatiosTickerVersusSymbol(t *testing.T) {
	ts := newTestServer(t, true)
	bySym := obj(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios/valuation?frequency=TTM", testKeyDelayed, ""))
	byTk := obj(ts.getJSON(t, "GET", "/v2/companies/ENHZ4/ratios/valuation?frequency=TTM", testKeyDelayed, ""))
	if _, ok := bySym["PRICE_TO_EARNINGS_PS"]; !ok {
		t.Fatalf("by symbol: no PRICE_TO_EARNINGS_PS in %v", keys(bySym))
	}
	if _, ok := bySym["PRICE_TO_EARNINGS"]; ok {
		t.Error("by symbol: unsuffixed per-class id")
	}
	for k := range byTk {
		if strings.HasSuffix(k, "_PS") || strings.HasSuffix(k, "_CS") || strings.HasSuffix(k, "_UNIT") {
			t.Errorf("by ticker: suffixed id %s", k)
		}
	}
	a, _ := json.Marshal(byTk["PRICE_TO_EARNINGS"])
	b, _ := json.Marshal(bySym["PRICE_TO_EARNINGS_PS"])
	if string(a) != string(b) || len(a) < 10 {
		t.Errorf("ticker ENHZ4 PRICE_TO_EARNINGS %s != symbol PRICE_TO_EARNINGS_PS %s", a, b)
	}
	// Company-level ids are there both ways, without suffix.
	if byTk["MARKET_CAP"] == nil || bySym["MARKET_CAP"] == nil {
		t.Error("MARKET_CAP missing")
	}
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// points flattens a ratio answer into its points.
func points(v any) []map[string]any {
	var out []map[string]any
	for _, byFreq := range obj(v) {
		for _, ps := range obj(byFreq) {
			for _, p := range arr(ps) {
				out = append(out, obj(p))
			}
		}
	}
	return out
}

func TestRatioDateFiltersAreStrict(t *testing.T) {
	ts := newTestServer(t, true)
	all := points(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios", testKeyDelayed, ""))
	if len(all) == 0 {
		t.Fatal("no points")
	}
	for _, field := range []string{"publish_date", "retrieval_date"} {
		pivot := all[0][field].(string)
		got := points(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios?"+field+"="+pivot, testKeyDelayed, ""))
		want := 0
		for _, p := range all {
			if p[field].(string) > pivot {
				want++
			}
		}
		if len(got) != want {
			t.Errorf("%s > %s: %d points, want %d", field, pivot, len(got), want)
		}
		for _, p := range got {
			if p[field].(string) <= pivot {
				t.Errorf("%s %s kept with filter %s", field, p[field], pivot)
			}
		}
	}
	// latest_by_reference_date: one point per reference date and frequency.
	v := obj(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios?latest_by_reference_date=true", testKeyDelayed, ""))
	for id, byFreq := range v {
		for f, ps := range obj(byFreq) {
			seen := map[string]bool{}
			for _, p := range arr(ps) {
				rd := obj(p)["reference_date"].(string)
				if seen[rd] {
					t.Errorf("%s %s: two points for %s", id, f, rd)
				}
				seen[rd] = true
			}
		}
	}
	// show_calculation adds calculation and variables.
	p := points(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios?ids=NET_MARGIN&show_calculation=true", testKeyDelayed, ""))
	if len(p) == 0 || p[0]["calculation"] == nil || p[0]["variables"] == nil {
		t.Errorf("show_calculation: %v", p)
	}
	if p := points(ts.getJSON(t, "GET", "/v2/companies/ENHZ/ratios?ids=NET_MARGIN", testKeyDelayed, "")); len(p) == 0 || p[0]["calculation"] != nil {
		t.Errorf("without show_calculation: %v", p)
	}
}

func TestCashActionVersions(t *testing.T) {
	ts := newTestServer(t, true)
	cur := arr(ts.getJSON(t, "GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, ""))
	all := arr(ts.getJSON(t, "GET", "/v2/companies/cash-corporate-actions?current=false&bdr=true", testKeyDelayed, ""))
	if len(all) <= len(cur) {
		t.Errorf("current=false %d rows, current=true %d", len(all), len(cur))
	}
	events := map[string]bool{}
	for _, c := range cur {
		o := obj(c)
		ev := o["ticker"].(string) + o["name"].(string) + o["prior_ex_date"].(string)
		if events[ev] {
			t.Errorf("two versions of %s with current=true", ev)
		}
		events[ev] = true
	}
}

func TestScreenerRules(t *testing.T) {
	ts := newTestServer(t, true)
	all := obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false}`))
	rows := arr(all["data"])
	prim := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{}`))["data"])
	if len(prim) >= len(rows) {
		t.Errorf("primaryOnly: %d rows of %d", len(prim), len(rows))
	}
	names := map[string]bool{}
	for _, r := range prim {
		n := obj(r)["trading_name"].(string)
		if names[n] {
			t.Errorf("primaryOnly: two rows of %s", n)
		}
		names[n] = true
	}
	md := obj(all["metadata"])
	if md["count"].(float64) != float64(len(rows)) || md["limit"].(float64) != 50 || md["primaryOnly"] != false {
		t.Errorf("metadata %v", md)
	}
	// between is inclusive: min = max = a row's price keeps that row.
	p := obj(rows[0])["current_price"].(float64)
	pj, _ := json.Marshal(p)
	got := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"close_price","op":"between","min":`+string(pj)+`,"max":`+string(pj)+`}]}`))["data"])
	if len(got) == 0 {
		t.Fatal("between min=max excluded the row")
	}
	f := obj(arr(obj(got[0])["filters"])[0])
	if f["applied_value"] != p {
		t.Errorf("applied_value %v, want %v", f["applied_value"], p)
	}
	// A macro sector id expands to its sub-industries; the sub-industry
	// id itself also matches.
	macro := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"sector","in":["10"]}]}`))["data"])
	micro := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"filters":[{"type":"sector","in":["10101010"]}]}`))["data"])
	if len(macro) == 0 || len(macro) != len(micro) {
		t.Errorf("sector 10: %d rows, sub-industry 10101010: %d", len(macro), len(micro))
	}
	// Sorting by a droplet ratio ascending; nulls last.
	s := arr(obj(ts.getJSON(t, "POST", "/v2/screener", testKeyDelayed, `{"primaryOnly":false,"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"asc"}]}`))["data"])
	last, seenNull := -1e300, false
	for _, r := range s {
		v := obj(arr(obj(r)["sort"])[0])["value"]
		if v == nil {
			seenNull = true
			continue
		}
		if seenNull || v.(float64) < last {
			t.Errorf("droplet sort out of order at %v", v)
		}
		last = v.(float64)
	}
}

func TestFundRatioRules(t *testing.T) {
	ts := newTestServer(t, true)
	a, _ := json.Marshal(ts.getJSON(t, "GET", "/v2/traded-funds/GSUL11/ratios?id=P_NAV", testKeyDelayed, ""))
	b, _ := json.Marshal(ts.getJSON(t, "GET", "/v2/traded-funds/gsul/ratios?ids=p_nav", testKeyDelayed, ""))
	if string(a) != string(b) {
		t.Errorf("id= and ids= (case-insensitive) differ:\n%s\n%s", a, b)
	}
	all := points(ts.getJSON(t, "GET", "/v2/traded-funds/GSUL11/ratios", testKeyDelayed, ""))
	one := points(ts.getJSON(t, "GET", "/v2/traded-funds/GSUL11/ratios?limit=1&offset=1", testKeyDelayed, ""))
	if len(all) < 2 || len(one) != 1 {
		t.Fatalf("%d points, limit=1&offset=1 gave %d", len(all), len(one))
	}
	checkError(t, ts.do("GET", "/v2/traded-funds/GSUL11/ratios?offset=100000", testKeyDelayed, ""), 404, "no indicator found")
}
