package engine

import (
	"slices"

	"github.com/pregao/pregao/index"
)

// Bar is one price bar handed to encoders: a daily session or an intraday
// bar (or an aggregated bucket of either).
type Bar struct {
	Time     int64 // unix seconds, UTC: bar start (daily: midnight of the session)
	Date     Date  // the session
	Open     Num   // BRL per share
	High     Num   // BRL per share
	Low      Num   // BRL per share
	Close    Num   // BRL per share
	Volume   Num   // BRL traded (never adjusted)
	Quantity Num   // shares traded
	Trades   int64 // number of trades (0 for intraday bars)
	// Factor is the cumulative adjustment factor F(Date) of the bar, also
	// when prices are unadjusted; prices divided by it (and Quantity
	// multiplied by it) give adjusted values.
	Factor Num
}

// DayIndex returns the row of the last session on or before d, or -1.
// It does not allocate.
func (a *Asset) DayIndex(d Date) int { return index.LastLE(a.Daily.Dates, d) }

// DayRange returns the half-open row range [lo, hi) of the daily sessions
// dated within [from, to] (both inclusive). It does not allocate.
func (a *Asset) DayRange(from, to Date) (lo, hi int) { return index.Span(a.Daily.Dates, from, to) }

// MinuteRange returns the half-open row range [lo, hi) of the intraday
// bars starting within [from, to] (unix seconds, both inclusive).
func (a *Asset) MinuteRange(from, to int64) (lo, hi int) {
	return index.Span(a.Intraday.Times, from, to)
}

// DailyBar returns row i of the daily history, adjusted when adjusted is
// true. i must be within [0, Daily.Len()).
func (a *Asset) DailyBar(i int, adjusted bool) Bar {
	s := a.Daily
	d := s.Dates[i]
	f := a.adj.at(d)
	b := Bar{Time: int64(d) * 86400, Date: d, Factor: f}
	s.bar(&b, i)
	if adjusted {
		b.adjust()
	}
	return b
}

func (b *Bar) adjust() {
	f := b.Factor
	if f == 1 {
		return
	}
	b.Open /= f
	b.High /= f
	b.Low /= f
	b.Close /= f
	b.Quantity *= f
}

// AppendDaily appends the daily rows [lo, hi) to dst, adjusted when
// adjusted is true, and returns the extended slice. It allocates only when
// dst must grow; out-of-range bounds are clamped.
func (a *Asset) AppendDaily(dst []Bar, lo, hi int, adjusted bool) []Bar {
	s := a.Daily
	lo, hi = clamp(lo, hi, s.Len())
	if lo >= hi {
		return dst
	}
	n := hi - lo
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	out := dst[start:]
	dates := s.Dates[lo:hi]
	// Walk the factor steps alongside the rows instead of searching per row.
	adj := a.adj
	k := index.FirstGE(adj.dates, dates[0])
	for i := range out {
		d := dates[i]
		for k < len(adj.dates) && adj.dates[k] < d {
			k++
		}
		f := Num(1)
		if k < len(adj.dates) {
			f = adj.cum[k]
		}
		b := &out[i]
		b.Time, b.Date, b.Factor = int64(d)*86400, d, f
		s.bar(b, lo+i)
		if adjusted && f != 1 {
			b.adjust()
		}
	}
	return dst
}

// AppendIntraday appends the 1-minute bars [lo, hi) to dst, adjusted when
// adjusted is true (factor of the bar's session), and returns the extended
// slice. It allocates only when dst must grow.
func (a *Asset) AppendIntraday(dst []Bar, lo, hi int, adjusted bool) []Bar {
	s := a.Intraday
	lo, hi = clamp(lo, hi, s.Len())
	for i := lo; i < hi; i++ {
		t := s.Times[i]
		d := DateOfUnix(t)
		b := Bar{Time: t, Date: d, Factor: a.adj.at(d)}
		s.bar(&b, i)
		if adjusted {
			b.adjust()
		}
		dst = append(dst, b)
	}
	return dst
}

