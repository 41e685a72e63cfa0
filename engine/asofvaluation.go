package engine

import (
	"cmp"
	"slices"
	"sort"
	"sync"
	"time"
)

// The valuation at the last session before an instant (the API's as_of).
//
// The ratio derivation ends each company's TTM valuation series with a
// point at the snapshot's last session: the newest period's twelve-month
// figures, priced with the closes of that session (see engine/ratios).
// SessionValuationAt makes the point a snapshot built from the data
// published by t would end with: at the last session closed by t, from
// the figures of the newest period known then (the latest publication of
// its quarter-end valuation points known then: their variables are the
// period's figures as known at t), the share count dated by that session,
// each class's last close within MaxPriceAge days of it and the declared
// cash of the twelve months before it (each event at its highest version
// published by t, divided by the share actions approved by t), with the
// formulas of valuation.go, as the derivation computes them.

// SessionValuation is the TTM valuation of one company at one session:
// one point per TTM valuation series of the company that the derivation
// prices at a session.
type SessionValuation struct {
	// Session is the session the points are priced at (their reference
	// date).
	Session Date
	// Base is the reference date of the period whose figures are used.
	Base Date
	// Points[i] stands for Issuer.Ratios[Series[i]].
	Points []RatioPoint
	Series []int
	vars   []Num
}

// Vars returns the variables of Points[i].
func (v *SessionValuation) Vars(i int) []Num {
	p := &v.Points[i]
	return v.vars[p.VarsAt : p.VarsAt+uint32(p.NVars)]
}

// Of returns the point standing for series si of the issuer (an index
// into Issuer.Ratios) and its variables, or nil.
func (v *SessionValuation) Of(si int) (*RatioPoint, []Num) {
	if v == nil {
		return nil, nil
	}
	if i, ok := slices.BinarySearch(v.Series, si); ok {
		return &v.Points[i], v.Vars(i)
	}
	return nil, nil
}

// sessionDates returns every date of any asset's daily history,
// ascending (the derivation's last session is the newest of them).
func (d *Dataset) sessionDates() []Date {
	d.sessionsOnce.Do(func() {
		var all []Date
		for i := range d.assets {
			all = append(all, d.assets[i].Daily.Dates...)
		}
		slices.Sort(all)
		d.sessions = slices.Clip(slices.Compact(all))
	})
	return d.sessions
}

// SessionAt returns the last session closed by t (SessionClose): the
// last session of a Dataset built from the sessions closed by then;
// NoDate when none.
func (d *Dataset) SessionAt(t time.Time) Date {
	ds := d.sessionDates()
	i := sort.Search(len(ds), func(i int) bool { return SessionClose(ds[i]).After(t) })
	if i == 0 {
		return NoDate
	}
	return ds[i-1]
}

// SessionValuationAt returns the TTM valuation of is at the last session
// closed by t as a Dataset built from the data published by t would
// derive it (see above), or nil when that Dataset has no such point: no
// period known then, the newest one dated on or after that session, no
// class with a close within MaxPriceAge days of it, or a catalog whose
// valuation indicators this binary does not know how to price.
func (d *Dataset) SessionValuationAt(is *Issuer, t time.Time) *SessionValuation {
	out := new(SessionValuation)
	if !d.sessionValuation(is, t, nil, out) {
		return nil
	}
	return out
}

