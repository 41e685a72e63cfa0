package ratios

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pregao/pregao/engine"
)

// companyWork gathers one company's inputs.
type companyWork struct {
	id      string
	reports []*engine.Report
	classes []*classSec // sorted by class
	shares  []engine.SharesPoint
}

// Derive computes the indicator catalog and every ratio point of u (see
// the package documentation for the rules). It reads u and does not modify
// it; the result shares no memory with u except strings. Points are sorted
// by company, indicator, class, frequency, reference date and publish date
// (funds: fund, indicator, frequency, reference date, publish date).
// It fails on a report without a reference date or with a form other than
// DFP or ITR.
func Derive(u *engine.Universe) (engine.Derived, error) {
	out := engine.Derived{Catalog: Catalog()}
	m := newMarket(u)
	works, ids := companyWorks(u)
	setClasses(u, m, works, ids)
	results, err := deriveCompanies(works, ids, m, u.Meta.AsOf)
	if err != nil {
		return engine.Derived{}, err
	}
	gatherPoints(&out, results)
	deriveFunds(&out, u, m)
	// Generation order is nearly the canonical one (companies by id,
	// buckets by indicator, class and frequency): usually only checked.
	engine.SortRatioPoints(out.Ratios)
	engine.SortFundRatioPoints(out.FundRatios)
	return out, nil
}

// companyWorks returns the work of every company of u, by id, and the
// ids sorted: each company's reports known on the as-of day and its share
// counts.
func companyWorks(u *engine.Universe) (map[string]*companyWork, []string) {
	works := map[string]*companyWork{}
	ids := make([]string, 0, len(u.Companies))
	for i := range u.Companies {
		id := u.Companies[i].ID
		if _, dup := works[id]; !dup {
			works[id] = &companyWork{id: id}
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	asOfDay := engine.NoDate
	if !u.Meta.AsOf.IsZero() {
		asOfDay = engine.DateOf(u.Meta.AsOf)
	}
	for i := range u.Reports {
		if !u.Reports[i].KnownOn(asOfDay) {
			continue // a period after the as-of day: never a current value
		}
		if w := works[u.Reports[i].CompanyID]; w != nil {
			w.reports = append(w.reports, &u.Reports[i])
		}
	}
	for _, s := range u.Shares {
		if w := works[s.CompanyID]; w != nil {
			w.shares = append(w.shares, s)
		}
	}
	return works, ids
}

// setClasses sorts each company's share counts and sets the classes it
// is priced by: per class, the most liquid of its current securities
// (a former ticker's security is its current ticker's, as Build joins
// them into one asset, so a class is priced by a current ticker, with
// the history and the cash of its whole rename chain), with the cash
// actions and splits matched to it.
func setClasses(u *engine.Universe, m *market, works map[string]*companyWork, ids []string) {
	cash := map[string][]*engine.CashAction{}
	for i := range u.CashActions {
		a := &u.CashActions[i]
		cash[a.CompanyID.String()] = append(cash[a.CompanyID.String()], a)
	}
	splits := map[string][]*engine.ShareAction{}
	for i := range u.ShareActions {
		a := &u.ShareActions[i]
		if a.Factor.Valid() && a.Factor > 0 && len(a.Legs) == 0 {
			splits[a.CompanyID] = append(splits[a.CompanyID], a)
		}
	}
	former := make(map[string]bool, len(u.Renames))
	for _, r := range u.Renames {
		former[r.From] = true
	}
	secs := map[string][]*engine.Security{}
	for i := range u.Securities {
		s := &u.Securities[i]
		if pricedClass(s.StockType) && !former[s.Ticker] {
			secs[s.CompanyID] = append(secs[s.CompanyID], s)
		}
	}
	for _, id := range ids {
		w := works[id]
		slices.SortStableFunc(w.shares, func(a, b engine.SharesPoint) int { return cmp.Compare(a.Date, b.Date) })
		w.setClasses(m, secs[id], currentCash(cash[id]), splits[id])
	}
}

// setClasses sets w's classes from the company's priced securities, its
// current cash actions and its splits.
func (w *companyWork) setClasses(m *market, secs []*engine.Security, current []*engine.CashAction, splits []*engine.ShareAction) {
	best := map[string]*engine.Security{}
	for _, s := range secs {
		if b := best[s.StockType]; b == nil || moreLiquid(s, b) < 0 {
			best[s.StockType] = s
		}
	}
	for class, s := range best {
		cs := &classSec{class: class, sec: s, factor: 1, aliases: m.aliases(s.Ticker)}
		if class == engine.ClassUnit {
			cs.factor = s.UnitFactor
			if !cs.factor.Valid() || cs.factor <= 0 {
				cs.factor = engine.Null
			}
		}
		for _, a := range current {
			if cs.matches(a.ISIN.String(), a.Ticker.String()) {
				cs.cash = append(cs.cash, a)
			}
		}
		for _, a := range splits {
			if cs.matches(a.ISIN, a.Ticker) {
				cs.splits = append(cs.splits, a)
			}
		}
		w.classes = append(w.classes, cs)
	}
	slices.SortFunc(w.classes, func(a, b *classSec) int { return strings.Compare(a.class, b.class) })
}

// deriveCompanies derives every company of ids over GOMAXPROCS
// goroutines and returns their emitters (nil for a company without
// reports), finished; the error is that of the first company in ids
// that failed.
func deriveCompanies(works map[string]*companyWork, ids []string, m *market, staticRet time.Time) ([]*emitter, error) {
	results := make([]*emitter, len(ids))
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = deriveCompany(works[ids[i]], m, staticRet)
			}
		}()
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range ids {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if results[i] != nil {
			results[i].finish()
		}
	}
	return results, nil
}

