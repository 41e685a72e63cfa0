package snapshot

import (
	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// colStream writes a column section block by block to put, holding only
// the open block in memory: the section, its blocks and its index are
// those appendDailyColumns and appendIntradayColumns give (each series'
// bytes are theirs), without the whole section in memory at once.
type colStream struct {
	put     func([]byte) error
	buf     []byte // the open block's bytes
	start   int64  // the open block's offset in the section
	ix      dailyIndex
	scratch []byte
	err     error
}

// add appends one series (its place in ix without Off and Block) whose
// columns are b, closing the open block first once it holds blockTarget
// bytes, as blocker.series does.
func (w *colStream) add(c dailyCol, b []byte) {
	w.boundary()
	c.Off, c.Block = w.start+int64(len(w.buf)), len(w.ix.Blocks)
	w.ix.Series = append(w.ix.Series, c)
	w.buf = append(w.buf, b...)
}

// boundary marks a place where a block may end (a series' or a ratio
// run's start): the open block is closed once it holds blockTarget
// bytes.
func (w *colStream) boundary() {
	if len(w.buf) >= blockTarget {
		w.flush()
	}
}

// flush hands the open block to put and records it.
func (w *colStream) flush() {
	if len(w.buf) == 0 {
		return
	}
	w.ix.Blocks = append(w.ix.Blocks, colBlock{Off: w.start, N: int64(len(w.buf)), Sum: xxhash.Sum64(w.buf)})
	if w.err == nil {
		w.err = w.put(w.buf)
	}
	w.start += int64(len(w.buf))
	w.buf = w.buf[:0]
}

// finish closes the last block of a section of n series (all empty: one
// block of 8 zero bytes, as blocker.finish) and returns the section's
// size and index.
func (w *colStream) finish(n int) (int64, dailyIndex, error) {
	if n > 0 && w.start == 0 && len(w.buf) == 0 {
		w.buf = append(w.buf, make([]byte, 8)...)
	}
	w.flush()
	return w.start, w.ix, w.err
}

// streamDailyColumns writes the daily column section of series to put
// and returns its size and index (appendDailyColumns' bytes and index).
func streamDailyColumns(series []engine.Series, put func([]byte) error) (int64, dailyIndex, error) {
	w := colStream{put: put}
	for i := range series {
		var one dailyIndex
		w.scratch, one = appendDailyColumns(w.scratch[:0], series[i:i+1])
		c := one.Series[0]
		b := w.scratch
		if c.Rows == 0 {
			b = nil // alone, a series of no rows is a block of 8 zero bytes
		}
		w.add(c, b)
	}
	return w.finish(len(series))
}

// streamIntradayColumns is streamDailyColumns for intraday series.
func streamIntradayColumns(series []engine.Intraday, put func([]byte) error) (int64, dailyIndex, error) {
	w := colStream{put: put}
	for i := range series {
		var one dailyIndex
		w.scratch, one = appendIntradayColumns(w.scratch[:0], series[i:i+1])
		c := one.Series[0]
		b := w.scratch
		if c.Rows == 0 {
			b = nil
		}
		w.add(c, b)
	}
	return w.finish(len(series))
}
