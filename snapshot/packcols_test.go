package snapshot

import (
	"encoding/binary"
	"math/bits"
	"sync"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// Packed daily columns, measured against the fixed-width ones the
// column area holds (docs/snapshot-format.md, "Choosing the encoding"):
// each column of a series cut into blocks of packRows values, a block
// stored as its first value (zigzag uvarint), a bit width and the
// zigzag deltas from one value to the next bit-packed at that width, as
// VictoriaMetrics stores scaled integers (without its zstd pass, so that
// a block decodes on its own). A prototype: only what the measurement
// needs, not a format.

const packRows = 128

// appendPacked appends vals packed in blocks.
func appendPacked(dst []byte, vals []int64) []byte {
	for lo := 0; lo < len(vals); lo += packRows {
		blk := vals[lo:min(lo+packRows, len(vals))]
		dst = binary.AppendUvarint(dst, zig(blk[0]))
		var or uint64
		for i := 1; i < len(blk); i++ {
			or |= zig(blk[i] - blk[i-1])
		}
		w := bits.Len64(or)
		dst = append(dst, byte(w))
		var acc uint64
		n := 0
		for i := 1; i < len(blk); i++ {
			d := zig(blk[i] - blk[i-1])
			acc |= d << n
			n += w
			if n >= 64 {
				dst = binary.LittleEndian.AppendUint64(dst, acc)
				n -= 64
				acc = 0
				if n > 0 {
					acc = d >> (w - n)
				}
			}
		}
		for ; n > 0; n -= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
		}
	}
	return dst
}

// unpackBlock decodes the block at src of n values into out and returns
// the bytes after it.
func unpackBlock(src []byte, out []int64) []byte {
	u, k := binary.Uvarint(src)
	src = src[k:]
	w := int(src[0])
	src = src[1:]
	v := unzig(u)
	out[0] = v
	nb := (w*(len(out)-1) + 7) / 8
	var acc uint64
	have := 0
	p := 0
	mask := uint64(1)<<w - 1
	for i := 1; i < len(out); i++ {
		if have < w {
			// refill a byte at a time (a prototype, not tuned)
			for have <= 56 && p < nb {
				acc |= uint64(src[p]) << have
				p++
				have += 8
			}
		}
		d := acc & mask
		if w == 64 {
			d = acc
		}
		acc >>= w
		have -= w
		v += unzig(d)
		out[i] = v
	}
	return src[nb:]
}

// packedSeries is one daily series' eight columns packed.
type packedSeries struct {
	rows int
	cols [8][]byte
	offs [8][]int32 // where each block starts (a format would index them)
}

func packSeries(s *engine.Series) (packedSeries, bool) {
	c, ok := s.Bars().Columns()
	if !ok {
		return packedSeries{}, false
	}
	n := s.Len()
	p := packedSeries{rows: n}
	vals := make([]int64, n)
	put := func(k int, f func(i int) int64) {
		for i := range vals {
			vals[i] = f(i)
		}
		p.cols[k] = appendPacked(nil, vals)
		for src, at := p.cols[k], 0; at < len(p.cols[k]); {
			p.offs[k] = append(p.offs[k], int32(at))
			_, n := binary.Uvarint(src[at:])
			w := int(src[at+n])
			rows := min(packRows, len(vals)-(len(p.offs[k])-1)*packRows)
			at += n + 1 + (w*(rows-1)+7)/8
		}
	}
	put(0, func(i int) int64 { return int64(c.Dates[i]) })
	put(1, func(i int) int64 { return int64(c.Open[i]) })
	put(2, func(i int) int64 { return int64(c.High[i]) })
	put(3, func(i int) int64 { return int64(c.Low[i]) })
	put(4, func(i int) int64 { return int64(c.Close[i]) })
	put(5, func(i int) int64 { return c.Volume[i] })
	put(6, func(i int) int64 { return int64(c.Quantity[i]) })
	put(7, func(i int) int64 { return int64(c.Trades[i]) })
	return p, true
}

// decodeFrom decodes rows [from, rows) of every column into out (8
// columns of rows values), block by block, and returns a sum of them.
func (p *packedSeries) decodeFrom(from int, out *[8][]int64) int64 {
	var sum int64
	first := from / packRows
	for k := range p.cols {
		col := out[k][:p.rows]
		src := p.cols[k][p.offs[k][first]:]
		for b := first; b*packRows < p.rows; b++ {
			src = unpackBlock(src, col[b*packRows:min((b+1)*packRows, p.rows)])
		}
		for _, v := range col[from:] {
			sum += v
		}
	}
	return sum
}

