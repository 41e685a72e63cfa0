package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// smallBlocks makes the format 6 files t writes cut their column
// sections into blocks of about 4 KiB (256 KiB in a real file) until t
// ends: each series of a small demo market lies in blocks of its own (a
// daily series of 2021 on is about 45 KB), as in a large one, where
// the blocks of the few tickers a lazy load verifies at open
// (engine.Dataset.OpenReads) hold no other ticker's bars.
func smallBlocks(t *testing.T) {
	old := blockTarget
	blockTarget = 4 << 10
	t.Cleanup(func() { blockTarget = old })
}

// lazyFile writes a demo market with daily and intraday bars as format 6
// (small blocks: smallBlocks) and returns its path.
func lazyFile(t *testing.T) string {
	t.Helper()
	smallBlocks(t)
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, SponsoredBDRs: 1, HistoryFrom: 2021, IntradayTickers: 3, IntradaySessions: 3})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	return path
}

// flipTarget is a byte of a price column to flip: the first open of
// ticker's daily or intraday bars, at off in the file, in block block of
// its kind.
type flipTarget struct {
	kind, ticker string
	off          int64
	block        int
}

// flipTargets finds, in the format 6 file at path, one ticker of each
// kind of bars (daily, intraday) held where the file lies, and where its
// first opening price is: a ticker whose blocks a lazy load leaves
// unverified (not one of engine.Dataset.OpenReads', whose blocks it
// verifies at open, nor one sharing a block with them).
func flipTargets(t *testing.T, path string) []flipTarget {
	t.Helper()
	ds, h, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	x := ds.Blocks().(*colBlocks)
	var out []flipTarget
	for _, kind := range []string{"daily", "intraday"} {
		for i := range ds.Assets() {
			a := &ds.Assets()[i]
			if len(a.Former) > 0 {
				continue
			}
			var p unsafe.Pointer
			if cols, ok := a.Daily.Columns(); kind == "daily" && ok && len(cols.Open) > 0 {
				p = unsafe.Pointer(&cols.Open[0])
			} else if ic, ok := a.Intraday.Columns(); kind == "intraday" && ok && len(ic.Open) > 0 {
				p = unsafe.Pointer(&ic.Open[0])
			} else {
				continue
			}
			off, c, blk := columnPlace(t, x, h, p)
			if c.kind != kind {
				t.Fatalf("%s %s: its open lies in the %s columns", kind, a.Ticker, c.kind)
			}
			if c.state[blk].Load() != blockUnknown {
				continue // verified at open
			}
			out = append(out, flipTarget{kind: kind, ticker: a.Ticker, off: off, block: blk})
			break
		}
	}
	if len(out) != 2 {
		t.Fatalf("found %d kinds of bars in blocks left unverified at open, want daily and intraday: %+v", len(out), out)
	}
	return out
}

// columnPlace returns where p, a value in the column area of x's
// Dataset (loaded from a file whose header is h), lies: its offset in
// the file, its columns and their block holding it.
func columnPlace(t *testing.T, x *colBlocks, h Header, p unsafe.Pointer) (int64, *blockChecks, int) {
	t.Helper()
	kinds := slices.Clone(x.kinds) // in the area's order
	slices.SortFunc(kinds, func(a, b *blockChecks) int {
		return int(uintptr(unsafe.Pointer(&a.sec[0])) - uintptr(unsafe.Pointer(&b.sec[0])))
	})
	start := h.ColumnsOffset
	for _, c := range kinds {
		off := int64(uintptr(p) - uintptr(unsafe.Pointer(&c.sec[0])))
		if uintptr(p) >= uintptr(unsafe.Pointer(&c.sec[0])) && off < int64(len(c.sec)) {
			blk := slices.IndexFunc(c.blocks, func(b colBlock) bool { return off >= b.Off && off < b.Off+b.N })
			if blk < 0 {
				t.Fatalf("%s columns: byte %d in no block", c.kind, off)
			}
			return start + off, c, blk
		}
		start += int64(len(c.sec))
	}
	t.Fatal("a value outside the column area")
	return 0, nil, 0
}

// flipped writes a copy of the file at path with bit 0 of byte off
// flipped, and returns the copy's path.
func flipped(t *testing.T, path string, off int64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 1
	bad := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return bad
}

