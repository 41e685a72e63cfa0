package cotahist

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

const (
	dirIbov  = "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/"
	dirBatch = "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/"
	fileD23  = dirIbov + "COTAHIST_D23032021.TXT.zst" // CRLF
	fileD25  = dirIbov + "COTAHIST_D25032021.TXT.zst" // LF
	fileD26  = dirIbov + "COTAHIST_D26032021.TXT.zst" // LF
	fileJun  = dirBatch + "COTAHIST_D25062021.TXT.zst"
	fileZip3 = dirBatch + "COTAHIST_D03022022.TXT.zip"
	fileZip4 = dirBatch + "COTAHIST_D04022022.TXT.zip"
	fileDemo = "b3-cotahist/lucasdf__b3-cotahist/DemoCotacoesHistoricas12022003.txt.zst"
	fileRb3  = "b3-cotahist/ropensci__rb3/COTAHIST_D04012016.TXT.zst"
)

func realPath(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := datafile.RealPath(rel)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func readReal(tb testing.TB, rel string) []byte {
	tb.Helper()
	b, err := datafile.ReadFile(realPath(tb, rel))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func importFiles(tb testing.TB, opt Options, rels ...string) Result {
	tb.Helper()
	im := NewImporter(opt)
	for _, rel := range rels {
		if err := im.ImportFile(realPath(tb, rel)); err != nil {
			tb.Fatal(err)
		}
	}
	return im.Result()
}

func find(tb testing.TB, res Result, ticker string) (*engine.Series, *Security) {
	tb.Helper()
	for i := range res.Series {
		if res.Series[i].Ticker == ticker {
			return &res.Series[i], &res.Securities[i]
		}
	}
	tb.Fatalf("ticker %s not imported", ticker)
	return nil, nil
}

func day(y, m, d int) engine.Date { return engine.MakeDate(y, time.Month(m), d) }

func near(a engine.Num, b float64) bool { return math.Abs(float64(a)-b) < 1e-9 }

// TestPETR4 checks a ticker's bar against the 2021-03-26 file's PETR4 record
// (PREABE 2348, PREMAX 2388, PREMIN 2311, PREULT 2346, TOTNEG 64400,
// QUATOT 60918600, VOLTOT 143317769400).
func TestPETR4(t *testing.T) {
	res := importFiles(t, Options{}, fileD26)
	s, sec := find(t, res, "PETR4")
	if s.Len() != 1 || s.Dates[0] != day(2021, 3, 26) {
		t.Fatalf("dates %v", s.Dates)
	}
	if !near(s.Open[0], 23.48) || !near(s.High[0], 23.88) || !near(s.Low[0], 23.11) || !near(s.Close[0], 23.46) {
		t.Errorf("OHLC %v %v %v %v", s.Open[0], s.High[0], s.Low[0], s.Close[0])
	}
	if !near(s.Volume[0], 1433177694.00) || s.Quantity[0] != 60918600 || s.Trades[0] != 64400 {
		t.Errorf("volume %v quantity %d trades %d", s.Volume[0], s.Quantity[0], s.Trades[0])
	}
	want := Security{Ticker: "PETR4", ISIN: "BRPETRACNPR6", StockType: engine.ClassPS, Spec: "PN      N2", Name: "PETROBRAS", BDI: 2, First: day(2021, 3, 26), Last: day(2021, 3, 26)}
	if *sec != want {
		t.Errorf("security %+v, want %+v", *sec, want)
	}
	// ABEV3 ON, HGLG11 FII (board 12), BOVA11 ETF (board 14).
	for _, c := range []struct {
		ticker, class, isin string
		close               float64
	}{
		{"ABEV3", engine.ClassCS, "BRABEVACNOR1", 15.15},
		{"HGLG11", engine.ClassFundUnit, "BRHGLGCTF004", 169.70},
		{"BOVA11", engine.ClassFundUnit, "BRBOVACTF003", 110.28},
	} {
		s, sec := find(t, res, c.ticker)
		if sec.StockType != c.class || sec.ISIN != c.isin || !near(s.Close[0], c.close) {
			t.Errorf("%s: %+v close %v", c.ticker, sec, s.Close[0])
		}
	}
}

// TestStandardLotCounts checks the number of distinct cash-market BDI 02
// tickers of every complete sample day, and the record counts.
func TestStandardLotCounts(t *testing.T) {
	for _, c := range []struct {
		rel      string
		records  int64
		lines    int64
		standard int
		date     engine.Date
	}{
		{fileD23, 6055, 6057, 741, day(2021, 3, 23)},
		{fileD25, 6212, 6214, 744, day(2021, 3, 25)},
		{fileD26, 6100, 6102, 737, day(2021, 3, 26)},
		{fileJun, 7518, 7520, 745, day(2021, 6, 25)},
		{fileZip3, 7261, 7263, 815, day(2022, 2, 3)},
		{fileZip4, 7522, 7524, 819, day(2022, 2, 4)},
		{fileDemo, 551, 553, 179, day(2003, 2, 12)},
	} {
		t.Run(filepath.Base(c.rel), func(t *testing.T) {
			im := NewImporter(Options{Boards: []int{BoardStandardLot}})
			if err := im.ImportFile(realPath(t, c.rel)); err != nil {
				t.Fatal(err)
			}
			res := im.Result()
			st := res.Stats
			if st.Records != c.records || st.Lines != c.lines {
				t.Errorf("records %d lines %d, want %d %d", st.Records, st.Lines, c.records, c.lines)
			}
			var unmapped int64
			for _, n := range st.SkippedSpec {
				unmapped += n
			}
			if got := len(res.Series) + int(unmapped); got != c.standard {
				t.Errorf("standard-lot tickers %d (+%d unmapped specs %v), want %d", len(res.Series), unmapped, st.SkippedSpec, c.standard)
			}
			for _, s := range res.Series {
				if s.Len() != 1 || s.Dates[0] != c.date {
					t.Fatalf("%s: dates %v", s.Ticker, s.Dates)
				}
			}
			if st.Kept+unmapped+sum(st.SkippedBoard)+sum(st.SkippedMarket) != st.Records {
				t.Errorf("kept %d + skipped do not add up to %d records", st.Kept, st.Records)
			}
		})
	}
}

func sum[K comparable](m map[K]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestSkipped checks what the default filter leaves out of the 2021-03-26
// file: 2204 call options (BDI 78, TPMERC 070), 446 forwards (TPMERC 030),
// 439 odd-lot records (TPMERC 020), and rights (DIR) by specification.
func TestSkipped(t *testing.T) {
	st := importFiles(t, Options{}, fileD26).Stats
	if st.SkippedMarket[70] != 2204+36 || st.SkippedMarket[30] != 446 || st.SkippedMarket[20] != 439 {
		t.Errorf("skipped markets %v", st.SkippedMarket)
	}
	if st.SkippedSpec["DIR"] == 0 || st.SkippedBoard[22] != 9 {
		t.Errorf("skipped specs %v boards %v", st.SkippedSpec, st.SkippedBoard)
	}
	res := importFiles(t, Options{OddLot: true}, fileD26)
	_, sec := find(t, res, "PETR4F")
	if sec.BDI != BoardOddLot || sec.StockType != engine.ClassPS {
		t.Errorf("odd lot %+v", sec)
	}
}

// TestFactor checks that prices quoted per 1000 shares (FATCOT 1000) are
// divided: FNAM11 closed at 0,19 per thousand on 2021-06-25.
func TestFactor(t *testing.T) {
	s, _ := find(t, importFiles(t, Options{}, fileJun), "FNAM11")
	if !near(s.Close[0], 0.00019) {
		t.Errorf("FNAM11 close %v", s.Close[0])
	}
}

// TestTrailerMismatch checks the edited extract whose trailer says 1745
// records while 506 lines are present.
func TestTrailerMismatch(t *testing.T) {
	im := NewImporter(Options{})
	err := im.ImportFile(realPath(t, fileRb3))
	if !errors.Is(err, ErrTrailer) || !strings.Contains(err.Error(), "trailer counts 1745 records but the file has 506 lines") {
		t.Fatalf("error %v", err)
	}
	im = NewImporter(Options{Lenient: true})
	if err := im.ImportFile(realPath(t, fileRb3)); err != nil {
		t.Fatal(err)
	}
	res := im.Result()
	if res.Stats.Records != 504 || len(res.Stats.TrailerProblems) != 1 || !strings.Contains(res.Stats.TrailerProblems[0], "1745") {
		t.Errorf("lenient stats %+v", res.Stats)
	}
}

// fingerprint renders a Result's rows as text (NaN compares equal).
func fingerprint(res Result) string {
	var b strings.Builder
	for i, s := range res.Series {
		fmt.Fprintf(&b, "%+v\n", res.Securities[i])
		for j := range s.Dates {
			fmt.Fprintf(&b, "%s %v %v %v %v %v %d %d\n", s.Dates[j], s.Open[j], s.High[j], s.Low[j], s.Close[j], s.Volume[j], s.Quantity[j], s.Trades[j])
		}
	}
	return b.String()
}

// TestLineEnds checks that the CRLF official file and its LF form give the
// same rows, and that the sample really is CRLF.
func TestLineEnds(t *testing.T) {
	crlf := readReal(t, fileD23)
	if !bytes.Contains(crlf, []byte("\r\n")) {
		t.Fatal("sample is not CRLF")
	}
	lf := bytes.ReplaceAll(crlf, []byte("\r\n"), []byte("\n"))
	get := func(b []byte) Result {
		im := NewImporter(Options{})
		if err := im.Import(bytes.NewReader(b), "x"); err != nil {
			t.Fatal(err)
		}
		return im.Result()
	}
	a, b := get(crlf), get(lf)
	if fingerprint(a) != fingerprint(b) || len(a.Series) == 0 {
		t.Error("CRLF and LF give different rows")
	}
	// No final line end at all.
	c := get(bytes.TrimRight(lf, "\n"))
	if fingerprint(a) != fingerprint(c) {
		t.Error("missing final line end changes the rows")
	}
}

// TestSeveralDays checks a 3-day history and that file order does not
// matter; a file read twice replaces its own rows.
func TestSeveralDays(t *testing.T) {
	a := importFiles(t, Options{}, fileD23, fileD25, fileD26)
	b := importFiles(t, Options{}, fileD26, fileD23, fileD25, fileD23)
	if fingerprint(a) != fingerprint(b) {
		t.Error("file order changes the result")
	}
	if b.Stats.Replaced == 0 || a.Stats.Replaced != 0 {
		t.Errorf("replaced %d %d", a.Stats.Replaced, b.Stats.Replaced)
	}
	s, sec := find(t, a, "PETR4")
	want := []engine.Date{day(2021, 3, 23), day(2021, 3, 25), day(2021, 3, 26)}
	if fmt.Sprint(s.Dates) != fmt.Sprint(want) || !near(s.Close[0], 22.80) || !near(s.Close[1], 23.20) || !near(s.Close[2], 23.46) {
		t.Errorf("PETR4 %v %v", s.Dates, s.Close)
	}
	if sec.First != want[0] || sec.Last != want[2] {
		t.Errorf("first/last %v %v", sec.First, sec.Last)
	}
}

func TestMalformed(t *testing.T) {
	base := readReal(t, fileD26)
	lines := bytes.SplitAfter(base, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	edit := func(line, col int, v string) []byte {
		cp := make([][]byte, len(lines))
		copy(cp, lines)
		l := append([]byte(nil), cp[line-1]...)
		copy(l[col-1:], v)
		cp[line-1] = l
		return bytes.Join(cp, nil)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"price", edit(10, 110, "X"), "f:10:110: column 110 (PREULT): not a number"},
		{"date", edit(10, 7, "13"), "f:10:3: column 3 (DATPRE): not a date"},
		{"type", edit(10, 1, "07"), "f:10:1: column 1 (TIPREG): unknown record type"},
		{"short", bytes.Replace(base, lines[9], append(append([]byte(nil), lines[9][:200]...), '\n'), 1), "f:10:201: column 201 (record): record is 200 characters long"},
		{"header", base[len(lines[0]):], "f:1:1: header: column 1 (TIPREG): first record is not a header (00)"},
		{"origin", edit(1, 16, "BMF    "), "f:1:16: header"},
		{"no trailer", bytes.Join(lines[:len(lines)-1], nil), "no trailer record"},
		{"after trailer", append(append([]byte(nil), base...), lines[5]...), "f:6103: record after the trailer"},
		{"empty", nil, "empty file"},
		{"blank line", bytes.Replace(base, lines[9], []byte("\n"), 1), "f:10: empty line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			im := NewImporter(Options{})
			err := im.Import(bytes.NewReader(c.in), "f")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
	// Lenient mode skips and counts malformed records.
	im := NewImporter(Options{Lenient: true})
	if err := im.Import(bytes.NewReader(edit(10, 110, "X")), "f"); err != nil {
		t.Fatal(err)
	}
	if st := im.Result().Stats; st.Malformed != 1 || st.Records != 6099 {
		t.Errorf("lenient: malformed %d records %d", st.Malformed, st.Records)
	}
}

func TestStockType(t *testing.T) {
	for spec, want := range map[string]string{
		"ON      NM": engine.ClassCS, "ON": engine.ClassCS, "PN      N2": engine.ClassPS, "PNA     N1": engine.ClassPSA,
		"PNB": engine.ClassPSB, "PNC": engine.ClassPSC, "PND": engine.ClassPSD, "PNE": engine.ClassPSE, "UNT     N2": engine.ClassUnit,
		"CI": engine.ClassFundUnit, "CI *": engine.ClassFundUnit, "DR3": engine.ClassBDR, "DRN": engine.ClassBDR, "DRN  ED": engine.ClassBDR,
		"PNA*": engine.ClassPSA, "UNT*    N2": engine.ClassUnit, "ON*": engine.ClassCS, "DRE": engine.ClassBDR, "FIDC": engine.ClassFundUnit,
		// A status (EJ, ED, ER, EA...) follows a '*' in column 4, or a
		// four-letter type, with no blank: "FIDCER", "RON*EJ".
		"FIDCER": engine.ClassFundUnit, "FIDCEA": engine.ClassFundUnit, "PNA*EJ": engine.ClassPSA, "PNB*ED  N1": engine.ClassPSB,
		"UNT*EJ  N2": engine.ClassUnit, "ON *EJ  N1": engine.ClassCS,
		"DIR": "", "PNF": "", "TPR": "", "BNS": "", "": "", "REC": "", "R42*EJ": "", "RON*EJ": "", "DIR*ORD N1": "", "*": "", "*EJ": "",
	} {
		got, sponsored, ok := StockType([]byte(spec))
		if got != want || ok != (want != "") {
			t.Errorf("StockType(%q) = %q %v", spec, got, ok)
		}
		if sponsored != (spec == "DR3") {
			t.Errorf("StockType(%q) sponsored %v", spec, sponsored)
		}
	}
}

func TestParseRecordFields(t *testing.T) {
	b := readReal(t, fileD26)
	i := bytes.Index(b, []byte("012021032602PETR4 "))
	var r Record
	if err := ParseRecord(b[i:i+RecordLen], &r); err != nil {
		t.Fatal(err)
	}
	if r.Avg != 2352 || r.BestBid != 2345 || r.BestAsk != 2346 || r.Factor != 1 || r.Expiry != day(9999, 12, 31) ||
		string(r.Currency) != "R$" || r.Distribution != 197 || r.Market != MarketCash || r.BDI != 2 {
		t.Errorf("%+v", r)
	}
}

func TestImportFileErrors(t *testing.T) {
	dir := t.TempDir()
	im := NewImporter(Options{})
	if err := im.ImportFile(filepath.Join(dir, "none.TXT")); err == nil {
		t.Error("missing file: no error")
	}
	bad := filepath.Join(dir, "bad.ZIP")
	os.WriteFile(bad, []byte("PK not a zip"), 0o644)
	if err := im.ImportFile(bad); err == nil || !strings.Contains(err.Error(), "bad.ZIP") {
		t.Errorf("bad zip: %v", err)
	}
}

func FuzzRecord(f *testing.F) {
	b := readReal(f, fileD26)
	for i, line := range bytes.Split(b, []byte("\n")) {
		if i%500 == 0 || i < 3 {
			f.Add(line)
		}
	}
	f.Add([]byte("01"))
	f.Fuzz(func(t *testing.T, line []byte) {
		var r Record
		if err := ParseRecord(line, &r); err == nil {
			if len(line) != RecordLen || r.Factor < 1 || len(r.Ticker) == 0 {
				t.Fatalf("accepted %q", line)
			}
		}
		ParseHeader(line)
		ParseTrailer(line)
		im := NewImporter(Options{Lenient: true, OddLot: true})
		im.Import(bytes.NewReader(line), "fuzz")
		im.Result()
	})
}

// TestZipAndGzip reads an archive of two daily files (as a monthly or
// annual ZIP would hold) and a gzip-compressed file.
func TestZipAndGzip(t *testing.T) {
	dir := t.TempDir()
	zpath := filepath.Join(dir, "COTAHIST_M032021.ZIP")
	f, err := os.Create(zpath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, rel := range []string{fileD23, fileD25} {
		w, _ := zw.Create(strings.TrimSuffix(filepath.Base(rel), ".zst"))
		w.Write(readReal(t, rel))
	}
	zw.Close()
	f.Close()
	gpath := filepath.Join(dir, "COTAHIST_D26032021.TXT.gz")
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(readReal(t, fileD26))
	gw.Close()
	os.WriteFile(gpath, gz.Bytes(), 0o644)
	im := NewImporter(Options{})
	for _, p := range []string{zpath, gpath} {
		if err := im.ImportFile(p); err != nil {
			t.Fatal(err)
		}
	}
	res := im.Result()
	if fingerprint(res) != fingerprint(importFiles(t, Options{}, fileD23, fileD25, fileD26)) || res.Stats.Files != 3 {
		t.Error("archive and gzip give other rows than the plain files")
	}
	empty := filepath.Join(dir, "empty.zip")
	f, _ = os.Create(empty)
	zip.NewWriter(f).Close()
	f.Close()
	if err := NewImporter(Options{}).ImportFile(empty); err == nil || !strings.Contains(err.Error(), "holds no file") {
		t.Errorf("empty archive: %v", err)
	}
}
