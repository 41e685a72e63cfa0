package engine

import (
	"time"

	"github.com/pregao/pregao/index"
)

// What a View answers: the base Dataset's history with the live session's
// bars after it. Every method is a read of immutable data: safe for
// concurrent use, no locks.

// QuoteAt returns a's quote as of unix time t: the live session's running
// aggregate when the session has a bar of a complete by t, else the base
// Dataset's (Asset.QuoteAt). a must be an asset of v.Base.
func (v *View) QuoteAt(a *Asset, t int64) Quote {
	if v.Live != nil {
		if q, ok := v.Live.quote(a, t); ok {
			return q
		}
	}
	return a.QuoteAt(time.Unix(t, 0))
}

// QuoteBefore returns the quote of a's last daily session strictly before
// d (the previous-day view): the live session's daily bar when it is
// dated before d, else the base's (Asset.QuoteBefore).
func (v *View) QuoteBefore(a *Asset, d Date) Quote {
	if l := v.Live; l != nil && l.Session < d {
		if q, ok := l.quote(a, maxUnix); ok && !q.Intraday {
			return q
		}
	}
	return a.QuoteBefore(d)
}

// LiveDaily returns a's daily bar of the live session: the aggregate of its
// bars so far (shown once the session is over, as a snapshot's daily bar
// is from its close); false for a ticker the session has no bar of.
func (v *View) LiveDaily(a *Asset, adjusted bool) (Bar, bool) {
	if v.Live == nil {
		return Bar{}, false
	}
	return v.Live.dailyBar(a, adjusted)
}

// AppendMinutes appends a's 1-minute bars starting within [from, to] (unix
// seconds, both inclusive) to dst: the base's, then the live session's,
// adjusted when adjusted is set. It allocates only when dst must grow.
func (v *View) AppendMinutes(dst []Bar, a *Asset, from, to int64, adjusted bool) []Bar {
	lo, hi := a.MinuteRange(from, to)
	dst = a.AppendIntraday(dst, lo, hi, adjusted)
	tl := v.Live.tail(a)
	if tl == nil {
		return dst
	}
	sd := v.Live.Session
	f := a.adj.at(sd)
	lo, hi = index.Span(tl.times, from, to)
	for i := lo; i < hi; i++ {
		r := tl.row(i)
		b := Bar{Time: tl.times[i], Date: sd, Open: r.open, High: r.high, Low: r.low, Close: r.close,
			Volume: r.vol, Quantity: Num(r.qty), Factor: f}
		if adjusted {
			b.adjust()
		}
		dst = append(dst, b)
	}
	return dst
}

// LastMinute returns the start of a's last 1-minute bar starting at or
// before t (unix seconds), in the base or the live session, and false when
// there is none.
func (v *View) LastMinute(a *Asset, t int64) (int64, bool) {
	if tl := v.Live.tail(a); tl != nil {
		if i := index.LastLE(tl.times, t); i >= 0 {
			return tl.times[i], true
		}
	}
	if i := index.LastLE(a.Intraday.Times, t); i >= 0 {
		return a.Intraday.Times[i], true
	}
	return 0, false
}

// Visible returns the unix time from which a cut-off sees everything of
// the view, given the base's (baseVisible): the live session's watermark
// and its close (its quotes turn daily then).
func (v *View) Visible(baseVisible int64) int64 {
	l := v.Live
	if l == nil || l.Watermark == 0 {
		return baseVisible
	}
	return max(baseVisible, l.Watermark, SessionComplete(l.Session))
}
