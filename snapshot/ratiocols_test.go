package snapshot

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// ratioDemo is a demo market with its ratio points derived: enough of
// them for the ratio columns to take several blocks.
func ratioDemo(t testing.TB) *engine.Universe {
	t.Helper()
	u := demo.GenerateSize(11, demo.Size{Companies: 8, FIIs: 1, ETFs: 1, HistoryFrom: 2024})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	return u
}

// ratioBlocks returns the blocks of u's ratio columns, their offsets
// counted from the start of the column area.
func ratioBlocks(t testing.TB, u *engine.Universe) []colBlock {
	t.Helper()
	dcols, _ := appendDailyColumns(nil, u.Daily)
	cols, _ := appendIntradayColumns(dcols, u.Intraday)
	var c encoder
	cols, err := c.appendAccountColumns(cols, u)
	if err != nil {
		t.Fatal(err)
	}
	_, ix, err := appendRatioColumns(nil, &u.Derived)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.Blocks {
		ix.Blocks[i].Off += int64(len(cols))
	}
	return ix.Blocks
}

// Ratio points written as format 6 columns read back (Decode) as the
// same points and variables as format 5's, bit for bit, with Syms of the
// process; the same universe gives the same bytes; Load uses them in
// place and names the same companies and tickers.
func TestRatioColumnsRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		u := randomUniverse(t, seed)
		v6 := mustWrite(t, u, WriteOptions{Version: 6, Level: 1})
		got, _ := mustDecode(t, v6)
		if got.Derived.RatioSyms != nil {
			t.Fatalf("seed %d: Decode gives points in place", seed)
		}
		a, b := *inCashOrder(t, u), *got
		a.Daily, b.Daily = nil, nil
		if d := diff(&a, &b); d != "" {
			t.Fatalf("seed %d: round trip differs at %s", seed, d)
		}
		if again := mustWrite(t, got, WriteOptions{Version: 6, Level: 1}); string(again) != string(v6) {
			t.Fatalf("seed %d: re-encoding the decoded universe changed the bytes", seed)
		}
	}

	u := ratioDemo(t)
	if n := len(ratioBlocks(t, u)); n < 3 {
		t.Fatalf("%d ratio blocks from %d points: want several", n, len(u.Derived.Ratios))
	}
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dv := &ds.Universe().Derived
	if dv.RatioSyms == nil && ratioInPlace {
		t.Fatal("Load decoded the points instead of using them in place")
	}
	if len(dv.Ratios) != len(u.Derived.Ratios) {
		t.Fatalf("%d points loaded, %d written", len(dv.Ratios), len(u.Derived.Ratios))
	}
	bits := func(x engine.Num) uint64 { return math.Float64bits(float64(x)) }
	for i := range dv.Ratios {
		p, q := &u.Derived.Ratios[i], &dv.Ratios[i]
		if bits(p.Value) != bits(q.Value) || p.PublishDate != q.PublishDate || p.RetrievalDate != q.RetrievalDate ||
			p.ReferenceDate != q.ReferenceDate || p.Indicator != q.Indicator || p.Class != q.Class || p.Frequency != q.Frequency ||
			p.CompanyID != ds.RatioCompany(q) || p.Ticker != ds.RatioTicker(q) {
			t.Fatalf("point %d: %+v loaded as %+v", i, *p, *q)
		}
		pv, qv := u.Derived.Vars(p), ds.RatioVars(q)
		if i == 0 {
			// The loaded universe, points in place, written again (both
			// formats) and decoded: the same points.
			for _, v := range []uint16{5, 6} {
				back, _ := mustDecode(t, mustWrite(t, ds.Universe(), WriteOptions{Version: v}))
				if d := diff(&back.Derived, &u.Derived); d != "" {
					t.Fatalf("format %d written from the loaded universe: %s", v, d)
				}
			}
		}
		if len(pv) != len(qv) {
			t.Fatalf("point %d: %d variables loaded as %d", i, len(pv), len(qv))
		}
		for j := range pv {
			if bits(pv[j]) != bits(qv[j]) {
				t.Fatalf("point %d variable %d: %v loaded as %v", i, j, pv[j], qv[j])
			}
		}
	}
}

