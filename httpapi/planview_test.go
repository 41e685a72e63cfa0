package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
)

// planServer returns a test server of the small Dataset whose clock is
// clk, with the ratios file to serve.
func planServer(t *testing.T, clk Clock) *testServer {
	t.Helper()
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	api := New(DefaultConfig(), store, testKeys(t), clk, prometheus.NewRegistry(), nil)
	api.SetFiles(ratiosFiles{dir: t.TempDir()})
	return &testServer{api: api, store: store}
}

// valuedPaths are requests of every route that shows valuations
// (Route.valued), JSON and CSV.
var valuedPaths = []string{
	"/v2/companies/ENHZ/ratios/valuation",
	"/v2/companies/ENHZ3/ratios/valuation?frequency=TTM&show_calculation=true",
	"/v2/companies/ENHZ/ratios/valuation.csv?frequency=TTM",
	"/v2/companies/ENHZ?show_market_cap=true",
	"/v2/companies?show_market_cap=true",
}

// TestDelayedValuationWithinItsDelay: within 15 minutes of the
// snapshot's last data, a delayed key's quote view does not show the
// last session D's close (the cut-off is before it), so its valuations,
// each priced at a session's close, leave out D as an eod key's do that
// evening: every route that shows them answers what the eod key gets at
// the same clock (the TTM series end at D-1, priced at the closes the
// view shows complete), with no Last-Modified and an ETag of its own;
// the ratios file, which holds D's points, is withheld. From the
// cut-off's passing D's close on, the key gets the Dataset's points
// again, as at the snapshot's clock. Without the cut the key got D's
// points at once.
func TestDelayedValuationWithinItsDelay(t *testing.T) {
	ds := mustSmall(t)
	last := ds.LastSession()
	closeD := timeUnix(engine.SessionComplete(last))
	within := closeD.Add(QuoteDelay - time.Minute) // the cut-off a minute before D's close
	clk := &movingClock{}
	clk.set(within)
	ts := planServer(t, clk)
	whole := newTestServer(t, true) // the snapshot's clock: past the delay

	// The view: ENHZ3's quote is D's running session (its 1-minute bars),
	// the last session it shows complete D-1.
	q := currentQuote(t, ts, testKeyDelayed, "ENHZ3")
	if d, _ := q["date"].(string); !strings.HasPrefix(d, last.String()) || !strings.Contains(d, "T13:") {
		t.Fatalf("the delayed quote within the delay: %v, want D's running session %s", q["date"], last)
	}
	prev := currentQuote(t, ts, testKeyEOD, "ENHZ3")["date"].(string)[:10]
	if prev >= last.String() {
		t.Fatalf("the eod quote at %s: %s", within, prev)
	}
	for _, path := range valuedPaths {
		delayed, eod, after := ts.do("GET", path, testKeyDelayed, ""), ts.do("GET", path, testKeyEOD, ""), whole.do("GET", path, testKeyDelayed, "")
		if delayed.Code != 200 || delayed.Body.String() != eod.Body.String() {
			t.Errorf("%s within the delay: the delayed key's %d %.300s\nwant the eod key's %.300s", path, delayed.Code, delayed.Body, eod.Body)
		}
		if delayed.Body.String() == after.Body.String() {
			t.Errorf("%s: the same answer within the delay and past it: %.300s", path, delayed.Body)
		}
		if b := delayed.Body.String(); strings.Contains(b, `"reference_date":"`+last.String()) || strings.Contains(b, ","+last.String()+"T00:00:00Z,") {
			t.Errorf("%s within the delay: a point of %s: %.300s", path, last, delayed.Body)
		}
		if lm := delayed.Header().Get("Last-Modified"); lm != "" {
			t.Errorf("%s within the delay: Last-Modified %s", path, lm)
		}
		if strings.Contains(path, "ratios/valuation") && !strings.Contains(delayed.Body.String(), prev) {
			t.Errorf("%s within the delay: no point of %s: %.300s", path, prev, delayed.Body)
		}
		// Past the delay: the Dataset's points, as at the snapshot's clock.
		clk.set(closeD.Add(QuoteDelay))
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Body.String() != after.Body.String() || w.Header().Get("Etag") == delayed.Header().Get("Etag") {
			t.Errorf("%s past the delay: %.300s (ETag %s)\nwant %.300s (not the ETag %s)", path, w.Body, w.Header().Get("Etag"), after.Body, delayed.Header().Get("Etag"))
		}
		clk.set(within)
	}
	// The TTM MARKET_CAP series ends at D-1 with the delayed key's point
	// as of D-1 (priced at D-1's closes).
	var v, asOf map[string]map[string][]struct {
		Value         *float64 `json:"value"`
		ReferenceDate string   `json:"reference_date"`
	}
	json.Unmarshal(ts.do("GET", "/v2/companies/ENHZ/ratios/valuation?frequency=TTM&ids=MARKET_CAP", testKeyDelayed, "").Body.Bytes(), &v)
	json.Unmarshal(whole.do("GET", "/v2/companies/ENHZ/ratios/valuation?frequency=TTM&ids=MARKET_CAP&as_of="+prev, testKeyDelayed, "").Body.Bytes(), &asOf)
	got, want := v["MARKET_CAP"]["TTM"], asOf["MARKET_CAP"]["TTM"]
	if len(got) == 0 || len(want) == 0 || got[len(got)-1].ReferenceDate[:10] != prev || got[len(got)-1].Value == nil ||
		want[len(want)-1].Value == nil || *got[len(got)-1].Value != *want[len(want)-1].Value {
		t.Errorf("within the delay: MARKET_CAP %+v, want it to end with the point as of %s %+v", got, prev, want)
	}

	// The ratios file: withheld within the delay, served past it.
	list := ts.do("GET", "/v2/files", testKeyDelayed, "")
	if list.Code != 200 || strings.Contains(list.Body.String(), `"ratios.parquet"`) {
		t.Errorf("the listing within the delay: %d %s", list.Code, list.Body)
	}
	checkError(t, ts.do("GET", "/v2/files/ratios.parquet", testKeyDelayed, ""), 403,
		"your plan (delayed) does not show the session of "+last.String()+" yet, whose valuations (each priced at that session's close) the file ratios.parquet holds: it is served from 20:15 UTC, once the session's last quote is 15 minutes old")
	clk.set(closeD.Add(QuoteDelay))
	if w := ts.do("GET", "/v2/files/ratios.parquet", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("the ratios file past the delay: %d %s", w.Code, w.Body)
	}
}

