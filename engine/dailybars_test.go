package engine

import (
	"math"
	"testing"
)

func series(open, vol []Num, qty []int64) *Series {
	n := len(open)
	s := &Series{Ticker: "T", Dates: make([]Date, n), Open: open, High: make([]Num, n), Low: make([]Num, n),
		Close: make([]Num, n), Volume: vol, Quantity: qty, Trades: make([]int64, n)}
	for i := range n {
		s.Dates[i] = Date(100 + i)
		s.High[i], s.Low[i], s.Close[i] = open[i], open[i], open[i]
		s.Trades[i] = int64(i)
	}
	return s
}

// sameBits checks every accessor of b against the series it was made of,
// bit for bit (a NaN is the package's Null).
func sameBits(t *testing.T, b *DailyBars, s *Series) {
	t.Helper()
	eq := func(x, y Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	if b.Len() != s.Len() {
		t.Fatalf("len %d, want %d", b.Len(), s.Len())
	}
	for i := range s.Len() {
		if !eq(b.Open(i), s.Open[i]) || !eq(b.High(i), s.High[i]) || !eq(b.Low(i), s.Low[i]) || !eq(b.Close(i), s.Close[i]) ||
			!eq(b.Volume(i), s.Volume[i]) || b.Quantity(i) != s.Quantity[i] || b.Trades(i) != s.Trades[i] || b.Dates[i] != s.Dates[i] {
			t.Fatalf("row %d: got %v %v %v %v %v %d %d, want %v %v %v %v %v %d %d", i,
				b.Open(i), b.High(i), b.Low(i), b.Close(i), b.Volume(i), b.Quantity(i), b.Trades(i),
				s.Open[i], s.High[i], s.Low[i], s.Close[i], s.Volume[i], s.Quantity[i], s.Trades[i])
		}
	}
}

func TestDailyBars(t *testing.T) {
	cases := []struct {
		name    string
		s       *Series
		compact bool
	}{
		{"cents", series([]Num{12.34, 0.01, 99999.99, Null, 0}, []Num{1433177694.55, Null, 0, 1, 2}, []int64{1, 2, 3, 4, math.MaxUint32}), true},
		{"largest price and a day of 99 billion", series([]Num{21474836.47}, []Num{99999999999.99}, []int64{0}), true},
		{"three decimals", series([]Num{12.345}, []Num{1}, []int64{1}), false},
		{"price over int32 cents", series([]Num{21474836.48}, []Num{1}, []int64{1}), false},
		{"negative price", series([]Num{-1.5}, []Num{1}, []int64{1}), true},
		{"negative zero", series([]Num{Num(math.Copysign(0, -1))}, []Num{1}, []int64{1}), false},
		{"infinity", series([]Num{Num(math.Inf(1))}, []Num{1}, []int64{1}), false},
		{"volume with a fraction of a cent", series([]Num{1}, []Num{0.001}, []int64{1}), false},
		{"quantity over 32 bits", series([]Num{1}, []Num{1}, []int64{math.MaxUint32 + 1}), false},
		{"negative quantity", series([]Num{1}, []Num{1}, []int64{-1}), false},
		{"empty", series(nil, nil, nil), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewDailyBars(c.s)
			if b.Compact() != c.compact {
				t.Errorf("compact = %v, want %v", b.Compact(), c.compact)
			}
			sameBits(t, b, c.s)
			if b.Ticker != "T" {
				t.Errorf("ticker %q", b.Ticker)
			}
			if want := c.s.Len() * 36; c.compact && b.Bytes() != want {
				t.Errorf("Bytes = %d, want %d", b.Bytes(), want)
			}
		})
	}
}

// Every float a series can hold comes back bit for bit, compact or not.
func FuzzDailyBars(f *testing.F) {
	f.Add(12.34, 1433177694.55, int64(100), int64(7))
	f.Add(0.1, 0.3, int64(0), int64(0))
	f.Add(math.NaN(), math.NaN(), int64(-1), int64(1<<40))
	f.Fuzz(func(t *testing.T, p, v float64, q, tr int64) {
		s := series([]Num{Num(p), Num(p / 3)}, []Num{Num(v), Num(v * 7)}, []int64{q, q / 2})
		s.Trades = []int64{tr, 0}
		sameBits(t, NewDailyBars(s), s)
	})
}
