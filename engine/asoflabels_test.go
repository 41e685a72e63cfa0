package engine

import (
	"slices"
	"testing"
	"time"
)

// TestSessionAtMacroCalendar: a macro series keeps its own calendar (the
// IPCA is dated the 1st of its month, a Sunday or a holiday as well): its
// dates are no sessions, so an instant after one and before the next
// session's close is at the last session B3 held.
func TestSessionAtMacroCalendar(t *testing.T) {
	u := testUniverse(t)
	u.Securities = append(u.Securities, Security{Ticker: "IPCA", StockType: ClassMacro, Currency: "BRL", UnitFactor: Null})
	u.Daily = append(u.Daily, mkSeries("IPCA", []int{1, 5}, []float64{0.5, 0.4}))
	ds := mustBuild(t, u)
	if slices.Contains(ds.sessionDates(), d(5)) {
		t.Errorf("sessions %v hold the IPCA's date %v", ds.sessionDates(), d(5))
	}
	for _, c := range []struct {
		t    time.Time
		want Date
	}{
		{spTime(d(5), 20, 0), d(4)}, // after the IPCA's "close" of d5: still d4
		{spTime(d(4), 18, 0), d(4)},
		{spTime(d(4), 17, 59), d(3)},
	} {
		if got := ds.SessionAt(c.t); got != c.want {
			t.Errorf("SessionAt(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

// TestStaticRetrievalAt: the retrieval date of MARKET_CAP and
// DIVIDEND_YIELD points at an instant is the as-of time of a snapshot of
// then, the close of the last session closed by it, never after it; at
// or after the Dataset's own as-of time, that time.
func TestStaticRetrievalAt(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	asOf := ds.AsOf()
	for _, c := range []struct {
		t    time.Time
		want time.Time
	}{
		{spTime(d(2), 19, 0), SessionClose(d(2))},
		{spTime(d(3), 17, 59), SessionClose(d(2))},
		{SessionClose(d(3)), SessionClose(d(3))},
		{asOf, asOf},
		{asOf.Add(time.Hour), asOf},
	} {
		got := ds.StaticRetrievalAt(c.t).Time()
		if !got.Equal(c.want) {
			t.Errorf("StaticRetrievalAt(%v) = %v, want %v", c.t, got, c.want)
		}
		if c.t.Before(asOf) && got.After(c.t) {
			t.Errorf("StaticRetrievalAt(%v) = %v: after the instant", c.t, got)
		}
	}
	u := testUniverse(t)
	u.Meta.AsOf = time.Time{}
	if got := mustBuild(t, u).StaticRetrievalAt(spTime(d(2), 19, 0)); got != 0 {
		t.Errorf("without an as-of time: %v, want 0 (the derivation stamps the publication)", got)
	}
}

// TestTickerOn: an asset is named at a session by the ticker it traded
// under then, along a chain of renames (a rename's date is the first
// session under the new ticker), and the screener at an instant lists
// its row so.
func TestTickerOn(t *testing.T) {
	u := testUniverse(t) // VVAR3 renamed VIIA3 on d3
	ds := mustBuild(t, u)
	a, ok := ds.Asset("VIIA3")
	if !ok {
		t.Fatal("no VIIA3")
	}
	for _, c := range []struct {
		day  Date
		want string
	}{{d(0), "VVAR3"}, {d(2), "VVAR3"}, {d(3), "VIIA3"}, {d(4), "VIIA3"}} {
		if got := a.TickerOn(c.day); got != c.want {
			t.Errorf("TickerOn(%v) = %s, want %s", c.day, got, c.want)
		}
	}
	if p, _ := ds.Asset("PETR4"); p.TickerOn(d(0)) != "PETR4" {
		t.Errorf("PETR4, never renamed: TickerOn = %s", p.TickerOn(d(0)))
	}

	// A chain: VVAR3 -> VIIA3 on d3, VIIA3 -> BHIA3 on d4.
	u = testUniverse(t)
	u.Securities = append(u.Securities, Security{Ticker: "BHIA3", CompanyID: viaID, ISIN: "BRBHIAACNOR1", StockType: ClassCS, Currency: "BRL", UnitFactor: Null})
	u.Renames = append(u.Renames, TickerRename{From: "VIIA3", To: "BHIA3", Date: d(4)})
	for i := range u.Daily {
		if u.Daily[i].Ticker == "VIIA3" {
			u.Daily[i] = mkSeries("VIIA3", []int{3}, []float64{6})
		}
	}
	u.Daily = append(u.Daily, mkSeries("BHIA3", []int{4}, []float64{7}))
	ds = mustBuild(t, u)
	b, _ := ds.Asset("BHIA3")
	for _, c := range []struct {
		day  Date
		want string
	}{{d(1), "VVAR3"}, {d(3), "VIIA3"}, {d(4), "BHIA3"}} {
		if got := b.TickerOn(c.day); got != c.want {
			t.Errorf("chain: TickerOn(%v) = %s, want %s", c.day, got, c.want)
		}
	}
	tab, p := ds.Screener().At(spTime(d(3), 19, 0), nil)
	names := map[string]bool{}
	for r := range tab.Assets {
		names[p.TickerOf(tab, r)] = true
	}
	if !names["VIIA3"] || names["BHIA3"] {
		t.Errorf("screener at d3's close: tickers %v, want VIIA3 and no BHIA3", names)
	}
	tab, p = ds.Screener().At(spTime(d(4), 19, 0), nil)
	names = map[string]bool{}
	for r := range tab.Assets {
		names[p.TickerOf(tab, r)] = true
	}
	if !names["BHIA3"] || names["VIIA3"] {
		t.Errorf("screener at d4's close: tickers %v, want BHIA3", names)
	}
}
