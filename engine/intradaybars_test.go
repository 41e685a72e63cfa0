package engine

import (
	"math"
	"slices"
	"testing"
)

func minutes(open, vol []Num, qty []int64) *Intraday {
	n := len(open)
	s := &Intraday{Ticker: "T", Times: make([]int64, n), Open: open, High: make([]Num, n), Low: make([]Num, n),
		Close: make([]Num, n), Volume: vol, Quantity: qty}
	for i := range n {
		s.Times[i] = 1_700_000_040 + 60*int64(i)
		s.High[i], s.Low[i], s.Close[i] = open[i], open[i], open[i]
	}
	return s
}

// sameMinutes checks every accessor of b against the series it was made
// of, bit for bit (a NaN is the package's Null).
func sameMinutes(t *testing.T, b *IntradayBars, s *Intraday) {
	t.Helper()
	eq := func(x, y Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	if b.Len() != s.Len() {
		t.Fatalf("len %d, want %d", b.Len(), s.Len())
	}
	for i := range s.Len() {
		var bar Bar
		b.bar(&bar, i)
		if !eq(b.Open(i), s.Open[i]) || !eq(b.High(i), s.High[i]) || !eq(b.Low(i), s.Low[i]) || !eq(b.Close(i), s.Close[i]) ||
			!eq(b.Volume(i), s.Volume[i]) || b.Quantity(i) != s.Quantity[i] || b.Times[i] != s.Times[i] ||
			!eq(bar.Open, s.Open[i]) || !eq(bar.Close, s.Close[i]) || !eq(bar.Volume, s.Volume[i]) || bar.Quantity != Num(s.Quantity[i]) {
			t.Fatalf("row %d: got %v %v %v %v %v %d, want %v %v %v %v %v %d", i,
				b.Open(i), b.High(i), b.Low(i), b.Close(i), b.Volume(i), b.Quantity(i),
				s.Open[i], s.High[i], s.Low[i], s.Close[i], s.Volume[i], s.Quantity[i])
		}
	}
}

func TestIntradayBars(t *testing.T) {
	cases := []struct {
		name    string
		s       *Intraday
		compact bool
	}{
		{"cents", minutes([]Num{12.34, 0.01, 99999.99, Null, 0}, []Num{1433177694.55, Null, 0, 1, 2}, []int64{1, 2, 3, 4, math.MaxUint32}), true},
		{"largest price and volume", minutes([]Num{21474836.47}, []Num{90071992547409.91}, []int64{0}), true},
		{"three decimals", minutes([]Num{12.345}, []Num{1}, []int64{1}), false},
		{"price over int32 cents", minutes([]Num{21474836.48}, []Num{1}, []int64{1}), false},
		{"negative zero", minutes([]Num{Num(math.Copysign(0, -1))}, []Num{1}, []int64{1}), false},
		{"another NaN", minutes([]Num{Num(math.Float64frombits(0x7ff8000000000002))}, []Num{1}, []int64{1}), false},
		{"volume with a fraction of a cent", minutes([]Num{1}, []Num{0.001}, []int64{1}), false},
		{"volume at 2^53 cents", minutes([]Num{1}, []Num{Num(float64(1<<53) / 100)}, []int64{1}), false},
		{"quantity over 32 bits", minutes([]Num{1}, []Num{1}, []int64{math.MaxUint32 + 1}), false},
		{"negative quantity", minutes([]Num{1}, []Num{1}, []int64{-1}), false},
		{"empty", minutes(nil, nil, nil), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewIntradayBars(c.s)
			if b.Compact() != c.compact {
				t.Errorf("compact = %v, want %v", b.Compact(), c.compact)
			}
			sameMinutes(t, b, c.s)
			sameMinutes(t, b, b.Wide())
			if b.Ticker != "T" {
				t.Errorf("ticker %q", b.Ticker)
			}
			if want := c.s.Len() * 36; c.compact && b.Bytes() != want {
				t.Errorf("Bytes = %d, want %d", b.Bytes(), want)
			}
			if cols, ok := b.Columns(); ok != c.compact || ok && len(cols.Open) != c.s.Len() {
				t.Errorf("Columns: %d rows, %v", len(cols.Open), ok)
			} else if ok {
				// The compact columns give the same series back.
				again := CompactIntradayOf("T", cols.Times, cols.Open, cols.High, cols.Low, cols.Close, cols.Volume, cols.Quantity)
				sameMinutes(t, again.Bars(), c.s)
				sameMinutes(t, again.Bars(), again.wide())
			}
		})
	}
}

