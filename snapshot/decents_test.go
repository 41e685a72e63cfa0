package snapshot

import (
	"math"
	"testing"

	"github.com/pregao/pregao/engine"
)

// The loader keeps a daily series compact exactly when every price is
// whole cents within (MinInt32, MaxInt32] cents, every volume whole cents
// within 2^52, and every quantity and trade count within [0, 2^32-1];
// either way each row reads back bit for bit as the wide decode does.
func TestDecCentsBounds(t *testing.T) {
	series := func(px []engine.Num, vol []engine.Num, qty, trades []int64) engine.Series {
		n := len(px)
		s := engine.Series{Ticker: "TEST3", Dates: make([]engine.Date, n), Open: px, High: px, Low: px, Close: px, Volume: vol, Quantity: qty, Trades: trades}
		for i := range s.Dates {
			s.Dates[i] = d0 + engine.Date(i)
		}
		return s
	}
	ones := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = 1
		}
		return s
	}
	nan := engine.Null
	for _, tc := range []struct {
		name    string
		s       engine.Series
		compact bool
	}{
		{"cents", series([]engine.Num{12.34, 0.01, nan, 0}, []engine.Num{1433177694.55, nan, 0, 1}, []int64{1, 2, 3, math.MaxUint32}, []int64{0, 1, 2, math.MaxUint32}), true},
		{"tenths and units (scale 1 and 0)", series([]engine.Num{12.5, 3, 7.1}, []engine.Num{10, 20, 30}, ones(3), ones(3)), true},
		{"largest price", series([]engine.Num{21474836.47}, []engine.Num{99999999999.99}, ones(1), ones(1)), true},
		{"price over int32 cents", series([]engine.Num{21474836.48}, []engine.Num{1}, ones(1), ones(1)), false},
		{"lowest negative price", series([]engine.Num{-21474836.47}, []engine.Num{1}, ones(1), ones(1)), true},
		{"price at the missing mark", series([]engine.Num{-21474836.48}, []engine.Num{1}, ones(1), ones(1)), false},
		{"units over int32 cents", series([]engine.Num{21474837}, []engine.Num{1}, ones(1), ones(1)), false},
		{"volume under 2^52 cents, in units", series([]engine.Num{1}, []engine.Num{(1 << 52) / 100}, ones(1), ones(1)), true},
		{"volume over 2^52 cents, in units", series([]engine.Num{1}, []engine.Num{1 << 51}, ones(1), ones(1)), false},
		{"a price of three decimals", series([]engine.Num{1.001, 2}, []engine.Num{1, 2}, ones(2), ones(2)), false},
		{"quantity over 32 bits", series([]engine.Num{1}, []engine.Num{1}, []int64{math.MaxUint32 + 1}, ones(1)), false},
		{"negative quantity", series([]engine.Num{1}, []engine.Num{1}, []int64{-1}, ones(1)), false},
		{"trades over 32 bits", series([]engine.Num{1, 2}, []engine.Num{1, 2}, ones(2), []int64{1, math.MaxUint32 + 1}), false},
		{"negative trades", series([]engine.Num{1}, []engine.Num{1}, ones(1), []int64{-3}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &engine.Universe{Daily: []engine.Series{tc.s}}
			raw := rawOf(u, "daily")
			ki := kindIndex("daily")
			wide := &engine.Universe{}
			kinds[ki].alloc(wide, 1)
			if _, err := decodePart(raw, ki, wide, 0, 1, nil); err != nil {
				t.Fatal(err)
			}
			sameCompact(t, raw, ki, wide, 1)
			uc := &engine.Universe{}
			kinds[ki].alloc(uc, 1)
			if _, err := decodePart(raw, ki, uc, 0, 1, &loadState{compactDaily: true}); err != nil {
				t.Fatal(err)
			}
			if got := uc.Daily[0].Open == nil; got != tc.compact {
				t.Errorf("compact %v, want %v", got, tc.compact)
			}
		})
	}
}

// A format 5 load keeps a 1-minute series compact exactly when every
// value fits engine.IntradayBars' compact form, decoding whole-cent
// columns straight into cents; either way each bar reads back bit for
// bit as the wide decode does.
func TestDecIntradayCompact(t *testing.T) {
	series := func(px []engine.Num, vol []engine.Num, qty []int64) engine.Intraday {
		n := len(px)
		s := engine.Intraday{Ticker: "TEST3", Times: make([]int64, n), Open: px, High: px, Low: px, Close: px, Volume: vol, Quantity: qty}
		for i := range s.Times {
			s.Times[i] = 1_780_000_000 + 60*int64(i)
		}
		return s
	}
	nan := engine.Null
	for _, tc := range []struct {
		name    string
		s       engine.Intraday
		compact bool
	}{
		{"cents", series([]engine.Num{12.34, 0.01, nan, 0}, []engine.Num{1433177694.55, nan, 0, 1}, []int64{1, 2, 3, math.MaxUint32}), true},
		{"tenths and units", series([]engine.Num{12.5, 3, 7.1}, []engine.Num{10, 20, 30}, []int64{1, 1, 1}), true},
		{"volume between 2^52 and 2^53 cents", series([]engine.Num{1}, []engine.Num{(1 << 52) / 100 * 1.5}, []int64{1}), true},
		{"volume over 2^53 cents", series([]engine.Num{1}, []engine.Num{1 << 51}, []int64{1}), false},
		{"a price of three decimals", series([]engine.Num{1.001, 2}, []engine.Num{1, 2}, []int64{1, 1}), false},
		{"negative zero", series([]engine.Num{engine.Num(math.Copysign(0, -1))}, []engine.Num{1}, []int64{1}), false},
		{"quantity over 32 bits", series([]engine.Num{1}, []engine.Num{1}, []int64{math.MaxUint32 + 1}), false},
		{"negative quantity", series([]engine.Num{1}, []engine.Num{1}, []int64{-1}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &engine.Universe{Intraday: []engine.Intraday{tc.s}}
			raw := rawOf(u, "intraday")
			ki := kindIndex("intraday")
			wide := &engine.Universe{}
			kinds[ki].alloc(wide, 1)
			if _, err := decodePart(raw, ki, wide, 0, 1, nil); err != nil {
				t.Fatal(err)
			}
			uc := &engine.Universe{}
			kinds[ki].alloc(uc, 1)
			if _, err := decodePart(raw, ki, uc, 0, 1, &loadState{compactDaily: true}); err != nil {
				t.Fatal(err)
			}
			b := uc.Intraday[0].Bars()
			if b.Compact() != tc.compact || (uc.Intraday[0].Open == nil) != tc.compact {
				t.Errorf("compact %v (wide columns %v), want %v", b.Compact(), uc.Intraday[0].Open != nil, tc.compact)
			}
			if d := sameMinutes(wide.Intraday[0].Bars(), b); d != "" {
				t.Errorf("compact decode differs: %s", d)
			}
			if d := sameMinutes(tc.s.Bars(), b); d != "" {
				t.Errorf("differs from the series written: %s", d)
			}
		})
	}
}
