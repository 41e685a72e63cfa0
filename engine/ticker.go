package engine

// ValidTicker reports whether s is a security's ticker as Pregão accepts
// it everywhere: the API's quote requests, the source bundle's validator
// and the importers of official files all call it, so a ticker one of them
// takes is taken by the others.
//
// The rule is B3's trading code of the cash market,
//
//	^[A-Z0-9]{4}[0-9]{0,2}$
//
// four capital letters or digits (the root, the issuer's symbol: PETR,
// B3SA, A1BB for a BDR), then zero to two digits (the class: 3 common, 4
// preferred, 11 unit, 34 BDR...): PETR4, TAEE11, A1BB34, and a bare root
// such as ABCD. It is byte-wise ASCII: no lower case, spaces or other
// letters (callers that ignore case, as the API's path does, upper-case
// first).
//
// Not tickers under this rule, and so neither served nor imported:
//   - the odd-lot market's codes, the standard code followed by F
//     (PETR4F: the same share in lots under 100; pregao import reads them
//     from COTAHIST only with --odd-lot and then lists them as tickers it
//     cannot import). No F is stripped: PETR4F is not PETR4;
//   - codes with a letter after the class (receipts and subscription
//     rights: BBFI11B, EQMA3B) and the longer codes of options and
//     forwards (PETRA245);
//   - macro series names (SELIC, IPCA, CDI, USD...), which the API and the bundle
//     accept as series names by rules of their own.
//
// It does not allocate.
func ValidTicker(s string) bool {
	if len(s) < 4 || len(s) > 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' || i < 4 && c >= 'A' && c <= 'Z' {
			continue
		}
		return false
	}
	return true
}