// The ratio columns are written a block at a time: put is handed each
// block once, in order, and together they are the appended columns.
func TestRatioColumnsWrittenByBlock(t *testing.T) {
	u := ratioDemo(t)
	want, wix, err := appendRatioColumns(nil, &u.Derived)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	var sizes []int64
	n, ix, err := writeRatioColumns(&u.Derived, func(b []byte) error {
		got = append(got, b...)
		sizes = append(sizes, int64(len(b)))
		return nil
	})
	if err != nil || n != int64(len(want)) || string(got) != string(want) {
		t.Fatalf("written %d bytes (%v), appended %d; same bytes: %v", n, err, len(want), string(got) == string(want))
	}
	if d := diff(ix, wix); d != "" {
		t.Fatalf("indexes differ: %s", d)
	}
	if len(sizes) != len(ix.Blocks) || len(sizes) < 3 {
		t.Fatalf("%d puts for %d blocks", len(sizes), len(ix.Blocks))
	}
	for i, b := range ix.Blocks {
		if sizes[i] != b.N {
			t.Errorf("put %d: %d bytes, block %d", i, sizes[i], b.N)
		}
	}
	failed := errors.New("disk full")
	if _, _, err := writeRatioColumns(&u.Derived, func([]byte) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("a failing put: %v", err)
	}
}

// A byte flipped in any block of the ratio columns fails Decode and Load
// with ErrChecksum; a lazily verified load is published, no ticker's
// bars are found bad, and the first CheckAll (the first request of a
// route that reads ratio points) finds the block.
func TestRatioColumnsBlockFlipped(t *testing.T) {
	u := ratioDemo(t)
	v6 := mustWrite(t, u, WriteOptions{Version: 6})
	_, h := mustDecode(t, v6)
	dir := t.TempDir()
	for k, b := range ratioBlocks(t, u) {
		for _, at := range []int64{b.Off, b.Off + b.N/2, b.Off + b.N - 1} {
			bad := append([]byte(nil), v6...)
			bad[h.ColumnsOffset+at] ^= 0x10
			if _, _, err := Decode(bad); !errors.Is(err, ErrChecksum) {
				t.Errorf("byte %d flipped in ratio block %d: %v, want ErrChecksum", at, k, err)
			}
			path := filepath.Join(dir, "bad.snap")
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
				t.Errorf("Load, byte %d flipped in ratio block %d: %v, want ErrChecksum", at, k, err)
			}
			// Verified on first use: the load leaves the block to the
			// first request that reads across tickers, which finds it.
			ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
			if err != nil {
				t.Errorf("lazy Load, byte %d flipped in ratio block %d: %v", at, k, err)
				continue
			}
			if err := ds.BlockErr(); err != nil {
				t.Errorf("lazy Load, byte %d flipped in ratio block %d: bad before any use: %v", at, k, err)
			}
			for i := range ds.Assets() {
				a := &ds.Assets()[i]
				if err := ds.CheckAsset(a); err != nil {
					t.Errorf("lazy Load, byte %d flipped in ratio block %d: %s's bars: %v", at, k, a.Ticker, err)
				}
			}
			if err := ds.CheckAll(); !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "ratios block") {
				t.Errorf("lazy Load, byte %d flipped in ratio block %d: CheckAll %v, want ErrChecksum naming the ratios block", at, k, err)
			}
			if err := ds.BlockErr(); !errors.Is(err, ErrChecksum) {
				t.Errorf("lazy Load, byte %d flipped in ratio block %d: BlockErr %v after CheckAll", at, k, err)
			}
			// The background pass alone, reading the blocks from the file.
			done := make(chan engine.BlockStatus, 1)
			ds, _, err = Load(path, LoadOptions{LazyVerify: true, VerifyRate: 1 << 40, Verified: func(s engine.BlockStatus) { done <- s }})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case st := <-done:
				x := ds.Blocks().(*colBlocks)
				if st.Bad != 1 || !errors.Is(st.Err, ErrChecksum) || !strings.Contains(st.Err.Error(), "ratios block") || x.fromFile.Load() != x.blocks {
					t.Errorf("pass, byte %d flipped in ratio block %d: %+v, %d of %d blocks read from the file", at, k, st, x.fromFile.Load(), x.blocks)
				}
			case <-time.After(time.Minute):
				t.Fatal("the background pass did not end")
			}
		}
	}
}

