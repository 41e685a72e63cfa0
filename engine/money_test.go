package engine

import (
	"math"
	"math/big"
	"strconv"
	"testing"
)

func TestCents(t *testing.T) {
	f := func(n Num, want int64, wantOK bool) {
		t.Helper()
		got, ok := Cents(n)
		if got != want || ok != wantOK {
			t.Errorf("Cents(%v) = %d, %v; want %d, %v", float64(n), got, ok, want, wantOK)
		}
	}
	f(0, 0, true)
	f(0.1, 10, true)
	f(-0.29, -29, true)
	f(4059603.11, 405960311, true)
	f(12.3, 1230, true)
	a, b := 0.1, 0.2
	f(Num(a+b), 0, false) // 0.30000000000000004 is not the float of 0.30
	f(1.0/3, 0, false)
	f(0.005, 0, false)
	f(Num(math.Copysign(0, -1)), 0, false)
	f(Null, 0, false)
	f(Num(math.Inf(1)), 0, false)
	f(1e13, 0, false)
}

func TestDiff(t *testing.T) {
	f := func(a, b, want Num) {
		t.Helper()
		got := Diff(a, b)
		if got != want && (got.Valid() || want.Valid()) {
			t.Errorf("Diff(%v, %v) = %v, want %v", float64(a), float64(b), float64(got), float64(want))
		}
	}
	f(44.75, 44.2, 0.55)
	f(12.29, 12.11, 0.18)
	f(0.1, 0.3, -0.2)
	f(12.3, 12, 0.3) // 12.3-12 is 0.3000000000000007 in float64
	third := Num(1.0 / 3)
	f(third, 0.5, third-0.5)
	f(Null, 1, Null)
	f(1, Null, Null)
	f(5.2345, 5.1295, 0.105) // 4 decimals (USD): 0.10499999999999954 in float64
	f(5.2345, 5.13, 0.1045)  // mixed places
	f(0.00012345, 0.0001, 0.00002345)
	f(1e-9, 0, 1e-9)           // beyond 8 places: float64 subtraction
	f(third, 0.25, third-0.25) // not a short decimal
}

func TestMoneySum(t *testing.T) {
	f := func(want Num, vs ...Num) {
		t.Helper()
		var s moneySum
		for _, v := range vs {
			s.add(v)
		}
		got := s.value()
		if got != want && (got.Valid() || want.Valid()) {
			t.Errorf("sum %v = %v, want %v", vs, float64(got), float64(want))
		}
	}
	f(Null)
	f(Null, Null, Null)
	f(0.3, 0.1, 0.2)
	f(0.6, 0.1, Null, 0.2, 0.3)
	f(4059603.11, 4059603.01, 0.1)
	f(4059603.11, 1000000.03, 3059603.08)
	// An amount that is not whole cents falls back to a float sum of all.
	third := 1.0 / 3
	f(Num(0.3+third), 0.1, 0.2, Num(third))
	// A total too large for exact cents also falls back, without overflow.
	f(Num(9e12+9e12+9e12), 9e12, 9e12, 9e12)
}

// exactUniverse is testUniverse with intraday volumes whose float sums
// are not whole cents (0.1+0.2 = 0.30000000000000004).
func exactUniverse(tb testing.TB) *Universe {
	tb.Helper()
	u := testUniverse(tb)
	u.Intraday[0].Volume = []Num{0.1, 0.2, 0.3}
	return u
}

func TestRunningVolumeExact(t *testing.T) {
	ds := mustBuild(t, exactUniverse(t))
	p, _ := ds.Asset("PETR4")
	for _, tc := range []struct {
		mm  int
		vol Num
	}{{1, 0.1}, {2, 0.3}, {3, 0.6}} {
		q := p.QuoteAt(at(4, 13, tc.mm))
		if !q.Intraday || q.Volume != tc.vol {
			t.Errorf("volume at 13:%02d = %v (intraday %v), want %v", tc.mm, float64(q.Volume), q.Intraday, float64(tc.vol))
		}
	}
	// Close 12.3 against the previous close 12: 0.3 exactly.
	if q := p.QuoteAt(at(4, 13, 1)); q.VariationValue != 0.3 {
		t.Errorf("variation value = %v, want 0.3", float64(q.VariationValue))
	}
}

func TestAggregateVolumeExact(t *testing.T) {
	ds := mustBuild(t, exactUniverse(t))
	p, _ := ds.Asset("PETR4")
	b := p.AppendIntradayBuckets(nil, 0, 3, 180, false)
	if len(b) != 1 || b[0].Volume != 0.6 {
		t.Fatalf("3-minute bucket = %+v, want volume 0.6", b)
	}
	b = p.AppendIntradayBuckets(b[:0], 0, 3, 120, false)
	if len(b) != 2 || b[0].Volume != 0.3 || b[1].Volume != 0.3 {
		t.Fatalf("2-minute buckets = %+v, want volumes 0.3, 0.3", b)
	}
	bars := []Bar{
		{Time: 0, Volume: 4059603.01, Quantity: 1},
		{Time: 60, Volume: 0.1, Quantity: 2},
		{Time: 120, Volume: Null, Quantity: 3},
		{Time: 180, Volume: Null},
	}
	bars = Aggregate(bars, 120)
	if len(bars) != 2 || bars[0].Volume != 4059603.11 || bars[0].Quantity != 3 || bars[1].Volume.Valid() {
		t.Fatalf("buckets = %+v", bars)
	}
}

