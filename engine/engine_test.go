package engine

import (
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

func near(a, b Num) bool {
	if !a.Valid() || !b.Valid() {
		return !a.Valid() && !b.Valid()
	}
	return math.Abs(float64(a-b)) <= 1e-12*math.Max(1, math.Abs(float64(b)))
}

func checkNum(tb testing.TB, what string, got, want Num) {
	tb.Helper()
	if !near(got, want) {
		tb.Errorf("%s = %v, want %v", what, float64(got), float64(want))
	}
}

func TestBuildNil(t *testing.T) {
	if _, err := Build(nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildEmpty(t *testing.T) {
	ds := mustBuild(t, &Universe{})
	if _, err := ds.Resolve("PETR4"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	if ds.LastSession().Valid() || ds.Screener().Len() != 0 {
		t.Fatal("empty dataset has data")
	}
}

func TestBuildRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(u *Universe)
		want   string
	}{
		{"column lengths", func(u *Universe) { u.Daily[0].Close = u.Daily[0].Close[:2] }, "PETR4: columns of different lengths"},
		{"ratio variables beyond the array", func(u *Universe) { u.Derived.Ratios[0].VarsAt, u.Derived.Ratios[0].NVars = 0, 1 }, "variables [0, 1) beyond the 0 stored"},
		{"unsorted dates", func(u *Universe) { u.Daily[0].Dates[2], u.Daily[0].Dates[3] = u.Daily[0].Dates[3], u.Daily[0].Dates[2] }, "PETR4: row 3"},
		{"duplicate date", func(u *Universe) { u.Daily[0].Dates[1] = u.Daily[0].Dates[0] }, "not after"},
		{"missing date", func(u *Universe) { u.Daily[0].Dates[0] = NoDate }, "date missing"},
		{"intraday lengths", func(u *Universe) { u.Intraday[0].Quantity = nil }, "intraday series PETR4: columns"},
		{"intraday unsorted", func(u *Universe) { u.Intraday[0].Times[1] = u.Intraday[0].Times[0] }, "intraday series PETR4: row 1"},
		{"series unknown ticker", func(u *Universe) { u.Daily[0].Ticker = "XXXX3" }, `daily series "XXXX3": unknown ticker`},
		{"series twice", func(u *Universe) { u.Daily[1].Ticker = "PETR4" }, "given twice"},
		{"security unknown company", func(u *Universe) { u.Securities[0].CompanyID = "1" }, `security PETR4: unknown company_id "1"`},
		{"security without company", func(u *Universe) { u.Securities[0].CompanyID = "" }, "company_id missing"},
		{"lower-case ticker", func(u *Universe) { u.Securities[0].Ticker = "petr4" }, "upper case"},
		{"duplicate ticker", func(u *Universe) { u.Securities[1].Ticker = "PETR4" }, "duplicate ticker"},
		{"duplicate company", func(u *Universe) { u.Companies[1].ID = valeID }, "duplicate key"},
		{"empty company id", func(u *Universe) { u.Companies[1].ID = "" }, "empty company_id"},
		{"duplicate symbol", func(u *Universe) { u.Companies[1].Symbol = "vale" }, "symbol"},
		{"unknown sub industry", func(u *Universe) { u.Companies[1].SubIndustryID = "S9" }, `unknown sub_industry_id "S9"`},
		{"sector parent level", func(u *Universe) { u.Sectors[2].ParentID = "S1" }, `parent "S1" is level 1`},
		{"sector unknown parent", func(u *Universe) { u.Sectors[1].ParentID = "S9" }, `unknown parent "S9"`},
		{"sector level", func(u *Universe) { u.Sectors[1].Level = 5 }, "not in 1..4"},
		{"rename cycle", func(u *Universe) { u.Renames = append(u.Renames, TickerRename{From: "VIIA3", To: "VVAR3", Date: d(4)}) }, "cycle"},
		{"rename twice", func(u *Universe) { u.Renames = append(u.Renames, TickerRename{From: "VVAR3", To: "PETR3", Date: d(4)}) }, "renamed twice"},
		{"rename lower case", func(u *Universe) { u.Renames[0].From = "vvar3" }, "upper case"},
		{"rename to itself", func(u *Universe) { u.Renames[0].To = "VVAR3" }, "differ"},
		{"rename without date", func(u *Universe) { u.Renames[0].Date = NoDate }, "date missing"},
		{"rename unknown target", func(u *Universe) { u.Renames[0].To = "ZZZZ3" }, "target ticker ZZZZ3"},
		{"split factor zero", func(u *Universe) { u.ShareActions[0].Factor = 0 }, "must be positive"},
		{"bonus factor null", func(u *Universe) { u.ShareActions[2].Factor = Null }, "must be positive"},
		{"share action without date", func(u *Universe) { u.ShareActions[0].PriorExDate = NoDate }, "prior_ex_date missing"},
		{"report unknown company", func(u *Universe) { u.Reports[0].CompanyID = "42" }, `report DRE CONSOLIDATED 2023-12-31: unknown company_id "42"`},
		{"cash unknown company", func(u *Universe) { u.CashActions[0].CompanyID = Intern("42") }, "cash action c1v1"},
		{"ratio outside catalog", func(u *Universe) { u.Derived.Ratios[0].Indicator = 99 }, "indicator 99 outside the catalog"},
		{"fund ratio unknown fund", func(u *Universe) { u.Derived.FundRatios[0].FundID = Intern("42") }, "fund ratio point P_NAV"},
		{"fund ratio sources beyond", func(u *Universe) { u.Derived.FundRatios[0].Sources = 9 }, "sources 9 beyond the 0 lists"},
		{"index member without ticker", func(u *Universe) { u.Indexes[0].Members[0].Ticker = "" }, `index IBOV: a member without a ticker`},
		{"duplicate ISIN", func(u *Universe) { u.Securities[1].ISIN = u.Securities[0].ISIN }, "ISIN BRPETRACNPR6 already used"},
		{"catalog duplicate", func(u *Universe) {
			u.Derived.Catalog[1].ID, u.Derived.Catalog[1].Kind = "ebitda_margin", IndFundamental
		}, "catalog"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := testUniverse(t)
			tc.break_(u)
			ds, err := Build(u)
			if ds != nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Build = %v, %v; want error containing %q", ds != nil, err, tc.want)
			}
		})
	}
}

