package engine

import (
	"cmp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/index"
)

// IndexData is the derived view of a market index.
type IndexData struct {
	*Index
	// Members are the portfolio's assets (former tickers resolved to
	// current ones), parallel to the source members: Members[i] is the
	// asset of Index.Members[i] (weights and quantities; reach them as
	// ix.Index.Members since this field shadows them), nil for a member
	// the snapshot has no security for (no quote yet).
	Members []*Asset
	// Highs ranks the members with a latest quote and a valid variation by
	// variation descending (ties by ticker); Lows by variation ascending,
	// most negative first (ties by ticker). Members without data, or whose
	// latest quote is older than the market session before the newest one
	// among the members (stale: delisted, or renamed without a rename
	// record), are left out. Computed at Build from Asset.Latest.
	Highs []RankEntry
	Lows  []RankEntry
	// UpdatedAt is the newest Quote.Time among the ranked entries (unix
	// seconds); 0 when none.
	UpdatedAt int64

	stableFrom int64       // from this unix time on, RankAt answers Highs/Lows
	cal        *sessionCal // the market sessions (shared)
	pos        int32       // position in Dataset.Indexes (see Pos)
}

// Pos returns the index's position in the Indexes slice of the Dataset
// that built it: &ds.Indexes()[ix.Pos()] == ix. Callers keep per-index
// data in slices parallel to Indexes and index them with Pos.
func (ix *IndexData) Pos() int { return int(ix.pos) }

// RankEntry is one ranked asset with the quote used.
type RankEntry struct {
	Asset *Asset
	Quote Quote
}

func cmpHigh(a, b RankEntry) int {
	if c := cmp.Compare(b.Quote.Variation, a.Quote.Variation); c != 0 {
		return c
	}
	return cmp.Compare(a.Asset.Ticker, b.Asset.Ticker)
}

func cmpLow(a, b RankEntry) int {
	if c := cmp.Compare(a.Quote.Variation, b.Quote.Variation); c != 0 {
		return c
	}
	return cmp.Compare(a.Asset.Ticker, b.Asset.Ticker)
}

// RankAt appends to dst the members' quotes as of t (Asset.QuoteAt),
// leaving out members without a valid variation or whose quote is older
// than the market session before the newest one among them, sorted for highs
// (variation descending) or, when lows is true, for lows (most negative
// first); ties by ticker. It allocates only when dst must grow.
//
// From the time every member's latest bar is complete on, it copies the
// precomputed Highs or Lows.
func (ix *IndexData) RankAt(t time.Time, lows bool, dst []RankEntry) []RankEntry {
	start := len(dst)
	if t.Unix() >= ix.stableFrom {
		if lows {
			return append(dst, ix.Lows...)
		}
		return append(dst, ix.Highs...)
	}
	for _, m := range ix.Members {
		if m == nil {
			continue
		}
		q := m.QuoteAt(t)
		if q.Variation.Valid() {
			dst = append(dst, RankEntry{Asset: m, Quote: q})
		}
	}
	dst = append(dst[:start], current(dst[start:], ix.cal.before)...)
	if lows {
		slices.SortFunc(dst[start:], cmpLow)
	} else {
		slices.SortFunc(dst[start:], cmpHigh)
	}
	return dst
}

// current keeps, in place, the entries whose quote is of the newest
// session among them or of the market session just before it (before:
// the market session before a date, NoDate when none): a member that has
// not traded yet in the newest session shows the previous one, but a
// member that stopped trading (delisted, or renamed without a rename
// record) is not ranked with a stale variation.
func current(es []RankEntry, before func(Date) Date) []RankEntry {
	newest := NoDate
	for i := range es {
		if !newest.Valid() || es[i].Quote.Date > newest {
			newest = es[i].Quote.Date
		}
	}
	if len(es) == 0 {
		return es
	}
	from := newest
	if p := before(newest); p.Valid() {
		from = p
	}
	out := es[:0]
	for _, e := range es {
		if e.Quote.Date >= from {
			out = append(out, e)
		}
	}
	return out
}

// KeepCurrent keeps, in place, the entries of es (quotes of ix's members
// as seen at one time) that RankAt would rank: those whose quote is of the
// newest session among them or of the market session just before it. It
// lets a caller that ranks its own view of the quotes leave stale members
// out the same way. It does not allocate.
func (ix *IndexData) KeepCurrent(es []RankEntry) []RankEntry { return current(es, ix.cal.before) }

// sessionCal is the market sessions of a Dataset's assets (every date
// with a daily bar of a non-macro asset), made on first use: making it
// reads every daily date, most of a mapped snapshot's daily columns. A
// date near the end (the newest sessions, which a ranking asks for) is
// answered from the histories' summaries instead while they tell, the
// last such answer kept.
type sessionCal struct {
	assets []Asset
	sums   bool // some history has a summary
	once   sync.Once
	cal    []Date // ascending, once made
	made   atomic.Bool
	last   atomic.Pointer[[2]Date] // a date asked before the calendar was made, and its answer
}

