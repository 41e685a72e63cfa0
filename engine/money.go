package engine

import (
	"math"
	"math/big"
	"strconv"
)

// maxCents bounds the amounts and sums kept in whole cents: below 2^53 an
// int64 count of cents converts to float64 exactly, and adding two values
// under it cannot overflow.
const maxCents = 1 << 53

// Cents returns c with float64(c)/100 == n, that is n is the float nearest
// to the decimal c/100 (a BRL amount in whole cents, or any value in whole
// hundredths), and true. It returns false for values that are not whole
// hundredths, for |n| >= 1e13, for -0 and for missing values. It does not
// allocate.
func Cents(n Num) (int64, bool) {
	v := float64(n)
	if !(v > -1e13 && v < 1e13) {
		return 0, false
	}
	x := v * 100
	var c int64
	if x >= 0 {
		c = int64(x + 0.5)
	} else {
		c = int64(x - 0.5)
	}
	if float64(c)/100 != v || c == 0 && math.Signbit(v) {
		return 0, false
	}
	return c, true
}

// Diff returns a - b. When both are decimals of at most maxDiffDecimals
// places (see scaled: prices in cents, quotes of 4 decimals such as USD)
// the result is the float nearest to the exact decimal difference (0.3 -
// 0.1 gives 0.2, not 0.19999999999999998; 5.2345 - 5.1295 gives 0.105, not
// 0.10499999999999954). Other operands subtract in float64. Missing
// operands give Null.
func Diff(a, b Num) Num {
	if !a.Valid() || !b.Valid() {
		return Null
	}
	if ca, ok := Cents(a); ok {
		if cb, ok := Cents(b); ok {
			return Num(float64(ca-cb) / 100)
		}
	}
	for d := 3; d <= maxDiffDecimals; d++ {
		ia, ok := scaled(a, d)
		if !ok {
			continue
		}
		if ib, ok := scaled(b, d); ok {
			return Num(float64(ia-ib) / pow10[d])
		}
	}
	return a - b
}

// AdjustedDiff is the difference a - b of two prices adjusted by the same
// factor f (a = raw_a / f, b = raw_b / f), computed as Diff of the prices
// before adjustment, divided by f: the adjusted prices are rarely
// decimals, and their difference in float64 shows binary noise
// (0.21666666666666856 where the raw prices differ by 0.65 and f is 3),
// while the raw prices are decimals Diff subtracts exactly. Each product
// a·f is rounded to maxDiffDecimals places, undoing the division's
// rounding; a product that is not a decimal of at most that many places
// leaves the plain a - b.
func AdjustedDiff(a, b, f Num) Num {
	if !f.Valid() || f == 1 || f == 0 {
		return Diff(a, b)
	}
	if !a.Valid() || !b.Valid() {
		return Null
	}
	const d = maxDiffDecimals
	ra := math.Round(float64(a*f)*pow10[d]) / pow10[d]
	rb := math.Round(float64(b*f)*pow10[d]) / pow10[d]
	if math.Abs(ra-float64(a*f)) > 1e-9*math.Max(1, math.Abs(ra)) || math.Abs(rb-float64(b*f)) > 1e-9*math.Max(1, math.Abs(rb)) {
		return a - b
	}
	return Diff(Num(ra), Num(rb)) / f
}

// maxDiffDecimals is the most decimal places Diff computes exactly.
const maxDiffDecimals = 8

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// scaled returns i with float64(i)/10^d == n (n is the float nearest to
// the decimal i/10^d) and |i| < 2^53, and true; false otherwise.
func scaled(n Num, d int) (int64, bool) {
	v := float64(n)
	x := v * pow10[d]
	if !(x > -maxCents && x < maxCents) {
		return 0, false
	}
	i := int64(math.Round(x))
	if float64(i)/pow10[d] != v || i == 0 && math.Signbit(v) {
		return 0, false
	}
	return i, true
}

// moneySum adds BRL amounts. While every amount added is whole cents (see
// Cents) it sums in int64 cents, so the total is exact to the cent; the
// first amount that is not (or a total beyond maxCents) switches it to a
// float64 sum of everything added. Missing amounts are skipped; the sum of
// none is Null. The zero value is an empty sum.
type moneySum struct {
	cents int64   // exact total in cents while exact
	f     float64 // float total, kept from the first inexact amount on
	n     int     // amounts added
	inex  bool    // some amount was not whole cents
}

// add adds v (skipped when missing).
func (s *moneySum) add(v Num) {
	if !v.Valid() {
		return
	}
	s.n++
	if !s.inex {
		if c, ok := Cents(v); ok && s.cents+c < maxCents && s.cents+c > -maxCents {
			s.cents += c
			return
		}
		s.inex = true
		s.f = float64(s.cents) / 100
	}
	s.f += float64(v)
}

// value returns the total (Null when nothing was added).
func (s *moneySum) value() Num {
	switch {
	case s.n == 0:
		return Null
	case s.inex:
		return Num(s.f)
	}
	return Num(float64(s.cents) / 100)
}

// start resets s to the sum of v alone.
func (s *moneySum) start(v Num) {
	*s = moneySum{}
	s.add(v)
}

// Sum returns a + b. When both are decimals of at most maxDiffDecimals
// places the result is the float nearest to the exact decimal sum (4.6 +
// 0.00861049 gives 4.60861049, not 4.608610489999999); other operands add
// in float64. Missing operands give Null.
func Sum(a, b Num) Num {
	if !b.Valid() {
		return Null
	}
	return Diff(a, -b)
}

// Quo returns a / b (Null when either is missing or b is 0). When both are
// decimals of at most maxDiffDecimals places, a = i/10^p and b = j/10^q,
// it is (i·10^q) / (j·10^p) as one float64 division of two integers held
// exactly, so the result is the float nearest to the exact quotient
// (0.3 / 0.1 gives 3, not 2.9999999999999996; 0.32441876 / 2 gives
// 0.16220938); other operands are read as the decimals their shortest
// representation writes and divided exactly (quoDecimal).
func Quo(a, b Num) Num {
	if !a.Valid() || !b.Valid() || b == 0 {
		return Null
	}
	for p := 0; p <= maxDiffDecimals; p++ {
		i, ok := scaled(a, p)
		if !ok {
			continue
		}
		for q := 0; q <= maxDiffDecimals; q++ {
			j, ok := scaled(b, q)
			if !ok {
				continue
			}
			num, den := float64(i)*pow10[q], float64(j)*pow10[p]
			if math.Abs(num) < maxCents && math.Abs(den) < maxCents {
				return Num(num / den)
			}
			return quoDecimal(a, b)
		}
		return quoDecimal(a, b)
	}
	return quoDecimal(a, b)
}

// quoDecimal is Quo for operands of more decimal places (a cumulative
// factor such as 1.05^5 = 1.2762815625): each read as the decimal its
// shortest representation writes, divided exactly, rounded once.
func quoDecimal(a, b Num) Num {
	x, ok1 := new(big.Rat).SetString(strconv.FormatFloat(float64(a), 'g', -1, 64))
	y, ok2 := new(big.Rat).SetString(strconv.FormatFloat(float64(b), 'g', -1, 64))
	if !ok1 || !ok2 || y.Sign() == 0 {
		return a / b
	}
	f, _ := x.Quo(x, y).Float64()
	return Num(f)
}
