package snapshot

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// columnSeries returns daily series of every form a column section
// holds: compact ones over several blocks, a wide one (a price with a
// tenth of a cent, a NaN that is not Null, a count over 32 bits), one
// with Null values, and an empty one.
func columnSeries() []engine.Series {
	u := synthUniverse(40, 1500, 0, 0, 0)
	ss := u.Daily
	w := synthUniverse(1, 30, 0, 0, 0).Daily[0]
	w.Ticker = "WIDE3"
	w.Open[3] = 12.345
	w.Close[7] = engine.Num(math.Float64frombits(0x7ff8000000000bad))
	w.Quantity[9] = 1 << 40
	n := synthUniverse(1, 20, 0, 0, 0).Daily[0]
	n.Ticker = "NULL3"
	n.High[2], n.Volume[5] = engine.Null, engine.Null
	ss = append(ss[:10], append([]engine.Series{w, n, {Ticker: "EMPT3", Dates: []engine.Date{}, Open: []engine.Num{}, High: []engine.Num{}, Low: []engine.Num{}, Close: []engine.Num{}, Volume: []engine.Num{}, Quantity: []int64{}, Trades: []int64{}}}, ss[10:]...)...)
	return ss
}

// sameBars reports the first row where a and b differ, bit for bit, or
// "" when they are the same.
func sameBars(a, b *engine.DailyBars) string {
	if a.Ticker != b.Ticker || a.Len() != b.Len() || a.Compact() != b.Compact() {
		return "ticker, length or form"
	}
	bits := func(v engine.Num) uint64 { return math.Float64bits(float64(v)) }
	for i := range a.Len() {
		if a.Dates[i] != b.Dates[i] || bits(a.Open(i)) != bits(b.Open(i)) || bits(a.High(i)) != bits(b.High(i)) ||
			bits(a.Low(i)) != bits(b.Low(i)) || bits(a.Close(i)) != bits(b.Close(i)) || bits(a.Volume(i)) != bits(b.Volume(i)) ||
			a.Quantity(i) != b.Quantity(i) || a.Trades(i) != b.Trades(i) {
			return "row " + a.Dates[i].String()
		}
	}
	return ""
}

// A daily column section gives back every series bit for bit, compact
// ones compact and wide ones wide, their columns used in place (no
// copy), cut into blocks of about blockTarget bytes of whole series.
func TestDailyColumnsRoundTrip(t *testing.T) {
	ss := columnSeries()
	sec, ix := appendDailyColumns(nil, ss)
	if len(ix.Series) != len(ss) {
		t.Fatalf("%d series indexed, want %d", len(ix.Series), len(ss))
	}
	if len(ix.Blocks) < 2 {
		t.Fatalf("%d blocks for %d bytes: want several", len(ix.Blocks), len(sec))
	}
	for i, b := range ix.Blocks[:len(ix.Blocks)-1] {
		if b.N < int64(blockTarget) {
			t.Errorf("block %d: %d bytes, under %d", i, b.N, blockTarget)
		}
	}
	got, err := openDailyColumns(sec, ix)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ss {
		want := ss[i].Bars()
		g := got[i].Bars()
		if d := sameBars(g, want); d != "" {
			t.Errorf("series %d (%s): %s differs", i, ss[i].Ticker, d)
		}
		if ss[i].Ticker == "WIDE3" && g.Compact() {
			t.Error("the wide series came back compact")
		}
	}
	// In place: the dates of the first series are the section's bytes.
	if littleEndian && &got[0].Dates[0] != (*engine.Date)(sliceAt(sec, ix.Series[0].Off)) {
		t.Error("the columns were copied, not used in place")
	}
	if c := newBlockChecks(sec, ix.Blocks); len(c.verifyAll()) != 0 {
		t.Error("a block of a section as written does not verify")
	}
}

// A byte flipped in any block is found by that block's check (on first
// use and by the background pass), and by no other block's.
func TestDailyColumnsBlockChecks(t *testing.T) {
	ss := columnSeries()
	sec, ix := appendDailyColumns(nil, ss)
	for k, b := range ix.Blocks {
		bad := append([]byte(nil), sec...)
		bad[b.Off+b.N/2] ^= 0x10
		c := newBlockChecks(bad, ix.Blocks)
		for i := range ix.Blocks {
			err := c.verify(i)
			if (i == k) != (err != nil) {
				t.Errorf("byte flipped in block %d: block %d verifies %v", k, i, err)
			}
			if i == k && !errors.Is(err, errBlock) {
				t.Errorf("block %d: %v, want errBlock", k, err)
			}
		}
		if got := c.verifyAll(); len(got) != 1 || got[0] != k || c.bad.Load() != 1 {
			t.Errorf("byte flipped in block %d: the pass reports %v (%d bad)", k, got, c.bad.Load())
		}
		if err := c.verify(k); err == nil {
			t.Errorf("block %d verifies on a second use", k)
		}
	}
}

