package engine

// Price rules: the one declaration of how a valuation indicator depends on
// a price. A catalog entry of engine/ratios declares its PriceRule; the
// ratio derivation writes the entry's variables, by-class flag and formula
// from it and computes the entry's points with Value and AppendVars. The
// screener's repricing (Screener.Priced) and the valuation at a past
// session (SessionValuationAt) read the rule back from the Dataset's
// catalog (Dataset.PriceRule) and compute with the same two methods, so
// the three paths give the same bits. A snapshot stores a rule as its
// entry's variables, which the rule writes: ParsePriceRule reads it back
// knowing no indicator id.

// PriceForm is the shape of a price-derived formula: which price divides
// which figure, per share of a class or for the whole company.
type PriceForm uint8

// The price forms. A by-class form is priced at the close of the class's
// ticker; a company form through the company's market capitalization.
const (
	// NoPrice: the indicator does not depend on a price.
	NoPrice PriceForm = iota
	// PriceToItem divides a class's price by Item per share: PRICE /
	// (ITEM / SHARES_OUTSTANDING x SHARE_FACTOR), by class
	// (PriceMultiple: P/E, P/B...).
	PriceToItem
	// ItemToPrice divides Item per share by a class's price: (ITEM /
	// SHARES_OUTSTANDING x SHARE_FACTOR) / PRICE, by class
	// (EarningsYield).
	ItemToPrice
	// CashToPrice divides the declared cash per share of twelve months by
	// a class's price: CASH_PER_SHARE_12M / PRICE, by class
	// (DividendYield).
	CashToPrice
	// MarketCapSum prices the company's share counts at its classes'
	// closes: COMMON_SHARES x COMMON_PRICE + PREFERRED_SHARES x
	// PREFERRED_PRICE, company level (MarketCap).
	MarketCapSum
	// EVSum adds the net debt to the market capitalization: MARKET_CAP +
	// NET_DEBT, company level (EnterpriseValue).
	EVSum
	// EVToItem divides the enterprise value by Item: ENTERPRISE_VALUE /
	// ITEM, company level (EVMultiple).
	EVToItem
)

// PriceRule declares how a valuation indicator is priced: its form and,
// for PriceToItem, ItemToPrice and EVToItem, the company figure the form
// divides or is divided by. The zero PriceRule prices nothing (a
// fundamental, listed-fund or unknown indicator).
type PriceRule struct {
	Form PriceForm
	// Item is the variable id of the figure (NET_INCOME, EQUITY,
	// EBITDA...): a company figure of the period, in BRL. Empty for the
	// forms without one.
	Item string
}

// priceVar is the role of one variable of a price rule's points.
type priceVar uint8

const (
	pvPrice           priceVar = iota // PRICE: the class's close, BRL
	pvItem                            // the rule's Item, BRL
	pvShares                          // SHARES_OUTSTANDING
	pvFactor                          // SHARE_FACTOR: shares per traded unit
	pvCash                            // CASH_PER_SHARE_12M, BRL per share
	pvCommonShares                    // COMMON_SHARES, net of treasury
	pvCommonPrice                     // COMMON_PRICE, BRL
	pvPreferredShares                 // PREFERRED_SHARES, net of treasury
	pvPreferredPrice                  // PREFERRED_PRICE, BRL
	pvUnitPrice                       // UNIT_PRICE, BRL
	pvUnitFactor                      // UNIT_FACTOR: shares per unit
	pvMarketCap                       // MARKET_CAP, BRL
	pvNetDebt                         // NET_DEBT, BRL
	pvEV                              // ENTERPRISE_VALUE: MARKET_CAP + NET_DEBT, BRL
)

// priceVarIDs are the variable ids of the roles (pvItem's is the rule's
// Item).
var priceVarIDs = [...]string{
	pvPrice: "PRICE", pvShares: "SHARES_OUTSTANDING", pvFactor: "SHARE_FACTOR",
	pvCash: "CASH_PER_SHARE_12M", pvCommonShares: "COMMON_SHARES", pvCommonPrice: "COMMON_PRICE",
	pvPreferredShares: "PREFERRED_SHARES", pvPreferredPrice: "PREFERRED_PRICE", pvUnitPrice: "UNIT_PRICE",
	pvUnitFactor: "UNIT_FACTOR", pvMarketCap: "MARKET_CAP", pvNetDebt: "NET_DEBT", pvEV: "ENTERPRISE_VALUE",
}

