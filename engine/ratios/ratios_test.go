package ratios

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

var nan = math.NaN()

type want struct {
	company, kind, id, class, freq, ref string
	values                              []float64 // one per publication state, in publish order
}

func fund(id, freq, ref string, v ...float64) want {
	return want{"C1", engine.IndFundamental, id, "", freq, ref, v}
}

func TestDeriveHandComputed(t *testing.T) {
	d := mustDerive(t, fixture())
	const (
		Q, A, TTM, YTD = engine.FreqQuarterly, engine.FreqAnnual, engine.FreqTTM, engine.FreqYTD
		mar23, sep23   = "2023-03-31", "2023-09-30"
		dec23, mar24   = "2023-12-31", "2024-03-31"
		last           = "2024-06-28"
	)
	val := func(id, class, freq, ref string, v ...float64) want {
		return want{"C1", engine.IndValuation, id, class, freq, ref, v}
	}
	cases := []want{
		// First quarter of 2023, every fundamental formula.
		fund("GROSS_MARGIN", Q, mar23, 40.0/100),
		fund("EBIT_MARGIN", Q, mar23, 20.0/100),
		fund("EBITDA_MARGIN", Q, mar23, 24.0/100),
		fund("NET_MARGIN", Q, mar23, 10.0/100),
		fund("RETURN_ON_EQUITY", Q, mar23, 10.0/500),
		fund("RETURN_ON_ASSETS", Q, mar23, 10.0/1000),
		fund("RETURN_ON_INVESTED_CAPITAL", Q, mar23, 15.0/740),
		fund("NET_DEBT", Q, mar23, 160),
		fund("NET_DEBT_TO_EBITDA", Q, mar23, 160.0/24),
		fund("NET_DEBT_TO_EQUITY", Q, mar23, 160.0/500),
		fund("GROSS_DEBT_TO_EQUITY", Q, mar23, 240.0/500),
		fund("CURRENT_RATIO", Q, mar23, 2),
		fund("QUICK_RATIO", Q, mar23, 240.0/150),
		fund("CASH_RATIO", Q, mar23, 80.0/150),
		fund("INTEREST_COVERAGE", Q, mar23, 4),
		fund("ASSET_TURNOVER", Q, mar23, 0.1),
		fund("PAYOUT", Q, mar23, 0.3),
		fund("REVENUE_GROWTH", Q, mar23, nan),
		fund("NET_INCOME_GROWTH", Q, mar23, nan),
		fund("EBITDA", Q, mar23, 24),
		fund("NET_REVENUE", Q, mar23, 100),
		fund("NET_INCOME", Q, mar23, 10),
		{"C1", engine.IndFundamental, "EARNINGS_PER_SHARE", "CS", Q, mar23, []float64{10.0 / 1000}},
		{"C1", engine.IndFundamental, "EARNINGS_PER_SHARE", "PS", Q, mar23, []float64{10.0 / 1000}},
		{"C1", engine.IndFundamental, "EARNINGS_PER_SHARE", "UNIT", Q, mar23, []float64{30.0 / 1000}},
		{"C1", engine.IndFundamental, "BOOK_VALUE_PER_SHARE", "UNIT", Q, mar23, []float64{1500.0 / 1000}},
		// Treasury shares leave the count in 2024.
		{"C1", engine.IndFundamental, "BOOK_VALUE_PER_SHARE", "CS", Q, mar24, []float64{560.0 / 900}},

		// Re-filed third quarter: two publication states.
		fund("NET_REVENUE", Q, sep23, 120, 125),
		fund("NET_INCOME", Q, sep23, 14, 15),
		// Fourth quarter = annual - (Q1+Q2+Q3), before and after the re-filing.
		fund("NET_REVENUE", Q, dec23, 150, 145),
		fund("NET_INCOME", Q, dec23, 14, 13),
		fund("GROSS_MARGIN", Q, dec23, 64.0/150, 59.0/145),
		fund("EBITDA", Q, dec23, 36, 36),
		fund("RETURN_ON_EQUITY", Q, dec23, 14.0/540, 13.0/540),
		// YTD sums the fiscal year's quarters; at the year end it is the DFP.
		fund("NET_REVENUE", YTD, sep23, 330, 335),
		fund("NET_REVENUE", YTD, dec23, 480),
		fund("NET_REVENUE", YTD, mar24, 130),
		// TTM sums the last four quarters; at the year end it is the DFP.
		fund("NET_REVENUE", TTM, sep23, nan, nan),
		fund("NET_REVENUE", TTM, dec23, 480),
		fund("NET_REVENUE", TTM, mar24, 510),
		fund("NET_INCOME", TTM, mar24, 56),
		fund("EBITDA", TTM, mar24, 124),
		fund("RETURN_ON_EQUITY", TTM, mar24, 56.0/560),
		fund("NET_DEBT", TTM, mar24, 124),
		fund("NET_REVENUE", A, dec23, 480),
		fund("RETURN_ON_EQUITY", A, dec23, 50.0/540),
		// Growth against the same frequency a year earlier.
		fund("REVENUE_GROWTH", Q, mar24, 0.3),
		fund("NET_INCOME_GROWTH", Q, mar24, 0.6),
		fund("REVENUE_GROWTH", TTM, mar24, nan),

		// Valuation at the first quarter of 2024 (closes of 2024-03-28,
		// 900 shares net of treasury, TTM net income 56, revenue 510).
		val("PRICE_TO_EARNINGS", "CS", TTM, mar24, 14*900/56.0),
		val("PRICE_TO_EARNINGS", "PS", TTM, mar24, 13*900/56.0),
		val("PRICE_TO_EARNINGS", "UNIT", TTM, mar24, 38/(56.0/900*3)),
		val("PRICE_TO_BOOK", "CS", TTM, mar24, 14/(560.0/900)),
		val("PRICE_TO_SALES", "PS", TTM, mar24, 13/(510.0/900)),
		val("PRICE_TO_EBITDA", "CS", TTM, mar24, 14/(124.0/900)),
		val("PRICE_TO_EBIT", "CS", TTM, mar24, 14/(102.0/900)),
		val("EARNINGS_YIELD", "CS", TTM, mar24, (56.0/900)/14),
		val("DIVIDEND_YIELD", "PS", TTM, mar24, (0.6/2+0.3)/13),
		val("DIVIDEND_YIELD", "CS", TTM, mar24, 0.2/14),
		val("DIVIDEND_YIELD", "UNIT", TTM, mar24, 0),
		val("MARKET_CAP", "", TTM, mar24, 540*14+360*13),
		val("ENTERPRISE_VALUE", "", TTM, mar24, 12240+124),
		val("EV_TO_EBITDA", "", TTM, mar24, 12364.0/124),
		val("EV_TO_EBIT", "", TTM, mar24, 12364.0/102),
		val("EV_TO_SALES", "", TTM, mar24, 12364.0/510),
		// Annual valuation at the 2023 year end (closes of 2023-12-29).
		val("PRICE_TO_EARNINGS", "CS", A, dec23, 13/(50.0/1000)),
		val("MARKET_CAP", "", A, dec23, 600*13+400*12),
		// The first quarter of 2023: the CS close comes from the old ticker.
		val("MARKET_CAP", "", TTM, mar23, 600*10+400*9),
		val("PRICE_TO_EARNINGS", "CS", TTM, mar23, nan),
		// The last session of the data.
		val("PRICE_TO_EARNINGS", "CS", TTM, last, 15*900/56.0),
		val("PRICE_TO_EARNINGS", "UNIT", TTM, last, 40/(56.0/900*3)),
		val("MARKET_CAP", "", TTM, last, 540*15+360*14),
		val("DIVIDEND_YIELD", "PS", TTM, last, 0.3/14),

		// C2: individual statements only; zero equity, revenue and current
		// liabilities give nulls.
		{"C2", engine.IndFundamental, "RETURN_ON_EQUITY", "", A, dec23, []float64{nan}},
		{"C2", engine.IndFundamental, "NET_MARGIN", "", A, dec23, []float64{nan}},
		{"C2", engine.IndFundamental, "GROSS_MARGIN", "", A, dec23, []float64{nan}},
		{"C2", engine.IndFundamental, "CURRENT_RATIO", "", A, dec23, []float64{nan}},
		{"C2", engine.IndFundamental, "NET_DEBT_TO_EQUITY", "", A, dec23, []float64{nan}},
		{"C2", engine.IndFundamental, "RETURN_ON_ASSETS", "", A, dec23, []float64{0.07}},
		{"C2", engine.IndFundamental, "NET_DEBT", "", A, dec23, []float64{10}},
		{"C2", engine.IndFundamental, "EARNINGS_PER_SHARE", "CS", A, dec23, []float64{0.7}},
		{"C2", engine.IndFundamental, "NET_REVENUE", "", Q, dec23, []float64{nan}},
		{"C2", engine.IndValuation, "PRICE_TO_EARNINGS", "CS", A, dec23, []float64{nan}},
		{"C2", engine.IndValuation, "PRICE_TO_EARNINGS", "CS", TTM, last, []float64{5 / 0.7}},
	}
	for i := 1; i < len(d.Ratios); i++ {
		if engine.CompareRatioPoints(&d.Ratios[i-1], &d.Ratios[i]) > 0 {
			t.Fatalf("Derive's points %d and %d are out of CompareRatioPoints order", i-1, i)
		}
	}
	for i := 1; i < len(d.FundRatios); i++ {
		if engine.CompareFundRatioPoints(&d.FundRatios[i-1], &d.FundRatios[i]) > 0 {
			t.Fatalf("Derive's fund points %d and %d are out of order", i-1, i)
		}
	}
	for _, c := range cases {
		name := c.company + "/" + c.id + engine.ClassSuffix(c.class) + "/" + c.freq + "/" + c.ref
		t.Run(name, func(t *testing.T) {
			ps := pointsOf(t, d, c.company, c.kind, c.id, c.class, c.freq, c.ref)
			if len(ps) != len(c.values) {
				t.Fatalf("%d points, want %d: %+v", len(ps), len(c.values), ps)
			}
			for i, p := range ps {
				if !close12(float64(p.Value), c.values[i]) {
					t.Errorf("point %d = %v, want %v", i, p.Value, c.values[i])
				}
				if math.IsInf(float64(p.Value), 0) {
					t.Errorf("point %d is infinite", i)
				}
				if len(d.Vars(&p)) != len(d.Catalog[p.Indicator].Variables) {
					t.Errorf("point %d has %d vars, catalog %d", i, len(d.Vars(&p)), len(d.Catalog[p.Indicator].Variables))
				}
			}
		})
	}
}

