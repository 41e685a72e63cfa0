package snapshot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
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
	for _, c := range []struct {
		name string
		edit func(ix *ratioIndex, sec []byte)
	}{
		{"a point more", func(ix *ratioIndex, _ []byte) { ix.Points++ }},
		{"a variable less", func(ix *ratioIndex, _ []byte) { ix.Vars-- }},
		{"a run's company", func(ix *ratioIndex, _ []byte) { ix.Runs[1].Company = ix.Runs[0].Company }},
		{"a run's points", func(ix *ratioIndex, _ []byte) { ix.Runs[0].Points++; ix.Runs[1].Points-- }},
		{"a run outside its block", func(ix *ratioIndex, _ []byte) { ix.Runs[len(ix.Runs)-1].PointBk = 0 }},
		{"a block beyond the columns", func(ix *ratioIndex, _ []byte) { ix.Blocks[len(ix.Blocks)-1].N++ }},
		{"a symbol beyond the table", func(ix *ratioIndex, _ []byte) { ix.Syms = ix.Syms[:1] }},
		{"a class", func(_ *ratioIndex, sec []byte) { sec[42] = 250 }},
		{"a frequency", func(_ *ratioIndex, sec []byte) { sec[43] = 250 }},
		{"variables out of order", func(_ *ratioIndex, sec []byte) { sec[ratioPointBytes+36]++ }},
		{"a ticker beyond the table", func(_ *ratioIndex, sec []byte) { sec[35] = 0x7f }},
	} {
		x := ratioIndex{Points: ix.Points, Vars: ix.Vars, Syms: append([]string(nil), ix.Syms...),
			Runs: append([]ratioRun(nil), ix.Runs...), Blocks: append([]colBlock(nil), ix.Blocks...)}
		s := append(alignedBytes(int64(len(sec)))[:0], sec...)
		c.edit(&x, s)
		if _, _, err := openRatioColumns(s, x, true, nil); !errors.Is(err, errColumns) {
			t.Errorf("%s: %v, want errColumns", c.name, err)
		}
	}
}

// FuzzRatioIndex reads an index of the ratio columns from the fuzzer's
// bytes and opens the columns with it: refused or opened, never a panic;
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
		}
	})
}
