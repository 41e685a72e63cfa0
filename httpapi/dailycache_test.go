package httpapi

import (
	"bytes"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestDailyCacheMatchesEncoder: the cached daily datapoints of every asset
// are byte for byte what the series encoder writes, for every window that
// the cache covers, unadjusted and adjusted; windows it does not cover are
// refused.
func TestDailyCacheMatchesEncoder(t *testing.T) {
	ds := mustSmall(t)
	c := newDailyCache(ds)
	last := ds.LastSession()
	v := view{cutoff: int64(last+1) * 86400}
	windows := [][2]engine.Date{
		{last - 365, last}, {last - 30, last - 2}, {last, last}, {last - dailyCacheDays, last},
		{last - 5, last - 6}, {last + 1, last + 10}, {last - 10, last + 10},
		{last - dailyCacheDays - 1, last}, {0, last},
	}
	assets := ds.Assets()
	covered := 0
	for i := range assets {
		as := &assets[i]
		for _, adjusted := range []bool{false, true} {
			r := c.get(as, adjusted)
			if r == nil {
				t.Fatalf("%s: no rows", as.Ticker)
			}
			for _, w := range windows {
				o := quoteOpts{typ: TypeHistorical, interval: dailyInterval, start: w[0], end: w[1], adjusted: adjusted, v: v}
				want := appendBars(nil, seriesBars(nil, as, &o), as, &o)
				lo, hi := as.DayRange(w[0], min(w[1], v.lastDate()))
				got, ok := r.appendRange([]byte{'['}, lo, hi)
				if !ok {
					if lo >= r.lo && hi >= lo {
						t.Errorf("%s %v adjusted=%v: rows [%d,%d) refused (cache from %d)", as.Ticker, w, adjusted, lo, hi, r.lo)
					}
					continue
				}
				covered++
				got = append(got, ']')
				if !bytes.Equal(got, want) {
					t.Errorf("%s %v adjusted=%v:\ncached  %s\nencoder %s", as.Ticker, w, adjusted, got, want)
				}
			}
		}
		if first, again := c.get(as, false), c.get(as, false); first != again {
			t.Errorf("%s: rows built twice", as.Ticker)
		}
	}
	if covered == 0 {
		t.Fatal("no window covered")
	}
	var other engine.Asset
	if c.get(&other, false) != nil {
		t.Error("rows for an asset outside the dataset")
	}
}