// The ratio columns' index reads back as written; a cut one, or one
// that does not match its columns, is refused.
func TestRatioColumnsRefused(t *testing.T) {
	u := ratioDemo(t)
	sec, ix, err := appendRatioColumns(alignedBytes(0), &u.Derived)
	if err != nil {
		t.Fatal(err)
	}
	sec = append(alignedBytes(int64(len(sec)))[:0], sec...)
	b := appendRatioIndex(nil, ix)
	got, err := readRatioIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got, ix); d != "" {
		t.Fatalf("index read back differs: %s", d)
	}
	for n := range len(b) {
		if _, err := readRatioIndex(b[:n]); !errors.Is(err, errColumns) {
			t.Fatalf("cut at %d of %d bytes: %v, want errColumns", n, len(b), err)
		}
	}
	if _, err := readRatioIndex(append(b[:len(b):len(b)], 0)); !errors.Is(err, errColumns) {
		t.Errorf("a trailing byte: %v", err)
	}
	if _, _, err := openRatioColumns(sec, ix, true, nil); err != nil {
		t.Fatalf("the written columns: %v", err)
	}
	ncat := func() int { return len(u.Derived.Catalog) }
	if err := checkRatioBlocks(sec, ix, ncat); err != nil {
		t.Fatalf("the written columns' blocks: %v", err)
	}
	// points: the open of points in place reads none, and leaves the
	// check to the blocks (a decoding open still makes it).
	for _, c := range []struct {
		name   string
		points bool
		edit   func(ix *ratioIndex, sec []byte)
	}{
		{"a point more", false, func(ix *ratioIndex, _ []byte) { ix.Points++ }},
		{"a variable less", false, func(ix *ratioIndex, _ []byte) { ix.Vars-- }},
		{"a run's company", true, func(ix *ratioIndex, _ []byte) { ix.Runs[1].Company = ix.Runs[0].Company }},
		{"a run's points", true, func(ix *ratioIndex, _ []byte) { ix.Runs[0].Points++; ix.Runs[1].Points-- }},
		{"a run outside its block", false, func(ix *ratioIndex, _ []byte) { ix.Runs[len(ix.Runs)-1].PointBk = 0 }},
		{"a block beyond the columns", false, func(ix *ratioIndex, _ []byte) { ix.Blocks[len(ix.Blocks)-1].N++ }},
		{"a symbol beyond the table", false, func(ix *ratioIndex, _ []byte) { ix.Syms = ix.Syms[:1] }},
		{"a class", true, func(_ *ratioIndex, sec []byte) { sec[42] = 250 }},
		{"a frequency", true, func(_ *ratioIndex, sec []byte) { sec[43] = 250 }},
		{"variables not in sequence", true, func(_ *ratioIndex, sec []byte) { sec[ratioPointBytes+36]++ }},
		{"a ticker beyond the table", true, func(_ *ratioIndex, sec []byte) { sec[35] = 0x7f }},
		{"an indicator beyond the catalog", true, func(_ *ratioIndex, sec []byte) { sec[40], sec[41] = 0xff, 0xff }},
		{"points out of order", true, func(_ *ratioIndex, sec []byte) {
			// The first two points of the first run swapped (its first
			// series holds two at least, of other reference dates).
			var a [ratioPointBytes]byte
			copy(a[:], sec[:ratioPointBytes])
			copy(sec[:ratioPointBytes], sec[ratioPointBytes:2*ratioPointBytes])
			copy(sec[ratioPointBytes:], a[:])
			// Keep the variables' offsets in sequence.
			copy(sec[36:40], a[36:40])
			binary.LittleEndian.PutUint32(sec[ratioPointBytes+36:], binary.LittleEndian.Uint32(sec[36:])+uint32(sec[44]))
		}},
	} {
		x := ratioIndex{Points: ix.Points, Vars: ix.Vars, Syms: append([]string(nil), ix.Syms...),
			Runs: append([]ratioRun(nil), ix.Runs...), Blocks: append([]colBlock(nil), ix.Blocks...)}
		s := append(alignedBytes(int64(len(sec)))[:0], sec...)
		c.edit(&x, s)
		if !c.points {
			if _, _, err := openRatioColumns(s, x, true, nil); !errors.Is(err, errColumns) {
				t.Errorf("%s: %v, want errColumns", c.name, err)
			}
			continue
		}
		if _, _, err := openRatioColumns(s, x, true, nil); err != nil {
			t.Errorf("%s: opened in place: %v, want nil (the blocks check points)", c.name, err)
		}
		// A decoded open checks what the blocks do but the catalog and
		// the order, which engine.Build checks of points in the heap.
		if _, _, err := openRatioColumns(s, x, false, nil); !errors.Is(err, errColumns) && !strings.Contains(c.name, "catalog") && !strings.Contains(c.name, "order") {
			t.Errorf("%s: decoded: %v, want errColumns", c.name, err)
		}
		if err := checkRatioBlocks(s, x, ncat); !errors.Is(err, errRatioPoint) || !blockFormatErr(err) {
			t.Errorf("%s: the blocks' check: %v, want errRatioPoint", c.name, err)
		}
	}
}

