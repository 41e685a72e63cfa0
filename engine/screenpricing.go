package engine

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// What Screener.Priced reads of the Dataset, gathered once on its first
// call: for every repriced cell, the point it shows and that point's
// figures; the tickers whose quotes price them; the MARKET_CAP points
// the company cells share; the companies whose primary row depends on
// the volumes.

// screenPricing is what Priced needs of the Dataset, gathered once (on
// the first call) and immutable but for sessionCash's memo.
type screenPricing struct {
	d     *Dataset
	rules []PriceRule // per catalog indicator (the Dataset's)
	// assets are the assets whose quotes Priced reads: the rows (asset r
	// is row r), then the other priced tickers and Primary candidates.
	assets []*Asset
	comps  []compPricing
	mcs    []mcPricing
	cells  []priceCell
	ties   []primaryTie
	last   Date // the Dataset's last session
	// cash are the cells of the rules that count the cash of twelve
	// months (PriceRule.CountsCash), for sessionCash; cashMemo holds the
	// last session's column.
	cash     []cashCell
	cashMemo atomic.Pointer[sessionCash]
}

// cashCell is one repriced cell of a rule that counts the cash of twelve
// months: the class it divides, matched as the derivation matches it
// (by the security of the ticker the point was priced with, or a ticker
// of its rename chain).
type cashCell struct {
	is     *Issuer
	class  ShareClass
	sec    *Security
	ticker string
}

// sessionCash is the cash per share of every cashCell (same order) of
// the twelve months before session.
type sessionCash struct {
	session Date
	cash    []Num
}

// compPricing is one company of the rows.
type compPricing struct {
	classes []int32 // assets of the tickers its classes are priced with
}

// mcPricing is one MARKET_CAP point: its share counts and unit factor,
// and the assets of its prices.
type mcPricing struct {
	in      MarketCapInputs
	c, p, u int32 // assets of the CS, preferred and UNIT prices (-1: none)
	ref     Date
	freq    Frequency
	comp    int32
}

// priceCell is one repriced screener cell: the point row shows for
// indicator k, and the inputs its rule reads.
type priceCell struct {
	row   int32
	k     uint16
	freq  Frequency
	ref   Date
	comp  int32
	asset int32 // by-class rules: the ticker priced (-1: none)
	mc    int32 // company rules: the MARKET_CAP point (index into mcs)
	// in holds the figures the point keeps (PriceRule.read) and, for a
	// rule whose points do not hold it, the NET_DEBT of the same
	// valuation; Priced sets the price (by-class rules) or the market
	// capitalization (company rules).
	in PriceInputs
	// cash is the cell's index in screenPricing.cash (-1: its rule
	// counts no cash).
	cash int32
}

// primaryTie is a company whose most liquid row depends on the volumes:
// its candidates (assets, in the order of the build) tie on
// LiquidityRank.
type primaryTie struct {
	cands []int32 // assets
	rows  []int32 // the company's rows
}

// pricing returns the Screener's screenPricing, built on first use.
func (s *Screener) pricing() *screenPricing {
	return s.price.get(func() *screenPricing { return newScreenPricing(s) })
}

// lazy holds a value built once, on first use, by the first caller of
// get; later callers wait for it and share it.
type lazy[T any] struct {
	once sync.Once
	v    *T
}

// get returns the value, calling build the first time.
func (l *lazy[T]) get(build func() *T) *T {
	l.once.Do(func() { l.v = build() })
	return l.v
}

// pricingBuilder gathers a screenPricing: it numbers the assets,
// companies and MARKET_CAP points the cells read.
type pricingBuilder struct {
	p     *screenPricing
	d     *Dataset
	rules *valuationRules
	idx   map[*Asset]int32  // index in p.assets
	comps map[*Issuer]int32 // index in p.comps
	mcs   map[mcKey]int32   // index in p.mcs, -1: cannot be repriced
}

// mcKey is one company's MARKET_CAP point.
type mcKey struct {
	comp int32
	ref  Date
	freq Frequency
}