// OrderChecked leaves the keys' order to the caller (a format 6 snapshot
// checks it with each block) and still checks the columns' lengths.
func TestBuildOrderChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(u *Universe)
		want   string // "" when accepted
	}{
		{"unsorted dates", func(u *Universe) { u.Daily[0].Dates[2], u.Daily[0].Dates[3] = u.Daily[0].Dates[3], u.Daily[0].Dates[2] }, ""},
		{"missing date", func(u *Universe) { u.Daily[0].Dates[0] = NoDate }, ""},
		{"intraday unsorted", func(u *Universe) { u.Intraday[0].Times[1] = u.Intraday[0].Times[0] }, ""},
		{"column lengths", func(u *Universe) { u.Daily[0].Close = u.Daily[0].Close[:2] }, "PETR4: columns of different lengths"},
		{"intraday lengths", func(u *Universe) { u.Intraday[0].Quantity = nil }, "intraday series PETR4: columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := testUniverse(t)
			tc.break_(u)
			ds, err := BuildWith(u, BuildOptions{OrderChecked: true})
			if tc.want == "" && err != nil {
				t.Fatalf("Build = %v", err)
			}
			if tc.want != "" && (ds != nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Build = %v, %v; want error containing %q", ds != nil, err, tc.want)
			}
		})
	}
}

func TestBuildDoesNotModifyUniverse(t *testing.T) {
	u := testUniverse(t)
	ref := testUniverse(t)
	mustBuild(t, u)
	for i := range u.CashActions {
		if u.CashActions[i].ID != ref.CashActions[i].ID || u.CashActions[i].DeclaredValue != ref.CashActions[i].DeclaredValue {
			t.Fatal("cash actions reordered or modified")
		}
	}
	for i := range u.Daily {
		if !slices.Equal(u.Daily[i].Dates, ref.Daily[i].Dates) || !slices.Equal(u.Daily[i].Close, ref.Daily[i].Close) {
			t.Fatalf("series %s modified", u.Daily[i].Ticker)
		}
	}
	for i := range u.Derived.Ratios {
		if u.Derived.Ratios[i].Value != ref.Derived.Ratios[i].Value && u.Derived.Ratios[i].Value.Valid() {
			t.Fatal("ratios reordered")
		}
	}
}

