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
	eval   func(c *evalCtx, v []engine.Num) engine.Num
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

func (c *evalCtx) ev() engine.Num { return c.marketCap + c.netDebt() }

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

func perClassPrice(item func(*evalCtx) engine.Num) func(*evalCtx, []engine.Num) engine.Num {
	return func(c *evalCtx, v []engine.Num) engine.Num {
		x := item(c)
		return set(v, engine.PriceMultiple(c.price, x, c.shares, c.factor), c.price, x, c.shares, c.factor)
	}
}

func evByItem(item func(*evalCtx) engine.Num) func(*evalCtx, []engine.Num) engine.Num {
	return func(c *evalCtx, v []engine.Num) engine.Num {
		ev, x := c.ev(), item(c)
		return set(v, engine.EVMultiple(ev, x), ev, x)
	}
}

func itemOf(i int) func(*evalCtx) engine.Num {
	return func(c *evalCtx) engine.Num { return n(c.cur[i]) }
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

	ebitdaItem := func(c *evalCtx) engine.Num { return c.ebitda() }
	for _, e := range []struct {
		id, name, item string
		f              func(*evalCtx) engine.Num
	}{
		{"PRICE_TO_EARNINGS", "Price / earnings", "NET_INCOME", itemOf(itNetIncome)},
		{"PRICE_TO_BOOK", "Price / book value", "EQUITY", itemOf(itEquity)},
		{"PRICE_TO_SALES", "Price / sales", "NET_REVENUE", itemOf(itRevenue)},
		{"PRICE_TO_EBITDA", "Price / EBITDA", "EBITDA", ebitdaItem},
		{"PRICE_TO_EBIT", "Price / EBIT", "EBIT", itemOf(itEBIT)},
	} {
		d = append(d, def{
			Indicator: ind(e.id, e.name, engine.IndValuation, mul,
				"PRICE / ("+e.item+" / SHARES_OUTSTANDING x SHARE_FACTOR)",
				[]string{"PRICE", e.item, "SHARES_OUTSTANDING", "SHARE_FACTOR"}, valFreqs, true),
			grp: grpValClass, eval: perClassPrice(e.f),
		})
	}
	d = append(d,
		def{
			Indicator: ind("EARNINGS_YIELD", "Earnings yield", engine.IndValuation, pct,
				"(NET_INCOME / SHARES_OUTSTANDING x SHARE_FACTOR) / PRICE",
				[]string{"NET_INCOME", "SHARES_OUTSTANDING", "SHARE_FACTOR", "PRICE"}, valFreqs, true),
			grp: grpValClass,
			eval: func(c *evalCtx, v []engine.Num) engine.Num {
				x := n(c.cur[itNetIncome])
				return set(v, engine.EarningsYield(x, c.shares, c.factor, c.price), x, c.shares, c.factor, c.price)
			},
		},
		def{
			Indicator: ind("DIVIDEND_YIELD", "Dividend yield", engine.IndValuation, pct,
				"CASH_PER_SHARE_12M / PRICE (declared cash per share with prior_ex_date in the last 12 calendar months, split-adjusted)",
				[]string{"CASH_PER_SHARE_12M", "PRICE"}, ttmOnly, true),
			grp: grpValClass, static: true,
			eval: func(c *evalCtx, v []engine.Num) engine.Num {
				return set(v, engine.DividendYield(c.cash, c.price), c.cash, c.price)
			},
		},
		def{
			Indicator: ind("MARKET_CAP", "Market capitalization", engine.IndValuation, brl,
				"COMMON_SHARES x COMMON_PRICE + PREFERRED_SHARES x PREFERRED_PRICE (shares net of the treasury shares the share count's source gives, pro rata: the CVM's capital composition gives them, B3's listed-company data does not; when a class with shares has no price: (COMMON_SHARES + PREFERRED_SHARES) x UNIT_PRICE / UNIT_FACTOR)",
				[]string{"COMMON_SHARES", "COMMON_PRICE", "PREFERRED_SHARES", "PREFERRED_PRICE", "UNIT_PRICE", "UNIT_FACTOR"}, valFreqs, false),
			grp: grpValCompany, static: true,
			eval: func(c *evalCtx, v []engine.Num) engine.Num {
				m := c.mc
				return set(v, c.marketCap, m.cShares, m.cPrice, m.pShares, m.pPrice, m.uPrice, m.uFactor)
			},
		},
		def{
			Indicator: ind("ENTERPRISE_VALUE", "Enterprise value", engine.IndValuation, brl, "MARKET_CAP + NET_DEBT",
				[]string{"MARKET_CAP", "NET_DEBT"}, valFreqs, false),
			grp: grpValCompany,
			eval: func(c *evalCtx, v []engine.Num) engine.Num {
				return set(v, engine.EnterpriseValue(c.marketCap, c.netDebt()), c.marketCap, c.netDebt())
			},
		},
		def{
			Indicator: ind("EV_TO_EBITDA", "Enterprise value / EBITDA", engine.IndValuation, mul, "ENTERPRISE_VALUE / EBITDA",
				[]string{"ENTERPRISE_VALUE", "EBITDA"}, valFreqs, false),
			grp: grpValCompany, eval: evByItem(ebitdaItem),
		},
		def{
			Indicator: ind("EV_TO_EBIT", "Enterprise value / EBIT", engine.IndValuation, mul, "ENTERPRISE_VALUE / EBIT",
				[]string{"ENTERPRISE_VALUE", "EBIT"}, valFreqs, false),
			grp: grpValCompany, eval: evByItem(itemOf(itEBIT)),
		},
		def{
			Indicator: ind("EV_TO_SALES", "Enterprise value / sales", engine.IndValuation, mul, "ENTERPRISE_VALUE / NET_REVENUE",
				[]string{"ENTERPRISE_VALUE", "NET_REVENUE"}, valFreqs, false),
			grp: grpValCompany, eval: evByItem(itemOf(itRevenue)),
		},
	)
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