// sessionValuation is SessionValuationAt with only the points of the
// catalog indicators k with need[k] (every one when need is nil): it
// fills out, reusing its slices, and reports whether it has a point. A
// point is the one SessionValuationAt makes, and there is one exactly
// when SessionValuationAt has it: whether the valuation exists, its
// publication and its prices still read every series.
func (d *Dataset) sessionValuation(is *Issuer, t time.Time, need []bool, out *SessionValuation) bool {
	wanted := func(k uint16) bool { return need == nil || int(k) < len(need) && need[k] }
	out.Points, out.Series, out.vars = out.Points[:0], out.Series[:0], out.vars[:0]
	L := d.SessionAt(t)
	if !L.Valid() || is == nil {
		return false
	}
	cat := d.Catalog()
	// The newest period known at t: the reference dates of the
	// company's fundamental TTM points, one per period.
	base := NoDate
	for si := range is.Ratios {
		g := &is.Ratios[si]
		if g.Frequency != FreqTTM || g.Class != "" || cat[g.Indicator].Kind != IndFundamental {
			continue
		}
		for i := len(g.Points) - 1; i >= 0; i-- {
			p := &g.Points[i]
			if p.ReferenceDate <= L && p.ReferenceDate > base && !p.PublishDate.Time().After(t) {
				base = p.ReferenceDate
				break
			}
		}
		break // every fundamental TTM series has a point per period
	}
	if !base.Valid() || base >= L {
		return false
	}
	// The latest quarter-end valuation point of each series at base,
	// known at t: those of the indicators needed kept in bases (a few
	// dozen at most: on the stack), every one read for the publication
	// and the classes priced.
	type basePt struct {
		si int
		p  *RatioPoint
	}
	var basesBuf [48]basePt
	bases := basesBuf[:0]
	found := false
	var pub, ret Stamp
	// The classes priced: their tickers, from the by-class points.
	type classIn struct {
		class  ShareClass
		ticker Sym
		sec    *Security
		price  Num
		cash   Num
		factor Num
	}
	var classesBuf [4]classIn
	classes := classesBuf[:0]
	classOf := func(c ShareClass, tk Sym) int {
		for i := range classes {
			if classes[i].class == c {
				return i
			}
		}
		x := classIn{class: c, ticker: tk, price: Null, cash: Null, factor: Null}
		x.sec = securityOf(d, tk.String())
		x.price = closeOn(d, tk.String(), L)
		classes = append(classes, x)
		return len(classes) - 1
	}
	anyPrice := false
	staticRet := StampOf(d.AsOf())
	if staticRet == 0 {
		staticRet = StampOf(L.Time())
	}
	for si := range is.Ratios {
		g := &is.Ratios[si]
		if g.Frequency != FreqTTM || cat[g.Indicator].Kind != IndValuation {
			continue
		}
		if priceRuleOf(&cat[g.Indicator]) == ruleNone {
			return false
		}
		j := sort.Search(len(g.Points), func(j int) bool { return g.Points[j].ReferenceDate > base })
		var bp *RatioPoint
		for j--; j >= 0 && g.Points[j].ReferenceDate == base; j-- {
			if !g.Points[j].PublishDate.Time().After(t) {
				bp = &g.Points[j]
				break
			}
		}
		if bp == nil {
			continue
		}
		found = true
		if wanted(g.Indicator) {
			bases = append(bases, basePt{si, bp})
		}
		if !reportIndependent(&cat[g.Indicator]) && bp.PublishDate > pub {
			pub, ret = bp.PublishDate, bp.RetrievalDate
		}
		if bp.Class != ShareClassNone {
			x := &classes[classOf(bp.Class, bp.Ticker)]
			if rule := priceRuleOf(&cat[bp.Indicator]); rule == ruleMultiple || rule == ruleEarningsYield {
				vs := d.RatioVars(bp)
				if len(vs) == 4 {
					if rule == ruleMultiple {
						x.factor = vs[3]
					} else {
						x.factor = vs[2]
					}
				}
			}
			anyPrice = anyPrice || x.price.Valid()
		}
	}
	if !found || pub == 0 || !anyPrice {
		return false
	}
	// Shares at L (the derivation's sharesAt: of the points of the newest
	// date on or before L, the last in the Universe's order).
	shares, cShares, pShares := Null, Null, Null
	i := sort.Search(len(is.Shares), func(i int) bool { return is.Shares[i].Date <= L })
	if i < len(is.Shares) {
		for i+1 < len(is.Shares) && is.Shares[i+1].Date == is.Shares[i].Date {
			i++
		}
		sp := is.Shares[i]
		tot := float64(sp.Common + sp.Preferred)
		net := tot - float64(sp.Treasury)
		if tot > 0 && net > 0 {
			shares = Num(net)
			cShares, pShares = Num(float64(sp.Common)*net/tot), Num(float64(sp.Preferred)*net/tot)
		}
	}
	// Market capitalization inputs.
	mc := MarketCapInputs{CommonShares: cShares, PreferredShares: pShares, Shares: shares,
		CommonPrice: Null, PreferredPrice: Null, UnitPrice: Null, UnitFactor: Null}
	var pref *Security
	slices.SortFunc(classes, func(a, b classIn) int { return cmp.Compare(a.class.String(), b.class.String()) })
	for i := range classes {
		x := &classes[i]
		switch x.class.String() {
		case ClassCS:
			mc.CommonPrice = x.price
		case ClassUnit:
			mc.UnitPrice, mc.UnitFactor = x.price, x.factor
		case ClassPS, ClassPSA, ClassPSB, ClassPSC, ClassPSD, ClassPSE:
			if x.sec != nil && (pref == nil || moreLiquidSecurity(x.sec, pref) < 0) {
				pref, mc.PreferredPrice = x.sec, x.price
			}
		}
	}
	marketCap := MarketCap(mc)
	needCash := false
	for _, b := range bases {
		if priceRuleOf(&cat[b.p.Indicator]) == ruleDividendYield {
			needCash = true
		}
	}
	if needCash {
		var clsBuf [len(classesBuf)]ShareClass
		cls := clsBuf[:0]
		for i := range classes {
			cls = append(cls, classes[i].class)
		}
		d.cashAt(is, t, L, func(c ShareClass) (*Security, string) {
			for i := range classes {
				if classes[i].class == c {
					return classes[i].sec, classes[i].ticker.String()
				}
			}
			return nil, ""
		}, func(c ShareClass, v Num) {
			for i := range classes {
				if classes[i].class == c {
					classes[i].cash = v
				}
			}
		}, cls)
	}
	out.Session, out.Base = L, base
	if cap(out.Points) < len(bases) {
		out.Points, out.Series, out.vars = make([]RatioPoint, 0, len(bases)), make([]int, 0, len(bases)), make([]Num, 0, 6*len(bases))
	}
	for _, b := range bases {
		p := b.p
		bv := d.RatioVars(p)
		rule := priceRuleOf(&cat[p.Indicator])
		var x *classIn
		if p.Class != ShareClassNone {
			x = &classes[classOf(p.Class, p.Ticker)]
		}
		var val Num
		var vs []Num
		switch rule {
		case ruleMultiple:
			if len(bv) != 4 {
				continue
			}
			val = PriceMultiple(x.price, bv[1], shares, x.factor)
			vs = []Num{x.price, bv[1], shares, x.factor}
		case ruleEarningsYield:
			if len(bv) != 4 {
				continue
			}
			val = EarningsYield(bv[0], shares, x.factor, x.price)
			vs = []Num{bv[0], shares, x.factor, x.price}
		case ruleDividendYield:
			val = DividendYield(x.cash, x.price)
			vs = []Num{x.cash, x.price}
		case ruleMarketCap:
			val = marketCap
			vs = []Num{cShares, mc.CommonPrice, pShares, mc.PreferredPrice, mc.UnitPrice, mc.UnitFactor}
		case ruleEV:
			if len(bv) != 2 {
				continue
			}
			val = EnterpriseValue(marketCap, bv[1])
			vs = []Num{marketCap, bv[1]}
		case ruleEVMultiple:
			if len(bv) != 2 {
				continue
			}
			// The ENTERPRISE_VALUE of the same valuation: market cap plus
			// the net debt, unrounded as the derivation keeps it.
			nd, ok := netDebtOf(d, is, base, t)
			if !ok {
				continue
			}
			ev := marketCap + nd
			val = EVMultiple(ev, bv[1])
			vs = []Num{ev, bv[1]}
		}
		q := *p
		q.Value = validOrNull(val)
		q.ReferenceDate = L
		q.PublishDate, q.RetrievalDate = pub, ret
		if reportIndependent(&cat[p.Indicator]) {
			q.PublishDate, q.RetrievalDate = StampOf(L.Time()), staticRet
		}
		q.VarsAt, q.NVars = uint32(len(out.vars)), uint8(len(vs))
		out.vars = append(out.vars, vs...)
		out.Points = append(out.Points, q)
		out.Series = append(out.Series, b.si)
	}
	return len(out.Points) > 0
}

