package engine

import (
	"math"
	"slices"
)

// DailyBars is the daily history of one ticker as a Dataset holds it,
// sorted by date ascending. Prices are kept as whole cents in 32 bits,
// the volume as cents in 64 bits and counts in 32 bits when every value
// of the series is exactly that (COTAHIST's prices, volumes and counts
// always are): 36 bytes a row instead of the 60 of a Series. A series
// with any other value (more decimals, a price over 21 million, a count
// over 4 billion) keeps its Series columns. Either way the accessors
// return the bit-identical values the Series held. Immutable; owned by
// the Dataset.
type DailyBars struct {
	Ticker string
	Dates  []Date

	// Compact columns (nil when wide is set).
	open, high, low, close []int32  // cents; nullCents for a missing price
	volume                 []int64  // cents (BRL); nullVolume for missing
	quantity, trades       []uint32 // shares and trades
	wide                   *Series  // the series as given, when it does not fit

	sum *DailySummary // the summary a loader gave (Series.SetSummary), or nil
}

const (
	nullCents  = math.MinInt32
	nullVolume = math.MinInt64
)

// NullCents and NullVolumeCents mark a missing price or volume in the
// columns CompactSeriesOf takes.
const (
	NullCents       = nullCents
	NullVolumeCents = nullVolume
)

// CompactSeriesOf returns a Series held compactly from columns already in
// the compact form: prices in cents (NullCents: missing), the volume in
// cents of BRL (NullVolumeCents: missing), quantities and trades. It takes
// ownership of the slices, which must all have len(dates) elements. A
// snapshot loader decodes whole-cent columns straight into it.
func CompactSeriesOf(ticker string, dates []Date, open, high, low, close []int32, volume []int64, quantity, trades []uint32) Series {
	return Series{Ticker: ticker, Dates: dates, bars: &DailyBars{Ticker: ticker, Dates: dates,
		open: open, high: high, low: low, close: close, volume: volume, quantity: quantity, trades: trades}}
}

// Len returns the number of rows.
func (s *DailyBars) Len() int { return len(s.Dates) }

// DailyColumns are the compact columns of a DailyBars, row i of each
// being bar i: prices in cents (NullCents: missing), the volume in cents
// of BRL (NullVolumeCents: missing), shares and trades. They are the
// Dataset's (or a mapped snapshot's): read-only.
type DailyColumns struct {
	Dates                  []Date
	Open, High, Low, Close []int32
	Volume                 []int64
	Quantity, Trades       []uint32
}

// Columns returns s's compact columns, and false (with no columns) when
// s holds its values wide (Compact is false): a writer of columns (a
// snapshot, an export) reads them without a copy; the accessors give
// the same values, one at a time.
func (s *DailyBars) Columns() (DailyColumns, bool) {
	if s.wide != nil {
		return DailyColumns{}, false
	}
	return DailyColumns{Dates: s.Dates, Open: s.open, High: s.high, Low: s.low, Close: s.close,
		Volume: s.volume, Quantity: s.quantity, Trades: s.trades}, true
}

// Wide returns s's values as a Series with the wide columns (s's own
// when it is not compact, else expanded from the compact ones).
func (s *DailyBars) Wide() *Series {
	if s.wide != nil {
		return s.wide
	}
	return (&Series{Ticker: s.Ticker, Dates: s.Dates, bars: s}).wide()
}

// Bars returns s's rows as a DailyBars (compact when every value fits,
// see NewDailyBars): the form a Dataset holds them in. s must not be
// modified afterwards.
func (s *Series) Bars() *DailyBars { return NewDailyBars(s) }

// Compact reports whether the series is held in the compact columns.
func (s *DailyBars) Compact() bool { return s.wide == nil }

func fromCents(c int32) Num {
	if c == nullCents {
		return Null
	}
	return Num(float64(c) / 100)
}

// fromVolume returns the volume of v cents (nullVolume: Null).
func fromVolume(v int64) Num {
	if v == nullVolume {
		return Null
	}
	return Num(float64(v) / 100)
}

// Open returns row i's opening price (BRL per share, unadjusted).
func (s *DailyBars) Open(i int) Num {
	if s.wide != nil {
		return s.wide.Open[i]
	}
	return fromCents(s.open[i])
}

// High returns row i's highest price.
func (s *DailyBars) High(i int) Num {
	if s.wide != nil {
		return s.wide.High[i]
	}
	return fromCents(s.high[i])
}

// Low returns row i's lowest price.
func (s *DailyBars) Low(i int) Num {
	if s.wide != nil {
		return s.wide.Low[i]
	}
	return fromCents(s.low[i])
}

// Close returns row i's closing price.
func (s *DailyBars) Close(i int) Num {
	if s.wide != nil {
		return s.wide.Close[i]
	}
	return fromCents(s.close[i])
}

// Volume returns row i's traded volume (BRL).
func (s *DailyBars) Volume(i int) Num {
	if s.wide != nil {
		return s.wide.Volume[i]
	}
	return fromVolume(s.volume[i])
}

// Quantity returns row i's shares traded.
func (s *DailyBars) Quantity(i int) int64 {
	if s.wide != nil {
		return s.wide.Quantity[i]
	}
	return int64(s.quantity[i])
}

// Trades returns row i's number of trades.
func (s *DailyBars) Trades(i int) int64 {
	if s.wide != nil {
		return s.wide.Trades[i]
	}
	return int64(s.trades[i])
}