// openBlocks returns how many blocks hold the bars of ds's OpenReads
// tickers: those a lazy load verifies at open.
func openBlocks(ds *engine.Dataset) int64 {
	x := ds.Blocks().(*colBlocks)
	seen := map[blockRef]bool{}
	daily, intraday := ds.OpenReads()
	for _, t := range daily {
		if tb, ok := x.byTicker[t]; ok && tb.daily.kind >= 0 {
			seen[tb.daily] = true
		}
	}
	for _, t := range intraday {
		if tb, ok := x.byTicker[t]; ok && tb.intraday.kind >= 0 {
			seen[tb.intraday] = true
		}
	}
	return int64(len(seen))
}

// A format 6 file loaded with LazyVerify verifies at open only the
// blocks of the bars the index build read (OpenReads); a byte
// flipped in a price of each kind of bars (daily, intraday) is found by
// the first request for its ticker (CheckAsset: ErrChecksum, and the
// Dataset is failed from then on), by a request that reads every block
// (CheckAll), by the background pass, and by a load that verifies
// everything (pregao verify), while a ticker of a good block reads on.
func TestLazyVerifyFindsFlippedByte(t *testing.T) {
	path := lazyFile(t)
	for _, f := range flipTargets(t, path) {
		bad := flipped(t, path, f.off)
		t.Run(f.kind, func(t *testing.T) {
			// On use only (no background pass).
			ds, _, err := Load(bad, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Fatalf("lazy load of a file with a bad %s block: %v", f.kind, err)
			}
			st := ds.Blocks().Status()
			x := ds.Blocks().(*colBlocks)
			k := slices.IndexFunc(x.kinds, func(c *blockChecks) bool { return c.kind == f.kind })
			badRef := blockRef{kind: int16(k), block: int32(f.block)}
			if st.Verified != openBlocks(ds) || st.Verified >= st.Blocks || x.kinds[k].state[f.block].Load() != blockUnknown || ds.BlockErr() != nil {
				t.Fatalf("after open: %+v, err %v: want only the %d blocks of the bars read at open verified", st, ds.BlockErr(), openBlocks(ds))
			}
			good := ""
			for i := range ds.Assets() {
				a := &ds.Assets()[i]
				if a.Ticker == f.ticker || len(a.Former) > 0 {
					continue
				}
				if tb := x.byTicker[a.Ticker]; tb.daily != badRef && tb.intraday != badRef && a.Daily.Len() > 0 {
					if err := ds.CheckAsset(a); err != nil {
						t.Errorf("%s, in good blocks: %v", a.Ticker, err)
					}
					good = a.Ticker
					break
				}
			}
			if good == "" {
				t.Fatal("no ticker in good blocks: the test does not cover them")
			}
			if ds.BlockErr() != nil {
				t.Fatalf("a good block failed the Dataset: %v", ds.BlockErr())
			}
			a, _ := ds.Asset(f.ticker)
			for range 2 { // the second from the state kept
				if err := ds.CheckAsset(a); !errors.Is(err, ErrChecksum) {
					t.Fatalf("CheckAsset(%s): %v, want ErrChecksum", f.ticker, err)
				}
			}
			if err := ds.BlockErr(); !errors.Is(err, ErrChecksum) {
				t.Errorf("BlockErr after the bad block: %v", err)
			}
			if err := ds.CheckAll(); !errors.Is(err, ErrChecksum) {
				t.Errorf("CheckAll: %v", err)
			}
			if st := ds.Blocks().Status(); st.Bad != 1 {
				t.Errorf("status after CheckAll: %+v", st)
			}

			// The background pass alone.
			done := make(chan engine.BlockStatus, 1)
			ds, _, err = Load(bad, LoadOptions{LazyVerify: true, VerifyRate: 1 << 40, Verified: func(s engine.BlockStatus) { done <- s }})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case st := <-done:
				if st.Bad != 1 || !st.Complete() || !errors.Is(st.Err, ErrChecksum) || !errors.Is(ds.BlockErr(), ErrChecksum) {
					t.Errorf("background pass: %+v", st)
				}
				if x := ds.Blocks().(*colBlocks); x.fromFile.Load() != x.blocks {
					t.Errorf("background pass: %d of %d blocks read from the file", x.fromFile.Load(), x.blocks)
				}
			case <-time.After(time.Minute):
				t.Fatal("the background pass did not end")
			}

			// A load that verifies every block (pregao verify), and ReadFile.
			if _, _, err := Load(bad, LoadOptions{}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load verifying everything: %v", err)
			}
			// A reload's load (VerifyFirst), which must refuse the file
			// before it replaces the snapshot serving, and VerifyFile, a
			// download's check before it replaces the local copy.
			var told engine.BlockStatus
			if _, _, err := Load(bad, LoadOptions{LazyVerify: true, VerifyFirst: true, Verified: func(s engine.BlockStatus) { told = s }}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load with VerifyFirst: %v, want ErrChecksum", err)
			}
			if told != (engine.BlockStatus{}) {
				t.Errorf("Verified called for a refused file: %+v", told)
			}
			if err := VerifyFile(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("VerifyFile: %v, want ErrChecksum", err)
			}
			if _, _, err := ReadFile(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("ReadFile: %v", err)
			}
		})
	}
}

