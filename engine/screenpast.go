package engine

import (
	"slices"
	"strings"
	"time"
)

// The screener's rows at an earlier instant (Screener.At). Build makes
// a row of each screener candidate (screenerCandidate) not delisted
// before the last session (delistedBefore). A Dataset built from the
// data published by an instant t applies the same rule at its own last
// session, the last one closed by t: a candidate delisted since was a
// row while that session was not after its ListedTo. screenerPast
// gathers those candidates once per Dataset, so that At adds them
// without looking at the other assets.

// screenerPast is the table At screens.
type screenerPast struct {
	// tab is the Screener's rows followed by the candidates delisted
	// before the last session, in ticker order, with the columns that
	// come from the registry (Issuers, Employees, LiquidityRank,
	// SectorID); the Screener itself when there are none.
	tab *Screener
	// until[i] is, for row Len()+i of tab, the first session after its
	// ListedTo: it is a row at t while that session has not closed.
	until []Date
	// tickerRank[r] is row r's position in tab in ticker order.
	tickerRank []int32
}

// pastRows returns the Screener's screenerPast, built on first use.
func (s *Screener) pastRows() *screenerPast {
	return s.past.get(func() *screenerPast { return newScreenerPast(s) })
}

// rowAt reports whether row r of tab is a screener row at t, given that
// it has a session closed by t: a row of the Screener always is.
func (p *screenerPast) rowAt(r int, t time.Time, n int) bool {
	if r < n {
		return true
	}
	u := p.until[r-n]
	return !u.Valid() || SessionClose(u).After(t)
}

func newScreenerPast(s *Screener) *screenerPast {
	p := newScreenerPastTab(s)
	p.tickerRank = make([]int32, p.tab.Len())
	order := make([]int32, len(p.tickerRank))
	for r := range order {
		order[r] = int32(r)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(p.tab.Assets[x].Ticker, p.tab.Assets[y].Ticker) })
	for i, r := range order {
		p.tickerRank[r] = int32(i)
	}
	return p
}

// newScreenerPastTab is newScreenerPast but for tickerRank.
func newScreenerPastTab(s *Screener) *screenerPast {
	p := &screenerPast{tab: s}
	d := s.ds
	if d == nil {
		return p
	}
	var extra []*Asset
	for i := range d.assets {
		a := &d.assets[i]
		if screenerCandidate(a) && delistedBefore(a, d.lastSession) && a.Daily.Len() > 0 {
			extra = append(extra, a)
		}
	}
	if len(extra) == 0 {
		return p
	}
	slices.SortFunc(extra, func(x, y *Asset) int { return strings.Compare(x.Ticker, y.Ticker) })
	// The sessions after the earliest ListedTo. The last session of a
	// Dataset is the newest daily bar of a ticker that is not a macro
	// series (buildQuotes).
	lo := extra[0].ListedTo
	for _, a := range extra {
		lo = min(lo, a.ListedTo)
	}
	session := make([]bool, int(d.lastSession-lo)+1) // session[i]: lo+i is one
	for i := range d.assets {
		a := &d.assets[i]
		if a.StockType == ClassMacro {
			continue
		}
		ds := a.Daily.Dates
		j, _ := slices.BinarySearch(ds, lo)
		for _, x := range ds[j:] {
			if x <= d.lastSession {
				session[x-lo] = true
			}
		}
	}
	p.until = make([]Date, len(extra))
	for i, a := range extra {
		p.until[i] = NoDate
		for x := a.ListedTo + 1; x <= d.lastSession; x++ {
			if session[x-lo] {
				p.until[i] = x
				break
			}
		}
	}
	n := s.Len() + len(extra)
	tab := &Screener{ds: d, Assets: slices.Concat(s.Assets, extra), Issuers: make([]*Issuer, n),
		Employees: make([]Num, n), LiquidityRank: make([]int32, n)}
	for l := range tab.SectorID {
		tab.SectorID[l] = make([]string, n)
	}
	for r, a := range tab.Assets {
		fillScreenerRow(tab, r, a)
	}
	tab.byIssuer = groupByIssuer(tab.Issuers)
	p.tab = tab
	return p
}
