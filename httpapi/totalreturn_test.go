package httpapi

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var (
	trDemoOnce sync.Once
	trDemoDS   *engine.Dataset
	trDemoErr  error
)

// trDemoServer serves a demo of 40 companies, 4 BDR issuers, 10 FIIs and
// 4 ETFs with daily histories from 2014: cash events, splits, reverse
// splits, bonuses and distributions over 13 years. With
// PREGAO_TOTAL_RETURN_SCALE1=1 it serves the scale-1 demo that make run
// serves instead (histories from 2000, 1,142 tickers): the tests below
// then check every one of its tickers with events (about 2.5 minutes).
func trDemoServer(tb testing.TB) (*testServer, *engine.Dataset) {
	tb.Helper()
	trDemoOnce.Do(func() {
		u := demo.GenerateSize(29, demo.Size{Companies: 40, SponsoredBDRs: 2, UnsponsoredBDRs: 2, FIIs: 10, ETFs: 4,
			ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2014})
		if os.Getenv("PREGAO_TOTAL_RETURN_SCALE1") == "1" {
			u = demo.Generate(1, 1)
		}
		d, err := ratios.Derive(u)
		if err != nil {
			trDemoErr = err
			return
		}
		u.Derived = d
		trDemoDS, trDemoErr = engine.Build(u)
	})
	if trDemoErr != nil {
		tb.Fatal(trDemoErr)
	}
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(trDemoDS)
	ts.api = New(DefaultConfig(), ts.store, testKeys(tb), nil, ts.reg, nil)
	return ts, trDemoDS
}

