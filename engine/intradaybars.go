package engine

import (
	"math"
	"slices"
)

// IntradayBars is the 1-minute history of one ticker as a Dataset holds
// it, sorted by Time ascending. As DailyBars does for daily bars, prices
// are kept as whole cents in 32 bits, the volume as cents in 64 bits and
// the quantity in 32 bits when every value of the series is exactly that
// (B3's trades always are): 36 bytes a bar instead of the 56 of an
// Intraday. A series with any other value (more decimals, a price over
// 21 million, a quantity over 4 billion) keeps its Intraday columns.
// Either way the accessors return the bit-identical values the Intraday
// held. Times stay unix seconds in 64 bits: the searches (MinuteRange,
// QuoteAt) and the bucketing read them as they are. Immutable; owned by
// the Dataset.
type IntradayBars struct {
	Ticker string
	Times  []int64 // unix seconds, UTC; each bar starts at Time

	// Compact columns (nil when wide is set).
	open, high, low, close []int32  // cents; NullCents for a missing price
	volume                 []int64  // cents (BRL); NullVolumeCents for missing
	quantity               []uint32 // shares
	wide                   *Intraday

	sum *IntradaySummary // the summary a loader gave (Intraday.SetSummary), or nil
}

// CompactIntradayOf returns an Intraday held compactly from columns
// already in the compact form: prices in cents (NullCents: missing), the
// volume in cents of BRL (NullVolumeCents: missing) and quantities. It
// takes ownership of the slices, which must all have len(times)
// elements. A snapshot loader uses a file's columns in place through it.
func CompactIntradayOf(ticker string, times []int64, open, high, low, close []int32, volume []int64, quantity []uint32) Intraday {
	return Intraday{Ticker: ticker, Times: times, bars: &IntradayBars{Ticker: ticker, Times: times,
		open: open, high: high, low: low, close: close, volume: volume, quantity: quantity}}
}

// Len returns the number of rows.
func (s *IntradayBars) Len() int { return len(s.Times) }

// IntradayColumns are the compact columns of an IntradayBars, row i of
// each being bar i: prices in cents (NullCents: missing), the volume in
// cents of BRL (NullVolumeCents: missing) and shares. They are the
// Dataset's (or a mapped snapshot's): read-only.
type IntradayColumns struct {
	Times                  []int64
	Open, High, Low, Close []int32
	Volume                 []int64
	Quantity               []uint32
}

// Columns returns s's compact columns, and false (with no columns) when
// s holds its values wide (Compact is false).
func (s *IntradayBars) Columns() (IntradayColumns, bool) {
	if s.wide != nil {
		return IntradayColumns{}, false
	}
	return IntradayColumns{Times: s.Times, Open: s.open, High: s.high, Low: s.low, Close: s.close,
		Volume: s.volume, Quantity: s.quantity}, true
}

// Wide returns s's values as an Intraday with the wide columns (s's own
// when it is not compact, else expanded from the compact ones).
func (s *IntradayBars) Wide() *Intraday {
	if s.wide != nil {
		return s.wide
	}
	return (&Intraday{Ticker: s.Ticker, Times: s.Times, bars: s}).wide()
}

// Compact reports whether the series is held in the compact columns.
func (s *IntradayBars) Compact() bool { return s.wide == nil }

// Bars returns s's rows as an IntradayBars (compact when every value
// fits, see NewIntradayBars): the form a Dataset holds them in. s must
// not be modified afterwards.
func (s *Intraday) Bars() *IntradayBars { return NewIntradayBars(s) }

// Open returns row i's opening price (BRL per share, unadjusted).
func (s *IntradayBars) Open(i int) Num {
	if s.wide != nil {
		return s.wide.Open[i]
	}
	return fromCents(s.open[i])
}

// High returns row i's highest price.
func (s *IntradayBars) High(i int) Num {
	if s.wide != nil {
		return s.wide.High[i]
	}
	return fromCents(s.high[i])
}