// TestDelayedCutOfMinuteBarsOnly: a snapshot built while its last
// session D ran holds D's 1-minute bars and no daily bar of D, so its
// data end before D's close. A delayed key's view shows D's last bar 15
// minutes after it: the valuation cut lifts then, not 15 minutes after
// the close, and the ratios file's 403 names that time.
func TestDelayedCutOfMinuteBarsOnly(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	last := mustSmall(t).LastSession()
	for i := range u.Daily {
		s := &u.Daily[i]
		if n := s.Len(); n > 0 && s.Dates[n-1] == last {
			s.Dates, s.Open, s.High, s.Low, s.Close = s.Dates[:n-1], s.Open[:n-1], s.High[:n-1], s.Low[:n-1], s.Close[:n-1]
			s.Volume, s.Quantity, s.Trades = s.Volume[:n-1], s.Quantity[:n-1], s.Trades[:n-1]
		}
	}
	ds := buildDemoDS(t, u)
	if ds.LastSession() != last {
		t.Fatalf("last session %s, want %s (its 1-minute bars)", ds.LastSession(), last)
	}
	var end int64 // when the last 1-minute bar ends
	for _, a := range ds.Assets() {
		if a.Latest.Valid() && a.Latest.Date == last {
			if !a.Latest.Intraday {
				t.Fatalf("%s: a daily quote of %s left", a.Ticker, last)
			}
			end = max(end, a.Latest.VisibleFrom())
		}
	}
	if end == 0 || end >= engine.SessionComplete(last) {
		t.Fatalf("the last bar ends at %s, want before the close", timeUnix(end))
	}
	lifts := timeUnix(end).Add(QuoteDelay)
	clk := &movingClock{}
	clk.set(lifts.Add(-time.Minute))
	store := &engine.Store{}
	store.Publish(ds)
	ts := &testServer{api: New(DefaultConfig(), store, testKeys(t), clk, prometheus.NewRegistry(), nil), store: store}
	ts.api.SetFiles(ratiosFiles{dir: t.TempDir()})
	checkError(t, ts.do("GET", "/v2/files/ratios.parquet", testKeyDelayed, ""), 403,
		"your plan (delayed) does not show the session of "+last.String()+" yet, whose valuations (each priced at that session's close) the file ratios.parquet holds: it is served from "+lifts.Format("15:04")+" UTC, once the session's last quote is 15 minutes old")
	clk.set(lifts)
	if w := ts.do("GET", "/v2/files/ratios.parquet", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("the ratios file at %s: %d %s", lifts, w.Code, w.Body)
	}
}

