package httpapi

import (
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// TestScreenerAtColumns checks that the screener at an instant computes
// each ratio column asked for alone as it does among all the others (the
// valuation at the session is made for the indicators asked for only),
// and that a request's cost does not grow with its companies: no
// allocation per company.
func TestScreenerAtColumns(t *testing.T) {
	ds := mustScreenDS(t)
	s := ds.Screener()
	var all []int
	for k, ind := range ds.Catalog() {
		if ind.Kind == engine.IndFundamental || ind.Kind == engine.IndValuation {
			all = append(all, k)
		}
	}
	ids := []string{"PRICE_TO_EARNINGS", "DIVIDEND_YIELD", "MARKET_CAP", "EV_TO_EBITDA", "NET_MARGIN"}
	last := ds.LastSession()
	for _, at := range []time.Time{
		engine.SessionClose(last).AddDate(0, -3, 0),
		engine.SessionClose(last).AddDate(0, -7, 0).Add(-time.Hour),
		engine.SessionClose(last),
	} {
		_, full := s.At(at, all)
		priced := 0
		for _, id := range ids {
			k, ok := ds.IndicatorIndex("", id)
			if !ok {
				t.Fatalf("no indicator %s", id)
			}
			_, one := s.At(at, []int{k})
			for r := range one.Ratios[k] {
				g, w := one.Ratios[k][r], full.Ratios[k][r]
				if g != w && (g.Valid() || w.Valid()) {
					t.Errorf("at %v: %s row %d: %v alone, %v among every column", at, id, r, g, w)
				}
				if g.Valid() {
					priced++
				}
			}
			for k2, col := range one.Ratios {
				if k2 != k && col != nil {
					t.Errorf("at %v: asked for %s, column %d computed", at, id, k2)
				}
			}
		}
		if priced == 0 {
			t.Errorf("at %v: no value in the columns compared", at)
		}
	}
	need := make([]int, 0, 2)
	for _, id := range []string{"PRICE_TO_EARNINGS", "DIVIDEND_YIELD"} {
		k, _ := ds.IndicatorIndex("", id)
		need = append(need, k)
	}
	at := engine.SessionClose(last).AddDate(0, -3, 0)
	companies := map[*engine.Issuer]bool{}
	for _, is := range s.Issuers {
		companies[is] = true
	}
	// The columns and the row lists, and a few for the odd company with
	// several splits or an event without id: far fewer than the
	// companies (one valuation each).
	if n := testing.AllocsPerRun(20, func() { s.At(at, need) }); n > 40 {
		t.Errorf("Screener.At with 2 columns: %v allocations, want at most 40 (%d companies, %d rows)", n, len(companies), s.Len())
	}
}

// The heads of the screener with as_of, kept once per Dataset (the
// snapshot's rows reuse its heads), are the heads newScreenEnc encodes
// for the table and prices at as_of, the rows delisted since included;
// the table's ticker order and class suffixes too. A request allocates
// no more than its encoding's shell.
func TestScreenAtHeads(t *testing.T) {
	u := demo.GenerateSize(5, lookAheadSize)
	delisted, on := delistOne(t, u)
	ds := buildDemoDS(t, u)
	in := newDSInfo(ds)
	s := ds.Screener()
	extra := 0
	for _, at := range []time.Time{
		engine.SessionClose(on).Add(-time.Hour), engine.SessionClose(on), engine.SessionClose(on + 20),
		engine.SessionClose(ds.LastSession()).AddDate(-1, 0, 0),
	} {
		tab, prices := s.At(at, nil)
		got, want := in.screenAt(tab, prices), newScreenEnc(tab, prices)
		if got.past == nil {
			t.Fatal("the table at as_of is not the Dataset's: its heads are encoded per request")
		}
		for r := range int32(tab.Len()) {
			if g, w := got.appendHead(nil, r), want.heads.at(r); string(g) != string(w) {
				t.Fatalf("at %v: row %d (%s): head %s, want %s", at, r, tab.Assets[r].Ticker, g, w)
			}
		}
		if !slices.Equal(got.tickerRank, want.tickerRank) || !slices.Equal(got.suffix, want.suffix) {
			t.Fatalf("at %v: ticker order or class suffixes differ", at)
		}
		extra = max(extra, tab.Len()-s.Len())
		if !slices.ContainsFunc(tab.Assets, func(a *engine.Asset) bool { return a.Ticker == delisted }) {
			t.Fatalf("%s (delisted on %v) is no row of the table", delisted, on)
		}
		if n := testing.AllocsPerRun(20, func() { in.screenAt(tab, prices) }); n > 2 {
			t.Errorf("screenAt: %v allocations, want at most 2", n)
		}
	}
	if extra == 0 {
		t.Fatal("no row delisted since the snapshot's rows: the test checks none")
	}
}