// Low returns row i's lowest price.
func (s *IntradayBars) Low(i int) Num {
	if s.wide != nil {
		return s.wide.Low[i]
	}
	return fromCents(s.low[i])
}

// Close returns row i's closing price.
func (s *IntradayBars) Close(i int) Num {
	if s.wide != nil {
		return s.wide.Close[i]
	}
	return fromCents(s.close[i])
}

// Volume returns row i's traded volume (BRL).
func (s *IntradayBars) Volume(i int) Num {
	if s.wide != nil {
		return s.wide.Volume[i]
	}
	return fromVolume(s.volume[i])
}

// Quantity returns row i's shares traded.
func (s *IntradayBars) Quantity(i int) int64 {
	if s.wide != nil {
		return s.wide.Quantity[i]
	}
	return int64(s.quantity[i])
}

// bar sets b's prices, volume and quantity from row r, testing the form
// once.
func (s *IntradayBars) bar(b *Bar, r int) {
	if w := s.wide; w != nil {
		b.Open, b.High, b.Low, b.Close = w.Open[r], w.High[r], w.Low[r], w.Close[r]
		b.Volume, b.Quantity = w.Volume[r], Num(w.Quantity[r])
		return
	}
	b.Open, b.High, b.Low, b.Close = fromCents(s.open[r]), fromCents(s.high[r]), fromCents(s.low[r]), fromCents(s.close[r])
	b.Volume, b.Quantity = fromVolume(s.volume[r]), Num(s.quantity[r])
}

// Bytes returns the memory the columns take (their lengths, not their
// capacities).
func (s *IntradayBars) Bytes() int {
	if s.wide != nil {
		return s.Len() * 7 * 8
	}
	return s.Len() * (8 + 4*4 + 8 + 4)
}

// NewIntradayBars returns s as an IntradayBars: compact when every value
// fits (see IntradayBars), else holding a copy of s's columns. The
// result shares s's Times; s must not be modified afterwards.
func NewIntradayBars(s *Intraday) *IntradayBars {
	if s.bars != nil {
		return s.bars
	}
	n := s.Len()
	out := &IntradayBars{Ticker: s.Ticker, Times: s.Times, sum: s.sum}
	if n == 0 {
		return out
	}
	// One allocation for the four price columns.
	px := make([]int32, 4*n)
	c := IntradayColumns{Open: px[:n:n], High: px[n : 2*n : 2*n], Low: px[2*n : 3*n : 3*n], Close: px[3*n:],
		Volume: make([]int64, n), Quantity: make([]uint32, n)}
	if !s.compactInto(&c) {
		// Copy the columns: s's may be windows on a block shared with
		// other series, which must not be kept alive by this one.
		w := &Intraday{Ticker: s.Ticker, Times: s.Times,
			Open: slices.Clone(s.Open), High: slices.Clone(s.High), Low: slices.Clone(s.Low), Close: slices.Clone(s.Close),
			Volume: slices.Clone(s.Volume), Quantity: slices.Clone(s.Quantity)}
		return &IntradayBars{Ticker: s.Ticker, Times: s.Times, wide: w, sum: s.sum}
	}
	out.open, out.high, out.low, out.close, out.volume, out.quantity = c.Open, c.High, c.Low, c.Close, c.Volume, c.Quantity
	return out
}

// CompactColumns returns s's values in the compact form (see
// IntradayBars) and true, or false when a value does not fit it: the
// columns s holds when it was given compact (CompactIntradayOf), else
// made in buf's columns (grown when short; buf is the caller's scratch
// and the result is valid until its next use). A writer of columns
// makes every series' compact form in one buffer this way instead of an
// IntradayBars a series.
func (s *Intraday) CompactColumns(buf *IntradayColumns) (IntradayColumns, bool) {
	if s.bars != nil {
		if c, ok := s.bars.Columns(); ok {
			return c, true
		}
		s = s.bars.wide
	}
	n := s.Len()
	grow := func(col []int32) []int32 {
		if cap(col) < n {
			return make([]int32, n)
		}
		return col[:n]
	}
	buf.Open, buf.High, buf.Low, buf.Close = grow(buf.Open), grow(buf.High), grow(buf.Low), grow(buf.Close)
	if cap(buf.Volume) < n {
		buf.Volume = make([]int64, n)
	}
	if cap(buf.Quantity) < n {
		buf.Quantity = make([]uint32, n)
	}
	buf.Volume, buf.Quantity = buf.Volume[:n], buf.Quantity[:n]
	ok := s.compactInto(buf)
	return *buf, ok
}