func TestRefiledVersionAddsPoint(t *testing.T) {
	d := mustDerive(t, fixture())
	ps := pointsOf(t, d, "C1", engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2023-09-30")
	if len(ps) != 2 {
		t.Fatalf("got %d points", len(ps))
	}
	if !ps[0].PublishDate.Time().Equal(q3.pub) || !ps[1].PublishDate.Time().Equal(q3v2.pub) {
		t.Errorf("publish dates %v %v, want %v %v", ps[0].PublishDate, ps[1].PublishDate, q3.pub, q3v2.pub)
	}
	if !ps[1].RetrievalDate.Time().Equal(q3v2.pub.Add(time.Hour)) {
		t.Errorf("retrieval %v", ps[1].RetrievalDate)
	}
	// The fourth quarter is recomputed when the third is re-filed.
	q4 := pointsOf(t, d, "C1", engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2023-12-31")
	if len(q4) != 2 || !q4[0].PublishDate.Time().Equal(fy23.pub) || !q4[1].PublishDate.Time().Equal(q3v2.pub) {
		t.Fatalf("Q4 points %+v", q4)
	}
	// The annual figures do not depend on the quarter: one point.
	if a := pointsOf(t, d, "C1", engine.IndFundamental, "NET_REVENUE", "", engine.FreqAnnual, "2023-12-31"); len(a) != 1 {
		t.Fatalf("annual points %+v", a)
	}
	// Balance-only indicators at the quarter follow the quarter's states.
	if b := pointsOf(t, d, "C1", engine.IndFundamental, "NET_DEBT", "", engine.FreqQuarterly, "2023-09-30"); len(b) != 2 {
		t.Fatalf("balance points %+v", b)
	}
	// Valuation from reports keeps the newest input's publish date.
	pe := pointsOf(t, d, "C1", engine.IndValuation, "PRICE_TO_EARNINGS", "CS", engine.FreqTTM, "2024-06-28")
	if len(pe) != 1 || !pe[0].PublishDate.Time().Equal(q124.pub) {
		t.Fatalf("last-session P/E %+v", pe)
	}
	// Report-independent points are published on their reference date.
	mc := pointsOf(t, d, "C1", engine.IndValuation, "MARKET_CAP", "", engine.FreqTTM, "2024-06-28")
	if len(mc) != 1 || !mc[0].PublishDate.Time().Equal(day("2024-06-28").Time()) {
		t.Fatalf("last-session market cap %+v", mc)
	}
}

func TestVarsInCatalogOrder(t *testing.T) {
	d := mustDerive(t, fixture())
	ps := pointsOf(t, d, "C1", engine.IndValuation, "PRICE_TO_EARNINGS", "UNIT", engine.FreqTTM, "2024-03-31")
	if len(ps) != 1 {
		t.Fatal(len(ps))
	}
	want := []float64{38, 56, 900, 3} // PRICE, NET_INCOME, SHARES_OUTSTANDING, SHARE_FACTOR
	for i, w := range want {
		if !close12(float64(d.Vars(&ps[0])[i]), w) {
			t.Errorf("var %s = %v, want %v", d.Catalog[ps[0].Indicator].Variables[i], d.Vars(&ps[0])[i], w)
		}
	}
	if ps[0].Ticker.String() != "CAAA11" {
		t.Errorf("ticker %q", ps[0].Ticker)
	}
	// A missing input is Null in Vars.
	g := pointsOf(t, d, "C1", engine.IndFundamental, "REVENUE_GROWTH", "", engine.FreqQuarterly, "2023-03-31")
	if len(g) != 1 || d.Vars(&g[0])[0] != 100 || d.Vars(&g[0])[1].Valid() {
		t.Errorf("growth vars %+v", g)
	}
	// The most liquid preferred ticker is priced.
	pe := pointsOf(t, d, "C1", engine.IndValuation, "PRICE_TO_EARNINGS", "PS", engine.FreqTTM, "2024-03-31")
	if len(pe) != 1 || pe[0].Ticker.String() != "CAAA4" {
		t.Errorf("PS points %+v", pe)
	}
}

func TestOutputSortedAndClean(t *testing.T) {
	d := mustDerive(t, fixture())
	if len(d.Ratios) == 0 || len(d.FundRatios) == 0 {
		t.Fatal("no points")
	}
	for i := 1; i < len(d.Ratios); i++ {
		a, b := &d.Ratios[i-1], &d.Ratios[i]
		c := strings.Compare(a.CompanyID.String(), b.CompanyID.String())
		if c == 0 {
			c = int(a.Indicator) - int(b.Indicator)
		}
		if c == 0 {
			c = strings.Compare(a.Class.String(), b.Class.String())
		}
		if c == 0 {
			c = strings.Compare(a.Frequency.String(), b.Frequency.String())
		}
		if c == 0 {
			c = int(a.ReferenceDate) - int(b.ReferenceDate)
		}
		if c == 0 {
			c = a.PublishDate.Compare(b.PublishDate)
		}
		if c >= 0 {
			t.Fatalf("points %d and %d out of order or duplicated: %+v %+v", i-1, i, *a, *b)
		}
	}
	for _, p := range d.Ratios {
		if math.IsInf(float64(p.Value), 0) {
			t.Fatalf("infinite value %+v", p)
		}
		ind := d.Catalog[p.Indicator]
		if !slices.Contains(ind.Frequencies, p.Frequency.String()) {
			t.Fatalf("%s has frequency %s", ind.ID, p.Frequency)
		}
		if ind.ByClass != (p.Class != engine.ShareClassNone) {
			t.Fatalf("%s class %q", ind.ID, p.Class)
		}
	}
}

func TestDeriveDeterministic(t *testing.T) {
	a, b := mustDerive(t, fixture()), mustDerive(t, fixture())
	if len(a.Ratios) != len(b.Ratios) || len(a.FundRatios) != len(b.FundRatios) {
		t.Fatal("lengths differ")
	}
	same := func(x, y engine.Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	for i := range a.Ratios {
		p, q := a.Ratios[i], b.Ratios[i]
		if p.CompanyID != q.CompanyID || p.Indicator != q.Indicator || p.Class != q.Class || p.Ticker != q.Ticker ||
			p.Frequency != q.Frequency || p.ReferenceDate != q.ReferenceDate || p.PublishDate != q.PublishDate ||
			p.RetrievalDate != q.RetrievalDate || !same(p.Value, q.Value) || len(a.Vars(&p)) != len(b.Vars(&q)) {
			t.Fatalf("point %d differs", i)
		}
		for k, v := range a.Vars(&p) {
			if !same(v, b.Vars(&q)[k]) {
				t.Fatalf("point %d var %d differs", i, k)
			}
		}
	}
}

func TestFundRatios(t *testing.T) {
	d := mustDerive(t, fixture())
	get := func(id, ref string) []engine.FundRatioPoint {
		ix, ok := Lookup(engine.IndFund, id)
		if !ok {
			t.Fatalf("no fund indicator %s", id)
		}
		var out []engine.FundRatioPoint
		for _, p := range d.FundRatios {
			if p.Indicator == ix && p.ReferenceDate.String() == ref {
				out = append(out, p)
			}
		}
		return out
	}
	// May 2024: the last session of the month closed at 97.
	pn := get("P_NAV", "2024-05-01")
	if len(pn) != 2 || !close12(float64(pn[0].Value), 97.0/100) || !close12(float64(pn[1].Value), 1) {
		t.Fatalf("P_NAV %+v", pn)
	}
	if !pn[1].PublishDate.Time().Equal(at("2024-06-20")) || pn[1].Frequency != engine.FrequencyMonthly || pn[1].FundID.String() != "F1" {
		t.Errorf("P_NAV point %+v", pn[1])
	}
	// April 2024: no session in the month.
	if p := get("P_NAV", "2024-04-01"); len(p) != 1 || p[0].Value.Valid() {
		t.Errorf("April P_NAV %+v", p)
	}
	if p := get("DIVIDEND_YIELD", "2024-04-01"); len(p) != 1 || p[0].Value.Valid() {
		t.Errorf("April yield %+v", p)
	}
	for id, v := range map[string]float64{"DIVIDEND_YIELD": 0.008, "NAV_PER_SHARE": 100, "NET_ASSETS": 1e6, "INVESTORS": 321,
		"SHARES_OUTSTANDING": 1e4, "MONTHLY_RETURN": 0.012} {
		if p := get(id, "2024-05-01"); len(p) != 2 || !close12(float64(p[0].Value), v) {
			t.Errorf("%s %+v", id, p)
		}
	}
	for i := 1; i < len(d.FundRatios); i++ {
		a, b := d.FundRatios[i-1], d.FundRatios[i]
		if a.FundID == b.FundID && a.Indicator == b.Indicator && a.ReferenceDate > b.ReferenceDate {
			t.Fatalf("fund points out of order at %d", i)
		}
	}
}

func TestDeriveErrors(t *testing.T) {
	u := fixture()
	u.Reports[0].ReferenceDate, u.Reports[0].EndDate = engine.NoDate, engine.NoDate
	if _, err := Derive(u); err == nil || !strings.Contains(err.Error(), "C1") {
		t.Errorf("missing reference date: %v", err)
	}
	u = fixture()
	u.Reports[0].Form = engine.MustLabel("XYZ")
	if _, err := Derive(u); err == nil || !strings.Contains(err.Error(), "XYZ") {
		t.Errorf("bad form: %v", err)
	}
	// An empty universe is fine.
	d := mustDerive(t, &engine.Universe{})
	if len(d.Ratios) != 0 || len(d.FundRatios) != 0 || len(d.Catalog) == 0 {
		t.Errorf("empty universe: %+v", d)
	}
}

func TestDAFallbackFromDFC(t *testing.T) {
	f := fig{form: "DFP", ref: day("2023-12-31"), start: day("2023-01-01"), pub: at("2024-03-01"), ver: 1,
		rev: 100, ebit: 10, ni: 5, assets: 10, eq: 5}
	rs := f.reports("X", engine.AggConsolidated)[:1] // DRE only
	rs = append(rs, engine.Report{CompanyID: "X", Statement: engine.LabelDFCMI, Aggregation: engine.LabelConsolidated, Form: engine.LabelDFP,
		ReferenceDate: f.ref, StartDate: f.start, EndDate: f.ref, PublishDate: engine.StampOf(f.pub), Version: 1,
		Accounts: []engine.Account{
			engine.NewAccount("6.01", "Caixa Líquido Atividades Operacionais", false, 30),
			engine.NewAccount("6.01.01", "Caixa Gerado nas Operações", false, 25),
			engine.NewAccount("6.01.01.01", "Lucro Líquido do Exercício", false, 5),
			engine.NewAccount("6.01.01.02", "Depreciação e Amortização", false, 3),
			engine.NewAccount("6.01.01.03", "Amortização de Direito de Uso", false, 1),
			engine.NewAccount("6.01.01.04", "Provisões", false, 9),
		}})
	u := &engine.Universe{Companies: []engine.Company{{ID: "X"}}, Reports: rs}
	d := mustDerive(t, u)
	ps := pointsOf(t, d, "X", engine.IndFundamental, "EBITDA", "", engine.FreqAnnual, "2023-12-31")
	if len(ps) != 1 || ps[0].Value != 14 {
		t.Fatalf("EBITDA %+v", ps)
	}
}

func TestCatalog(t *testing.T) {
	c := Catalog()
	if len(c) > math.MaxUint16 {
		t.Fatal("catalog too large for uint16 indexes")
	}
	seen := map[string]bool{}
	for i, ind := range c {
		key := ind.Kind + "/" + ind.ID
		if seen[key] {
			t.Errorf("duplicate %s", key)
		}
		seen[key] = true
		if ind.Name == "" || ind.Formula == "" || len(ind.Variables) == 0 || len(ind.Frequencies) == 0 {
			t.Errorf("incomplete %+v", ind)
		}
		switch ind.Format {
		case FormatPercentage, FormatMultiple, FormatBRL, FormatScore, FormatNumber:
		default:
			t.Errorf("%s format %q", ind.ID, ind.Format)
		}
		if ix, ok := Lookup(ind.Kind, strings.ToLower(ind.ID)); !ok || int(ix) != i {
			t.Errorf("Lookup(%s) = %d %v", key, ix, ok)
		}
		if base, class := engine.SplitClassSuffix(ind.ID); base != ind.ID || class != "" {
			t.Errorf("id %s looks suffixed", ind.ID)
		}
	}
	for _, id := range []string{"GROSS_MARGIN", "EBIT_MARGIN", "EBITDA_MARGIN", "NET_MARGIN", "RETURN_ON_EQUITY",
		"RETURN_ON_ASSETS", "RETURN_ON_INVESTED_CAPITAL", "NET_DEBT", "NET_DEBT_TO_EBITDA", "NET_DEBT_TO_EQUITY",
		"GROSS_DEBT_TO_EQUITY", "CURRENT_RATIO", "QUICK_RATIO", "CASH_RATIO", "INTEREST_COVERAGE", "ASSET_TURNOVER",
		"PAYOUT", "REVENUE_GROWTH", "NET_INCOME_GROWTH", "EBITDA", "NET_REVENUE", "NET_INCOME",
		"EARNINGS_PER_SHARE", "BOOK_VALUE_PER_SHARE"} {
		if !seen[engine.IndFundamental+"/"+id] {
			t.Errorf("missing fundamental %s", id)
		}
	}
	for _, id := range []string{"PRICE_TO_EARNINGS", "PRICE_TO_BOOK", "PRICE_TO_SALES", "PRICE_TO_EBITDA", "PRICE_TO_EBIT",
		"EV_TO_EBITDA", "EV_TO_EBIT", "EV_TO_SALES", "DIVIDEND_YIELD", "EARNINGS_YIELD", "MARKET_CAP", "ENTERPRISE_VALUE"} {
		if !seen[engine.IndValuation+"/"+id] {
			t.Errorf("missing valuation %s", id)
		}
	}
	for _, id := range []string{"P_NAV", "DIVIDEND_YIELD", "NAV_PER_SHARE", "NET_ASSETS", "INVESTORS", "SHARES_OUTSTANDING", "MONTHLY_RETURN"} {
		if !seen[engine.IndFund+"/"+id] {
			t.Errorf("missing fund %s", id)
		}
	}
	// Catalog returns a copy.
	c[0].ID = "CHANGED"
	if Catalog()[0].ID == "CHANGED" {
		t.Error("Catalog shares its slice")
	}
	if _, ok := Lookup(engine.IndValuation, "NOPE"); ok {
		t.Error("Lookup found NOPE")
	}
}

func TestYearAgoRefiling(t *testing.T) {
	a := fig{form: "ITR", ref: day("2023-03-31"), start: day("2023-01-01"), pub: at("2023-05-10"), ver: 1, rev: 100, ni: 10, eq: 50}
	b := fig{form: "ITR", ref: day("2024-03-31"), start: day("2024-01-01"), pub: at("2024-05-10"), ver: 1, rev: 150, ni: 12, eq: 60}
	a2 := a
	a2.ver, a2.pub, a2.rev = 2, at("2024-06-01"), 120 // re-filed after b
	u := &engine.Universe{Companies: []engine.Company{{ID: "G"}}}
	for _, f := range []fig{a, b, a2} {
		u.Reports = append(u.Reports, f.reports("G", engine.AggConsolidated)...)
	}
	// Prices end before the 2024 quarter: the last-session point comes
	// before it in time, and the output must still be ordered.
	u.Securities = []engine.Security{{Ticker: "GGGG3", CompanyID: "G", StockType: engine.ClassCS, UnitFactor: engine.Null}}
	u.Daily = []engine.Series{series("GGGG3", []string{"2023-03-31", "2023-08-01"}, []float64{7, 8})}
	u.Shares = []engine.SharesPoint{{CompanyID: "G", Date: day("2020-01-01"), Common: 10}}
	d := mustDerive(t, u)
	g := pointsOf(t, d, "G", engine.IndFundamental, "REVENUE_GROWTH", "", engine.FreqQuarterly, "2024-03-31")
	if len(g) != 2 || !close12(float64(g[0].Value), 0.5) || !close12(float64(g[1].Value), 0.25) ||
		!g[0].PublishDate.Time().Equal(b.pub) || !g[1].PublishDate.Time().Equal(a2.pub) {
		t.Fatalf("growth points %+v", g)
	}
	// Indicators of the current period only do not move.
	if r := pointsOf(t, d, "G", engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2024-03-31"); len(r) != 1 {
		t.Fatalf("revenue points %+v", r)
	}
	if r := pointsOf(t, d, "G", engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2023-03-31"); len(r) != 2 {
		t.Fatalf("re-filed quarter points %+v", r)
	}
	// The last-session valuation uses the newest quarter on or before it.
	pe := pointsOf(t, d, "G", engine.IndValuation, "MARKET_CAP", "", engine.FreqTTM, "2023-08-01")
	if len(pe) != 1 || pe[0].Value != 80 {
		t.Fatalf("last-session market cap %+v", pe)
	}
	for i := 1; i < len(d.Ratios); i++ {
		p, q := d.Ratios[i-1], d.Ratios[i]
		if p.Indicator == q.Indicator && p.Class == q.Class && p.Frequency == q.Frequency && p.ReferenceDate > q.ReferenceDate {
			t.Fatalf("out of order: %+v then %+v", p, q)
		}
	}
}

// TestClassOfRenamedTicker: a former ticker's security (CAAO3, renamed
// CAAA3, here ranked more liquid) never prices its class: the class's
// points carry the current ticker, priced from the joined history and
// counting the cash recorded under both tickers, as Build joins them
// into one asset.
func TestClassOfRenamedTicker(t *testing.T) {
	u := fixture()
	u.Securities = append(u.Securities, engine.Security{Ticker: "CAAO3", CompanyID: "C1", StockType: engine.ClassCS,
		UnitFactor: engine.Null, LiquidityRank: 1, ListedTo: day("2023-05-31")})
	u.CashActions = append(u.CashActions, engine.CashAction{ID: "n1", EventID: "n1", Version: 1, CompanyID: engine.Intern("C1"), Ticker: engine.Intern("CAAA3"),
		StockType: engine.MustLabel(engine.ClassCS), PriorExDate: day("2023-11-02"), Name: engine.MustLabel("DIVIDEND"), DeclaredValue: 0.1})
	d := mustDerive(t, u)
	ps := pointsOf(t, d, "C1", engine.IndValuation, "DIVIDEND_YIELD", "CS", engine.FreqTTM, "2024-03-31")
	if len(ps) != 1 {
		t.Fatalf("%d points, want 1", len(ps))
	}
	if tk := ps[0].Ticker.String(); tk != "CAAA3" || !close12(float64(ps[0].Value), 0.3/14) {
		t.Errorf("DIVIDEND_YIELD_CS: ticker %s value %v, want CAAA3 %v (cash 0.2 as CAAO3 + 0.1 as CAAA3, close 14)", tk, ps[0].Value, 0.3/14)
	}
}

// TestCashSameVersionDerived: of two rows of one event with one version
// number, the dividend yield counts the later published one (as Build's
// CashEvent.Current), whatever their ids and order.
func TestCashSameVersionDerived(t *testing.T) {
	for _, later := range []string{"j1a", "j1b"} {
		u := fixture()
		j := u.CashActions[2] // j1, 0.3 PS, prior_ex 2024-02-10
		u.CashActions = slices.Delete(u.CashActions, 2, 3)
		a, b := j, j
		a.ID, a.PublishDate, a.DeclaredValue = "j1a", engine.StampOf(at("2024-01-10")), 0.3
		b.ID, b.PublishDate, b.DeclaredValue = "j1b", engine.StampOf(at("2024-01-10")), 0.5
		want := 0.5
		if later == "j1a" {
			a.PublishDate = engine.StampOf(at("2024-01-20"))
			want = 0.3
		} else {
			b.PublishDate = engine.StampOf(at("2024-01-20"))
		}
		u.CashActions = append(u.CashActions, b, a)
		d := mustDerive(t, u)
		ps := pointsOf(t, d, "C1", engine.IndValuation, "DIVIDEND_YIELD", "PS", engine.FreqTTM, "2024-03-31")
		if len(ps) != 1 || !close12(float64(ps[0].Value), (0.6/2+want)/13) {
			t.Errorf("%s published later: %+v, want %v", later, ps, (0.6/2+want)/13)
		}
	}
}

// TestLastSessionNotMacro: the valuation at the last session is priced
// at B3's last session, never at a macro series' later date (the IPCA is
// dated the 1st of its month, a Sunday as well), which no session held.
func TestLastSessionNotMacro(t *testing.T) {
	u := fixture()
	u.Securities = append(u.Securities, engine.Security{Ticker: "IPCA", StockType: engine.ClassMacro, Currency: "BRL", UnitFactor: engine.Null})
	sunday := engine.MakeDate(2024, 6, 30)
	u.Daily = append(u.Daily, engine.Series{Ticker: "IPCA", Dates: []engine.Date{sunday}, Open: []engine.Num{0.2}, High: []engine.Num{0.2},
		Low: []engine.Num{0.2}, Close: []engine.Num{0.2}, Volume: []engine.Num{engine.Null}, Quantity: []int64{0}, Trades: []int64{0}})
	d := mustDerive(t, u)
	if ps := pointsOf(t, d, "C1", engine.IndValuation, "MARKET_CAP", "", engine.FreqTTM, "2024-06-28"); len(ps) != 1 {
		t.Errorf("MARKET_CAP at the last session 2024-06-28: %d points, want 1", len(ps))
	}
	for _, p := range d.Ratios {
		if p.ReferenceDate == sunday {
			t.Fatalf("a point is dated %v, the IPCA's date: %+v", sunday, p)
		}
	}
}

// TestFundRatioSources: a fund point's sources are its report's, one
// list per report in Derived.FundSources however many indicators cite
// it, and a report without sources gives points without.
func TestFundRatioSources(t *testing.T) {
	u := fixture()
	src := []engine.Source{{VisualizationURL: engine.URLOf("https://example.com/v2"), Name: "CVM inf_mensal"}}
	for i := range u.FundReports {
		if r := &u.FundReports[i]; r.Version == 2 {
			r.Sources = src
		}
	}
	d := mustDerive(t, u)
	with := 0
	for i := range d.FundRatios {
		p := &d.FundRatios[i]
		got := d.FundSourcesOf(p)
		if p.PublishDate.Time().Equal(at("2024-06-20")) {
			with++
			if len(got) != 1 || got[0] != src[0] {
				t.Errorf("point %d: sources %+v", i, got)
			}
		} else if got != nil || p.Sources != 0 {
			t.Errorf("point %d: sources %d %+v, want none", i, p.Sources, got)
		}
	}
	if with == 0 || len(d.FundSources) != 1 {
		t.Errorf("%d points with sources, %d lists; want some and 1", with, len(d.FundSources))
	}
}
