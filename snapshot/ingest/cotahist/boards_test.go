package cotahist

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// layoutRecord writes a quote record (TIPREG 01) in the official 245-byte
// layout: only the fields the importer reads are set; prices in cents.
func layoutRecord(date string, bdi int, ticker string, market int, name, spec, isin string, close int64) string {
	var b strings.Builder
	b.WriteString("01")
	b.WriteString(date)              // DATPRE 3-10
	fmt.Fprintf(&b, "%02d", bdi)     // CODBDI 11-12
	fmt.Fprintf(&b, "%-12s", ticker) // CODNEG 13-24
	fmt.Fprintf(&b, "%03d", market)  // TPMERC 25-27
	fmt.Fprintf(&b, "%-12s", name)   // NOMRES 28-39
	fmt.Fprintf(&b, "%-10s", spec)   // ESPECI 40-49
	b.WriteString("   ")             // PRAZOT 50-52
	b.WriteString("R$  ")            // MODREF 53-56
	for range 5 {                    // PREABE PREMAX PREMIN PREMED PREULT 57-121
		fmt.Fprintf(&b, "%013d", close)
	}
	fmt.Fprintf(&b, "%013d%013d", close, close) // PREOFC PREOFV 122-147
	fmt.Fprintf(&b, "%05d", 10)                 // TOTNEG 148-152
	fmt.Fprintf(&b, "%018d", 1000)              // QUATOT 153-170
	fmt.Fprintf(&b, "%018d", 1000*close)        // VOLTOT 171-188
	fmt.Fprintf(&b, "%013d", 0)                 // PREEXE 189-201
	b.WriteString("0")                          // INDOPC 202
	b.WriteString("99991231")                   // DATVEN 203-210
	fmt.Fprintf(&b, "%07d", 1)                  // FATCOT 211-217
	fmt.Fprintf(&b, "%013d", 0)                 // PTOEXE 218-230
	fmt.Fprintf(&b, "%-12s", isin)              // CODISI 231-242
	b.WriteString("100")                        // DISMES 243-245
	return b.String()
}

// layoutFile wraps records in the header and trailer of a daily file.
func layoutFile(date string, recs ...string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%-245s\n", "00COTAHIST."+date[:4]+"BOVESPA "+date)
	for _, r := range recs {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%-245s\n", fmt.Sprintf("99COTAHIST.%sBOVESPA %s%011d", date[:4], date, len(recs)+2))
	return b.Bytes()
}

// TestBoardsOfRecentFiles: BDRs, FIAGRO, FIDC and ETF quotas on boards of
// their own are kept by default (their ISIN category says what they are),
// with their class; rights, options and odd lots are not; an explicit
// board list keeps exactly its boards.
func TestBoardsOfRecentFiles(t *testing.T) {
	const d = "20240102"
	recs := []string{
		layoutRecord(d, 2, "PETR4", 10, "PETROBRAS", "PN      N2", "BRPETRACNPR6", 3712),
		layoutRecord(d, 34, "AAPL34", 10, "APPLE", "DRN", "BRAAPLBDR004", 4825),     // a BDR on its own board
		layoutRecord(d, 35, "BIVB39", 10, "ISHARES", "DRE", "BRBIVBBDR009", 5210),   // a BDR of an ETF
		layoutRecord(d, 32, "MSFT34", 10, "MICROSOFT", "DR3", "BRMSFTBDR003", 5285), // sponsored
		layoutRecord(d, 13, "RZAG11", 10, "FIAGRO RZ", "CI", "BRRZAGCTF000", 1012),  // FIAGRO
		layoutRecord(d, 14, "BOVA11", 10, "ISHARES BOVA", "CI", "BRBOVACTF003", 12345),
		layoutRecord(d, 14, "IFRA11", 10, "FIDC IFRA", "FIDC", "BRIFRACTF001", 9876),
		layoutRecord(d, 10, "PETR12", 10, "PETROBRAS", "DIR PN", "BRPETRD13PR3", 12), // rights: kept out
		layoutRecord(d, 96, "PETR4F", 20, "PETROBRAS", "PN      N2", "BRPETRACNPR6", 3713),
		layoutRecord(d, 78, "PETRA400", 70, "PETROBRAS", "PN", "BRPETRACNPR6", 150),
	}
	in := layoutFile(d, recs...)
	run := func(opt Options) Result {
		im := NewImporter(opt)
		if err := im.Import(bytes.NewReader(in), "f"); err != nil {
			t.Fatal(err)
		}
		return im.Result()
	}
	classes := func(res Result) map[string]string {
		m := map[string]string{}
		for _, s := range res.Securities {
			m[s.Ticker] = s.StockType
		}
		return m
	}
	got := classes(run(Options{}))
	want := map[string]string{"PETR4": engine.ClassPS, "AAPL34": engine.ClassBDR, "BIVB39": engine.ClassBDR, "MSFT34": engine.ClassBDR,
		"RZAG11": engine.ClassFundUnit, "BOVA11": engine.ClassFundUnit, "IFRA11": engine.ClassFundUnit}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("default: %v\nwant     %v", got, want)
	}
	res := run(Options{})
	for _, s := range res.Securities {
		if s.Ticker == "MSFT34" && !s.Sponsored || s.Ticker == "AAPL34" && s.Sponsored {
			t.Errorf("%s sponsored %v", s.Ticker, s.Sponsored)
		}
	}
	if st := res.Stats; st.KeptOtherBoard[34] != 1 || st.KeptOtherBoard[35] != 1 || st.SkippedBoard[10] != 1 || st.SkippedMarket[20] != 1 || st.SkippedMarket[70] != 1 {
		t.Errorf("stats: kept %v skipped boards %v markets %v", st.KeptOtherBoard, st.SkippedBoard, st.SkippedMarket)
	}
	if got := classes(run(Options{OddLot: true})); got["PETR4F"] != engine.ClassPS {
		t.Errorf("odd lot: %v", got)
	}
	// --boards 02: exactly the standard lot.
	if got := classes(run(Options{Boards: []int{2}})); len(got) != 1 || got["PETR4"] == "" {
		t.Errorf("boards 02: %v", got)
	}
}

