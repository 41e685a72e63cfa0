package b3

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

const (
	fileIbov21  = "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst"
	fileIbov24  = "b3-indexes/ManoelAugustoOliveira__proppaga/IBOVDia_30-12-24.csv.zst"
	fileSmll    = "b3-indexes/igor64BR__calculadora-b3-ativos/SMLLDia_02-07-25.csv.zst"
	fileTheo    = "b3-indexes/ropensci__rb3/GetTheoricalPortfolio.json.zst"
	fileStock   = "b3-indexes/ropensci__rb3/GetStockIndex.json.zst"
	fileStock21 = "b3-indexes/wilsonfreitas__brasa/StockIndexInfo_2021-09-06.json.zst"
	fileCash    = "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst"
	fileSupp    = "b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst"
	fileDetails = "b3-proventos/ropensci__rb3/GetDetailsCompany.json.zst"
	fileETF     = "b3-listings/wilsonfreitas__brasa/etfs-listados-20231014.csv.zst"
	fileETFBDR  = "b3-listings/FabianoManetti__OtimizacaoPortfolio/etf_bdr.csv.zst"
	fileFII     = "b3-listings/FabianoManetti__OtimizacaoPortfolio/fundosListados.csv.zst"
)

func readReal(tb testing.TB, rel string) []byte {
	tb.Helper()
	p, err := datafile.RealPath(rel)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := datafile.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func near(a engine.Num, b float64) bool {
	return math.Abs(float64(a)-b) <= 1e-9*math.Max(1, math.Abs(b))
}

func day(y, m, d int) engine.Date { return engine.MakeDate(y, time.Month(m), d) }

func TestParseNum(t *testing.T) {
	for in, want := range map[string]float64{
		"3,137": 3.137, "4.355.174.839": 4355174839, "18.673.489,42022432": 18673489.42022432,
		"18.296.80337677573": 18296803.37677573, "100,000": 100, "0,1334": 0.1334, "0.5": 0.5, "16": 16,
		"-1,5": -1.5, " 1.234 ": 1234, "58.130.517.165,22": 58130517165.22, ",5": 0.5,
	} {
		got, err := ParseNum(in)
		if err != nil || !near(got, want) {
			t.Errorf("ParseNum(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if v, err := ParseNum(""); err != nil || v.Valid() {
		t.Errorf("empty: %v %v", v, err)
	}
	for _, in := range []string{"1,2,3", "abc", "1.2.3", "12.34,5", "1,2.3", "-", ".", "1e5", "NaN", "1..2", "1.2345.678"} {
		if v, err := ParseNum(in); err == nil {
			t.Errorf("ParseNum(%q) = %v, want an error", in, v)
		}
	}
}

func TestParseDate(t *testing.T) {
	for in, want := range map[string]engine.Date{
		"09/12/2021": day(2021, 12, 9), "26/03/21": day(2021, 3, 26), "2022-05-13": day(2022, 5, 13),
		"2021-12-17T00:00:00": day(2021, 12, 17), "06/06/2022 23:05:06": day(2022, 6, 6), "": engine.NoDate,
	} {
		if got, err := ParseDate(in); err != nil || got != want {
			t.Errorf("ParseDate(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"31/02/2021", "2021/12/01", "1/1/2021", "00/01/2021", "aa/bb/cccc", "2021-13-01"} {
		if _, err := ParseDate(in); err == nil {
			t.Errorf("ParseDate(%q): no error", in)
		}
	}
}

// TestIndexCSV checks the portfolio downloads: IBOV on 2021-03-26 (82
// members, ISO-8859-1, title and footer, the reductor without a decimal
// comma), IBOV on 2024-12-30 (87, UTF-8, no title), SMLL on 2025-07-02 (114).
func TestIndexCSV(t *testing.T) {
	for _, c := range []struct {
		rel, symbol string
		asOf        engine.Date
		n           int
		ticker      string
		qty, weight float64
	}{
		{fileIbov21, "IBOV", day(2021, 3, 26), 82, "ABEV3", 4355174839, 0.03137},
		{fileIbov24, "IBOV", day(2024, 12, 30), 87, "ABEV3", 4394835131, 0.02728},
		{fileSmll, "SMLL", day(2025, 7, 2), 114, "TTEN3", 112455686, 0.00503},
	} {
		p, err := ReadIndexCSV(bytes.NewReader(readReal(t, c.rel)), c.rel)
		if err != nil {
			t.Fatal(err)
		}
		if p.Symbol != c.symbol || p.AsOf != c.asOf || len(p.Assets) != c.n {
			t.Errorf("%s: %s %s %d assets", c.rel, p.Symbol, p.AsOf, len(p.Assets))
		}
		var found bool
		for _, a := range p.Assets {
			if a.Ticker == c.ticker {
				found = true
				if !near(a.Qty, c.qty) || !near(a.Weight, c.weight) {
					t.Errorf("%s %s: qty %v weight %v", c.rel, a.Ticker, a.Qty, a.Weight)
				}
			}
		}
		if !found {
			t.Errorf("%s: %s missing", c.rel, c.ticker)
		}
		x := p.Index("")
		if x.Symbol != c.symbol || len(x.Members) != c.n {
			t.Errorf("index %+v", x)
		}
	}
	p, _ := ReadIndexCSV(bytes.NewReader(readReal(t, fileIbov21)), fileIbov21)
	if !near(p.Reductor, 18296803.37677573) || !near(p.TotalQty, 76862590858) {
		t.Errorf("footer: reductor %v total %v", p.Reductor, p.TotalQty)
	}
	if p.Assets[0].Name != "AMBEV S/A" || p.Assets[1].Type != "ON      NM" {
		t.Errorf("first assets %+v", p.Assets[:2])
	}
}

func TestIndexCSVErrors(t *testing.T) {
	head := "Código;Ação;Tipo;Qtde. Teórica;Part. (%)\n"
	for _, c := range []struct{ name, in, want string }{
		{"IBOVDia_26-03-21.csv", "", "no header"},
		{"IBOVDia_26-03-21.csv", "a;b\n", "want a header"},
		{"IBOVDia_26-03-21.csv", head + "ABEV3;AMBEV;ON;1.000;x\n", "IBOVDia_26-03-21.csv:2:5: part"},
		{"IBOVDia_26-03-21.csv", head + "abev3;AMBEV;ON;1.000;100,000\n", ":2:1: bad ticker"},
		{"IBOVDia_26-03-21.csv", head + "ABEV3;AMBEV;ON;1.000;50,000\nABEV3;AMBEV;ON;1.000;50,000\n", ":3:1: duplicate"},
		{"IBOVDia_26-03-21.csv", head + "ABEV3;AMBEV;ON;1.000;50,000\n", "weights add up to 50"},
		{"IBOVDia_26-03-21.csv", head + "ABEV3;AMBEV\n", ":2: want at least 5 fields"},
		{"x.csv", head + "ABEV3;AMBEV;ON;1.000;100,000\n", "symbol unknown"},
	} {
		_, err := ReadIndexCSV(strings.NewReader(c.in), c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// TestPortfolioJSON checks GetTheoricalPortfolio (92 assets, Brazilian
// numbers) and an English GetPortfolioDay response.
func TestPortfolioJSON(t *testing.T) {
	p, err := ReadPortfolioJSON(readReal(t, fileTheo), fileTheo, "IBOV", day(2022, 5, 13))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Assets) != 92 || p.AsOf != day(2022, 5, 13) || p.Assets[0].Ticker != "ABEV3" ||
		!near(p.Assets[0].Qty, 4380195841) || !near(p.Assets[0].Weight, 0.03157) ||
		!near(p.Reductor, 18673489.42022432) || !near(p.TotalQty, 96626612142) {
		t.Errorf("%d assets %+v reductor %v total %v", len(p.Assets), p.Assets[0], p.Reductor, p.TotalQty)
	}
	en := `{"header":{"date":"04/07/25","part":"100.000","reductor":"16,036,751.16744128","theoricalQty":"99,015,750,716"},
	 "results":[{"cod":"WEGE3","asset":"WEG","type":"ON      NM","part":"60.000","theoricalQty":"1,243,177,587"},
	            {"cod":"EMBR3","asset":"EMBRAER","type":"ON      NM","part":"40.000","theoricalQty":"734,631,801"}]}`
	p, err = ReadPortfolioJSON([]byte(en), "day.json", "IBOV", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	// The English answer recorded on 2025-04-07 dates it "04/07/25".
	if p.AsOf != day(2025, 4, 7) || !near(p.Assets[0].Qty, 1243177587) || !near(p.Assets[0].Weight, 0.6) || !near(p.Reductor, 16036751.16744128) {
		t.Errorf("english %+v", p)
	}
	pt := `{"header":{"date":"07/04/25","part":"100,000","reductor":"16.036.751,16744128"},
	 "results":[{"cod":"WEGE3","asset":"WEG","type":"ON      NM","part":"100,000","theoricalQty":"1.243.177.587"}]}`
	if p, err = ReadPortfolioJSON([]byte(pt), "dia.json", "IBOV", engine.NoDate); err != nil || p.AsOf != day(2025, 4, 7) {
		t.Errorf("portuguese date: %v %v", p, err)
	}
	for _, bad := range []string{`{`, `{"results":[{"cod":"x","part":"1"}]}`, `{"results":[]}`, `{"header":{"date":"x"}}`} {
		if _, err := ReadPortfolioJSON([]byte(bad), "b", "IBOV", engine.NoDate); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestStockIndex checks GetStockIndex: 660 assets in 25 indexes, IBOV with
// 92 members and IFIX with 106, as of 2022-05-13.
func TestStockIndex(t *testing.T) {
	s, err := ReadStockIndexJSON(readReal(t, fileStock), fileStock)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Members) != 660 || s.AsOf != day(2022, 5, 13) {
		t.Fatalf("%d members as of %s", len(s.Members), s.AsOf)
	}
	xs := s.Indexes()
	n := map[string]int{}
	for _, x := range xs {
		n[x.Symbol] = len(x.Members)
		if x.AsOf != s.AsOf || x.Members[0].Weight.Valid() {
			t.Errorf("%s: %+v", x.Symbol, x.Members[0])
		}
	}
	if len(xs) != 25 || n["IBOV"] != 92 || n["IFIX"] != 106 || n["SMLL"] != 139 {
		t.Errorf("%d indexes %v", len(xs), n)
	}
	s2, err := ReadStockIndexJSON(readReal(t, fileStock21), fileStock21)
	if err != nil || len(s2.Members) != 612 || s2.AsOf != day(2021, 9, 6) {
		t.Errorf("2021: %v", err)
	}
}

// TestCashDividends checks AMBEV ON's 29 cash events: 14 DIVIDENDO, 15 JRS
// CAP PROPRIO; the JCP approved on 2021-12-09 (last day with 2021-12-17)
// of 0,4702 is net 85%.
func TestCashDividends(t *testing.T) {
	ctx := CashContext{CompanyID: "07526557000100", Symbol: "ABEV", Tickers: map[string]string{engine.ClassCS: "ABEV3"}, ISINs: map[string]string{engine.ClassCS: "BRABEVACNOR1"}}
	cas, st, err := ReadCashDividends(readReal(t, fileCash), fileCash, ctx)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	ids := map[string]bool{}
	for _, c := range cas {
		count[c.Name.String()]++
		if ids[c.ID] || c.Ticker.String() != "ABEV3" || c.StockType.String() != engine.ClassCS || c.CompanyID.String() != ctx.CompanyID || c.Version != 1 {
			t.Errorf("bad action %+v", c)
		}
		ids[c.ID] = true
	}
	if len(cas) != 29 || st.Events != 29 || count[CashDividend] != 14 || count[CashInterest] != 15 {
		t.Fatalf("%d events %v", len(cas), count)
	}
	j := cas[1]
	if j.Name.String() != CashInterest || j.ApprovalDate != day(2021, 12, 9) || j.PriorExDate != day(2021, 12, 17) ||
		!near(j.DeclaredValue, 0.4702) || !near(j.NetValue, 0.4702*0.85) || j.PaymentDate.Valid() || j.ISIN.String() != "BRABEVACNOR1" {
		t.Errorf("JCP %+v", j)
	}
	d := cas[len(cas)-2]
	// The same JCP with a record date in 2026 is net of 17.5 %
	// (engine.InterestWithholding, Lei Complementar 224/2025).
	late := strings.Replace(string(readReal(t, fileCash)), `"JRS CAP PROPRIO","lastDatePriorEx":"17/12/2021"`, `"JRS CAP PROPRIO","lastDatePriorEx":"05/01/2026"`, 1)
	if cas26, _, err := ReadCashDividends([]byte(late), fileCash, ctx); err != nil || cas26[1].PriorExDate != day(2026, 1, 5) || !near(cas26[1].NetValue, 0.4702*0.825) {
		t.Errorf("JCP of 2026: %v %+v", err, cas26[1])
	}
	if d.Name.String() != CashDividend || d.ApprovalDate != day(2014, 1, 6) || d.PriorExDate != day(2014, 1, 14) || !near(d.DeclaredValue, 0.1) || !near(d.NetValue, 0.1) {
		t.Errorf("dividend %+v", d)
	}
	// The supplement has the payment dates of the two latest events.
	sup, err := ReadSupplement(readReal(t, fileSupp), fileSupp)
	if err != nil {
		t.Fatal(err)
	}
	if n := ApplyPaymentDates(cas, sup); n != 2 || cas[0].PaymentDate != day(2021, 12, 30) || cas[1].PaymentDate != day(2021, 12, 30) {
		t.Errorf("payment dates: %d filled, %v %v", n, cas[0].PaymentDate, cas[1].PaymentDate)
	}
	// Without a ticker for the class, events are counted and skipped.
	cas, st, err = ReadCashDividends(readReal(t, fileCash), fileCash, CashContext{Symbol: "ABEV"})
	if err != nil || len(cas) != 0 || st.NoTicker["ON"] != 29 {
		t.Errorf("no ticker: %d %v %v", len(cas), st.NoTicker, err)
	}
}

func TestCashDividendsErrors(t *testing.T) {
	ctx := CashContext{Symbol: "X", Tickers: map[string]string{engine.ClassCS: "XXXX3"}}
	row := func(kv string) string {
		return `{"results":[{"typeStock":"ON","dateApproval":"09/12/2021","valueCash":"1,5","corporateAction":"DIVIDENDO","lastDatePriorEx":"17/12/2021",` + kv + `}]}`
	}
	for _, c := range []struct{ in, want string }{
		{`[`, "f:"},
		{row(`"quotedPerShares":"0"`), "results[0].quotedPerShares"},
		{strings.Replace(row(`"ratio":"1"`), `"1,5"`, `"x"`, 1), "results[0].valueCash"},
		{strings.Replace(row(`"ratio":"1"`), `"17/12/2021"`, `""`, 1), "results[0].lastDatePriorEx"},
		{strings.Replace(row(`"ratio":"1"`), `"09/12/2021"`, `"9/12/21"`, 1), "results[0].dateApproval"},
	} {
		if _, _, err := ReadCashDividends([]byte(c.in), "f", ctx); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
	cas, _, err := ReadCashDividends([]byte(row(`"quotedPerShares":"1000"`)), "f", ctx)
	if err != nil || !near(cas[0].DeclaredValue, 0.0015) {
		t.Errorf("per 1000 shares: %v %v", cas, err)
	}
	cas, st, _ := ReadCashDividends([]byte(strings.Replace(row(`"ratio":"1"`), "DIVIDENDO", "BONIFICACAO", 1)), "f", ctx)
	if len(cas) != 0 || st.UnknownLabel["BONIFICACAO"] != 1 {
		t.Errorf("unknown label %v", st)
	}
}

func TestCashName(t *testing.T) {
	for in, want := range map[string]string{"DIVIDENDO": CashDividend, "JRS CAP PROPRIO": CashInterest, "JUROS SOBRE CAPITAL PRÓPRIO": CashInterest,
		"RENDIMENTO": CashRendimento, "RESTITUIÇÃO DE CAPITAL": CashRestitution, "AMORTIZAÇÃO": CashAmortization, "BONIFICACAO": ""} {
		if got := CashName(in); got != want {
			t.Errorf("CashName(%q) = %q", in, got)
		}
	}
}

// TestSupplement checks AMBEV's share counts (15.750.216.851 common, 0
// preferred) and that stockDividends become share actions.
func TestSupplement(t *testing.T) {
	s, err := ReadSupplement(readReal(t, fileSupp), fileSupp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Symbol != "ABEV" || s.CVMCode != "23264" || s.Common != 15750216851 || s.Preferred != 0 || len(s.Cash) != 2 || len(s.ShareActions) != 1 {
		t.Errorf("%+v", s)
	}
	// AMBEV's 2014 subscription: 0,13994090200% at R$ 16,09.
	if sub := s.ShareActions[0]; sub.Type != engine.ActSubscription || sub.Factor != engine.Num(1.001399409020) ||
		sub.PriorExDate != day(2014, 4, 28) || sub.ApprovalDate != day(2014, 4, 28) || sub.ISIN != "BRABEVACNOR1" ||
		sub.Remarks != "preço unitário R$ 16,09000000000; negociação dos direitos 30/04/2014 a 22/05/2014; subscrição em 29/05/2014" {
		t.Errorf("subscription %+v", sub)
	}
	in := `[{"code":"XPTO","numberCommonShares":"1.000","stockDividends":[
	 {"assetIssued":"BRXPTOACNOR0","factor":"100,00000000000","approvedOn":"01/02/2022","isinCode":"BRXPTOACNOR0","label":"DESDOBRAMENTO","lastDatePrior":"10/02/2022","remarks":""},
	 {"assetIssued":"BRXPTOACNOR0","factor":"0,10000000000","approvedOn":"01/03/2022","isinCode":"BRXPTOACNOR0","label":"GRUPAMENTO","lastDatePrior":"10/03/2022","remarks":""},
	 {"assetIssued":"BRXPTOACNOR0","factor":"5,00000000000","approvedOn":"01/04/2022","isinCode":"BRXPTOACNOR0","label":"BONIFICACAO","lastDatePrior":"10/04/2022","remarks":""}]}]`
	s, err = ReadSupplement([]byte(in), "x")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ShareActions) != 3 || s.Preferred != -1 ||
		s.ShareActions[0].Type != engine.ActStockSplit || !near(s.ShareActions[0].Factor, 2) ||
		s.ShareActions[1].Type != engine.ActReverseSplit || s.ShareActions[1].Factor != 0.1 ||
		s.ShareActions[2].Type != engine.ActStockBonus || !near(s.ShareActions[2].Factor, 1.05) ||
		s.ShareActions[2].PriorExDate != day(2022, 4, 10) {
		t.Errorf("%+v", s.ShareActions)
	}
	for _, bad := range []string{`{}`, `[]`, `[{"numberCommonShares":"1,5"}]`, `[{"stockDividends":[{"factor":"x","label":"DESDOBRAMENTO"}]}]`,
		`[{"stockDividends":[{"factor":"200","label":"GRUPAMENTO","lastDatePrior":"01/01/2020"}]}]`,
		`[{"stockDividends":[{"factor":"1,0","label":"GRUPAMENTO","lastDatePrior":"01/01/2020"}]}]`,
		`[{"stockDividends":[{"factor":"150,0","label":"RESG TOTAL RV","lastDatePrior":"01/01/2020"}]}]`,
		`[{"stockDividends":[{"factor":"50,0","label":"CIS RED CAP","isinCode":"BRXPTOACNOR0"}]}]`,
		`[{"subscriptions":[{"percentage":"x","lastDatePrior":"01/01/2020"}]}]`, `[{"subscriptions":[{"percentage":"10,0"}]}]`} {
		if _, err := ReadSupplement([]byte(bad), "x"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func TestDetails(t *testing.T) {
	d, err := ReadDetails(readReal(t, fileDetails), fileDetails)
	if err != nil {
		t.Fatal(err)
	}
	if d.Symbol != "ABEV" || d.CNPJ != "07526557000100" || d.Status != "ACTIVE" || d.CVMCode != "23264" || d.Tickers["ABEV3"] != "BRABEVACNOR1" ||
		strings.Join(d.Industry, "|") != "Consumo não Cíclico|Bebidas|Cervejas e Refrigerantes" {
		t.Errorf("%+v", d)
	}
}

// TestListings checks the ETF export (83 ETFs by 4-letter symbol,
// ISO-8859-1, with their index), the ETF/BDR list (194) and the FII list
// (406, comma-separated UTF-8).
func TestListings(t *testing.T) {
	for _, c := range []struct {
		rel   string
		n     int
		first Listing
	}{
		{fileETF, 83, Listing{Code: "AGRI", Name: "BB ETF IAGROFFS B3 FUNDO DE ÍNDICE", Geography: "BR"}},
		{fileETFBDR, 193, Listing{Code: "AGRI11", Name: "BB ETF IAGROFFS B3 FUNDO DE ÍNDICE"}},
		{fileFII, 406, Listing{Code: "CCME11", Name: "CANUMA CAPITAL MULTIESTRATÉGIA FDO DE INV IMOB"}},
	} {
		ls, bad, err := ReadListings(bytes.NewReader(readReal(t, c.rel)), c.rel, true)
		if err != nil {
			t.Fatal(err)
		}
		if want := 0; c.rel == fileETFBDR && bad != 1 || c.rel != fileETFBDR && bad != want {
			t.Errorf("%s: %d malformed codes", c.rel, bad)
		}
		if len(ls) != c.n || ls[0] != c.first {
			t.Errorf("%s: %d listings, first %+v", c.rel, len(ls), ls[0])
		}
	}
	// The ETF/BDR list has one malformed code, "BIYFT39", at line 156.
	if _, _, err := ReadListings(bytes.NewReader(readReal(t, fileETFBDR)), fileETFBDR, false); err == nil || !strings.Contains(err.Error(), `etf_bdr.csv.zst:156:2: bad code "BIYFT39"`) {
		t.Errorf("strict: %v", err)
	}
	ls, _, _ := ReadListings(bytes.NewReader(readReal(t, fileETF)), fileETF, false)
	if ls[2].Code != "BBOV" || ls[2].Index != "IBOV" || ls[2].Symbol() != "BBOV" {
		t.Errorf("%+v", ls[2])
	}
	geo := map[string]int{}
	for _, l := range ls {
		geo[l.Geography]++
	}
	if geo["BR"] != 38 || geo["US"] != 26 || geo["CRIPTO"] != 13 {
		t.Errorf("ETF geographies %v", geo)
	}
	for _, bad := range []string{"", "a;b\n", "Código;x\nbad code;1\n"} {
		if _, _, err := ReadListings(strings.NewReader(bad), "x", false); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseNum(f *testing.F) {
	for _, s := range []string{"3,137", "4.355.174.839", "18.296.80337677573", "0.5", "", "-1,5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseNum(s)
		if err == nil && strings.TrimSpace(s) != "" && !v.Valid() {
			t.Fatalf("%q: invalid value without error", s)
		}
		ParseDate(s)
		parseEnglishNum(s)
	})
}

func FuzzIndexCSV(f *testing.F) {
	f.Add(readReal(f, fileIbov21), "IBOVDia_26-03-21.csv")
	f.Add(readReal(f, fileSmll), "SMLLDia_02-07-25.csv")
	f.Add(withNUL(f, readReal(f, fileIbov21), 3, "AMBEV"), "IBOVDia_26-03-21.csv")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		p, err := ReadIndexCSV(bytes.NewReader(data), name)
		if err == nil && (p.Symbol == "" || len(p.Assets) == 0) {
			t.Fatal("accepted a portfolio without symbol or assets")
		}
		if err == nil {
			for _, a := range p.Assets {
				if strings.IndexByte(a.Ticker+a.Name+a.Type, 0) >= 0 {
					t.Fatalf("accepted an asset with a NUL byte: %+v", a)
				}
			}
		}
	})
}

func FuzzPortfolioJSON(f *testing.F) {
	f.Add(readReal(f, fileTheo))
	f.Fuzz(func(t *testing.T, data []byte) {
		ReadPortfolioJSON(data, "f", "IBOV", engine.NoDate)
		if s, err := ReadStockIndexJSON(data, "f"); err == nil {
			s.Indexes()
		}
	})
}

func FuzzStockIndexJSON(f *testing.F) {
	f.Add(readReal(f, fileStock21))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ReadStockIndexJSON(data, "f"); err == nil {
			s.Indexes()
		}
	})
}

func FuzzCashDividends(f *testing.F) {
	f.Add(readReal(f, fileCash))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx := CashContext{Symbol: "ABEV", Tickers: map[string]string{engine.ClassCS: "ABEV3"}}
		cas, _, err := ReadCashDividends(data, "f", ctx)
		if err == nil {
			for _, c := range cas {
				if !c.PriorExDate.Valid() || !c.DeclaredValue.Valid() || c.DeclaredValue < 0 {
					t.Fatalf("accepted %+v", c)
				}
			}
		}
	})
}

func FuzzSupplement(f *testing.F) {
	f.Add(readReal(f, fileSupp))
	f.Add(readReal(f, fileDetails))
	f.Add(supplementWith(
		stockRec(isinX, isinA, "CIS RED CAP", "100,0", "31/08/2021", "01/10/2021", ""),
		stockRec(isinX, isinB, "CIS RED CAP", "12,5", "31/08/2021", "01/10/2021", ""),
		stockRec(isinX, isinX, "CIS RED CAP QTD", "80,0", "01/02/2022", "10/02/2022", ""),
		stockRec(isinX, isinB, "INCORPORACAO", "50,0", "23/05/2025", "06/06/2025", ""),
		stockRec(isinX, isinX, "RESG TOTAL RV", "100,0", "01/11/2025", "27/11/2025", ""),
		stockRec(isinX, isinX, "GRUPAMENTO", "0,1", "01/11/2025", "27/11/2025", ""),
		stockRec(isinX, isinX, "NOVO", "?", "", "", "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ReadSupplement(data, "f"); err == nil {
			ApplyPaymentDates([]engine.CashAction{{PaymentDate: engine.NoDate}}, s)
			// Whatever the records, each action is one the bundle takes:
			// a positive root factor, or legs opening with the original.
			for _, a := range s.ShareActions {
				switch a.Type {
				case engine.ActSpinOff, engine.ActSpinOffQuantity, engine.ActMerger, engine.ActRestitutionInShares, engine.ActRestitutionWithReduce:
					if a.Factor.Valid() || len(a.Legs) == 0 || a.Legs[0].LegType != engine.LegOriginal || a.Legs[0].ISIN != a.ISIN {
						t.Fatalf("leg action %+v", a)
					}
					for _, l := range a.Legs {
						if !l.Factor.Valid() || l.Factor <= 0 {
							t.Fatalf("leg factor %+v", a)
						}
					}
				case engine.ActReverseSplit:
					if !(a.Factor > 0 && a.Factor < 1) {
						t.Fatalf("reverse split %+v", a)
					}
				case engine.ActTotalRedemption:
					if !(a.Factor >= 0 && a.Factor < 1) {
						t.Fatalf("redemption %+v", a)
					}
				default:
					if !(a.Factor > 0) || a.Legs != nil {
						t.Fatalf("action %+v", a)
					}
				}
			}
		}
		ReadDetails(data, "f")
	})
}

func FuzzListings(f *testing.F) {
	f.Add(readReal(f, fileETF))
	f.Add(readReal(f, fileFII))
	f.Add(withNUL(f, readReal(f, fileETF), 2, "IAGRO"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, _, err := ReadListings(bytes.NewReader(data), "f", true)
		if err == nil {
			for _, l := range ls {
				if l.Code == "" {
					t.Fatal("empty code accepted")
				}
				if strings.IndexByte(l.Code+l.Name+l.Index+l.Geography, 0) >= 0 {
					t.Fatalf("accepted a listing with a NUL byte: %+v", l)
				}
			}
		}
	})
}

// TestPortfolioReductor checks that the reductor reaches the engine index
// with the source's own digits (written back, the same decimal), from the
// CSV footer (a file written in the official layout, and the real IBOV of
// 2021-03-26 whose value lost its decimal comma) and the JSON header;
// null when the source has none (an edited file without its footer, a
// membership list).
func TestPortfolioReductor(t *testing.T) {
	official := "IBOV - Carteira do Dia 02/01/25\n" +
		"Código;Ação;Tipo;Qtde. Teórica;Part. (%)\n" +
		"ABEV3;AMBEV S/A;ON;4.394.835.131;60,000;\n" +
		"WEGE3;WEG;ON      NM;1.243.177.587;40,000;\n" +
		"Quantidade Teórica Total;;;5.638.012.718;100,000\n" +
		"Redutor;;;16.036.751,16744128\n"
	csv := func(in, name string) engine.Index {
		p, err := ReadIndexCSV(strings.NewReader(in), name)
		if err != nil {
			t.Fatal(err)
		}
		return p.Index("")
	}
	theo, err := ReadPortfolioJSON(readReal(t, fileTheo), fileTheo, "IBOV", day(2022, 5, 13))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		x    engine.Index
		want string
	}{
		{"official layout", csv(official, "IBOVDia_02-01-25.csv"), "16036751.16744128"},
		{fileIbov21, csv(string(readReal(t, fileIbov21)), fileIbov21), "18296803.37677573"},
		{fileIbov24, csv(string(readReal(t, fileIbov24)), fileIbov24), "null"},
		{fileTheo, theo.Index("Ibovespa"), "18673489.42022432"},
	} {
		if got := string(engine.AppendNum(nil, c.x.Reductor)); got != c.want {
			t.Errorf("%s: reductor %s, want %s", c.name, got, c.want)
		}
	}
	s, err := ReadStockIndexJSON(readReal(t, fileStock), fileStock)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range s.Indexes() {
		if x.Reductor.Valid() {
			t.Errorf("%s from a membership list: reductor %v, want null", x.Symbol, x.Reductor)
		}
	}
}
