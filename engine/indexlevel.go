package engine

import "slices"

// Index levels. An index's level, in index points, is computed from its
// theoretical portfolio as B3 defines it,
//
//	points = Σ theoretical quantity (shares) × price (BRL per share) ÷ reductor (BRL per point)
//
// with each member's price adjusted to today's share base (the portfolio's
// quantities are in that base). The snapshot holds the portfolio of one
// date (Index.AsOf): a level before it is what that portfolio was worth,
// not B3's historical index (whose portfolio and reductor change every
// four months and at corporate events). A level exists only when every
// member has a price.

// HasLevel reports whether the index's level can be computed: it has a
// non-zero reductor and, for each member of its portfolio, a security and
// a theoretical quantity.
func (ix *IndexData) HasLevel() bool {
	if !ix.Reductor.Valid() || ix.Reductor == 0 || len(ix.Members) == 0 {
		return false
	}
	for i, as := range ix.Members {
		if as == nil || !ix.Index.Members[i].TheoreticalQty.Valid() {
			return false
		}
	}
	return true
}

// LevelOn returns the index's closing level, in index points, of the last
// session on or before d: the members' adjusted daily closes on or before
// d (each its own last). Null when a member has none. ix must HasLevel.
func (ix *IndexData) LevelOn(d Date) Num {
	var sum float64
	for i, as := range ix.Members {
		k := as.DayIndex(d)
		if k < 0 {
			return Null
		}
		c := as.DailyBar(k, true).Close
		if !c.Valid() {
			return Null
		}
		sum += float64(ix.Index.Members[i].TheoreticalQty) * float64(c)
	}
	return Num(sum / float64(ix.Reductor))
}

// AppendLevels appends to dst the index's points, in index points, at
// every Time of the members' bars. bars[i] are the adjusted bars of
// ix.Members[i], sorted by Time, all daily or all 1-minute (intraday);
// start is the first session of the window.
//
// Each member counts at its last price: its close before the window is
// its adjusted daily close of the session before start; intraday, at each
// new session, the close of the session before it (a member that has not
// traded yet that session). A point's Open and Close are the levels of
// the members' opens (for a member with a bar at that Time) and closes;
// daily, High and Low are Null (a day's extremes of the level are not
// those of its members), intraday they are the larger and the smaller of
// Open and Close. Volume and Quantity are Null (points are not money),
// Factor 1. A Time at which a member has no price has no point. ix must
// HasLevel.
func (ix *IndexData) AppendLevels(dst []Bar, bars [][]Bar, start Date, intraday bool) []Bar {
	type member struct {
		bars []Bar
		next int
		last Num // the last price seen
		qty  float64
	}
	ms := make([]member, len(ix.Members))
	n := 0
	for i, as := range ix.Members {
		m := &ms[i]
		m.qty = float64(ix.Index.Members[i].TheoreticalQty)
		m.bars = bars[i]
		if k := as.DayIndex(start - 1); k >= 0 {
			m.last = as.DailyBar(k, true).Close
		} else {
			m.last = Null
		}
		n += len(m.bars)
	}
	times := make([]int64, 0, n)
	for i := range ms {
		for _, b := range ms[i].bars {
			times = append(times, b.Time)
		}
	}
	slices.Sort(times)
	times = slices.Compact(times)
	r := float64(ix.Reductor)
	dst = slices.Grow(dst, len(times))
	day := NoDate
	for _, t := range times {
		d := Date(t / 86400)
		if intraday && d != day {
			for i, as := range ix.Members {
				if k := as.DayIndex(d - 1); k >= 0 {
					if c := as.DailyBar(k, true).Close; c.Valid() {
						ms[i].last = c
					}
				}
			}
			day = d
		}
		var open, close float64
		ok := true
		for i := range ms {
			m := &ms[i]
			price := m.last
			openPrice := m.last
			for m.next < len(m.bars) && m.bars[m.next].Time <= t {
				b := &m.bars[m.next]
				if b.Time == t && b.Open.Valid() {
					openPrice = b.Open
				}
				if b.Close.Valid() {
					price = b.Close
					m.last = b.Close
				}
				m.next++
			}
			if !price.Valid() || !openPrice.Valid() {
				ok = false
				continue
			}
			open += m.qty * float64(openPrice)
			close += m.qty * float64(price)
		}
		if !ok {
			continue
		}
		b := Bar{Time: t, Date: d, Open: Num(open / r), Close: Num(close / r),
			High: Null, Low: Null, Volume: Null, Quantity: Null, Factor: 1}
		if intraday {
			b.High, b.Low = max(b.Open, b.Close), min(b.Open, b.Close)
		}
		dst = append(dst, b)
	}
	return dst
}

// AppendDailyLevels appends to dst the index's daily points (see
// AppendLevels) of the sessions from from to to, inclusive, computed from
// the members' adjusted daily bars: the levels GET /quotes/{index}
// answers for those sessions (without the live one). ix must HasLevel.
func (ix *IndexData) AppendDailyLevels(dst []Bar, from, to Date) []Bar {
	bars := make([][]Bar, len(ix.Members))
	for i, as := range ix.Members {
		lo, hi := as.DayRange(from, to)
		bars[i] = as.AppendDaily(nil, lo, hi, true)
	}
	return ix.AppendLevels(dst, bars, from, false)
}