// A good file loaded lazily: the background pass verifies every block,
// finds none bad, and CheckAll is then a call; CheckAsset verifies an
// asset's blocks once, under concurrent callers (run with -race).
func TestLazyVerifyGood(t *testing.T) {
	path := lazyFile(t)
	// VerifyFirst: every block verified from the file before Load returns,
	// the mapping's pages untouched by it, and no pass after.
	var told engine.BlockStatus
	first, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyFirst: true, Verified: func(s engine.BlockStatus) { told = s }})
	if err != nil {
		t.Fatal(err)
	}
	if x := first.Blocks().(*colBlocks); !told.Complete() || told.Bad != 0 || x.fromFile.Load() != x.blocks || x.passEnded != nil {
		t.Errorf("VerifyFirst: told %+v, %d of %d blocks read from the file, pass started %v", told, x.fromFile.Load(), x.blocks, x.passEnded != nil)
	}
	if err := VerifyFile(path); err != nil {
		t.Errorf("VerifyFile of a good file: %v", err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range ds.Assets() {
				if err := ds.CheckAsset(&ds.Assets()[i]); err != nil {
					t.Error(err)
					return
				}
			}
			if err := ds.CheckAll(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	st := ds.Blocks().Status()
	if !st.Complete() || st.Bad != 0 || st.Err != nil || st.Bytes == 0 {
		t.Errorf("status: %+v", st)
	}
	// The pass holds its Dataset weakly and ends when it is collected:
	// the test keeps it until the pass reports.
	done := make(chan engine.BlockStatus, 1)
	ds2, _, err := Load(path, LoadOptions{LazyVerify: true, Verified: func(s engine.BlockStatus) { done <- s }})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if !st.Complete() || st.Bad != 0 || st.Err != nil {
			t.Errorf("background pass: %+v", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the background pass did not end")
	}
	runtime.KeepAlive(ds2)
	// A format 5 file has nothing to verify lazily.
	u := demo.GenerateSize(3, demo.Size{Companies: 2, HistoryFrom: 2025})
	p5 := filepath.Join(t.TempDir(), "v5.snap")
	if err := WriteFile(p5, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ds5, _, err := Load(p5, LoadOptions{LazyVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if ds5.Blocks() != nil || ds5.CheckAll() != nil || ds5.CheckAsset(&ds5.Assets()[0]) != nil {
		t.Error("a format 5 Dataset has blocks to verify")
	}
}

// BenchmarkLazyChecks is what a request of a lazily verified snapshot
// pays once its blocks are verified: the Dataset's check (every API
// request), then CheckAll (a route across tickers) or CheckAsset (a
// quote route, per ticker).
func BenchmarkLazyChecks(b *testing.B) {
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, HistoryFrom: 2024, IntradayTickers: 2, IntradaySessions: 2})
	path := filepath.Join(b.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		b.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		b.Fatal(err)
	}
	if err := ds.CheckAll(); err != nil {
		b.Fatal(err)
	}
	a := &ds.Assets()[0]
	b.Run("dataset", func(b *testing.B) {
		for b.Loop() {
			if ds.BlockErr() != nil || ds.CheckAll() != nil {
				b.Fatal("bad")
			}
		}
	})
	b.Run("asset", func(b *testing.B) {
		for b.Loop() {
			if ds.BlockErr() != nil || ds.CheckAsset(a) != nil {
				b.Fatal("bad")
			}
		}
	})
}

// Lazily verified Datasets reloaded again and again under readers, each
// with its background pass still running when the next replaces it: a
// pass never reads a released mapping (a fault) and never keeps one
// (the replaced Datasets' mappings are released while their passes
// sleep), and readers' checks agree with it (run with -race).
func TestLazyVerifyReloadUnderReaders(t *testing.T) {
	path := lazyFile(t)
	settleMappings()
	files0, _ := mapfile.Held()
	store := &engine.Store{}
	load := func() {
		// A block every four seconds: every pass is cut short by the reload.
		ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		store.Publish(ds)
	}
	load()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for r := range 3 {
		wg.Go(func() {
			for n := r; !stop.Load(); n++ {
				ds := store.Current()
				as := ds.Assets()
				a := &as[n%len(as)]
				if err := ds.CheckAsset(a); err != nil {
					t.Error(err)
					return
				}
				sum := 0.0
				for i := range a.Daily.Len() {
					sum += float64(a.Daily.Close(i))
				}
				if n%5 == 0 {
					if err := ds.CheckAll(); err != nil {
						t.Error(err)
						return
					}
				}
				if n%16 == 0 {
					runtime.GC()
				}
			}
		})
	}
	for range 20 {
		load()
		runtime.GC()
	}
	stop.Store(true)
	wg.Wait()
	store.Publish(nil)
	for range 100 {
		runtime.GC()
		if n, _ := mapfile.Held(); n == files0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	n, _ := mapfile.Held()
	t.Errorf("%d mappings held once no Dataset is, want %d: a background pass keeps them", n, files0)
}

// A format 6 file whose blocks match their checksums but hold a series
// with dates out of order: a lazy load publishes it without reading the
// dates (engine.BuildOptions.OrderChecked), the series' first use finds
// the block bad (ErrFormat) and fails the Dataset; a load that verifies
// every block refuses it.
func TestLazyVerifyFindsDatesOutOfOrder(t *testing.T) {
	smallBlocks(t)
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, SponsoredBDRs: 1, HistoryFrom: 2021, IntradayTickers: 3, IntradaySessions: 3})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	// A series whose block a lazy load leaves unverified at open (see
	// OpenReads): swapping two of its dates moves no byte to another block.
	good, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	lazyBlock := func(ds *engine.Dataset, ticker string) bool {
		x := ds.Blocks().(*colBlocks)
		r := x.byTicker[ticker].daily
		return r.kind >= 0 && x.kinds[r.kind].state[r.block].Load() == blockUnknown
	}
	k := slices.IndexFunc(u.Daily, func(s engine.Series) bool { return s.Len() > 100 && lazyBlock(good, s.Ticker) })
	if k < 0 {
		t.Fatal("no series of over 100 days in a block left unverified at open")
	}
	s := &u.Daily[k]
	n := s.Len()
	s.Dates[n-60], s.Dates[n-59] = s.Dates[n-59], s.Dates[n-60]
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Skipf("the writer refuses the dates: %v", err)
	}
	if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "not after") {
		t.Fatalf("Load verifying every block: %v, want ErrFormat naming the dates", err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatalf("lazy load: %v", err)
	}
	if !lazyBlock(ds, s.Ticker) || ds.BlockErr() != nil {
		t.Fatalf("%s's block verified at open (Dataset error %v)", s.Ticker, ds.BlockErr())
	}
	a, _ := ds.Asset(s.Ticker)
	if err := ds.CheckAsset(a); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "block out of order") {
		t.Fatalf("CheckAsset(%s): %v, want the block out of order", s.Ticker, err)
	}
	if ds.BlockErr() == nil || ds.CheckAll() == nil {
		t.Fatal("the Dataset is not failed")
	}
}

// A Dataset replaced while its background pass runs is collected whole,
// its Universe (the decoded parts) with it, in the collection that finds
// it unreachable, and the pass ends then, though it waits for its pace:
// the pass holds neither (it learns that the Dataset is gone from a
// cleanup), and the ratio blocks' check it calls does not hold the
// Universe.
func TestBackgroundPassHoldsNoDataset(t *testing.T) {
	path := lazyFile(t)
	// 1 byte a second: after its first block the pass waits for hours.
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: 1})
	if err != nil {
		t.Fatal(err)
	}
	x := ds.Blocks().(*colBlocks)
	if x.passEnded == nil {
		t.Fatal("no background pass")
	}
	ended := x.passEnded
	// The load's Universe is not the Dataset's (Build keeps a copy), but
	// both hold the decoded parts: the catalog and the companies.
	u := ds.Universe()
	if len(u.Derived.Catalog) == 0 || len(u.Derived.Ratios) == 0 || len(u.Companies) == 0 {
		t.Fatal("the demo market has no ratio points: the ratio blocks' check is not made")
	}
	wd, wcat, wco := weak.Make(ds), weak.Make(&u.Derived.Catalog[0]), weak.Make(&u.Companies[0])
	ds, x, u = nil, nil, nil
	runtime.GC()
	if wd.Value() != nil || wcat.Value() != nil || wco.Value() != nil {
		t.Errorf("after a collection: Dataset held %v, catalog held %v, companies held %v", wd.Value() != nil, wcat.Value() != nil, wco.Value() != nil)
	}
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Error("the background pass of a collected Dataset did not end")
	}
}

