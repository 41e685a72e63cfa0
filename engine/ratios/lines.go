package ratios

import (
	"math"
	"strings"

	"github.com/pregao/pregao/engine"
)

// Items of the ratio engine: flows first (summed over quarters), then
// balances (point in time).
const (
	itRevenue = iota
	itCOGS
	itGross
	itEBIT
	itFinExp
	itPreTax
	itTaxes
	itNetIncome
	itDA         // depreciation and amortization, magnitude (DVA, else DFC)
	itDAFallback // from the DFC add-backs
	itJCP
	itDividends
	nFlows
)

const (
	itAssets = nFlows + iota
	itCurAssets
	itCash
	itSTInvest
	itInventories
	itCurLiab
	itSTDebt
	itLTDebt
	itEquity
	nItems
)

// vals holds one value per item; NaN is missing.
type vals [nItems]float64

var nanVals = func() (v vals) {
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}()

// itemLines maps items to standard line ids.
var itemLines = map[int]string{
	itRevenue: "NET_REVENUE", itCOGS: "COST_OF_GOODS_SOLD", itGross: "GROSS_PROFIT", itEBIT: "EBIT",
	itFinExp: "FINANCIAL_EXPENSES", itPreTax: "PRE_TAX_INCOME", itTaxes: "INCOME_TAXES", itNetIncome: "NET_INCOME",
	itDA: "DEPRECIATION_AMORTIZATION", itJCP: "INTEREST_ON_EQUITY", itDividends: "DIVIDENDS",
	itAssets: "TOTAL_ASSETS", itCurAssets: "CURRENT_ASSETS", itCash: "CASH_AND_EQUIVALENTS",
	itSTInvest: "SHORT_TERM_INVESTMENTS", itInventories: "INVENTORIES", itCurLiab: "CURRENT_LIABILITIES",
	itSTDebt: "SHORT_TERM_DEBT", itLTDebt: "LONG_TERM_DEBT", itEquity: "EQUITY",
}

// extractor maps one statement's standardized values onto items.
type extractor struct {
	slots []int    // items this statement owns (reset on each new version)
	pairs [][2]int // item, position in the statement's lines (engine.LinesFor)
	dfc   bool
}

// extractors holds the extractor of every statement that carries items,
// keyed by statement (DFC_MD and DFC_MI share their lines).
var extractors = compileExtractors()

func compileExtractors() map[string]*extractor {
	m := map[string]*extractor{}
	for _, st := range engine.Statements {
		e := &extractor{}
		for pos, l := range engine.LinesFor(st) {
			for it, id := range itemLines {
				if l.ID == id {
					e.pairs = append(e.pairs, [2]int{it, pos})
					e.slots = append(e.slots, it)
				}
			}
		}
		if st == "DFC_MI" || st == "DFC_MD" {
			e.dfc = true
			e.slots = append(e.slots, itDAFallback)
		}
		if len(e.slots) > 0 {
			m[st] = e
		}
	}
	return m
}

// apply replaces the items owned by r's statement in v with r's values.
func (e *extractor) apply(r *engine.Report, v *vals) {
	for _, it := range e.slots {
		v[it] = math.NaN()
	}
	var buf [64]engine.Num
	out := engine.AppendStandardized(buf[:0], r)
	for _, p := range e.pairs {
		x := float64(out[p[1]])
		if p[0] == itDA {
			x = math.Abs(x)
		}
		v[p[0]] = x
	}
	if e.dfc {
		v[itDAFallback] = dfcDA(r.AccountList())
	}
}

// dfcDA sums the DFC add-backs under 6.01.01 whose name mentions
// depreciation or amortization, as a magnitude; NaN when there is none.
func dfcDA(accounts engine.AccountList) float64 {
	sum, found := 0.0, false
	for i := range accounts.Len() {
		a := accounts.At(i)
		if !strings.HasPrefix(a.Code(), "6.01.01.") || strings.Count(a.Code(), ".") != 3 || !a.Value.Valid() {
			continue
		}
		name := strings.ToLower(a.Name())
		if strings.Contains(name, "deprecia") || strings.Contains(name, "amortiza") || strings.Contains(name, "exaust") {
			sum += float64(a.Value)
			found = true
		}
	}
	if !found {
		return math.NaN()
	}
	return math.Abs(sum)
}
