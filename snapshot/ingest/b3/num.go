package b3

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
)

// ParseNum parses a number written the Brazilian way: ',' is the decimal
// separator and '.' groups thousands ("4.355.174.839", "3,137",
// "18.673.489,42022432"). An empty or blank value is engine.Null.
//
// Without a comma, dots are thousands separators when every group after
// the first has exactly three digits. When only the last group is longer
// than three digits, the decimal comma was lost (a known quirk of an IBOV
// portfolio file: Redutor "18.296.80337677573"): the group's first three
// digits close the integer part and the rest are decimals, giving
// 18296803.37677573. A single dot followed by other than three digits is a
// decimal point ("0.5").
func ParseNum(s string) (engine.Num, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return engine.Null, nil
	}
	orig := s
	neg := false
	if s[0] == '-' || s[0] == '+' {
		neg = s[0] == '-'
		s = s[1:]
	}
	var intPart, frac string
	if i := strings.IndexByte(s, ','); i >= 0 {
		intPart, frac = s[:i], s[i+1:]
		if strings.IndexByte(frac, ',') >= 0 || strings.IndexByte(frac, '.') >= 0 {
			return engine.Null, fmt.Errorf("bad number %q", orig)
		}
		if strings.IndexByte(intPart, '.') >= 0 {
			g := strings.Split(intPart, ".")
			if !groups(g) {
				return engine.Null, fmt.Errorf("bad number %q: misplaced thousands separator", orig)
			}
			intPart = strings.Join(g, "")
		}
	} else if strings.IndexByte(s, '.') >= 0 {
		g := strings.Split(s, ".")
		last := g[len(g)-1]
		switch {
		case groups(g):
			intPart = strings.Join(g, "")
		case len(g) > 2 && len(last) > 3 && groups(append(g[:len(g)-1:len(g)-1], last[:3])):
			intPart = strings.Join(g[:len(g)-1], "") + last[:3]
			frac = last[3:]
		case len(g) == 2:
			intPart, frac = g[0], g[1]
		default:
			return engine.Null, fmt.Errorf("bad number %q", orig)
		}
	} else {
		intPart = s
	}
	if intPart == "" && frac == "" || !digitsOnly(intPart) || !digitsOnly(frac) {
		return engine.Null, fmt.Errorf("bad number %q", orig)
	}
	if intPart == "" {
		intPart = "0"
	}
	v, err := strconv.ParseFloat(intPart+"."+frac+"0", 64)
	if err != nil || math.IsInf(v, 0) {
		return engine.Null, fmt.Errorf("bad number %q", orig)
	}
	if neg {
		v = -v
	}
	return engine.Num(v), nil
}

// parseEnglishNum parses "1,243,177,587" or "16,036,751.16744128".
func parseEnglishNum(s string) (engine.Num, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return engine.Null, nil
	}
	t := strings.ReplaceAll(s, ",", "")
	if strings.Count(t, ".") > 1 {
		return engine.Null, fmt.Errorf("bad number %q", s)
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "eEnNiIxX_pP") {
		return engine.Null, fmt.Errorf("bad number %q", s)
	}
	return engine.Num(v), nil
}

// groups reports whether g are thousands groups: a 1-3 digit head then
// 3-digit groups.
func groups(g []string) bool {
	if len(g[0]) < 1 || len(g[0]) > 3 {
		return false
	}
	for _, x := range g[1:] {
		if len(x) != 3 {
			return false
		}
	}
	return true
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseDate parses dd/mm/yyyy, dd/mm/yy (20yy) or YYYY-MM-DD (a trailing
// "Thh:mm:ss" or " hh:mm:ss" is ignored). Empty is engine.NoDate.
func ParseDate(s string) (engine.Date, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return engine.NoDate, nil
	}
	var y, m, d int
	switch {
	case len(s) >= 10 && s[2] == '/' && s[5] == '/':
		d, m, y = atoi(s[0:2]), atoi(s[3:5]), atoi(s[6:10])
		if len(s) > 10 && s[10] != ' ' {
			return engine.NoDate, fmt.Errorf("bad date %q", s)
		}
	case len(s) == 8 && s[2] == '/' && s[5] == '/':
		d, m, y = atoi(s[0:2]), atoi(s[3:5]), atoi(s[6:8])
		if y >= 0 {
			y += 2000
		}
	case len(s) >= 10 && s[4] == '-' && s[7] == '-':
		y, m, d = atoi(s[0:4]), atoi(s[5:7]), atoi(s[8:10])
		if len(s) > 10 && s[10] != 'T' && s[10] != ' ' {
			return engine.NoDate, fmt.Errorf("bad date %q", s)
		}
	default:
		return engine.NoDate, fmt.Errorf("bad date %q (want dd/mm/yyyy)", s)
	}
	if y < 1900 || y > 9999 || m < 1 || m > 12 || d < 1 || d > engine.DaysIn(y, m) {
		return engine.NoDate, fmt.Errorf("bad date %q", s)
	}
	return engine.CivilDate(y, m, d), nil
}

func atoi(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		v = v*10 + int(s[i]-'0')
	}
	return v
}
