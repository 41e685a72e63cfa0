package cvm

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

var (
	errNumber = errors.New("not a number")
	errDate   = errors.New("not a date (want YYYY-MM-DD or dd/mm/yyyy)")
	errInt    = errors.New("not an integer")
)

// ParseNum parses a decimal number as CVM and B3 files write it. An empty
// field is engine.Null (missing, never 0). Accepted forms:
//
//	1977997.0000000000   '.' decimal (DFP VL_CONTA, FII files)
//	-4E-06               exponent (FII percentages)
//	1234,56   1.234,56   ',' decimal; '.' then only groups thousands
//	1.234.567            several '.' and no ',': '.' groups thousands
//
// A single '.' without ',' is a decimal point: "1.234" is 1.234, not 1234.
// Where '.' groups thousands it must do so by threes and before the
// comma: "1,234.56" (English), "1.23,4" and "1.2.3" are errors, not
// 1.23456, 123.4 and 123. NaN and infinities are rejected.
func ParseNum(b []byte) (engine.Num, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return engine.Null, nil
	}
	var buf [64]byte
	commas, dots := 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9', c == '-', c == '+', c == 'e', c == 'E':
		case c == ',':
			commas++
		case c == '.':
			dots++
		default:
			return engine.Null, errNumber
		}
	}
	s := b
	if commas > 1 {
		return engine.Null, errNumber
	}
	if commas == 1 || dots > 1 {
		if len(b) > len(buf) || dots > 0 && !thousands(b) {
			return engine.Null, errNumber
		}
		n := 0
		for _, c := range b {
			switch c {
			case '.':
				continue
			case ',':
				c = '.'
			}
			buf[n] = c
			n++
		}
		s = buf[:n]
	}
	if bytes.IndexByte(s, '.') >= 0 && !bytes.ContainsAny(s, "eE") {
		// "1977997.0000000000": trailing zeros of the fraction only slow
		// the conversion down; one digit after the point is kept.
		for len(s) > 2 && s[len(s)-1] == '0' && s[len(s)-2] != '.' {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(s), len(s)), 64)
	if err != nil {
		return engine.Null, errNumber
	}
	return engine.Num(f), nil
}

// thousands reports whether the '.' of b group the digits before its
// decimal comma (or before its end, without one) by threes: an optional
// sign, one to three digits, then groups of '.' and three digits, and no
// '.' after the comma.
func thousands(b []byte) bool {
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if i := bytes.IndexByte(b, ','); i >= 0 {
		if bytes.IndexByte(b[i+1:], '.') >= 0 {
			return false
		}
		b = b[:i]
	}
	n, first := 0, true // digits in the current group; whether it is the head
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n++
		case c == '.' && (first && n >= 1 && n <= 3 || !first && n == 3):
			n, first = 0, false
		default:
			return false
		}
	}
	return first || n == 3
}

// ParseInt parses an optionally signed decimal integer; a trailing
// fraction of zeros ("1200.000") is accepted. Empty is an error.
func ParseInt(b []byte) (int64, error) {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '.'); i >= 0 {
		for _, c := range b[i+1:] {
			if c != '0' {
				return 0, errInt
			}
		}
		b = b[:i]
	}
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, errInt
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errInt
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, nil
}

// ParseDate parses YYYY-MM-DD (CVM) or dd/mm/yyyy (B3 and some CVM
// text). Empty is engine.NoDate. A date-time "YYYY-MM-DD hh:mm:ss" keeps
// its date part.
func ParseDate(b []byte) (engine.Date, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return engine.NoDate, nil
	}
	if len(b) > 10 && (b[10] == ' ' || b[10] == 'T') {
		b = b[:10]
	}
	if len(b) != 10 {
		return engine.NoDate, errDate
	}
	var y, m, d int
	var ok bool
	switch {
	case b[4] == '-' && b[7] == '-':
		y, ok = digits(b[0:4])
		if ok {
			m, ok = digits(b[5:7])
		}
		if ok {
			d, ok = digits(b[8:10])
		}
	case b[2] == '/' && b[5] == '/':
		d, ok = digits(b[0:2])
		if ok {
			m, ok = digits(b[3:5])
		}
		if ok {
			y, ok = digits(b[6:10])
		}
	}
	if !ok || m < 1 || m > 12 || d < 1 || d > engine.DaysIn(y, m) {
		return engine.NoDate, errDate
	}
	return engine.CivilDate(y, m, d), nil
}

func digits(b []byte) (int, bool) {
	v := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// Digits returns the decimal digits of s (a CNPJ "00.416.968/0001-01"
// becomes "00416968000101").
func Digits(s []byte) string {
	var buf [32]byte
	out := buf[:0]
	for _, c := range s {
		if c >= '0' && c <= '9' {
			out = append(out, c)
		}
	}
	return string(out)
}

// cnpj returns the 14 digits of a CNPJ field, or an error.
func cnpj(b []byte) (string, error) {
	d := Digits(b)
	if len(d) == 0 {
		return "", errors.New("empty CNPJ")
	}
	if len(d) > 14 {
		return "", fmt.Errorf("CNPJ %q has more than 14 digits", b)
	}
	for len(d) < 14 {
		d = "0" + d
	}
	return d, nil
}
