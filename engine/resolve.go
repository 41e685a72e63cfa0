package engine

import (
	"fmt"
	"strings"
)

// ResolvedKind says which kind of identifier Resolve matched.
type ResolvedKind uint8

// Identifier kinds, in the order Resolve tries them.
const (
	ByTicker    ResolvedKind = iota + 1 // a current or former ticker
	BySymbol                            // a company's root symbol
	ByCompanyID                         // a company_id (or the company's CVM code)
)

// String returns "ticker", "symbol" or "company_id".
func (k ResolvedKind) String() string {
	switch k {
	case ByTicker:
		return "ticker"
	case BySymbol:
		return "symbol"
	case ByCompanyID:
		return "company_id"
	}
	return "unknown"
}

// Resolved is the result of Resolve.
type Resolved struct {
	Kind ResolvedKind
	// Company is the issuer; nil only for macro series (SELIC, IPCA, CDI, USD...).
	Company *Company
	// Issuer is the derived view of Company (nil when Company is nil).
	Issuer *Issuer
	// Security and Asset are set for ByTicker only: the CURRENT ticker's
	// security, also when a former ticker was given.
	Security *Security
	Asset    *Asset
	// Class is Security.StockType for ByTicker, "" otherwise.
	Class string
	// Renamed is true when the input was a former ticker of Asset.
	Renamed bool
}

// Resolve finds a company or ticker by any identifier the API accepts, in
// one call: a ticker (current or former, renames resolve to the current
// ticker), a company's root symbol, a company_id, or a CVM code. Matching
// ignores letter case and surrounding spaces, and a company_id may carry
// punctuation ("33.000.167/0001-01") and a CVM code leading zeros
// ("009512"). Tickers win over symbols, symbols
// over company ids. An unknown identifier returns an error wrapping
// ErrNotFound; an empty or over-long one wraps ErrInvalid.
//
// Resolve does not allocate when id is an upper-case current ticker,
// symbol or company_id.
func (d *Dataset) Resolve(id string) (Resolved, error) {
	if r, ok := d.resolve(id); ok {
		return r, nil
	}
	n := strings.ToUpper(strings.TrimSpace(id))
	if n == "" || len(n) > 64 {
		return Resolved{}, fmt.Errorf("identifier %q: %w", id, ErrInvalid)
	}
	if n != id {
		if r, ok := d.resolve(n); ok {
			return r, nil
		}
	}
	if digits := stripPunct(n); digits != "" {
		if digits != n {
			if i, ok := d.issuerByID.Get(digits); ok {
				return d.issuerResolved(ByCompanyID, i), nil
			}
		}
		if k := cvmKey(digits); k != n {
			if i, ok := d.issuerByCVM.Get(k); ok {
				return d.issuerResolved(ByCompanyID, i), nil
			}
		}
	}
	return Resolved{}, fmt.Errorf("identifier %q: %w", id, ErrNotFound)
}

// ResolveFund is Resolve restricted to listed funds (FII, ETF): any other
// match returns an error wrapping ErrNotFound.
func (d *Dataset) ResolveFund(id string) (Resolved, error) {
	r, err := d.Resolve(id)
	if err != nil {
		return r, err
	}
	if r.Issuer == nil || !r.Issuer.IsFund() {
		return Resolved{}, fmt.Errorf("fund %q: %w", id, ErrNotFound)
	}
	return r, nil
}

func (d *Dataset) resolve(id string) (Resolved, bool) {
	if i, ok := d.assetByTicker.Get(id); ok {
		a := &d.assets[i]
		r := Resolved{Kind: ByTicker, Security: a.Security, Asset: a, Class: a.StockType, Issuer: a.Issuer}
		if a.Issuer != nil {
			r.Company = a.Issuer.Company
		}
		r.Renamed = a.Ticker != id
		return r, true
	}
	if i, ok := d.issuerBySymbol.Get(id); ok {
		return d.issuerResolved(BySymbol, i), true
	}
	if i, ok := d.issuerByID.Get(id); ok {
		return d.issuerResolved(ByCompanyID, i), true
	}
	if i, ok := d.issuerByCVM.Get(id); ok {
		return d.issuerResolved(ByCompanyID, i), true
	}
	return Resolved{}, false
}

func (d *Dataset) issuerResolved(k ResolvedKind, i int32) Resolved {
	is := &d.issuers[i]
	return Resolved{Kind: k, Company: is.Company, Issuer: is}
}

// normID upper-cases and trims id and strips punctuation.
func normID(id string) string {
	return stripPunct(strings.ToUpper(strings.TrimSpace(id)))
}

// stripPunct keeps only ASCII letters and digits of s.
func stripPunct(s string) string {
	keep := true
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			keep = false
			break
		}
	}
	if keep {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) {
			b = append(b, s[i])
		}
	}
	return string(b)
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}
