package engine

import (
	"math"
	"testing"
)

func TestValuationFormulas(t *testing.T) {
	mc := func(cs, cp, ps, pp, up, uf, sh Num) Num {
		return MarketCap(MarketCapInputs{CommonShares: cs, CommonPrice: cp, PreferredShares: ps, PreferredPrice: pp,
			UnitPrice: up, UnitFactor: uf, Shares: sh})
	}
	for _, tc := range []struct {
		name      string
		got, want Num
	}{
		{"per share", PerShare(50, 900, 3), Num(50.0 / 900 * 3)},
		{"per share, no shares", PerShare(50, 0, 1), Null},
		{"multiple", PriceMultiple(20, 50, 900, 1), Num(20 / (50.0 / 900))},
		{"multiple, no price", PriceMultiple(Null, 50, 900, 1), Null},
		{"multiple, zero figure", PriceMultiple(20, 0, 900, 1), Null},
		{"earnings yield", EarningsYield(50, 900, 3, 50), Num(50.0 / 900 * 3 / 50)},
		{"earnings yield, zero price", EarningsYield(50, 900, 1, 0), Null},
		{"dividend yield", DividendYield(0.6, 16), Num(0.6 / 16)},
		{"dividend yield, none paid", DividendYield(0, 16), 0},
		{"market cap", mc(540, 20, 360, 16, Null, Null, 900), 540*20 + 360*16},
		{"market cap, no preferred", mc(100, 5, 0, Null, Null, Null, 100), 500},
		{"market cap, unit case", mc(100, Null, 0, Null, 9, 2, 100), 450},
		{"market cap, unit case without unit", mc(100, Null, 0, Null, Null, Null, 100), Null},
		{"market cap, no share count", mc(Null, 5, Null, 4, Null, Null, Null), Null},
		{"enterprise value", EnterpriseValue(16560, 135), 16695},
		{"enterprise value, no market cap", EnterpriseValue(Null, 135), Null},
		{"EV multiple", EVMultiple(16695, 116), Num(16695.0 / 116)},
		{"EV multiple, zero", EVMultiple(16695, 0), Null},
	} {
		// want is folded from constants exactly: one rounding apart at most.
		if tc.got.Valid() != tc.want.Valid() || tc.want.Valid() && math.Abs(float64(tc.got-tc.want)) > 1e-15*math.Abs(float64(tc.want)) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