func TestResolve(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for _, tc := range []struct {
		id      string
		kind    ResolvedKind
		company string // company id, "" for none
		ticker  string // resolved current ticker for ByTicker
		class   string
		renamed bool
	}{
		{"PETR4", ByTicker, petroID, "PETR4", ClassPS, false},
		{"petr3", ByTicker, petroID, "PETR3", ClassCS, false},
		{" PETR3 ", ByTicker, petroID, "PETR3", ClassCS, false},
		{"VVAR3", ByTicker, viaID, "VIIA3", ClassCS, true},
		{"vvar3", ByTicker, viaID, "VIIA3", ClassCS, true},
		{"VIIA3", ByTicker, viaID, "VIIA3", ClassCS, false},
		{"PETR", BySymbol, petroID, "", "", false},
		{"petr", BySymbol, petroID, "", "", false},
		{petroID, ByCompanyID, petroID, "", "", false},
		{"33.000.167/0001-01", ByCompanyID, petroID, "", "", false},
		{"9512", ByCompanyID, petroID, "", "", false},
		{"009512", ByCompanyID, petroID, "", "", false},
		{"4170", ByCompanyID, valeID, "", "", false},
		{"HGLG11", ByTicker, fundID, "HGLG11", ClassFundUnit, false},
		{"hglg", BySymbol, fundID, "", "", false},
		{"SELIC", ByTicker, "", "SELIC", ClassMacro, false},
	} {
		t.Run(tc.id, func(t *testing.T) {
			r, err := ds.Resolve(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != tc.kind || r.Class != tc.class || r.Renamed != tc.renamed {
				t.Fatalf("got kind %v class %q renamed %v", r.Kind, r.Class, r.Renamed)
			}
			if tc.company == "" {
				if r.Company != nil || r.Issuer != nil {
					t.Fatal("macro series has a company")
				}
			} else if r.Company == nil || r.Company.ID != tc.company || r.Issuer.Company != r.Company {
				t.Fatalf("company = %+v", r.Company)
			}
			if tc.ticker == "" {
				if r.Security != nil || r.Asset != nil {
					t.Fatal("company identifier resolved a security")
				}
			} else if r.Security == nil || r.Security.Ticker != tc.ticker || r.Asset.Security != r.Security {
				t.Fatalf("security = %+v", r.Security)
			}
		})
	}
	for _, tc := range []struct {
		id   string
		want error
	}{
		{"NOPE3", ErrNotFound}, {"33.000.167/0001-99", ErrNotFound}, {"0", ErrNotFound}, {"000", ErrNotFound}, {"", ErrInvalid}, {"   ", ErrInvalid},
		{strings.Repeat("A", 65), ErrInvalid}, {"\x00", ErrNotFound},
	} {
		if _, err := ds.Resolve(tc.id); !errors.Is(err, tc.want) {
			t.Errorf("Resolve(%q) err = %v, want %v", tc.id, err, tc.want)
		}
	}
	if r, err := ds.ResolveFund("hglg11"); err != nil || r.Company.ID != fundID {
		t.Errorf("ResolveFund(hglg11) = %v, %v", r.Company, err)
	}
	if r, err := ds.ResolveFund("11.728.688/0001-47"); err != nil || r.Kind != ByCompanyID {
		t.Errorf("ResolveFund(cnpj) = %v, %v", r.Kind, err)
	}
	for _, id := range []string{"PETR", "PETR4", "SELIC", "X"} {
		if _, err := ds.ResolveFund(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("ResolveFund(%q) err = %v", id, err)
		}
	}
	if k := ResolvedKind(0).String(); k != "unknown" || ByTicker.String() != "ticker" || BySymbol.String() != "symbol" || ByCompanyID.String() != "company_id" {
		t.Error("ResolvedKind.String")
	}
}

func TestResolveZeroAlloc(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for _, id := range []string{"PETR4", "VVAR3", "PETR", petroID} {
		if n := testing.AllocsPerRun(100, func() {
			if _, err := ds.Resolve(id); err != nil {
				t.Fatal(err)
			}
		}); n > 0 {
			t.Errorf("Resolve(%q) allocates %v times", id, n)
		}
	}
}

func TestLookups(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	if is, ok := ds.Issuer("33.000.167/0001-01"); !ok || is.Symbol != "PETR" {
		t.Error("Issuer by punctuated id")
	}
	if _, ok := ds.Issuer("0"); ok {
		t.Error("Issuer(0)")
	}
	if a, ok := ds.AssetByISIN("BRVVARACNOR1"); !ok || a.Ticker != "VIIA3" {
		t.Error("AssetByISIN of a former ticker")
	}
	if _, ok := ds.AssetByISIN("X"); ok {
		t.Error("AssetByISIN(X)")
	}
	if a, ok := ds.Asset("vvar3"); !ok || a.Ticker != "VIIA3" || !slices.Equal(a.Former, []string{"VVAR3"}) {
		t.Error("Asset(vvar3)")
	}
	if len(ds.Assets()) != 7 || len(ds.Issuers()) != 5 {
		t.Errorf("%d assets, %d issuers", len(ds.Assets()), len(ds.Issuers()))
	}
	for _, tc := range []struct {
		kind, id string
		want     int
		ok       bool
	}{
		{"", "dividend_yield", 1, true},
		{IndValuation, "Dividend_Yield", 1, true},
		{"", "ebitda_margin", 0, true},
		{IndFund, "DIVIDEND_YIELD", 4, true},
		{IndFund, "p_nav", 2, true},
		{IndFundamental, "DIVIDEND_YIELD", 0, false},
		{"", "P_NAV", 0, false},
		{"", "NOPE", 0, false},
	} {
		if i, ok := ds.IndicatorIndex(tc.kind, tc.id); i != tc.want || ok != tc.ok {
			t.Errorf("IndicatorIndex(%q, %q) = %d, %v", tc.kind, tc.id, i, ok)
		}
	}
	if len(ds.Catalog()) != 5 || ds.Meta().Description != "test" || !ds.AsOf().Equal(at(4, 21, 0)) || ds.Universe() == nil {
		t.Error("meta accessors")
	}
	if ix, ok := ds.Index("ibov"); !ok || ix.Symbol != "IBOV" || len(ds.Indexes()) != 1 {
		t.Error("Index(ibov)")
	}
	if _, ok := ds.Index("NOPE"); ok {
		t.Error("Index(NOPE)")
	}
}

// TestPositions checks that Pos is the position in the Dataset's slices,
// whichever way the asset or index was reached (sorted by ticker or symbol
// from an unsorted Universe, former tickers resolved).
func TestPositions(t *testing.T) {
	u := testUniverse(t)
	u.Indexes = append([]Index{{Symbol: "SMLL", Name: "Small caps", AsOf: d(4), Members: []IndexMember{{Ticker: "VVAR3"}}}}, u.Indexes...)
	ds := mustBuild(t, u)
	assets := ds.Assets()
	for i := range assets {
		if p := assets[i].Pos(); p != i {
			t.Errorf("%s: Pos %d, want %d", assets[i].Ticker, p, i)
		}
	}
	for _, tk := range []string{"VVAR3", "viia3", "PETR4"} {
		a, ok := ds.Asset(tk)
		if !ok || &assets[a.Pos()] != a {
			t.Errorf("Asset(%s): Pos does not point back to it", tk)
		}
	}
	ixs := ds.Indexes()
	if len(ixs) != 2 || ixs[0].Symbol != "IBOV" {
		t.Fatalf("indexes %d, first %s", len(ixs), ixs[0].Symbol)
	}
	for i := range ixs {
		if p := ixs[i].Pos(); p != i {
			t.Errorf("%s: Pos %d, want %d", ixs[i].Symbol, p, i)
		}
		for _, m := range ixs[i].Members {
			if &assets[m.Pos()] != m {
				t.Errorf("%s member %s: Pos does not point back to it", ixs[i].Symbol, m.Ticker)
			}
		}
	}
	if ix, ok := ds.Index("smll"); !ok || &ixs[ix.Pos()] != ix {
		t.Error("Index(smll): Pos does not point back to it")
	}
}

func TestRenameJoin(t *testing.T) {
	u := testUniverse(t)
	u.Intraday = append(u.Intraday,
		Intraday{Ticker: "VVAR3", Times: []int64{at(2, 13, 0).Unix(), at(3, 13, 0).Unix()}, Open: []Num{1, 2}, High: []Num{1, 2}, Low: []Num{1, 2}, Close: []Num{1, 2}, Volume: []Num{1, 2}, Quantity: []int64{1, 2}},
		Intraday{Ticker: "VIIA3", Times: []int64{at(4, 13, 0).Unix()}, Open: []Num{3}, High: []Num{3}, Low: []Num{3}, Close: []Num{3}, Volume: []Num{3}, Quantity: []int64{3}},
	)
	ds := mustBuild(t, u)
	a, _ := ds.Asset("VIIA3")
	if want := []Date{d(0), d(1), d(2), d(3), d(4)}; !slices.Equal(a.Daily.Dates, want) {
		t.Fatalf("dates = %v", a.Daily.Dates)
	}
	if want := []Num{5, 5.5, 6, 6, 6}; !slices.Equal(closes(a.Daily), want) {
		t.Fatalf("closes = %v (the former ticker's row on the rename date must be dropped)", closes(a.Daily))
	}
	if a.Daily.Ticker != "VIIA3" {
		t.Fatal("joined series malformed")
	}
	if want := []int64{at(2, 13, 0).Unix(), at(4, 13, 0).Unix()}; !slices.Equal(a.Intraday.Times, want) {
		t.Fatalf("intraday times = %v", a.Intraday.Times)
	}
	// The source series are untouched.
	if len(u.Daily[4].Dates) != 4 || len(u.Daily[5].Dates) != 2 {
		t.Fatal("source series modified")
	}
	// An unrenamed ticker keeps its source dates (the columns are made
	// compact).
	p, _ := ds.Asset("PETR4")
	if &p.Daily.Dates[0] != &u.Daily[0].Dates[0] {
		t.Error("PETR4 dates copied")
	}
	// Chains: A -> B -> C.
	u = testUniverse(t)
	u.Securities = append(u.Securities, Security{Ticker: "VIAA3", CompanyID: viaID, StockType: ClassCS, UnitFactor: Null})
	u.Daily = append(u.Daily, mkSeries("VIAA3", []int{0}, []float64{4}))
	u.Daily[4] = mkSeries("VVAR3", []int{1, 2}, []float64{5.5, 6})
	u.Renames = append(u.Renames, TickerRename{From: "VIAA3", To: "VVAR3", Date: d(1)})
	ds = mustBuild(t, u)
	for _, id := range []string{"VIAA3", "VVAR3", "VIIA3"} {
		r, err := ds.Resolve(id)
		if err != nil || r.Security.Ticker != "VIIA3" {
			t.Fatalf("Resolve(%s) = %v, %v", id, r.Security, err)
		}
	}
	a, _ = ds.Asset("VIIA3")
	if want := []Num{4, 5.5, 6, 6, 6}; !slices.Equal(closes(a.Daily), want) {
		t.Fatalf("chain closes = %v", closes(a.Daily))
	}
	if !slices.Equal(a.Former, []string{"VIAA3", "VVAR3"}) {
		t.Fatalf("former = %v", a.Former)
	}
}

func TestAdjustmentFactors(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	f := func(ticker string, want ...Num) {
		t.Helper()
		for i, w := range want {
			got, err := ds.AdjustmentFactor(ticker, d(i))
			if err != nil {
				t.Fatal(err)
			}
			checkNum(t, ticker+" F("+d(i).String()+")", got, w)
		}
	}
	// Split 1:10 with prior_ex d1: factor 10 on d0 and d1.
	f("PETR4", 10, 10, 1, 1, 1)
	// 5% bonus on d0 (matched by ISIN) times reverse split 10:1 on d2.
	f("PETR3", 1.05*0.1, 0.1, 0.1, 1, 1)
	// Spin-off: P = 30 (VALE3 on d2), receives 0.5 SPUN3 at 10 (d3):
	// 30 / (30 - 0.5*10) = 1.2. The subscription does not adjust.
	f("VALE3", 1.2, 1.2, 1.2, 1, 1)
	f("SPUN3", 1, 1, 1, 1, 1)
	if _, err := ds.AdjustmentFactor("NOPE", d(0)); !errors.Is(err, ErrNotFound) {
		t.Error(err)
	}
	// A date before every event and far after.
	p, _ := ds.Asset("PETR4")
	checkNum(t, "F(-inf)", p.AdjustmentFactor(NoDate), 10)
	checkNum(t, "F(+inf)", p.AdjustmentFactor(d(1000)), 1)
	dates, fs := p.AdjustmentSteps()
	if !slices.Equal(dates, []Date{d(1)}) || !slices.Equal(fs, []Num{10}) {
		t.Errorf("steps = %v %v", dates, fs)
	}
	if ev := p.AdjustmentEvents(); len(ev) != 1 || ev[0].Factor != 10 || ev[0].Action.Type != ActStockSplit {
		t.Errorf("events = %+v", ev)
	}
	// Adjusted bars: price / F, quantity * F, volume unchanged.
	var bars []Bar
	bars = p.AppendDaily(bars, 0, p.Daily.Len(), true)
	for i, want := range []Num{10, 11, 11.5, 12, 12.6} {
		checkNum(t, "adjusted close", bars[i].Close, want)
	}
	checkNum(t, "adjusted qty d0", bars[0].Quantity, 10000)
	checkNum(t, "volume d0", bars[0].Volume, 100000)
	checkNum(t, "factor d0", bars[0].Factor, 10)
	raw := p.AppendDaily(nil, 0, 2, false)
	checkNum(t, "raw close d0", raw[0].Close, 100)
	checkNum(t, "raw factor d0", raw[0].Factor, 10)
	if b := p.DailyBar(1, true); b.Close != 11 || b.Date != d(1) || b.Time != int64(d(1))*86400 {
		t.Errorf("DailyBar = %+v", b)
	}
	v, _ := ds.Asset("VALE3")
	vb := v.AppendDaily(nil, 0, 3, true)
	checkNum(t, "VALE3 adjusted d2", vb[2].Close, 25)
	pc, _ := ds.Asset("PETR3")
	pb := pc.AppendDaily(nil, 0, 5, true)
	checkNum(t, "PETR3 adjusted d0", pb[0].Close, 1/0.105)
	checkNum(t, "PETR3 adjusted d1", pb[1].Close, 10)
}

func TestLegFactors(t *testing.T) {
	for _, tc := range []struct {
		name string
		sa   ShareAction
		want Num
	}{
		{"merger original leg", ShareAction{Type: ActMerger, Legs: []Leg{{LegType: LegOriginal, Ticker: "VALE3", Factor: 0.8}, {LegType: LegReceived, Ticker: "SPUN3", Factor: 2}}}, 0.8},
		{"restitution in shares removes the received value", ShareAction{Type: ActRestitutionInShares, Legs: []Leg{{LegType: LegReceived, Ticker: "SPUN3", Factor: 2}}}, 30.0 / (30 - 2*10)},
		{"restitution in shares with original leg", ShareAction{Type: ActRestitutionInShares, Legs: []Leg{{LegType: LegOriginal, Ticker: "VALE3", Factor: 1}, {LegType: LegReceived, Ticker: "SPUN3", Factor: 0.5}}}, 30.0 / (30 - 0.5*10)},
		{"restitution with share reduction keeps the leg factor", ShareAction{Type: ActRestitutionWithReduce, Legs: []Leg{{LegType: LegOriginal, Ticker: "VALE3", Factor: 0.9}, {LegType: LegReceived, Ticker: "SPUN3", Factor: 0.5}}}, 0.9},
		{"spin-off quantity", ShareAction{Type: ActSpinOffQuantity, Legs: []Leg{{LegType: LegOriginal, Ticker: "VALE3", Factor: 0.9}, {LegType: LegReceived, Ticker: "SPUN3", Factor: 1}}}, 0.9 * 30 / 20},
		{"spin-off two legs", ShareAction{Type: ActSpinOff, Legs: []Leg{{LegType: LegReceived, Ticker: "SPUN3", Factor: 1}, {LegType: LegReceived, Ticker: "PETR3", Factor: 1}}}, 30.0 / (30 - 10 - 10)},
		{"spin-off received without price", ShareAction{Type: ActSpinOff, Legs: []Leg{{LegType: LegReceived, Ticker: "SELIC", Factor: 1}, {LegType: LegReceived, Ticker: "NOPE3", Factor: 1}}}, 1},
		{"spin-off worth more than the original", ShareAction{Type: ActSpinOff, Legs: []Leg{{LegType: LegReceived, Ticker: "SPUN3", Factor: 5}}}, 1},
		{"spin-off null leg factor", ShareAction{Type: ActSpinOff, Legs: []Leg{{LegType: LegOriginal, Factor: Null}, {LegType: LegReceived, Ticker: "SPUN3", Factor: Null}}}, 1},
		{"leg type without legs uses root", ShareAction{Type: ActMerger, Factor: 2}, 2},
		{"leg type without legs nor factor", ShareAction{Type: ActMerger, Factor: Null}, 1},
		{"total redemption", ShareAction{Type: ActTotalRedemption, Factor: 3}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := testUniverse(t)
			sa := tc.sa
			sa.CompanyID, sa.Ticker, sa.PriorExDate = valeID, "VALE3", d(2)
			u.ShareActions = append(u.ShareActions[:3], sa) // replace the spin-off
			ds := mustBuild(t, u)
			got, _ := ds.AdjustmentFactor("VALE3", d(2))
			checkNum(t, "factor", got, tc.want)
		})
	}
	// An action naming neither ticker nor ISIN adjusts its original leg.
	u := testUniverse(t)
	u.ShareActions = append(u.ShareActions[:3], ShareAction{CompanyID: valeID, PriorExDate: d(1), Type: ActMerger,
		Legs: []Leg{{LegType: LegOriginal, Ticker: "VALE3", Factor: 0.5}}})
	ds := mustBuild(t, u)
	got, _ := ds.AdjustmentFactor("VALE3", d(1))
	checkNum(t, "original leg target", got, 0.5)
}