// priceForm declares one PriceForm.
type priceForm struct {
	vars    []priceVar // the variables of its points, in formula order
	byClass bool       // one point per share class; else company level
	formula [2]string  // the formula is formula[0] + Item + formula[1]
}

// priceForms declares every PriceForm; Value and inputs.get hold their
// arithmetic.
var priceForms = [...]priceForm{
	NoPrice: {},
	PriceToItem: {vars: []priceVar{pvPrice, pvItem, pvShares, pvFactor}, byClass: true,
		formula: [2]string{"PRICE / (", " / SHARES_OUTSTANDING x SHARE_FACTOR)"}},
	ItemToPrice: {vars: []priceVar{pvItem, pvShares, pvFactor, pvPrice}, byClass: true,
		formula: [2]string{"(", " / SHARES_OUTSTANDING x SHARE_FACTOR) / PRICE"}},
	CashToPrice: {vars: []priceVar{pvCash, pvPrice}, byClass: true,
		formula: [2]string{"CASH_PER_SHARE_12M / PRICE"}},
	MarketCapSum: {vars: []priceVar{pvCommonShares, pvCommonPrice, pvPreferredShares, pvPreferredPrice, pvUnitPrice, pvUnitFactor},
		formula: [2]string{"COMMON_SHARES x COMMON_PRICE + PREFERRED_SHARES x PREFERRED_PRICE"}},
	EVSum:    {vars: []priceVar{pvMarketCap, pvNetDebt}, formula: [2]string{"MARKET_CAP + NET_DEBT"}},
	EVToItem: {vars: []priceVar{pvEV, pvItem}, formula: [2]string{"ENTERPRISE_VALUE / "}},
}

// form returns r's declaration (NoPrice's for a form outside the
// enumeration).
func (r PriceRule) form() *priceForm {
	if int(r.Form) >= len(priceForms) {
		return &priceForms[NoPrice]
	}
	return &priceForms[r.Form]
}

// Priced reports whether r depends on a price.
func (r PriceRule) Priced() bool { return len(r.form().vars) > 0 }

// ByClass reports whether r's indicator has one point per share class
// (priced at the class's ticker), else one per company.
func (r PriceRule) ByClass() bool { return r.form().byClass }

// Static reports whether r reads no report figure (prices, share counts
// and cash actions only: MARKET_CAP, DIVIDEND_YIELD). The derivation
// publishes such points on their reference date, with the first
// valuation points of a period.
func (r PriceRule) Static() bool {
	return r.Priced() && !r.uses(pvItem) && !r.uses(pvNetDebt) && !r.uses(pvEV)
}

// CountsCash reports whether r reads the declared cash of the twelve
// months before the valuation (CashToPrice): its value as known at an
// earlier instant counts the cash versions current then
// (Dataset.DividendYieldAt).
func (r PriceRule) CountsCash() bool { return r.uses(pvCash) }

// Variables returns the variable ids of r's points, in formula order (a
// new slice; nil for a rule that prices nothing).
func (r PriceRule) Variables() []string {
	f := r.form()
	if len(f.vars) == 0 {
		return nil
	}
	out := make([]string, len(f.vars))
	for i, v := range f.vars {
		out[i] = priceVarIDs[v]
		if v == pvItem {
			out[i] = r.Item
		}
	}
	return out
}

// Formula returns r's formula in variable ids, followed by note in
// parentheses when note is not empty.
func (r PriceRule) Formula(note string) string {
	f := r.form()
	s := f.formula[0] + r.Item + f.formula[1]
	if note != "" {
		s += " (" + note + ")"
	}
	return s
}

// priceFormRoles[f] has bit v set when form f's points have a variable
// of role v.
var priceFormRoles = func() (m [len(priceForms)]uint16) {
	for f := range priceForms {
		for _, v := range priceForms[f].vars {
			m[f] |= 1 << v
		}
	}
	return m
}()

// uses reports whether r's points have a variable of role v.
func (r PriceRule) uses(v priceVar) bool {
	return int(r.Form) < len(priceFormRoles) && priceFormRoles[r.Form]&(1<<v) != 0
}

// holds reports whether vs has the length of r's variables.
func (r PriceRule) holds(vs []Num) bool { return r.Priced() && len(vs) == len(r.form().vars) }

