package snapshot

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// headBlocks returns the blocks of u's report heads, their offsets
// counted from the start of the column area, and each block's first
// record.
func headBlocks(t testing.TB, u *engine.Universe) []colBlock {
	t.Helper()
	dcols, _ := appendDailyColumns(nil, u.Daily)
	cols, _ := appendIntradayColumns(dcols, u.Intraday)
	n, _, err := writeAccountColumns(u.Reports, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	_, ix, _, err := writeHeadColumns(u.Reports, func([]byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.Blocks {
		ix.Blocks[i].Off += int64(len(cols)) + n
	}
	return ix.Blocks
}

// A byte flipped in any block of the report heads fails Decode and Load
// with ErrChecksum; a lazily verified load is published with no bad
// block, no ticker's bars are found bad, and the first check of a
// company whose heads the block holds (the first request of its report
// routes) or CheckAll finds the block.
func TestReportHeadsBlockFlipped(t *testing.T) {
	u := ratioDemo(t)
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	_, h := mustDecode(t, v6)
	dir := t.TempDir()
	blocks := headBlocks(t, u)
	if len(blocks) == 0 {
		t.Fatalf("%d head blocks: the test covers too few", len(blocks))
	}
	var base int64 // the heads' first byte in the area
	if len(blocks) > 0 {
		base = blocks[0].Off
	}
	for k, b := range blocks {
		// The company of the block's first record.
		owner := u.Reports[(b.Off-base)/headBytes].CompanyID
		for _, at := range []int64{b.Off, b.Off + b.N/2, b.Off + b.N - 1} {
			bad := append([]byte(nil), v6...)
			bad[h.ColumnsOffset+at] ^= 0x10
			if _, _, err := Decode(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d flipped in head block %d: %v, want ErrChecksum", at, k, err)
			}
			path := filepath.Join(dir, "bad.snap")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load, byte %d flipped in head block %d: %v, want ErrChecksum", at, k, err)
			}
			ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Errorf("lazy Load, byte %d flipped in head block %d: %v", at, k, err)
				continue
			}
			if err := ds.BlockErr(); err != nil {
				t.Errorf("lazy Load, byte %d flipped in head block %d: bad before any use: %v", at, k, err)
			}
			for i := range ds.Assets() {
				if err := ds.CheckAsset(&ds.Assets()[i]); err != nil {
					t.Errorf("lazy Load, byte %d flipped in head block %d: %s's bars: %v", at, k, ds.Assets()[i].Ticker, err)
				}
			}
			is, ok := ds.Issuer(owner)
			if !ok {
				t.Fatalf("%s: no issuer", owner)
			}
			if err := ds.CheckIssuer(is); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "report heads block") {
				t.Errorf("lazy Load, byte %d flipped in head block %d: CheckIssuer(%s) %v, want ErrChecksum naming the heads block", at, k, owner, err)
			}
			if err := ds.CheckAll(); !errors.Is(err, ErrChecksum) {
				t.Errorf("lazy Load, byte %d flipped in head block %d: CheckAll %v, want ErrChecksum", at, k, err)
			}
			if st := ds.Blocks().Status(); st.Bad != 1 {
				t.Errorf("lazy Load, byte %d flipped in head block %d: status %+v", at, k, st)
			}
		}
	}
}