func TestAdjustedCash(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	byID := map[string]*CashEvent{}
	for i := range ds.CashActions() {
		e := &ds.CashActions()[i]
		byID[e.ID] = e
	}
	for _, tc := range []struct {
		id                         string
		factor, value, adj, adjNet Num
		current                    bool
	}{
		{"c1v1", 10, 1, 0.1, 0.085, false},
		{"c1v2", 10, 1.3, 0.13, 0.11, true},
		{"c2v1", 1, 0.5, 0.5, 0.5, true},
		{"c3v1", 0.105, 0.21, 2, 2, true}, // missing correction counts as 0
		{"c4v1", Null, 2, Null, Null, true},
	} {
		e := byID[tc.id]
		if e == nil {
			t.Fatalf("%s missing", tc.id)
		}
		checkNum(t, tc.id+" factor", e.Factor, tc.factor)
		checkNum(t, tc.id+" value", e.Value(), tc.value)
		checkNum(t, tc.id+" adjusted value", e.Adjust(e.Value()), tc.adj)
		checkNum(t, tc.id+" adjusted net", e.Adjust(e.NetValue), tc.adjNet)
		if e.Current != tc.current {
			t.Errorf("%s current = %v", tc.id, e.Current)
		}
	}
	// Sorted by prior_ex_date descending; NoDate last.
	var ids []string
	for _, e := range ds.CashActions() {
		ids = append(ids, e.ID)
	}
	if want := []string{"c2v1", "c3v1", "c1v2", "c1v1", "c4v1"}; !slices.Equal(ids, want) {
		t.Errorf("order = %v, want %v", ids, want)
	}
	is, _ := ds.Issuer(petroID)
	if len(is.CashActions()) != 4 || is.CashActions()[0].ID != "c2v1" {
		t.Errorf("issuer cash actions = %d", len(is.CashActions()))
	}
	checkNum(t, "installment", InstallmentValue(&Installment{DeclaredValue: 1, MonetaryCorrection: 0.5}), 1.5)
	checkNum(t, "installment null", InstallmentValue(&Installment{DeclaredValue: Null, MonetaryCorrection: 0.5}), Null)
}