// An index that does not match its section is refused before any column
// is read.
func TestDailyColumnsRefused(t *testing.T) {
	ss := columnSeries()[:12]
	sec, ix := appendDailyColumns(nil, ss)
	clone := func() dailyIndex {
		c := dailyIndex{Series: append([]dailyCol(nil), ix.Series...), Blocks: append([]colBlock(nil), ix.Blocks...)}
		return c
	}
	for _, c := range []struct {
		name string
		edit func(*dailyIndex) []byte
	}{
		{"rows past the block", func(x *dailyIndex) []byte { x.Series[len(x.Series)-1].Rows++; return sec }},
		{"negative rows", func(x *dailyIndex) []byte { x.Series[0].Rows = -1; return sec }},
		{"overlap", func(x *dailyIndex) []byte { x.Series[1].Off = x.Series[0].Off; return sec }},
		{"unaligned", func(x *dailyIndex) []byte { x.Series[1].Off += 4; return sec }},
		{"no such block", func(x *dailyIndex) []byte { x.Series[0].Block = len(x.Blocks); return sec }},
		{"series before its block", func(x *dailyIndex) []byte {
			x.Blocks = append([]colBlock{{Off: 0, N: 8}}, x.Blocks...)
			x.Blocks[1].Off, x.Blocks[1].N = 8, x.Blocks[1].N-8
			return sec
		}},
		{"blocks short of the section", func(x *dailyIndex) []byte { return append(sec, make([]byte, 8)...) }},
		{"empty block", func(x *dailyIndex) []byte { x.Blocks = append(x.Blocks, colBlock{Off: int64(len(sec))}); return sec }},
		{"wide read as compact", func(x *dailyIndex) []byte { x.Series[len(x.Series)-1].Wide = true; return sec }},
	} {
		x := clone()
		s := c.edit(&x)
		if _, err := openDailyColumns(s, x); !errors.Is(err, errColumns) {
			t.Errorf("%s: %v, want errColumns", c.name, err)
		}
	}
}

// FuzzDailyColumns opens a column section with an index of the fuzzer's
// numbers: it is refused or opened, never read out of bounds.
func FuzzDailyColumns(f *testing.F) {
	f.Add(int64(64), 3, int64(0), false, int64(64), 2, int64(8))
	f.Add(int64(4096), 100, int64(8), true, int64(4096), 1, int64(0))
	f.Fuzz(func(t *testing.T, size int64, rows int, off int64, wide bool, block int64, rows2 int, off2 int64) {
		if size < 0 || size > 1<<16 {
			return
		}
		sec := make([]byte, size)
		ix := dailyIndex{
			Series: []dailyCol{{Ticker: "A", Rows: rows, Wide: wide, Off: off}, {Ticker: "B", Rows: rows2, Off: off2, Block: 1}},
			Blocks: []colBlock{{Off: 0, N: block}, {Off: block, N: size - block}},
		}
		ss, err := openDailyColumns(sec, ix)
		if err != nil {
			return
		}
		for i := range ss {
			b := ss[i].Bars()
			for r := range b.Len() {
				_ = b.Close(r) + b.Volume(r)
			}
		}
	})
}

// BenchmarkDailyOpen compares what a load does with the daily bars of
// 300 tickers x 2,500 sessions: format 5 decodes its parts into the
// heap; a column section is opened in place, and verified in full by the
// background pass.
func BenchmarkDailyOpen(b *testing.B) {
	u := synthUniverse(300, 2500, 0, 0, 0)
	rows := 300 * 2500
	b.Run("format5-decode", func(b *testing.B) {
		data := mustWrite(b, &engine.Universe{Meta: u.Meta, Daily: u.Daily}, WriteOptions{})
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Decode(data); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(data))/float64(rows), "file-B/bar")
	})
	sec, ix := appendDailyColumns(nil, u.Daily)
	b.Run("columns-open", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := openDailyColumns(sec, ix); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(sec))/float64(rows), "file-B/bar")
	})
	b.Run("columns-verify", func(b *testing.B) {
		b.SetBytes(int64(len(sec)))
		for b.Loop() {
			if bad := newBlockChecks(sec, ix.Blocks).verifyAll(); len(bad) > 0 {
				b.Fatal(bad)
			}
		}
	})
}

// sliceAt returns the address of sec[off].
func sliceAt(sec []byte, off int64) unsafe.Pointer { return unsafe.Pointer(&sec[off]) }