// bar sets b's prices, volume and counts from row r, testing the form
// once.
func (s *DailyBars) bar(b *Bar, r int) {
	if w := s.wide; w != nil {
		b.Open, b.High, b.Low, b.Close = w.Open[r], w.High[r], w.Low[r], w.Close[r]
		b.Volume, b.Quantity, b.Trades = w.Volume[r], Num(w.Quantity[r]), w.Trades[r]
		return
	}
	b.Open, b.High, b.Low, b.Close = fromCents(s.open[r]), fromCents(s.high[r]), fromCents(s.low[r]), fromCents(s.close[r])
	b.Volume = fromVolume(s.volume[r])
	b.Quantity, b.Trades = Num(s.quantity[r]), int64(s.trades[r])
}

// Bytes returns the memory the columns take (their lengths, not their
// capacities).
func (s *DailyBars) Bytes() int {
	if s.wide != nil {
		return s.Len() * (4 + 5*8 + 2*8)
	}
	return s.Len() * (4 + 4*4 + 8 + 2*4)
}

// isNull reports whether v is the package's Null, bit for bit (another
// NaN is kept only by a wide series).
func isNull(v Num) bool { return math.Float64bits(float64(v)) == math.Float64bits(float64(Null)) }

// toCents returns v as whole cents when float64(cents)/100 gives back
// exactly v (bit for bit) and the cents fit in 32 bits; Null is
// nullCents.
func toCents(v Num) (int32, bool) {
	if math.IsNaN(float64(v)) {
		return nullCents, isNull(v)
	}
	f := float64(v) * 100
	if !(f > math.MinInt32 && f <= math.MaxInt32) {
		return 0, false
	}
	c := int32(math.Round(f))
	return c, math.Float64bits(float64(c)/100) == math.Float64bits(float64(v))
}

func toVolume(v Num) (int64, bool) {
	if math.IsNaN(float64(v)) {
		return nullVolume, isNull(v)
	}
	f := float64(v) * 100
	// Whole cents below 2^53 convert back exactly.
	if !(f > -(1<<53) && f < 1<<53) {
		return 0, false
	}
	c := int64(math.Round(f))
	return c, math.Float64bits(float64(c)/100) == math.Float64bits(float64(v))
}

// NewDailyBars returns s as a DailyBars: compact when every value fits
// (see DailyBars), else holding s itself. The result shares s's Dates
// (a wide result copies the other columns); s must not be modified
// afterwards.
func NewDailyBars(s *Series) *DailyBars {
	if s.bars != nil {
		return s.bars
	}
	n := s.Len()
	out := &DailyBars{Ticker: s.Ticker, Dates: s.Dates, sum: s.sum}
	if n == 0 {
		return out
	}
	// One allocation for the four price columns and one for the two
	// counts.
	px := make([]int32, 4*n)
	cnt := make([]uint32, 2*n)
	out.open, out.high, out.low, out.close = px[:n:n], px[n:2*n:2*n], px[2*n:3*n:3*n], px[3*n:]
	out.quantity, out.trades = cnt[:n:n], cnt[n:]
	out.volume = make([]int64, n)
	ok := true
	for i := 0; i < n && ok; i++ {
		var okO, okH, okL, okC, okV bool
		out.open[i], okO = toCents(s.Open[i])
		out.high[i], okH = toCents(s.High[i])
		out.low[i], okL = toCents(s.Low[i])
		out.close[i], okC = toCents(s.Close[i])
		out.volume[i], okV = toVolume(s.Volume[i])
		q, t := s.Quantity[i], s.Trades[i]
		ok = okO && okH && okL && okC && okV && q >= 0 && q <= math.MaxUint32 && t >= 0 && t <= math.MaxUint32
		out.quantity[i], out.trades[i] = uint32(q), uint32(t)
	}
	if !ok {
		// Copy the columns: s's may be windows on a block shared with
		// the compact series (a decoded snapshot part), which must not be
		// kept alive by this one.
		w := &Series{Ticker: s.Ticker, Dates: s.Dates,
			Open: slices.Clone(s.Open), High: slices.Clone(s.High), Low: slices.Clone(s.Low), Close: slices.Clone(s.Close),
			Volume: slices.Clone(s.Volume), Quantity: slices.Clone(s.Quantity), Trades: slices.Clone(s.Trades)}
		return &DailyBars{Ticker: s.Ticker, Dates: s.Dates, wide: w, sum: s.sum}
	}
	out.sum = s.sum
	return out
}

// wide returns s with its columns: s itself, or a copy with the columns
// of its compact rows expanded (for joining the histories of renamed
// tickers, which is rare).
func (s *Series) wide() *Series {
	b := s.bars
	if b == nil {
		return s
	}
	n := b.Len()
	w := &Series{Ticker: s.Ticker, Dates: s.Dates, Open: make([]Num, n), High: make([]Num, n), Low: make([]Num, n),
		Close: make([]Num, n), Volume: make([]Num, n), Quantity: make([]int64, n), Trades: make([]int64, n)}
	var bar Bar
	for i := range n {
		b.bar(&bar, i)
		w.Open[i], w.High[i], w.Low[i], w.Close[i] = bar.Open, bar.High, bar.Low, bar.Close
		w.Volume[i], w.Quantity[i], w.Trades[i] = bar.Volume, int64(bar.Quantity), bar.Trades
	}
	return w
}