// compactInto fills c's columns (of s.Len() values each) with s's values
// in the compact form and reports whether every value fits.
func (s *Intraday) compactInto(c *IntradayColumns) bool {
	c.Times = s.Times
	n := s.Len()
	for i := range n {
		var okO, okH, okL, okC, okV bool
		c.Open[i], okO = toCents(s.Open[i])
		c.High[i], okH = toCents(s.High[i])
		c.Low[i], okL = toCents(s.Low[i])
		c.Close[i], okC = toCents(s.Close[i])
		c.Volume[i], okV = toVolume(s.Volume[i])
		q := s.Quantity[i]
		if !(okO && okH && okL && okC && okV && q >= 0 && q <= math.MaxUint32) {
			return false
		}
		c.Quantity[i] = uint32(q)
	}
	return true
}

// view returns s as an IntradayBars without a copy: its own when it has
// one, else one holding s's wide columns (for a summary of its bars).
func (s *Intraday) view() *IntradayBars {
	if s.bars != nil {
		return s.bars
	}
	return &IntradayBars{Ticker: s.Ticker, Times: s.Times, wide: s, sum: s.sum}
}

// KeepWideIntraday has Build hold s's wide columns as they are, without
// trying the compact form first (which reads every value): a loader
// whose series were found not to fit it when written sets it.
func KeepWideIntraday(s *Intraday) {
	if s.bars != nil || s.Len() == 0 {
		return
	}
	w := *s
	s.bars = &IntradayBars{Ticker: s.Ticker, Times: s.Times, wide: &w, sum: s.sum}
}

// wide returns s with its columns: s itself, or a copy with the columns
// of its compact rows expanded (for joining the histories of renamed
// tickers, and for readers of a Universe's columns).
func (s *Intraday) wide() *Intraday {
	b := s.bars
	if b == nil {
		return s
	}
	if b.wide != nil {
		return b.wide
	}
	n := b.Len()
	w := &Intraday{Ticker: s.Ticker, Times: s.Times, Open: make([]Num, n), High: make([]Num, n), Low: make([]Num, n),
		Close: make([]Num, n), Volume: make([]Num, n), Quantity: make([]int64, n), sum: s.sum}
	var bar Bar
	for i := range n {
		b.bar(&bar, i)
		w.Open[i], w.High[i], w.Low[i], w.Close[i] = bar.Open, bar.High, bar.Low, bar.Close
		w.Volume[i], w.Quantity[i] = bar.Volume, int64(bar.Quantity)
	}
	return w
}

// Consistent reports whether every column of s has one row per time, in
// the form s holds (compact or wide), without expanding a compact one.
func (s *Intraday) Consistent() bool {
	n := len(s.Times)
	if b := s.bars; b != nil {
		if b.wide != nil {
			return b.wide.Consistent()
		}
		return len(b.Times) == n && len(b.open) == n && len(b.high) == n && len(b.low) == n &&
			len(b.close) == n && len(b.volume) == n && len(b.quantity) == n
	}
	return len(s.Open) == n && len(s.High) == n && len(s.Low) == n && len(s.Close) == n &&
		len(s.Volume) == n && len(s.Quantity) == n
}

// Expanded returns s with its wide columns filled: s itself when they
// are, else its values expanded from the compact form (a series a
// loader gave by CompactIntradayOf), for writers of a Universe's
// columns.
func (s *Intraday) Expanded() *Intraday { return s.wide() }