// stored returns the variable of role v of a point of r (vs its
// variables); false when r has no such variable or vs is not r's.
func (r PriceRule) stored(vs []Num, v priceVar) (Num, bool) {
	if !r.holds(vs) {
		return Null, false
	}
	for i, x := range r.form().vars {
		if x == v {
			return vs[i], true
		}
	}
	return Null, false
}

// readFigures sets in's Item and NetDebt from a point of r (vs its
// variables) when r's points hold them: the period's figures, which a
// repricing keeps. It reports false, and sets nothing, when r's points
// hold one and vs is not a point of r.
func (r PriceRule) readFigures(vs []Num, in *PriceInputs) bool {
	if !r.uses(pvItem) && !r.uses(pvNetDebt) {
		return true
	}
	if !r.holds(vs) {
		return false
	}
	if x, ok := r.stored(vs, pvItem); ok {
		in.Item = x
	}
	if x, ok := r.stored(vs, pvNetDebt); ok {
		in.NetDebt = x
	}
	return true
}

// netDebtElsewhere reports whether r reads a net debt its points do not
// hold (EVToItem keeps the enterprise value, not its terms): the paths
// take it from the company's point that holds NET_DEBT
// (valuationRules.netDebt).
func (r PriceRule) netDebtElsewhere() bool { return r.uses(pvEV) && !r.uses(pvNetDebt) }

// PriceInputs are what a PriceRule computes from: one class's figures (a
// by-class rule) or one company's (a company rule) at one valuation
// date. A field the rule's form does not read is ignored.
type PriceInputs struct {
	Price  Num // BRL: the close of the class's ticker
	Item   Num // BRL: the company's figure named by the rule's Item
	Shares Num // shares outstanding: common + preferred - treasury
	Factor Num // shares per traded unit: the unit factor for UNIT, else 1
	Cash   Num // BRL per share: the declared cash of the twelve months
	// MarketCap is the company's market capitalization in BRL:
	// MarketCap(*Cap), computed once by the caller for the company's
	// rules.
	MarketCap Num
	NetDebt   Num // BRL
	// Cap holds MarketCapSum's variables (AppendVars reads it; nil: Null
	// variables). The caller owns it.
	Cap *MarketCapInputs
}

// nullInputs are PriceInputs with every figure missing.
var nullInputs = PriceInputs{Price: Null, Item: Null, Shares: Null, Factor: Null, Cash: Null, MarketCap: Null, NetDebt: Null}

// Value returns the value of r at in, with the valuation formulas of
// valuation.go (Null when an input is missing or a divisor zero, or r
// prices nothing).
func (r PriceRule) Value(in *PriceInputs) Num {
	switch r.Form {
	case PriceToItem:
		return PriceMultiple(in.Price, in.Item, in.Shares, in.Factor)
	case ItemToPrice:
		return EarningsYield(in.Item, in.Shares, in.Factor, in.Price)
	case CashToPrice:
		return DividendYield(in.Cash, in.Price)
	case MarketCapSum:
		return in.MarketCap
	case EVSum:
		return EnterpriseValue(in.MarketCap, in.NetDebt)
	case EVToItem:
		return EVMultiple(in.MarketCap+in.NetDebt, in.Item)
	}
	return Null
}

// AppendVars appends the variables of r's point at in to dst, in the
// order of Variables, and returns the extended slice.
func (r PriceRule) AppendVars(dst []Num, in *PriceInputs) []Num {
	for _, v := range r.form().vars {
		dst = append(dst, in.get(v))
	}
	return dst
}

// get returns the value of the variable of role v.
func (in *PriceInputs) get(v priceVar) Num {
	switch v {
	case pvPrice:
		return in.Price
	case pvItem:
		return in.Item
	case pvShares:
		return in.Shares
	case pvFactor:
		return in.Factor
	case pvCash:
		return in.Cash
	case pvMarketCap:
		return in.MarketCap
	case pvNetDebt:
		return in.NetDebt
	case pvEV:
		return in.MarketCap + in.NetDebt // unrounded, as EVToItem divides it
	}
	if in.Cap == nil {
		return Null
	}
	switch v {
	case pvCommonShares:
		return in.Cap.CommonShares
	case pvCommonPrice:
		return in.Cap.CommonPrice
	case pvPreferredShares:
		return in.Cap.PreferredShares
	case pvPreferredPrice:
		return in.Cap.PreferredPrice
	case pvUnitPrice:
		return in.Cap.UnitPrice
	case pvUnitFactor:
		return in.Cap.UnitFactor
	}
	return Null
}

