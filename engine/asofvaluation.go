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

// sessionDates returns every date of the daily history of an asset that
// is not a macro series, ascending: B3's sessions (the derivation's last
// session is the newest of them). A macro series keeps its own calendar:
// the IPCA is dated the 1st of its month, a Sunday or a holiday as well.
func (d *Dataset) sessionDates() []Date {
	d.sessionsOnce.Do(func() {
		var all []Date
		for i := range d.assets {
			if d.assets[i].StockType == ClassMacro {
				continue
			}
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

// StaticRetrievalAt returns the retrieval_date of the report-independent
// valuation points (MARKET_CAP, DIVIDEND_YIELD: PriceRule.Static) at t:
// the derivation stamps them with the snapshot's as-of time, so a
// Dataset built from the data published by t stamps them with its own,
// the close of its last session (SessionClose of SessionAt(t)), as
// pregao import dates a snapshot. At or after the Dataset's own as-of
// time, that time; 0 when the Dataset has none (the derivation then
// stamps their publication).
func (d *Dataset) StaticRetrievalAt(t time.Time) Stamp {
	asOf := d.AsOf()
	if asOf.IsZero() {
		return 0
	}
	if !t.Before(asOf) {
		return StampOf(asOf)
	}
	if L := d.SessionAt(t); L.Valid() {
		return StampOf(SessionClose(L))
	}
	return StampOf(t)
}

// SessionValuationAt returns the TTM valuation of is at the last session
// closed by t as a Dataset built from the data published by t would
// derive it (see above), or nil when that Dataset has no such point: no
// period known then, the newest one dated on or after that session, no
// class with a close within MaxPriceAge days of it, or a VALUATION
// indicator of the catalog without a price rule (Dataset.PriceRule).
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
	return d.sessionValuationOn(is, d.SessionAt(t), t, need, nil, out)
}

// SessionValuationOn returns the TTM valuation of is at session L from
// everything the Dataset holds: the point its derivation would end each
// TTM valuation series with were L its last session (the figures of the
// newest period on or before L, the share count dated by L, each class's
// last close within MaxPriceAge days of it, the cash of the twelve months
// before it at each event's highest version), stamped as that point
// would be (the report-independent points with the Dataset's as-of
// time); nil when the Dataset has no such point. It is the valuation of
// a session before the last, priced as the quotes of that session are
// (the eod plan's, while it does not show the last session yet), where
// SessionValuationAt is one as known at an earlier instant.
//
// closeOf, when not nil, gives a class's close at L by its ticker (Null:
// none within MaxPriceAge days), in place of a read of its daily bars:
// a caller that holds the session's quotes prices without reading a bar
// block. ids, when not empty, are the catalog indicators whose points
// are made (the others are left out; whether there is a valuation does
// not change): the market cap and enterprise value count no cash.
func (d *Dataset) SessionValuationOn(is *Issuer, L Date, closeOf func(ticker string) Num, ids ...uint16) *SessionValuation {
	var need []bool
	if len(ids) > 0 {
		need = make([]bool, len(d.Catalog()))
		for _, k := range ids {
			if int(k) < len(need) {
				need[k] = true
			}
		}
	}
	out := new(SessionValuation)
	if !d.sessionValuationOn(is, L, knownAll, need, closeOf, out) {
		return nil
	}
	return out
}

// knownAll is an instant after every publication a Dataset holds.
var knownAll = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// sessionValuationOn is sessionValuation at session L (a session of the
// Dataset), from the data published by t, the closes from closeOf when
// it is not nil (SessionValuationOn).
func (d *Dataset) sessionValuationOn(is *Issuer, L Date, t time.Time, need []bool, closeOf func(string) Num, out *SessionValuation) bool {
	out.Points, out.Series, out.vars = out.Points[:0], out.Series[:0], out.vars[:0]
	if !L.Valid() || is == nil {
		return false
	}
	base := d.periodAt(is, L, t)
	if !base.Valid() || base >= L {
		return false
	}
	// The base points of the indicators needed (a few dozen at most) and
	// the classes priced (a handful): on the stack.
	var basesBuf [48]basePt
	var classesBuf [4]classIn
	sv := sessionIn{t: t, L: L, base: base, closeOf: closeOf}
	bases, classes, ok := d.sessionBases(is, &sv, need, basesBuf[:0], classesBuf[:0])
	if !ok {
		return false
	}
	sv.mc = marketCapInputsAt(is, L, classes)
	sv.marketCap = MarketCap(sv.mc)
	if d.countsCash(bases) {
		d.classesCash(is, t, L, classes)
	}
	sv.staticRet = d.StaticRetrievalAt(t)
	if sv.staticRet == 0 {
		sv.staticRet = StampOf(L.Time())
	}
	out.Session, out.Base = L, base
	if cap(out.Points) < len(bases) {
		out.Points, out.Series, out.vars = make([]RatioPoint, 0, len(bases)), make([]int, 0, len(bases)), make([]Num, 0, 6*len(bases))
	}
	for _, b := range bases {
		d.appendSessionPoint(out, &sv, is, b, classes)
	}
	return len(out.Points) > 0
}

// sessionIn is what one sessionValuation prices with, besides its base
// points and classes.
type sessionIn struct {
	t         time.Time
	L         Date             // the session priced
	closeOf   func(string) Num // a class's close at L by ticker; nil: closeOn
	base      Date             // the reference date of the period whose figures are used
	pub, ret  Stamp            // the publication of the newest report-dependent base point
	staticRet Stamp            // the retrieval date of the report-independent points
	// mc holds the share counts at L (net of treasury, Null without a
	// count) and the classes' closes; marketCap is MarketCap(mc).
	mc        MarketCapInputs
	marketCap Num
}

// basePt is a base point: the latest quarter-end valuation point of
// Issuer.Ratios[si] at the base, known at t.
type basePt struct {
	si int
	p  *RatioPoint
}

// classIn is one share class priced: its ticker (from its by-class
// points), security, close at the session, cash per share of the twelve
// months before it (Null until counted) and shares per traded unit.
type classIn struct {
	class  ShareClass
	ticker Sym
	sec    *Security
	price  Num
	cash   Num
	factor Num
}

// periodAt returns the newest period known at t on or before L: the
// newest reference date on or before L of the company's fundamental TTM
// points published by t (every fundamental TTM series has a point per
// period, so the first one is read); NoDate when none.
func (d *Dataset) periodAt(is *Issuer, L Date, t time.Time) Date {
	cat := d.Catalog()
	for si := range is.Ratios() {
		g := &is.Ratios()[si]
		if g.Frequency != FreqTTM || g.Class != "" || cat[g.Indicator].Kind != IndFundamental {
			continue
		}
		for i := len(g.Points) - 1; i >= 0; i-- {
			p := &g.Points[i]
			if p.ReferenceDate <= L && p.ReferenceDate > NoDate && !p.PublishDate.Time().After(t) {
				return p.ReferenceDate
			}
		}
		break
	}
	return NoDate
}

// sessionBases reads every TTM valuation series of is at the base
// (sv.base): it appends the base points of the indicators needed to
// bases (need as sessionValuation's), the classes priced to classes
// (their factors from the base points that hold one), sets sv's
// publication, and reports whether the valuation exists: a base point
// of some series, a report-dependent one among them, a class with a
// close at the session, and a price rule for every valuation series.
func (d *Dataset) sessionBases(is *Issuer, sv *sessionIn, need []bool, bases []basePt, classes []classIn) ([]basePt, []classIn, bool) {
	cat := d.Catalog()
	found, anyPrice := false, false
	for si := range is.Ratios() {
		g := &is.Ratios()[si]
		if g.Frequency != FreqTTM || cat[g.Indicator].Kind != IndValuation {
			continue
		}
		rule := d.rules.of[g.Indicator]
		if !rule.Priced() {
			return bases, classes, false
		}
		bp := knownPointOn(g, sv.base, sv.t)
		if bp == nil {
			continue
		}
		found = true
		if need == nil || int(g.Indicator) < len(need) && need[g.Indicator] {
			bases = append(bases, basePt{si, bp})
		}
		if !rule.Static() && bp.PublishDate > sv.pub {
			sv.pub, sv.ret = bp.PublishDate, bp.RetrievalDate
		}
		if bp.Class != ShareClassNone {
			var x *classIn
			classes, x = d.classAt(classes, bp.Class, d.RatioTicker(bp), sv)
			if f, ok := rule.stored(d.RatioVars(bp), pvFactor); ok {
				x.factor = f
			}
			anyPrice = anyPrice || x.price.Valid()
		}
	}
	return bases, classes, found && sv.pub != 0 && anyPrice
}

// knownPointOn returns the latest publication known at t of g's point of
// reference date ref, nil when none.
func knownPointOn(g *RatioSeries, ref Date, t time.Time) *RatioPoint {
	j := sort.Search(len(g.Points), func(j int) bool { return g.Points[j].ReferenceDate > ref })
	for j--; j >= 0 && g.Points[j].ReferenceDate == ref; j-- {
		if !g.Points[j].PublishDate.Time().After(t) {
			return &g.Points[j]
		}
	}
	return nil
}

// classAt returns classes with share class c (priced by ticker tk, its
// close the last on or before sv.L, or sv.closeOf's) and a pointer to
// it: appended when classes has none.
func (d *Dataset) classAt(classes []classIn, c ShareClass, tk Sym, sv *sessionIn) ([]classIn, *classIn) {
	for i := range classes {
		if classes[i].class == c {
			return classes, &classes[i]
		}
	}
	x := classIn{class: c, ticker: tk, price: Null, cash: Null, factor: Null}
	x.sec = securityOf(d, tk.String())
	if sv.closeOf != nil {
		x.price = sv.closeOf(tk.String())
	} else {
		x.price = closeOn(d, tk.String(), sv.L)
	}
	classes = append(classes, x)
	return classes, &classes[len(classes)-1]
}

// marketCapInputsAt returns the market capitalization inputs of is at
// session L: the share counts in effect at L (the derivation's sharesAt:
// of the counts of the newest date on or before L, the last in the
// Universe's order), net of treasury pro rata, and the closes of the CS,
// the most liquid preferred class and the UNIT (with its factor). It
// sorts classes by class.
func marketCapInputsAt(is *Issuer, L Date, classes []classIn) MarketCapInputs {
	mc := MarketCapInputs{CommonShares: Null, PreferredShares: Null, Shares: Null,
		CommonPrice: Null, PreferredPrice: Null, UnitPrice: Null, UnitFactor: Null}
	i := sort.Search(len(is.Shares), func(i int) bool { return is.Shares[i].Date <= L })
	if i < len(is.Shares) {
		for i+1 < len(is.Shares) && is.Shares[i+1].Date == is.Shares[i].Date {
			i++
		}
		sp := is.Shares[i]
		tot := float64(sp.Common + sp.Preferred)
		net := tot - float64(sp.Treasury)
		if tot > 0 && net > 0 {
			mc.Shares = Num(net)
			mc.CommonShares, mc.PreferredShares = Num(float64(sp.Common)*net/tot), Num(float64(sp.Preferred)*net/tot)
		}
	}
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
	return mc
}

// countsCash reports whether a base point's rule counts the cash of the
// twelve months (PriceRule.CountsCash).
func (d *Dataset) countsCash(bases []basePt) bool {
	for _, b := range bases {
		if d.rules.of[b.p.Indicator].CountsCash() {
			return true
		}
	}
	return false
}

// classesCash sets the cash per share of the twelve months before L of
// each class (cashAt, as known at t).
func (d *Dataset) classesCash(is *Issuer, t time.Time, L Date, classes []classIn) {
	var clsBuf [4]ShareClass
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

// appendSessionPoint appends to out the point at the session standing
// for base point b: its rule's value and variables at the session's
// inputs, published with the valuation (a report-independent point: on
// the session, retrieved with the snapshot). A point whose figures
// cannot be read is left out.
func (d *Dataset) appendSessionPoint(out *SessionValuation, sv *sessionIn, is *Issuer, b basePt, classes []classIn) {
	p := b.p
	rule := d.rules.of[p.Indicator]
	in, ok := d.sessionInputs(sv, is, p, rule, classes)
	if !ok {
		return
	}
	q := *p
	q.Value = validOrNull(rule.Value(&in))
	q.ReferenceDate = sv.L
	q.PublishDate, q.RetrievalDate = sv.pub, sv.ret
	if rule.Static() {
		q.PublishDate, q.RetrievalDate = StampOf(sv.L.Time()), sv.staticRet
	}
	at := len(out.vars)
	out.vars = rule.AppendVars(out.vars, &in)
	q.VarsAt, q.NVars = uint32(at), uint8(len(out.vars)-at)
	out.Points = append(out.Points, q)
	out.Series = append(out.Series, b.si)
}

// sessionInputs returns the inputs of base point p of rule at the
// session: the class's close, factor and cash and the company's share
// count and market capitalization at the session, the period's figures
// as p holds them (and, for a rule whose points do not hold it, the
// NET_DEBT of the same valuation); false when they cannot be read.
func (d *Dataset) sessionInputs(sv *sessionIn, is *Issuer, p *RatioPoint, rule PriceRule, classes []classIn) (PriceInputs, bool) {
	in := nullInputs
	in.Shares, in.MarketCap, in.Cap = sv.mc.Shares, sv.marketCap, &sv.mc
	if p.Class != ShareClassNone {
		for i := range classes {
			if x := &classes[i]; x.class == p.Class {
				in.Price, in.Factor, in.Cash = x.price, x.factor, x.cash
				break
			}
		}
	}
	if !rule.readFigures(d.RatioVars(p), &in) {
		return in, false
	}
	if rule.netDebtElsewhere() {
		// The NET_DEBT of the same valuation, as the derivation keeps it.
		nd, ok := d.netDebtAt(is, sv.base, sv.t)
		if !ok {
			return in, false
		}
		in.NetDebt = nd
	}
	return in, true
}

// netDebtAt returns the NET_DEBT of the company's TTM valuation at ref
// known at t: the variable of its point that holds it
// (valuationRules.netDebt).
func (d *Dataset) netDebtAt(is *Issuer, ref Date, t time.Time) (Num, bool) {
	k := d.rules.netDebt
	if k < 0 {
		return Null, false
	}
	g := is.RatioGroup(uint16(k), "", FreqTTM)
	if g == nil {
		return Null, false
	}
	p := knownPointOn(g, ref, t)
	if p == nil {
		return Null, false
	}
	return d.rules.of[k].stored(d.RatioVars(p), pvNetDebt)
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
	lo := sort.Search(len(is.CashActions()), func(i int) bool { return is.CashActions()[i].PriorExDate <= day })
	for _, e := range is.CashActions()[lo:] {
		if e.PriorExDate <= from {
			break
		}
		if !e.CurrentAt(t) || !cashCounted(e.Name.String()) {
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
			if a.PriorExDate <= from || a.PriorExDate > day || !matches(a.ISIN.String(), a.Ticker.String()) {
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

// DividendYieldAt returns a DIVIDEND_YIELD point p of is (a point of the
// CashToPrice rule; vs its variables: CASH_PER_SHARE_12M, PRICE) as a
// Dataset built from the data published by t derives it: the cash of the
// twelve months before its reference date counted from each event's
// version current at t and the share actions approved by t, at the
// point's price. The variables go to buf (2 long). A point without its
// two variables is returned as it is.
func (d *Dataset) DividendYieldAt(is *Issuer, p *RatioPoint, vs []Num, t time.Time, buf []Num) (Num, []Num) {
	rule := PriceRule{Form: CashToPrice}
	in := nullInputs
	if len(buf) < len(vs) || !rule.read(vs, &in) {
		return p.Value, vs
	}
	ticker := d.RatioTicker(p).String()
	sec := securityOf(d, ticker)
	d.cashAt(is, t, p.ReferenceDate, func(ShareClass) (*Security, string) { return sec, ticker },
		func(_ ShareClass, v Num) { in.Cash = v }, []ShareClass{p.Class})
	return rule.Value(&in), rule.AppendVars(buf[:0], &in)
}