func newScreenPricing(s *Screener) *screenPricing {
	p := &screenPricing{last: NoDate}
	d := s.ds
	if d == nil {
		return p
	}
	p.d, p.last, p.rules = d, d.lastSession, d.rules.of
	b := &pricingBuilder{p: p, d: d, rules: &d.rules, idx: make(map[*Asset]int32, s.Len()),
		comps: map[*Issuer]int32{}, mcs: map[mcKey]int32{}}
	p.assets = append(p.assets, s.Assets...)
	for r, a := range s.Assets {
		b.idx[a] = int32(r)
	}
	for r, a := range s.Assets {
		comp := b.compOf(a.Issuer)
		b.addCells(int32(r), a, comp)
	}
	b.addTies(s)
	return p
}

// assetOf returns the index in p.assets of ticker's asset, adding it;
// -1 when the Dataset has no such ticker.
func (b *pricingBuilder) assetOf(ticker string) int32 {
	a, ok := b.d.Asset(ticker)
	if !ok {
		return -1
	}
	if i, ok := b.idx[a]; ok {
		return i
	}
	i := int32(len(b.p.assets))
	b.idx[a] = i
	b.p.assets = append(b.p.assets, a)
	return i
}

// compOf returns the index in p.comps of company is, adding it with the
// tickers its classes are priced with (the latest by-class points').
func (b *pricingBuilder) compOf(is *Issuer) int32 {
	if comp, ok := b.comps[is]; ok {
		return comp
	}
	comp := int32(len(b.p.comps))
	b.comps[is] = comp
	var cp compPricing
	seen := map[string]bool{}
	for _, k := range b.rules.byClass {
		for ci := range is.Ratios() {
			g := &is.Ratios()[ci]
			if int(g.Indicator) != k || g.Class == "" || seen[g.Class] || len(g.Points) == 0 {
				continue
			}
			seen[g.Class] = true
			if i := b.assetOf(b.d.RatioTicker(&g.Points[len(g.Points)-1]).String()); i >= 0 {
				cp.classes = append(cp.classes, i)
			}
		}
	}
	b.p.comps = append(b.p.comps, cp)
	return comp
}

// addCells adds the cells of row (asset a of company comp) that Priced
// reprices: one per price-derived indicator whose point the row shows
// can be priced.
func (b *pricingBuilder) addCells(row int32, a *Asset, comp int32) {
	for k, rule := range b.p.rules {
		if !rule.Priced() {
			continue
		}
		class := ""
		if rule.ByClass() {
			class = a.StockType
		}
		pt := latestRatio(a.Issuer, uint16(k), class)
		if pt == nil {
			continue
		}
		c, ok := b.cell(row, comp, uint16(k), a.Issuer, pt)
		if !ok {
			continue
		}
		if rule.CountsCash() {
			c.cash = int32(len(b.p.cash))
			t := b.d.RatioTicker(pt).String()
			b.p.cash = append(b.p.cash, cashCell{is: a.Issuer, class: pt.Class, sec: securityOf(b.d, t), ticker: t})
		}
		b.p.cells = append(b.p.cells, c)
	}
}

// cell returns the cell of row for indicator k, whose point the row
// shows is pt; false when pt cannot be repriced (its variables are not
// its rule's, or a company rule has no MARKET_CAP or NET_DEBT point of
// the same valuation).
func (b *pricingBuilder) cell(row, comp int32, k uint16, is *Issuer, pt *RatioPoint) (priceCell, bool) {
	rule := b.rules.of[k]
	c := priceCell{row: row, k: k, freq: pt.Frequency, ref: pt.ReferenceDate, comp: comp, asset: -1, mc: -1, in: nullInputs, cash: -1}
	vs := b.vars(pt)
	if rule.ByClass() {
		if !rule.read(vs, &c.in) {
			return c, false
		}
		c.asset = b.assetOf(b.d.RatioTicker(pt).String())
		return c, true
	}
	if c.mc = b.mcOf(is, comp, pt.ReferenceDate, pt.Frequency); c.mc < 0 || !rule.read(vs, &c.in) {
		return c, false
	}
	if rule.netDebtElsewhere() {
		nd, ok := b.netDebtOn(is, pt.ReferenceDate, pt.Frequency)
		if !ok {
			return c, false
		}
		c.in.NetDebt = nd
	}
	return c, true
}

