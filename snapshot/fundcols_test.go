package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// fundBlocks returns the blocks of the fund ratio columns of a format 6
// file b (their offsets counted from the start of the column area) and
// the fund of each block's first run.
func fundBlocks(t testing.TB, b []byte) ([]colBlock, []string) {
	t.Helper()
	ds, _, err := loadBytes(t, b)
	if err != nil {
		t.Fatal(err)
	}
	x := ds.Blocks().(*colBlocks)
	var c *blockChecks
	for _, k := range x.kinds {
		if k.kind == "fund ratios" {
			c = k
		}
	}
	if c == nil {
		t.Fatal("no fund ratio columns")
	}
	base := c.at - mustHeader(t, b).ColumnsOffset
	blocks := slices.Clone(c.blocks)
	owners := make([]string, len(blocks))
	for id, refs := range x.byCompany {
		for _, r := range refs {
			if x.kinds[r.kind] == c && (owners[r.block] == "" || id < owners[r.block]) {
				owners[r.block] = id
			}
		}
	}
	for i := range blocks {
		blocks[i].Off += base
	}
	return blocks, owners
}

// loadBytes loads the file b lazily (no background pass).
func loadBytes(t testing.TB, b []byte) (*engine.Dataset, Header, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.snap")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
}

func mustHeader(t testing.TB, b []byte) Header {
	t.Helper()
	_, h := mustDecode(t, b)
	return h
}

// fundDemo is ratioDemo with enough funds for several fund blocks.
func fundDemo(t testing.TB) *engine.Universe {
	t.Helper()
	u := ratioDemo(t)
	// Each fund's points again under other ids: more funds, more blocks.
	d := &u.Derived
	base := slices.Clone(d.FundRatios)
	var ids []string
	for i := range u.Companies {
		if u.Companies[i].Kind == engine.KindFII || u.Companies[i].Kind == engine.KindETF {
			ids = append(ids, u.Companies[i].ID)
		}
	}
	for k := range 40 {
		for _, id := range ids {
			c := *companyOf(u, id)
			suffix := string(rune('A'+k%26)) + string(rune('A'+k/26))
			c.ID, c.Symbol = id+"-"+suffix, c.Symbol+suffix
			u.Companies = append(u.Companies, c)
			for _, p := range base {
				if p.FundID.String() == id {
					p.FundID = engine.Intern(c.ID)
					d.FundRatios = append(d.FundRatios, p)
				}
			}
		}
	}
	engine.SortFundRatioPoints(d.FundRatios)
	slices.SortStableFunc(u.Companies, func(a, b engine.Company) int { return strings.Compare(a.ID, b.ID) })
	return u
}

func companyOf(u *engine.Universe, id string) *engine.Company {
	for i := range u.Companies {
		if u.Companies[i].ID == id {
			return &u.Companies[i]
		}
	}
	return nil
}

// fundSeries returns every fund's series of ds (each fund's blocks
// verified first), as values: indicator, frequency, points and sources.
func fundSeries(t testing.TB, ds *engine.Dataset) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	for i := range ds.Issuers() {
		is := &ds.Issuers()[i]
		if err := ds.CheckIssuer(is); err != nil {
			t.Fatal(err)
		}
		for _, s := range is.FundRatios() {
			pts := make([]any, len(s.Points))
			for j := range s.Points {
				p := s.Points[j]
				src := ds.FundSources(&p)
				p.FundID, p.Sources = 0, 0
				pts[j] = []any{p, src}
			}
			out[is.ID] = append(out[is.ID], s.Indicator, s.Frequency, pts)
		}
	}
	return out
}

// A load of format 6 reads no fund ratio point: their pages are not
// mapped after Load (the page map), Build files each fund's run unread,
// and a fund's series, made on its first use, are those a Build of the
// format 5 file gives (points, values, dates and sources).
func TestLoadMapsNoFundPage(t *testing.T) {
	u := fundDemo(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	v5 := filepath.Join(dir, "v5.snap")
	if err := WriteFile(v5, u, WriteOptions{Version: 5}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Universe().Derived.FundRuns == nil || ds.Universe().Derived.FundSyms == nil {
		t.Fatal("the load's fund points are not in place")
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no page map: %v", err)
	}
	defer pm.Close()
	x := ds.Blocks().(*colBlocks)
	var sec []byte
	for _, c := range x.kinds {
		if c.kind == "fund ratios" {
			sec = c.sec
		}
	}
	present := func() (int, int) {
		page := uintptr(os.Getpagesize())
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(sec)))
		first, last := lo/page, (lo+uintptr(len(sec))-1)/page
		entries := make([]byte, 8*(last-first+1))
		if _, err := pm.ReadAt(entries, int64(first*8)); err != nil {
			t.Skipf("page map: %v", err)
		}
		n := 0
		for i := 0; i < len(entries); i += 8 {
			if binary.LittleEndian.Uint64(entries[i:])>>63 == 1 {
				n++
			}
		}
		return n, len(entries) / 8
	}
	if n, all := present(); all < 16 || n > 2 {
		t.Fatalf("%d of the fund points' %d pages mapped after the load, want none but the edges", n, all)
	}
	for i := range ds.Issuers() {
		if is := &ds.Issuers()[i]; is.IsFund() && !x.byCompanyHas(is.ID) {
			t.Fatalf("fund %s: no blocks of its own", is.ID)
		}
	}
	got := fundSeries(t, ds)
	if n, _ := present(); n == 0 {
		t.Fatal("no fund page mapped after every fund's first use: the test reads nothing")
	}
	want5, _, err := Load(v5, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := fundSeries(t, want5)
	// (Compared as printed: a NaN value is not DeepEqual to itself.)
	if len(got) < 40 || fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Fatalf("%d funds' series read in place, %d from format 5, or they differ", len(got), len(want))
	}
	runtime.KeepAlive(ds)
}

