package assemble

import (
	"maps"
	"math"
	"testing"

	"github.com/pregao/pregao/engine"
)

func TestLiquidityRanks(t *testing.T) {
	day := func(i int) engine.Date { return engine.MakeDate(2022, 1, 1) + engine.Date(i) }
	// series returns a ticker's series over days from..to-1, volume v a day.
	series := func(ticker string, from, to int, v engine.Num) engine.Series {
		s := engine.Series{Ticker: ticker}
		for i := from; i < to; i++ {
			s.Dates = append(s.Dates, day(i))
			s.Volume = append(s.Volume, v)
		}
		return s
	}
	nan := engine.Num(math.NaN())
	for _, c := range []struct {
		name string
		in   []engine.Series
		want map[string]int
	}{
		{"none", nil, map[string]int{}},
		{"by volume", []engine.Series{series("AAAA3", 0, 5, 10), series("BBBB3", 0, 5, 30), series("CCCC3", 0, 5, 20)},
			map[string]int{"BBBB3": 1, "CCCC3": 2, "AAAA3": 3}},
		{"ties by ticker", []engine.Series{series("BBBB3", 0, 2, 10), series("AAAA3", 0, 2, 10)},
			map[string]int{"AAAA3": 1, "BBBB3": 2}},
		// 30 sessions: only the last 21 (days 9-29) count; AAAA3 traded
		// a lot before them, BBBB3 a little in them.
		{"last 21 sessions", []engine.Series{series("AAAA3", 0, 9, 1e9), series("BBBB3", 9, 30, 1), series("CCCC3", 8, 30, 1)},
			map[string]int{"BBBB3": 1, "CCCC3": 2}},
		{"sessions of any ticker", []engine.Series{series("AAAA3", 0, 21, 1), series("BBBB3", 21, 22, 1)},
			map[string]int{"AAAA3": 1, "BBBB3": 2}},
		{"no volume, NaN volume, not a bundle ticker", []engine.Series{series("AAAA3", 0, 3, 0), series("BBBB3", 0, 3, nan),
			series("PETR4F", 0, 3, 100), series("CCCC3", 0, 3, 1)},
			map[string]int{"CCCC3": 1}},
	} {
		got := liquidityRanks(c.in)
		if got == nil {
			got = map[string]int{}
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: ranks %v, want %v", c.name, got, c.want)
		}
	}
}
