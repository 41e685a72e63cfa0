package snapshot

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// DailySpill holds the daily bars' columns of a format 6 build written
// ahead, series by series, as their maker (the demo generator) finishes
// each: the heap then keeps of a series only what the build still reads
// (its ticker, dates and closes, for the ratios), never the whole
// universe's bars. BuildFromUniverseContext, given it in
// WriteOptions.Daily, lays the series' columns out in the universe's
// order from it: the file is the one the full series would give, byte
// for byte.
//
// Add is safe for concurrent use. Its spill file lives in the output's
// folder, unlinked at once (see spillFile); Close removes it.
type DailySpill struct {
	mu      sync.Mutex
	s       *spillFile
	at      map[string]spilledSeries
	scratch sync.Pool
}

// spilledSeries is one series in a DailySpill: its place in the column
// section (without offset and block) and where its bytes lie.
type spilledSeries struct {
	col dailyCol
	p   piece
}

// NewDailySpill creates the DailySpill of a build writing path.
func NewDailySpill(path string) (*DailySpill, error) {
	s, err := newSpill(path)
	if err != nil {
		return nil, err
	}
	return &DailySpill{s: s, at: map[string]spilledSeries{}}, nil
}

// Add writes s's columns (compact when its values fit, as the column
// section holds them). Each ticker is added once.
func (d *DailySpill) Add(s *engine.Series) error {
	n := len(s.Dates)
	if len(s.Open) != n || len(s.High) != n || len(s.Low) != n || len(s.Close) != n ||
		len(s.Volume) != n || len(s.Quantity) != n || len(s.Trades) != n {
		return fmt.Errorf("snapshot: daily series %q: columns have different lengths", s.Ticker)
	}
	buf, _ := d.scratch.Get().(*[]byte)
	if buf == nil {
		buf = new([]byte)
	}
	defer d.scratch.Put(buf)
	var one dailyIndex
	*buf, one = appendDailyColumns((*buf)[:0], []engine.Series{*s})
	c := one.Series[0]
	b := *buf
	if c.Rows == 0 {
		b = nil // alone, a series of no rows is a block of 8 zero bytes
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.at[s.Ticker]; dup {
		return fmt.Errorf("snapshot: daily series %q added twice", s.Ticker)
	}
	p, err := d.s.put(b)
	if err != nil {
		return err
	}
	if b == nil {
		p = piece{b: []byte{}}
	}
	d.at[s.Ticker] = spilledSeries{col: c, p: p}
	return nil
}

// Close removes the spill file.
func (d *DailySpill) Close() error {
	if d == nil {
		return nil
	}
	return d.s.Close()
}

// area returns the daily column section of series (tickers, dates and
// closes; their columns in d) as pieces of d's spill file, in order,
// with its size and index: the section and index streamDailyColumns
// makes of the full series. The series' bytes are read back to compute
// the blocks' checksums, not written again.
func (d *DailySpill) area(series []engine.Series) ([]piece, int64, dailyIndex, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.at) != len(series) {
		return nil, 0, dailyIndex{}, fmt.Errorf("snapshot: %d daily series, %d written ahead", len(series), len(d.at))
	}
	var (
		ix         dailyIndex
		ps         []piece
		off, start int64 // the next series' offset in the section; the open block's
		buf        []byte
	)
	h := xxhash.New()
	closeBlock := func() {
		if off > start {
			ix.Blocks = append(ix.Blocks, colBlock{Off: start, N: off - start, Sum: h.Sum64()})
			h.Reset()
			start = off
		}
	}
	for i := range series {
		s := &series[i]
		sp, ok := d.at[s.Ticker]
		if !ok || sp.col.Rows != s.Len() {
			return nil, 0, dailyIndex{}, fmt.Errorf("snapshot: daily series %q of %d rows not written ahead as such", s.Ticker, s.Len())
		}
		if off-start >= int64(blockTarget) { // as colStream.add cuts blocks
			closeBlock()
		}
		c := sp.col
		c.Off, c.Block = off, len(ix.Blocks)
		ix.Series = append(ix.Series, c)
		n := sp.p.len()
		if n == 0 {
			continue
		}
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		if _, err := d.s.f.ReadAt(buf[:n], sp.p.off); err != nil {
			return nil, 0, dailyIndex{}, fmt.Errorf("snapshot: spill file: %w", err)
		}
		h.Write(buf[:n])
		if k := len(ps) - 1; k >= 0 && ps[k].b == nil && ps[k].off+ps[k].n == sp.p.off {
			ps[k].n += n // contiguous in the spill file: one copy
		} else {
			ps = append(ps, sp.p)
		}
		off += n
	}
	if len(series) > 0 && off == 0 {
		// Series that are all empty: one block of 8 zero bytes.
		zero := make([]byte, 8)
		h.Write(zero)
		ps = append(ps, piece{b: zero})
		off = 8
	}
	closeBlock()
	return ps, off, ix, nil
}

// errSpilledDaily is the error of a build given daily columns written
// ahead where it cannot use them.
var errSpilledDaily = errors.New("snapshot: daily columns written ahead need a format 6 build of a universe")