// Aggregate merges consecutive bars of bars (ascending Time) into buckets
// of width seconds, in place, and returns the shortened slice. Buckets
// narrower than a day are aligned on the UTC midnight of each bar's day
// and never span two days; buckets of a day or more are aligned on the
// unix epoch. A bucket's Time is its start, Open the first valid open,
// High/Low the extremes, Close the last valid close, Volume, Quantity and
// Trades sums, Factor the last bar's. Volumes are summed in whole cents
// (see Cents), so a bucket's volume is exact to the cent whenever its
// bars' volumes are. width <= 0 returns bars unchanged. It does not
// allocate.
func Aggregate(bars []Bar, width int64) []Bar {
	if width <= 0 || len(bars) == 0 {
		return bars
	}
	n := 0
	cur := bucketStart(bars[0].Time, width)
	acc := bars[0]
	acc.Time = cur
	var vol moneySum
	vol.start(acc.Volume)
	for i := 1; i < len(bars); i++ {
		b := bars[i]
		s := bucketStart(b.Time, width)
		if s != cur {
			acc.Volume = vol.value()
			bars[n] = acc
			n++
			cur = s
			acc = b
			acc.Time = s
			vol.start(b.Volume)
			continue
		}
		if !acc.Open.Valid() {
			acc.Open = b.Open
		}
		acc.High = maxNum(acc.High, b.High)
		acc.Low = minNum(acc.Low, b.Low)
		if b.Close.Valid() {
			acc.Close = b.Close
		}
		vol.add(b.Volume)
		acc.Quantity = addNum(acc.Quantity, b.Quantity)
		acc.Trades += b.Trades
		acc.Factor = b.Factor
		acc.Date = b.Date
	}
	acc.Volume = vol.value()
	bars[n] = acc
	return bars[:n+1]
}

func bucketStart(t, width int64) int64 {
	if width >= 86400 {
		return floorDiv(t, width) * width
	}
	day := floorDiv(t, 86400) * 86400
	return day + (t-day)/width*width
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// DateOfUnix returns the UTC day of the unix time t (seconds), rounding
// down also before 1970.
func DateOfUnix(t int64) Date { return Date(floorDiv(t, 86400)) }

func clamp(lo, hi, n int) (int, int) {
	if lo < 0 {
		lo = 0
	}
	if hi > n {
		hi = n
	}
	return lo, hi
}

// maxNum returns the larger valid value (Null when both are missing).
func maxNum(a, b Num) Num {
	if !a.Valid() {
		return b
	}
	if b.Valid() && b > a {
		return b
	}
	return a
}

// minNum returns the smaller valid value (Null when both are missing).
func minNum(a, b Num) Num {
	if !a.Valid() {
		return b
	}
	if b.Valid() && b < a {
		return b
	}
	return a
}

// addNum sums the valid values (Null when both are missing).
func addNum(a, b Num) Num {
	if !a.Valid() {
		return b
	}
	if !b.Valid() {
		return a
	}
	return a + b
}

// AppendDailyBuckets appends the daily rows [lo, hi) aggregated into
// buckets of width seconds (see Aggregate) to dst. It allocates only when
// dst must grow.
func (a *Asset) AppendDailyBuckets(dst []Bar, lo, hi int, width int64, adjusted bool) []Bar {
	n := len(dst)
	dst = a.AppendDaily(dst, lo, hi, adjusted)
	return dst[:n+len(Aggregate(dst[n:], width))]
}

// AppendIntradayBuckets appends the 1-minute bars [lo, hi) aggregated into
// buckets of width seconds (see Aggregate) to dst. It allocates only when
// dst must grow.
func (a *Asset) AppendIntradayBuckets(dst []Bar, lo, hi int, width int64, adjusted bool) []Bar {
	n := len(dst)
	dst = a.AppendIntraday(dst, lo, hi, adjusted)
	return dst[:n+len(Aggregate(dst[n:], width))]
}
