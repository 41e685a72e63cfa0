package snapshot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/internal/mapfile"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// format6Universe is a universe of every kind with daily series of every
// form a column section holds.
func format6Universe() *engine.Universe {
	u := synthUniverse(30, 1200, 5, 300, 200)
	u.Daily = append(columnSeries(), u.Daily...)
	for i := range u.Daily {
		u.Daily[i].Ticker = u.Daily[i].Ticker[:len(u.Daily[i].Ticker)-1] + string(rune('A'+i%26)) + "3"
	}
	return u
}

// sameDaily reports the first series where a and b differ (by their
// bars, bit for bit), or "".
func sameDaily(a, b []engine.Series) string {
	if len(a) != len(b) {
		return "series count"
	}
	for i := range a {
		if d := sameBars(a[i].Bars(), b[i].Bars()); d != "" {
			return a[i].Ticker + ": " + d
		}
	}
	return ""
}

// A format 6 file reads back (Decode, ReadFile, Load) the same universe
// as format 5 does: the daily bars from the column area, every other
// kind from its sections; Load maps the area and releases it with the
// Dataset.
func TestFormat6RoundTrip(t *testing.T) {
	u := format6Universe()
	v5 := mustWrite(t, u, WriteOptions{})
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	u5, h5 := mustDecode(t, v5)
	u6, h6 := mustDecode(t, v6)
	if h6.FormatVersion != 6 || h6.Columns == 0 || h6.ColumnsOffset%columnAlign != 0 || h6.ColumnsOffset+h6.Columns != int64(len(v6)) {
		t.Fatalf("header: version %d, columns %d at %d, file %d bytes", h6.FormatVersion, h6.Columns, h6.ColumnsOffset, len(v6))
	}
	if h6.ID == h5.ID {
		t.Error("format 5 and 6 files share an id")
	}
	dcols, _ := appendDailyColumns(nil, u.Daily)
	if h6.Columns <= int64(len(dcols)) {
		t.Errorf("column area of %d bytes: the daily columns alone take %d, the intraday ones are not there", h6.Columns, len(dcols))
	}
	if d := sameDaily(u6.Daily, u5.Daily); d != "" {
		t.Errorf("daily: %s", d)
	}
	a, b := *u5, *u6
	a.Daily, b.Daily = nil, nil
	if d := diff(&a, &b); d != "" {
		t.Errorf("other kinds differ: %s", d)
	}
	// Written twice: the same bytes.
	if again := mustWrite(t, u, WriteOptions{Version: 6}); string(again) != string(v6) {
		t.Error("format 6 is not deterministic")
	}

	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := os.WriteFile(path, v6, 0o644); err != nil {
		t.Fatal(err)
	}
	ur, _, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameDaily(ur.Daily, u5.Daily); d != "" {
		t.Errorf("ReadFile: daily: %s", d)
	}
}

