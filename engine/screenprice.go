package engine

import (
	"cmp"
	"slices"
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
	// Tickers, from Screener.At, holds row r's ticker at its last session
	// closed by then when a rename since changed it (Asset.TickerOn: a
	// snapshot of then names the row so), "" for the others; nil when no
	// row's changed.
	Tickers []string
}

// TickerOf returns row r's ticker as p names it: Tickers[r] when set,
// else its asset's ticker in tab.
func (p *ScreenerPrices) TickerOf(tab *Screener, r int) string {
	if p.Tickers != nil && p.Tickers[r] != "" {
		return p.Tickers[r]
	}
	return tab.Assets[r].Ticker
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
	return s.ds != nil && s.ds.PriceRule(k).Priced()
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
	pc := p.quotesOf(quote)
	n := s.Len()
	out := &ScreenerPrices{Session: pc.session, Close: make([]Num, n), Volume: make([]Num, n)}
	for r := range n {
		out.Close[r], out.Volume[r] = pc.qs[r].Close, pc.qs[r].Volume
	}
	out.Ratios = pc.ratios(s.Ratios)
	out.Primary = pc.primary(s.Primary)
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
	qs      []Quote // per asset of p.assets (missing: NoDate, Null)
	session Date
	fresh   []bool // per company: a class has a close within MaxPriceAge of session
}

// quotesOf reads the quote of every asset Priced reads: the session is
// the newest quote's, or the Dataset's last session when none is newer.
func (p *screenPricing) quotesOf(quote func(a *Asset) Quote) priceCtx {
	pc := priceCtx{p: p, qs: make([]Quote, len(p.assets)), session: p.last, fresh: make([]bool, len(p.comps))}
	for i, a := range p.assets {
		q := quote(a)
		if !q.Valid() {
			q = Quote{Date: NoDate, Close: Null, Volume: Null}
		} else if q.Date > pc.session {
			pc.session = q.Date
		}
		pc.qs[i] = q
	}
	for c := range p.comps {
		for _, i := range p.comps[c].classes {
			if pc.price(i, pc.session).Valid() {
				pc.fresh[c] = true
				break
			}
		}
	}
	return pc
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

// marketCaps returns the market capitalization of every MARKET_CAP point
// of p.mcs at the quotes (0 for one that is not repriced: nor are the
// cells that read it).
func (c *priceCtx) marketCaps() []Num {
	mcs := make([]Num, len(c.p.mcs))
	for i := range c.p.mcs {
		m := &c.p.mcs[i]
		if !c.repriced(m.ref, m.freq, m.comp) {
			continue
		}
		at := max(c.session, m.ref)
		in := m.in
		in.CommonPrice, in.PreferredPrice, in.UnitPrice = c.price(m.c, at), c.price(m.p, at), c.price(m.u, at)
		mcs[i] = MarketCap(in)
	}
	return mcs
}

// ratios returns the ratio columns at the quotes: a copy of the stored
// column (stored) of each price-derived indicator with its repriced
// cells set, the stored column itself for the others.
func (c *priceCtx) ratios(stored [][]Num) [][]Num {
	p := c.p
	out := make([][]Num, len(stored))
	for k, rule := range p.rules {
		if !rule.Priced() {
			out[k] = stored[k]
			continue
		}
		out[k] = slices.Clone(stored[k])
	}
	mcs := c.marketCaps()
	var cash []Num // the twelve months before the session, when read
	for i := range p.cells {
		cl := &p.cells[i]
		if !c.repriced(cl.ref, cl.freq, cl.comp) {
			continue // the stored value (cloned above)
		}
		rule := &p.rules[cl.k]
		in := cl.in
		if rule.ByClass() {
			in.Price = c.price(cl.asset, max(c.session, cl.ref))
			if cl.cash >= 0 && cl.ref < c.session {
				// A point dated before the session stands for the
				// valuation at the session: the cash of the twelve
				// months before it, not before the point.
				if cash == nil {
					cash = p.sessionCash(c.session)
				}
				in.Cash = cash[cl.cash]
			}
		} else {
			in.MarketCap = mcs[cl.mc]
		}
		out[cl.k][cl.row] = rule.Value(&in)
	}
	return out
}

// primary returns Primary at the quotes: stored (the build's) with the
// quotes' volumes breaking the ties of LiquidityRank.
func (c *priceCtx) primary(stored []bool) []bool {
	p, qs := c.p, c.qs
	out := slices.Clone(stored)
	for _, t := range p.ties {
		best := t.cands[0]
		for _, o := range t.cands[1:] {
			if cmpDescMissingLast(qs[o].Volume, qs[best].Volume) < 0 ||
				cmpDescMissingLast(qs[o].Volume, qs[best].Volume) == 0 && p.assets[o].Ticker < p.assets[best].Ticker {
				best = o
			}
		}
		for _, r := range t.rows {
			out[r] = r == best
		}
	}
	return out
}