// gatherPoints moves the emitters' points and variables to out, in
// generation order, releasing each emitter's buckets.
func gatherPoints(out *engine.Derived, results []*emitter) {
	total, nvars := 0, 0
	for _, e := range results {
		if e != nil {
			total += e.points()
			nvars += len(e.vars)
		}
	}
	out.Ratios = make([]engine.RatioPoint, 0, total)
	out.RatioVars = make([]engine.Num, 0, nvars)
	for i, e := range results {
		if e == nil {
			continue
		}
		for _, b := range e.buckets {
			for j := range b {
				p := &b[j]
				out.AddVars(p, e.vars[p.VarsAt:p.VarsAt+uint32(p.NVars)])
			}
			out.Ratios = append(out.Ratios, b...)
		}
		results[i] = nil // let the buckets go
	}
}

// noVars is the zero variables a point starts from (no indicator has
// more).
var noVars [8]engine.Num

// emitter appends points of one company; their variables go to vars
// (VarsAt indexes it) until Derive gathers every company's.
// Points go to buckets keyed by (indicator, class, frequency) so that the
// generation order (reference date, then publication) is the output order
// without sorting.
type emitter struct {
	company engine.Sym
	nClass  int // classes of the company + 1 (company level)
	hint    int // initial capacity of a bucket
	buckets [][]engine.RatioPoint
	vars    []engine.Num
	ctx     evalCtx
	lastT   string // the ticker last interned, and its Sym
	lastSym engine.Sym
}

// freqIndex orders frequencies as strings.Compare does.
func freqIndex(f string) int {
	switch f {
	case engine.FreqAnnual:
		return 0
	case engine.FreqQuarterly:
		return 1
	case engine.FreqTTM:
		return 2
	}
	return 3
}

func newEmitter(company string, classes int) *emitter {
	e := &emitter{company: engine.Intern(company), nClass: classes + 1}
	e.buckets = make([][]engine.RatioPoint, len(defs)*e.nClass*4)
	return e
}

// finish sorts the buckets that generation left out of order (reports
// dated after the last session put the last-session points before them).
func (e *emitter) finish() {
	for _, b := range e.buckets {
		for i := 1; i < len(b); i++ {
			if b[i].ReferenceDate < b[i-1].ReferenceDate {
				slices.SortStableFunc(b, byRefPublish)
				break
			}
		}
	}
}

// points returns the number of points of e.
func (e *emitter) points() int {
	n := 0
	for _, b := range e.buckets {
		n += len(b)
	}
	return n
}

func byRefPublish(a, b engine.RatioPoint) int {
	return cmp.Or(cmp.Compare(a.ReferenceDate, b.ReferenceDate), a.PublishDate.Compare(b.PublishDate))
}