func TestIssuerLists(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	is, _ := ds.Issuer(petroID)
	if len(is.Assets) != 2 || is.Assets[0].Ticker != "PETR4" || is.Assets[1].Ticker != "PETR3" {
		t.Errorf("assets by liquidity = %v", is.Assets)
	}
	if is.Sector[0].ID != "S1" || is.Sector[3].ID != "S1.1.1.1" {
		t.Errorf("sector path = %v", is.Sector)
	}
	var reps []string
	for _, r := range is.Reports() {
		reps = append(reps, r.ReferenceDate.String()+" "+r.Statement.String()+" "+string(rune('0'+r.Version)))
	}
	if want := []string{"2022-12-31 DRE 1", "2023-12-31 BPA 1", "2023-12-31 DRE 1", "2023-12-31 DRE 2"}; !slices.Equal(reps, want) {
		t.Errorf("reports = %v", reps)
	}
	if sp, ok := is.LatestShares(); !ok || sp.Common != 110 || sp.Preferred != 220 || is.Shares[1].Common != 100 {
		t.Errorf("shares = %+v", sp)
	}
	if len(is.ShareActions) != 3 || is.ShareActions[0].PriorExDate != d(2) || is.ShareActions[2].PriorExDate != d(0) {
		t.Errorf("share actions order")
	}
	if len(is.Documents()) != 2 || is.Documents()[0].ID != "doc2" || len(is.Insider()) != 1 {
		t.Error("documents order")
	}
	if is.IsFund() {
		t.Error("PETR is a fund")
	}
	checkRatioGroups(t, ds, is)
	checkFundLists(t, ds)
}

