package engine

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pregao/pregao/internal/yieldpoint"
)

// Point in time: what the Dataset knew at an instant t (the API's as_of).
// Every version of a report, cash action, fund report and ratio point is
// kept with its publication instant; these helpers answer "what was
// published by t" from what Build indexes once, without scanning other
// versions:
//
//   - a report, a cash action, a fund report or a ratio point is known at
//     t when its publish date is at or before t;
//   - a version of a cash event is its current one at t when it is known
//     and no version ranking after it is: a higher version, or one of
//     the same number published later (CompareCashVersions; CurrentAt
//     reads the earliest publication of a version ranking after it,
//     kept per version at Build);
//   - a share count (SharesPoint) is known from its date, a share action
//     from its approval date (neither has a publication instant): from
//     the start of that day in São Paulo;
//   - a ratio point priced at a session (a valuation point's reference
//     date) is known once that session closed (SessionClose) as well.

// SaoPaulo is the time zone of the as-of convention: São Paulo time,
// UTC-3 (Brazil has kept no daylight saving time since 2019).
var SaoPaulo = time.FixedZone("BRT", -3*3600)

// SaoPauloDay returns the calendar day of t in São Paulo.
func SaoPauloDay(t time.Time) Date { return DateOf(t.Add(-3 * time.Hour)) }

// dayStart is the first instant of day d in São Paulo.
func dayStart(d Date) time.Time { return d.Time().Add(3 * time.Hour) }

// SessionClose is when the closes of session d are known: 18:00 in São
// Paulo (21:00 UTC), the end of B3's regular session.
func SessionClose(d Date) time.Time { return d.Time().Add(sessionCloseAt) }

// sessionCloseAt is SessionClose's time of day, UTC.
const sessionCloseAt = 21 * time.Hour

// KnownAt reports whether r was published at or before t.
func (r *Report) KnownAt(t time.Time) bool { return !r.PublishDate.Time().After(t) }

// KnownAt reports whether this version was published at or before t.
func (e *CashEvent) KnownAt(t time.Time) bool { return !e.PublishDate.Time().After(t) }

// CurrentAt reports whether this version is the current one of its event
// among those published at or before t: the one ranking last by
// CompareCashVersions (the highest version, of one version the later
// published), as Current is among all. At or after the latest
// publication of the event's versions it equals Current.
func (e *CashEvent) CurrentAt(t time.Time) bool {
	return e.KnownAt(t) && (!e.superseded || e.supersededAt.Time().After(t))
}

// KnownAt reports whether the share action was approved by t (its
// approval day, or its prior_ex_date when the approval is missing, has
// begun in São Paulo).
func (sa *ShareAction) KnownAt(t time.Time) bool {
	d := sa.ApprovalDate
	if !d.Valid() {
		d = sa.PriorExDate
	}
	return !d.Valid() || !dayStart(d).After(t)
}

// AdjustAt returns v divided by the action's adjustment factor as known
// at t (see CashFactorAt).
func (d *Dataset) AdjustAt(e *CashEvent, v Num, t time.Time) Num { return Quo(v, d.CashFactorAt(e, t)) }

// CashFactorAt returns the adjustment factor of e as known at t: F of its
// prior_ex_date counting only the share actions known at t
// (ShareAction.KnownAt), each with the factor known at t (without its
// received-value part until the received assets' first session after
// its prior_ex_date closed), computed as Build computes F (the same
// products in the same order): the factor a Dataset built from the
// actions and sessions known at t gives. It is e.Factor when every
// action counted is fully known at t.
func (d *Dataset) CashFactorAt(e *CashEvent, t time.Time) Num {
	if !e.PriorExDate.Valid() || e.asset < 0 {
		return e.Factor
	}
	ev := d.assets[e.asset].events
	i := sort.Search(len(ev), func(i int) bool { return ev[i].Date >= e.PriorExDate })
	all := true
	for k := range ev[i:] {
		if f, ok := ev[i+k].factorAt(t); !ok || f != ev[i+k].Factor {
			all = false
			break
		}
	}
	if all {
		return e.Factor
	}
	// The step function of the known events from prior_ex_date on: the
	// factors of one date multiplied in event order, then the dates'
	// products from the last backwards (buildAdjust); events whose
	// factor is 1 are left out, as Build leaves them.
	cum := Num(1)
	for j := len(ev); j > i; {
		k := j - 1
		for k > i && ev[k-1].Date == ev[j-1].Date {
			k--
		}
		day, any := Num(1), false
		for m := range ev[k:j] {
			f, ok := ev[k+m].factorAt(t)
			if !ok || f == 1 {
				continue
			}
			if any {
				day *= f
			} else {
				day, any = f, true
			}
		}
		if any {
			cum = day * cum
		}
		j = k
	}
	return cum
}

