package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pregao/pregao/engine"
)

func TestReadSmall(t *testing.T) {
	u := mustRead(t, smallDir)
	counts := []struct {
		name      string
		got, want int
	}{
		{"sectors", len(u.Sectors), 16},
		{"companies", len(u.Companies), 4},
		{"securities", len(u.Securities), 8},
		{"renames", len(u.Renames), 1},
		{"daily", len(u.Daily), 8},
		{"intraday", len(u.Intraday), 2},
		{"indexes", len(u.Indexes), 2},
		{"reports", len(u.Reports), 8},
		{"shares", len(u.Shares), 3},
		{"cash", len(u.CashActions), 4},
		{"share actions", len(u.ShareActions), 3},
		{"fund reports", len(u.FundReports), 1},
		{"insider", len(u.InsiderReports), 1},
		{"documents", len(u.Documents), 1},
	}
	for _, c := range counts {
		if c.got != c.want {
			t.Errorf("%s: got %d, want %d", c.name, c.got, c.want)
		}
	}
	if want := time.Date(2024, 3, 28, 21, 0, 0, 0, time.UTC); !u.Meta.AsOf.Equal(want) {
		t.Errorf("as_of %v", u.Meta.AsOf)
	}
	// canonical order: companies by id, securities by ticker, series by ticker
	if u.Companies[0].ID != "11222333000181" || u.Securities[0].Ticker != "EHZN3" || u.Daily[0].Ticker != "EHZN3" {
		t.Errorf("order: %s %s %s", u.Companies[0].ID, u.Securities[0].Ticker, u.Daily[0].Ticker)
	}
	var orbt *engine.Company
	for i := range u.Companies {
		if u.Companies[i].Symbol == "ORBT" {
			orbt = &u.Companies[i]
		}
	}
	if orbt == nil || orbt.Kind != engine.KindBDR || !orbt.BDRSponsored || orbt.FreeFloat.Valid() || orbt.FoundingDate.Valid() || orbt.Employees != -1 {
		t.Errorf("ORBT: %+v", orbt)
	}
	// GSUL omits founding_date: absent, not 1970-01-01
	if u.Companies[0].FoundingDate != engine.NoDate {
		t.Errorf("omitted founding_date = %v", u.Companies[0].FoundingDate)
	}
	var unit *engine.Series
	var selic *engine.Series
	for i := range u.Daily {
		switch u.Daily[i].Ticker {
		case "ENHZ11":
			unit = &u.Daily[i]
		case "SELIC":
			selic = &u.Daily[i]
		}
	}
	if unit.Len() != 3 || unit.Open[0].Valid() || unit.Close[0] != 121.5 || unit.Dates[2] != engine.MakeDate(2024, 3, 28) {
		t.Errorf("ENHZ11: %+v", unit)
	}
	if selic.Volume[0].Valid() || selic.Quantity[0] != 0 || selic.Close[3] != 10.65 {
		t.Errorf("SELIC: %+v", selic)
	}
	if got := u.Intraday[0].Times[1]; got != time.Date(2024, 3, 28, 13, 1, 0, 0, time.UTC).Unix() {
		t.Errorf("intraday time %d", got)
	}
	// reports: canonical order puts statements in engine.Statements order; versions ascending
	if u.Reports[0].Statement.String() != "BPA" || u.Reports[0].StartDate.Valid() {
		t.Errorf("first report %s start %v", u.Reports[0].Statement, u.Reports[0].StartDate)
	}
	dre := u.Reports[2]
	if dre.Statement.String() != "DRE" || dre.Version != 1 || u.Reports[3].Version != 2 || dre.Accounts[9].Code() != "3.99.01.01" || dre.Accounts[9].Value != 3.4812 {
		t.Errorf("DRE: %s v%d %+v", dre.Statement, dre.Version, dre.Accounts[9])
	}
	last := u.Reports[7].Accounts[5]
	if u.Reports[7].Statement.String() != "DFC_MD" || last.Value.Valid() || last.Fixed() {
		t.Errorf("null account value: %+v", last)
	}
	ca := u.CashActions[2] // [0] is GSUL11 (company 11222333000181)
	if ca.EventID != "ENHZ-2024-JCP1-CS" || ca.Version != 2 || ca.Installments.Len() != 2 || ca.Installments.All()[1].PaymentDate != engine.MakeDate(2024, 8, 15) || ca.CorrectionStart.Valid() {
		t.Errorf("cash action: %+v", ca)
	}
	var spin *engine.ShareAction
	for i := range u.ShareActions {
		if u.ShareActions[i].Type == engine.ActSpinOff {
			spin = &u.ShareActions[i]
		}
	}
	if spin == nil || spin.Factor.Valid() || len(spin.Legs) != 2 || spin.Legs[1].Factor != 0.1 {
		t.Errorf("spin-off: %+v", spin)
	}
	mv := u.InsiderReports[0].Movements[2]
	if mv.Date.Valid() || mv.Price.Valid() || mv.Quantity != 150000 {
		t.Errorf("movement: %+v", mv)
	}
	if w := u.Indexes[1].Members[0].TheoreticalQty; w.Valid() {
		t.Errorf("IFIX qty %v", w)
	}
	if u.Derived.Catalog != nil || u.Derived.Ratios != nil {
		t.Error("Derived filled")
	}
}

