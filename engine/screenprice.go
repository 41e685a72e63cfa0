package engine

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// ScreenerPrices is the screener at one quote vector: the columns that
// depend on the price, row for row with the Screener it came from (rows,
// Assets, Issuers and every other column are the Screener's own).
// Immutable once returned; columns not derived from the price are the
// Screener's slices themselves, shared.
type ScreenerPrices struct {
	// Session is the session the values are priced at: the newest quote's
	// date, or the Dataset's last session when no quote is newer.
	Session Date
	// Close and Volume are each row's quote: the last price and the BRL
	// traded in its session (Null when the row has no quote).
	Close  []Num
	Volume []Num
	// Primary marks each company's most liquid row, as Screener.Primary
	// but with the quotes' volumes breaking ties of LiquidityRank.
	Primary []bool
	// Ratios[k] is the column of Catalog()[k]: repriced for a
	// price-derived indicator (Screener.PriceDerived), else
	// Screener.Ratios[k] itself.
	Ratios [][]Num
	// ByVolume lists the rows by Volume descending (missing last), then
	// ticker.
	ByVolume []int32
}

// Prices returns the build-time columns as ScreenerPrices (the last
// session's closes and volumes, the values as derived): every slice is
// the Screener's own.
func (s *Screener) Prices() *ScreenerPrices {
	session := NoDate
	if s.ds != nil {
		session = s.ds.lastSession
	}
	return &ScreenerPrices{Session: session, Close: s.Close, Volume: s.Volume, Primary: s.Primary, Ratios: s.Ratios, ByVolume: s.ByVolume}
}

// PriceDerived reports whether catalog indicator k's screener column is
// repriced by Priced (see the package documentation, "Screener
// repricing").
func (s *Screener) PriceDerived(k int) bool {
	p := s.pricing()
	return k >= 0 && k < len(p.rules) && p.rules[k] != ruleNone
}

// Priced returns the screener at the quotes quote gives: each row's close
// and session volume, and every price-derived indicator recomputed from
// the point the row shows (Ratios) with that point's share counts,
// twelve-month figures and cash per share, priced at the quotes of the
// tickers the point was priced with, exactly as the ratio derivation
// computes a point at that close (see the package documentation,
// "Screener repricing"). quote is called once per asset Priced reads
// (the rows' and the priced tickers'), from the calling goroutine; it
// returns the asset's quote as of the cut-off (View.QuoteAt), or a zero
// Quote for none. Meant to run once per cut-off: it allocates the
// repriced columns and reads no quote twice. Safe for concurrent use.
func (s *Screener) Priced(quote func(a *Asset) Quote) *ScreenerPrices {
	p := s.pricing()
	n := s.Len()
	qs := make([]Quote, len(p.assets))
	session := p.last
	for i, a := range p.assets {
		q := quote(a)
		if !q.Valid() {
			q = Quote{Date: NoDate, Close: Null, Volume: Null}
		} else if q.Date > session {
			session = q.Date
		}
		qs[i] = q
	}
	out := &ScreenerPrices{Session: session, Close: make([]Num, n), Volume: make([]Num, n), Ratios: make([][]Num, len(s.Ratios))}
	for r := range n {
		out.Close[r], out.Volume[r] = qs[r].Close, qs[r].Volume
	}
	pc := priceCtx{p: p, qs: qs, session: session, fresh: make([]bool, len(p.comps))}
	for c := range p.comps {
		at := session
		for _, i := range p.comps[c].classes {
			if pc.price(i, at).Valid() {
				pc.fresh[c] = true
				break
			}
		}
	}
	mcs := make([]Num, len(p.mcs))
	for i := range p.mcs {
		m := &p.mcs[i]
		if !pc.repriced(m.ref, m.freq, m.comp) {
			continue // nor are its cells
		}
		at := max(session, m.ref)
		in := m.in
		in.CommonPrice, in.PreferredPrice, in.UnitPrice = pc.price(m.c, at), pc.price(m.p, at), pc.price(m.u, at)
		mcs[i] = MarketCap(in)
	}
	for k, rule := range p.rules {
		if rule == ruleNone {
			out.Ratios[k] = s.Ratios[k]
			continue
		}
		out.Ratios[k] = slices.Clone(s.Ratios[k])
	}
	for i := range p.cells {
		c := &p.cells[i]
		if !pc.repriced(c.ref, c.freq, c.comp) {
			continue // the stored value (cloned above)
		}
		at := max(session, c.ref)
		var v Num
		switch p.rules[c.k] {
		case ruleMultiple:
			v = PriceMultiple(pc.price(c.asset, at), c.x, c.shares, c.factor)
		case ruleEarningsYield:
			v = EarningsYield(c.x, c.shares, c.factor, pc.price(c.asset, at))
		case ruleDividendYield:
			v = DividendYield(c.x, pc.price(c.asset, at))
		case ruleMarketCap:
			v = mcs[c.mc]
		case ruleEV:
			v = EnterpriseValue(mcs[c.mc], c.netDebt)
		case ruleEVMultiple:
			v = EVMultiple(mcs[c.mc]+c.netDebt, c.x)
		}
		out.Ratios[c.k][c.row] = v
	}
	out.Primary = slices.Clone(s.Primary)
	for _, t := range p.ties {
		best := t.cands[0]
		for _, o := range t.cands[1:] {
			if cmpDescMissingLast(qs[o].Volume, qs[best].Volume) < 0 ||
				cmpDescMissingLast(qs[o].Volume, qs[best].Volume) == 0 && p.assets[o].Ticker < p.assets[best].Ticker {
				best = o
			}
		}
		for _, r := range t.rows {
			out.Primary[r] = r == best
		}
	}
	out.ByVolume = make([]int32, n)
	for i := range out.ByVolume {
		out.ByVolume[i] = int32(i)
	}
	slices.SortStableFunc(out.ByVolume, func(x, y int32) int {
		return cmp.Or(cmpDescMissingLast(out.Volume[x], out.Volume[y]), cmp.Compare(s.Assets[x].Ticker, s.Assets[y].Ticker))
	})
	return out
}