// checkRatioGroups checks the ratio groups of PETR in the test universe:
// (indicator, class, frequency) with points by reference date.
func checkRatioGroups(t *testing.T, ds *Dataset, is *Issuer) {
	t.Helper()
	var keys []string
	for _, g := range is.Ratios() {
		keys = append(keys, ds.Catalog()[g.Indicator].ID+"/"+g.Class+"/"+g.Frequency)
	}
	if want := []string{"EBITDA_MARGIN//ANNUAL", "EBITDA_MARGIN//TTM", "DIVIDEND_YIELD/CS/TTM", "DIVIDEND_YIELD/PS/TTM", "ROE//ANNUAL"}; !slices.Equal(keys, want) {
		t.Errorf("ratio groups = %v", keys)
	}
	g := is.RatioGroup(0, "", FreqTTM)
	if g == nil || len(g.Points) != 2 || g.Points[0].Value != 0.25 || g.Points[1].Value != 0.30 {
		t.Errorf("TTM group = %+v", g)
	}
	if is.RatioGroup(0, "", FreqQuarterly) != nil {
		t.Error("missing group found")
	}
}

// checkFundLists checks the lists of the fund of the test universe.
func checkFundLists(t *testing.T, ds *Dataset) {
	t.Helper()
	f, _ := ds.Issuer(fundID)
	if !f.IsFund() || len(f.FundReports()) != 1 || len(f.FundRatios()) != 1 || len(f.FundRatios()[0].Points) != 2 ||
		f.FundRatios()[0].Points[0].ReferenceDate != MakeDate(2023, 11, 1) {
		t.Errorf("fund lists = %+v", f.FundRatios())
	}
	if _, ok := f.LatestShares(); ok {
		t.Error("fund has shares")
	}
}

