package snapshot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// accountBlocks returns the blocks of u's account columns, their offsets
// counted from the start of the column area.
func accountBlocks(t testing.TB, u *engine.Universe) []colBlock {
	t.Helper()
	dcols, _ := appendDailyColumns(nil, u.Daily)
	cols, _ := appendIntradayColumns(dcols, u.Intraday)
	_, ix, err := writeAccountColumns(u.Reports, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.Blocks {
		ix.Blocks[i].Off += int64(len(cols))
	}
	return ix.Blocks
}

// sameAccounts reports where two reports' accounts differ (line and
// value, bit for bit, read through AccountList), or "".
func sameAccounts(a, b *engine.Report) string {
	x, y := a.AccountList(), b.AccountList()
	if x.Len() != y.Len() || (a.Accounts == nil) != (b.Accounts == nil) {
		return "account count"
	}
	for i := range x.Len() {
		p, q := x.At(i), y.At(i)
		if p.Line != q.Line || math.Float64bits(float64(p.Value)) != math.Float64bits(float64(q.Value)) {
			return "account " + p.Code()
		}
	}
	return ""
}

// Loaded from format 6, the reports' accounts are used in place from the
// mapping (their lines numbered by the file's table, Report.Lines) and
// read through AccountList as format 5's, bit for bit, with the same
// standardized values; the loaded universe written again (either
// format) decodes to the same reports.
func TestAccountColumnsLoad(t *testing.T) {
	u := ratioDemo(t)
	if n := len(accountBlocks(t, u)); n < 2 {
		t.Fatalf("%d account blocks: want several", n)
	}
	dir := t.TempDir()
	p5, p6 := filepath.Join(dir, "v5.snap"), filepath.Join(dir, "v6.snap")
	if err := WriteFile(p5, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p6, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds5, _, err := Load(p5, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, lazy := range []bool{false, true} {
		ds6, _, err := Load(p6, LoadOptions{LazyVerify: lazy, VerifyRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		if err := ds6.CheckAll(); err != nil {
			t.Fatal(err)
		}
		r5, r6 := ds5.Universe().Reports, reportsOf(t, ds6.Universe())
		if len(r5) != len(r6) || len(r5) == 0 {
			t.Fatalf("%d reports from format 6, %d from format 5", len(r6), len(r5))
		}
		inPlace, accounts := 0, 0
		for i := range r5 {
			a, b := &r5[i], &r6[i]
			if a.Lines != nil {
				t.Fatalf("report %d: format 5 gives a line table", i)
			}
			if b.Lines != nil {
				inPlace++
			}
			accounts += len(a.Accounts)
			if d := sameAccounts(a, b); d != "" {
				t.Fatalf("report %d (%s %s %s): %s", i, a.CompanyID, a.Statement, a.ReferenceDate, d)
			}
			x, y := *a, *b
			x.Accounts, y.Accounts, y.Lines = nil, nil, nil
			if d := diff(&x, &y); d != "" {
				t.Fatalf("report %d: %s", i, d)
			}
			s5, s6 := engine.Standardize(a), engine.Standardize(b)
			for j := range s5 {
				if math.Float64bits(float64(s5[j])) != math.Float64bits(float64(s6[j])) {
					t.Fatalf("report %d: standardized value %d: %v, format 5 %v", i, j, s6[j], s5[j])
				}
			}
		}
		if accountInPlace && inPlace == 0 {
			t.Fatal("Load decoded the accounts instead of using them in place")
		}
		if accounts < 1000 {
			t.Fatalf("%d accounts: the test covers too few", accounts)
		}
		for _, v := range []uint16{5, 6} {
			back, _ := mustDecode(t, mustWrite(t, ds6.Universe(), WriteOptions{Version: v}))
			for i := range back.Reports {
				if back.Reports[i].Lines != nil {
					t.Fatalf("format %d written from the loaded universe: Decode gives report %d in place", v, i)
				}
				if d := sameAccounts(&back.Reports[i], &u.Reports[i]); d != "" {
					t.Fatalf("format %d written from the loaded universe: report %d: %s", v, i, d)
				}
			}
		}
	}
}

// The account columns written a block at a time are the ones appended
// at once, block for block; a failing put fails the write.
func TestAccountColumnsStream(t *testing.T) {
	u := ratioDemo(t)
	var c encoder
	want, err := c.appendAccountColumns(nil, u)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var sizes []int64
	n, ix, err := writeAccountColumns(u.Reports, func(b []byte) error {
		got = append(got, b...)
		sizes = append(sizes, int64(len(b)))
		return nil
	})
	if err != nil || n > int64(len(want)) || string(got) != string(want[:n]) {
		t.Fatalf("written %d bytes (%v), appended %d; same bytes: %v", n, err, len(want), string(got) == string(want[:n]))
	}
	// The report heads follow the accounts.
	var heads []byte
	if _, _, _, err := writeHeadColumns(u.Reports, func(b []byte) error {
		heads = append(heads, b...)
		return nil
	}); err != nil || string(got)+string(heads) != string(want) || int64(len(heads)) != c.accounts.headSize {
		t.Fatalf("accounts and heads written apart (%v) differ from appended together", err)
	}
	if string(appendAccountIndex(nil, ix)) != string(c.accounts.index) {
		t.Fatal("indexes differ")
	}
	if len(sizes) != len(ix.Blocks) || len(sizes) < 2 {
		t.Fatalf("%d puts for %d blocks", len(sizes), len(ix.Blocks))
	}
	for i, b := range ix.Blocks {
		if sizes[i] != b.N || b.N%accountBytes != 0 {
			t.Errorf("put %d: %d bytes, block %d", i, sizes[i], b.N)
		}
	}
	failed := errors.New("disk full")
	if _, _, err := writeAccountColumns(u.Reports, func([]byte) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("a failing put: %v", err)
	}
}

// A byte flipped in any block of the account columns fails Decode and
// Load with ErrChecksum; a lazily verified load is published, no
// ticker's bars are found bad, and the first CheckAll (the first request
// of a route that reads reports) finds the block.
func TestAccountColumnsBlockFlipped(t *testing.T) {
	u := ratioDemo(t)
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	_, h := mustDecode(t, v6)
	dir := t.TempDir()
	for k, b := range accountBlocks(t, u) {
		for _, at := range []int64{b.Off, b.Off + b.N/2, b.Off + b.N - 1} {
			bad := append([]byte(nil), v6...)
			bad[h.ColumnsOffset+at] ^= 0x10
			if _, _, err := Decode(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d flipped in account block %d: %v, want ErrChecksum", at, k, err)
			}
			path := filepath.Join(dir, "bad.snap")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load, byte %d flipped in account block %d: %v, want ErrChecksum", at, k, err)
			}
			ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Errorf("lazy Load, byte %d flipped in account block %d: %v", at, k, err)
				continue
			}
			if err := ds.BlockErr(); err != nil {
				t.Errorf("lazy Load, byte %d flipped in account block %d: bad before any use: %v", at, k, err)
			}
			for i := range ds.Assets() {
				if err := ds.CheckAsset(&ds.Assets()[i]); err != nil {
					t.Errorf("lazy Load, byte %d flipped in account block %d: %s's bars: %v", at, k, ds.Assets()[i].Ticker, err)
				}
			}
			if err := ds.CheckAll(); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "accounts block") {
				t.Errorf("lazy Load, byte %d flipped in account block %d: CheckAll %v, want ErrChecksum naming the accounts block", at, k, err)
			}
			if st := ds.Blocks().Status(); st.Bad != 1 || !st.Complete() {
				t.Errorf("lazy Load, byte %d flipped in account block %d: status %+v", at, k, st)
			}
		}
	}
}

// The account columns' index reads back as written; a cut one, or one
// with bytes left over, is refused.
func TestAccountIndexRefused(t *testing.T) {
	u := ratioDemo(t)
	_, ix, err := writeAccountColumns(u.Reports, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	b := appendAccountIndex(nil, ix)
	got, err := readAccountIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got, ix); d != "" {
		t.Fatalf("index read back differs: %s", d)
	}
	for n := range len(b) {
		if _, err := readAccountIndex(b[:n]); !errors.Is(err, errColumns) {
			t.Fatalf("cut at %d of %d bytes: %v, want errColumns", n, len(b), err)
		}
	}
	if _, err := readAccountIndex(append(b[:len(b):len(b)], 0)); !errors.Is(err, errColumns) {
		t.Errorf("a trailing byte: %v", err)
	}
	fixed := appendAccountIndex(nil, accountIndex{Accounts: 1, Lines: []accountLine{{"1", "Ativo", true}}})
	fixed[len(fixed)-2] = 2 // the fixed byte, before an empty block list
	if _, err := readAccountIndex(fixed); !errors.Is(err, errColumns) {
		t.Errorf("a fixed byte of 2: %v", err)
	}
}

// Once the parts are decoded, their accounts must cut the columns in
// order, and a line number the table lacks is refused where the
// accounts are translated.
func TestFinishAccountsRefused(t *testing.T) {
	line := engine.InternLine("1", "Ativo Total", true)
	mk := func(ranges []accountRange, total int64, acc []engine.Account) (*loadState, *engine.Universe) {
		ls := &loadState{}
		ap := ls.accounts()
		ap.seen, ap.total, ap.ranges = true, total, ranges
		ap.table.Lines = []engine.Line{line}
		u := &engine.Universe{Reports: []engine.Report{{Accounts: acc, Lines: &ap.table}}}
		return ls, u
	}
	ls, u := mk([]accountRange{{lo: 5, first: 1, n: 1}, {lo: 0, first: 0, n: 1}}, 2, []engine.Account{{Line: 0, Value: 3}})
	if err := ls.finishAccounts(u); err != nil {
		t.Fatalf("parts in order: %v", err)
	}
	if r := u.Reports[0]; r.Lines != nil || r.Accounts[0].Line != line {
		t.Errorf("not translated: %+v", r)
	}
	for name, c := range map[string]struct {
		ranges []accountRange
		total  int64
		acc    []engine.Account
	}{
		"a gap":          {[]accountRange{{lo: 0, first: 0, n: 1}, {lo: 3, first: 2, n: 1}}, 3, nil},
		"an overlap":     {[]accountRange{{lo: 0, first: 0, n: 2}, {lo: 3, first: 1, n: 1}}, 3, nil},
		"accounts left":  {[]accountRange{{lo: 0, first: 0, n: 2}}, 3, nil},
		"a line too far": {[]accountRange{{lo: 0, first: 0, n: 1}}, 1, []engine.Account{{Line: 1}}},
	} {
		ls, u := mk(c.ranges, c.total, c.acc)
		if err := ls.finishAccounts(u); !errors.Is(err, errColumns) {
			t.Errorf("%s: %v, want errColumns", name, err)
		}
	}
	if err := (&loadState{acc: &accountsPart{}}).finishAccounts(&engine.Universe{}); !errors.Is(err, errColumns) {
		t.Errorf("no index: %v", err)
	}
}

// An account in the columns is engine.Account in memory: where the
// machine allows, the load uses them in place.
func TestAccountLayout(t *testing.T) {
	var a engine.Account
	if littleEndian && !accountInPlace {
		t.Fatalf("engine.Account is %d bytes, Line at %d, Value at %d: not the columns' layout", unsafe.Sizeof(a), unsafe.Offsetof(a.Line), unsafe.Offsetof(a.Value))
	}
}

// A format 6 file whose only columns are report accounts (no bars, no
// ratio points) is read back: the header accepts a column area holding
// them alone.
func TestAccountColumnsAlone(t *testing.T) {
	u := handUniverse()
	u.Daily, u.Intraday, u.Derived.Ratios, u.Derived.RatioVars, u.Derived.FundRatios = nil, nil, nil, nil, nil
	got, h := mustDecode(t, mustWrite(t, u, WriteOptions{Version: 6}))
	if h.Columns == 0 || h.Counts[countAccounts] == 0 {
		t.Fatalf("a column area of %d bytes for %d accounts", h.Columns, h.Counts[countAccounts])
	}
	if d := diff(got, u); d != "" {
		t.Fatalf("read back differs at %s", d)
	}
}
