package engine

import "strings"

// classSuffixes in matching order (longest first where one is a prefix of
// another).
var classSuffixes = []struct{ suffix, class string }{
	{"_UNIT", ClassUnit},
	{"_PSA", ClassPSA},
	{"_PSB", ClassPSB},
	{"_PSC", ClassPSC},
	{"_PSD", ClassPSD},
	{"_PSE", ClassPSE},
	{"_BDR", ClassBDR},
	{"_CS", ClassCS},
	{"_PS", ClassPS},
}

// ClassSuffix returns the indicator id suffix of a share class: CS -> _CS,
// PS -> _PS, PSA.._PSE, UNIT -> _UNIT, BDR -> _BDR; "" for any other class
// (company-level indicators, FUND_UNIT, unknown). The specification does
// not show the suffix of preferred class E; _PSE is used. By-class
// indicators are computed for exactly the classes with a suffix.
func ClassSuffix(class string) string {
	for _, s := range classSuffixes {
		if s.class == class {
			return s.suffix
		}
	}
	return ""
}

// SplitClassSuffix splits a requested indicator id into its base id and
// share class: "PRICE_TO_EARNINGS_UNIT" -> ("PRICE_TO_EARNINGS", "UNIT").
// The suffix is matched ignoring letter case; class is returned in
// canonical form. An id without a class suffix returns (id, ""). It does
// not allocate.
func SplitClassSuffix(id string) (base, class string) {
	for _, s := range classSuffixes {
		if len(id) > len(s.suffix) && strings.EqualFold(id[len(id)-len(s.suffix):], s.suffix) {
			return id[:len(id)-len(s.suffix)], s.class
		}
	}
	return id, ""
}
