package httpapi

import (
	"sync/atomic"

	"github.com/pregao/pregao/engine"
)

// dailyCacheDays is how far back from the snapshot's last session the
// encoded daily datapoints are cached: the default historical window (365
// days) and a little more.
const dailyCacheDays = 400

// dailyRows is one asset's encoded daily datapoints (interval 86400) of the
// rows [lo, lo+len(off)-1), unadjusted or adjusted: row lo+i is
// buf[off[i]:off[i+1]]. A daily datapoint depends only on its row and the
// row before it (the variation's reference), so it is the same in every
// answer: encoded once per snapshot, on first use, it is copied afterwards.
// Immutable once published.
type dailyRows struct {
	lo  int
	off []uint32
	buf []byte
}

// dailyCache holds the dailyRows of every asset of one Dataset, built
// lazily; two requests may build the same rows concurrently, and one of
// the identical results wins.
type dailyCache struct {
	from   engine.Date // first cached session date
	assets []engine.Asset
	rows   [2][]atomic.Pointer[dailyRows] // [adjusted][asset]
}

func newDailyCache(ds *engine.Dataset) *dailyCache {
	assets := ds.Assets()
	c := &dailyCache{from: ds.LastSession() - dailyCacheDays, assets: assets}
	for i := range c.rows {
		c.rows[i] = make([]atomic.Pointer[dailyRows], len(assets))
	}
	return c
}

// get returns the cached rows of as (building them on first use), or nil
// when as is not an asset of the cache's Dataset.
func (c *dailyCache) get(as *engine.Asset, adjusted bool) *dailyRows {
	i := as.Pos()
	if i >= len(c.assets) || &c.assets[i] != as {
		return nil
	}
	v := 0
	if adjusted {
		v = 1
	}
	slot := &c.rows[v][i]
	if r := slot.Load(); r != nil {
		return r
	}
	r := encodeDailyRows(as, as.DayIndex(c.from-1)+1, adjusted)
	slot.Store(r)
	return r
}

// encodeDailyRows encodes the daily datapoints of as from row lo to the
// last one, each as appendBars would write it in a daily series.
func encodeDailyRows(as *engine.Asset, lo int, adjusted bool) *dailyRows {
	n := as.Daily.Len()
	lo = max(lo, 0)
	if lo > n {
		lo = n
	}
	bars := as.AppendDaily(make([]engine.Bar, 0, n-lo), lo, n, adjusted)
	r := &dailyRows{lo: lo, off: make([]uint32, 1, len(bars)+1)}
	o := quoteOpts{interval: dailyInterval, adjusted: adjusted}
	var tmp []byte
	buf := make([]byte, 0, len(bars)*256)
	for i := range bars {
		// appendBars of the one bar writes "[datapoint]" with the reference
		// close taken from the row before it.
		tmp = appendBars(tmp[:0], bars[i:i+1], as, &o)
		buf = append(buf, tmp[1:len(tmp)-1]...)
		buf = append(buf, ',') // so that a range of rows is one copy
		r.off = append(r.off, uint32(len(buf)))
	}
	r.buf = append([]byte(nil), buf...) // exact size: the rows live as long as the snapshot
	return r
}

// appendRange appends the datapoints of rows [lo, hi) separated by commas
// and reports whether the cache holds them all.
func (r *dailyRows) appendRange(dst []byte, lo, hi int) ([]byte, bool) {
	if lo < r.lo || hi-r.lo >= len(r.off) || lo > hi {
		return dst, false
	}
	if lo < hi {
		dst = append(dst, r.buf[r.off[lo-r.lo]:r.off[hi-r.lo]-1]...) // without the last comma
	}
	return dst, true
}
