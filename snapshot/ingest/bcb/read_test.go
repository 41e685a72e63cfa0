package bcb

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// The real closing-rates file of 2026-07-31: every currency the Banco
// Central quotes, USD's rates equal to that day's Olinda answer
// (5.07670 buy, 5.07730 sell), EUR of type B (parity: USD per EUR), and
// the currencies the Olinda catalogue lacks (ARS, CNY).
func TestReadClosingReal(t *testing.T) {
	f, err := ReadClosing(bytes.NewReader(readReal(t, realClosing26)), realClosing26, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Rates) != 156 || f.Malformed != 0 {
		t.Fatalf("%d rates, %d malformed; want 156", len(f.Rates), f.Malformed)
	}
	by := map[string]Rate{}
	for _, r := range f.Rates {
		if r.Date != day("2026-07-31") {
			t.Fatalf("%+v: dated %s", r, r.Date)
		}
		by[r.Currency] = r
	}
	for _, tc := range []struct {
		cur        string
		code       int
		typ        byte
		buy, sell  float64
		paritySell float64
	}{
		{"USD", 220, 'A', 5.0767, 5.0773, 1},
		{"EUR", 978, 'B', 5.8473, 5.849, 1.152},
		{"GBP", 540, 'B', 6.8363, 6.8391, 1.347},
		{"JPY", 470, 'A', 0.03189, 0.0319, 159.18},
		{"CHF", 425, 'A', 6.2807, 6.2838, 0.8083},
		{"ARS", 706, 'A', 0.003408, 0.003411, 1489.5},
		{"CNY", 795, 'A', 0.7519, 0.7521, 6.7517},
	} {
		r := by[tc.cur]
		if r.Code != tc.code || r.Type != tc.typ || r.Buy != tc.buy || r.Sell != tc.sell || r.ParitySell != tc.paritySell {
			t.Errorf("%s: %+v, want %+v", tc.cur, r, tc)
		}
	}
}

func TestReadClosingErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"seven fields", "31/07/2026;220;A;USD;5,0767;5,0773;1\n", "f:1: 7 fields"},
		{"type", "31/07/2026;220;C;USD;5,0767;5,0773;1;1\n", `type "C"`},
		{"currency", "31/07/2026;220;A;usd;5,0767;5,0773;1;1\n", `currency "usd"`},
		{"point decimal", "31/07/2026;220;A;USD;5.0767;5,0773;1;1\n", `buy rate: "5.0767"`},
		{"zero rate", "31/07/2026;220;A;USD;5,0767;0;1;1\n", `sell rate "0": want a positive number`},
		{"date", "2026-07-31;220;A;USD;5,0767;5,0773;1;1\n", `date: "2026-07-31"`},
		{"html", "<!DOCTYPE html><html>", "an HTML page"},
		{"empty", "\r\n", "no closing rate"},
		{"NUL", "31/07/2026;220;A;US\x00;5,0767;5,0773;1;1\n", "NUL byte"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadClosing(strings.NewReader(tc.in), "f", false); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	f, err := ReadClosing(strings.NewReader("x;y\n31/07/2026;220;A;USD;5,0767;5,0773;1;1\n"), "f", true)
	if err != nil || len(f.Rates) != 1 || f.Malformed != 1 {
		t.Fatalf("lenient: %+v %v", f, err)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct{ in, path, series, err string }{
		{"SELIC=a/b.json", "a/b.json", "SELIC", ""},
		{"ipca=x.csv", "x.csv", "IPCA", ""},
		{"4389=x.csv", "x.csv", "CDI", ""},
		{"d/dados/serie/bcdata.sgs.432/dados/2020-2029.json", "d/dados/serie/bcdata.sgs.432/dados/2020-2029.json", "SELIC", ""},
		{"d/Download/fechamento/20210326.csv.zst", "d/Download/fechamento/20210326.csv.zst", "", ""},
		{"IGPM=x.json", "", "", `"IGPM" is no series of the mapping`},
		{"d/bcdata.sgs.11/x.json", "", "", "SGS series 11 is not one Pregão imports"},
		{"notes.txt", "", "", "not a Banco Central file"},
	} {
		got, err := Classify(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Classify(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got.Path != tc.path || got.Series != tc.series {
			t.Errorf("Classify(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

func TestBusinessDay(t *testing.T) {
	for _, tc := range []struct {
		d  string
		ok bool
	}{
		{"2021-01-01", false}, {"2021-02-15", false}, {"2021-02-16", false}, {"2021-02-17", true}, // Carnival; Ash Wednesday opens at noon
		{"2021-04-02", false}, {"2021-04-21", false}, {"2021-06-03", false}, {"2021-09-07", false},
		{"2021-10-12", false}, {"2021-11-02", false}, {"2021-11-15", false}, {"2021-12-24", true}, {"2021-12-31", true},
		{"2023-11-20", true}, {"2024-11-20", false}, {"2022-04-15", false}, {"2025-04-18", false},
		{"2021-03-27", false}, {"2021-03-28", false}, {"2021-03-26", true}, {"2026-07-31", true},
	} {
		if got := BusinessDay(day(tc.d)); got != tc.ok {
			t.Errorf("BusinessDay(%s) = %v", tc.d, got)
		}
	}
	for y, want := range map[int]string{2021: "2021-04-04", 2022: "2022-04-17", 2024: "2024-03-31", 2025: "2025-04-20"} {
		if got := easter(y).String(); got != want {
			t.Errorf("easter(%d) = %s", y, got)
		}
	}
}

// read runs Read over inputs (Classify's forms) as of asOf.
func read(t *testing.T, asOf string, inputs ...string) *Result {
	t.Helper()
	var ins []Input
	for _, v := range inputs {
		in, err := Classify(v)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	opt := Options{AsOf: engine.NoDate}
	if asOf != "" {
		opt.AsOf = day(asOf)
	}
	res, err := Read(ins, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// series returns the series of ticker in res, or nil.
func series(res *Result, ticker string) *engine.Series {
	for i := range res.Series {
		if res.Series[i].Ticker == ticker {
			return &res.Series[i]
		}
	}
	return nil
}

// closeOn returns the close of s on d.
func closeOn(s *engine.Series, d string) (engine.Num, bool) {
	for i, x := range s.Dates {
		if x == day(d) {
			return s.Close[i], true
		}
	}
	return engine.Null, false
}

// A holiday is a gap: Tiradentes (2021-04-21) has no CDI record and no
// closing-rates file, so no point of CDI, USD, EUR or ARS; the SGS
// publishes a Selic target for it (and for weekends), which SELIC leaves
// out, keeping the business days. Nothing is carried over and nothing is
// zero; open, high, low and volume are null.
func TestHolidayGap(t *testing.T) {
	res := read(t, "", "CDI=testdata/cdi_2021-04.csv", "testdata/20210420.csv", "testdata/20210422.csv",
		"SELIC="+realPath(t, realSelic20))
	for _, tk := range []string{"CDI", "USD", "EUR", "ARS", "SELIC"} {
		s := series(res, tk)
		if s == nil {
			t.Fatalf("%s missing", tk)
		}
		if _, ok := closeOn(s, "2021-04-21"); ok {
			t.Errorf("%s has a point on the holiday 2021-04-21", tk)
		}
		for i := range s.Dates {
			if s.Open[i].Valid() || s.High[i].Valid() || s.Low[i].Valid() || s.Volume[i].Valid() || !s.Close[i].Valid() {
				t.Fatalf("%s %s: open %v high %v low %v volume %v close %v", tk, s.Dates[i], s.Open[i], s.High[i], s.Low[i], s.Volume[i], s.Close[i])
			}
			if !BusinessDay(s.Dates[i]) {
				t.Fatalf("%s has a point on %s, no business day", tk, s.Dates[i])
			}
		}
	}
	if v, _ := closeOn(series(res, "USD"), "2021-04-22"); v != 5.5061 {
		t.Errorf("USD 2021-04-22 = %v", v)
	}
	if v, _ := closeOn(series(res, "SELIC"), "2021-03-26"); v != 2.75 {
		t.Errorf("SELIC 2021-03-26 = %v", v)
	}
	// 2,236 calendar days of the Selic target, 1,538 business days among
	// them (2020: 251, 2021: 251, 2022: 251, 2023: 249, 2024: 253, 2025:
	// 252, 2026 to February 13: 31).
	if n, dropped := len(series(res, "SELIC").Dates), res.Stats.NotBusinessDay; n != 1538 || n+dropped != 2236 {
		t.Errorf("SELIC: %d points kept, %d left out", n, dropped)
	}
	sec := res.Securities
	if len(sec) != 5 || sec[0].Ticker != "ARS" || sec[0].StockType != engine.ClassMacro || sec[0].CompanyID != "" || sec[0].Currency != "BRL" ||
		sec[0].ListedFrom != day("2021-04-20") || sec[0].ListedTo.Valid() {
		t.Errorf("securities %+v", sec)
	}
}

// A revised value: the same date published twice with different values.
// Within one answer the later record wins; across inputs the later input
// (here the revision of 2021-04-23 in the JSON answer, given after the
// CSV one) wins. A record without a value is skipped, not read as 0.
func TestRevisedValue(t *testing.T) {
	res := read(t, "", "CDI=testdata/cdi_2021-04_revised.json")
	if v, _ := closeOn(series(res, "CDI"), "2021-04-23"); v != 2.65 || res.Stats.Revised != 1 || res.Stats.Empty != 1 {
		t.Errorf("one answer: 2021-04-23 = %v, %+v", v, res.Stats)
	}
	if _, ok := closeOn(series(res, "CDI"), "2021-04-26"); ok {
		t.Error("a record without a value became a point")
	}
	dir := t.TempDir()
	rev := filepath.Join(dir, "revision.csv")
	if err := os.WriteFile(rev, []byte("\"data\";\"valor\"\r\n\"22/04/2021\";\"2,66\"\r\n\"23/04/2021\";\"2,65\"\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = read(t, "", "CDI=testdata/cdi_2021-04.csv", "CDI="+rev)
	s := series(res, "CDI")
	if v, _ := closeOn(s, "2021-04-22"); v != 2.66 || res.Stats.Revised != 1 || res.Stats.Repeated != 1 {
		t.Errorf("later input: 2021-04-22 = %v, %+v", v, res.Stats)
	}
	res = read(t, "", "CDI="+rev, "CDI=testdata/cdi_2021-04.csv")
	if v, _ := closeOn(series(res, "CDI"), "2021-04-22"); v != 2.65 {
		t.Errorf("inputs the other way round: 2021-04-22 = %v", v)
	}
}

// Point in time: a snapshot of 2022-02-04 holds the Selic target of that
// day, the CDI of the day before (published the next day), the IPCA up
// to December 2021 (January's was released on 2022-02-09), and nothing
// dated later.
func TestAsOf(t *testing.T) {
	res := read(t, "2022-02-04", "SELIC="+realPath(t, realSelic20), "IPCA="+realPath(t, realIPCA20),
		"CDI=testdata/cdi_2021-04.csv", realPath(t, realClosing26))
	last := func(tk string) string {
		s := series(res, tk)
		if s == nil {
			return ""
		}
		return s.Dates[len(s.Dates)-1].String()
	}
	if got := last("SELIC"); got != "2022-02-04" {
		t.Errorf("SELIC ends on %s", got)
	}
	if got := last("IPCA"); got != "2021-12-01" {
		t.Errorf("IPCA ends on %s", got)
	}
	if v, _ := closeOn(series(res, "IPCA"), "2021-03-01"); v != 0.93 {
		t.Errorf("IPCA March 2021 = %v", v)
	}
	if series(res, "USD") != nil {
		t.Error("USD of 2026-07-31 kept in a snapshot of 2022-02-04")
	}
	res = read(t, "2021-04-22", "CDI=testdata/cdi_2021-04.csv")
	if got := last("CDI"); got != "2021-04-20" {
		t.Errorf("CDI as of 2021-04-22 ends on %s (that day's is published on the 23rd)", got)
	}
	res = read(t, "2022-01-15", "IPCA="+realPath(t, realIPCA20))
	if got := last("IPCA"); got != "2021-12-01" {
		t.Errorf("IPCA as of 2022-01-15 ends on %s", got)
	}
	res = read(t, "2022-01-14", "IPCA="+realPath(t, realIPCA20))
	if got := last("IPCA"); got != "2021-11-01" {
		t.Errorf("IPCA as of 2022-01-14 ends on %s", got)
	}
}

// Every currency of the closing file is a macro series named by its ISO
// code, its close the PTAX sell rate.
func TestCurrenciesReal(t *testing.T) {
	res := read(t, "2026-07-31", realPath(t, realClosing26))
	if len(res.Series) != 156 || res.Stats.ClosingFiles != 1 {
		t.Fatalf("%d series", len(res.Series))
	}
	for tk, want := range map[string]engine.Num{"USD": 5.0773, "EUR": 5.849, "GBP": 6.8391, "JPY": 0.0319, "CHF": 6.2838, "ARS": 0.003411, "CNY": 0.7521} {
		if v, ok := closeOn(series(res, tk), "2026-07-31"); !ok || v != want {
			t.Errorf("%s = %v, want %v", tk, v, want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "20210101.csv")
	os.WriteFile(bad, []byte("01/01/2021;220;A;USD;x;1;1;1\n"), 0o644)
	for _, tc := range []struct {
		in   Input
		want string
	}{
		{Input{Path: filepath.Join(dir, "missing.json"), Series: "SELIC"}, "missing.json"},
		{Input{Path: bad}, `20210101.csv:1: buy rate: "x"`},
		{Input{Path: realPath(t, realRejected), Series: "SELIC"}, "Requisição inválida!"},
		{Input{Path: bad, Series: "IGPM"}, `"IGPM" is no series`},
	} {
		if _, err := Read([]Input{tc.in}, Options{AsOf: engine.NoDate}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.in, err, tc.want)
		}
	}
}