// before returns the market session before d, NoDate when none.
func (c *sessionCal) before(d Date) Date {
	if c.sums && !c.made.Load() {
		if p := c.last.Load(); p != nil && p[0] == d {
			return p[1]
		}
		if x, ok := sessionBeforeSum(c.assets, d); ok {
			c.last.Store(&[2]Date{d, x})
			return x
		}
	}
	c.once.Do(func() {
		c.cal = marketSessions(c.assets)
		c.made.Store(true)
	})
	if k := index.FirstGE(c.cal, d); k > 0 {
		return c.cal[k-1]
	}
	return NoDate
}

// sessionBefore is sessionCal.before without the calendar: the newest
// date before d of any non-macro asset, read at the end of each one's
// dates (Build ranks the latest quotes, whose dates are near the end).
func sessionBefore(assets []Asset, d Date) Date {
	best := NoDate
	for i := range assets {
		a := &assets[i]
		if a.StockType == ClassMacro {
			continue
		}
		// The last date before d from the history's summary when it
		// tells, else from its dates.
		x, ok := a.dateBeforeSum(d)
		if !ok {
			x = NoDate
			if k := index.FirstGE(a.Daily.Dates, d); k > 0 {
				x = a.Daily.Dates[k-1]
			}
		}
		if x.Valid() && (!best.Valid() || x > best) {
			best = x
		}
	}
	return best
}

// sessionBeforeSum is sessionBefore from the histories' summaries, and
// the dates of histories without one (joined at open, in the heap): ok
// is false when a summary does not tell (d older than it holds).
func sessionBeforeSum(assets []Asset, d Date) (Date, bool) {
	best := NoDate
	for i := range assets {
		a := &assets[i]
		if a.StockType == ClassMacro || a.Daily.Len() == 0 {
			continue
		}
		x, ok := a.dateBeforeSum(d)
		if !ok {
			if a.dailySum() != nil {
				return NoDate, false
			}
			x = NoDate
			if k := index.FirstGE(a.Daily.Dates, d); k > 0 {
				x = a.Daily.Dates[k-1]
			}
		}
		if x.Valid() && (!best.Valid() || x > best) {
			best = x
		}
	}
	return best, true
}

// marketSessions returns every date with a daily bar of a non-macro
// asset, ascending.
func marketSessions(assets []Asset) []Date {
	lo, hi := NoDate, NoDate
	for i := range assets {
		a := &assets[i]
		if a.StockType == ClassMacro || a.Daily.Len() == 0 {
			continue
		}
		if f := a.Daily.Dates[0]; !lo.Valid() || f < lo {
			lo = f
		}
		if l := a.Daily.Dates[a.Daily.Len()-1]; !hi.Valid() || l > hi {
			hi = l
		}
	}
	if !lo.Valid() {
		return nil
	}
	seen := make([]bool, int(hi-lo)+1)
	n := 0
	for i := range assets {
		a := &assets[i]
		if a.StockType == ClassMacro {
			continue
		}
		for _, d := range a.Daily.Dates {
			if k := int(d - lo); k >= 0 && k < len(seen) && !seen[k] {
				seen[k] = true
				n++
			}
		}
	}
	cal := make([]Date, 0, n)
	for k, ok := range seen {
		if ok {
			cal = append(cal, lo+Date(k))
		}
	}
	return cal
}

// UpdatedAt returns the newest Quote.Time among entries (unix seconds), or
// 0 when entries is empty.
func UpdatedAt(entries []RankEntry) int64 {
	var t int64
	for i := range entries {
		t = max(t, entries[i].Quote.Time)
	}
	return t
}

func (b *builder) buildRankings() {
	d := b.d
	cal := &sessionCal{assets: d.assets}
	for i := range d.assets {
		if d.assets[i].dailySum() != nil {
			cal.sums = true
			break
		}
	}
	// The members' latest quotes are ranked without the calendar, made on
	// a ranking's first use (sessionCal).
	before := func(x Date) Date { return sessionBefore(d.assets, x) }
	for i := range d.indexes {
		ix := &d.indexes[i]
		ix.cal = cal
		ix.stableFrom = minUnix
		for _, m := range ix.Members {
			if m == nil {
				continue
			}
			ix.stableFrom = max(ix.stableFrom, m.latestFrom)
			if m.Latest.Variation.Valid() {
				ix.Highs = append(ix.Highs, RankEntry{Asset: m, Quote: m.Latest})
			}
		}
		ix.Highs = current(ix.Highs, before)
		slices.SortFunc(ix.Highs, cmpHigh)
		ix.Lows = slices.Clone(ix.Highs)
		slices.SortFunc(ix.Lows, cmpLow)
		ix.UpdatedAt = UpdatedAt(ix.Highs)
	}
}