// A load of format 6 reads no report head: the heads' pages are not
// mapped after Load (the page map), and a company's reports are read on
// its first use, the same as Decode gives them.
func TestLoadMapsNoHeadPage(t *testing.T) {
	u := ratioDemo(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Universe().Reports != nil || ds.Universe().LazyReports == nil {
		t.Fatal("the load decoded the report heads")
	}
	pm, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("no page map: %v", err)
	}
	defer pm.Close()
	x := ds.Blocks().(*colBlocks)
	var sec []byte
	for _, c := range x.kinds {
		if c.kind == "report heads" {
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
		t.Fatalf("%d of the heads' %d pages mapped after the load, want none but the edges", n, all)
	}
	// Their first use reads them, as Decode does.
	want := mustDecodeFile(t, path)
	for i := range ds.Issuers() {
		is := &ds.Issuers()[i]
		if err := ds.CheckIssuer(is); err != nil {
			t.Fatal(err)
		}
		_ = is.Reports()
	}
	if n, _ := present(); n == 0 {
		t.Fatal("no head page mapped after every company's first use: the test reads nothing")
	}
	got := reportsOf(t, ds.Universe())
	if len(got) != len(want.Reports) {
		t.Fatalf("%d reports read in place, Decode gives %d", len(got), len(want.Reports))
	}
	for i := range got {
		a, b := got[i], want.Reports[i]
		if d := sameAccounts(&a, &b); d != "" {
			t.Fatalf("report %d: %s", i, d)
		}
		a.Accounts, a.Lines, b.Accounts = nil, nil, nil
		if d := diff(&a, &b); d != "" {
			t.Fatalf("report %d read in place differs from Decode's: %s", i, d)
		}
	}
	runtime.KeepAlive(ds)
}

func mustDecodeFile(t *testing.T, path string) *engine.Universe {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := mustDecode(t, b)
	return u
}

// Companies' reports read on first use by many readers at once, while
// the background pass verifies the blocks, are each read once and the
// same as Decode's (run under -race).
func TestReportHeadsConcurrentFirstUse(t *testing.T) {
	u := ratioDemo(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	want := mustDecodeFile(t, path)
	byCompany := map[string]int{}
	for i := range want.Reports {
		byCompany[want.Reports[i].CompanyID]++
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
				if n := len(is.Reports()); n != byCompany[is.ID] {
					t.Errorf("%s: %d reports, want %d", is.ID, n, byCompany[is.ID])
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzReportHeadIndex: the heads' index read from the fuzzer's bytes is
// refused or read, never a panic; what is read writes back as it reads,
// and records checked or read against it never panic.
func FuzzReportHeadIndex(f *testing.F) {
	u := synthUniverse(3, 10, 0, 4, 2)
	var cols []byte
	_, ix, _, err := writeHeadColumns(u.Reports, func(b []byte) error {
		cols = append(cols, b...)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(appendHeadIndex(nil, ix), cols[:min(len(cols), 2*headBytes)])
	f.Add([]byte{1, 0, 1, 3, 'B', 'P', 'A', 0, 1, 1, 'C', 1, 0, 1, 0}, make([]byte, headBytes))
	f.Fuzz(func(t *testing.T, b, recs []byte) {
		x, err := readHeadIndex(b)
		if err != nil {
			return
		}
		y, err := readHeadIndex(appendHeadIndex(nil, x))
		if err != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("read %+v, wrote back and read %+v (%v)", x, y, err)
		}
		_ = checkBlocks(x.Blocks, headBytes*x.Reports)
		labels := make([]engine.Label, len(x.Words))
		lists := make([]engine.SourceList, min(x.Lists, 4))
		accounts := make([]engine.Account, 3)
		recs = recs[:len(recs)/headBytes*headBytes]
		h := newFileHeads(recs, x, labels, lists, accounts, &engine.LineTable{})
		_ = h.checkBlock(0, recs)
		for _, id := range h.Companies() {
			_ = h.Reports(id)
		}
		if int64(len(recs)) >= x.Reports*headBytes {
			_, _ = h.all()
		}
	})
}

// A reports part of the format 6 layout before the heads were columns
// opens with the account columns' offset (a multiple of 8), not the
// layout's tag: such a file is refused, saying it must be built again.
func TestReportsPartOfEarlierLayoutRefused(t *testing.T) {
	u := ratioDemo(t)
	defer func() { testHeadLayout = headLayout }()
	testHeadLayout = 4096
	old := mustWrite(t, u, WriteOptions{Version: 6})
	testHeadLayout = headLayout
	_, _, err := Decode(old)
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "earlier layout of format 6") || !strings.Contains(err.Error(), "build the file again") {
		t.Fatalf("Decode of a file of the earlier layout: %v", err)
	}
	path := filepath.Join(t.TempDir(), "old.snap")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1}); err == nil || !strings.Contains(err.Error(), "earlier layout of format 6") {
		t.Fatalf("Load of a file of the earlier layout: %v", err)
	}
}

// byCompanyReports gives reports company by company, in the order
// companies first appear (engine.LazyReports).
type byCompanyReports struct {
	ids []string
	m   map[string][]engine.Report
}

func (b *byCompanyReports) Companies() []string          { return b.ids }
func (b *byCompanyReports) FirstPublished() engine.Stamp { return 0 }
func (b *byCompanyReports) Reports(id string) []engine.Report {
	return b.m[id]
}

// A Universe whose reports are read on first use is written with all of
// them: from a load's heads in their order, from any other source
// company by company.
func TestWriteLazyReports(t *testing.T) {
	u := ratioDemo(t)
	src := &byCompanyReports{m: map[string][]engine.Report{}}
	for _, r := range u.Reports {
		if _, ok := src.m[r.CompanyID]; !ok {
			src.ids = append(src.ids, r.CompanyID)
		}
		src.m[r.CompanyID] = append(src.m[r.CompanyID], r)
	}
	var want []engine.Report
	for _, id := range src.ids {
		want = append(want, src.m[id]...)
	}
	lu := *u
	lu.Reports, lu.LazyReports = nil, src
	for _, v := range []uint16{5, 6} {
		back, _ := mustDecode(t, mustWrite(t, &lu, WriteOptions{Version: v}))
		if d := diff(back.Reports, want); d != "" {
			t.Fatalf("format %d: %s", v, d)
		}
	}
}