func TestRoundTrip(t *testing.T) {
	u := mustRead(t, smallDir)
	for _, comp := range []string{"", CompressZstd, CompressGzip, CompressNone} {
		t.Run("c="+comp, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, u, WriteOptions{Compression: comp}); err != nil {
				t.Fatal(err)
			}
			u2 := mustRead(t, dir)
			if d := diff(u, u2); d != "" {
				t.Fatalf("round trip differs at %s", d)
			}
			// a second write is byte-identical
			dir2 := t.TempDir()
			if err := Write(dir2, u2, WriteOptions{Compression: comp}); err != nil {
				t.Fatal(err)
			}
			assertSameDir(t, dir, dir2)
		})
	}
}

func assertSameDir(t *testing.T, a, b string) {
	t.Helper()
	ea, _ := os.ReadDir(a)
	eb, _ := os.ReadDir(b)
	if len(ea) != len(eb) {
		t.Fatalf("%d files vs %d", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].Name() != eb[i].Name() {
			t.Fatalf("file %s vs %s", ea[i].Name(), eb[i].Name())
		}
		ba, _ := os.ReadFile(filepath.Join(a, ea[i].Name()))
		bb, _ := os.ReadFile(filepath.Join(b, eb[i].Name()))
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s differs", ea[i].Name())
		}
	}
}

func TestWriteDoesNotModifyInput(t *testing.T) {
	u := mustRead(t, smallDir)
	// reverse some slices: Write must canonicalise a copy
	for i, j := 0, len(u.Companies)-1; i < j; i, j = i+1, j-1 {
		u.Companies[i], u.Companies[j] = u.Companies[j], u.Companies[i]
	}
	first := u.Companies[0].ID
	dir := t.TempDir()
	if err := Write(dir, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u.Companies[0].ID != first {
		t.Error("Write reordered its input")
	}
	u2 := mustRead(t, dir)
	Canonicalize(u)
	if d := diff(u, u2); d != "" {
		t.Fatal(d)
	}
}

func TestWriteReplacesOtherCompression(t *testing.T) {
	u := mustRead(t, smallDir)
	dir := t.TempDir()
	if err := Write(dir, u, WriteOptions{Compression: CompressGzip}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, u, WriteOptions{Compression: CompressZstd}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".gz") || strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left over: %s", e.Name())
		}
		if fi, _ := e.Info(); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s mode %v", e.Name(), fi.Mode())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Error("README.md removed")
	}
	mustRead(t, dir)
}

func TestWriteNil(t *testing.T) {
	if err := Write(t.TempDir(), nil, WriteOptions{}); err == nil {
		t.Fatal("no error")
	}
}

func TestWriteBadCompression(t *testing.T) {
	err := Write(t.TempDir(), &engine.Universe{}, WriteOptions{Compression: "lz4"})
	if err == nil || !strings.Contains(err.Error(), "lz4") {
		t.Fatalf("err = %v", err)
	}
}

