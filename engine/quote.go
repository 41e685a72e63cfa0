package engine

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/index"
)

// SessionCloseUTC is when a daily bar becomes visible to QuoteAt: a session
// dated d counts as complete from d + SessionCloseUTC (17:00 in Brasília,
// UTC-3, the end of B3's regular session). Intraday bars are visible once
// complete (start + 60 s).
const SessionCloseUTC = 20 * time.Hour

// SessionComplete returns when the daily bar of session d counts as
// complete (d + SessionCloseUTC), in unix seconds.
func SessionComplete(d Date) int64 { return int64(d)*86400 + int64(SessionCloseUTC/time.Second) }

// VisibleFrom returns when q becomes visible to a cut-off, in unix
// seconds: a daily session's at its close (SessionComplete), a running
// session's at the end of its last 1-minute bar.
func (q *Quote) VisibleFrom() int64 {
	if q.Intraday {
		return q.Time + 60
	}
	return SessionComplete(q.Date)
}

// Quote is a ticker's quote at a point in time: the running aggregate of
// the session so far (intraday) or a complete daily session. Prices are
// BRL per share, unadjusted; Factor adjusts them like Bar.Factor.
type Quote struct {
	// Time is unix seconds, UTC: the start of the last 1-minute bar
	// included (intraday) or midnight of the session (daily).
	Time     int64
	Date     Date // the session
	Open     Num  // session open
	High     Num  // session high so far
	Low      Num  // session low so far
	Close    Num  // last price
	Volume   Num  // BRL traded in the session so far
	Quantity Num  // shares traded in the session so far
	// PrevClose is the previous session's close, expressed in this
	// session's share base (divided by the adjustment factors of events
	// between the two sessions), so splits do not show as variations.
	PrevClose Num
	// Variation is Close/PrevClose - 1 (decimal fraction); Null when the
	// previous close is missing or zero.
	Variation Num
	// VariationValue is Close - PrevClose (BRL), exact to the cent when
	// both are whole cents (see Diff); Null likewise.
	VariationValue Num
	// Factor is the adjustment factor F(Date).
	Factor Num
	// Intraday is true when the quote comes from 1-minute bars.
	Intraday bool
}

// Valid reports whether q holds a session.
func (q Quote) Valid() bool { return q.Date.Valid() }

// Adjusted returns q with prices divided and quantity multiplied by Factor.
// VariationValue is the unadjusted one (exact to the cent, see Diff)
// divided by Factor: closer to the decimal answer than the difference of
// the adjusted prices, which are rarely whole cents.
func (q Quote) Adjusted() Quote {
	f := q.Factor
	if !f.Valid() || f == 1 {
		return q
	}
	q.Open /= f
	q.High /= f
	q.Low /= f
	q.Close /= f
	q.PrevClose /= f
	q.VariationValue /= f
	q.Quantity *= f
	return q
}

// NullQuote is the quote of a ticker without data at the time asked.
var NullQuote = Quote{
	Date: NoDate, Open: Null, High: Null, Low: Null, Close: Null, Volume: Null, Quantity: Null,
	PrevClose: Null, Variation: Null, VariationValue: Null, Factor: Null,
}

// runAgg holds, for every intraday bar, the session's running aggregates
// up to and including that bar. Volumes are summed in whole cents (see
// moneySum), so they are exact to the cent whenever the bars' are. An
// asset's are built on the first quote asked of a bar before its last
// (see cumulative): 48 bytes a bar, held with the Dataset from then on.
type runAgg struct {
	open, high, low, close, vol, qty []Num
}

// runAcc is one session's running aggregate, bar by bar.
type runAcc struct {
	open, high, low, close, qty Num
	vol                         moneySum
}

// start begins a session at bar i of s.
func (r *runAcc) start(s *IntradayBars, i int) {
	var b Bar
	s.bar(&b, i)
	r.open, r.high, r.low, r.close = b.Open, b.High, b.Low, b.Close
	r.vol.start(b.Volume)
	r.qty = b.Quantity
}

// add adds bar i of s to the session.
func (r *runAcc) add(s *IntradayBars, i int) {
	var b Bar
	s.bar(&b, i)
	if !r.open.Valid() {
		r.open = b.Open
	}
	r.high = maxNum(r.high, b.High)
	r.low = minNum(r.low, b.Low)
	if b.Close.Valid() {
		r.close = b.Close
	}
	r.vol.add(b.Volume)
	r.qty = addNum(r.qty, b.Quantity)
}

// buildRunAgg computes the running aggregates of every bar.
func (a *Asset) buildRunAgg() *runAgg {
	s := a.Intraday
	n := s.Len()
	col := make([]Num, 6*n)
	r := &runAgg{
		open: col[0:n:n], high: col[n : 2*n : 2*n], low: col[2*n : 3*n : 3*n],
		close: col[3*n : 4*n : 4*n], vol: col[4*n : 5*n : 5*n], qty: col[5*n : 6*n : 6*n],
	}
	day := NoDate
	var acc runAcc
	for i := 0; i < n; i++ {
		if d := DateOfUnix(s.Times[i]); d != day {
			day = d
			acc.start(s, i)
		} else {
			acc.add(s, i)
		}
		r.open[i], r.high[i], r.low[i], r.close[i] = acc.open, acc.high, acc.low, acc.close
		r.vol[i], r.qty[i] = acc.vol.value(), acc.qty
	}
	return r
}

// lazyAgg holds an asset's running aggregates once built; the Asset
// points to it, so that copies of the Asset share it.
type lazyAgg struct{ p atomic.Pointer[runAgg] }

