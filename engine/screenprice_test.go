package engine_test

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// The screener's repricing (Screener.Priced) against the ratio
// derivation: by hand on a small market, bit for bit at the build's own
// closes, and against a Dataset derived with one more session.

func derivedDataset(tb testing.TB, u *engine.Universe) *engine.Dataset {
	tb.Helper()
	d, err := ratios.Derive(u)
	if err != nil {
		tb.Fatal(err)
	}
	u.Derived = d
	ds, err := engine.Build(u)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

func pday(s string) engine.Date {
	d, err := engine.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func pseries(ticker string, dates []string, closes, volumes []float64) engine.Series {
	s := engine.Series{Ticker: ticker}
	for i, d := range dates {
		c := engine.Num(closes[i])
		s.Dates = append(s.Dates, pday(d))
		s.Open = append(s.Open, c)
		s.High = append(s.High, c)
		s.Low = append(s.Low, c)
		s.Close = append(s.Close, c)
		s.Volume = append(s.Volume, engine.Num(volumes[i]))
		s.Quantity = append(s.Quantity, 100)
		s.Trades = append(s.Trades, 10)
	}
	return s
}

// annual returns the DRE, DVA, BPA and BPP of a twelve-month DFP of 2023
// (revenue 480, EBIT 96, D&A 20, net income 50, equity 540, net debt 135).
func annual(company string) []engine.Report {
	ref, start := pday("2023-12-31"), pday("2023-01-01")
	pub := time.Date(2024, 3, 20, 20, 0, 0, 0, time.UTC)
	acc := func(code string, v float64) engine.Account { return engine.NewAccount(code, "", true, engine.Num(v)) }
	mk := func(st string, start engine.Date, accts ...engine.Account) engine.Report {
		return engine.Report{CompanyID: company, Statement: engine.MustLabel(st), Aggregation: engine.LabelConsolidated, Form: engine.LabelDFP,
			ReferenceDate: ref, StartDate: start, EndDate: ref, PublishDate: engine.StampOf(pub), RetrievalDate: engine.StampOf(pub.Add(time.Hour)),
			Version: 1, Accounts: accts}
	}
	return []engine.Report{
		mk("DRE", start, acc("3.01", 480), acc("3.02", -280), acc("3.03", 200), acc("3.05", 96),
			acc("3.06", -24), acc("3.06.02", -24), acc("3.07", 72), acc("3.08", -22), acc("3.11", 50)),
		mk("DVA", start, acc("7.04.01", -20), acc("7.08.04", 14), acc("7.08.04.01", 4), acc("7.08.04.02", 10)),
		mk("BPA", engine.NoDate, acc("1", 1100), acc("1.01", 330), acc("1.01.01", 70), acc("1.01.02", 35), acc("1.01.04", 66)),
		mk("BPP", engine.NoDate, acc("2", 1100), acc("2.01", 165), acc("2.01.04", 46), acc("2.02.01", 194), acc("2.03", 540)),
	}
}

// handMarket: C1 with CS, PS and a UNIT of 1 CS + 2 PS (600 common, 400
// preferred, 100 in treasury: 900 outstanding, 540 common and 360
// preferred net); C2 whose only priced class is its UNIT (of 2 shares):
// its market cap is the unit case; C3 with two tickers of unknown
// liquidity rank (the volume picks its primary row). Each has the 2023
// DFP of annual; the last session is 2024-03-28.
func handMarket() *engine.Universe {
	u := &engine.Universe{Meta: engine.Meta{AsOf: time.Date(2024, 3, 28, 21, 30, 0, 0, time.UTC)}}
	u.Companies = []engine.Company{
		{ID: "C1", Symbol: "CAAA", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null},
		{ID: "C2", Symbol: "CBBB", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null},
		{ID: "C3", Symbol: "CCCC", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null},
	}
	u.Securities = []engine.Security{
		{Ticker: "CAAA3", CompanyID: "C1", ISIN: "BRCAAAACNOR1", StockType: engine.ClassCS, UnitFactor: engine.Null, LiquidityRank: 5},
		{Ticker: "CAAA4", CompanyID: "C1", ISIN: "BRCAAAACNPR1", StockType: engine.ClassPS, UnitFactor: engine.Null, LiquidityRank: 2},
		{Ticker: "CAAA11", CompanyID: "C1", ISIN: "BRCAAACDAM11", StockType: engine.ClassUnit, UnitFactor: 3, LiquidityRank: 10},
		{Ticker: "CBBB3", CompanyID: "C2", ISIN: "BRCBBBACNOR1", StockType: engine.ClassCS, UnitFactor: engine.Null, LiquidityRank: 0},
		{Ticker: "CBBB11", CompanyID: "C2", ISIN: "BRCBBBCDAM11", StockType: engine.ClassUnit, UnitFactor: 2, LiquidityRank: 20},
		{Ticker: "CCCC3", CompanyID: "C3", ISIN: "BRCCCCACNOR1", StockType: engine.ClassCS, UnitFactor: engine.Null, LiquidityRank: 0},
		{Ticker: "CCCC4", CompanyID: "C3", ISIN: "BRCCCCACNPR1", StockType: engine.ClassPS, UnitFactor: engine.Null, LiquidityRank: 0},
	}
	days := []string{"2024-03-26", "2024-03-27", "2024-03-28"}
	u.Daily = []engine.Series{
		pseries("CAAA3", days, []float64{14, 14.5, 15}, []float64{1e5, 1e5, 1e5}),
		pseries("CAAA4", days, []float64{12, 12.5, 13}, []float64{2e5, 2e5, 2e5}),
		pseries("CAAA11", days, []float64{39, 40, 41}, []float64{5e4, 5e4, 5e4}),
		pseries("CBBB11", days, []float64{7, 7.5, 8}, []float64{3e4, 3e4, 3e4}),
		pseries("CCCC3", days, []float64{4, 4, 4}, []float64{9e3, 9e3, 9e3}),
		pseries("CCCC4", days, []float64{3, 3, 3}, []float64{8e3, 8e3, 8e3}),
	}
	for _, c := range []string{"C1", "C2", "C3"} {
		u.Reports = append(u.Reports, annual(c)...)
	}
	u.Shares = []engine.SharesPoint{
		{CompanyID: "C1", Date: pday("2023-01-01"), Common: 600, Preferred: 400, Treasury: 100},
		{CompanyID: "C2", Date: pday("2023-01-01"), Common: 100},
		{CompanyID: "C3", Date: pday("2023-01-01"), Common: 50, Preferred: 50},
	}
	u.CashActions = []engine.CashAction{
		{ID: "d1", EventID: "d1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
			PriorExDate: pday("2023-06-15"), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: 0.6},
	}
	return u
}

// quotesAt returns a quote function: the given closes (and volumes) on
// session sd, every other asset's Latest.
func quotesAt(sd engine.Date, closes map[string]float64, volumes map[string]float64) func(*engine.Asset) engine.Quote {
	return func(a *engine.Asset) engine.Quote {
		c, ok := closes[a.Ticker]
		if !ok {
			return a.Latest
		}
		v := engine.Num(1000)
		if x, ok := volumes[a.Ticker]; ok {
			v = engine.Num(x)
		}
		return engine.Quote{Date: sd, Close: engine.Num(c), Volume: v, Open: engine.Num(c), High: engine.Num(c), Low: engine.Num(c)}
	}
}

// cell returns row ticker's value of the indicator id in p.
func cell(tb testing.TB, ds *engine.Dataset, p *engine.ScreenerPrices, id, ticker string) engine.Num {
	tb.Helper()
	k, ok := ds.IndicatorIndex(engine.IndValuation, id)
	if !ok {
		tb.Fatalf("no indicator %s", id)
	}
	for r, a := range ds.Screener().Assets {
		if a.Ticker == ticker {
			return p.Ratios[k][r]
		}
	}
	tb.Fatalf("no row %s", ticker)
	return engine.Null
}

func near(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestScreenerPricedByHand reprices every price-derived indicator at new
// closes and checks each against the catalog's formula computed by hand.
func TestScreenerPricedByHand(t *testing.T) {
	ds := derivedDataset(t, handMarket())
	s := ds.Screener()
	sd := pday("2024-04-01")
	p := s.Priced(quotesAt(sd, map[string]float64{"CAAA3": 20, "CAAA4": 16, "CAAA11": 50, "CBBB11": 9}, nil))
	if p.Session != sd {
		t.Errorf("session = %v, want %v", p.Session, sd)
	}
	const (
		ni, eq, rev, ebit, ebitda, netDebt = 50.0, 540.0, 480.0, 96.0, 116.0, 135.0
		shares                             = 900.0 // 600 + 400 - 100
	)
	mc1 := 540*20.0 + 360*16.0 // common x CS price + preferred x PS price, net of treasury pro rata
	mc2 := 100 / 2.0 * 9       // no CS price: shares / unit factor x unit price
	for _, tc := range []struct {
		id, ticker string
		want       float64
	}{
		{"PRICE_TO_EARNINGS", "CAAA3", 20 / (ni / shares * 1)},
		{"PRICE_TO_EARNINGS", "CAAA4", 16 / (ni / shares * 1)},
		{"PRICE_TO_EARNINGS", "CAAA11", 50 / (ni / shares * 3)},
		{"PRICE_TO_BOOK", "CAAA3", 20 / (eq / shares)},
		{"PRICE_TO_BOOK", "CAAA11", 50 / (eq / shares * 3)},
		{"PRICE_TO_SALES", "CAAA4", 16 / (rev / shares)},
		{"PRICE_TO_EBITDA", "CAAA3", 20 / (ebitda / shares)},
		{"PRICE_TO_EBIT", "CAAA4", 16 / (ebit / shares)},
		{"PRICE_TO_EBIT", "CBBB11", 9 / (ebit / 100 * 2)},
		{"EARNINGS_YIELD", "CAAA3", (ni / shares) / 20},
		{"EARNINGS_YIELD", "CAAA11", (ni / shares * 3) / 50},
		{"DIVIDEND_YIELD", "CAAA4", 0.6 / 16},
		{"DIVIDEND_YIELD", "CAAA3", 0},
		{"MARKET_CAP", "CAAA3", mc1},
		{"MARKET_CAP", "CAAA11", mc1},
		{"MARKET_CAP", "CBBB11", mc2},
		{"ENTERPRISE_VALUE", "CAAA4", mc1 + netDebt},
		{"EV_TO_EBITDA", "CAAA3", (mc1 + netDebt) / ebitda},
		{"EV_TO_EBIT", "CAAA3", (mc1 + netDebt) / ebit},
		{"EV_TO_SALES", "CAAA3", (mc1 + netDebt) / rev},
		{"EV_TO_SALES", "CBBB11", (mc2 + netDebt) / rev},
	} {
		if got := cell(t, ds, p, tc.id, tc.ticker); !near(float64(got), tc.want) {
			t.Errorf("%s %s = %v, want %v", tc.id, tc.ticker, got, tc.want)
		}
	}
	for _, tk := range []string{"CAAA3", "CAAA4", "CAAA11", "CBBB11"} {
		r := slices.IndexFunc(s.Assets, func(a *engine.Asset) bool { return a.Ticker == tk })
		if r < 0 || p.Close[r] != quotesAt(sd, map[string]float64{"CAAA3": 20, "CAAA4": 16, "CAAA11": 50, "CBBB11": 9}, nil)(s.Assets[r]).Close {
			t.Errorf("close of %s = %v", tk, p.Close)
		}
	}
	// Not price-derived: the Screener's own column.
	for k := range s.Ratios {
		if s.PriceDerived(k) {
			continue
		}
		if &p.Ratios[k][0] != &s.Ratios[k][0] {
			t.Errorf("%s: not shared", ds.Catalog()[k].ID)
		}
	}
}

// TestScreenerPricedStale: a close older than MaxPriceAge days before the
// session prices nothing, and a company none of whose classes has a close
// within it keeps its values (the derivation makes no point at the
// session for it).
func TestScreenerPricedStale(t *testing.T) {
	ds := derivedDataset(t, handMarket())
	s := ds.Screener()
	base := s.Prices()
	sd := pday("2024-03-28") + engine.MaxPriceAge + 1
	// CAAA3 and CAAA4 trade at sd; CAAA11's last close (2024-03-28) is
	// 93 days old then; C2 and C3 do not trade.
	p := s.Priced(quotesAt(sd, map[string]float64{"CAAA3": 20, "CAAA4": 16}, nil))
	if got := cell(t, ds, p, "PRICE_TO_EARNINGS", "CAAA11"); got.Valid() {
		t.Errorf("unit P/E with a stale close = %v, want null", got)
	}
	if got, want := cell(t, ds, p, "MARKET_CAP", "CAAA11"), 540*20.0+360*16.0; !near(float64(got), want) {
		t.Errorf("market cap = %v, want %v", got, want)
	}
	for _, id := range []string{"PRICE_TO_EARNINGS", "MARKET_CAP", "EV_TO_EBIT", "DIVIDEND_YIELD"} {
		for _, tk := range []string{"CBBB11", "CCCC3"} {
			if got, want := cell(t, ds, p, id, tk), cell(t, ds, base, id, tk); math.Float64bits(float64(got)) != math.Float64bits(float64(want)) {
				t.Errorf("%s %s = %v, want the stored %v", id, tk, got, want)
			}
		}
	}
	// One day fresher: CAAA11's close is 92 days old, still a price.
	p = s.Priced(quotesAt(sd-1, map[string]float64{"CAAA3": 20, "CAAA4": 16}, nil))
	if got, want := cell(t, ds, p, "PRICE_TO_EARNINGS", "CAAA11"), 41/(50/900.0*3); !near(float64(got), want) {
		t.Errorf("unit P/E 92 days on = %v, want %v", got, want)
	}
}

// TestScreenerPricedCashWindow: a dividend yield repriced at a later
// session counts the cash of the twelve months before that session, as
// the derivation with the session does, not the twelve months before
// the point (the Dataset's last session, 2024-03-28).
func TestScreenerPricedCashWindow(t *testing.T) {
	withCash := func(u *engine.Universe) *engine.Universe {
		for _, e := range []struct {
			id, prior string
			v         float64
		}{
			{"w1", "2023-03-30", 0.2},  // leaves the window on 2024-04-01
			{"w2", "2023-04-01", 0.3},  // a year before 2024-04-01: out then
			{"w3", "2023-04-02", 0.05}, // in both, out on 2024-04-02
			{"w4", "2024-04-01", 0.1},  // the session itself: in
			{"w5", "2024-04-02", 0.07}, // after it
		} {
			u.CashActions = append(u.CashActions, engine.CashAction{ID: e.id, EventID: e.id, Version: 1, CompanyID: engine.Intern("C1"),
				Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
				PriorExDate: pday(e.prior), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: engine.Num(e.v)})
		}
		return u
	}
	ds := derivedDataset(t, withCash(handMarket()))
	s := ds.Screener()
	if got, want := cell(t, ds, s.Prices(), "DIVIDEND_YIELD", "CAAA4"), (0.6+0.2+0.3+0.05)/13; !near(float64(got), want) {
		t.Fatalf("stored dividend yield = %v, want %v", got, want)
	}
	// The Dataset derived with the session of 2024-04-01 (CAAA4 at 16).
	next := withCash(handMarket())
	for i := range next.Daily {
		if x := &next.Daily[i]; x.Ticker == "CAAA4" {
			*x = pseries("CAAA4", []string{"2024-03-26", "2024-03-27", "2024-03-28", "2024-04-01"}, []float64{12, 12.5, 13, 16}, []float64{2e5, 2e5, 2e5, 2e5})
		}
	}
	next.Meta.AsOf = time.Date(2024, 4, 1, 21, 30, 0, 0, time.UTC)
	nds := derivedDataset(t, next)
	for _, tc := range []struct {
		session string
		price   float64
		want    float64
		derived *engine.Dataset // the Dataset derived with the session, when any
	}{
		{"2024-03-28", 13, (0.6 + 0.2 + 0.3 + 0.05) / 13, ds},
		{"2024-04-01", 16, (0.6 + 0.05 + 0.1) / 16, nds},
		{"2024-04-01", 16, (0.6 + 0.05 + 0.1) / 16, nds}, // again: the session's cash kept
		{"2024-04-02", 20, (0.6 + 0.1 + 0.07) / 20, nil},
		{"2024-04-01", 10, (0.6 + 0.05 + 0.1) / 10, nil}, // back to an earlier session
	} {
		p := s.Priced(quotesAt(pday(tc.session), map[string]float64{"CAAA4": tc.price}, nil))
		got := cell(t, ds, p, "DIVIDEND_YIELD", "CAAA4")
		if !near(float64(got), tc.want) {
			t.Errorf("at %s: dividend yield = %v, want %v", tc.session, got, tc.want)
		}
		if tc.derived != nil {
			if want := cell(t, tc.derived, tc.derived.Screener().Prices(), "DIVIDEND_YIELD", "CAAA4"); !sameBits(got, want) {
				t.Errorf("at %s: dividend yield = %v, derived with the session %v", tc.session, got, want)
			}
		}
		if got, want := cell(t, ds, p, "DIVIDEND_YIELD", "CAAA3"), engine.Num(0); got != want {
			t.Errorf("at %s: CAAA3's dividend yield = %v, want 0 (the events are CAAA4's)", tc.session, got)
		}
	}
	// Concurrent calls at two sessions share the per-session count (run
	// with -race).
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				sd, want := pday("2024-04-01"), (0.6+0.05+0.1)/16
				if (g+i)%2 == 1 {
					sd, want = pday("2024-04-02"), (0.6+0.1+0.07)/16
				}
				p := s.Priced(quotesAt(sd, map[string]float64{"CAAA4": 16}, nil))
				if got := cell(t, ds, p, "DIVIDEND_YIELD", "CAAA4"); !near(float64(got), want) {
					t.Errorf("concurrent, at %v: dividend yield = %v, want %v", sd, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestScreenerPricedPrimaryAndOrder: volumes reorder ByVolume and pick
// the primary row of a company whose tickers tie on liquidity rank.
func TestScreenerPricedPrimaryAndOrder(t *testing.T) {
	ds := derivedDataset(t, handMarket())
	s := ds.Screener()
	row := func(tk string) int {
		return slices.IndexFunc(s.Assets, func(a *engine.Asset) bool { return a.Ticker == tk })
	}
	c3, c4 := row("CCCC3"), row("CCCC4")
	if !s.Primary[c3] || s.Primary[c4] {
		t.Fatalf("build: CCCC3 (volume 9,000) should be primary: %v %v", s.Primary[c3], s.Primary[c4])
	}
	sd := pday("2024-04-01")
	p := s.Priced(quotesAt(sd, map[string]float64{"CCCC3": 4, "CCCC4": 3}, map[string]float64{"CCCC3": 10, "CCCC4": 5e6}))
	if p.Primary[c3] || !p.Primary[c4] {
		t.Errorf("priced: CCCC4 (volume 5,000,000) should be primary: %v %v", p.Primary[c3], p.Primary[c4])
	}
	if p.Primary[row("CAAA4")] != s.Primary[row("CAAA4")] {
		t.Error("CAAA4's primary flag changed")
	}
	if got := s.Assets[p.ByVolume[0]].Ticker; got != "CCCC4" {
		t.Errorf("ByVolume[0] = %s, want CCCC4", got)
	}
	if got := s.Assets[p.ByVolume[len(p.ByVolume)-1]].Ticker; got != "CCCC3" {
		t.Errorf("last of ByVolume = %s, want CCCC3", got)
	}
}

// TestScreenerPriceDerivedCatalog: every VALUATION indicator of the
// catalog is repriced, nothing else is.
func TestScreenerPriceDerivedCatalog(t *testing.T) {
	ds := derivedDataset(t, handMarket())
	s := ds.Screener()
	for k, ind := range ds.Catalog() {
		if got, want := s.PriceDerived(k), ind.Kind == engine.IndValuation; got != want {
			t.Errorf("%s %s: PriceDerived = %v, want %v", ind.Kind, ind.ID, got, want)
		}
	}
}

// demoPair is a small demo market (ds: every session) and the same market
// held back one session (old): the Dataset built the evening before.
// When keepMacro is false, the macro series lose the session too; either
// way old's valuations are dated the session before (a macro series'
// date is no session).
type demoPair struct{ full, old *engine.Dataset }

var (
	demoPairs   [2]demoPair
	demoPairsMu sync.Mutex
)

func testDemoPair(tb testing.TB, keepMacro bool) demoPair {
	tb.Helper()
	demoPairsMu.Lock()
	defer demoPairsMu.Unlock()
	i := 0
	if keepMacro {
		i = 1
	}
	if demoPairs[i].full != nil {
		return demoPairs[i]
	}
	sz := demo.ScaleSize(1)
	sz.Companies, sz.SponsoredBDRs, sz.UnsponsoredBDRs, sz.FIIs, sz.ETFs = 120, 8, 8, 6, 4
	sz.IntradayTickers, sz.IntradaySessions = 10, 2
	sz.HistoryFrom, sz.ReportsFrom, sz.FundReportsFrom, sz.EventsFrom = 2025, 2023, 2026, 2025
	u, sess := demo.GenerateSession(5, sz, nil)
	held := demo.HoldBack(u, sess)
	if !keepMacro {
		day := sess.Day
		out := make([]engine.Series, 0, len(held.Daily))
		for _, x := range held.Daily {
			if n := len(x.Dates); n > 0 && x.Dates[n-1] == day {
				if n == 1 {
					continue
				}
				x = trimLast(x)
			}
			out = append(out, x)
		}
		held.Daily = out
	}
	demoPairs[i] = demoPair{full: derivedDataset(tb, u), old: derivedDataset(tb, held)}
	return demoPairs[i]
}

// trimLast returns x without its last row.
func trimLast(x engine.Series) engine.Series {
	n := len(x.Dates) - 1
	cut := func(v []engine.Num) []engine.Num {
		if len(v) > n {
			return v[:n:n]
		}
		return v
	}
	cuti := func(v []int64) []int64 {
		if len(v) > n {
			return v[:n:n]
		}
		return v
	}
	return engine.Series{Ticker: x.Ticker, Dates: x.Dates[:n:n], Open: cut(x.Open), High: cut(x.High), Low: cut(x.Low),
		Close: cut(x.Close), Volume: cut(x.Volume), Quantity: cuti(x.Quantity), Trades: cuti(x.Trades)}
}

func sameBits(a, b engine.Num) bool {
	if !a.Valid() || !b.Valid() {
		return a.Valid() == b.Valid()
	}
	return math.Float64bits(float64(a)) == math.Float64bits(float64(b))
}

// TestScreenerPricedIdentity: priced at the closes the build used (each
// asset's Latest), every column equals the Screener's, bit for bit.
func TestScreenerPricedIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a demo market")
	}
	pair := testDemoPair(t, false)
	for name, ds := range map[string]*engine.Dataset{"full": pair.full, "held-back": pair.old} {
		s := ds.Screener()
		p := s.Priced(func(a *engine.Asset) engine.Quote { return a.Latest })
		if p.Session != ds.LastSession() {
			t.Errorf("%s: session %v, want %v", name, p.Session, ds.LastSession())
		}
		repriced := 0
		for k := range s.Ratios {
			if s.PriceDerived(k) {
				repriced++
			}
			for r := range s.Ratios[k] {
				if !sameBits(p.Ratios[k][r], s.Ratios[k][r]) {
					t.Errorf("%s: %s of %s = %v, stored %v", name, ds.Catalog()[k].ID, s.Assets[r].Ticker, p.Ratios[k][r], s.Ratios[k][r])
				}
			}
		}
		if repriced != 12 {
			t.Errorf("%s: %d price-derived indicators, want 12", name, repriced)
		}
		for r := range s.Len() {
			if !sameBits(p.Close[r], s.Close[r]) || !sameBits(p.Volume[r], s.Volume[r]) || p.Primary[r] != s.Primary[r] {
				t.Errorf("%s: row %s: close, volume or primary differ", name, s.Assets[r].Ticker)
			}
		}
		if !slices.Equal(p.ByVolume, s.ByVolume) {
			t.Errorf("%s: ByVolume differs", name)
		}
	}
}

// TestScreenerPricedOracle: the held-back Dataset repriced at the
// session's closes equals the Dataset derived with the session, for every
// price-derived indicator of every row both have, bit for bit. The
// held-back valuation is dated the session before (the market's last
// session is the one before, whether or not the macro series hold the
// session's date: their dates are no sessions): DIVIDEND_YIELD counts the
// cash of the twelve months before the session, not before the point (a
// distribution whose last day with is the session, or one a year and a
// day old, moves it), which some cells of the demo check.
func TestScreenerPricedOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a demo market")
	}
	for _, keepMacro := range []bool{true, false} {
		t.Run(fmt.Sprintf("macro-on-session=%v", keepMacro), func(t *testing.T) {
			pair := testDemoPair(t, keepMacro)
			full, old := pair.full, pair.old
			s, fs := old.Screener(), full.Screener()
			p := s.Priced(func(a *engine.Asset) engine.Quote {
				if b, ok := full.Asset(a.Ticker); ok {
					return b.Latest
				}
				return engine.Quote{}
			})
			if p.Session != full.LastSession() {
				t.Errorf("session %v, want %v", p.Session, full.LastSession())
			}
			row := map[string]int{}
			for r, a := range fs.Assets {
				row[a.Ticker] = r
			}
			kDY, _ := old.IndicatorIndex(engine.IndValuation, "DIVIDEND_YIELD")
			cells, changed, window := 0, 0, 0
			for k := range s.Ratios {
				if !s.PriceDerived(k) {
					continue
				}
				for r, a := range s.Assets {
					fr, ok := row[a.Ticker]
					if !ok {
						continue
					}
					cells++
					if !sameBits(p.Ratios[k][r], s.Ratios[k][r]) {
						changed++
					}
					if k == kDY && cashDiffers(old, full, a, k) {
						window++
					}
					if sameBits(p.Ratios[k][r], fs.Ratios[k][fr]) {
						continue
					}
					t.Errorf("%s of %s: repriced %v, derived with the session %v (held back %v)",
						old.Catalog()[k].ID, a.Ticker, p.Ratios[k][r], fs.Ratios[k][fr], s.Ratios[k][r])
				}
			}
			for r, a := range s.Assets {
				if fr, ok := row[a.Ticker]; ok && (!sameBits(p.Close[r], fs.Close[fr]) || !sameBits(p.Volume[r], fs.Volume[fr]) || p.Primary[r] != fs.Primary[fr]) {
					t.Errorf("%s: close, volume or primary differ", a.Ticker)
				}
			}
			if changed < cells/3 {
				t.Errorf("only %d of %d cells changed with the session's closes", changed, cells)
			}
			if window == 0 {
				t.Error("no dividend yield of another twelve months: the demo checks none")
			}
			t.Logf("%d cells, %d changed by the session's closes, %d dividend yields of another twelve months", cells, changed, window)
		})
	}
}

// cashDiffers reports whether the CASH_PER_SHARE_12M of a's latest
// point of indicator k differs between the two Datasets.
func cashDiffers(old, full *engine.Dataset, a *engine.Asset, k int) bool {
	cash := func(ds *engine.Dataset) engine.Num {
		b, ok := ds.Asset(a.Ticker)
		if !ok {
			return engine.Null
		}
		g := b.Issuer.RatioGroup(uint16(k), b.StockType, engine.FreqTTM)
		if g == nil || len(g.Points) == 0 {
			return engine.Null
		}
		vs := ds.RatioVars(&g.Points[len(g.Points)-1])
		if len(vs) == 0 {
			return engine.Null
		}
		return vs[0]
	}
	return !sameBits(cash(old), cash(full))
}

// BenchmarkScreenerPriced reprices every row of the demo market at scale
// 1 (757 rows): the work of one cut-off minute.
func BenchmarkScreenerPriced(b *testing.B) {
	ds := derivedDataset(b, demo.Generate(1, 1))
	s := ds.Screener()
	s.Priced(func(a *engine.Asset) engine.Quote { return a.Latest }) // the first call gathers the inputs
	quote := func(a *engine.Asset) engine.Quote {
		q := a.Latest
		q.Close *= 1.01
		return q
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Priced(quote)
	}
	b.ReportMetric(float64(s.Len()), "rows")
}

// BenchmarkScreenerPricedNextSession reprices the demo market at scale 1
// at quotes of the session after its last, as a live session's cut-offs
// do: "same" reads every cut-off of one session (the twelve months of
// cash before it counted once), "new" alternates two sessions, counting
// them at every call (the first cut-off of a session).
func BenchmarkScreenerPricedNextSession(b *testing.B) {
	ds := derivedDataset(b, demo.Generate(1, 1))
	s := ds.Screener()
	quote := func(day engine.Date) func(a *engine.Asset) engine.Quote {
		return func(a *engine.Asset) engine.Quote {
			q := a.Latest
			if q.Valid() {
				q.Date, q.Close = day, q.Close*1.01
			}
			return q
		}
	}
	next := [2]func(a *engine.Asset) engine.Quote{quote(ds.LastSession() + 1), quote(ds.LastSession() + 2)}
	s.Priced(next[0]) // the first call gathers the inputs
	for _, bc := range []struct {
		name string
		alt  int
	}{{"same", 0}, {"new", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.Priced(next[i&bc.alt])
				i++
			}
		})
	}
}