// checkRatioBlocks runs the points' check of every block of ratio
// columns sec (ratioBlockCheck) and returns the first error.
func checkRatioBlocks(sec []byte, ix ratioIndex, ncat func() int) error {
	check := ratioBlockCheck(ix, ncat)
	for i, b := range ix.Blocks {
		if err := check(i, sec[b.Off:b.Off+b.N]); err != nil {
			return err
		}
	}
	return nil
}

// FuzzRatioIndex reads an index of the ratio columns from the fuzzer's
// bytes and opens the columns with it, then checks their blocks' points:
// refused or opened, never a panic;
// what is read writes back to the same bytes.
func FuzzRatioIndex(f *testing.F) {
	u := synthUniverse(3, 10, 0, 0, 2)
	sec, ix, err := appendRatioColumns(alignedBytes(0), &u.Derived)
	if err != nil {
		f.Fatal(err)
	}
	sec = append(alignedBytes(int64(len(sec)))[:0], sec...)
	f.Add(appendRatioIndex(nil, ix))
	f.Add([]byte{1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := readRatioIndex(b)
		if err != nil {
			return
		}
		if got := appendRatioIndex(nil, x); string(got) != string(b) {
			t.Fatalf("read %x, wrote back %x", b, got)
		}
		for _, inPlace := range []bool{true, false} {
			syms := make([]engine.Sym, len(x.Syms))
			ps, vars, err := openRatioColumns(sec, x, inPlace, syms)
			if err != nil {
				continue
			}
			d := engine.Derived{Ratios: ps, RatioVars: vars}
			for i := range ps {
				_ = d.Vars(&ps[i])
			}
			if inPlace {
				// The blocks' check of the points: refused or passed,
				// never a panic.
				_ = checkRatioBlocks(sec, x, func() int { return len(u.Derived.Catalog) })
			}
		}
	})
}