// cumulative returns the running aggregates, building them on first use
// (two goroutines asking at once may both build; one result is kept).
// Build gives every asset with intraday bars its lazyAgg.
func (a *Asset) cumulative() *runAgg {
	if a.cum == nil { // an Asset not made by Build: nowhere to keep them
		return a.buildRunAgg()
	}
	if c := a.cum.p.Load(); c != nil {
		return c
	}
	a.cum.p.CompareAndSwap(nil, a.buildRunAgg())
	return a.cum.p.Load()
}

// sessionAgg returns the running aggregate of bar i, session day sd,
// computed from the session's first bar: what Build needs for the last
// bar (Latest), without the columns of every bar.
func (a *Asset) sessionAgg(i int, sd Date) runAcc { return sessionAgg(a.Intraday, i, sd) }

const (
	minUnix = (int64(math.MinInt32) + 1) * 86400
	maxUnix = (int64(math.MaxInt32) - 1) * 86400
)

// QuoteAt returns the quote as of t: the running aggregate of the 1-minute
// bars complete by t (start + 60 s <= t) when their session is more recent
// than the last daily session complete by t (see SessionCloseUTC), else
// that daily session (a complete daily bar is authoritative). It returns NullQuote when there is no data by
// t. It is a pair of binary searches and does not allocate.
func (a *Asset) QuoteAt(t time.Time) Quote {
	if ts := t.Unix(); ts >= a.latestFrom {
		return a.Latest
	}
	return a.quoteAt(t.Unix())
}

// quoteAt is QuoteAt without the Latest shortcut (Build uses it to compute
// Latest).
func (a *Asset) quoteAt(ts int64) Quote {
	ts = min(max(ts, minUnix), maxUnix)
	dt := DateOfUnix(ts)
	j := index.LastLE(a.Daily.Dates, dt)
	if j >= 0 && a.Daily.Dates[j] == dt && ts < SessionComplete(dt) {
		j--
	}
	if i := index.LastLE(a.Intraday.Times, ts-60); i >= 0 {
		sd := DateOfUnix(a.Intraday.Times[i])
		if j < 0 || sd > a.Daily.Dates[j] {
			return a.intradayQuote(i, sd)
		}
	}
	if j >= 0 {
		return a.DailyQuote(j)
	}
	return NullQuote
}

// intradayQuote returns the quote as of intraday bar i, of session day
// sd. The last bar's aggregate is computed from its session's bars
// (sessionAgg: one session, a few hundred bars at most): Build asks it
// for Latest, and QuoteAt answers Latest itself from then on unless a
// newer daily bar made Latest daily; an earlier bar's is read from the
// running aggregates, built on the first such quote (about 14 ns a bar).
func (a *Asset) intradayQuote(i int, sd Date) Quote {
	q := Quote{Time: a.Intraday.Times[i], Date: sd, Factor: a.adj.at(sd), Intraday: true}
	if i == a.Intraday.Len()-1 {
		r := a.sessionAgg(i, sd)
		q.Open, q.High, q.Low, q.Close, q.Volume, q.Quantity = r.open, r.high, r.low, r.close, r.vol.value(), r.qty
	} else {
		c := a.cumulative()
		q.Open, q.High, q.Low, q.Close, q.Volume, q.Quantity = c.open[i], c.high[i], c.low[i], c.close[i], c.vol[i], c.qty[i]
	}
	k := index.LastLT(a.Daily.Dates, sd)
	q.PrevClose = a.prevClose(k, q.Factor)
	q.setVariation()
	return q
}

// DailyQuote returns the quote of daily row i (its previous close from row
// i-1). i must be within [0, Daily.Len()).
func (a *Asset) DailyQuote(i int) Quote {
	s := a.Daily
	d := s.Dates[i]
	q := Quote{
		Time: int64(d) * 86400, Date: d,
		Open: s.Open(i), High: s.High(i), Low: s.Low(i), Close: s.Close(i),
		Volume: s.Volume(i), Quantity: Num(s.Quantity(i)),
		Factor: a.adj.at(d),
	}
	q.PrevClose = a.prevClose(i-1, q.Factor)
	q.setVariation()
	return q
}

// QuoteBefore returns the quote of the last daily session strictly before
// d (the previous-day view), or NullQuote.
func (a *Asset) QuoteBefore(d Date) Quote {
	if q, ok := a.quoteBeforeSum(d); ok {
		return q // from the summary a loader gave, without reading bars
	}
	if j := index.LastLT(a.Daily.Dates, d); j >= 0 {
		return a.DailyQuote(j)
	}
	return NullQuote
}

// prevClose returns daily row k's close in the share base of factor f.
func (a *Asset) prevClose(k int, f Num) Num {
	if k < 0 {
		return Null
	}
	c := a.Daily.Close(k)
	pf := a.adj.at(a.Daily.Dates[k])
	if !c.Valid() || !pf.Valid() || pf == 0 {
		return Null
	}
	return c * f / pf
}

func (q *Quote) setVariation() {
	if !q.Close.Valid() || !q.PrevClose.Valid() || q.PrevClose == 0 {
		q.Variation, q.VariationValue = Null, Null
		return
	}
	q.Variation = q.Close/q.PrevClose - 1
	q.VariationValue = Diff(q.Close, q.PrevClose)
}

// QuoteAt returns the quote of a ticker (current or former) as of t; see
// Asset.QuoteAt. An unknown ticker wraps ErrNotFound.
func (d *Dataset) QuoteAt(ticker string, t time.Time) (Quote, error) {
	a, ok := d.Asset(ticker)
	if !ok {
		return NullQuote, fmt.Errorf("ticker %q: %w", ticker, ErrNotFound)
	}
	return a.QuoteAt(t), nil
}