// evalCtx is what an indicator's rule reads.
type evalCtx struct {
	cur, prev vals
	shares    engine.Num
	factor    engine.Num
	price     engine.Num
	cash      engine.Num
	mc        engine.MarketCapInputs
	marketCap engine.Num
}

// emit evaluates indicator di for class index ci (-1: company level).
func (e *emitter) emit(di, ci int, class, ticker, freq string, ref engine.Date, pub, ret time.Time) {
	d := &defs[di]
	k := len(d.Variables)
	at := len(e.vars)
	e.vars = append(e.vars, noVars[:k]...)
	v := e.vars[at : at+k : at+k]
	val := d.eval(&e.ctx, v)
	b := &e.buckets[(di*e.nClass+ci+1)*4+freqIndex(freq)]
	if *b == nil {
		c := e.hint
		if freq == engine.FreqAnnual {
			c = c/4 + 2
		}
		*b = make([]engine.RatioPoint, 0, c)
	}
	fc, _ := engine.ParseFrequency(freq)   // freq is always a Freq* constant
	cc, _ := engine.ParseShareClass(class) // "" or a priced Class* constant
	*b = append(*b, engine.RatioPoint{
		CompanyID: e.company, Indicator: uint16(di), Class: cc, Ticker: e.ticker(ticker), Frequency: fc,
		ReferenceDate: ref, PublishDate: engine.StampOf(pub), RetrievalDate: engine.StampOf(ret), Value: val,
		VarsAt: uint32(at), NVars: uint8(k), // in e.vars until Derive moves them to Derived.RatioVars
	})
}

// ticker interns t, remembering the last one (points come class by
// class).
func (e *emitter) ticker(t string) engine.Sym {
	if t != e.lastT { // the zero state ("", 0) is already right
		e.lastT, e.lastSym = t, engine.Intern(t)
	}
	return e.lastSym
}

func (e *emitter) setClass(pc *priceCtx, i int, cs *classSec) {
	e.ctx.shares, e.ctx.factor = engine.Null, engine.Null
	e.ctx.price, e.ctx.cash = engine.Null, engine.Null
	if pc != nil {
		e.ctx.shares, e.ctx.price, e.ctx.cash = pc.shares, pc.prices[i], pc.cash[i]
	}
	if cs != nil {
		e.ctx.factor = cs.factor
	}
}

// emitValuation emits the valuation points of frequency f at ref.
// withStatic also emits the report-independent ones (published at ref).
func (e *emitter) emitValuation(w *companyWork, pc *priceCtx, f string, ref engine.Date, pub, ret time.Time, withStatic bool, staticRet time.Time) {
	spub := ref.Time()
	sret := staticRet
	if sret.IsZero() {
		sret = spub
	}
	e.ctx.mc, e.ctx.marketCap = pc.mc, pc.marketCap
	for di := range defs {
		d := &defs[di]
		if (d.grp != grpValClass && d.grp != grpValCompany) || !slices.Contains(d.Frequencies, f) {
			continue
		}
		if d.static && !withStatic {
			continue
		}
		p, r := pub, ret
		if d.static {
			p, r = spub, sret
		}
		if d.grp == grpValCompany {
			e.emit(di, -1, "", "", f, ref, p, r)
			continue
		}
		for i, cs := range w.classes {
			e.setClass(pc, i, cs)
			e.emit(di, i, cs.class, cs.sec.Ticker, f, ref, p, r)
		}
	}
}

var valuationFreqs = map[string]bool{engine.FreqAnnual: true, engine.FreqTTM: true}

// deriveCompany derives the ratio points of one company: for every
// month with a period and every frequency, a point per publication state
// of the filings each indicator uses, and the valuation at the last
// session. It returns nil for a company without reports.
func deriveCompany(w *companyWork, m *market, staticRet time.Time) (*emitter, error) {
	if len(w.reports) == 0 {
		return nil, nil
	}
	tl, err := buildTimeline(w.reports)
	if err != nil {
		return nil, err
	}
	e := newEmitter(w.id, len(w.classes))
	e.hint = len(tl.mis) + len(tl.mis)/8 + 2
	c := &companyDeriver{w: w, m: m, tl: tl, e: e, staticRet: staticRet}
	prices := priceCache{} // not in c: a local map stays off the heap
	for _, mi := range tl.mis {
		for _, f := range fundFreqs {
			c.period(mi, f, prices)
		}
	}
	c.lastSession(prices)
	return e, nil
}