var packOnce = sync.OnceValues(func() ([]engine.Series, []packedSeries) {
	u := demo.GenerateSize(1, demo.Size{Companies: 60, FIIs: 20, ETFs: 10})
	var ss []engine.Series
	var ps []packedSeries
	for i := range u.Daily {
		s := u.Daily[i]
		engine.CompactSeries(&s)
		if p, ok := packSeries(&s); ok && s.Len() > 0 {
			ss, ps = append(ss, s), append(ps, p)
		}
	}
	return ss, ps
})

// The packed columns decode to the values they were made of.
func TestPackedColumnsRoundTrip(t *testing.T) {
	ss, ps := packOnce()
	var out [8][]int64
	for i := range ss {
		c, _ := ss[i].Bars().Columns()
		for k := range out {
			out[k] = make([]int64, ss[i].Len())
		}
		ps[i].decodeFrom(0, &out)
		for r := range ss[i].Len() {
			want := [8]int64{int64(c.Dates[r]), int64(c.Open[r]), int64(c.High[r]), int64(c.Low[r]), int64(c.Close[r]), c.Volume[r], int64(c.Quantity[r]), int64(c.Trades[r])}
			for k := range out {
				if out[k][r] != want[k] {
					t.Fatalf("series %s row %d column %d: %d, want %d", ss[i].Ticker, r, k, out[k][r], want[k])
				}
			}
		}
	}
}

// BenchmarkPackedDaily reads the rows a request reads: a ticker's whole
// history, and the last 252 rows of each of (up to) 500 tickers, from
// the fixed-width columns in place (a sum of every value) and from the
// packed blocks (decoded, then summed). It reports the bytes a bar
// each way.
func BenchmarkPackedDaily(b *testing.B) {
	ss, ps := packOnce()
	var fixed, packed, bars int64
	longest := 0
	for i := range ss {
		fixed += dailyColBytes(ss[i].Len(), false)
		for _, c := range ps[i].cols {
			packed += int64(len(c))
		}
		bars += int64(ss[i].Len())
		if ss[i].Len() > ss[longest].Len() {
			longest = i
		}
	}
	var out [8][]int64
	for k := range out {
		out[k] = make([]int64, ss[longest].Len())
	}
	sumFixed := func(s *engine.Series, from int) int64 {
		c, _ := s.Bars().Columns()
		var sum int64
		for r := from; r < s.Len(); r++ {
			sum += int64(c.Dates[r]) + int64(c.Open[r]) + int64(c.High[r]) + int64(c.Low[r]) + int64(c.Close[r]) + c.Volume[r] + int64(c.Quantity[r]) + int64(c.Trades[r])
		}
		return sum
	}
	batch := min(500, len(ss))
	report := func(b *testing.B, rows int) {
		b.ReportMetric(float64(fixed)/float64(bars), "fixedB/bar")
		b.ReportMetric(float64(packed)/float64(bars), "packedB/bar")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
	}
	var sink int64
	b.Run("history/fixed", func(b *testing.B) {
		for b.Loop() {
			sink += sumFixed(&ss[longest], 0)
		}
		report(b, ss[longest].Len())
	})
	b.Run("history/packed", func(b *testing.B) {
		for b.Loop() {
			sink += ps[longest].decodeFrom(0, &out)
		}
		report(b, ss[longest].Len())
	})
	rows := 0
	for i := range batch {
		rows += min(252, ss[i].Len())
	}
	b.Logf("%d series, %d bars; the longest %d rows; the batch %d series, %d rows", len(ss), bars, ss[longest].Len(), batch, rows)
	b.Run("batch500x1y/fixed", func(b *testing.B) {
		for b.Loop() {
			for i := range batch {
				sink += sumFixed(&ss[i], max(0, ss[i].Len()-252))
			}
		}
		report(b, rows)
	})
	b.Run("batch500x1y/packed", func(b *testing.B) {
		for b.Loop() {
			for i := range batch {
				sink += ps[i].decodeFrom(max(0, ps[i].rows-252), &out)
			}
		}
		report(b, rows)
	})
	_ = sink
}