// vars returns the variables of pt, nil when pt is nil (no point).
func (b *pricingBuilder) vars(pt *RatioPoint) []Num {
	if pt == nil {
		return nil
	}
	return b.d.u.Derived.Vars(pt)
}

// netDebtOn returns the NET_DEBT of the company's valuation at (ref,
// freq): the variable of its point that holds it (valuationRules.netDebt).
func (b *pricingBuilder) netDebtOn(is *Issuer, ref Date, freq Frequency) (Num, bool) {
	k := b.rules.netDebt
	if k < 0 {
		return Null, false
	}
	pt := pointOn(is.RatioGroup(uint16(k), "", freq.String()), ref)
	return b.rules.of[k].stored(b.vars(pt), pvNetDebt)
}

// mcOf returns the index in p.mcs of the MARKET_CAP point of the company
// at (ref, freq), -1 when it cannot be repriced.
func (b *pricingBuilder) mcOf(is *Issuer, comp int32, ref Date, freq Frequency) int32 {
	key := mcKey{comp, ref, freq}
	if i, ok := b.mcs[key]; ok {
		return i
	}
	b.mcs[key] = -1
	m, ok := b.marketCapPoint(is, comp, ref, freq)
	if !ok {
		return -1
	}
	i := int32(len(b.p.mcs))
	b.mcs[key] = i
	b.p.mcs = append(b.p.mcs, m)
	return i
}

// marketCapPoint returns the MARKET_CAP point of the company at (ref,
// freq): its share counts and unit factor, the total share count and
// the assets of its prices (Priced sets the prices); false when it has
// none, or when it needs the total (the unit case) and no by-class point
// gives it.
func (b *pricingBuilder) marketCapPoint(is *Issuer, comp int32, ref Date, freq Frequency) (mcPricing, bool) {
	m := mcPricing{ref: ref, freq: freq, comp: comp, c: -1, p: -1, u: -1}
	k := b.rules.marketCap
	if k < 0 {
		return m, false
	}
	pt := pointOn(is.RatioGroup(uint16(k), "", freq.String()), ref)
	in := PriceInputs{Cap: &m.in}
	if !b.rules.of[k].read(b.vars(pt), &in) {
		return m, false
	}
	m.in.Shares = Null
	b.mcClasses(is, &m)
	return m, !m.in.CommonShares.Valid() || m.in.Shares.Valid()
}

// mcClasses sets the assets of m's prices (the tickers of the company's
// CS, most liquid preferred class and UNIT) and its total share count
// from the company's by-class points of the same valuation.
func (b *pricingBuilder) mcClasses(is *Issuer, m *mcPricing) {
	var pref *Security
	freq := m.freq.String()
	for _, k := range b.rules.byClass {
		for ci := range is.Ratios() {
			g := &is.Ratios()[ci]
			if int(g.Indicator) != k || g.Frequency != freq || g.Class == "" {
				continue
			}
			cp := pointOn(g, m.ref)
			if cp == nil {
				continue
			}
			if !m.in.Shares.Valid() {
				m.in.Shares, _ = b.rules.of[k].stored(b.vars(cp), pvShares)
			}
			t := b.d.RatioTicker(cp).String()
			switch g.Class {
			case ClassCS:
				m.c = b.assetOf(t)
			case ClassUnit:
				m.u = b.assetOf(t)
			case ClassPS, ClassPSA, ClassPSB, ClassPSC, ClassPSD, ClassPSE:
				if sec := securityOf(b.d, t); sec != nil && (pref == nil || moreLiquidSecurity(sec, pref) < 0) {
					pref, m.p = sec, b.assetOf(t)
				}
			}
		}
	}
}

