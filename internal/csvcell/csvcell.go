// Package csvcell keeps a CSV's text cells from being read as formulas:
// a spreadsheet runs a cell that begins with =, +, -, @, a tab or a
// carriage return (CSV injection). The API's CSV answers (httpapi) and
// the flat files' CSV (snapshot/flatfiles) write their text cells
// through Safe. It imports nothing of ours.
package csvcell

import "strings"

// Safe returns s as a CSV cell that no spreadsheet reads as a formula:
// text that begins with =, +, -, @, a tab or a carriage return gets a
// leading apostrophe (=HYPERLINK(…) becomes '=HYPERLINK(…)), unless it
// is a plain decimal number (-1.5, +2), which is sent as given. Other text
// is returned as is, without allocating.
func Safe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
	default:
		return s
	}
	if PlainNumber(s) {
		return s
	}
	return "'" + s
}

// PlainNumber reports whether s is a decimal number: an optional sign,
// digits, at most one point among them, an optional exponent (1e-5).
func PlainNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	digits, dot := 0, false
	for i := 0; i < len(mant); i++ {
		switch c := mant[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	if digits == 0 {
		return false
	}
	if !hasExp {
		return true
	}
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	if exp == "" {
		return false
	}
	for i := 0; i < len(exp); i++ {
		if exp[i] < '0' || exp[i] > '9' {
			return false
		}
	}
	return true
}