// A load builds each company's ratio series on its first use, from the
// runs of the index (engine.BuildOptions.RatiosChecked), and the
// screener's ratio columns on its first use: the same series, points,
// variables, known-from times and screener cells as a Build of the
// decoded points (which reads them all at once), for every company.
func TestLazyRatiosAsBuilt(t *testing.T) {
	u := ratioDemo(t)
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	lazy, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	du, _, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	eager, err := engine.Build(du)
	if err != nil {
		t.Fatal(err)
	}
	if st := lazy.Blocks().Status(); st.Verified != openBlocks(lazy) {
		t.Fatalf("%d blocks verified before any use, want the %d of the bars read at open", st.Verified, openBlocks(lazy))
	}
	n := 0
	for i := range eager.Issuers() {
		want := &eager.Issuers()[i]
		got, ok := lazy.Issuer(want.ID)
		if !ok {
			t.Fatalf("%s: not in the load", want.ID)
		}
		if err := lazy.CheckIssuer(got); err != nil {
			t.Fatal(err)
		}
		gs, ws := got.Ratios(), want.Ratios()
		if len(gs) != len(ws) {
			t.Fatalf("%s: %d series, want %d", want.ID, len(gs), len(ws))
		}
		for si := range ws {
			g, w := &gs[si], &ws[si]
			if g.Indicator != w.Indicator || g.Class != w.Class || g.Frequency != w.Frequency || len(g.Points) != len(w.Points) ||
				!slices.Equal(g.KnownFrom, w.KnownFrom) {
				t.Fatalf("%s series %d: %d %q %q %d points, want %d %q %q %d", want.ID, si, g.Indicator, g.Class, g.Frequency, len(g.Points), w.Indicator, w.Class, w.Frequency, len(w.Points))
			}
			for k := range w.Points {
				p, q := &g.Points[k], &w.Points[k]
				if math.Float64bits(float64(p.Value)) != math.Float64bits(float64(q.Value)) || p.ReferenceDate != q.ReferenceDate ||
					p.PublishDate != q.PublishDate || p.RetrievalDate != q.RetrievalDate ||
					!sameNums(lazy.RatioVars(p), eager.RatioVars(q)) {
					t.Fatalf("%s series %d point %d differs: %+v %v, want %+v %v", want.ID, si, k, *p, lazy.RatioVars(p), *q, eager.RatioVars(q))
				}
				n++
			}
		}
	}
	if n != len(u.Derived.Ratios) {
		t.Fatalf("%d points compared, the universe has %d", n, len(u.Derived.Ratios))
	}
	if err := lazy.CheckAll(); err != nil {
		t.Fatal(err)
	}
	gs, ws := lazy.Screener(), eager.Screener()
	for k := range ws.Ratios {
		for r := range ws.Ratios[k] {
			if math.Float64bits(float64(gs.Ratios[k][r])) != math.Float64bits(float64(ws.Ratios[k][r])) || !gs.RatioPublished[k][r].Equal(ws.RatioPublished[k][r]) {
				t.Fatalf("screener indicator %d row %d: %v %v, want %v %v", k, r, gs.Ratios[k][r], gs.RatioPublished[k][r], ws.Ratios[k][r], ws.RatioPublished[k][r])
			}
		}
	}
}

// sameNums reports whether a and b hold the same values, bit for bit.
func sameNums(a, b []engine.Num) bool {
	return slices.EqualFunc(a, b, func(x, y engine.Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) })
}

// Ratio points out of order within their company's run, under good
// checksums (no writer makes them; this one writes what it is given),
// are a bad block for the load that uses them in place: refused when
// every block is verified at open, and on the company's first use
// (CheckIssuer) in a lazy load, whose open reads no point, after which
// the Dataset is failed.
func TestLazyVerifyFindsRatioPointsOutOfOrder(t *testing.T) {
	u := ratioDemo(t)
	ps := u.Derived.Ratios
	i := 1
	for ; i < len(ps); i++ {
		q, p := &ps[i-1], &ps[i]
		if q.CompanyID == p.CompanyID && q.Indicator == p.Indicator && q.Class == p.Class && q.Frequency == p.Frequency && q.ReferenceDate < p.ReferenceDate {
			break
		}
	}
	if i == len(ps) {
		t.Fatal("no two points of one series")
	}
	ps[i-1].ReferenceDate, ps[i].ReferenceDate = ps[i].ReferenceDate, ps[i-1].ReferenceDate
	company := u.Derived.SymOf(ps[i].CompanyID).String()
	path := filepath.Join(t.TempDir(), "v6.snap")
	if err := WriteFile(path, u, WriteOptions{Version: 6}); err != nil {
		t.Skipf("the writer refuses the points: %v", err)
	}
	if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "points out of order") {
		t.Fatalf("Load verifying every block: %v, want ErrFormat naming the points", err)
	}
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatalf("lazy load: %v", err)
	}
	is, _ := ds.Issuer(company)
	if err := ds.CheckIssuer(is); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "ratios block") {
		t.Fatalf("CheckIssuer(%s): %v, want the ratio block bad", company, err)
	}
	if ds.BlockErr() == nil || ds.CheckAll() == nil {
		t.Fatal("the Dataset is not failed")
	}
	if st := ds.Blocks().Status(); st.Bad != 1 {
		t.Fatalf("%d blocks bad, want 1", st.Bad)
	}
}