// TestLineOrder checks that the order of lines (and of ticker runs in the
// CSV files) does not change the result: Read canonicalises.
func TestLineOrder(t *testing.T) {
	want := mustRead(t, smallDir)
	dir := copyDir(t, smallDir)
	for _, f := range Files {
		path := filepath.Join(dir, f)
		b, err := os.ReadFile(path)
		if err != nil || f == FileMeta {
			continue
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if strings.HasSuffix(f, ".csv") {
			// move the last ticker's run first, keep the header
			head, rows := lines[0], lines[1:]
			last := strings.SplitN(rows[len(rows)-1], ",", 2)[0]
			k := len(rows)
			for k > 0 && strings.HasPrefix(rows[k-1], last+",") {
				k--
			}
			rows = append(append([]string{}, rows[k:]...), rows[:k]...)
			lines = append([]string{head}, rows...)
		} else {
			for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\r\n")+"\r\n\r\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := mustRead(t, dir)
	if d := diff(want, got); d != "" {
		t.Fatalf("differs at %s", d)
	}
}

func TestCompressedInput(t *testing.T) {
	dir := copyDir(t, smallDir)
	b, _ := os.ReadFile(filepath.Join(dir, FileCompanies))
	enc, _ := zstd.NewWriter(nil)
	if err := os.WriteFile(filepath.Join(dir, FileCompanies+".zst"), enc.EncodeAll(b, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, FileCompanies))
	if d := diff(mustRead(t, smallDir), mustRead(t, dir)); d != "" {
		t.Fatal(d)
	}
}

func TestBOM(t *testing.T) {
	dir := copyDir(t, smallDir)
	for _, f := range []string{FileDaily, FileCompanies} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		os.WriteFile(filepath.Join(dir, f), append([]byte("\xef\xbb\xbf"), b...), 0o644)
	}
	mustRead(t, dir)
}

func TestEmptyRequiredFiles(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileMeta), []byte(`{"as_of":"2024-01-02T21:00:00Z"}`), 0o644)
	os.WriteFile(filepath.Join(dir, FileCompanies), nil, 0o644)
	os.WriteFile(filepath.Join(dir, FileSecurities), nil, 0o644)
	u := mustRead(t, dir)
	if len(u.Companies) != 0 || u.Meta.Description != "" {
		t.Fatalf("%+v", u)
	}
}

func TestErrorLimit(t *testing.T) {
	dir := copyDir(t, smallDir)
	var b strings.Builder
	b.WriteString(DailyHeader + "\n")
	for i := range 50 {
		b.WriteString("ENHZ3,2024-03-" + string(rune('1'+i%9)) + "x,1,1,1,1,1,1,1\n")
	}
	os.WriteFile(filepath.Join(dir, FileDaily), []byte(b.String()), 0o644)
	_, err := Read(dir)
	var el *ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("err = %v", err)
	}
	if len(el.Errors) != MaxErrors || !el.Truncated || !strings.Contains(err.Error(), "stopped after 20") {
		t.Fatalf("%d errors, truncated %v", len(el.Errors), el.Truncated)
	}
	if el.Errors[0].Line != 2 || el.Errors[0].File != FileDaily || el.Errors[0].Field != "date" {
		t.Fatalf("first: %+v", el.Errors[0])
	}
}

func TestReadMissingDir(t *testing.T) {
	if _, err := Read(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("no error")
	}
}

func TestParseNum(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "38.45", "0.1", "-12.5", "123456789012345", "1234567890123456789", "0.000001", "1e-7", "2.5E+30", "1.7976931348623157e308", "4.9e-324", ".5", "5.", "007.10"} {
		got, ok := parseNum([]byte(s))
		want, err := parseFloatStd(s)
		if !ok || err != nil || math.Float64bits(float64(got)) != math.Float64bits(want) {
			t.Errorf("parseNum(%q) = %v, %v; want %v (%v)", s, got, ok, want, err)
		}
	}
	for _, s := range []string{"NaN", "Inf", "-inf", "1e400", "1,5", "0x10", "abc", "-", ".", "1.2.3", " 1", "1_000"} {
		if v, ok := parseNum([]byte(s)); ok {
			t.Errorf("parseNum(%q) = %v, want failure", s, v)
		}
	}
	if v, ok := parseNum(nil); !ok || v.Valid() {
		t.Error("empty cell is not Null")
	}
}

func TestAppendNumRoundTrip(t *testing.T) {
	for _, f := range []float64{0, 1, -1, 0.1, 38.45, 1e-7, 1e21, 123456789.123, math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5e-300, 1e20} {
		b := appendNum(nil, engine.Num(f))
		got, ok := parseNum(b)
		if !ok || float64(got) != f {
			t.Errorf("%v -> %s -> %v", f, b, got)
		}
	}
	if b := appendNum(nil, engine.Null); len(b) != 0 {
		t.Errorf("Null -> %q", b)
	}
	if b := appendNum(nil, 1234567); string(b) != "1234567" {
		t.Errorf("1234567 -> %s", b)
	}
}

