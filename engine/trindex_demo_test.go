package engine_test

import (
	"math"
	"testing"

	"github.com/pregao/pregao/engine"
)

// On the demo, every asset's total-return series from the index kept
// with the Dataset equals the one from its bars, bit for bit: whole
// histories, the default year, windows starting on and after ex-dates,
// gross and net, with a live bar after the history.
func TestTotalReturnRowsDemo(t *testing.T) {
	ds := mustAsOfDemo(t)
	bits := func(n engine.Num) uint64 { return math.Float64bits(float64(n)) }
	var bars []engine.Bar
	var got, want []engine.TRPoint
	checked := 0
	for ai := range ds.Assets() {
		a := &ds.Assets()[ai]
		n := a.Daily.Len()
		cash := ds.ExCash(a)
		if n == 0 || len(cash) == 0 || ai%4 != 0 { // a quarter of the assets: the test's time
			continue
		}
		windows := [][2]int{{0, n}, {max(0, n-252), n}, {n / 2, n}}
		for _, x := range cash[:min(len(cash), 6)] {
			k := a.DayIndex(x.PriorEx)
			for _, lo := range []int{k, k + 1, k + 2} {
				if lo >= 0 && lo <= n {
					windows = append(windows, [2]int{lo, n}, [2]int{lo, min(n, lo+40)})
				}
			}
		}
		last := a.Daily.Dates[n-1]
		live := &engine.Bar{Time: int64(last+1) * 86400, Date: last + 1, Close: 12.34, Factor: 1}
		for _, w := range windows {
			for _, extra := range []*engine.Bar{nil, live} {
				for _, net := range []bool{false, true} {
					bars = a.AppendDaily(bars[:0], w[0], w[1], false)
					if extra != nil {
						if w[1] != n {
							continue // a live bar follows the whole history
						}
						bars = append(bars, *extra)
					}
					want = ds.AppendTotalReturn(want[:0], a, bars, net)
					got = ds.AppendTotalReturnRows(got[:0], a, w[0], w[1], extra, net)
					if len(got) != len(want) {
						t.Fatalf("%s %v: %d points, want %d", a.Ticker, w, len(got), len(want))
					}
					for i := range got {
						g, x := got[i], want[i]
						if g.Date != x.Date || bits(g.Close) != bits(x.Close) || bits(g.Cash) != bits(x.Cash) || bits(g.Index) != bits(x.Index) {
							t.Fatalf("%s rows %v live %v net %v, point %d: %+v, want %+v", a.Ticker, w, extra != nil, net, i, g, x)
						}
					}
					checked++
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("%d series checked", checked)
	}
}