// byCompanyHas reports whether company id has blocks of its own.
func (x *colBlocks) byCompanyHas(id string) bool { return len(x.byCompany[id]) > 0 }

// A byte flipped in any block of the fund ratio columns fails Decode and
// Load with ErrChecksum; a lazily verified load is published with no bad
// block, no ticker's bars are found bad, and the first check of a fund
// whose points the block holds (the first request of its routes) or
// CheckAll finds the block.
func TestFundColumnsBlockFlipped(t *testing.T) {
	u := fundDemo(t)
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	h := mustHeader(t, v6)
	blocks, owners := fundBlocks(t, v6)
	if len(blocks) < 2 {
		t.Fatalf("%d fund blocks: the test covers too few", len(blocks))
	}
	dir := t.TempDir()
	for k, b := range blocks {
		for _, at := range []int64{b.Off, b.Off + b.N/2, b.Off + b.N - 1} {
			bad := append([]byte(nil), v6...)
			bad[h.ColumnsOffset+at] ^= 0x10
			if _, _, err := Decode(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d flipped in fund block %d: %v, want ErrChecksum", at, k, err)
			}
			path := filepath.Join(dir, "bad.snap")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load, byte %d flipped in fund block %d: %v, want ErrChecksum", at, k, err)
			}
			ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: %v", at, k, err)
				continue
			}
			if err := ds.BlockErr(); err != nil {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: bad before any use: %v", at, k, err)
			}
			for i := range ds.Assets() {
				if err := ds.CheckAsset(&ds.Assets()[i]); err != nil {
					t.Errorf("lazy Load, byte %d flipped in fund block %d: %s's bars: %v", at, k, ds.Assets()[i].Ticker, err)
				}
			}
			// Another block's fund is good.
			other := owners[(k+1)%len(owners)]
			if is, ok := ds.Issuer(other); !ok || ds.CheckIssuer(is) != nil || len(is.FundRatios()) == 0 {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: fund %s of another block not read", at, k, other)
			}
			is, ok := ds.Issuer(owners[k])
			if !ok {
				t.Fatalf("%s: no issuer", owners[k])
			}
			if err := ds.CheckIssuer(is); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "fund ratios block") {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: CheckIssuer(%s) %v, want ErrChecksum naming the fund ratios block", at, k, owners[k], err)
			}
			if err := ds.CheckAll(); !errors.Is(err, ErrChecksum) {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: CheckAll %v, want ErrChecksum", at, k, err)
			}
			if st := ds.Blocks().Status(); st.Bad != 1 {
				t.Errorf("lazy Load, byte %d flipped in fund block %d: status %+v", at, k, st)
			}
		}
	}
}

// A fund block whose checksum matches but whose points are not as the
// index says (here: out of order, written so by a writer that does not
// sort) is a bad block of ErrFormat naming the points, found by the
// fund's first check; a load verifying every block refuses the file.
func TestFundPointsOutOfOrderAreABadBlock(t *testing.T) {
	u := fundDemo(t)
	ps := u.Derived.FundRatios
	i := 1
	for ; i < len(ps); i++ {
		q, p := &ps[i-1], &ps[i]
		if q.FundID == p.FundID && q.Indicator == p.Indicator && q.Frequency == p.Frequency && q.ReferenceDate < p.ReferenceDate {
			break
		}
	}
	if i == len(ps) {
		t.Fatal("no two points of one series")
	}
	ps[i-1].ReferenceDate, ps[i].ReferenceDate = ps[i].ReferenceDate, ps[i-1].ReferenceDate
	fund := ps[i].FundID.String()
	defer func(f func(*engine.Derived) []engine.FundRatioPoint) { fundPointsOf = f }(fundPointsOf)
	fundPointsOf = func(dv *engine.Derived) []engine.FundRatioPoint { return dv.FundRatios }
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "points out of order") {
		t.Fatalf("Load verifying every block: %v, want ErrFormat naming the points", err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatalf("lazy load: %v", err)
	}
	is, _ := ds.Issuer(fund)
	if err := ds.CheckIssuer(is); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "fund ratios block") || !strings.Contains(err.Error(), "not as indexed") {
		t.Fatalf("CheckIssuer(%s): %v, want the fund ratios block bad", fund, err)
	}
	if ds.BlockErr() == nil || ds.CheckAll() == nil {
		t.Fatal("the Dataset is not failed")
	}
	if st := ds.Blocks().Status(); st.Bad != 1 {
		t.Fatalf("%d blocks bad, want 1", st.Bad)
	}
}

