package engine

import "github.com/pregao/pregao/index"

// Summaries are what Build reads of a bar history at open (the latest
// quote, the session before it): a loader that holds them beside the
// bars (a format 6 snapshot's index) sets them, so that Build does not
// read the bars themselves. A summary must be the one SummarizeDaily or
// SummarizeIntraday gives for the history's rows; a loader that cannot
// vouch for it yet verifies it before any use of the rows (as it does
// their checksum: Dataset.CheckAsset, CheckAll).

// DailySummary is a daily history's first date, its last two bars (as
// DailyBars' accessors give them) and the date and close of the bar
// before them: the latest quote, the quote of the session before the
// last (an end-of-day view) and the sessions before them.
type DailySummary struct {
	First      Date
	Last, Prev SummaryBar // Prev: Date NoDate (and no values) for one bar
	// Before is the date of the bar before Prev (NoDate for fewer than
	// three bars), BeforeClose its close.
	Before      Date
	BeforeClose Num
}

// SummaryBar is one daily bar of a DailySummary.
type SummaryBar struct {
	Date                           Date
	Open, High, Low, Close, Volume Num
	Quantity, Trades               int64
}

// SummarizeDaily returns the summary of s, and false when s has no row.
func SummarizeDaily(s *DailyBars) (DailySummary, bool) {
	n := s.Len()
	if n == 0 {
		return DailySummary{}, false
	}
	row := func(i int) SummaryBar {
		var b Bar
		s.bar(&b, i)
		return SummaryBar{Date: s.Dates[i], Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume,
			Quantity: s.Quantity(i), Trades: b.Trades}
	}
	sm := DailySummary{First: s.Dates[0], Last: row(n - 1), Prev: SummaryBar{Date: NoDate}, Before: NoDate}
	if n > 1 {
		sm.Prev = row(n - 2)
	}
	if n > 2 {
		sm.Before, sm.BeforeClose = s.Dates[n-3], s.Close(n-3)
	}
	return sm, true
}

// lastBefore returns which of the summary's rows is the last dated
// before d in a history of n rows (ascending): 0 the last, 1 the one
// before, 2 the one before that (Before: its date and close only), -1
// none; ok is false when that row is older than the summary tells.
func (sm *DailySummary) lastBefore(d Date, n int) (k int, ok bool) {
	switch {
	case d <= sm.First:
		return -1, true
	case d > sm.Last.Date:
		return 0, true
	case n >= 2 && d > sm.Prev.Date:
		return 1, true
	case n >= 3 && d > sm.Before:
		return 2, true
	}
	return 0, false
}

// SetSummary gives s its summary (see DailySummary), carried into the
// DailyBars Build makes of it. It must be s's (see SummarizeDaily).
func (s *Series) SetSummary(sm DailySummary) {
	s.sum = &sm
	if s.bars != nil {
		s.bars.sum = s.sum
	}
}

// KeepWide has Build hold s's wide columns as they are, without trying
// the compact form first (which reads every value): a loader whose
// series were found not to fit it when written sets it.
func KeepWide(s *Series) {
	if s.bars != nil || s.Len() == 0 {
		return
	}
	w := *s
	s.bars = &DailyBars{Ticker: s.Ticker, Dates: s.Dates, wide: &w, sum: s.sum}
}

// IntradaySummary is a 1-minute history's first and last bar times and
// the aggregate of its last session (the bars of the last bar's UTC day,
// as a quote of the last bar aggregates them).
type IntradaySummary struct {
	First, Last                              int64
	Open, High, Low, Close, Volume, Quantity Num
}

// SummarizeIntraday returns the summary of s, and false when s has no
// bar.
func SummarizeIntraday(s *Intraday) (IntradaySummary, bool) { return summarizeIntraday(s.view()) }

func summarizeIntraday(s *IntradayBars) (IntradaySummary, bool) {
	n := s.Len()
	if n == 0 {
		return IntradaySummary{}, false
	}
	r := sessionAgg(s, n-1, DateOfUnix(s.Times[n-1]))
	return IntradaySummary{First: s.Times[0], Last: s.Times[n-1], Open: r.open, High: r.high, Low: r.low, Close: r.close,
		Volume: r.vol.value(), Quantity: r.qty}, true
}

// SetSummary gives s its summary (see IntradaySummary). It must be s's
// (see SummarizeIntraday).
func (s *Intraday) SetSummary(sm IntradaySummary) {
	s.sum = &sm
	if s.bars != nil {
		s.bars.sum = s.sum
	}
}

// sessionAgg aggregates the bars of s from the first of session day sd
// up to bar i.
func sessionAgg(s *IntradayBars, i int, sd Date) runAcc {
	k := index.FirstGE(s.Times[:i], int64(sd)*86400)
	var acc runAcc
	acc.start(s, k)
	for j := k + 1; j <= i; j++ {
		acc.add(s, j)
	}
	return acc
}

