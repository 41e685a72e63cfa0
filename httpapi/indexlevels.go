package httpapi

import (
	"github.com/pregao/pregao/engine"
)

// Index levels (addition): GET /quotes/IBOV answers an index with a
// portfolio as a series of points, computed from its theoretical
// portfolio as B3 defines the level,
//
//	points = Σ theoretical quantity × price ÷ reductor
//
// with each member's price adjusted to today's share base (the portfolio's
// quantities are in that base). The snapshot holds the portfolio of one
// date: a level before it is what that portfolio was worth, not B3's
// historical index (whose portfolio and reductor change every four months
// and at corporate events).
//
//   - historical daily (interval ≥ 86400): a point per session of the
//     window, open and close from the members' opens and closes (a member
//     without a bar that session counts at its last close); high and low
//     null (a day's extremes of the level are not those of its members).
//   - historical intraday (interval < 86400): the level at each minute
//     from the members' 1-minute bars (a member carries its last price,
//     the previous session's close before its first trade), bucketed by
//     interval; high and low of a bucket are the extremes of the levels
//     computed at its minutes' opens and closes.
//   - current: the level from each member's current quote (the plan's
//     view), against the level of their previous closes.
//
// Volume and currency are null (points are not money). A point exists only
// when every member has a price. The computation is engine's (IndexData's
// HasLevel, LevelOn and AppendLevels, indexlevel.go); this file picks the
// members' bars as the plan's view serves them and writes the answers.

// indexLevelTicker returns the index of the snapshot named t (a ticker
// path segment), if its level can be computed (engine's HasLevel).
func indexLevelTicker(ds *engine.Dataset, t string) (*engine.IndexData, bool) {
	ix, ok := ds.Index(t)
	if !ok || !ix.HasLevel() {
		return nil, false
	}
	return ix, true
}

// appendIndexLevels appends the index's answer to a quote request of
// options o (chart is refused by the caller).
func appendIndexLevels(dst []byte, ix *engine.IndexData, o *quoteOpts) []byte {
	if o.typ == TypeCurrent {
		return appendIndexCurrent(dst, ix, o)
	}
	bars := indexBars(ix, o)
	dst = append(dst, '[')
	ref := engine.Null
	for i := range bars {
		b := &bars[i]
		if i == 0 || o.interval < dailyInterval && b.Date != bars[i-1].Date {
			ref = ix.LevelOn(b.Date - 1) // the previous session's close
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendBar(dst, b, ref, nullJSON, true)
		if o.interval >= dailyInterval {
			ref = b.Close
		}
	}
	return append(dst, ']')
}

var nullJSON = []byte("null")

// indexBars computes the index's historical points of o (see above and
// engine's AppendLevels) from the members' adjusted bars as the plan's
// view serves them.
func indexBars(ix *engine.IndexData, o *quoteOpts) []engine.Bar {
	adj := *o
	adj.adjusted = true
	intraday := o.interval < dailyInterval
	if intraday {
		adj.interval = 60
	} else {
		adj.interval = dailyInterval
	}
	bars := make([][]engine.Bar, len(ix.Members))
	for i, as := range ix.Members {
		bars[i] = seriesBars(nil, as, &adj)
	}
	out := ix.AppendLevels(nil, bars, o.start, intraday)
	if intraday && o.interval > 60 {
		out = engine.Aggregate(out, o.interval)
	}
	if !intraday && o.interval > dailyInterval {
		out = aggregateDays(out, o.interval)
	}
	return out
}

// appendIndexCurrent appends the index's current point: the level of the
// members' current quotes (the plan's view), against the level of their
// previous closes.
func appendIndexCurrent(dst []byte, ix *engine.IndexData, o *quoteOpts) []byte {
	var open, close, prev float64
	var t int64
	date := engine.NoDate
	ok := true
	for i, as := range ix.Members {
		q := o.v.quote(as).Adjusted()
		qty := float64(ix.Index.Members[i].TheoreticalQty)
		if !q.Valid() || !q.Close.Valid() || !q.PrevClose.Valid() {
			ok = false
			break
		}
		o := q.Open
		if !o.Valid() {
			o = q.PrevClose
		}
		open += qty * float64(o)
		close += qty * float64(q.Close)
		prev += qty * float64(q.PrevClose)
		if q.Time > t {
			t, date = q.Time, q.Date
		}
	}
	if !ok {
		b := engine.Bar{Open: engine.Null, Close: engine.Null, High: engine.Null, Low: engine.Null, Volume: engine.Null, Quantity: engine.Null, Factor: 1}
		return appendCurrentLevel(dst, &b, engine.Null)
	}
	r := float64(ix.Reductor)
	b := engine.Bar{Time: t, Date: date, Open: engine.Num(open / r), Close: engine.Num(close / r),
		High: engine.Null, Low: engine.Null, Volume: engine.Null, Quantity: engine.Null, Factor: 1}
	return appendCurrentLevel(dst, &b, engine.Num(prev/r))
}

// appendCurrentLevel appends a current point as appendQuote does (no
// adjustment_factor).
func appendCurrentLevel(dst []byte, b *engine.Bar, prev engine.Num) []byte {
	q := engine.Quote{Time: b.Time, Date: b.Date, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close,
		Volume: engine.Null, Quantity: engine.Null, PrevClose: prev, Factor: 1,
		Variation: engine.Null, VariationValue: engine.Null}
	if prev.Valid() && prev != 0 && b.Close.Valid() {
		q.Variation = b.Close/prev - 1
		q.VariationValue = b.Close - prev
	}
	return appendQuote(dst, &q, "")
}

// indexQuotes answers GET /quotes/{index}: the index's points, or a 400
// for a chart, which indexes do not have.
func indexQuotes(dst []byte, ix *engine.IndexData, o *quoteOpts) ([]byte, error) {
	if o.typ == TypeChart {
		return nil, badRequest("%s is an index: its levels are type=historical (daily or intraday) or type=current, not chart", ix.Symbol)
	}
	return appendIndexLevels(dst, ix, o), nil
}