func TestParseDateTime(t *testing.T) {
	for _, s := range []string{"1970-01-01", "2000-02-29", "2024-12-31", "1900-03-01", "0001-01-01", "9999-12-31"} {
		d, ok := parseDateBytes([]byte(s))
		want, err := engine.ParseDate(s)
		if !ok || err != nil || d != want {
			t.Errorf("%s: %v %v want %v", s, d, ok, want)
		}
	}
	for _, s := range []string{"2023-02-29", "2024-13-01", "2024-00-10", "2024-01-32", "2024-1-01", "24-01-01", "2024/01/01", ""} {
		if _, ok := parseDateBytes([]byte(s)); ok {
			t.Errorf("%s accepted", s)
		}
	}
	for _, c := range []struct {
		s    string
		want int64
		ok   bool
	}{
		{"2024-03-28T13:05:00Z", time.Date(2024, 3, 28, 13, 5, 0, 0, time.UTC).Unix(), true},
		{"2024-03-28T10:05:00-03:00", time.Date(2024, 3, 28, 13, 5, 0, 0, time.UTC).Unix(), true},
		{"1969-12-31T23:59:59Z", -1, true},
		{"2024-03-28T24:00:00Z", 0, false},
		{"2024-03-28T13:05:00.5Z", 0, false},
		{"2024-03-28 13:05:00", 0, false},
	} {
		got, ok := parseTimeBytes([]byte(c.s))
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: %d %v", c.s, got, ok)
		}
		if ok {
			if back := appendTime(nil, got); c.s[len(c.s)-1] == 'Z' && string(back) != c.s {
				t.Errorf("appendTime %s", back)
			}
		}
	}
}

func TestZeroAlloc(t *testing.T) {
	line := []byte("PETR4,2024-03-28,38.05,38.6,37.9,38.44,92733120.2,2412300,15022")
	var fields [9][]byte
	n := testing.AllocsPerRun(100, func() {
		splitCSV(line, fields[:])
		for i := 2; i < 7; i++ {
			parseNum(fields[i])
		}
		parseDateBytes(fields[1])
		parseInt(fields[7])
		parseTimeBytes([]byte("2024-03-28T13:05:00Z"))
	})
	if n > 0 {
		t.Errorf("row parsing allocates %v times", n)
	}
}