// netDebtOf returns the NET_DEBT variable of the company's
// ENTERPRISE_VALUE TTM point at ref known at t.
func netDebtOf(d *Dataset, is *Issuer, ref Date, t time.Time) (Num, bool) {
	k, ok := d.IndicatorIndex(IndValuation, "ENTERPRISE_VALUE")
	if !ok {
		return Null, false
	}
	g := is.RatioGroup(uint16(k), "", FreqTTM)
	if g == nil {
		return Null, false
	}
	j := sort.Search(len(g.Points), func(j int) bool { return g.Points[j].ReferenceDate > ref })
	for j--; j >= 0 && g.Points[j].ReferenceDate == ref; j-- {
		if !g.Points[j].PublishDate.Time().After(t) {
			vs := d.RatioVars(&g.Points[j])
			if len(vs) != 2 {
				return Null, false
			}
			return vs[1], true
		}
	}
	return Null, false
}

// closeOn returns the last valid close of ticker's asset (its joined
// history) on or before day and at most MaxPriceAge days earlier, Null
// when none.
func closeOn(d *Dataset, ticker string, day Date) Num {
	a, ok := d.Asset(ticker)
	if !ok {
		return Null
	}
	b := a.Daily
	i := sort.Search(b.Len(), func(i int) bool { return b.Dates[i] > day })
	for i--; i >= 0 && b.Dates[i] >= day-MaxPriceAge; i-- {
		if c := b.Close(i); c.Valid() {
			return c
		}
	}
	return Null
}

