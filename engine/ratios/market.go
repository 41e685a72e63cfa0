package ratios

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// market indexes prices by ticker, joining renamed tickers.
type market struct {
	series map[string]*engine.Series
	preds  map[string][]string // To -> From tickers
	last   engine.Date         // last session of the data
}

// newMarket indexes u's daily series. The last session is the newest
// date of a series that is not a macro one: a macro series is dated by
// its own calendar (the IPCA on the 1st of its month, a Sunday or a
// holiday as well), not by B3's sessions, and the valuation at the last
// session is labelled with that date.
func newMarket(u *engine.Universe) *market {
	m := &market{series: make(map[string]*engine.Series, len(u.Daily)), preds: map[string][]string{}, last: engine.NoDate}
	macro := map[string]bool{}
	for i := range u.Securities {
		if u.Securities[i].StockType == engine.ClassMacro {
			macro[u.Securities[i].Ticker] = true
		}
	}
	for i := range u.Daily {
		s := &u.Daily[i]
		if _, dup := m.series[s.Ticker]; !dup {
			m.series[s.Ticker] = s
		}
		if macro[s.Ticker] {
			continue
		}
		if n := len(s.Dates); n > 0 && (m.last == engine.NoDate || s.Dates[n-1] > m.last) {
			m.last = s.Dates[n-1]
		}
	}
	for _, r := range u.Renames {
		m.preds[r.To] = append(m.preds[r.To], r.From)
	}
	for k := range m.preds {
		slices.Sort(m.preds[k])
	}
	return m
}

// aliases returns ticker and every ticker renamed into it (transitively).
func (m *market) aliases(ticker string) []string {
	out := []string{ticker}
	for i := 0; i < len(out) && i < 16; i++ {
		for _, p := range m.preds[out[i]] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// closeOn returns the last valid close of ticker (or of the tickers renamed
// into it) on or before d and at most engine.MaxPriceAge days earlier.
func (m *market) closeOn(ticker string, d engine.Date) engine.Num {
	return m.closeIn(ticker, d-engine.MaxPriceAge, d, 0)
}

// closeIn returns the last valid close in [from, to].
func (m *market) closeIn(ticker string, from, to engine.Date, depth int) engine.Num {
	if s := m.series[ticker]; s != nil {
		i := sort.Search(len(s.Dates), func(i int) bool { return s.Dates[i] > to })
		for i--; i >= 0 && s.Dates[i] >= from; i-- {
			if i < len(s.Close) && s.Close[i].Valid() {
				return s.Close[i]
			}
		}
	}
	if depth < 8 {
		for _, p := range m.preds[ticker] {
			if c := m.closeIn(p, from, to, depth+1); c.Valid() {
				return c
			}
		}
	}
	return engine.Null
}

// classSec is the ticker priced for one share class of a company.
type classSec struct {
	class   string
	sec     *engine.Security
	factor  engine.Num // shares per traded unit
	aliases []string
	cash    []*engine.CashAction // current versions, cash to holders
	splits  []*engine.ShareAction
}

// moreLiquid orders securities: lowest non-zero LiquidityRank, then ticker.
func moreLiquid(a, b *engine.Security) int {
	ra, rb := a.LiquidityRank, b.LiquidityRank
	if ra <= 0 {
		ra = int(^uint(0) >> 1)
	}
	if rb <= 0 {
		rb = int(^uint(0) >> 1)
	}
	return cmp.Or(cmp.Compare(ra, rb), strings.Compare(a.Ticker, b.Ticker))
}

// cashNames are the cash actions counted in the dividend yield.
var cashNames = map[string]bool{"DIVIDEND": true, "INTEREST_ON_EQUITY": true, "RENDIMENTO": true}

// currentCash keeps the current version of each event with a counted
// name: the one ranking last by engine.CompareCashVersions, of rows
// ranking alike the later one (as Build's CashEvent.Current).
func currentCash(as []*engine.CashAction) []*engine.CashAction {
	best := map[string]*engine.CashAction{}
	var order []string
	for _, a := range as {
		key := a.EventID
		if key == "" {
			key = "\x00" + a.ID
		}
		b, ok := best[key]
		if !ok {
			order = append(order, key)
		}
		if !ok || engine.CompareCashVersions(a, b) >= 0 {
			best[key] = a
		}
	}
	slices.Sort(order)
	out := make([]*engine.CashAction, 0, len(order))
	for _, k := range order {
		if a := best[k]; cashNames[a.Name.String()] {
			out = append(out, a)
		}
	}
	return out
}

func (c *classSec) matches(isin, ticker string) bool {
	return (isin != "" && isin == c.sec.ISIN) || (ticker != "" && slices.Contains(c.aliases, ticker))
}

// cashTTM is the declared cash per share of c with prior_ex_date in the
// twelve calendar months ending at d, in shares of date d (divided by the
// factors of share actions whose prior_ex_date is on or after the
// dividend's and before d).
func (c *classSec) cashTTM(d engine.Date) engine.Num {
	from := engine.DateOf(d.Time().AddDate(-1, 0, 0))
	sum := engine.Num(0)
	for _, a := range c.cash {
		if a.PriorExDate <= from || a.PriorExDate > d {
			continue
		}
		v := a.DeclaredValue
		for _, s := range c.splits {
			if s.PriorExDate >= a.PriorExDate && s.PriorExDate < d {
				v /= s.Factor
			}
		}
		sum += v
	}
	return clean(sum)
}

// sharesAt returns the share count in effect at d.
func sharesAt(ps []engine.SharesPoint, d engine.Date) (engine.SharesPoint, bool) {
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Date > d })
	if i == 0 {
		return engine.SharesPoint{}, false
	}
	return ps[i-1], true
}

