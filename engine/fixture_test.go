package engine

import (
	"testing"
	"time"
)

// Sessions of the test universe: d(0) .. d(4) are 2024-01-02 .. 2024-01-06.
func d(i int) Date { return MakeDate(2024, 1, 2) + Date(i) }

// at returns the unix time of session i at hh:mm UTC.
func at(i, hh, mm int) time.Time {
	return d(i).Time().Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
}

// mkSeries builds a daily series with open = high = low = close, volume =
// close * 1000 BRL, quantity 1000 and 10 trades per row.
func mkSeries(ticker string, days []int, closes []float64) Series {
	s := Series{Ticker: ticker}
	for i, dd := range days {
		c := Num(closes[i])
		s.Dates = append(s.Dates, d(dd))
		s.Open = append(s.Open, c)
		s.High = append(s.High, c)
		s.Low = append(s.Low, c)
		s.Close = append(s.Close, c)
		s.Volume = append(s.Volume, c*1000)
		s.Quantity = append(s.Quantity, 1000)
		s.Trades = append(s.Trades, 10)
	}
	return s
}

const (
	petroID = "33000167000101"
	valeID  = "33592510000154"
	spunID  = "11111111000111"
	viaID   = "33041260065290"
	fundID  = "11728688000147"
)

// testUniverse returns a small hand-built Universe whose derived values
// are computed by hand in the tests:
//
//   - PETR4 (PS, rank 1): split 1:10 with prior_ex d1; closes 100, 110,
//     11.5, 12, 12.6; 1-minute bars on d4 at 13:00..13:02 UTC.
//   - PETR3 (CS, rank 2): 5% bonus prior_ex d0 and reverse split 10:1
//     prior_ex d2; closes 1, 1, 1, 10, 10.
//   - VALE3: spin-off prior_ex d2 receiving 0.5 SPUN3 per share; VALE3
//     closes 30 on d2, SPUN3 first close after d2 is 10: factor 1.2.
//   - VVAR3 renamed VIIA3 on d3: VVAR3 d0..d3 (d3 dropped), VIIA3 d3, d4.
//   - HGLG11 fund, SELIC macro series.
func testUniverse(tb testing.TB) *Universe {
	tb.Helper()
	u := &Universe{
		Meta: Meta{AsOf: at(4, 21, 0), Description: "test"},
		Sectors: []Sector{
			{ID: "S1", Name: "Energy", Level: 1},
			{ID: "S1.1", Name: "Energy G", Level: 2, ParentID: "S1"},
			{ID: "S1.1.1", Name: "Oil", Level: 3, ParentID: "S1.1"},
			{ID: "S1.1.1.1", Name: "Integrated Oil", Level: 4, ParentID: "S1.1.1"},
			{ID: "S1.1.1.2", Name: "Oil Services", Level: 4, ParentID: "S1.1.1"},
			{ID: "S2", Name: "Materials", Level: 1},
			{ID: "S2.1", Name: "Materials G", Level: 2, ParentID: "S2"},
			{ID: "S2.1.1", Name: "Mining", Level: 3, ParentID: "S2.1"},
			{ID: "S2.1.1.1", Name: "Iron Ore", Level: 4, ParentID: "S2.1.1"},
		},
		Companies: []Company{
			{ID: valeID, CVMCode: "004170", Symbol: "VALE", Name: "Vale SA", Kind: KindCompany, SubIndustryID: "S2.1.1.1", Employees: -1, FreeFloat: Null},
			{ID: petroID, CVMCode: "9512", Symbol: "PETR", Name: "Petro SA", TradingName: "PETRO", Kind: KindCompany, SubIndustryID: "S1.1.1.1", Employees: 1000, FreeFloat: 0.6},
			{ID: spunID, CVMCode: "25000", Symbol: "SPUN", Name: "Spun SA", Kind: KindCompany, SubIndustryID: "S1.1.1.2", Employees: 10, FreeFloat: Null},
			{ID: viaID, CVMCode: "22470", Symbol: "VIIA", Name: "Via SA", Kind: KindCompany, Employees: 50, FreeFloat: Null},
			{ID: fundID, CVMCode: "", Symbol: "HGLG", Name: "HG Log FII", Kind: KindFII, Employees: -1, FreeFloat: Null},
		},
		Securities: []Security{
			{Ticker: "PETR4", CompanyID: petroID, ISIN: "BRPETRACNPR6", StockType: ClassPS, Currency: "BRL", UnitFactor: Null, LiquidityRank: 1},
			{Ticker: "PETR3", CompanyID: petroID, ISIN: "BRPETRACNOR9", StockType: ClassCS, Currency: "BRL", UnitFactor: Null, LiquidityRank: 2},
			{Ticker: "VALE3", CompanyID: valeID, ISIN: "BRVALEACNOR0", StockType: ClassCS, Currency: "BRL", UnitFactor: Null},
			{Ticker: "SPUN3", CompanyID: spunID, ISIN: "BRSPUNACNOR1", StockType: ClassCS, Currency: "BRL", UnitFactor: Null},
			{Ticker: "VVAR3", CompanyID: viaID, ISIN: "BRVVARACNOR1", StockType: ClassCS, Currency: "BRL", UnitFactor: Null, ListedTo: d(2)},
			{Ticker: "VIIA3", CompanyID: viaID, ISIN: "BRVIIAACNOR1", StockType: ClassCS, Currency: "BRL", UnitFactor: Null},
			{Ticker: "HGLG11", CompanyID: fundID, ISIN: "BRHGLGCTF004", StockType: ClassFundUnit, Currency: "BRL", UnitFactor: Null},
			{Ticker: "SELIC", StockType: ClassMacro, Currency: "BRL", UnitFactor: Null},
		},
		Renames: []TickerRename{{From: "VVAR3", To: "VIIA3", Date: d(3)}},
		Daily: []Series{
			mkSeries("PETR4", []int{0, 1, 2, 3, 4}, []float64{100, 110, 11.5, 12, 12.6}),
			mkSeries("PETR3", []int{0, 1, 2, 3, 4}, []float64{1, 1, 1, 10, 10}),
			mkSeries("VALE3", []int{0, 1, 2, 3, 4}, []float64{28, 29, 30, 25, 25}),
			mkSeries("SPUN3", []int{3, 4}, []float64{10, 9}),
			mkSeries("VVAR3", []int{0, 1, 2, 3}, []float64{5, 5.5, 6, 99}),
			mkSeries("VIIA3", []int{3, 4}, []float64{6, 6}),
			mkSeries("HGLG11", []int{0, 1, 2, 3, 4}, []float64{150, 151, 152, 153, 150}),
			mkSeries("SELIC", []int{0, 1, 2, 3, 4}, []float64{0.1, 0.1, 0.1, 0.1, 0.1}),
		},
		Intraday: []Intraday{{
			Ticker: "PETR4",
			Times:  []int64{at(4, 13, 0).Unix(), at(4, 13, 1).Unix(), at(4, 13, 2).Unix()},
			Open:   []Num{12.1, 12.3, 12.0}, High: []Num{12.4, 12.5, 12.2}, Low: []Num{12.0, 12.2, 11.9},
			Close: []Num{12.3, 12.2, 12.1}, Volume: []Num{1000, 2000, 500}, Quantity: []int64{80, 160, 40},
		}},
		Indexes: []Index{{Symbol: "IBOV", Name: "Ibovespa", AsOf: d(4), Members: []IndexMember{
			{Ticker: "PETR4"}, {Ticker: "PETR3"}, {Ticker: "VALE3"}, {Ticker: "VVAR3"}, {Ticker: "SPUN3"},
		}}},
		Reports: []Report{
			{CompanyID: petroID, Statement: LabelDRE, Aggregation: LabelConsolidated, ReferenceDate: MakeDate(2023, 12, 31), Version: 2},
			{CompanyID: petroID, Statement: LabelBPA, Aggregation: LabelConsolidated, ReferenceDate: MakeDate(2023, 12, 31), Version: 1},
			{CompanyID: petroID, Statement: LabelDRE, Aggregation: LabelConsolidated, ReferenceDate: MakeDate(2022, 12, 31), Version: 1},
			{CompanyID: petroID, Statement: LabelDRE, Aggregation: LabelConsolidated, ReferenceDate: MakeDate(2023, 12, 31), Version: 1},
		},
		Shares: []SharesPoint{
			{CompanyID: petroID, Date: MakeDate(2022, 1, 1), Common: 100, Preferred: 200},
			{CompanyID: petroID, Date: MakeDate(2023, 6, 1), Common: 110, Preferred: 220},
		},
		CashActions: []CashAction{
			{ID: "c1v1", EventID: "c1", Version: 1, CompanyID: Intern(petroID), Ticker: Intern("PETR4"), StockType: MustLabel(ClassPS), PriorExDate: d(0), DeclaredValue: 1, MonetaryCorrection: 0, NetValue: 0.85, Name: MustLabel("INTEREST_ON_EQUITY")},
			{ID: "c1v2", EventID: "c1", Version: 2, CompanyID: Intern(petroID), Ticker: Intern("PETR4"), StockType: MustLabel(ClassPS), PriorExDate: d(0), DeclaredValue: 1.2, MonetaryCorrection: 0.1, NetValue: 1.1, Name: MustLabel("INTEREST_ON_EQUITY")},
			{ID: "c2v1", EventID: "c2", Version: 1, CompanyID: Intern(petroID), Ticker: Intern("PETR4"), StockType: MustLabel(ClassPS), PriorExDate: d(3), DeclaredValue: 0.5, MonetaryCorrection: 0, NetValue: 0.5, Name: MustLabel("DIVIDEND")},
			{ID: "c3v1", EventID: "c3", Version: 1, CompanyID: Intern(petroID), Ticker: Intern("PETR3"), StockType: MustLabel(ClassCS), ISIN: Intern("BRPETRACNOR9"), PriorExDate: d(0), DeclaredValue: 0.21, MonetaryCorrection: Null, NetValue: 0.21, Name: MustLabel("DIVIDEND")},
			{ID: "c4v1", EventID: "c4", Version: 1, CompanyID: Intern(valeID), Ticker: Intern("VALE3"), StockType: MustLabel(ClassCS), PriorExDate: NoDate, DeclaredValue: 2, NetValue: 2, Name: MustLabel("DIVIDEND")},
		},
		ShareActions: []ShareAction{
			{CompanyID: petroID, Ticker: "PETR4", ISIN: "BRPETRACNPR6", PriorExDate: d(1), Type: ActStockSplit, Factor: 10},
			{CompanyID: petroID, Ticker: "PETR3", ISIN: "BRPETRACNOR9", PriorExDate: d(2), Type: ActReverseSplit, Factor: 0.1},
			{CompanyID: petroID, ISIN: "BRPETRACNOR9", PriorExDate: d(0), Type: ActStockBonus, Factor: 1.05},
			{CompanyID: valeID, Ticker: "VALE3", ISIN: "BRVALEACNOR0", PriorExDate: d(2), Type: ActSpinOff, Factor: Null, Legs: []Leg{
				{LegType: LegOriginal, ISIN: "BRVALEACNOR0", Ticker: "VALE3", Factor: 1},
				{LegType: LegReceived, ISIN: "BRSPUNACNOR1", Ticker: "SPUN3", Factor: 0.5},
			}},
			{CompanyID: valeID, Ticker: "VALE3", PriorExDate: d(0), Type: ActSubscription, Factor: 1.2},
		},
		InsiderReports: []InsiderReport{{CompanyID: petroID, ReferenceDate: MakeDate(2023, 12, 1), Aggregation: AggIndividual, Version: 1}},
		Documents: []Document{
			{ID: "doc1", CompanyID: petroID, PublishDate: at(0, 12, 0)},
			{ID: "doc2", CompanyID: petroID, PublishDate: at(2, 12, 0)},
		},
		FundReports: []FundReport{{FundID: fundID, ReferenceDate: MakeDate(2023, 12, 1), Version: 1, NAVPerShare: 140}},
	}
	u.Derived = Derived{
		Catalog: []Indicator{
			{ID: "EBITDA_MARGIN", Kind: IndFundamental, Format: "PERCENTAGE", Frequencies: []string{FreqAnnual, FreqTTM}},
			{ID: "DIVIDEND_YIELD", Kind: IndValuation, Format: "PERCENTAGE", Frequencies: []string{FreqTTM}, ByClass: true},
			{ID: "P_NAV", Kind: IndFund, Format: "MULTIPLE", Frequencies: []string{FreqMonthly}},
			{ID: "ROE", Kind: IndFundamental, Format: "PERCENTAGE", Frequencies: []string{FreqAnnual}},
			{ID: "DIVIDEND_YIELD", Kind: IndFund, Format: "PERCENTAGE", Frequencies: []string{FreqMonthly}},
		},
		Ratios: []RatioPoint{
			{CompanyID: Intern(petroID), Indicator: 0, Frequency: FrequencyTTM, ReferenceDate: MakeDate(2023, 9, 30), PublishDate: StampOf(at(0, 0, 0)), Value: 0.30},
			{CompanyID: Intern(petroID), Indicator: 0, Frequency: FrequencyTTM, ReferenceDate: MakeDate(2023, 6, 30), PublishDate: StampOf(at(1, 0, 0)), Value: 0.25}, // re-filed later
			{CompanyID: Intern(petroID), Indicator: 0, Frequency: FrequencyAnnual, ReferenceDate: MakeDate(2023, 12, 31), PublishDate: StampOf(at(2, 0, 0)), Value: 0.40},
			{CompanyID: Intern(petroID), Indicator: 1, Class: ShareClassPS, Ticker: Intern("PETR4"), Frequency: FrequencyTTM, ReferenceDate: d(4), PublishDate: StampOf(at(4, 0, 0)), Value: 0.08},
			{CompanyID: Intern(petroID), Indicator: 1, Class: ShareClassCS, Ticker: Intern("PETR3"), Frequency: FrequencyTTM, ReferenceDate: d(4), PublishDate: StampOf(at(4, 0, 0)), Value: 0.07},
			{CompanyID: Intern(petroID), Indicator: 3, Frequency: FrequencyAnnual, ReferenceDate: MakeDate(2022, 12, 31), PublishDate: StampOf(at(0, 0, 0)), Value: 0.1},
			{CompanyID: Intern(petroID), Indicator: 3, Frequency: FrequencyAnnual, ReferenceDate: MakeDate(2023, 12, 31), PublishDate: StampOf(at(0, 0, 0)), Value: 0.2},
			{CompanyID: Intern(valeID), Indicator: 0, Frequency: FrequencyAnnual, ReferenceDate: MakeDate(2023, 12, 31), PublishDate: StampOf(at(0, 0, 0)), Value: Null},
		},
		FundRatios: []FundRatioPoint{
			{FundID: Intern(fundID), Indicator: 2, Frequency: FrequencyMonthly, ReferenceDate: MakeDate(2023, 12, 1), PublishDate: StampOf(at(0, 0, 0)), Value: 1.07},
			{FundID: Intern(fundID), Indicator: 2, Frequency: FrequencyMonthly, ReferenceDate: MakeDate(2023, 11, 1), PublishDate: StampOf(at(0, 0, 0)), Value: 1.05},
		},
	}
	return u
}

func mustBuild(tb testing.TB, u *Universe) *Dataset {
	tb.Helper()
	ds, err := Build(u)
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}