// TestSpecStatusGlued: ESPECI writes the type in columns 1-3 (FIDC fills
// column 4), '*' or a blank in column 4, then the status (EJ ex-interest,
// ED ex-dividend, ER ex-income, EA ex-amortization) from column 5. A
// four-letter type or a '*' leaves no blank before the status: the infra
// FIDC quotas of the 2022-02-03 file read "FIDCER" and "FIDCEA" where
// 2021's read "FIDC", and a starred class on its ex-date reads "PNA*EJ".
// Those days are bars of the same security, not skipped records.
func TestSpecStatusGlued(t *testing.T) {
	recs := []string{
		layoutRecord("20220202", 14, "KDIF11", 10, "KINEA INFRAF", "FIDC", "BRKDIFCTF003", 13448),
		layoutRecord("20220203", 14, "KDIF11", 10, "KINEA INFRAF", "FIDCER", "BRKDIFCTF003", 13448),
		layoutRecord("20220204", 14, "KDIF11", 10, "KINEA INFRAF", "FIDCEA", "BRKDIFCTF003", 13675),
		layoutRecord("20220202", 2, "ABCD5", 10, "ABCD", "PNA*", "BRABCDACNPA1", 1000),
		layoutRecord("20220203", 2, "ABCD5", 10, "ABCD", "PNA*EJ", "BRABCDACNPA1", 990),
		layoutRecord("20220202", 2, "ABCD11", 10, "ABCD", "UNT*    N2", "BRABCDCDAM00", 3000),
		layoutRecord("20220203", 2, "ABCD11", 10, "ABCD", "UNT*EJ  N2", "BRABCDCDAM00", 2970),
	}
	im := NewImporter(Options{})
	if err := im.Import(bytes.NewReader(layoutFile("20220204", recs...)), "f"); err != nil {
		t.Fatal(err)
	}
	res := im.Result()
	want := map[string]struct {
		class string
		days  int
	}{"KDIF11": {engine.ClassFundUnit, 3}, "ABCD5": {engine.ClassPSA, 2}, "ABCD11": {engine.ClassUnit, 2}}
	for i, s := range res.Securities {
		w, ok := want[s.Ticker]
		if !ok || s.StockType != w.class || len(res.Series[i].Dates) != w.days {
			t.Errorf("%s: class %q, %d days; want %+v", s.Ticker, s.StockType, len(res.Series[i].Dates), w)
		}
		delete(want, s.Ticker)
	}
	if len(want) != 0 || len(res.Stats.SkippedSpec) != 0 {
		t.Errorf("missing %v, skipped specs %v", want, res.Stats.SkippedSpec)
	}
}

// TestCurrencyOtherThanReal: MODREF (columns 53-56) is the currency of
// the record's prices, "the currency in use on the session's day": the
// annual files of sessions before 1 July 1994 quote cruzeiros reais,
// cruzeiros or cruzados. Such prices are no BRL: those records are
// skipped and counted by currency, never kept as BRL bars.
func TestCurrencyOtherThanReal(t *testing.T) {
	modref := func(rec, cur string) string { return rec[:52] + fmt.Sprintf("%-4s", cur) + rec[56:] }
	recs := []string{
		modref(layoutRecord("19940630", 2, "PETR4", 10, "PETROBRAS", "PN", "BRPETRACNPR6", 16200000), "CR$"),
		layoutRecord("19940701", 2, "PETR4", 10, "PETROBRAS", "PN", "BRPETRACNPR6", 5900),
		modref(layoutRecord("19940701", 2, "VALE3", 10, "VALE R DOCE", "ON", "BRVALEACNOR0", 1000), "US$"),
	}
	im := NewImporter(Options{})
	if err := im.Import(bytes.NewReader(layoutFile("19940701", recs...)), "f"); err != nil {
		t.Fatal(err)
	}
	res := im.Result()
	if len(res.Series) != 1 || res.Series[0].Ticker != "PETR4" || len(res.Series[0].Dates) != 1 || res.Series[0].Close[0] != 59 {
		t.Errorf("series %+v", res.Series)
	}
	if st := res.Stats; st.SkippedCurrency["CR$"] != 1 || st.SkippedCurrency["US$"] != 1 || st.Kept != 1 {
		t.Errorf("skipped currencies %v, kept %d", st.SkippedCurrency, st.Kept)
	}
}