func TestValidators(t *testing.T) {
	for s, want := range map[string]bool{"PETR4": true, "TAEE11": true, "ABCD": true, "AB1D34": true, "petr4": false, "PET": false, "PETR4F": false, "PETR123": false, "PE-R4": false, "": false} {
		if reTicker.MatchString(s) != want {
			t.Errorf("reTicker(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{"1": true, "1.01": true, "3.99.01.01": true, "": false, "1.": false, ".1": false, "1..2": false, "1.a": false} {
		if validAccount(s) != want {
			t.Errorf("validAccount(%q) != %v", s, want)
		}
	}
}

// TestReadJSONLBatches reads a file of several batches: results stay in
// file order with their line numbers, and a bad line deep in the file is
// named by its number.
func TestReadJSONLBatches(t *testing.T) {
	var b strings.Builder
	desc := strings.Repeat("x", 400)
	const n = 6000
	for i := range n {
		if i == 10 {
			b.WriteString("\n") // blank lines are skipped but counted
		}
		fmt.Fprintf(&b, `{"company_id":"%d","name":"C%d","kind":"COMPANY","description":"%s"}`+"\n", i+1, i, desc)
	}
	c := &collector{}
	rs, err := readJSONL(strings.NewReader(b.String()), FileCompanies, c, defCompany, convCompany)
	if err != nil || c.count() > 0 {
		t.Fatal(err, c.err(fileOrder))
	}
	if len(rs) != n {
		t.Fatalf("%d records", len(rs))
	}
	for i, r := range rs {
		wantLine := i + 1
		if i >= 10 {
			wantLine++
		}
		if r.line != wantLine || r.v.Name != fmt.Sprintf("C%d", i) {
			t.Fatalf("record %d: line %d name %s", i, r.line, r.v.Name)
		}
	}
	bad := strings.Replace(b.String(), `"name":"C4320"`, `"name":4320`, 1)
	c = &collector{}
	if _, err := readJSONL(strings.NewReader(bad), FileCompanies, c, defCompany, convCompany); err != nil {
		t.Fatal(err)
	}
	if err := c.err(fileOrder); err == nil || !strings.Contains(err.Error(), `companies.jsonl:4322: field "name": want a string, got 4320`) {
		t.Fatalf("err = %v", err)
	}
}

// TestDailyChunks parses the same CSV files with chunks of every small
// size, so that runs of a ticker, order and grouping problems fall on
// chunk boundaries, and compares with a single chunk.
func TestDailyChunks(t *testing.T) {
	good, _ := os.ReadFile(filepath.Join(smallDir, FileDaily))
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	swapped := append([]string{}, lines...)
	swapped[6], swapped[7] = swapped[7], swapped[6] // ENHZ3 dates out of order
	regroup := append(append([]string{}, lines...), "EHZN3,2024-01-05,1,1,1,1,1,1,1")
	dupDate := append([]string{}, lines...)
	dupDate[3] = strings.Replace(dupDate[3], "2023-12-28", "2023-12-27", 1)
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"good", string(good), nil},
		{"order", strings.Join(swapped, "\n"), []string{`daily.csv:8: field "date": 2024-03-27 not after the previous row of ENHZ3`}},
		{"regroup", strings.Join(regroup, "\n"), []string{`daily.csv:32: field "ticker": rows of EHZN3 are not contiguous (its first run starts at line 2)`}},
		{"dup date", strings.Join(dupDate, "\n"), []string{`daily.csv:4: field "date": 2023-12-27 not after the previous row of EHZN3`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ref []engine.Series
			for size := 1; size <= len(c.text)+1; size += 7 {
				col := &collector{}
				cs, err := parseColumnsChunked(strings.NewReader(c.text), FileDaily, false, col, size)
				if err != nil {
					t.Fatal(err)
				}
				got := col.err(fileOrder)
				if c.want == nil {
					if got != nil {
						t.Fatalf("size %d: %v", size, got)
					}
					s := cs.daily(false)
					if ref == nil {
						ref = s
					} else if d := diff(ref, s); d != "" {
						t.Fatalf("size %d differs at %s", size, d)
					}
					// daily(true) releases the rows chunk by chunk and
					// must give the same series.
					dropped := cs.daily(true)
					if d := diff(ref, dropped); d != "" {
						t.Fatalf("size %d: daily(true) differs at %s", size, d)
					}
					if cs.chunks != nil || cs.n != 0 {
						t.Fatalf("size %d: rows kept after daily(true)", size)
					}
					continue
				}
				if got == nil {
					t.Fatalf("size %d: no error", size)
				}
				if el := got.(*ErrorList); len(el.Errors) != len(c.want) {
					t.Errorf("size %d: %v", size, got)
				}
				for _, w := range c.want {
					if !strings.Contains(got.Error(), w) {
						t.Errorf("size %d: %v lacks %q", size, got, w)
					}
				}
			}
		})
	}
}