// appendAliases appends ticker and the other tickers of its rename
// chain to dst: the ticker it was renamed to (its asset's, when ticker
// is a former one) and every ticker renamed into that, as Build joins
// them into one asset.
func appendAliases(dst []string, d *Dataset, ticker string) []string {
	dst = append(dst, ticker)
	if a, ok := d.Asset(ticker); ok {
		if a.Ticker != ticker {
			dst = append(dst, a.Ticker)
		}
		for _, f := range a.Former {
			if f != ticker {
				dst = append(dst, f)
			}
		}
	}
	return dst
}

// cashCounted reports whether the dividend yield counts a cash action
// of that name (the derivation's cashNames).
func cashCounted(name string) bool {
	return name == "DIVIDEND" || name == "INTEREST_ON_EQUITY" || name == "RENDIMENTO"
}

// cashAt computes, for each class of classes, the declared cash per share
// with prior_ex_date in the twelve calendar months ending at day (the
// derivation's cashTTM), from the versions current at t and the share
// actions approved by t, and calls set with it. class returns the
// security of a class and the ticker priced (its events are matched by
// that ISIN, or by a ticker of its rename chain, appendAliases).
func (d *Dataset) cashAt(is *Issuer, t time.Time, day Date, class func(ShareClass) (*Security, string), set func(ShareClass, Num), classes []ShareClass) {
	from := DateOf(day.Time().AddDate(-1, 0, 0))
	// The current version at t of each counted event, by event key.
	type ev struct {
		key string
		a   *CashEvent
	}
	var evBuf [16]ev
	evs := evBuf[:0]
	// CashActions is by prior_ex_date descending: the window's events
	// are one run.
	lo := sort.Search(len(is.CashActions), func(i int) bool { return is.CashActions[i].PriorExDate <= day })
	for _, e := range is.CashActions[lo:] {
		if e.PriorExDate <= from {
			break
		}
		if !e.CurrentAt(t) || !cashCounted(e.Name) {
			continue
		}
		key := e.EventID
		if key == "" {
			key = "\x00" + e.ID
		}
		evs = append(evs, ev{key, e})
	}
	slices.SortFunc(evs, func(x, y ev) int { return cmp.Compare(x.key, y.key) })
	for _, c := range classes {
		sec, ticker := class(c)
		if sec == nil {
			set(c, Num(0))
			continue
		}
		var aliasBuf [4]string
		aliases := appendAliases(aliasBuf[:0], d, ticker)
		matches := func(isin, ticker string) bool {
			return isin != "" && isin == sec.ISIN || ticker != "" && slices.Contains(aliases, ticker)
		}
		// The splits in the Universe's order (the derivation's): by
		// their positions in it, kept at Build.
		var splitBuf [8]split
		splits := splitBuf[:0]
		for k, s := range is.ShareActions {
			if s.Factor.Valid() && s.Factor > 0 && len(s.Legs) == 0 && s.KnownAt(t) && matches(s.ISIN, s.Ticker) {
				splits = append(splits, split{is.shareActionAt[k], s})
			}
		}
		if len(splits) > 1 {
			slices.SortFunc(splits, func(x, y split) int { return cmp.Compare(x.at, y.at) })
		}
		sum := Num(0)
		for _, x := range evs {
			a := x.a
			if a.PriorExDate <= from || a.PriorExDate > day || !matches(a.ISIN, a.Ticker) {
				continue
			}
			v := a.DeclaredValue
			for _, sp := range splits {
				if s := sp.s; s.PriorExDate >= a.PriorExDate && s.PriorExDate < day {
					v /= s.Factor
				}
			}
			sum += v
		}
		set(c, validOrNull(sum))
	}
}