func TestCmpDescMissingLast(t *testing.T) {
	for _, tc := range []struct {
		x, y Num
		want int
	}{{2, 1, -1}, {1, 2, 1}, {1, 1, 0}, {1, Null, -1}, {Null, 1, 1}, {Null, Null, 0}} {
		if got := cmpDescMissingLast(tc.x, tc.y); got != tc.want {
			t.Errorf("cmpDescMissingLast(%v, %v) = %d, want %d", tc.x, tc.y, got, tc.want)
		}
	}
}

func TestAdjustedVariationValueExact(t *testing.T) {
	// 36.9 and 36 adjusted by 3 are 12.299999999999999 and 12, whose
	// difference is 0.29999999999999893; the exact 0.9 divided by 3 is
	// the float of 0.3.
	q := Quote{Close: 36.9, PrevClose: 36, Factor: 3}
	q.setVariation()
	if q.VariationValue != 0.9 {
		t.Fatalf("variation value = %v, want 0.9", float64(q.VariationValue))
	}
	if a := q.Adjusted(); a.VariationValue != 0.3 {
		t.Errorf("adjusted variation value = %v, want 0.3", float64(a.VariationValue))
	}
	q = Quote{Close: 1, PrevClose: Null, Factor: 2}
	q.setVariation()
	if a := q.Adjusted(); a.VariationValue.Valid() {
		t.Errorf("adjusted variation value without a previous close = %v, want null", float64(a.VariationValue))
	}
}

// AdjustedDiff subtracts the raw decimal prices, then divides: no binary
// noise from subtracting two adjusted prices.
func TestAdjustedDiff(t *testing.T) {
	f := func(rawA, rawB, factor Num, want Num) {
		t.Helper()
		a, b := rawA/factor, rawB/factor
		got := AdjustedDiff(a, b, factor)
		if got != want {
			t.Errorf("AdjustedDiff(%v/%v, %v/%v) = %v, want %v (plain %v)", float64(rawA), float64(factor), float64(rawB), float64(factor), float64(got), float64(want), float64(a-b))
		}
	}
	f(36.15, 35.5, 3, Num(0.65)/3) // a - b is 0.21666666666666856
	f(12.29, 12.11, 7, Num(0.18)/7)
	f(10, 10, 3, 0)
	f(44.75, 44.2, 1, 0.55) // factor 1: Diff
	if got := AdjustedDiff(Null, 1, 3); got.Valid() {
		t.Errorf("null operand: %v", float64(got))
	}
	third := Num(1.0 / 3)
	if got := AdjustedDiff(third, 0.25, 1.0000001); got != third-0.25 {
		t.Errorf("not decimals: %v, want the plain difference %v", float64(got), float64(third-0.25))
	}
}

// Sum and Quo give the float nearest to the exact decimal result: the
// gross value of a cash action (declared + correction) and its adjusted
// amounts (÷ factor) show no binary noise.
func TestSumQuoExact(t *testing.T) {
	for _, c := range []struct{ a, b, want, naive Num }{
		{4.6, 0.00861049, 4.60861049, 4.608610489999999},
		{0.1, 0.2, 0.3, 0.30000000000000004},
		{1.05, 0.32441876, 1.37441876, 0},
	} {
		if got := Sum(c.a, c.b); got != c.want {
			t.Errorf("Sum(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if c.naive != 0 && c.a+c.b != c.naive {
			t.Errorf("%v + %v in float64 is %v: the case shows no noise", c.a, c.b, c.a+c.b)
		}
	}
	for _, c := range []struct{ a, b, want, naive Num }{
		{0.3, 0.1, 3, 2.9999999999999996},
		{0.7, 0.1, 7, 6.999999999999999},
		{0.32441876, 2, 0.16220938, 0},
		{4.60861049, 1.05, Num(460861049.0 / 105000000.0), 0},
		{1, 3, Num(1.0 / 3.0), 0},
	} {
		if got := Quo(c.a, c.b); got != c.want {
			t.Errorf("Quo(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if c.naive != 0 && c.a/c.b != c.naive {
			t.Errorf("%v / %v in float64 is %v: the case shows no noise", c.a, c.b, c.a/c.b)
		}
	}
	// Operands of more places: each read as its shortest decimal, the
	// quotient exact, rounded once.
	for _, c := range [][2]Num{{0.32441876, 1.2762815625}, {4.60861049, 3.0387656250000003}, {1, 1.157625}} {
		x, _ := new(big.Rat).SetString(strconv.FormatFloat(float64(c[0]), 'g', -1, 64))
		y, _ := new(big.Rat).SetString(strconv.FormatFloat(float64(c[1]), 'g', -1, 64))
		want, _ := x.Quo(x, y).Float64()
		if got := Quo(c[0], c[1]); got != Num(want) {
			t.Errorf("Quo(%v, %v) = %v, want %v", c[0], c[1], got, want)
		}
	}
	if Sum(Null, 1).Valid() || Sum(1, Null).Valid() || Quo(1, 0).Valid() || Quo(Null, 2).Valid() {
		t.Error("a missing operand or a zero divisor must give Null")
	}
}