// priceCtx is one Priced call's quotes.
type priceCtx struct {
	p       *screenPricing
	qs      []Quote
	session Date
	fresh   []bool // per company: a class has a close within MaxPriceAge of session
}

// price returns the close of asset i for a valuation at date at: Null
// when it has none on or before at within MaxPriceAge days.
func (c *priceCtx) price(i int32, at Date) Num {
	if i < 0 {
		return Null
	}
	q := &c.qs[i]
	if q.Date == NoDate || q.Date > at || q.Date < at-MaxPriceAge || !q.Close.Valid() {
		return Null
	}
	return q.Close
}

// repriced reports whether a point of reference date ref and frequency
// freq of company comp is priced at the quotes: a point dated on or
// after the session is priced with the closes up to its date; an older
// TTM point stands for the valuation at the session, which the
// derivation makes when one of the company's classes has a close then;
// anything else keeps its value.
func (c *priceCtx) repriced(ref Date, freq Frequency, comp int32) bool {
	return ref >= c.session || freq == FrequencyTTM && c.fresh[comp]
}

// priceRule says how a catalog indicator is repriced.
type priceRule uint8

const (
	ruleNone          priceRule = iota
	ruleMultiple                // PRICE_TO_*: PRICE, X, SHARES_OUTSTANDING, SHARE_FACTOR
	ruleEarningsYield           // EARNINGS_YIELD: X, SHARES_OUTSTANDING, SHARE_FACTOR, PRICE
	ruleDividendYield           // DIVIDEND_YIELD: CASH_PER_SHARE_12M, PRICE
	ruleMarketCap               // MARKET_CAP: COMMON_SHARES, COMMON_PRICE, PREFERRED_SHARES, PREFERRED_PRICE, UNIT_PRICE, UNIT_FACTOR
	ruleEV                      // ENTERPRISE_VALUE: MARKET_CAP, NET_DEBT
	ruleEVMultiple              // EV_TO_*: ENTERPRISE_VALUE, X
)

// priceRuleOf returns the rule of a catalog indicator: a VALUATION
// indicator whose id and variables are those of a price-derived formula,
// else ruleNone (a catalog entry this binary does not know keeps its
// values).
func priceRuleOf(ind *Indicator) priceRule {
	if ind.Kind != IndValuation {
		return ruleNone
	}
	v := ind.Variables
	is := func(i int, name string) bool { return i < len(v) && v[i] == name }
	switch {
	case strings.HasPrefix(ind.ID, "PRICE_TO_") && ind.ByClass && len(v) == 4 &&
		is(0, "PRICE") && is(2, "SHARES_OUTSTANDING") && is(3, "SHARE_FACTOR"):
		return ruleMultiple
	case ind.ID == "EARNINGS_YIELD" && ind.ByClass && len(v) == 4 &&
		is(1, "SHARES_OUTSTANDING") && is(2, "SHARE_FACTOR") && is(3, "PRICE"):
		return ruleEarningsYield
	case ind.ID == "DIVIDEND_YIELD" && ind.ByClass && len(v) == 2 && is(0, "CASH_PER_SHARE_12M") && is(1, "PRICE"):
		return ruleDividendYield
	case ind.ID == "MARKET_CAP" && !ind.ByClass && slices.Equal(v, []string{"COMMON_SHARES", "COMMON_PRICE",
		"PREFERRED_SHARES", "PREFERRED_PRICE", "UNIT_PRICE", "UNIT_FACTOR"}):
		return ruleMarketCap
	case ind.ID == "ENTERPRISE_VALUE" && !ind.ByClass && len(v) == 2 && is(0, "MARKET_CAP") && is(1, "NET_DEBT"):
		return ruleEV
	case strings.HasPrefix(ind.ID, "EV_TO_") && !ind.ByClass && len(v) == 2 && is(0, "ENTERPRISE_VALUE"):
		return ruleEVMultiple
	}
	return ruleNone
}