// TestPlansAgreeWithTheirQuoteView: for each plan, at the clocks where
// its view differs from the Dataset (the delayed plan at the snapshot's
// clock and within 15 minutes of its last data, the eod plan at the
// snapshot's clock and the next day), every route that shows a price or
// something priced agrees with the plan's quote view: the current quote
// (single, batch, CSV), the screener and the index rankings show its
// close and session; the index level none later; the routes of whole
// sessions (variations, total return, the valuation series and the
// market cap, the files' cut and the ratios file) end at the last
// session the view shows complete, the session of its previous close.
// (The stream: TestStreamIndexAndEOD and the SSE tests.)
func TestPlansAgreeWithTheirQuoteView(t *testing.T) {
	ds := mustSmall(t)
	last := ds.LastSession()
	closeD := timeUnix(engine.SessionComplete(last))
	nextDay := closeD.Add(20 * time.Hour)
	for _, tc := range []struct {
		name, key string
		at        time.Time // zero: the snapshot's clock
		complete  string    // the last session the view shows complete
	}{
		{"delayed, the snapshot's clock", testKeyDelayed, time.Time{}, last.String()},
		{"delayed, within the delay", testKeyDelayed, closeD.Add(QuoteDelay - time.Minute), ""},
		{"eod, the snapshot's clock", testKeyEOD, time.Time{}, ""},
		{"eod, the next day", testKeyEOD, nextDay, last.String()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clk Clock
			if !tc.at.IsZero() {
				clk = fixedClock(tc.at)
			}
			ts := planServer(t, clk)
			get := func(method, path, body string) []byte {
				t.Helper()
				w := ts.do(method, path, tc.key, body)
				if w.Code != 200 {
					t.Fatalf("%s %s: %d %.300s", method, path, w.Code, w.Body)
				}
				return w.Body.Bytes()
			}
			// The view: ENHZ3's current quote and the session of its
			// previous close.
			q := currentQuote(t, ts, tc.key, "ENHZ3")
			date, _ := q["date"].(string)
			closeP, _ := q["close_price"].(float64)
			complete := tc.complete
			if complete == "" {
				if q["intraday"] == true || strings.Contains(date, "T13:") {
					complete = ds.SessionAt(engine.SessionClose(last).Add(-time.Second)).String()
				} else {
					complete = date[:10]
				}
			}
			if closeP == 0 || date == "" {
				t.Fatalf("the current quote: %v", q)
			}
			// Current quotes: single, batch, CSV.
			var single struct {
				Date  string  `json:"date"`
				Close float64 `json:"close_price"`
			}
			body := `{"tickers":["ENHZ3"],"type":"current"}`
			path := "/v2/quotes/ENHZ3/current"
			if tc.key == testKeyEOD {
				body, path = `{"tickers":["ENHZ3"]}`, "/v2/quotes/ENHZ3"
			}
			json.Unmarshal(get("GET", path, ""), &single)
			if single.Date != date || single.Close != closeP {
				t.Errorf("GET %s: %+v, want %s %v", path, single, date, closeP)
			}
			var batch map[string]struct {
				Date  string  `json:"date"`
				Close float64 `json:"close_price"`
			}
			json.Unmarshal(get("POST", "/v2/quotes", body), &batch)
			if b := batch["ENHZ3"]; b.Date != date || b.Close != closeP {
				t.Errorf("POST /quotes: %+v, want %s %v", b, date, closeP)
			}
			csvW := doAcceptKey(ts, "GET", path, "", "text/csv", tc.key)
			if recs := readCSV(t, csvW); len(recs) != 2 || !slicesContain(recs[1], date) {
				t.Errorf("CSV %s: %v, want the quote of %s", path, recs, date)
			}
			// The screener's close.
			var sc struct {
				Data []struct {
					Ticker string
					Close  *float64 `json:"current_price"`
				}
			}
			json.Unmarshal(get("POST", "/v2/screener", `{"primaryOnly":false,"limit":500}`), &sc)
			found := false
			for _, r := range sc.Data {
				if r.Ticker == "ENHZ3" {
					found = true
					if r.Close == nil || *r.Close != closeP {
						t.Errorf("screener: ENHZ3's close %v, want %v", r.Close, closeP)
					}
				}
			}
			if !found {
				t.Errorf("screener: no ENHZ3 row: %.300s", get("POST", "/v2/screener", `{"primaryOnly":false,"limit":500}`))
			}
			// Sessions: the previous session's variations and the total
			// return end at the complete session; the index rankings
			// rank the current quotes (a running session's too).
			for _, p := range []struct{ method, path, body, want string }{
				{"GET", "/v2/stocks/variations", "", complete},
				{"GET", "/v2/indexes/IBOV/highs", "", date[:10]},
				{"GET", "/v2/indexes/IBOV/lows", "", date[:10]},
				{"GET", "/v2/quotes/ENHZ3/total-return", "", complete},
				{"POST", "/v2/quotes/total-return", `{"tickers":["ENHZ3"]}`, complete},
			} {
				ds := sessionDates(t, get(p.method, p.path, p.body))
				if len(ds) == 0 || slicesMax(ds) != p.want {
					t.Errorf("%s %s: sessions up to %v, want %s", p.method, p.path, slicesMax(ds), p.want)
				}
			}
			if ds := sessionDates(t, get("GET", "/v2/quotes/IBOV", "")); len(ds) == 0 || slicesMax(ds) > date[:10] {
				t.Errorf("the index level: %v, want none after %s", ds, date[:10])
			}
			// Valuations: the TTM series end at the complete session, the
			// market cap is that point's.
			var v map[string]map[string][]struct {
				Value         *float64 `json:"value"`
				ReferenceDate string   `json:"reference_date"`
			}
			json.Unmarshal(get("GET", "/v2/companies/ENHZ/ratios/valuation?frequency=TTM&ids=MARKET_CAP", ""), &v)
			mc := v["MARKET_CAP"]["TTM"]
			if len(mc) == 0 || mc[len(mc)-1].ReferenceDate[:10] != complete || mc[len(mc)-1].Value == nil {
				t.Fatalf("MARKET_CAP %+v, want a last point at %s", mc, complete)
			}
			var detail struct {
				MarketCap struct{ Value *float64 } `json:"market_cap"`
			}
			json.Unmarshal(get("GET", "/v2/companies/ENHZ?show_market_cap=true", ""), &detail)
			if detail.MarketCap.Value == nil || *detail.MarketCap.Value != *mc[len(mc)-1].Value {
				t.Errorf("the company's market_cap %v, want %v", detail.MarketCap.Value, *mc[len(mc)-1].Value)
			}
			// The files: the ratios file (D's valuations) only when the
			// view shows D; a delayed key's priced files end at the
			// complete session.
			var files struct {
				Through *string `json:"through"`
				Files   []struct{ File string }
			}
			json.Unmarshal(get("GET", "/v2/files", ""), &files)
			listed := len(files.Files) == 1 && files.Files[0].File == "ratios.parquet"
			if listed != (complete == last.String()) {
				t.Errorf("files: %+v, want the ratios file listed %t", files, complete == last.String())
			}
			if tc.key == testKeyDelayed && (complete == last.String()) != (files.Through == nil) || files.Through != nil && *files.Through != complete {
				t.Errorf("files through %v, want %s", files.Through, complete)
			}
		})
	}
}

