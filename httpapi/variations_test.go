package httpapi

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// TestVariationsOneTicker: with one quoted ticker, a rise lists it among
// the gainers only, a fall among the losers only; the golden universe
// lists no ticker in both.
func TestVariationsOneTicker(t *testing.T) {
	d1, d2 := engine.MakeDate(2024, 3, 27), engine.MakeDate(2024, 3, 28)
	for _, c := range []struct {
		close2         engine.Num
		gainers, loser int
	}{{11, 1, 0}, {9, 0, 1}, {10, 0, 0}} {
		u := &engine.Universe{Meta: engine.Meta{AsOf: d2.Time().Add(21 * time.Hour)},
			Companies: []engine.Company{{ID: "12345678000195", Name: "ALFA S.A.", Kind: engine.KindCompany, Employees: -1,
				FreeFloat: engine.Null, FoundingDate: engine.NoDate, IPODate: engine.NoDate, StatusDate: engine.NoDate}},
			Securities: []engine.Security{{Ticker: "ALFA3", CompanyID: "12345678000195", StockType: engine.ClassCS, Currency: "BRL",
				UnitFactor: engine.Null, ListedFrom: engine.NoDate, ListedTo: engine.NoDate}},
			Daily: []engine.Series{{Ticker: "ALFA3", Dates: []engine.Date{d1, d2}, Open: []engine.Num{10, 10}, High: []engine.Num{10, 11},
				Low: []engine.Num{10, 9}, Close: []engine.Num{10, c.close2}, Volume: []engine.Num{100, 100}, Quantity: []int64{10, 10},
				Trades: []int64{1, 1}}},
		}
		ds, err := engine.Build(u)
		if err != nil {
			t.Fatal(err)
		}
		ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
		ts.store.Publish(ds)
		ts.api = New(DefaultConfig(), ts.store, testKeys(t), fixedClock(d2.Time().Add(23*time.Hour)), ts.reg, nil)
		m := obj(ts.getJSON(t, "GET", "/v2/stocks/variations", testKeyDelayed, ""))
		if g, l := len(arr(m["gainers"])), len(arr(m["losers"])); g != c.gainers || l != c.loser {
			t.Errorf("close %v after 10: %d gainers, %d losers; want %d, %d", c.close2, g, l, c.gainers, c.loser)
		}
	}
	ts := newTestServer(t, true)
	m := obj(ts.getJSON(t, "GET", "/v2/stocks/variations?limit=100", testKeyDelayed, ""))
	seen := map[any]bool{}
	for _, e := range arr(m["gainers"]) {
		seen[obj(e)["ticker"]] = true
	}
	for _, e := range arr(m["losers"]) {
		if tk := obj(e)["ticker"]; seen[tk] {
			t.Errorf("%v both gainer and loser", tk)
		}
	}
}