// A file that cannot be mapped is read into the heap (mapfile's ReadAt
// fallback), and that copy is what requests read: its blocks are
// verified in the copy, not in the file, which may hold other bytes by
// then. A byte flipped when the file was read stays bad though the file
// is mended in place before the blocks are verified: by a reload's
// verification (VerifyFirst) and by the background pass.
func TestLazyVerifyReadsTheHeapCopy(t *testing.T) {
	path := lazyFile(t)
	f := flipTargets(t, path)[0]
	old := mapColumns
	mapColumns = func(fh *os.File) (*mapfile.File, error) { return mapfile.Read(fh.Name()) }
	defer func() { mapColumns = old }()
	// mendAt returns a Progress that flips the byte back in the file, in
	// place, when the load begins phase.
	mendAt := func(bad, phase string) *Progress {
		return &Progress{onBegin: func(p, _ string, _ int64) {
			if p != phase {
				return
			}
			fh, err := os.OpenFile(bad, os.O_RDWR, 0)
			if err != nil {
				t.Error(err)
				return
			}
			defer fh.Close()
			b := make([]byte, 1)
			if _, err := fh.ReadAt(b, f.off); err != nil {
				t.Error(err)
			}
			b[0] ^= 1
			if _, err := fh.WriteAt(b, f.off); err != nil {
				t.Error(err)
			}
		}}
	}

	bad := flipped(t, path, f.off)
	ds, _, err := Load(bad, LoadOptions{LazyVerify: true, VerifyFirst: true, Workers: 1, Progress: mendAt(bad, "verify blocks")})
	if err == nil {
		a, _ := ds.Asset(f.ticker)
		t.Errorf("VerifyFirst, file mended after it was read: published, CheckAsset(%s) %v; want ErrChecksum", f.ticker, ds.CheckAsset(a))
	} else if !errors.Is(err, ErrChecksum) {
		t.Errorf("VerifyFirst, file mended after it was read: %v, want ErrChecksum", err)
	}

	bad = flipped(t, path, f.off)
	done := make(chan engine.BlockStatus, 1)
	ds, _, err = Load(bad, LoadOptions{LazyVerify: true, VerifyRate: 1 << 40, Progress: mendAt(bad, "index"), Verified: func(s engine.BlockStatus) { done <- s }})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Blocks() == nil {
		t.Fatal("no blocks to verify")
	}
	select {
	case st := <-done:
		if st.Bad != 1 || !errors.Is(st.Err, ErrChecksum) {
			t.Errorf("background pass, file mended after it was read: %+v, want the block bad", st)
		}
	case <-time.After(time.Minute):
		t.Fatal("the background pass did not end")
	}
	a, _ := ds.Asset(f.ticker)
	if err := ds.CheckAsset(a); !errors.Is(err, ErrChecksum) {
		t.Errorf("CheckAsset(%s) after the pass: %v, want ErrChecksum", f.ticker, err)
	}
}