// Loaded from format 6, a small demo market (whole-cent series and wide
// macro series) serves every daily row, adjusted, bit for bit as from
// format 5; the mapping is held while the Dataset is, and released
// after.
func TestFormat6Load(t *testing.T) {
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, SponsoredBDRs: 1, HistoryFrom: 2025, IntradayTickers: 3, IntradaySessions: 2})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
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
	settleMappings()
	files0, _ := mapfile.Held()
	ds, h, err := Load(p6, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.FormatVersion != 6 {
		t.Fatalf("version %d", h.FormatVersion)
	}
	if n, _ := mapfile.Held(); n != files0+1 {
		t.Errorf("Load holds %d mappings, want %d", n, files0+1)
	}
	eq := func(x, y engine.Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	wide := 0
	for i, a := range ds5.Assets() {
		b := &ds.Assets()[i]
		if a.Ticker != b.Ticker || a.Daily.Len() != b.Daily.Len() || a.Daily.Compact() != b.Daily.Compact() {
			t.Fatalf("asset %d: %s/%d vs %s/%d", i, a.Ticker, a.Daily.Len(), b.Ticker, b.Daily.Len())
		}
		if !b.Daily.Compact() {
			wide++
		}
		for r := range a.Daily.Len() {
			for _, adj := range []bool{false, true} {
				x, y := a.DailyBar(r, adj), b.DailyBar(r, adj)
				if x.Date != y.Date || !eq(x.Open, y.Open) || !eq(x.High, y.High) || !eq(x.Low, y.Low) || !eq(x.Close, y.Close) ||
					!eq(x.Volume, y.Volume) || !eq(x.Quantity, y.Quantity) || x.Trades != y.Trades || !eq(x.Factor, y.Factor) {
					t.Fatalf("%s row %d: %+v, format 5 %+v", a.Ticker, r, y, x)
				}
			}
		}
	}
	if wide == 0 {
		t.Error("no wide series: the test does not cover them")
	}
	intraday := 0
	for i, a := range ds5.Assets() {
		x, y := a.Intraday, ds.Assets()[i].Intraday
		if x.Len() != y.Len() {
			t.Fatalf("%s: %d intraday bars, format 5 %d", a.Ticker, y.Len(), x.Len())
		}
		intraday += x.Len()
		for r := range x.Len() {
			if x.Times[r] != y.Times[r] || !eq(x.Open(r), y.Open(r)) || !eq(x.High(r), y.High(r)) || !eq(x.Low(r), y.Low(r)) ||
				!eq(x.Close(r), y.Close(r)) || !eq(x.Volume(r), y.Volume(r)) || x.Quantity(r) != y.Quantity(r) {
				t.Fatalf("%s intraday bar %d differs", a.Ticker, r)
			}
		}
	}
	if intraday == 0 {
		t.Error("no intraday bars: the test does not cover them")
	}
	ds = nil
	for range 50 {
		runtime.GC()
		if n, _ := mapfile.Held(); n == files0 {
			return
		}
	}
	n, _ := mapfile.Held()
	t.Errorf("the mapping outlives its Dataset: %d held, want %d", n, files0)
}

// A byte flipped in any block of the column area fails the load with
// ErrChecksum; a file cut or grown, or an area that is not where the
// header puts it, is refused.
func TestFormat6Refused(t *testing.T) {
	u := format6Universe()
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	_, h := mustDecode(t, v6)
	dcols, ix := appendDailyColumns(nil, u.Daily)
	_, iix := appendIntradayColumns(nil, u.Intraday)
	for i := range iix.Blocks {
		iix.Blocks[i].Off += int64(len(dcols)) // after the daily columns
	}
	for k, b := range append(ix.Blocks, iix.Blocks...) {
		bad := append([]byte(nil), v6...)
		bad[h.ColumnsOffset+b.Off+b.N/3] ^= 1
		if _, _, err := Decode(bad); !errors.Is(err, ErrChecksum) {
			t.Errorf("byte flipped in block %d: %v, want ErrChecksum", k, err)
		}
		path := filepath.Join(t.TempDir(), "bad.snap")
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
			t.Errorf("Load, byte flipped in block %d: %v, want ErrChecksum", k, err)
		}
	}
	if _, _, err := Decode(v6[:len(v6)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("cut by a byte: %v, want ErrTruncated", err)
	}
	if _, _, err := Decode(append(v6[:len(v6):len(v6)], 0)); !errors.Is(err, ErrFormat) {
		t.Errorf("a byte more: %v, want ErrFormat", err)
	}
}

// Reloaded again and again under readers, format 6 Datasets are each
// mapped beside the one being replaced and published by the Store's
// atomic pointer; a mapping is released only once no reader holds its
// Dataset (a read of a released mapping faults, or reads another
// file's bytes: the readers check every close and every report
// account against the first load's), and the released ones do not pile up (run with -race).
func TestFormat6ReloadUnderReaders(t *testing.T) {
	u := demo.GenerateSize(3, demo.Size{Companies: 3, FIIs: 1, ETFs: 1, HistoryFrom: 2025})
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	settleMappings()
	files0, _ := mapfile.Held()
	store := &engine.Store{}
	first, _, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []float64 // every daily close, in asset order, then every report account's value
	for _, a := range first.Assets() {
		for r := range a.Daily.Len() {
			want = append(want, float64(a.Daily.Close(r)))
		}
	}
	closes := len(want)
	firstReports := reportsOf(t, first.Universe())
	for i := range firstReports {
		acc := firstReports[i].AccountList()
		for j := range acc.Len() {
			want = append(want, float64(acc.At(j).Value))
		}
	}
	if len(want) == closes {
		t.Fatal("no report accounts: the test does not cover them")
	}
	store.Publish(first)
	first = nil
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load(); n++ {
				ds := store.Current()
				k := 0
				for _, a := range ds.Assets() {
					for r := range a.Daily.Len() {
						if c := float64(a.Daily.Close(r)); math.Float64bits(c) != math.Float64bits(want[k]) {
							t.Errorf("%s row %d: close %v, want %v", a.Ticker, r, c, want[k])
							return
						}
						k++
					}
				}
				rs := reportsOf(t, ds.Universe())
				for i := range rs {
					acc := rs[i].AccountList()
					for j := range acc.Len() {
						if v := float64(acc.At(j).Value); math.Float64bits(v) != math.Float64bits(want[k]) {
							t.Errorf("report %d account %d: %v, want %v", i, j, v, want[k])
							return
						}
						k++
					}
				}
				runtime.KeepAlive(ds) // the rule: what is read in place, read while its Dataset is held
				if n%8 == 0 {
					runtime.GC()
				}
			}
		}()
	}
	const reloads = 40
	for range reloads {
		ds, _, err := Load(path, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		store.Publish(ds)
	}
	stop.Store(true)
	wg.Wait()
	if n, _ := mapfile.Held(); n-files0 > reloads/2 {
		t.Errorf("%d mappings held after %d reloads: released ones pile up", n-files0, reloads)
	}
	store.Publish(nil)
	for range 50 {
		runtime.GC()
		if n, _ := mapfile.Held(); n == files0 {
			return
		}
	}
	n, _ := mapfile.Held()
	t.Errorf("%d mappings held once no Dataset is, want %d", n, files0)
}

// settleMappings runs the collector until the mappings of Datasets no
// longer reachable (earlier tests') are released.
func settleMappings() {
	for prev := int64(-1); ; {
		runtime.GC()
		runtime.Gosched()
		n, _ := mapfile.Held()
		if n == prev {
			return
		}
		prev = n
	}
}

// The kinds' columns must cut the column area exactly: a gap, an
// overlap or bytes left over are refused.
func TestColumnAreaCut(t *testing.T) {
	area := alignedBytes(64)
	for _, c := range []struct {
		name  string
		parts [][2]int
		ok    bool
	}{
		{"exact", [][2]int{{0, 40}, {40, 64}}, true},
		{"one kind", [][2]int{{0, 64}}, true},
		{"gap", [][2]int{{0, 32}, {40, 64}}, false},
		{"overlap", [][2]int{{0, 40}, {32, 64}}, false},
		{"short", [][2]int{{0, 40}}, false},
	} {
		ls := &loadState{version: columnsVersion, cols: area}
		for _, p := range c.parts {
			ls.addColumns("daily", area[p[0]:p[1]], dailyIndex{Blocks: []colBlock{{Off: 0, N: int64(p[1] - p[0]), Sum: xxhash.Sum64(area[p[0]:p[1]])}}})
		}
		if err := ls.checkColumns(); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