// screenPricing is what Priced needs of the Dataset, gathered once (on
// the first call) and immutable.
type screenPricing struct {
	rules []priceRule // per catalog indicator
	// assets are the assets whose quotes Priced reads: the rows (asset r
	// is row r), then the other priced tickers and Primary candidates.
	assets []*Asset
	comps  []compPricing
	mcs    []mcPricing
	cells  []priceCell
	ties   []primaryTie
	last   Date // the Dataset's last session
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
// indicator k, and the inputs its rule keeps.
type priceCell struct {
	row   int32
	k     uint16
	freq  Frequency
	ref   Date
	comp  int32
	asset int32 // by-class rules: the ticker priced (-1: none)
	mc    int32 // company rules: the MARKET_CAP point (index into mcs)
	// x, shares, factor: the point's item (the divisor of
	// ruleEVMultiple, the cash per share of ruleDividendYield), shares
	// outstanding and share factor; netDebt: the NET_DEBT of ruleEV and
	// ruleEVMultiple.
	x, shares, factor, netDebt Num
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

func newScreenPricing(s *Screener) *screenPricing {
	p := &screenPricing{last: NoDate}
	d := s.ds
	if d == nil {
		return p
	}
	p.last = d.lastSession
	cat := d.u.Derived.Catalog
	p.rules = make([]priceRule, len(cat))
	var kMC, kEV = -1, -1
	var classKs []int // by-class price-derived indicators
	for k := range cat {
		p.rules[k] = priceRuleOf(&cat[k])
		switch p.rules[k] {
		case ruleMarketCap:
			kMC = k
		case ruleEV:
			kEV = k
		case ruleMultiple, ruleEarningsYield, ruleDividendYield:
			classKs = append(classKs, k)
		}
	}
	idx := make(map[*Asset]int32, s.Len())
	p.assets = append(p.assets, s.Assets...)
	for r, a := range s.Assets {
		idx[a] = int32(r)
	}
	assetOf := func(ticker string) int32 {
		a, ok := d.Asset(ticker)
		if !ok {
			return -1
		}
		if i, ok := idx[a]; ok {
			return i
		}
		idx[a] = int32(len(p.assets))
		p.assets = append(p.assets, a)
		return idx[a]
	}
	comps := map[*Issuer]int32{}
	type mcKey struct {
		comp int32
		ref  Date
		freq Frequency
	}
	mcs := map[mcKey]int32{}
	// mcOf returns the MARKET_CAP point of the company at (ref, freq), -1
	// when it cannot be repriced.
	mcOf := func(is *Issuer, comp int32, ref Date, freq Frequency) int32 {
		key := mcKey{comp, ref, freq}
		if i, ok := mcs[key]; ok {
			return i
		}
		mcs[key] = -1
		if kMC < 0 {
			return -1
		}
		pt := pointOn(is.RatioGroup(uint16(kMC), "", freq.String()), ref)
		vs := d.u.Derived.Vars(pt)
		if len(vs) != 6 {
			return -1
		}
		m := mcPricing{ref: ref, freq: freq, comp: comp, c: -1, p: -1, u: -1,
			in: MarketCapInputs{CommonShares: vs[0], PreferredShares: vs[2], UnitFactor: vs[5], Shares: Null}}
		// The classes' tickers and the total share count, from the
		// by-class points of the same valuation.
		var pref *Security
		for _, k := range classKs {
			for ci := range is.Ratios {
				g := &is.Ratios[ci]
				if int(g.Indicator) != k || g.Frequency != freq.String() || g.Class == "" {
					continue
				}
				cp := pointOn(g, ref)
				if cp == nil {
					continue
				}
				if !m.in.Shares.Valid() {
					m.in.Shares = sharesVar(p.rules[k], d.u.Derived.Vars(cp))
				}
				t := cp.Ticker.String()
				switch g.Class {
				case ClassCS:
					m.c = assetOf(t)
				case ClassUnit:
					m.u = assetOf(t)
				case ClassPS, ClassPSA, ClassPSB, ClassPSC, ClassPSD, ClassPSE:
					if sec := securityOf(d, t); sec != nil && (pref == nil || moreLiquidSecurity(sec, pref) < 0) {
						pref, m.p = sec, assetOf(t)
					}
				}
			}
		}
		if m.in.CommonShares.Valid() && !m.in.Shares.Valid() {
			return -1 // no by-class point gives the total: cannot recompute the unit case
		}
		mcs[key] = int32(len(p.mcs))
		p.mcs = append(p.mcs, m)
		return mcs[key]
	}
	for r, a := range s.Assets {
		is := a.Issuer
		comp, ok := comps[is]
		if !ok {
			comp = int32(len(p.comps))
			comps[is] = comp
			var cp compPricing
			seen := map[string]bool{}
			for _, k := range classKs {
				for ci := range is.Ratios {
					g := &is.Ratios[ci]
					if int(g.Indicator) != k || g.Class == "" || seen[g.Class] || len(g.Points) == 0 {
						continue
					}
					seen[g.Class] = true
					if i := assetOf(g.Points[len(g.Points)-1].Ticker.String()); i >= 0 {
						cp.classes = append(cp.classes, i)
					}
				}
			}
			p.comps = append(p.comps, cp)
		}
		for k, rule := range p.rules {
			if rule == ruleNone {
				continue
			}
			class := ""
			if cat[k].ByClass {
				class = a.StockType
			}
			pt := latestRatio(is, uint16(k), class)
			if pt == nil {
				continue
			}
			vs := d.u.Derived.Vars(pt)
			c := priceCell{row: int32(r), k: uint16(k), freq: pt.Frequency, ref: pt.ReferenceDate, comp: comp, asset: -1, mc: -1}
			switch rule {
			case ruleMultiple:
				if len(vs) != 4 {
					continue
				}
				c.asset, c.x, c.shares, c.factor = assetOf(pt.Ticker.String()), vs[1], vs[2], vs[3]
			case ruleEarningsYield:
				if len(vs) != 4 {
					continue
				}
				c.asset, c.x, c.shares, c.factor = assetOf(pt.Ticker.String()), vs[0], vs[1], vs[2]
			case ruleDividendYield:
				if len(vs) != 2 {
					continue
				}
				c.asset, c.x = assetOf(pt.Ticker.String()), vs[0]
			case ruleMarketCap, ruleEV, ruleEVMultiple:
				if c.mc = mcOf(is, comp, pt.ReferenceDate, pt.Frequency); c.mc < 0 {
					continue
				}
				switch rule {
				case ruleEV:
					if len(vs) != 2 {
						continue
					}
					c.netDebt = vs[1]
				case ruleEVMultiple:
					if kEV < 0 || len(vs) != 2 {
						continue
					}
					ev := pointOn(is.RatioGroup(uint16(kEV), "", pt.Frequency.String()), pt.ReferenceDate)
					evs := d.u.Derived.Vars(ev)
					if len(evs) != 2 {
						continue
					}
					c.x, c.netDebt = vs[1], evs[1]
				}
			}
			p.cells = append(p.cells, c)
		}
	}
	// Primary: companies whose first candidates tie on LiquidityRank.
	done := map[*Issuer]bool{}
	for _, a := range s.Assets {
		is := a.Issuer
		if done[is] {
			continue
		}
		done[is] = true
		var cands []*Asset
		for _, o := range is.Assets {
			if o.Latest.Valid() && ScreenerClass(o.StockType) {
				cands = append(cands, o)
			}
		}
		if len(cands) < 2 || rankKey(cands[0]) != rankKey(cands[1]) {
			continue
		}
		var t primaryTie
		for _, o := range cands {
			if rankKey(o) == rankKey(cands[0]) {
				t.cands = append(t.cands, assetOf(o.Ticker))
			}
		}
		for r, o := range s.Assets {
			if o.Issuer == is {
				t.rows = append(t.rows, int32(r))
			}
		}
		p.ties = append(p.ties, t)
	}
	return p
}

// sharesVar returns the SHARES_OUTSTANDING variable of a by-class point
// of rule (vs its variables), Null when it has none.
func sharesVar(rule priceRule, vs []Num) Num {
	switch {
	case rule == ruleMultiple && len(vs) == 4:
		return vs[2]
	case rule == ruleEarningsYield && len(vs) == 4:
		return vs[1]
	}
	return Null
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
