package ratios

import (
	"math"
	"strings"

	"github.com/pregao/pregao/engine"
)

// Formats of the catalog. NUMBER is a plain count (investors, shares).
const (
	FormatPercentage = "PERCENTAGE" // a fraction: 0.25 is 25 %
	FormatMultiple   = "MULTIPLE"
	FormatBRL        = "BRL"
	FormatScore      = "SCORE"
	FormatNumber     = "NUMBER"
)

// group says how and where an indicator is computed.
type group uint8

const (
	grpFund       group = iota // company level, from reports
	grpFundClass               // per class, from reports and shares
	grpValClass                // per class, price dependent
	grpValCompany              // company level, price dependent
	grpListedFund              // listed fund, from fund reports
)

// def is one catalog entry with its evaluation rule.
type def struct {
	engine.Indicator
	grp    group
	growth bool // also depends on the year-ago inputs
	static bool // does not depend on reports (one point per reference date)
	// price is a valuation entry's price rule: it writes the entry's
	// variables, class split and formula, and eval computes with it.
	price engine.PriceRule
	eval  func(c *evalCtx, v []engine.Num) engine.Num
}

var (
	fundFreqs = []string{engine.FreqAnnual, engine.FreqQuarterly, engine.FreqTTM, engine.FreqYTD}
	valFreqs  = []string{engine.FreqAnnual, engine.FreqTTM}
	ttmOnly   = []string{engine.FreqTTM}
	monthly   = []string{engine.FreqMonthly}
)

func ind(id, name, kind, format, formula string, vars []string, freqs []string, byClass bool) engine.Indicator {
	return engine.Indicator{ID: id, Name: name, Kind: kind, Format: format, Formula: formula,
		Variables: vars, Frequencies: freqs, ByClass: byClass}
}

func fundamental(id, name, format, formula string, vars []string, eval func(*evalCtx, []engine.Num) engine.Num) def {
	return def{Indicator: ind(id, name, engine.IndFundamental, format, formula, vars, fundFreqs, false), grp: grpFund, eval: eval}
}

// n converts a line value to a Num (NaN stays missing).
func n(f float64) engine.Num { return engine.Num(f) }

// clean maps infinities and NaN to Null.
func clean(x engine.Num) engine.Num {
	if !x.Valid() {
		return engine.Null
	}
	return x
}

// abs is |x|, Null when x is missing.
func abs(x engine.Num) engine.Num { return engine.Num(math.Abs(float64(x))) }

// growthOf is (cur - prev) / abs(prev).
func growthOf(cur, prev engine.Num) engine.Num { return engine.Div(cur-prev, abs(prev)) }

func (c *evalCtx) ebitda() engine.Num    { return n(c.cur[itEBIT]) + n(c.cur[itDA]) }
func (c *evalCtx) grossDebt() engine.Num { return n(c.cur[itSTDebt]) + n(c.cur[itLTDebt]) }
func (c *evalCtx) netDebt() engine.Num {
	return c.grossDebt() - n(c.cur[itCash]) - n(c.cur[itSTInvest])
}

// perShare is x / shares x factor.
func (c *evalCtx) perShare(x engine.Num) engine.Num { return engine.PerShare(x, c.shares, c.factor) }

// set fills v with the values and returns r (cleaned).
func set(v []engine.Num, r engine.Num, xs ...engine.Num) engine.Num {
	copy(v, xs)
	return clean(r)
}

func lineRatio(num, den int) func(*evalCtx, []engine.Num) engine.Num {
	return func(c *evalCtx, v []engine.Num) engine.Num {
		a, b := n(c.cur[num]), n(c.cur[den])
		return set(v, engine.Div(a, b), a, b)
	}
}

func line(i int) func(*evalCtx, []engine.Num) engine.Num {
	return func(c *evalCtx, v []engine.Num) engine.Num {
		a := n(c.cur[i])
		return set(v, a, a)
	}
}