// priceCtx is what valuation needs at one date: per-class prices and cash,
// total shares and the market capitalization.
type priceCtx struct {
	date      engine.Date
	shares    engine.Num // common + preferred - treasury
	prices    []engine.Num
	cash      []engine.Num
	mc        engine.MarketCapInputs
	marketCap engine.Num // engine.MarketCap(mc)
	anyPrice  bool
}

func (w *companyWork) priceAt(m *market, d engine.Date) *priceCtx {
	pc := &priceCtx{date: d, shares: engine.Null, prices: make([]engine.Num, len(w.classes)), cash: make([]engine.Num, len(w.classes))}
	sp, ok := sharesAt(w.shares, d)
	c, p := engine.Null, engine.Null
	if ok {
		tot := float64(sp.Common + sp.Preferred)
		net := tot - float64(sp.Treasury)
		if tot > 0 && net > 0 {
			pc.shares = engine.Num(net)
			c, p = engine.Num(float64(sp.Common)*net/tot), engine.Num(float64(sp.Preferred)*net/tot)
		}
	}
	pc.mc = engine.MarketCapInputs{CommonShares: c, CommonPrice: engine.Null, PreferredShares: p, PreferredPrice: engine.Null,
		UnitPrice: engine.Null, UnitFactor: engine.Null, Shares: pc.shares}
	var pref *engine.Security
	for i, cs := range w.classes {
		pc.prices[i] = m.closeOn(cs.sec.Ticker, d)
		pc.cash[i] = cs.cashTTM(d)
		if pc.prices[i].Valid() {
			pc.anyPrice = true
		}
		switch cs.class {
		case engine.ClassCS:
			pc.mc.CommonPrice = pc.prices[i]
		case engine.ClassUnit:
			pc.mc.UnitPrice, pc.mc.UnitFactor = pc.prices[i], cs.factor
		case engine.ClassPS, engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassPSE:
			if pref == nil || moreLiquid(cs.sec, pref) < 0 {
				pref, pc.mc.PreferredPrice = cs.sec, pc.prices[i]
			}
		}
	}
	pc.marketCap = engine.MarketCap(pc.mc)
	return pc
}