func slicesContain(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func slicesMax(s []string) string {
	m := ""
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// TestCutCompaniesOncePerView: GET /companies?show_market_cap=true
// while the valuations' cut applies is made once per quote view
// (dsInfo.cutCompanies) and shared by the keys that see that view (an
// eod key's evening, a delayed key's last 15 minutes of the same day):
// the answer the per-request encoding gives, made once.
func TestCutCompaniesOncePerView(t *testing.T) {
	ds := mustSmall(t)
	within := timeUnix(engine.SessionComplete(ds.LastSession())).Add(QuoteDelay - time.Minute)
	ts := planServer(t, fixedClock(within))
	const path = "/v2/companies?show_market_cap=true"
	first := ts.do("GET", path, testKeyEOD, "")
	in := ts.api.info(ds)
	slot := &in.cutCompanies[companiesSlot(false, false, true)*len(companyStatuses)+statusIndex("ACTIVE")]
	made := slot.Load()
	if first.Code != 200 || made == nil {
		t.Fatalf("%d, list kept: %v", first.Code, made != nil)
	}
	c := &call{ds: ds, now: within, key: KeyEntry{Plan: PlanDelayed}}
	want, _ := appendCompanies(nil, ds, companyFilter(false, statusIndex("ACTIVE")), false, true, ts.api.valuer(c))
	for _, key := range []string{testKeyEOD, testKeyDelayed} {
		w := ts.do("GET", path, key, "")
		if w.Body.String() != string(want) || slot.Load() != made {
			t.Errorf("key %s: %.200s (made again: %t), want %.200s", key[len(key)-1:], w.Body, slot.Load() != made, want)
		}
	}
}