// meta.json carries the position in the live stream (absent: unknown)
// through a write and a read.
func TestMetaStreamPosition(t *testing.T) {
	u := mustRead(t, smallDir)
	if u.Meta.Stream.Known() {
		t.Fatalf("small bundle has a stream position %+v", u.Meta.Stream)
	}
	u.Meta.Stream = engine.StreamPosition{Next: 42, Name: "PREGAO_LIVE", Session: engine.MakeDate(2024, 3, 28), Batch: 7}
	dir := t.TempDir()
	if err := Write(dir, u, WriteOptions{Compression: CompressNone}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileMeta))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"stream":{"next":42,"name":"PREGAO_LIVE","session":"2024-03-28","batch":7}`; !bytes.Contains(b, []byte(want)) {
		t.Errorf("meta.json = %s, want it to hold %s", b, want)
	}
	if got := mustRead(t, dir).Meta.Stream; got != u.Meta.Stream {
		t.Errorf("read back %+v, want %+v", got, u.Meta.Stream)
	}
}

// With ReadOptions.Daily, every daily series of the bundle is handed
// over whole, and the universe keeps their tickers, dates and closes;
// the rest of the universe is Read's. The sink's error ends the read.
func TestReadHandsDailyOver(t *testing.T) {
	want := mustRead(t, smallDir)
	got := map[string]engine.Series{}
	u, err := ReadWith(smallDir, ReadOptions{Daily: func(s *engine.Series) error {
		if _, dup := got[s.Ticker]; dup {
			t.Errorf("%s handed over twice", s.Ticker)
		}
		c := engine.Series{Ticker: s.Ticker, Dates: slices.Clone(s.Dates), Close: slices.Clone(s.Close),
			Open: slices.Clone(s.Open), High: slices.Clone(s.High), Low: slices.Clone(s.Low),
			Volume: slices.Clone(s.Volume), Quantity: slices.Clone(s.Quantity), Trades: slices.Clone(s.Trades)}
		got[s.Ticker] = c
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Daily) == 0 || len(got) != len(want.Daily) || len(u.Daily) != len(want.Daily) {
		t.Fatalf("%d series handed over, %d kept, want %d", len(got), len(u.Daily), len(want.Daily))
	}
	for i, w := range want.Daily {
		if d := diff(got[w.Ticker], w); d != "" {
			t.Errorf("%s handed over: %s", w.Ticker, d)
		}
		k := engine.Series{Ticker: w.Ticker, Dates: w.Dates, Close: w.Close}
		if d := diff(u.Daily[i], k); d != "" {
			t.Errorf("series %d kept: %s", i, d)
		}
	}
	rest, wrest := *u, *want
	rest.Daily, wrest.Daily = nil, nil
	if d := diff(rest, wrest); d != "" {
		t.Errorf("the rest of the universe differs from Read's: %s", d)
	}
	bad := errors.New("disk full")
	if _, err := ReadWith(smallDir, ReadOptions{Daily: func(*engine.Series) error { return bad }}); !errors.Is(err, bad) {
		t.Errorf("sink's error: %v, want %v", err, bad)
	}
}

// A daily file parsed with a sink hands every series over whole, in
// file order, whatever the chunks' size, and keeps their tickers, dates
// and closes: the series a parse without one makes.
func TestParseColumnsSinkChunks(t *testing.T) {
	text := readSmallDaily(t)
	col := &collector{}
	cs, err := parseColumnsChunked(strings.NewReader(text), FileDaily, false, col, 1<<30)
	if err != nil || col.err(fileOrder) != nil {
		t.Fatal(err, col.err(fileOrder))
	}
	want := cs.daily(false)
	for size := 1; size <= len(text)+1; size += 97 {
		col := &collector{}
		var got []engine.Series
		cs, err := parseColumnsSink(strings.NewReader(text), FileDaily, false, col, size, func(s *engine.Series) error {
			got = append(got, engine.Series{Ticker: s.Ticker, Dates: slices.Clone(s.Dates), Close: slices.Clone(s.Close),
				Open: slices.Clone(s.Open), High: slices.Clone(s.High), Low: slices.Clone(s.Low),
				Volume: slices.Clone(s.Volume), Quantity: slices.Clone(s.Quantity), Trades: slices.Clone(s.Trades)})
			return nil
		})
		if err != nil || col.err(fileOrder) != nil {
			t.Fatal(size, err, col.err(fileOrder))
		}
		if d := diff(got, want); d != "" {
			t.Fatalf("chunks of %d bytes: handed over series differ at %s", size, d)
		}
		if len(cs.handed) != len(want) || len(cs.blocks) != len(want) || len(cs.chunks) != 0 {
			t.Fatalf("chunks of %d bytes: %d kept, %d blocks, %d chunks left", size, len(cs.handed), len(cs.blocks), len(cs.chunks))
		}
		for i, w := range want {
			if d := diff(cs.handed[i], engine.Series{Ticker: w.Ticker, Dates: w.Dates, Close: w.Close}); d != "" {
				t.Fatalf("chunks of %d bytes: series %d kept: %s", size, i, d)
			}
		}
	}
}

// readSmallDaily returns the daily file of the small test bundle.
func readSmallDaily(t *testing.T) string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(smallDir, "daily.csv*"))
	if err != nil || len(names) != 1 {
		t.Fatal(names, err)
	}
	f, err := os.Open(names[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, err := decompress(f, names[0])
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