// read sets the fields of in that a point of r holds (vs its variables):
// every role but ENTERPRISE_VALUE, which is derived, and the market
// capitalization's variables when in.Cap is set. It reports false, and
// sets nothing, when vs is not a point of r.
func (r PriceRule) read(vs []Num, in *PriceInputs) bool {
	if !r.holds(vs) {
		return false
	}
	for i, v := range r.form().vars {
		in.set(v, vs[i])
	}
	return true
}

// set sets the field of role v to x (nothing for pvEV, or for a market
// capitalization variable without Cap).
func (in *PriceInputs) set(v priceVar, x Num) {
	switch v {
	case pvPrice:
		in.Price = x
	case pvItem:
		in.Item = x
	case pvShares:
		in.Shares = x
	case pvFactor:
		in.Factor = x
	case pvCash:
		in.Cash = x
	case pvMarketCap:
		in.MarketCap = x
	case pvNetDebt:
		in.NetDebt = x
	}
	if in.Cap == nil {
		return
	}
	switch v {
	case pvCommonShares:
		in.Cap.CommonShares = x
	case pvCommonPrice:
		in.Cap.CommonPrice = x
	case pvPreferredShares:
		in.Cap.PreferredShares = x
	case pvPreferredPrice:
		in.Cap.PreferredPrice = x
	case pvUnitPrice:
		in.Cap.UnitPrice = x
	case pvUnitFactor:
		in.Cap.UnitFactor = x
	}
}

// ParsePriceRule returns the price rule whose Variables and ByClass are
// ind's, for a VALUATION indicator: how a catalog entry that a rule
// wrote (engine/ratios) reads back from a snapshot. It returns the zero
// PriceRule for any other indicator, which then keeps its values.
func ParsePriceRule(ind *Indicator) PriceRule {
	if ind.Kind != IndValuation {
		return PriceRule{}
	}
	for f := range priceForms {
		if r, ok := parseForm(PriceForm(f), ind); ok {
			return r
		}
	}
	return PriceRule{}
}

// parseForm returns the rule of form f that writes ind's variables.
func parseForm(f PriceForm, ind *Indicator) (PriceRule, bool) {
	pf := &priceForms[f]
	if len(pf.vars) == 0 || len(pf.vars) != len(ind.Variables) || pf.byClass != ind.ByClass {
		return PriceRule{}, false
	}
	r := PriceRule{Form: f}
	for i, v := range pf.vars {
		id := ind.Variables[i]
		switch {
		case v == pvItem && id != "":
			r.Item = id
		case v == pvItem || id != priceVarIDs[v]:
			return PriceRule{}, false
		}
	}
	return r, true
}

// valuationRules is a Dataset's catalog read as price rules, once at
// Build.
type valuationRules struct {
	of      []PriceRule // per catalog indicator
	byClass []int       // the priced by-class indicators, in catalog order
	// marketCap is the first MarketCapSum indicator (its points hold a
	// company's share counts by class), -1 when none.
	marketCap int
	// netDebt is the first company indicator whose points hold NET_DEBT,
	// -1 when none.
	netDebt int
}

// readPriceRules reads the price rules of cat.
func readPriceRules(cat []Indicator) valuationRules {
	v := valuationRules{of: make([]PriceRule, len(cat)), marketCap: -1, netDebt: -1}
	for k := range cat {
		r := ParsePriceRule(&cat[k])
		v.of[k] = r
		switch {
		case !r.Priced():
		case r.ByClass():
			v.byClass = append(v.byClass, k)
		case r.Form == MarketCapSum && v.marketCap < 0:
			v.marketCap = k
		case r.uses(pvNetDebt) && v.netDebt < 0:
			v.netDebt = k
		}
	}
	return v
}

// PriceRule returns the price rule of catalog indicator k (ParsePriceRule
// of Catalog()[k], read once at Build): the zero PriceRule when k prices
// nothing or is outside the catalog.
func (d *Dataset) PriceRule(k int) PriceRule {
	if k < 0 || k >= len(d.rules.of) {
		return PriceRule{}
	}
	return d.rules.of[k]
}
