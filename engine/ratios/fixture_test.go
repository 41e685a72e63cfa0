package ratios

import (
	"math"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// fig is one period's figures (BRL) as filed.
type fig struct {
	form       string
	ref, start engine.Date
	pub        time.Time
	ver        int

	rev, cogs, ebit, finExp, preTax, tax, ni float64 // DRE (costs negative)
	da, jcp, div                             float64 // DVA (7.04.01 negative as filed)
	assets, ca, cash, sti, inv               float64 // BPA
	cl, std, ltd, eq                         float64 // BPP
}

func day(s string) engine.Date {
	d, err := engine.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func at(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t.Add(20 * time.Hour)
}

func acc(code string, v float64) engine.Account {
	return engine.NewAccount(code, "", true, engine.Num(v))
}

// reports returns the DRE, DVA, BPA and BPP of f.
func (f fig) reports(company, agg string) []engine.Report {
	mk := func(st string, start engine.Date, accts ...engine.Account) engine.Report {
		return engine.Report{CompanyID: company, Statement: engine.MustLabel(st), Aggregation: engine.MustLabel(agg), Form: engine.MustLabel(f.form),
			ReferenceDate: f.ref, StartDate: start, EndDate: f.ref, PublishDate: engine.StampOf(f.pub),
			RetrievalDate: engine.StampOf(f.pub.Add(time.Hour)), Version: f.ver, Accounts: accts}
	}
	return []engine.Report{
		mk("DRE", f.start,
			acc("3.01", f.rev), acc("3.02", f.cogs), acc("3.03", f.rev+f.cogs), acc("3.05", f.ebit),
			acc("3.06", f.preTax-f.ebit), acc("3.06.02", f.finExp), acc("3.07", f.preTax), acc("3.08", f.tax),
			acc("3.11", f.ni), acc("3.99.01.01", 0.01)),
		mk("DVA", f.start, acc("7.04.01", f.da), acc("7.08.04", f.jcp+f.div), acc("7.08.04.01", f.jcp), acc("7.08.04.02", f.div)),
		mk("BPA", engine.NoDate, acc("1", f.assets), acc("1.01", f.ca), acc("1.01.01", f.cash), acc("1.01.02", f.sti), acc("1.01.04", f.inv)),
		mk("BPP", engine.NoDate, acc("2", f.assets), acc("2.01", f.cl), acc("2.01.04", f.std), acc("2.02.01", f.ltd), acc("2.03", f.eq)),
	}
}

// The fixture company C1: three ITR quarters and the DFP of 2023, the first
// quarter of 2024, the third quarter of 2023 re-filed after the DFP.
var (
	q1 = fig{form: "ITR", ref: day("2023-03-31"), start: day("2023-01-01"), pub: at("2023-05-10"), ver: 1,
		rev: 100, cogs: -60, ebit: 20, finExp: -5, preTax: 15, tax: -5, ni: 10, da: -4, jcp: 1, div: 2,
		assets: 1000, ca: 300, cash: 50, sti: 30, inv: 60, cl: 150, std: 40, ltd: 200, eq: 500}
	q2 = fig{form: "ITR", ref: day("2023-06-30"), start: day("2023-04-01"), pub: at("2023-08-10"), ver: 1,
		rev: 110, cogs: -64, ebit: 22, finExp: -6, preTax: 16, tax: -4, ni: 12, da: -5, jcp: 0, div: 3,
		assets: 1020, ca: 310, cash: 55, sti: 30, inv: 62, cl: 155, std: 42, ltd: 198, eq: 510}
	q3 = fig{form: "ITR", ref: day("2023-09-30"), start: day("2023-07-01"), pub: at("2023-11-10"), ver: 1,
		rev: 120, cogs: -70, ebit: 24, finExp: -6, preTax: 18, tax: -4, ni: 14, da: -5, jcp: 1, div: 1,
		assets: 1040, ca: 320, cash: 60, sti: 32, inv: 64, cl: 160, std: 44, ltd: 196, eq: 520}
	q3v2 = func() fig {
		f := q3
		f.pub, f.ver, f.rev, f.ni = at("2024-04-01"), 2, 125, 15
		return f
	}()
	fy23 = fig{form: "DFP", ref: day("2023-12-31"), start: day("2023-01-01"), pub: at("2024-03-20"), ver: 1,
		rev: 480, cogs: -280, ebit: 96, finExp: -24, preTax: 72, tax: -22, ni: 50, da: -20, jcp: 4, div: 10,
		assets: 1100, ca: 330, cash: 70, sti: 35, inv: 66, cl: 165, std: 46, ltd: 194, eq: 540}
	q124 = fig{form: "ITR", ref: day("2024-03-31"), start: day("2024-01-01"), pub: at("2024-05-10"), ver: 1,
		rev: 130, cogs: -75, ebit: 26, finExp: -7, preTax: 19, tax: -3, ni: 16, da: -6, jcp: 0, div: 4,
		assets: 1120, ca: 340, cash: 80, sti: 36, inv: 68, cl: 170, std: 48, ltd: 192, eq: 560}
)

func series(ticker string, dates []string, closes []float64) engine.Series {
	s := engine.Series{Ticker: ticker}
	for i, d := range dates {
		c := engine.Num(closes[i])
		s.Dates = append(s.Dates, day(d))
		s.Open = append(s.Open, c)
		s.High = append(s.High, c)
		s.Low = append(s.Low, c)
		s.Close = append(s.Close, c)
		s.Volume = append(s.Volume, 1000)
		s.Quantity = append(s.Quantity, 100)
		s.Trades = append(s.Trades, 10)
	}
	return s
}

var sessions = []string{"2023-03-31", "2023-06-30", "2023-09-29", "2023-12-29", "2024-03-28", "2024-06-28"}

// fixture returns the hand-checked universe.
func fixture() *engine.Universe {
	u := &engine.Universe{Meta: engine.Meta{AsOf: at("2024-06-28")}}
	u.Companies = []engine.Company{
		{ID: "C1", Symbol: "CAAA", Kind: engine.KindCompany},
		{ID: "C2", Symbol: "CBBB", Kind: engine.KindCompany},
		{ID: "C3", Symbol: "CCCC", Kind: engine.KindCompany},
		{ID: "F1", Symbol: "FFFF", Kind: engine.KindFII},
	}
	u.Securities = []engine.Security{
		{Ticker: "CAAA3", CompanyID: "C1", ISIN: "BRCAAAACNOR1", StockType: engine.ClassCS, UnitFactor: engine.Null, LiquidityRank: 5},
		{Ticker: "CAAA4", CompanyID: "C1", ISIN: "BRCAAAACNPR1", StockType: engine.ClassPS, UnitFactor: engine.Null, LiquidityRank: 2},
		{Ticker: "CAAA11", CompanyID: "C1", ISIN: "BRCAAACDAM11", StockType: engine.ClassUnit, UnitFactor: 3, LiquidityRank: 10},
		{Ticker: "CAAA9", CompanyID: "C1", ISIN: "BRCAAAACNPR9", StockType: engine.ClassPS, UnitFactor: engine.Null, LiquidityRank: 0},
		{Ticker: "CBBB3", CompanyID: "C2", ISIN: "BRCBBBACNOR1", StockType: engine.ClassCS, UnitFactor: engine.Null, LiquidityRank: 7},
		{Ticker: "FFFF11", CompanyID: "F1", ISIN: "BRFFFFCTF001", StockType: engine.ClassFundUnit, UnitFactor: engine.Null, LiquidityRank: 3},
	}
	u.Renames = []engine.TickerRename{{From: "CAAO3", To: "CAAA3", Date: day("2023-06-01")}}
	u.Daily = []engine.Series{
		// CAAA3 traded as CAAO3 until May 2023.
		series("CAAO3", []string{"2023-03-31"}, []float64{10}),
		series("CAAA3", sessions[1:], []float64{11, 12, 13, 14, 15}),
		series("CAAA4", sessions, []float64{9, 10, 11, 12, 13, 14}),
		series("CAAA11", sessions, []float64{30, 32, 34, 36, 38, 40}),
		series("CBBB3", []string{"2024-06-28"}, []float64{5}),
		series("FFFF11", []string{"2024-05-30", "2024-05-31", "2024-06-03"}, []float64{95, 97, 99}),
	}
	for _, f := range []fig{q1, q2, q3, q3v2, fy23, q124} {
		u.Reports = append(u.Reports, f.reports("C1", engine.AggConsolidated)...)
	}
	// Individual statements of C1 must be ignored (it has consolidated ones).
	ind := q124
	ind.rev = 999
	u.Reports = append(u.Reports, ind.reports("C1", engine.AggIndividual)...)
	// C2 has only individual statements, with zero equity and zero revenue.
	c2 := fig{form: "DFP", ref: day("2023-12-31"), start: day("2023-01-01"), pub: at("2024-03-25"), ver: 1,
		rev: 0, ebit: 5, ni: 7, da: -1, assets: 100, ca: 10, cl: 0, eq: 0, std: 10, ltd: 5, cash: 3, sti: 2}
	u.Reports = append(u.Reports, c2.reports("C2", engine.AggIndividual)...)
	u.Shares = []engine.SharesPoint{
		{CompanyID: "C1", Date: day("2023-01-01"), Common: 600, Preferred: 400},
		{CompanyID: "C1", Date: day("2024-01-01"), Common: 600, Preferred: 400, Treasury: 100},
		{CompanyID: "C2", Date: day("2020-01-01"), Common: 10},
	}
	u.CashActions = []engine.CashAction{
		{ID: "d1v1", EventID: "d1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
			PriorExDate: day("2023-06-15"), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: 0.5},
		{ID: "d1v2", EventID: "d1", Version: 2, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
			PriorExDate: day("2023-06-15"), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: 0.6},
		{ID: "j1", EventID: "j1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
			PriorExDate: day("2024-02-10"), Name: engine.MustLabel("INTEREST_ON_EQUITY"), DeclaredValue: 0.3},
		{ID: "r1", EventID: "r1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA4"), StockType: engine.MustLabel(engine.ClassPS), ISIN: engine.Intern("BRCAAAACNPR1"),
			PriorExDate: day("2024-02-10"), Name: engine.MustLabel("RESTITUTION"), DeclaredValue: 1},
		// Paid to the old ticker of CAAA3, matched through the rename.
		{ID: "o1", EventID: "o1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAO3"), StockType: engine.MustLabel(engine.ClassCS),
			PriorExDate: day("2023-05-02"), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: 0.2},
	}
	// A 1:2 split of CAAA4 after the first dividend.
	u.ShareActions = []engine.ShareAction{
		{CompanyID: "C1", ISIN: "BRCAAAACNPR1", Ticker: "CAAA4", PriorExDate: day("2024-01-15"), Type: engine.ActStockSplit, Factor: 2},
	}
	u.FundReports = []engine.FundReport{
		{FundID: "F1", ReferenceDate: day("2024-05-01"), Version: 1, PublishDate: at("2024-06-10"), RetrievalDate: at("2024-06-11"),
			NetAssets: 1e6, SharesOut: 1e4, NAVPerShare: 100, Investors: 321, DividendYield: 0.008, MonthlyReturn: 0.012, TotalAssets: 1.1e6},
		{FundID: "F1", ReferenceDate: day("2024-05-01"), Version: 2, PublishDate: at("2024-06-20"), RetrievalDate: at("2024-06-21"),
			NetAssets: 1e6, SharesOut: 1e4, NAVPerShare: 97, Investors: 321, DividendYield: 0.008, MonthlyReturn: 0.012, TotalAssets: 1.1e6},
		{FundID: "F1", ReferenceDate: day("2024-04-01"), Version: 1, PublishDate: at("2024-05-10"), RetrievalDate: at("2024-05-11"),
			NetAssets: 9e5, SharesOut: 1e4, NAVPerShare: 90, Investors: 300, DividendYield: engine.Null, MonthlyReturn: 0.01},
	}
	return u
}

func mustDerive(tb testing.TB, u *engine.Universe) engine.Derived {
	tb.Helper()
	d, err := Derive(u)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// pointsOf returns the points of (company, kind, id, class, freq, ref) in
// publish order.
func pointsOf(tb testing.TB, d engine.Derived, company, kind, id, class, freq, ref string) []engine.RatioPoint {
	tb.Helper()
	ix, ok := Lookup(kind, id)
	if !ok {
		tb.Fatalf("no indicator %s %s", kind, id)
	}
	var out []engine.RatioPoint
	for _, p := range d.Ratios {
		if p.CompanyID.String() == company && p.Indicator == ix && p.Class.String() == class && p.Frequency.String() == freq && p.ReferenceDate.String() == ref {
			out = append(out, p)
		}
	}
	return out
}

func close12(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}