// dailySum returns a's daily summary when its history has one (a
// history joined at open from several has none).
func (a *Asset) dailySum() *DailySummary {
	if p := a.Daily.sum; p != nil && a.Daily.Len() > 0 {
		return p
	}
	return nil
}

// summaryQuote is DailyQuote of the summary's row b, whose previous row
// is dated pd with close pc (pd NoDate: none).
func (a *Asset) summaryQuote(b *SummaryBar, pd Date, pc Num) Quote {
	d := b.Date
	q := Quote{
		Time: int64(d) * 86400, Date: d,
		Open: b.Open, High: b.High, Low: b.Low, Close: b.Close,
		Volume: b.Volume, Quantity: Num(b.Quantity),
		Factor: a.adj.at(d),
	}
	q.PrevClose = Null
	if pd != NoDate {
		q.PrevClose = a.closeIn(pd, pc, q.Factor)
	}
	q.setVariation()
	return q
}

// QuoteBeforeReadsNoBar reports whether a.QuoteBefore(d) answers
// without reading a bar a snapshot maps (one of the blocks a Dataset
// verifies on first use, see Blocks): from the daily summary a loader
// gave, or from a history that has none (held in the heap: a format 5
// load, a history joined at open, or no bar at all).
func (a *Asset) QuoteBeforeReadsNoBar(d Date) bool {
	if a.dailySum() == nil {
		return true
	}
	_, ok := a.quoteBeforeSum(d)
	return ok
}

// quoteBeforeSum is QuoteBefore(d) from the daily summary, ok false when
// it cannot tell (no summary, or a session older than it holds).
func (a *Asset) quoteBeforeSum(d Date) (Quote, bool) {
	sm := a.dailySum()
	if sm == nil {
		return Quote{}, false
	}
	switch k, ok := sm.lastBefore(d, a.Daily.Len()); {
	case !ok || k == 2:
		return Quote{}, false
	case k < 0:
		return NullQuote, true
	case k == 0:
		return a.summaryQuote(&sm.Last, sm.Prev.Date, sm.Prev.Close), true
	default:
		return a.summaryQuote(&sm.Prev, sm.Before, sm.BeforeClose), true
	}
}

// dateBeforeSum returns the date of a's last daily row before d from
// its summary (NoDate: none), ok false when it cannot tell.
func (a *Asset) dateBeforeSum(d Date) (Date, bool) {
	sm := a.dailySum()
	if sm == nil {
		return NoDate, false
	}
	k, ok := sm.lastBefore(d, a.Daily.Len())
	switch {
	case !ok:
		return NoDate, false
	case k < 0:
		return NoDate, true
	case k == 0:
		return sm.Last.Date, true
	case k == 1:
		return sm.Prev.Date, true
	}
	return sm.Before, true
}

// latestQuote is quoteAt(maxUnix) (the quote of the last bar, daily or
// 1-minute) made from the histories' summaries where they have one, so
// that it reads no bar. It gives quoteAt's answer, bit for bit.
func (a *Asset) latestQuote() Quote {
	n, m := a.Daily.Len(), a.Intraday.Len()
	ds := a.dailySum()
	is := a.Intraday.sum
	if n > 0 && ds == nil || m > 0 && is == nil || m > 0 && is.Last > maxUnix-60 ||
		n > 0 && int64(ds.Last.Date) >= int64(DateOfUnix(maxUnix)) {
		// No summary, or keys beyond quoteAt's bound (no valid data).
		return a.quoteAt(maxUnix)
	}
	if m > 0 {
		sd := DateOfUnix(is.Last)
		if n == 0 || sd > ds.Last.Date {
			q := Quote{Time: is.Last, Date: sd, Factor: a.adj.at(sd), Intraday: true,
				Open: is.Open, High: is.High, Low: is.Low, Close: is.Close, Volume: is.Volume, Quantity: is.Quantity}
			q.PrevClose = Null
			if n > 0 { // the last daily bar is the last before sd
				q.PrevClose = a.closeIn(ds.Last.Date, ds.Last.Close, q.Factor)
			}
			q.setVariation()
			return q
		}
	}
	if n == 0 {
		return NullQuote
	}
	return a.summaryQuote(&ds.Last, ds.Prev.Date, ds.Prev.Close)
}

// closeIn is prevClose for the close c of date d: c in the share base of
// factor f.
func (a *Asset) closeIn(d Date, c, f Num) Num {
	pf := a.adj.at(d)
	if !c.Valid() || !pf.Valid() || pf == 0 {
		return Null
	}
	return c * f / pf
}