// getInto serves a GET and decodes its 200 answer into v.
func (ts *testServer) getInto(tb testing.TB, path string, v any) {
	tb.Helper()
	w := ts.do("GET", path, testKeyDelayed, "")
	if w.Code != 200 {
		tb.Fatalf("GET %s: %d %.300s", path, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		tb.Fatalf("GET %s: %v", path, err)
	}
}

type trItem struct {
	Date  string   `json:"date"`
	Close *float64 `json:"close_price"`
	Index *float64 `json:"total_return_index"`
	Cash  float64  `json:"cash_value"`
}

type rawBar struct {
	Date   string   `json:"date"`
	Close  *float64 `json:"close_price"`
	Factor float64  `json:"adjustment_factor"`
}

type cashItem struct {
	Ticker  string   `json:"ticker"`
	ISIN    string   `json:"isin_code"`
	PriorEx string   `json:"prior_ex_date"`
	Value   *float64 `json:"value"`
	Net     *float64 `json:"net_value"`
}

type shareItem struct {
	PriorEx string   `json:"prior_ex_date"`
	Type    string   `json:"type"`
	Factor  *float64 `json:"factor"`
	ISIN    string   `json:"isin_code"`
}

// recomputeTR is the index of issue 29 written out from the API's raw
// answers, independently of engine.AppendTotalReturn: bars are the
// unadjusted daily series (close and adjustment_factor per session), cash
// the ticker's current cash events (their prior_ex_date as YYYY-MM-DD and
// the value of the method); prev is the session before the first bar
// ("" when none). It returns the index and D_t of each bar.
func recomputeTR(bars []rawBar, cash map[string]float64, prev string) (idx, d []float64) {
	day := func(i int) string {
		if i < 0 {
			return prev
		}
		return bars[i].Date[:10]
	}
	idx = make([]float64, len(bars))
	d = make([]float64, len(bars))
	for i := range bars {
		// D_t: the events whose first session without the right is t.
		for pe, v := range cash {
			if pe < day(i) && day(i-1) != "" && pe >= day(i-1) {
				d[i] += v
			}
		}
		if i == 0 {
			idx[i] = 1
			continue
		}
		c0, c1 := *bars[i-1].Close, *bars[i].Close
		idx[i] = idx[i-1] * c1 * bars[i-1].Factor / ((c0 - d[i]) * bars[i].Factor)
	}
	return idx, d
}

// TestTotalReturnRecompute: for every ticker of the demo with a cash event
// or a share event, the gross and the net series over its whole history
// equal, to 1e-12 relative, the index recomputed from the API's own raw
// closes and adjustment factors (GET /quotes/{ticker}), the ticker's cash
// events (its issuer's cash-corporate-actions, highest versions) and
// share events (corporate-actions, whose split, reverse split and bonus
// factors are checked against the steps of the adjustment factor). The
// run must cross splits and pay funds' distributions.
func TestTotalReturnRecompute(t *testing.T) {
	if raceEnabled {
		t.Skip("29 s under the race detector against 3 s without: make test runs it in its pass without -race")
	}
	ts, ds := trDemoServer(t)
	const from, to = "2000-01-01", "2030-01-01"
	var checked, withSplit, funds, withNet, events int
	for i := range ds.Assets() {
		as := &ds.Assets()[i]
		if as.StockType == engine.ClassMacro || as.Daily.Len() < 2 {
			continue
		}
		tk := as.Ticker
		var cashList []cashItem
		var shares []shareItem
		if as.StockType == engine.ClassFundUnit {
			ts.getInto(t, "/v2/traded-funds/"+tk+"/cash-corporate-actions", &cashList)
		} else {
			ts.getInto(t, "/v2/companies/"+tk+"/cash-corporate-actions", &cashList)
			ts.getInto(t, "/v2/companies/"+tk+"/corporate-actions", &shares)
		}
		gross, net := map[string]float64{}, map[string]float64{}
		for _, c := range cashList {
			// The ticker's events: those whose ticker names it (renames
			// followed through the engine's ticker map), else by ISIN.
			if a, ok := ds.Asset(c.Ticker); ok && a != as || !ok && c.ISIN != as.ISIN || c.PriorEx == "" {
				continue
			}
			if c.Value != nil {
				gross[c.PriorEx[:10]] += *c.Value
			}
			if c.Net != nil {
				net[c.PriorEx[:10]] += *c.Net
			}
		}
		if len(gross) == 0 && len(as.AdjustmentEvents()) == 0 {
			continue
		}
		var bars []rawBar
		ts.getInto(t, "/v2/quotes/"+tk+"?start_date="+from+"&end_date="+to, &bars)
		split := false
		for k := 1; k < len(bars); k++ {
			if bars[k].Factor != bars[k-1].Factor {
				split = true
			}
		}
		for _, s := range shares {
			if s.Factor == nil || s.ISIN != as.ISIN || s.Type != engine.ActStockSplit && s.Type != engine.ActReverseSplit && s.Type != engine.ActStockBonus {
				continue
			}
			// The factor steps by the event's factor from its last session
			// with the right to the next.
			for k := 1; k < len(bars); k++ {
				if bars[k-1].Date[:10] == s.PriorEx[:10] {
					if r := bars[k-1].Factor / bars[k].Factor; math.Abs(r / *s.Factor - 1) > 1e-12 {
						t.Errorf("%s: %s of %s: factor steps by %v, the event's is %v", tk, s.Type, s.PriorEx[:10], r, *s.Factor)
					}
				}
			}
		}
		for _, method := range []string{"gross", "net"} {
			cash := gross
			if method == "net" {
				cash = net
			}
			var got []trItem
			ts.getInto(t, "/v2/quotes/"+tk+"/total-return?start_date="+from+"&end_date="+to+"&method="+method, &got)
			want, wantD := recomputeTR(bars, cash, "")
			if len(got) != len(bars) {
				t.Fatalf("%s %s: %d points, %d sessions", tk, method, len(got), len(bars))
			}
			for k := range got {
				g := got[k]
				if g.Date != bars[k].Date || g.Close == nil || *g.Close != *bars[k].Close || g.Index == nil ||
					math.Abs(*g.Index/want[k]-1) > 1e-12 || math.Abs(g.Cash-wantD[k]) > 1e-12*math.Max(1, wantD[k]) {
					t.Fatalf("%s %s, %s: %+v (index %v), want close %v index %v cash %v", tk, method, bars[k].Date, g, deref(g.Index), *bars[k].Close, want[k], wantD[k])
				}
				if wantD[k] != 0 {
					events++
				}
			}
		}
		checked++
		if split && len(gross) > 0 {
			withSplit++
		}
		if as.StockType == engine.ClassFundUnit && len(gross) > 0 {
			funds++
		}
		for pe, v := range gross {
			if net[pe] != v {
				withNet++
				break
			}
		}
	}
	t.Logf("%d tickers (%d with cash across a share event, %d funds, %d with a net value below the gross), %d ex-dates checked", checked, withSplit, funds, withNet, events)
	if checked < 20 || withSplit == 0 || funds == 0 || withNet == 0 {
		t.Errorf("%d tickers, %d with a share event, %d funds, %d with net values: the demo does not exercise the route", checked, withSplit, funds, withNet)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A window without cash events and share events answers the price return
// exactly: close_t / close_0, bit for bit, from the closes the route and
// the quote series serve. A window starting on an ex-date shows its cash
// and starts at 1.0; the batch answers each ticker as the single route.
func TestTotalReturnPriceReturn(t *testing.T) {
	ts, ds := trDemoServer(t)
	n := 0
	for i := range ds.Assets() {
		as := &ds.Assets()[i]
		if as.StockType == engine.ClassMacro || len(ds.ExCash(as)) > 0 || len(as.AdjustmentEvents()) > 0 || as.Daily.Len() < 10 {
			continue
		}
		var got []trItem
		ts.getInto(t, "/v2/quotes/"+as.Ticker+"/total-return?start_date=2000-01-01&method=net", &got)
		var bars []rawBar
		ts.getInto(t, "/v2/quotes/"+as.Ticker+"?start_date=2000-01-01", &bars)
		if len(got) != len(bars) || len(got) == 0 {
			t.Fatalf("%s: %d points, %d bars", as.Ticker, len(got), len(bars))
		}
		for k := range got {
			if want := *bars[k].Close / *bars[0].Close; *got[k].Index != want || got[k].Cash != 0 {
				t.Fatalf("%s %s: index %v cash %v, want %v and 0", as.Ticker, got[k].Date, *got[k].Index, got[k].Cash, want)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no ticker without events")
	}
	// A window that starts on an ex-date: its cash is shown, the index
	// starts there at 1.0; the next session steps by the price alone.
	for i := range ds.Assets() {
		as := &ds.Assets()[i]
		ex := ds.ExCash(as)
		if len(ex) == 0 || as.StockType == engine.ClassMacro {
			continue
		}
		e := ex[len(ex)/2]
		k := as.DayIndex(e.PriorEx) + 1
		if k <= 0 || k+1 >= as.Daily.Len() {
			continue
		}
		day := as.Daily.Dates[k]
		var got []trItem
		ts.getInto(t, fmt.Sprintf("/v2/quotes/%s/total-return?start_date=%s&end_date=%s", as.Ticker, day, as.Daily.Dates[k+1]), &got)
		if len(got) != 2 || *got[0].Index != 1 || got[0].Cash != float64(e.Gross) || got[1].Cash != 0 ||
			*got[1].Index != *got[1].Close*float64(as.AdjustmentFactor(day)/as.AdjustmentFactor(as.Daily.Dates[k+1])) / *got[0].Close &&
				math.Abs(*got[1].Index/(*got[1].Close*float64(as.AdjustmentFactor(day)/as.AdjustmentFactor(as.Daily.Dates[k+1])) / *got[0].Close)-1) > 1e-15 {
			t.Errorf("%s from its ex-date %s: %+v", as.Ticker, day, got)
		}
		// The batch answers each ticker as the single route.
		body := fmt.Sprintf(`{"tickers":[%q,"XXXX3",%q],"start_date":"%s","end_date":"%s"}`, as.Ticker, as.Ticker, day, as.Daily.Dates[k+1])
		w := ts.do("POST", "/v2/quotes/total-return", testKeyDelayed, body)
		var batch map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &batch); err != nil || w.Code != 200 || len(batch) != 2 {
			t.Fatalf("batch: %d %v %s", w.Code, err, w.Body)
		}
		single := ts.do("GET", fmt.Sprintf("/v2/quotes/%s/total-return?start_date=%s&end_date=%s", as.Ticker, day, as.Daily.Dates[k+1]), testKeyDelayed, "")
		if string(batch[as.Ticker]) != single.Body.String() || string(batch["XXXX3"]) != tickerNotFound {
			t.Errorf("batch %s, single %s", w.Body, single.Body)
		}
		break
	}
}

// Bad input is a 400 naming the parameter or the body field; an unknown
// ticker, a macro series and an index are 404s; a window without
// sessions is an empty series.
func TestTotalReturnBadInput(t *testing.T) {
	ts := newTestServer(t, true)
	for _, c := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/v2/quotes/ENHZ3/total-return?start_date=2024-13-01", "", 400, "start_date"},
		{"GET", "/v2/quotes/ENHZ3/total-return?start_date=2024-02-30", "", 400, "not a calendar date"},
		{"GET", "/v2/quotes/ENHZ3/total-return?end_date=20240301", "", 400, "end_date"},
		{"GET", "/v2/quotes/ENHZ3/total-return?start_date=2024-03-02&end_date=2024-03-01", "", 400, "start_date 2024-03-02 is after end_date 2024-03-01"},
		{"GET", "/v2/quotes/ENHZ3/total-return?method=GROSS", "", 400, `method="GROSS": want one of gross, net`},
		{"GET", "/v2/quotes/ENHZ3/total-return?method=total", "", 400, "method"},
		{"GET", "/v2/quotes/ENHZ3/total-return?adjusted=true", "", 400, `unknown query parameter "adjusted"`},
		{"GET", "/v2/quotes/ENHZ3/total-return?format=xml", "", 400, "format"},
		{"GET", "/v2/quotes/PETR4X/total-return", "", 400, `ticker "PETR4X"`},
		{"GET", "/v2/quotes/ENHZ3,ENHZ4/total-return", "", 400, "ticker"},
		{"GET", "/v2/quotes/XXXX3/total-return", "", 404, "Ticker not found"},
		{"GET", "/v2/quotes/SELIC/total-return", "", 404, "Ticker not found"},
		{"GET", "/v2/quotes/IBOV/total-return", "", 404, "Ticker not found"},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"method":"total"}`, 400, `field "method": "total": want gross or net`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"start_date":"2024-1-01"}`, 400, `field "start_date"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"end_date":"2024-02-30"}`, 400, `field "end_date"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"start_date":"2024-03-02","end_date":"2024-03-01"}`, 400, "start_date 2024-03-02 is after end_date"},
		{"POST", "/v2/quotes/total-return", `{"tickers":[]}`, 400, `field "tickers"`},
		{"POST", "/v2/quotes/total-return", `{"start_date":"2024-03-01"}`, 400, `field "tickers"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["enhz3"]}`, 400, `field "tickers"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"type":"historical"}`, 400, `"type"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"],"adjusted":true}`, 400, `"adjusted"`},
		{"POST", "/v2/quotes/total-return", `{"tickers":` + manyTickers(MaxTickers+1) + `}`, 400, "tickers"},
		{"POST", "/v2/quotes/total-return", `not json`, 400, "request body"},
		{"POST", "/v2/quotes/total-return?method=net", `{"tickers":["ENHZ3"]}`, 400, `unknown query parameter "method"`},
	} {
		w := ts.do(c.method, c.path, testKeyDelayed, c.body)
		checkError(t, w, c.status, c.want)
	}
	// Windows without sessions are empty, not errors.
	for _, path := range []string{"/v2/quotes/ENHZ3/total-return?start_date=1990-01-01&end_date=1990-12-31", "/v2/quotes/ENHZ3/total-return?start_date=2030-01-01&end_date=2030-01-02"} {
		if w := ts.do("GET", path, testKeyDelayed, ""); w.Code != 200 || w.Body.String() != "[]" {
			t.Errorf("%s: %d %s", path, w.Code, w.Body)
		}
	}
	// At most 500 tickers: exactly 500 is fine.
	if w := ts.do("POST", "/v2/quotes/total-return", testKeyDelayed, `{"tickers":`+manyTickers(MaxTickers)+`}`); w.Code != 200 {
		t.Errorf("500 tickers: %d %.200s", w.Code, w.Body)
	}
}

// manyTickers returns a JSON array of n distinct well-formed tickers.
func manyTickers(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"X%03d3"`, i)
	}
	b.WriteByte(']')
	return b.String()
}

// CSV: format=csv (GET) or Accept (POST), one row per session with the
// JSON's fields, a ticker column for the batch; a window without sessions
// has the header alone.
func TestTotalReturnCSV(t *testing.T) {
	ts := newTestServer(t, true)
	w := ts.do("GET", "/v2/quotes/ENHZ3/total-return?start_date=2023-01-01&format=csv", testKeyDelayed, "")
	lines := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/csv") || lines[0] != "date,close_price,total_return_index,cash_value" || len(lines) != 8 ||
		lines[4] != "2024-03-25T00:00:00Z,44.52,1.0924018970893972,0.86" {
		t.Errorf("GET csv: %d %q", w.Code, lines)
	}
	w = ts.do("GET", "/v2/quotes/ENHZ3/total-return?start_date=1990-01-01&end_date=1990-01-02&format=csv", testKeyDelayed, "")
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != "date,close_price,total_return_index,cash_value" {
		t.Errorf("empty csv: %d %q", w.Code, w.Body)
	}
	r := httptest.NewRequest("POST", "/v2/quotes/total-return", strings.NewReader(`{"tickers":["ENHZ4","XXXX3"],"start_date":"2024-03-26"}`))
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	r.Header.Set("Accept", "text/csv")
	rec := httptest.NewRecorder()
	ts.api.ServeHTTP(rec, r)
	lines = strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if rec.Code != 200 || lines[0] != "ticker,date,close_price,total_return_index,cash_value,error" || len(lines) != 5 || lines[4] != "XXXX3,,,,,Ticker not found" {
		t.Errorf("POST csv: %d %q", rec.Code, lines)
	}
}

// A batch answers, for each ticker once, what the single route answers,
// over a long window and a short one, unknown tickers and macro series
// with their 404 in place.
func TestTotalReturnBatchEqualsSingles(t *testing.T) {
	ts, ds := trDemoServer(t)
	var tickers []string
	for i := range ds.Assets() {
		tickers = append(tickers, ds.Assets()[i].Ticker)
	}
	tickers = append(tickers, "XXXX3", tickers[0])
	for _, window := range []string{`"start_date":"2014-01-01","end_date":"2026-12-31"`, `"start_date":"2026-11-10","end_date":"2026-11-20"`} {
		body := `{"tickers":["` + strings.Join(tickers, `","`) + `"],` + window + `,"method":"net"}`
		w := ts.do("POST", "/v2/quotes/total-return", testKeyDelayed, body)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
			t.Fatalf("%s: %d %v", window, w.Code, err)
		}
		if len(got) != len(tickers)-1 {
			t.Errorf("%s: %d tickers answered, want %d", window, len(got), len(tickers)-1)
		}
		var q struct {
			Start string `json:"start_date"`
			End   string `json:"end_date"`
		}
		json.Unmarshal([]byte("{"+window+"}"), &q)
		for _, tk := range tickers {
			single := ts.do("GET", "/v2/quotes/"+tk+"/total-return?start_date="+q.Start+"&end_date="+q.End+"&method=net", testKeyDelayed, "")
			want := single.Body.String()
			if single.Code == 404 {
				want = tickerNotFound
			}
			if string(got[tk]) != want {
				t.Fatalf("%s %s: batch %.200s, single %.200s", window, tk, got[tk], want)
			}
		}
	}
}