// companyDeriver is one deriveCompany call's state.
type companyDeriver struct {
	w         *companyWork
	m         *market
	tl        *timeline
	e         *emitter
	staticRet time.Time
	uc, up    usage       // the filings of the period, of the year-ago period
	all       []time.Time // the publication states of a period
}

// priceCache holds a company's priceCtx by date.
type priceCache map[engine.Date]*priceCtx

// priceAt returns the company's priceCtx at d, computed once per date
// (kept in prices).
func (c *companyDeriver) priceAt(prices priceCache, d engine.Date) *priceCtx {
	pc := prices[d]
	if pc == nil {
		pc = c.w.priceAt(c.m, d)
		prices[d] = pc
	}
	return pc
}

// valued reports whether the company has a priced class (else it gets
// no valuation and no per-class points).
func (c *companyDeriver) valued() bool { return len(c.w.classes) > 0 }

// period emits the points of the period of month mi and frequency f: at
// each publication state of the filings it uses, from the first
// publication of its own filing.
func (c *companyDeriver) period(mi int32, f string, prices priceCache) {
	tl := c.tl
	prim := tl.primary(mi, f)
	if prim == nil || len(prim.states) == 0 {
		return
	}
	first := prim.states[0].t
	c.uc.reset(true)
	c.up.reset(true)
	tl.current(mi, f, forever, &c.uc)
	tl.flows(mi-12, f, forever, &c.up)
	c.all = times(c.all, append(c.uc.periods, c.up.periods...), first)
	var pc *priceCtx
	if c.valued() {
		pc = c.priceAt(prices, prim.ref)
	}
	staticDone := false
	for _, T := range c.all {
		if c.state(mi, f, prim.ref, pc, T, !staticDone) {
			staticDone = true
		}
	}
}

// state emits the points of the period (mi, f) of reference date ref
// that are new at publication state T: one point per publication state
// actually used, new at T only when its newest input was published at T.
// withStatic also emits the report-independent valuation points; it
// reports whether it emitted valuation points.
func (c *companyDeriver) state(mi int32, f string, ref engine.Date, pc *priceCtx, T time.Time, withStatic bool) bool {
	e, uc, up := c.e, &c.uc, &c.up
	uc.reset(false)
	up.reset(false)
	e.ctx.cur = c.tl.current(mi, f, T, uc)
	e.ctx.prev = c.tl.flows(mi-12, f, T, up)
	both := *uc
	both.merge(up)
	curNew := uc.any && uc.pub.Equal(T)
	bothNew := both.any && both.pub.Equal(T)
	for di := range defs {
		d := &defs[di]
		switch {
		case d.grp == grpFund && d.growth:
			if bothNew {
				e.emit(di, -1, "", "", f, ref, both.pub, both.ret)
			}
		case d.grp == grpFund && curNew:
			e.emit(di, -1, "", "", f, ref, uc.pub, uc.ret)
		case d.grp == grpFundClass && curNew:
			for i, cs := range c.w.classes {
				e.setClass(pc, i, cs)
				e.emit(di, i, cs.class, cs.sec.Ticker, f, ref, uc.pub, uc.ret)
			}
		}
	}
	if !c.valued() || !valuationFreqs[f] || !curNew {
		return false
	}
	e.emitValuation(c.w, pc, f, ref, uc.pub, uc.ret, withStatic, c.staticRet)
	return true
}

// lastSession emits the latest valuation: the newest TTM figures at the
// last session, when the newest TTM period on or before it is dated
// before it and a class has a close then.
func (c *companyDeriver) lastSession(prices priceCache) {
	tl, m := c.tl, c.m
	if !c.valued() || len(tl.mis) == 0 || !m.last.Valid() {
		return
	}
	for k := len(tl.mis) - 1; k >= 0; k-- {
		mi := tl.mis[k]
		prim := tl.primary(mi, engine.FreqTTM)
		if prim == nil || prim.ref > m.last {
			continue
		}
		if prim.ref < m.last {
			if pc := c.priceAt(prices, m.last); pc.anyPrice {
				c.uc.reset(false)
				c.e.ctx.cur = tl.current(mi, engine.FreqTTM, forever, &c.uc)
				c.e.emitValuation(c.w, pc, engine.FreqTTM, m.last, c.uc.pub, c.uc.ret, true, c.staticRet)
			}
		}
		return
	}
}