func TestSectors(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	f := func(id string, want ...string) {
		t.Helper()
		got, ok := ds.SectorDescendants(id)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("SectorDescendants(%s) = %v, %v; want %v", id, got, ok, want)
		}
	}
	f("S1", "S1", "S1.1", "S1.1.1", "S1.1.1.1", "S1.1.1.2")
	f("S1.1.1", "S1.1.1", "S1.1.1.1", "S1.1.1.2")
	f("S2.1.1.1", "S2.1.1.1")
	if _, ok := ds.SectorDescendants("S9"); ok {
		t.Error("unknown sector expanded")
	}
	p, ok := ds.SectorPath("S1.1.1")
	if !ok || p[0].ID != "S1" || p[2].ID != "S1.1.1" || p[3] != nil {
		t.Errorf("SectorPath = %v", p)
	}
	if s, ok := ds.Sector("S2"); !ok || s.Name != "Materials" || len(ds.Sectors()) != 9 {
		t.Error("Sector(S2)")
	}
	if _, ok := ds.Sector("S9"); ok {
		t.Error("Sector(S9)")
	}
	if _, ok := ds.SectorPath("S9"); ok {
		t.Error("SectorPath(S9)")
	}
}

func TestStore(t *testing.T) {
	var s Store
	if s.Current() != nil {
		t.Fatal("zero store not empty")
	}
	a := mustBuild(t, testUniverse(t))
	b := mustBuild(t, testUniverse(t))
	if old := s.Publish(a); old != nil || s.Current() != a {
		t.Fatal("first publish")
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				if c := s.Current(); c != a && c != b {
					t.Error("torn read")
					return
				}
			}
		}()
	}
	if old := s.Publish(b); old != a || s.Current() != b {
		t.Fatal("second publish")
	}
	wg.Wait()
}

func TestUpperCaseTimeIndependence(t *testing.T) {
	// QuoteAt takes any time zone.
	ds := mustBuild(t, testUniverse(t))
	loc := time.FixedZone("BRT", -3*3600)
	q1, _ := ds.QuoteAt("PETR4", at(4, 13, 5))
	q2, _ := ds.QuoteAt("PETR4", at(4, 13, 5).In(loc))
	if q1 != q2 {
		t.Error("QuoteAt depends on the time zone")
	}
}