// A series kept wide by a loader is held as given, without a look at
// its values.
func TestKeepWideIntraday(t *testing.T) {
	s := minutes([]Num{1, 2}, []Num{1, 2}, []int64{1, 2})
	KeepWideIntraday(s)
	b := s.Bars()
	if b.Compact() || &b.Wide().Open[0] != &s.Open[0] {
		t.Fatalf("compact %v; want the given columns", b.Compact())
	}
	sameMinutes(t, b, s)
}

// Every float a series can hold comes back bit for bit, compact or not.
func FuzzIntradayBars(f *testing.F) {
	f.Add(12.34, 1433177694.55, int64(100))
	f.Add(0.1, 0.3, int64(0))
	f.Add(math.NaN(), math.NaN(), int64(-1))
	f.Fuzz(func(t *testing.T, p, v float64, q int64) {
		s := minutes([]Num{Num(p), Num(p / 3)}, []Num{Num(v), Num(v * 7)}, []int64{q, q / 2})
		sameMinutes(t, NewIntradayBars(s), s)
	})
}

// CompactColumns gives NewIntradayBars' columns, made in the caller's
// buffer (reused, never the series' own) or the columns a compact
// series was given; it reports a series that does not fit.
func TestCompactColumns(t *testing.T) {
	var buf IntradayColumns
	fits := minutes([]Num{12.34, Null, 0.01}, []Num{1, Null, 99.99}, []int64{1, 2, math.MaxUint32})
	c, ok := fits.CompactColumns(&buf)
	want, _ := NewIntradayBars(fits).Columns()
	if !ok || !slices.Equal(c.Open, want.Open) || !slices.Equal(c.Close, want.Close) || !slices.Equal(c.Volume, want.Volume) ||
		!slices.Equal(c.Quantity, want.Quantity) || &c.Times[0] != &fits.Times[0] || &c.Open[0] != &buf.Open[0] {
		t.Fatalf("CompactColumns = %+v, %v; want %+v in the buffer", c, ok, want)
	}
	if _, ok := minutes([]Num{12.345}, []Num{1}, []int64{1}).CompactColumns(&buf); ok {
		t.Error("a 3-decimal price fits")
	}
	given := CompactIntradayOf("T", want.Times, want.Open, want.High, want.Low, want.Close, want.Volume, want.Quantity)
	if c, ok := given.CompactColumns(&buf); !ok || &c.Open[0] != &want.Open[0] {
		t.Error("a compact series' columns are not its own")
	}
	if n := testing.AllocsPerRun(100, func() { fits.CompactColumns(&buf) }); n > 0 {
		t.Errorf("%v allocations with a buffer of room", n)
	}
}

// Consistent checks the form a series holds: a compact one without
// expanding it.
func TestIntradayConsistent(t *testing.T) {
	times := []int64{60, 120}
	px := []int32{100, 101}
	compact := func(q []uint32) Intraday {
		return CompactIntradayOf("T", times, px, px, px, px, []int64{1, 2}, q)
	}
	wide := minutes([]Num{1, 2}, []Num{1, 2}, []int64{1, 2})
	short := minutes([]Num{1, 2}, []Num{1, 2}, []int64{1, 2})
	short.Close = short.Close[:1]
	kept := minutes([]Num{1, 2}, []Num{1, 2}, []int64{1, 2})
	kept.Volume = kept.Volume[:1]
	KeepWideIntraday(kept)
	ok, bad := compact([]uint32{1, 2}), compact([]uint32{1})
	for _, c := range []struct {
		name string
		s    *Intraday
		want bool
	}{
		{"wide", wide, true},
		{"wide, a short column", short, false},
		{"kept wide, a short column", kept, false},
		{"compact", &ok, true},
		{"compact, a short column", &bad, false},
	} {
		if got := c.s.Consistent(); got != c.want {
			t.Errorf("%s: Consistent = %v, want %v", c.name, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(10, func() { ok.Consistent() }); n != 0 {
		t.Errorf("a compact series was expanded: %v allocations", n)
	}
}