// factorAt returns the event's factor as known at t, and false when its
// action is not known then.
func (x *AdjEvent) factorAt(t time.Time) (Num, bool) {
	if !x.Action.KnownAt(t) {
		return 0, false
	}
	if x.valueAt.Valid() && SessionClose(x.valueAt).After(t) {
		return x.base, true
	}
	return x.Factor, true
}

// SharesAt returns the newest share-count point known at t (dated on or
// before t's day in São Paulo) and true, or false when there is none.
func (is *Issuer) SharesAt(t time.Time) (SharesPoint, bool) {
	day := SaoPauloDay(t)
	// Shares is newest first.
	i := sort.Search(len(is.Shares), func(i int) bool { return is.Shares[i].Date <= day })
	if i == len(is.Shares) {
		return SharesPoint{}, false
	}
	return *is.Shares[i], true
}

// FirstPublished returns the earliest publication of the Dataset's
// published data (reports, cash actions, fund reports, share counts): an
// as-of instant before it knows nothing. The zero time when there is
// none. It is computed on first use (a pass over those kinds, about
// 40 ms at demo scale 10, that a server's start need not wait for); safe
// for concurrent use.
func (d *Dataset) FirstPublished() time.Time {
	d.deferred.wait() // it reads the cash actions and fund reports
	d.firstOnce.Do(func() { d.firstPublished = firstPublished(d.u) })
	return d.firstPublished
}