// priced evaluates a valuation entry with its price rule: at the
// context's price, share counts, cash per share and market
// capitalization, and the company figure the rule names (reportItem).
func priced(rule engine.PriceRule) func(*evalCtx, []engine.Num) engine.Num {
	item := reportItem(rule.Item)
	return func(c *evalCtx, v []engine.Num) engine.Num {
		in := engine.PriceInputs{Price: c.price, Item: engine.Null, Shares: c.shares, Factor: c.factor, Cash: c.cash,
			MarketCap: c.marketCap, NetDebt: c.netDebt(), Cap: &c.mc}
		if item != nil {
			in.Item = item(c)
		}
		rule.AppendVars(v[:0], &in)
		return clean(rule.Value(&in))
	}
}

// computedItems are the company figures the derivation computes from
// report lines.
var computedItems = map[string]func(*evalCtx) engine.Num{
	"EBITDA":   (*evalCtx).ebitda,
	"NET_DEBT": (*evalCtx).netDebt,
}

// reportItem returns how the derivation reads the company figure of
// variable id name: a report line (itemLines) or a computed figure; nil
// for "" (a rule without one). It panics for an unknown id: a catalog
// entry naming a figure the derivation cannot read.
func reportItem(name string) func(*evalCtx) engine.Num {
	if name == "" {
		return nil
	}
	if f := computedItems[name]; f != nil {
		return f
	}
	for it, id := range itemLines {
		if id == name {
			return func(c *evalCtx) engine.Num { return n(c.cur[it]) }
		}
	}
	panic("BUG: catalog: price rule of unknown figure " + name)
}

// valuation returns the catalog entry of a valuation ratio priced by
// rule: its variables, class split, formula (note appended) and
// report independence are the rule's, and its points are the rule's
// values (priced).
func valuation(id, name, format string, rule engine.PriceRule, freqs []string, note string) def {
	grp := grpValCompany
	if rule.ByClass() {
		grp = grpValClass
	}
	return def{
		Indicator: ind(id, name, engine.IndValuation, format, rule.Formula(note), rule.Variables(), freqs, rule.ByClass()),
		grp:       grp, static: rule.Static(), price: rule, eval: priced(rule),
	}
}

var defs = buildDefs()