// deriveFunds computes the listed-fund points: one per indicator and
// report version of the funds of u.Companies, into out.FundRatios (the
// points of one report share its sources: one list of out.FundSources).
func deriveFunds(out *engine.Derived, u *engine.Universe, m *market) {
	known := make(map[string]bool, len(u.Companies))
	for i := range u.Companies {
		known[u.Companies[i].ID] = true
	}
	byFund := map[string][]*engine.FundReport{}
	var funds []string
	for i := range u.FundReports {
		r := &u.FundReports[i]
		if !known[r.FundID] {
			continue
		}
		if _, ok := byFund[r.FundID]; !ok {
			funds = append(funds, r.FundID)
		}
		byFund[r.FundID] = append(byFund[r.FundID], r)
	}
	slices.Sort(funds)
	ticker := map[string]*engine.Security{}
	for i := range u.Securities {
		s := &u.Securities[i]
		if _, ok := byFund[s.CompanyID]; !ok {
			continue
		}
		b := ticker[s.CompanyID]
		// Prefer FUND_UNIT, then the most liquid.
		if b == nil || (s.StockType == engine.ClassFundUnit) != (b.StockType == engine.ClassFundUnit) && s.StockType == engine.ClassFundUnit ||
			(s.StockType == engine.ClassFundUnit) == (b.StockType == engine.ClassFundUnit) && moreLiquid(s, b) < 0 {
			ticker[s.CompanyID] = s
		}
	}
	var first uint16
	for i := range defs {
		if defs[i].grp == grpListedFund {
			first = uint16(i)
			break
		}
	}
	for _, id := range funds {
		sym := engine.Intern(id)
		rs := byFund[id]
		slices.SortStableFunc(rs, func(a, b *engine.FundReport) int {
			return cmp.Or(cmp.Compare(a.ReferenceDate, b.ReferenceDate), a.PublishDate.Compare(b.PublishDate), cmp.Compare(a.Version, b.Version))
		})
		prices := make([]engine.Num, len(rs))
		srcs := make([]uint32, len(rs)) // each report's sources (0: not added yet)
		for i, r := range rs {
			prices[i] = engine.Null
			if s := ticker[id]; s != nil && r.ReferenceDate.Valid() {
				y, mo, _ := r.ReferenceDate.Time().Date()
				from := engine.MakeDate(y, mo, 1)
				to := engine.MakeDate(y, mo+1, 1) - 1
				prices[i] = m.closeIn(s.Ticker, from, to, 0)
			}
		}
		for di := first; int(di) < len(defs); di++ {
			for i, r := range rs {
				var v engine.Num
				switch defs[di].ID {
				case "P_NAV":
					v = engine.Div(prices[i], r.NAVPerShare)
				case "DIVIDEND_YIELD":
					v = r.DividendYield
				case "NAV_PER_SHARE":
					v = r.NAVPerShare
				case "NET_ASSETS":
					v = r.NetAssets
				case "INVESTORS":
					v = r.Investors
				case "SHARES_OUTSTANDING":
					v = r.SharesOut
				case "MONTHLY_RETURN":
					v = r.MonthlyReturn
				default:
					panic(fmt.Sprintf("BUG: fund indicator %s has no rule", defs[di].ID))
				}
				p := engine.FundRatioPoint{
					FundID: sym, Indicator: di, Frequency: engine.FrequencyMonthly, ReferenceDate: r.ReferenceDate,
					PublishDate: engine.StampOf(r.PublishDate), RetrievalDate: engine.StampOf(r.RetrievalDate), Value: clean(v),
				}
				if srcs[i] == 0 {
					out.AddFundSources(&p, r.Sources)
					srcs[i] = p.Sources
				}
				p.Sources = srcs[i]
				out.FundRatios = append(out.FundRatios, p)
			}
		}
	}
}