// firstPublished computes FirstPublished.
func firstPublished(u *Universe) time.Time {
	var first time.Time
	see := func(t time.Time) {
		if !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	for i := range u.Reports {
		see(u.Reports[i].PublishDate.Time())
	}
	if u.LazyReports != nil {
		see(u.LazyReports.FirstPublished().Time())
	}
	for i := range u.CashActions {
		see(u.CashActions[i].PublishDate.Time())
	}
	for i := range u.FundReports {
		see(u.FundReports[i].PublishDate)
	}
	for i := range u.Shares {
		if d := u.Shares[i].Date; d.Valid() {
			see(dayStart(d))
		}
	}
	return first
}

// setKnownFrom sets KnownFrom on one company's report-independent
// valuation series (sorted as Issuer.Ratios; rules are the catalog's
// price rules, PriceRule.Static): a point of reference date R
// and frequency f exists because the filings of R were published, so it
// is known from the first publication of the company's other valuation
// points of (R, f) when that is after its own publish date (R). Without
// it an as_of between R and that publication would show a point that a
// Dataset of what was published by then does not have.
func setKnownFrom(ss []RatioSeries, cat []Indicator, rules []PriceRule) {
	for i := range ss {
		s := &ss[i]
		if !rules[s.Indicator].Static() {
			continue
		}
		// The report-dependent valuation series of the same frequency
		// (company level first: it is computed for every company with
		// valuation).
		var ref *RatioSeries
		for j := range ss {
			o := &ss[j]
			if o.Frequency != s.Frequency || cat[o.Indicator].Kind != IndValuation || rules[o.Indicator].Static() {
				continue
			}
			if ref == nil || o.Class == "" && ref.Class != "" {
				ref = o
			}
		}
		if ref == nil {
			continue
		}
		var kf []Stamp
		for k := range s.Points {
			p := &s.Points[k]
			from := p.PublishDate
			j := sort.Search(len(ref.Points), func(j int) bool { return ref.Points[j].ReferenceDate >= p.ReferenceDate })
			if j < len(ref.Points) && ref.Points[j].ReferenceDate == p.ReferenceDate && ref.Points[j].PublishDate.Compare(from) > 0 {
				from = ref.Points[j].PublishDate
			}
			if from != p.PublishDate && kf == nil {
				kf = make([]Stamp, len(s.Points))
				for m := range k {
					kf[m] = s.Points[m].PublishDate
				}
			}
			if kf != nil {
				kf[k] = from
			}
		}
		s.KnownFrom = kf
	}
}

// At returns the screener as known at t (the API's as_of): the rows a
// Dataset built from the data published by t would have, and their
// columns as known at t (prices). rows is the table prices is row for
// row with: the Screener's rows, then the tickers delisted before the
// snapshot's last session (s itself when there are none; otherwise only
// its Assets, Issuers, Employees, LiquidityRank and SectorID are set).
//
// ByVolume lists the rows at t: those with a session closed by t (a
// ticker listed later is not one) and not delisted before the last
// session closed by t, by the volume of their last session closed by
// t. Each row's close and volume are those of that session (Null when
// it has none); Primary marks each company's first row in liquidity
// order at t (LiquidityRank, then that volume); each ratio cell is the
// latest point known at t of the series Ratios reads (TTM, else
// ANNUAL: the point of the newest reference date known then, at its
// latest publication known then; see LatestKnown). A valuation cell
// whose latest point known at t is a TTM one dated on or before the
// last session closed by t is the point SessionValuationAt makes at
// that session, as the derivation of a snapshot of the data published
// by t ends the series; any other DIVIDEND_YIELD cell is its point with
// the cash of the versions current at t (DividendYieldAt).
//
// It allocates the columns: meant for one request. Only the ratio
// columns of the catalog indexes in need are computed (the others are
// nil), and the valuation at the session is made once per company, for
// the price-derived indicators in need only.
func (s *Screener) At(t time.Time, need []int) (rows *Screener, prices *ScreenerPrices) {
	past := s.pastRows()
	tab := past.tab
	n := tab.Len()
	var cat []Indicator
	if s.ds != nil {
		cat = s.ds.Catalog()
	}
	out := &ScreenerPrices{Session: NoDate, Close: make([]Num, n), Volume: make([]Num, n), Primary: make([]bool, n), Ratios: make([][]Num, len(cat))}
	in := past.quotesAt(out, t, s.Len())
	var kBuf [16]int
	var sv SessionValuation
	w := screenAt{s: s, cat: cat, t: t, sv: &sv}
	w.ks, w.needPriced, w.countsCash = s.columnsAt(out, need, kBuf[:0])
	w.fill(tab, out)
	out.ByVolume = past.byVolume(out, in)
	return tab, out
}

// quotesAt sets each row's close and volume at t in out (those of its
// last session closed by t, Null when none) and out.Session (the newest
// of those sessions), and returns which rows are rows at t (rowAt; n is
// the Screener's own row count).
func (past *screenerPast) quotesAt(out *ScreenerPrices, t time.Time, n int) []bool {
	in := make([]bool, len(out.Close))
	by := closedBy(t)
	for r, a := range past.tab.Assets {
		out.Close[r], out.Volume[r] = Null, Null
		i := lastClosed(a, by)
		if i >= 0 {
			in[r] = past.rowAt(r, t, n)
			out.Close[r], out.Volume[r] = a.Daily.Close(i), a.Daily.Volume(i)
			d := a.Daily.Dates[i]
			if d > out.Session {
				out.Session = d
			}
			if len(a.renames) > 0 {
				if tk := a.TickerOn(d); tk != a.Ticker {
					if out.Tickers == nil {
						out.Tickers = make([]string, len(out.Close))
					}
					out.Tickers[r] = tk
				}
			}
		}
	}
	return in
}

// columnsAt allocates in out the ratio columns of the catalog indexes in
// need (Null-filled, once each) and returns their indexes appended to ks
// and, per catalog indicator, the price-derived ones among them (those
// read the valuation at the last session closed by t, computed once per
// issuer and for those indicators only) and those whose stored points
// count the cash of twelve months (PriceRule.CountsCash); nil when none.
func (s *Screener) columnsAt(out *ScreenerPrices, need []int, ks []int) (_ []int, needPriced, countsCash []bool) {
	n := len(out.Close)
	for _, k := range need {
		if k < 0 || k >= len(out.Ratios) || out.Ratios[k] != nil {
			continue
		}
		col := make([]Num, n)
		for r := range col {
			col[r] = Null
		}
		out.Ratios[k] = col
		ks = append(ks, k)
		if s.PriceDerived(k) {
			if needPriced == nil {
				needPriced = make([]bool, len(out.Ratios))
			}
			needPriced[k] = true
		}
		if s.ds.PriceRule(k).CountsCash() {
			if countsCash == nil {
				countsCash = make([]bool, len(out.Ratios))
			}
			countsCash[k] = true
		}
	}
	return ks, needPriced, countsCash
}

// screenAt is one At call's ratio cells: the columns asked for and the
// valuation at the session of the company in hand.
type screenAt struct {
	s          *Screener
	cat        []Indicator
	t          time.Time
	ks         []int  // the catalog indexes of the columns
	needPriced []bool // see columnsAt
	countsCash []bool // see columnsAt
	sv         *SessionValuation
	valued     int // of the company in hand: 0 not computed yet, 1 sv holds it, -1 none
	dyVars     [2]Num
	yp         yieldpoint.Point // company by company (18 ms for all with a droplet sort)
}

// fill sets every row's Primary and ratio cells in out, company by
// company (tab's rows).
func (w *screenAt) fill(tab *Screener, out *ScreenerPrices) {
	by := closedBy(w.t)
	byIssuer := tab.issuerRows()
	for g := 0; g < len(byIssuer); {
		is := tab.Issuers[byIssuer[g]]
		end := g + 1
		for end < len(byIssuer) && tab.Issuers[byIssuer[end]] == is {
			end++
		}
		w.yp.Yield()
		primary := primaryAt(is, by)
		w.valued = 0
		for _, r := range byIssuer[g:end] {
			a := tab.Assets[r]
			out.Primary[r] = a == primary
			for _, k := range w.ks {
				if v, ok := w.cell(is, a, k); ok {
					out.Ratios[k][r] = v
				}
			}
		}
		g = end
	}
}

// primaryAt returns the company's first asset in liquidity order at the
// last session closed by by (Build's rule, with each asset's last
// session closed by then), nil when none.
func primaryAt(is *Issuer, by Date) *Asset {
	var primary *Asset
	primaryVol := Null
	for _, o := range is.Assets {
		if !ScreenerClass(o.StockType) {
			continue
		}
		i := lastClosed(o, by)
		if i < 0 {
			continue
		}
		if v := o.Daily.Volume(i); primary == nil || liquidityCmpVol(o, v, primary, primaryVol) < 0 {
			primary, primaryVol = o, v
		}
	}
	return primary
}

// cell returns the value of asset a's cell of catalog indicator k at
// w.t (see At); false when it has no point then.
func (w *screenAt) cell(is *Issuer, a *Asset, k int) (Num, bool) {
	class := ""
	if w.cat[k].ByClass {
		class = a.StockType
	}
	p := latestRatioAt(is, uint16(k), class, w.t)
	stored := p
	if w.needPriced != nil && w.needPriced[k] && (p == nil || p.Frequency == FrequencyTTM) {
		if w.valued == 0 {
			w.valued = -1
			if w.s.ds.sessionValuation(is, w.t, w.needPriced, w.sv) {
				w.valued = 1
			}
		}
		if w.valued == 1 {
			p = w.sv.Latest(p, uint16(k), class)
		}
	}
	switch {
	case p == nil:
		return Null, false
	case p == stored && w.countsCash != nil && w.countsCash[k]:
		// A stored DIVIDEND_YIELD point counts the cash versions
		// current at t, as on the ratio routes.
		v, _ := w.s.ds.DividendYieldAt(is, p, w.s.ds.RatioVars(p), w.t, w.dyVars[:])
		return v, true
	}
	return p.Value, true
}

// byVolume returns the rows at t (in) by volume descending, missing last
// (cmpDescMissingLast), then ticker: the rows' tickers differ, so the
// order is total and an unstable sort gives it; the tickers compared by
// their rank.
func (past *screenerPast) byVolume(p *ScreenerPrices, in []bool) []int32 {
	volume := p.Volume
	out := make([]int32, 0, len(volume))
	for r := range volume {
		if in[r] {
			out = append(out, int32(r))
		}
	}
	rank := past.tickerRank
	slices.SortFunc(out, func(x, y int32) int {
		vx, vy := descKey(volume[x]), descKey(volume[y])
		switch {
		case vx < vy:
			return -1
		case vx > vy:
			return 1
		}
		if p.Tickers != nil && (p.Tickers[x] != "" || p.Tickers[y] != "") {
			return strings.Compare(p.TickerOf(past.tab, int(x)), p.TickerOf(past.tab, int(y)))
		}
		return cmp.Compare(rank[x], rank[y])
	})
	return out
}

// descKey returns v's key in cmpDescMissingLast's order, ascending:
// -v, +Inf when missing (valid values are finite).
func descKey(v Num) float64 {
	if !v.Valid() {
		return math.Inf(1)
	}
	return -float64(v)
}

// closedBy returns the last date whose session is closed at t: d is
// closed by t (SessionClose(d) is not after t) exactly when d <= closedBy(t).
func closedBy(t time.Time) Date { return DateOf(t.Add(-sessionCloseAt)) }

// lastClosed returns the index of a's last daily session on or before
// by (closedBy of an instant: its last session closed by then), -1 when
// none.
func lastClosed(a *Asset, by Date) int {
	b := a.Daily
	return sort.Search(b.Len(), func(i int) bool { return b.Dates[i] > by }) - 1
}

// latestRatioAt is latestRatio as known at t: of the first of TTM and
// ANNUAL with a point known at t, the latest one (LatestKnown).
func latestRatioAt(is *Issuer, k uint16, class string, t time.Time) *RatioPoint {
	for _, f := range [...]string{FreqTTM, FreqAnnual} {
		g := is.RatioGroup(k, class, f)
		if g == nil {
			continue
		}
		if i := LatestKnown(g.Points, g.KnownFrom, t); i >= 0 {
			return &g.Points[i]
		}
	}
	return nil
}