// allVersions is an instant after every publication: the cash versions
// current then are the current ones (CashEvent.Current) and every share
// action is known, as the derivation counts them.
var allVersions = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// sessionCash returns the cash per share of every cashCell of the twelve
// months before session (Dataset.cashAt: the derivation's count, of the
// current version of each event, divided by the share actions between it
// and the session), computed once per session: a live session's cut-offs
// share it.
func (p *screenPricing) sessionCash(session Date) []Num {
	if m := p.cashMemo.Load(); m != nil && m.session == session {
		return m.cash
	}
	out := make([]Num, len(p.cash))
	for i := range p.cash {
		x := &p.cash[i]
		p.d.cashAt(x.is, allVersions, session, func(ShareClass) (*Security, string) { return x.sec, x.ticker },
			func(_ ShareClass, v Num) { out[i] = v }, []ShareClass{x.class})
	}
	p.cashMemo.Store(&sessionCash{session: session, cash: out})
	return out
}

// addTies adds the companies of the rows whose first candidates for the
// primary row tie on LiquidityRank.
func (b *pricingBuilder) addTies(s *Screener) {
	done := map[*Issuer]bool{}
	for _, a := range s.Assets {
		is := a.Issuer
		if done[is] {
			continue
		}
		done[is] = true
		if t, ok := b.tieOf(s, is); ok {
			b.p.ties = append(b.p.ties, t)
		}
	}
}

// tieOf returns the tie of company is: its candidates of the best
// LiquidityRank and its rows; false when one candidate ranks first.
func (b *pricingBuilder) tieOf(s *Screener, is *Issuer) (primaryTie, bool) {
	var t primaryTie
	var cands []*Asset
	for _, o := range is.Assets {
		if o.Latest.Valid() && ScreenerClass(o.StockType) {
			cands = append(cands, o)
		}
	}
	if len(cands) < 2 || rankKey(cands[0]) != rankKey(cands[1]) {
		return t, false
	}
	for _, o := range cands {
		if rankKey(o) == rankKey(cands[0]) {
			t.cands = append(t.cands, b.assetOf(o.Ticker))
		}
	}
	for r, o := range s.Assets {
		if o.Issuer == is {
			t.rows = append(t.rows, int32(r))
		}
	}
	return t, true
}

// rankKey is LiquidityRank with 0 (unknown) last.
func rankKey(a *Asset) int {
	if a.LiquidityRank <= 0 {
		return int(^uint(0) >> 1)
	}
	return a.LiquidityRank
}

// moreLiquidSecurity orders securities as the ratio derivation picks the
// ticker of a class: lowest non-zero LiquidityRank, then ticker.
func moreLiquidSecurity(a, b *Security) int {
	ra, rb := a.LiquidityRank, b.LiquidityRank
	if ra <= 0 {
		ra = int(^uint(0) >> 1)
	}
	if rb <= 0 {
		rb = int(^uint(0) >> 1)
	}
	return cmp.Or(cmp.Compare(ra, rb), strings.Compare(a.Ticker, b.Ticker))
}

// securityOf returns the security of ticker: its asset's, or a former
// ticker's own.
func securityOf(d *Dataset, ticker string) *Security {
	if a, ok := d.Asset(ticker); ok && a.Ticker == ticker {
		return a.Security
	}
	for i := range d.u.Securities {
		if d.u.Securities[i].Ticker == ticker {
			return &d.u.Securities[i]
		}
	}
	return nil
}

// pointOn returns the latest publication of g's point of reference date
// ref, nil when none.
func pointOn(g *RatioSeries, ref Date) *RatioPoint {
	if g == nil {
		return nil
	}
	i, _ := slices.BinarySearchFunc(g.Points, ref+1, func(p RatioPoint, d Date) int { return cmp.Compare(p.ReferenceDate, d) })
	if i == 0 || g.Points[i-1].ReferenceDate != ref {
		return nil
	}
	return &g.Points[i-1]
}
