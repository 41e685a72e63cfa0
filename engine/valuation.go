package engine

// The valuation formulas: the arithmetic of the catalog's price-derived
// indicators, shared by the ratio derivation (engine/ratios, at build
// time) and the screener's repricing (Screener.Priced, per cut-off), so
// that both compute a value the same way to the bit. Each product and
// quotient is rounded on its own (an explicit conversion): no platform
// fuses a multiply and an add into one rounding.

// MaxPriceAge is how many days before a valuation's date the close it uses
// may be: the last close on or before that date and at most MaxPriceAge
// days earlier, else none.
const MaxPriceAge = 92

// PerShare returns x / shares x factor: a company figure per share of a
// class (factor: shares per traded unit, 1 but for units). Null when x or
// shares is missing or shares is zero.
func PerShare(x, shares, factor Num) Num { return Num(Div(x, shares) * factor) }

// PriceMultiple returns price / PerShare(x, shares, factor): P/E, P/B,
// P/S, P/EBITDA, P/EBIT. Null when an input is missing or a divisor zero.
func PriceMultiple(price, x, shares, factor Num) Num {
	return validOrNull(Div(price, PerShare(x, shares, factor)))
}

// EarningsYield returns PerShare(x, shares, factor) / price.
func EarningsYield(x, shares, factor, price Num) Num {
	return validOrNull(Div(PerShare(x, shares, factor), price))
}

// DividendYield returns cash / price (cash: the declared cash per share of
// the last twelve months).
func DividendYield(cash, price Num) Num { return validOrNull(Div(cash, price)) }

// MarketCapInputs are a company's market capitalization inputs at one
// date: the catalog's MARKET_CAP variables and the total share count.
type MarketCapInputs struct {
	// CommonShares and PreferredShares are the class counts net of the
	// treasury shares (removed pro rata); Null without a share count.
	CommonShares, PreferredShares Num
	// CommonPrice is the close of the company's CS ticker, PreferredPrice
	// that of its most liquid preferred class's ticker; Null when missing.
	CommonPrice, PreferredPrice Num
	// UnitPrice and UnitFactor are the UNIT ticker's close and shares per
	// unit; Null when the company has none.
	UnitPrice, UnitFactor Num
	// Shares is common + preferred - treasury; Null without a share count.
	Shares Num
}

// MarketCap returns CommonShares x CommonPrice + PreferredShares x
// PreferredPrice (a class without shares needs no price); when a class
// with shares has no price, Shares x UnitPrice / UnitFactor. Null without
// a share count or when the needed prices are missing.
func MarketCap(m MarketCapInputs) Num {
	if !m.Shares.Valid() {
		return Null
	}
	okC := m.CommonShares == 0 || m.CommonPrice.Valid()
	okP := m.PreferredShares == 0 || m.PreferredPrice.Valid()
	if !okC || !okP {
		return validOrNull(Num(Div(m.Shares, m.UnitFactor) * m.UnitPrice))
	}
	mc := Num(0)
	if m.CommonShares > 0 {
		mc += Num(m.CommonShares * m.CommonPrice)
	}
	if m.PreferredShares > 0 {
		mc += Num(m.PreferredShares * m.PreferredPrice)
	}
	return validOrNull(mc)
}

// EnterpriseValue returns marketCap + netDebt.
func EnterpriseValue(marketCap, netDebt Num) Num { return validOrNull(marketCap + netDebt) }

// EVMultiple returns ev / x: EV/EBITDA, EV/EBIT, EV/sales.
func EVMultiple(ev, x Num) Num { return validOrNull(Div(ev, x)) }

// validOrNull maps infinities and NaN to Null.
func validOrNull(x Num) Num {
	if !x.Valid() {
		return Null
	}
	return x
}