// The index of a column section reads back as written, and a cut or
// altered one is refused.
func TestDailyIndexRoundTrip(t *testing.T) {
	_, ix := appendDailyColumns(nil, columnSeries())
	b := appendDailyIndex(nil, ix)
	got, err := readDailyIndex(b, dailyTailBytes)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(got, ix); d != "" {
		t.Errorf("index read back differs: %s", d)
	}
	for n := range len(b) {
		if _, err := readDailyIndex(b[:n], dailyTailBytes); !errors.Is(err, errColumns) {
			t.Fatalf("cut at %d of %d bytes: %v, want errColumns", n, len(b), err)
		}
	}
	if _, err := readDailyIndex(append(b, 0), dailyTailBytes); !errors.Is(err, errColumns) {
		t.Errorf("a trailing byte: %v", err)
	}
	// The form byte of the first series (after count, ticker length,
	// ticker and rows).
	first := ix.Series[0]
	at := 1 + 1 + len(first.Ticker) + uvarintLen(uint64(first.Rows))
	bad := append([]byte(nil), b...)
	bad[at] = 2
	if _, err := readDailyIndex(bad, dailyTailBytes); !errors.Is(err, errColumns) {
		t.Errorf("form byte 2: %v", err)
	}
	if _, err := readDailyIndex([]byte{0x80, 0}, dailyTailBytes); !errors.Is(err, errColumns) {
		t.Errorf("an overlong count: %v", err)
	}
}

// FuzzDailyIndex reads an index from the fuzzer's bytes and opens a
// section with it: refused or opened, never a panic; what is read writes
// back to the same bytes; the summaries it holds read back (the blocks'
// checks may then refuse them).
func FuzzDailyIndex(f *testing.F) {
	sec, ix := appendDailyColumns(nil, columnSeries()[:3])
	f.Add(appendDailyIndex(nil, ix))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := readDailyIndex(b, dailyTailBytes)
		if err != nil {
			return
		}
		if got := appendDailyIndex(nil, x); string(got) != string(b) {
			t.Fatalf("read %x, wrote back %x", b, got)
		}
		if ss, err := openDailyColumns(sec, x); err == nil {
			for i := range ss {
				bars := ss[i].Bars()
				for r := range bars.Len() {
					_ = bars.Close(r)
				}
			}
			c := kindChecks("daily", sec, x, true)
			c.verifyAll()
		}
		for _, c := range x.Series {
			if c.Tail != "" {
				_ = readDailyTail(c.Tail)
			}
		}
	})
}

// FuzzIntradayIndex is FuzzDailyIndex for an intraday column index (its
// summaries of another size).
func FuzzIntradayIndex(f *testing.F) {
	is := synthUniverse(6, 1, 6, 400, 0).Intraday
	sec, ix := appendIntradayColumns(nil, is)
	f.Add(appendDailyIndex(nil, ix))
	f.Add([]byte{0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := readDailyIndex(b, intradayTailBytes)
		if err != nil {
			return
		}
		if got := appendDailyIndex(nil, x); string(got) != string(b) {
			t.Fatalf("read %x, wrote back %x", b, got)
		}
		if _, err := openIntradayColumns(sec, x); err == nil {
			c := kindChecks("intraday", sec, x, true)
			c.verifyAll()
		}
		for _, c := range x.Series {
			if c.Tail != "" {
				_ = readIntradayTail(c.Tail)
			}
		}
	})
}

// Dates out of order or missing, or times out of order, under a good
// checksum (no writer makes them) make their block bad on first use
// (engine.Build leaves that check to the blocks), and no other block.
func TestColumnsBlockOrder(t *testing.T) {
	ss := columnSeries()
	for _, tc := range []struct {
		name  string
		spoil func(s *engine.Series)
	}{
		{"swapped", func(s *engine.Series) { s.Dates[3], s.Dates[4] = s.Dates[4], s.Dates[3] }},
		{"repeated", func(s *engine.Series) { s.Dates[5] = s.Dates[4] }},
		{"missing", func(s *engine.Series) { s.Dates[0] = engine.NoDate }},
	} {
		for _, at := range []int{10, 25} { // the wide series and a compact one
			bad := append([]engine.Series(nil), ss...)
			s := bad[at]
			s.Dates = append([]engine.Date(nil), s.Dates...)
			tc.spoil(&s)
			bad[at] = s
			sec, ix := appendDailyColumns(nil, bad)
			c := kindChecks("daily", sec, ix, true)
			for i := range ix.Blocks {
				err := c.verify(i)
				if (i == ix.Series[at].Block) != (err != nil) {
					t.Errorf("%s at series %d: block %d verifies %v", tc.name, at, i, err)
				}
				if err != nil && (!errors.Is(err, errOrder) || errors.Is(err, errBlock)) {
					t.Errorf("%s: %v, want errOrder", tc.name, err)
				}
			}
			if got := newBlockChecks(sec, ix.Blocks).verifyAll(); len(got) != 0 {
				t.Errorf("%s: checksums alone find blocks %v bad", tc.name, got)
			}
		}
	}
	is := synthUniverse(30, 1, 30, 400, 0).Intraday
	is[7].Times = append([]int64(nil), is[7].Times...)
	is[7].Times[9] = is[7].Times[8]
	sec, ix := appendIntradayColumns(nil, is)
	c := kindChecks("intraday", sec, ix, true)
	for i := range ix.Blocks {
		if err := c.verify(i); (i == ix.Series[7].Block) != (err != nil) || err != nil && !errors.Is(err, errOrder) {
			t.Errorf("intraday block %d verifies %v", i, err)
		}
	}
}