// spunOffClose finds in ds a share action whose factor takes the value of
// received shares (a spin-off's), its asset (parent), a received asset
// (child) whose daily bars lie compact in the file, and the row of the
// child's close the factor is made from (its first session after the
// prior_ex_date); ok false when there is none.
func spunOffClose(ds *engine.Dataset) (parent, child *engine.Asset, ev engine.AdjEvent, row int, ok bool) {
	for i := range ds.Assets() {
		a := &ds.Assets()[i]
		for _, e := range a.AdjustmentEvents() {
			sa := e.Action
			if sa.Type != engine.ActSpinOff && sa.Type != engine.ActSpinOffQuantity && sa.Type != engine.ActRestitutionInShares {
				continue
			}
			for _, l := range sa.Legs {
				r, found := ds.Asset(l.Ticker)
				if l.LegType != engine.LegReceived || !found || len(r.Former) > 0 {
					continue
				}
				cols, compact := r.Daily.Columns()
				if !compact {
					continue
				}
				k, _ := slices.BinarySearch(cols.Dates, sa.PriorExDate+1)
				if k < len(cols.Dates) && r.Daily.Close(k).Valid() {
					return a, r, e, k, true
				}
			}
		}
	}
	return nil, nil, engine.AdjEvent{}, 0, false
}

