package snapshot

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// A build writes format 6 as WriteFile does for the bundle and its
// derived data, from a bundle or a universe in memory alike, and the
// file reads back as the format 5 build's universe.
func TestBuildFormat6IsWriteFiles(t *testing.T) {
	sz := demo.Size{Companies: 3, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 2, IntradaySessions: 2, ReportsFrom: 2024, FundReportsFrom: 2025, EventsFrom: 2025}
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := bundle.Write(dir, demo.GenerateSize(3, sz), bundle.WriteOptions{Compression: "none"}); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	v5, v6, direct, want := filepath.Join(tmp, "v5"), filepath.Join(tmp, "v6"), filepath.Join(tmp, "direct"), filepath.Join(tmp, "want")
	if _, err := BuildFromBundle(dir, v5, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := BuildFromBundle(dir, v6, WriteOptions{Version: 6})
	if err != nil {
		t.Fatal(err)
	}
	if h.FormatVersion != 6 || h.Columns == 0 {
		t.Fatalf("header: version %d, columns %d", h.FormatVersion, h.Columns)
	}
	if _, err := BuildFromUniverseContext(context.Background(), demo.GenerateSize(3, sz), direct, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	u, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Derived, err = ratios.Derive(u); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(want, u, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	b6, _ := os.ReadFile(v6)
	for _, other := range []string{want, direct} {
		if b, _ := os.ReadFile(other); len(b6) == 0 || !bytes.Equal(b, b6) {
			t.Errorf("%s (%d bytes) differs from the format 6 build (%d bytes)", filepath.Base(other), len(b), len(b6))
		}
	}
	u5, _, err := ReadFile(v5)
	if err != nil {
		t.Fatal(err)
	}
	u6, gh, err := ReadFile(v6)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(h, gh); d != "" {
		t.Errorf("returned header differs from the file's at %s", d)
	}
	if d := diff(inCashOrder(t, u5), u6); d != "" {
		t.Errorf("format 6 build reads back unlike format 5's at %s", d)
	}
	if _, err := BuildFromBundle(dir, filepath.Join(tmp, "v7"), WriteOptions{Version: 7}); err == nil {
		t.Error("version 7: no error")
	}
}

// A build's file, its sections and columns spilled to disk as they are
// made and copied after the header, is the one WriteFile writes from
// memory, byte for byte, in either format.
func TestBuildSpillIsWriteFiles(t *testing.T) {
	defer func(n int) { partTarget = n }(partTarget)
	partTarget = 2 << 10 // many parts, finished out of order
	sz := demo.Size{Companies: 4, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 3, IntradaySessions: 2, ReportsFrom: 2023, FundReportsFrom: 2025, EventsFrom: 2025}
	for _, v := range []uint16{5, 6} {
		tmp := t.TempDir()
		built, want := filepath.Join(tmp, "built"), filepath.Join(tmp, "want")
		if _, err := BuildFromUniverseContext(context.Background(), demo.GenerateSize(4, sz), built, WriteOptions{Version: v}); err != nil {
			t.Fatal(err)
		}
		u := demo.GenerateSize(4, sz)
		bundle.Canonicalize(u)
		var err error
		if u.Derived, err = ratios.Derive(u); err != nil {
			t.Fatal(err)
		}
		if err := WriteFile(want, u, WriteOptions{Version: v}); err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(built)
		b, _ := os.ReadFile(want)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("format %d: the build wrote %d bytes, WriteFile %d: not the same file", v, len(a), len(b))
		}
		if ents, _ := os.ReadDir(tmp); len(ents) != 2 {
			t.Errorf("format %d: the folder holds %d entries, want the two files (no spill file left)", v, len(ents))
		}
	}
}

// A format 6 build from the generator's universe whose daily bars were
// handed over series by series as generated (demo.GenerateSpilled into
// a DailySpill) writes the file WriteFile writes from the whole
// universe, byte for byte; the daily columns span several blocks and the
// ratio points several company groups.
func TestBuildDailySpilledIsWriteFiles(t *testing.T) {
	sz := demo.Size{Companies: 5, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 3, IntradaySessions: 3, ReportsFrom: 2023, FundReportsFrom: 2025, EventsFrom: 2025}
	tmp := t.TempDir()
	built, want := filepath.Join(tmp, "built"), filepath.Join(tmp, "want")
	ds, err := NewDailySpill(built)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	u, err := demo.GenerateSpilled(5, sz, nil, ds.Add)
	if err != nil {
		t.Fatal(err)
	}
	for i := range u.Daily {
		if s := &u.Daily[i]; s.Open != nil || len(s.Close) != s.Len() {
			t.Fatalf("daily series %q: open %d, close %d of %d rows: want closes only", s.Ticker, len(s.Open), len(s.Close), s.Len())
		}
	}
	_, err = BuildFromUniverseContext(context.Background(), u, built, WriteOptions{Version: 6, Daily: ds})
	if err != nil {
		t.Fatal(err)
	}
	w := demo.GenerateSize(5, sz)
	bundle.Canonicalize(w)
	if w.Derived, err = ratios.Derive(w); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(want, w, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(built)
	b, _ := os.ReadFile(want)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the build wrote %d bytes, WriteFile %d: not the same file", len(a), len(b))
	}
	if _, ix := appendDailyColumns(nil, w.Daily); len(ix.Blocks) < 3 {
		t.Errorf("daily columns in %d blocks, want several", len(ix.Blocks))
	}
	if err := ds.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 2 {
		t.Errorf("the folder holds %d entries, want the two files (no spill file left)", len(ents))
	}
}

// Daily columns written ahead are refused where they cannot be used,
// and must be the universe's series, each once.
func TestDailySpillRefused(t *testing.T) {
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	ds, err := NewDailySpill(out)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	u := synthUniverse(2, 10, 1, 10, 0)
	if err := ds.Add(&u.Daily[0]); err != nil {
		t.Fatal(err)
	}
	if err := ds.Add(&u.Daily[0]); err == nil {
		t.Error("a series added twice: no error")
	}
	bad := u.Daily[1]
	bad.Open = bad.Open[:1]
	if err := ds.Add(&bad); err == nil {
		t.Error("columns of different lengths: no error")
	}
	if err := WriteFile(out, u, WriteOptions{Version: 6, Daily: ds}); !errors.Is(err, errSpilledDaily) {
		t.Errorf("WriteFile: %v, want errSpilledDaily", err)
	}
	if _, err := BuildFromUniverseContext(context.Background(), u, out, WriteOptions{Version: 5, Daily: ds}); !errors.Is(err, errSpilledDaily) {
		t.Errorf("format 5 build: %v, want errSpilledDaily", err)
	}
	// The second series was never written ahead.
	if _, err := BuildFromUniverseContext(context.Background(), u, out, WriteOptions{Version: 6, Daily: ds}); err == nil {
		t.Error("a series not written ahead: no error")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("out written after a refused build: %v", err)
	}
}

// kindRange returns where a kind's columns lie in the column area of
// the format 6 file c is building.
func kindRange(t *testing.T, c *encoder, kind string) (base, size int64) {
	t.Helper()
	switch kind {
	case "accounts":
		return c.accounts.base, c.accounts.size
	case "report heads": // after the accounts
		return c.accounts.base + c.accounts.size, c.accounts.headSize
	case "fund ratios":
		if c.fund == nil {
			t.Fatal("no fund ratio columns")
		}
		b, n := binary.Uvarint(c.fund.body)
		sz, m := binary.Uvarint(c.fund.body[n:])
		if n <= 0 || m <= 0 {
			t.Fatal("fund ratios part: bad head")
		}
		return int64(b), int64(sz)
	}
	p, ok := c.colParts[kind]
	if !ok {
		t.Fatalf("no %s columns", kind)
	}
	b, n := binary.Uvarint(p.body)
	sz, m := binary.Uvarint(p.body[n:])
	if n <= 0 || m <= 0 {
		t.Fatalf("%s part: bad head", kind)
	}
	return int64(b), int64(sz)
}

// A build's check reads every column block back from the written file,
// the daily and intraday bars', the report accounts' and heads', the
// ratio points' and the fund ratio points', and refuses the file (not published) when one block's bytes
// do not match its checksum.
func TestBuildCheckFindsFlippedColumnByte(t *testing.T) {
	sz := demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 2, IntradaySessions: 2, ReportsFrom: 2024, FundReportsFrom: 2025, EventsFrom: 2025}
	u := func() *engine.Universe { return demo.GenerateSize(2, sz) }
	defer func() { testBeforeCheck = nil }()
	for _, kind := range []string{"daily", "intraday", "accounts", "report heads", "ratios", "fund ratios"} {
		t.Run(kind, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "s6")
			var blocks []colBlock
			testBeforeCheck = func(path string, h Header, c *encoder) {
				blocks = slices.Clone(c.blocks)
				base, size := kindRange(t, c, kind)
				if size == 0 {
					t.Fatalf("no %s columns", kind)
				}
				f, err := os.OpenFile(path, os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				at := h.ColumnsOffset + base + size/2
				b := []byte{0}
				if _, err := f.ReadAt(b, at); err != nil {
					t.Fatal(err)
				}
				b[0] ^= 1
				if _, err := f.WriteAt(b, at); err != nil {
					t.Fatal(err)
				}
			}
			_, err := BuildFromUniverseContext(context.Background(), u(), out, WriteOptions{Version: 6})
			if !errors.Is(err, ErrChecksum) {
				t.Fatalf("build with a flipped byte in the %s columns: %v, want ErrChecksum", kind, err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("refused file published: %v", err)
			}
			if len(blocks) == 0 {
				t.Fatal("no blocks listed")
			}
		})
	}
	// Unchanged, the same build passes its check.
	testBeforeCheck = nil
	if _, err := BuildFromUniverseContext(context.Background(), u(), filepath.Join(t.TempDir(), "s6"), WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
}

// The check's block list must cut the whole column area: a kind left out
// of it is an error, not a kind left unchecked.
func TestVerifyColumnsWantsEveryBlock(t *testing.T) {
	sz := demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 2, IntradaySessions: 2, ReportsFrom: 2024, FundReportsFrom: 2025, EventsFrom: 2025}
	out := filepath.Join(t.TempDir(), "s6")
	var (
		blocks           []colBlock
		h                Header
		accBase, accSize int64
	)
	testBeforeCheck = func(_ string, hh Header, c *encoder) {
		blocks, h = slices.Clone(c.blocks), hh
		accBase, accSize = kindRange(t, c, "accounts")
	}
	defer func() { testBeforeCheck = nil }()
	if _, err := BuildFromUniverseContext(context.Background(), demo.GenerateSize(2, sz), out, WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	if err := verifyColumns(out, h.ColumnsOffset, h.Columns, blocks); err != nil {
		t.Fatalf("good file: %v", err)
	}
	var noAcc []colBlock
	for _, b := range blocks {
		if b.Off < accBase || b.Off >= accBase+accSize {
			noAcc = append(noAcc, b)
		}
	}
	if accSize == 0 || len(noAcc) == len(blocks) {
		t.Fatal("no account blocks listed")
	}
	if err := verifyColumns(out, h.ColumnsOffset, h.Columns, noAcc); err == nil {
		t.Error("the account blocks left out of the list: no error")
	}
}