func TestLiquidityOrder(t *testing.T) {
	u := testUniverse(t)
	// VALE3 and VALE6 have no rank: volume decides; VALE5 has a rank and
	// comes first; VALE8 has no data and comes last.
	u.Securities = append(u.Securities,
		Security{Ticker: "VALE6", CompanyID: valeID, StockType: ClassPSB, UnitFactor: Null},
		Security{Ticker: "VALE5", CompanyID: valeID, StockType: ClassPSA, UnitFactor: Null, LiquidityRank: 40},
		Security{Ticker: "VALE8", CompanyID: valeID, StockType: ClassPSD, UnitFactor: Null})
	u.Daily = append(u.Daily,
		mkSeries("VALE6", []int{4}, []float64{26}),
		mkSeries("VALE5", []int{4}, []float64{1}))
	ds := mustBuild(t, u)
	is, _ := ds.Issuer(valeID)
	var got []string
	for _, a := range is.Assets {
		got = append(got, a.Ticker)
	}
	if want := []string{"VALE5", "VALE6", "VALE3", "VALE8"}; !slices.Equal(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	s := ds.Screener()
	for r, a := range s.Assets {
		if a.Issuer.ID == valeID && s.Primary[r] != (a.Ticker == "VALE5") {
			t.Errorf("%s primary = %v", a.Ticker, s.Primary[r])
		}
	}
}

// TestRatioPointsCanonical checks that a Universe whose points are in
// CompareRatioPoints order is served without a copy (series alias the
// Universe's array) and with the same series as one in another order.
func TestRatioPointsCanonical(t *testing.T) {
	shuffled := testUniverse(t)
	sorted := testUniverse(t)
	sortDerived(sorted)
	if slices.EqualFunc(shuffled.Derived.Ratios, sorted.Derived.Ratios, func(x, y RatioPoint) bool { return CompareRatioPoints(&x, &y) == 0 }) {
		t.Fatal("the fixture's points are already in order: the copy path is not tested")
	}
	a, b := mustBuild(t, shuffled), mustBuild(t, sorted)
	for _, id := range []string{petroID, valeID, fundID} {
		ia, _ := a.Issuer(id)
		ib, _ := b.Issuer(id)
		if len(ia.Ratios()) != len(ib.Ratios()) || len(ia.FundRatios()) != len(ib.FundRatios()) {
			t.Fatalf("%s: %d/%d series vs %d/%d", id, len(ia.Ratios()), len(ia.FundRatios()), len(ib.Ratios()), len(ib.FundRatios()))
		}
		for i := range ia.Ratios() {
			x, y := ia.Ratios()[i], ib.Ratios()[i]
			if x.Indicator != y.Indicator || x.Class != y.Class || x.Frequency != y.Frequency || !slices.EqualFunc(x.Points, y.Points, func(p, q RatioPoint) bool {
				return CompareRatioPoints(&p, &q) == 0 && p.Value == q.Value || (p.Value != p.Value && q.Value != q.Value)
			}) {
				t.Errorf("%s series %d differs: %+v vs %+v", id, i, x, y)
			}
		}
	}
	within := func(p *RatioPoint, ps []RatioPoint) bool {
		return len(ps) > 0 && uintptr(unsafe.Pointer(p)) >= uintptr(unsafe.Pointer(&ps[0])) &&
			uintptr(unsafe.Pointer(p)) <= uintptr(unsafe.Pointer(&ps[len(ps)-1]))
	}
	is, _ := b.Issuer(petroID)
	if !within(&is.Ratios()[0].Points[0], sorted.Derived.Ratios) {
		t.Error("canonical points were copied")
	}
	is, _ = a.Issuer(petroID)
	if within(&is.Ratios()[0].Points[0], shuffled.Derived.Ratios) {
		t.Error("points out of order served from the Universe's own array")
	}
}

func sortDerived(u *Universe) {
	SortRatioPoints(u.Derived.Ratios)
	SortFundRatioPoints(u.Derived.FundRatios)
}

func TestDerivedVars(t *testing.T) {
	var d Derived
	d.Ratios = make([]RatioPoint, 3)
	d.AddVars(&d.Ratios[0], []Num{1, 2})
	d.AddVars(&d.Ratios[1], nil)
	d.AddVars(&d.Ratios[2], []Num{3, Null, 5})
	if v := d.Vars(&d.Ratios[2]); len(v) != 3 || cap(v) != 3 || v[0] != 3 || v[1].Valid() || v[2] != 5 {
		t.Errorf("vars of point 2 = %v (cap %d)", v, cap(v))
	}
	if v := d.Vars(&d.Ratios[1]); v != nil {
		t.Errorf("point without variables: %v", v)
	}
	bad := RatioPoint{VarsAt: 4, NVars: 2}
	if v := d.Vars(&bad); v != nil {
		t.Errorf("range beyond the array: %v", v)
	}
	if s := unsafe.Sizeof(RatioPoint{}); s != 48 {
		t.Errorf("RatioPoint is %d bytes, want 48", s)
	}
}

// closes returns every close of s.
func closes(s *DailyBars) []Num {
	out := make([]Num, s.Len())
	for i := range out {
		out[i] = s.Close(i)
	}
	return out
}