// Funds' series made on first use by many readers at once, while the
// background pass verifies the blocks, are each made once and the same
// as a format 5 load's (run under -race).
func TestFundRatiosConcurrentFirstUse(t *testing.T) {
	u := fundDemo(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	v5 := filepath.Join(dir, "v5.snap")
	if err := WriteFile(v5, u, WriteOptions{Version: 5}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	w5, _, err := Load(v5, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for i := range w5.Issuers() {
		for _, s := range w5.Issuers()[i].FundRatios() {
			want[w5.Issuers()[i].ID] += len(s.Points)
		}
	}
	iss := ds.Issuers()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range iss {
				is := &iss[(k+g*7)%len(iss)]
				if err := ds.CheckIssuer(is); err != nil {
					t.Error(err)
					return
				}
				n := 0
				for _, s := range is.FundRatios() {
					n += len(s.Points)
					for j := range s.Points {
						_ = ds.FundSources(&s.Points[j])
					}
				}
				if n != want[is.ID] {
					t.Errorf("%s: %d fund points, want %d", is.ID, n, want[is.ID])
					return
				}
			}
		})
	}
	wg.Wait()
	if len(want) < 40 {
		t.Fatalf("%d funds: the test covers too few", len(want))
	}
}

// FuzzFundIndex: the fund ratio index read from the fuzzer's bytes is
// refused or read, never a panic; what is read writes back as it read,
// and columns opened with it (in place or decoded) and checked by their
// blocks' check never panic.
func FuzzFundIndex(f *testing.F) {
	u := synthUniverse(3, 10, 0, 0, 2)
	var sec []byte
	_, ix, _, err := writeFundColumns(&u.Derived, func(b []byte) error {
		sec = append(sec, b...)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	sec = append(alignedBytes(int64(len(sec)))[:0], sec...)
	f.Add(appendFundIndex(nil, ix))
	f.Add([]byte{1, 0, 1, 1, 'F', 1, 0, 0, 1, 0, 40, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := readFundIndex(b)
		if err != nil {
			return
		}
		if got := appendFundIndex(nil, x); string(got) != string(b) {
			t.Fatalf("read %x, wrote back %x", b, got)
		}
		for _, inPlace := range []bool{true, false} {
			syms := make([]engine.Sym, len(x.Runs))
			ps, err := openFundColumns(sec, x, inPlace, syms)
			if err != nil {
				continue
			}
			if int64(len(ps)) != x.Points {
				t.Fatalf("%d points opened, the index says %d", len(ps), x.Points)
			}
			if inPlace {
				check := fundBlockCheck(x, func() int { return len(u.Derived.Catalog) })
				for i, bl := range x.Blocks {
					_ = check(i, sec[bl.Off:bl.Off+bl.N])
				}
			}
		}
	})
}

// A Universe whose fund points name their fund by FundSyms (a load's,
// points in place) writes the same points in formats 5 and 6 as the
// Universe they were loaded from.
func TestWriteFundPointsInPlace(t *testing.T) {
	u := fundDemo(t)
	want := fundPoints(u)
	lu := *u
	d := &lu.Derived
	d.FundRatios = slices.Clone(u.Derived.FundRatios)
	d.FundSyms, d.FundRuns = nil, nil
	byID := map[engine.Sym]engine.Sym{}
	for i := range d.FundRatios {
		p := &d.FundRatios[i]
		k, ok := byID[p.FundID]
		if !ok {
			k = engine.Sym(len(d.FundSyms))
			byID[p.FundID] = k
			d.FundSyms = append(d.FundSyms, p.FundID)
		}
		p.FundID = k
	}
	for _, v := range []uint16{5, 6} {
		back, _ := mustDecode(t, mustWrite(t, &lu, WriteOptions{Version: v}))
		if diff(fundPoints(back), want) != "" {
			t.Fatalf("format %d: fund points written from FundSyms differ", v)
		}
	}
	if len(want) == 0 {
		t.Fatal("no fund points")
	}
}