// split is a share action of an issuer and its position in the
// Universe's ShareActions (Issuer.shareActionAt).
type split struct {
	at int32
	s  *ShareAction
}

// sessionsState is the lazily built list of SessionAt.
type sessionsState struct {
	sessionsOnce sync.Once
	sessions     []Date
}

// Point returns the point of catalog indicator k and class ("" for a
// company-level indicator) and its variables, or nil.
func (v *SessionValuation) Point(k uint16, class string) (*RatioPoint, []Num) {
	if v == nil {
		return nil, nil
	}
	for i := range v.Points {
		if p := &v.Points[i]; p.Indicator == k && p.Class.String() == class {
			return p, v.Vars(i)
		}
	}
	return nil, nil
}

// Latest returns the later of p (a point of series (k, class, TTM)
// known at t, or nil) and v's point of that series: v's when p is dated
// on or before v's session (p is then the newest period's point, or the
// snapshot's own last-session point, which v's replaces).
func (v *SessionValuation) Latest(p *RatioPoint, k uint16, class string) *RatioPoint {
	sp, _ := v.Point(k, class)
	if sp == nil || p != nil && p.ReferenceDate > v.Session {
		return p
	}
	return sp
}

// DividendYieldAt returns a DIVIDEND_YIELD point p of is (vs its
// variables: CASH_PER_SHARE_12M, PRICE) as a Dataset built from the data
// published by t derives it: the cash of the twelve months before its
// reference date counted from each event's version current at t and the
// share actions approved by t, at the point's price. The variables go to
// buf (2 long). A point without its two variables is returned as it is.
func (d *Dataset) DividendYieldAt(is *Issuer, p *RatioPoint, vs []Num, t time.Time, buf []Num) (Num, []Num) {
	if len(vs) != 2 || len(buf) < 2 {
		return p.Value, vs
	}
	ticker := p.Ticker.String()
	sec := securityOf(d, ticker)
	cash := vs[0]
	d.cashAt(is, t, p.ReferenceDate, func(ShareClass) (*Security, string) { return sec, ticker },
		func(_ ShareClass, v Num) { cash = v }, []ShareClass{p.Class})
	buf[0], buf[1] = cash, vs[1]
	return DividendYield(cash, vs[1]), buf[:2]
}