func buildDefs() []def {
	pct, mul, brl := FormatPercentage, FormatMultiple, FormatBRL
	d := []def{
		fundamental("GROSS_MARGIN", "Gross margin", pct, "GROSS_PROFIT / NET_REVENUE",
			[]string{"GROSS_PROFIT", "NET_REVENUE"}, lineRatio(itGross, itRevenue)),
		fundamental("EBIT_MARGIN", "EBIT margin", pct, "EBIT / NET_REVENUE",
			[]string{"EBIT", "NET_REVENUE"}, lineRatio(itEBIT, itRevenue)),
		fundamental("EBITDA_MARGIN", "EBITDA margin", pct, "(EBIT + DEPRECIATION_AMORTIZATION) / NET_REVENUE",
			[]string{"EBIT", "DEPRECIATION_AMORTIZATION", "NET_REVENUE"}, func(c *evalCtx, v []engine.Num) engine.Num {
				return set(v, engine.Div(c.ebitda(), n(c.cur[itRevenue])), n(c.cur[itEBIT]), n(c.cur[itDA]), n(c.cur[itRevenue]))
			}),
		fundamental("NET_MARGIN", "Net margin", pct, "NET_INCOME / NET_REVENUE",
			[]string{"NET_INCOME", "NET_REVENUE"}, lineRatio(itNetIncome, itRevenue)),
		fundamental("RETURN_ON_EQUITY", "Return on equity", pct, "NET_INCOME / EQUITY (equity at the end of the period; not annualized)",
			[]string{"NET_INCOME", "EQUITY"}, lineRatio(itNetIncome, itEquity)),
		fundamental("RETURN_ON_ASSETS", "Return on assets", pct, "NET_INCOME / TOTAL_ASSETS (assets at the end of the period; not annualized)",
			[]string{"NET_INCOME", "TOTAL_ASSETS"}, lineRatio(itNetIncome, itAssets)),
		fundamental("RETURN_ON_INVESTED_CAPITAL", "Return on invested capital", pct,
			"(EBIT + INCOME_TAXES) / (EQUITY + SHORT_TERM_DEBT + LONG_TERM_DEBT) (INCOME_TAXES as filed, negative for an expense; balances at the end of the period; not annualized)",
			[]string{"EBIT", "INCOME_TAXES", "EQUITY", "SHORT_TERM_DEBT", "LONG_TERM_DEBT"}, func(c *evalCtx, v []engine.Num) engine.Num {
				e, t, q := n(c.cur[itEBIT]), n(c.cur[itTaxes]), n(c.cur[itEquity])
				s, l := n(c.cur[itSTDebt]), n(c.cur[itLTDebt])
				return set(v, engine.Div(e+t, q+s+l), e, t, q, s, l)
			}),
		fundamental("NET_DEBT", "Net debt", brl, "SHORT_TERM_DEBT + LONG_TERM_DEBT - CASH_AND_EQUIVALENTS - SHORT_TERM_INVESTMENTS",
			[]string{"SHORT_TERM_DEBT", "LONG_TERM_DEBT", "CASH_AND_EQUIVALENTS", "SHORT_TERM_INVESTMENTS"}, func(c *evalCtx, v []engine.Num) engine.Num {
				return set(v, c.netDebt(), n(c.cur[itSTDebt]), n(c.cur[itLTDebt]), n(c.cur[itCash]), n(c.cur[itSTInvest]))
			}),
		fundamental("NET_DEBT_TO_EBITDA", "Net debt / EBITDA", mul, "NET_DEBT / EBITDA (EBITDA of the frequency)",
			[]string{"NET_DEBT", "EBITDA"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, b := c.netDebt(), c.ebitda()
				return set(v, engine.Div(a, b), a, b)
			}),
		fundamental("NET_DEBT_TO_EQUITY", "Net debt / equity", mul, "NET_DEBT / EQUITY",
			[]string{"NET_DEBT", "EQUITY"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, b := c.netDebt(), n(c.cur[itEquity])
				return set(v, engine.Div(a, b), a, b)
			}),
		fundamental("GROSS_DEBT_TO_EQUITY", "Gross debt / equity", mul, "(SHORT_TERM_DEBT + LONG_TERM_DEBT) / EQUITY",
			[]string{"SHORT_TERM_DEBT", "LONG_TERM_DEBT", "EQUITY"}, func(c *evalCtx, v []engine.Num) engine.Num {
				s, l, q := n(c.cur[itSTDebt]), n(c.cur[itLTDebt]), n(c.cur[itEquity])
				return set(v, engine.Div(s+l, q), s, l, q)
			}),
		fundamental("CURRENT_RATIO", "Current ratio", mul, "CURRENT_ASSETS / CURRENT_LIABILITIES",
			[]string{"CURRENT_ASSETS", "CURRENT_LIABILITIES"}, lineRatio(itCurAssets, itCurLiab)),
		fundamental("QUICK_RATIO", "Quick ratio", mul, "(CURRENT_ASSETS - INVENTORIES) / CURRENT_LIABILITIES",
			[]string{"CURRENT_ASSETS", "INVENTORIES", "CURRENT_LIABILITIES"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, i, l := n(c.cur[itCurAssets]), n(c.cur[itInventories]), n(c.cur[itCurLiab])
				return set(v, engine.Div(a-i, l), a, i, l)
			}),
		fundamental("CASH_RATIO", "Cash ratio", mul, "(CASH_AND_EQUIVALENTS + SHORT_TERM_INVESTMENTS) / CURRENT_LIABILITIES",
			[]string{"CASH_AND_EQUIVALENTS", "SHORT_TERM_INVESTMENTS", "CURRENT_LIABILITIES"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, s, l := n(c.cur[itCash]), n(c.cur[itSTInvest]), n(c.cur[itCurLiab])
				return set(v, engine.Div(a+s, l), a, s, l)
			}),
		fundamental("INTEREST_COVERAGE", "Interest coverage", mul, "EBIT / abs(FINANCIAL_EXPENSES)",
			[]string{"EBIT", "FINANCIAL_EXPENSES"}, func(c *evalCtx, v []engine.Num) engine.Num {
				e, f := n(c.cur[itEBIT]), n(c.cur[itFinExp])
				return set(v, engine.Div(e, abs(f)), e, f)
			}),
		fundamental("ASSET_TURNOVER", "Asset turnover", mul, "NET_REVENUE / TOTAL_ASSETS (assets at the end of the period)",
			[]string{"NET_REVENUE", "TOTAL_ASSETS"}, lineRatio(itRevenue, itAssets)),
		fundamental("PAYOUT", "Payout", pct, "(INTEREST_ON_EQUITY + DIVIDENDS) / NET_INCOME (DVA 7.08.04.01 and 7.08.04.02)",
			[]string{"INTEREST_ON_EQUITY", "DIVIDENDS", "NET_INCOME"}, func(c *evalCtx, v []engine.Num) engine.Num {
				j, d, ni := n(c.cur[itJCP]), n(c.cur[itDividends]), n(c.cur[itNetIncome])
				return set(v, engine.Div(j+d, ni), j, d, ni)
			}),
		fundamental("REVENUE_GROWTH", "Revenue growth", pct, "(NET_REVENUE - NET_REVENUE_YEAR_AGO) / abs(NET_REVENUE_YEAR_AGO) (same frequency, one year earlier)",
			[]string{"NET_REVENUE", "NET_REVENUE_YEAR_AGO"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, b := n(c.cur[itRevenue]), n(c.prev[itRevenue])
				return set(v, growthOf(a, b), a, b)
			}),
		fundamental("NET_INCOME_GROWTH", "Net income growth", pct, "(NET_INCOME - NET_INCOME_YEAR_AGO) / abs(NET_INCOME_YEAR_AGO) (same frequency, one year earlier)",
			[]string{"NET_INCOME", "NET_INCOME_YEAR_AGO"}, func(c *evalCtx, v []engine.Num) engine.Num {
				a, b := n(c.cur[itNetIncome]), n(c.prev[itNetIncome])
				return set(v, growthOf(a, b), a, b)
			}),
		fundamental("EBITDA", "EBITDA", brl, "EBIT + DEPRECIATION_AMORTIZATION",
			[]string{"EBIT", "DEPRECIATION_AMORTIZATION"}, func(c *evalCtx, v []engine.Num) engine.Num {
				return set(v, c.ebitda(), n(c.cur[itEBIT]), n(c.cur[itDA]))
			}),
		fundamental("NET_REVENUE", "Net revenue", brl, "NET_REVENUE (DRE 3.01)", []string{"NET_REVENUE"}, line(itRevenue)),
		fundamental("NET_INCOME", "Net income", brl, "NET_INCOME (DRE 3.11)", []string{"NET_INCOME"}, line(itNetIncome)),
	}
	for i := range d {
		d[i].growth = strings.HasSuffix(d[i].ID, "_GROWTH")
	}

	perShareVars := func(x string) []string { return []string{x, "SHARES_OUTSTANDING", "SHARE_FACTOR"} }
	for _, e := range []struct {
		id, name, item string
		it             int
	}{
		{"EARNINGS_PER_SHARE", "Earnings per share", "NET_INCOME", itNetIncome},
		{"BOOK_VALUE_PER_SHARE", "Book value per share", "EQUITY", itEquity},
	} {
		it := e.it
		d = append(d, def{
			Indicator: ind(e.id, e.name, engine.IndFundamental, brl,
				e.item+" / SHARES_OUTSTANDING x SHARE_FACTOR (shares: common + preferred - treasury at the reference date, treasury as the share count's source gives it: the CVM's capital composition does, B3's listed-company data does not; SHARE_FACTOR: unit factor for UNIT, else 1)",
				perShareVars(e.item), fundFreqs, true),
			grp: grpFundClass,
			eval: func(c *evalCtx, v []engine.Num) engine.Num {
				x := n(c.cur[it])
				return set(v, c.perShare(x), x, c.shares, c.factor)
			},
		})
	}

	// Valuation: one entry per ratio, declared by its price rule.
	rule := func(f engine.PriceForm, item string) engine.PriceRule { return engine.PriceRule{Form: f, Item: item} }
	for _, e := range []struct {
		id, name, format string
		rule             engine.PriceRule
		freqs            []string
		note             string // appended to the rule's formula
	}{
		{"PRICE_TO_EARNINGS", "Price / earnings", mul, rule(engine.PriceToItem, "NET_INCOME"), valFreqs, ""},
		{"PRICE_TO_BOOK", "Price / book value", mul, rule(engine.PriceToItem, "EQUITY"), valFreqs, ""},
		{"PRICE_TO_SALES", "Price / sales", mul, rule(engine.PriceToItem, "NET_REVENUE"), valFreqs, ""},
		{"PRICE_TO_EBITDA", "Price / EBITDA", mul, rule(engine.PriceToItem, "EBITDA"), valFreqs, ""},
		{"PRICE_TO_EBIT", "Price / EBIT", mul, rule(engine.PriceToItem, "EBIT"), valFreqs, ""},
		{"EARNINGS_YIELD", "Earnings yield", pct, rule(engine.ItemToPrice, "NET_INCOME"), valFreqs, ""},
		{"DIVIDEND_YIELD", "Dividend yield", pct, rule(engine.CashToPrice, ""), ttmOnly,
			"declared cash per share with prior_ex_date in the last 12 calendar months, split-adjusted"},
		{"MARKET_CAP", "Market capitalization", brl, rule(engine.MarketCapSum, ""), valFreqs,
			"shares net of the treasury shares the share count's source gives, pro rata: the CVM's capital composition gives them, B3's listed-company data does not; when a class with shares has no price: (COMMON_SHARES + PREFERRED_SHARES) x UNIT_PRICE / UNIT_FACTOR"},
		{"ENTERPRISE_VALUE", "Enterprise value", brl, rule(engine.EVSum, ""), valFreqs, ""},
		{"EV_TO_EBITDA", "Enterprise value / EBITDA", mul, rule(engine.EVToItem, "EBITDA"), valFreqs, ""},
		{"EV_TO_EBIT", "Enterprise value / EBIT", mul, rule(engine.EVToItem, "EBIT"), valFreqs, ""},
		{"EV_TO_SALES", "Enterprise value / sales", mul, rule(engine.EVToItem, "NET_REVENUE"), valFreqs, ""},
	} {
		d = append(d, valuation(e.id, e.name, e.format, e.rule, e.freqs, e.note))
	}
	fund := func(id, name, format, formula string, vars []string) def {
		return def{Indicator: ind(id, name, engine.IndFund, format, formula, vars, monthly, false), grp: grpListedFund}
	}
	d = append(d,
		fund("P_NAV", "Price / net asset value", mul, "PRICE / NAV_PER_SHARE (PRICE: close of the fund's ticker on the last session of the reference month)", []string{"PRICE", "NAV_PER_SHARE"}),
		fund("DIVIDEND_YIELD", "Dividend yield (month)", pct, "DIVIDEND_YIELD (month, as reported)", []string{"DIVIDEND_YIELD"}),
		fund("NAV_PER_SHARE", "Net asset value per share", brl, "NAV_PER_SHARE (as reported)", []string{"NAV_PER_SHARE"}),
		fund("NET_ASSETS", "Net assets", brl, "NET_ASSETS (as reported)", []string{"NET_ASSETS"}),
		fund("INVESTORS", "Investors", FormatNumber, "INVESTORS (as reported)", []string{"INVESTORS"}),
		fund("SHARES_OUTSTANDING", "Shares outstanding", FormatNumber, "SHARES_OUTSTANDING (as reported)", []string{"SHARES_OUTSTANDING"}),
		fund("MONTHLY_RETURN", "Monthly return", pct, "MONTHLY_RETURN (as reported)", []string{"MONTHLY_RETURN"}),
	)
	return d
}

// Catalog returns every indicator, in a stable order: RatioPoint.Indicator
// and FundRatioPoint.Indicator index it. IDs are unique within a Kind
// (DIVIDEND_YIELD exists as VALUATION and as FUND); use Lookup. The caller
// owns the returned slice (Variables and Frequencies are shared and must not
// be modified).
func Catalog() []engine.Indicator {
	out := make([]engine.Indicator, len(defs))
	for i := range defs {
		out[i] = defs[i].Indicator
	}
	return out
}

// Lookup returns the index in Catalog() of the indicator with kind and id
// (id matched ignoring letter case, without a class suffix): the catalog
// compiled into this binary, which is the one Derive numbers points by. A
// Dataset carries the catalog of the snapshot it was read from: look its
// points' indicators up with Dataset.IndicatorIndex.
func Lookup(kind, id string) (uint16, bool) {
	for i := range defs {
		if defs[i].Kind == kind && strings.EqualFold(defs[i].ID, id) {
			return uint16(i), true
		}
	}
	return 0, false
}

// pricedClass reports whether securities of class get per-class ratios.
func pricedClass(class string) bool { return engine.ClassSuffix(class) != "" }