// The bars engine.Build reads at open (OpenReads: the closes an
// adjustment factor takes the value of received shares from, renamed
// tickers' joined histories) feed answers of routes that verify no
// block (the cash actions' factors, the corporate actions, the latest
// quotes of the rankings) and other tickers' adjusted prices. A lazy
// load verifies their blocks before it returns, and no other: a byte
// flipped in a spin-off child's close fails the Dataset at once
// (ErrChecksum, before any request), where the parent's factor made
// from it differs from the good file's.
func TestLazyVerifyOpenReads(t *testing.T) {
	path := lazyFile(t)
	good, h, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	parent, child, ev, row, ok := spunOffClose(good)
	if !ok {
		t.Fatal("the demo market has no spin-off with a listed child: the test covers nothing")
	}
	reads, intraday := good.OpenReads()
	renamed := ""
	for i := range good.Assets() {
		if a := &good.Assets()[i]; len(a.Former) > 0 {
			renamed = a.Ticker
			for _, f := range append([]string{a.Ticker}, a.Former...) {
				if !slices.Contains(reads, f) || !slices.Contains(intraday, f) {
					t.Errorf("OpenReads %q, %q: no %s, of the renamed %s's joined histories", reads, intraday, f, a.Ticker)
				}
			}
		}
	}
	if renamed == "" {
		t.Error("the demo market has no renamed ticker: the test covers it not")
	}
	if !slices.Contains(reads, parent.Ticker) || !slices.Contains(reads, child.Ticker) {
		t.Errorf("OpenReads %q: want %s and %s (the spin-off's factor)", reads, parent.Ticker, child.Ticker)
	}
	x := good.Blocks().(*colBlocks)
	if st := good.Blocks().Status(); st.Verified != openBlocks(good) || st.Verified >= st.Blocks || st.Bad != 0 || good.BlockErr() != nil {
		t.Errorf("after a lazy load: %+v (error %v), want the %d blocks of %q (daily) and %q (intraday) verified", st, good.BlockErr(), openBlocks(good), reads, intraday)
	}
	if n := x.fromFile.Load(); n != openBlocks(good) {
		t.Errorf("%d blocks read from the file at open, want %d: the mapping's pages are left as they are", n, openBlocks(good))
	}
	cols, _ := child.Daily.Columns()
	off, c, blk := columnPlace(t, x, h, unsafe.Pointer(&cols.Close[row]))
	if c.state[blk].Load() != blockGood {
		t.Fatalf("%s's daily block %d not verified at open", child.Ticker, blk)
	}

	bad := flipped(t, path, off+2) // the close's bit 16
	ds, _, err := Load(bad, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatalf("lazy load: %v, want the Dataset failed, not the load", err)
	}
	if err := ds.BlockErr(); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "daily block") {
		t.Fatalf("BlockErr after a lazy load with %s's close flipped: %v, want ErrChecksum naming the block", child.Ticker, err)
	}
	if st := ds.Blocks().Status(); st.Bad != 1 {
		t.Errorf("status: %+v, want the one bad block", st)
	}
	// What the check keeps from an answer: the factor made from the
	// flipped close.
	pa, _ := ds.Asset(parent.Ticker)
	if f, g := pa.AdjustmentFactor(ev.Date), parent.AdjustmentFactor(ev.Date); f == g {
		t.Errorf("%s's factor on %s is %v with the child's close flipped as without: the flip changes nothing", parent.Ticker, ev.Date, float64(f))
	}
}
