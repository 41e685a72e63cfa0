package demo

import (
	"math/rand/v2"
	"strconv"
)

// cnpjCheckDigits returns the two check digits of the 12 leading digits of
// a CNPJ (each byte '0'..'9').
func cnpjCheckDigits(base []byte) (byte, byte) {
	w1 := [12]int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	w2 := [13]int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	dv := func(sum int) byte {
		r := sum % 11
		if r < 2 {
			return '0'
		}
		return byte('0' + 11 - r)
	}
	s := 0
	for i := 0; i < 12; i++ {
		s += int(base[i]-'0') * w1[i]
	}
	d1 := dv(s)
	s = 0
	for i := 0; i < 12; i++ {
		s += int(base[i]-'0') * w2[i]
	}
	s += int(d1-'0') * w2[12]
	return d1, dv(s)
}

// ValidCNPJ reports whether s is 14 digits with correct check digits.
func ValidCNPJ(s string) bool {
	if len(s) != 14 {
		return false
	}
	for i := 0; i < 14; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	d1, d2 := cnpjCheckDigits([]byte(s))
	return s[12] == d1 && s[13] == d2
}

// newCNPJ returns a fresh head-office CNPJ (branch 0001) not in used.
func newCNPJ(r *rand.Rand, used map[string]bool) string {
	for {
		b := make([]byte, 14)
		for i := 0; i < 8; i++ {
			b[i] = byte('0' + r.IntN(10))
		}
		if b[0] == '0' && b[1] == '0' {
			continue
		}
		copy(b[8:], "0001")
		b[12], b[13] = cnpjCheckDigits(b)
		s := string(b)
		if !used[s] {
			used[s] = true
			return s
		}
	}
}

// isinCheckDigit returns the ISO 6166 check digit of the 11 leading
// characters (letters become two digits, A=10; then Luhn).
func isinCheckDigit(s string) byte {
	digits := make([]byte, 0, 24)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			digits = strconv.AppendInt(digits, int64(c-'A'+10), 10)
		} else {
			digits = append(digits, c)
		}
	}
	sum := 0
	double := true
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return byte('0' + (10-sum%10)%10)
}

// ValidISIN reports whether s is a 12-character ISIN with a correct check digit.
func ValidISIN(s string) bool {
	if len(s) != 12 {
		return false
	}
	for i := 0; i < 11; i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return isinCheckDigit(s[:11]) == s[11]
}

// makeISIN builds a Brazilian ISIN from a root and a 5-character B3 asset
// code (ACNOR for ON shares, ACNPR for PN, ACNPA, ACNPB, CDAM1 for units,
// CTF00 for fund quotas, BDR00 for receipts).
func makeISIN(root, asset string) string {
	s := "BR" + root + asset
	return s + string(isinCheckDigit(s))
}
