package cvm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/pregao/pregao/engine"
)

// maxUnitShares bounds a unit's composition: no Brazilian unit holds more
// shares; a larger count is a misreading, not a unit.
const maxUnitShares = 1000

// UnitShares reads a unit's composition as the FCA writes it
// (Composicao_BDR_Unit, free text) and returns how many shares one unit
// holds. The terms are separated by "+", ",", ";", "/" or the word "e" and
// each is a count and what it counts: a share class ("ON", "PN", "PNA".."PNE",
// "ação ordinária", "ações preferenciais"), a share ticker ("KLBN3",
// "ENGI4", even of three letters: "ENG3") or shares ("3 ações"). Terms
// counting anything else (subscription receipts, bonuses) add nothing:
// "1 PN + 3 Recibos de Subscrição" is one share. Counts are digits or the
// Portuguese words for one to ten. ok is false when no term counts shares
// ("Vide item 9.1"), a count is not a whole number, or the total is not
// between 1 and 1000.
func UnitShares(text string) (n int, ok bool) {
	s := strings.ToUpper(foldString(text))
	for i := 1; i+1 < len(s); i++ {
		if (s[i] == ',' || s[i] == '.') && s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= '0' && s[i+1] <= '9' {
			return 0, false // a fraction of a share ("1,5 ON", "9.1")
		}
	}
	s = strings.NewReplacer("+", " | ", ",", " | ", ";", " | ", "/", " | ").Replace(s)
	words := strings.Fields(s)
	// Split into terms on "|" and the word "E".
	var terms [][]string
	cur := []string{}
	for _, w := range words {
		if w == "|" || w == "E" {
			if len(cur) > 0 {
				terms = append(terms, cur)
			}
			cur = []string{}
			continue
		}
		cur = append(cur, w)
	}
	if len(cur) > 0 {
		terms = append(terms, cur)
	}
	found := false
	for _, t := range terms {
		count, rest, isCount := unitCount(t)
		if !isCount {
			continue
		}
		if count < 0 {
			return 0, false // a fraction or a number too large
		}
		if !countsShares(rest) {
			continue
		}
		found = true
		n += count
		if n > maxUnitShares {
			return 0, false
		}
	}
	if !found || n < 1 {
		return 0, false
	}
	return n, true
}

var countWords = map[string]int{"UM": 1, "UMA": 1, "DOIS": 2, "DUAS": 2, "TRES": 3, "QUATRO": 4, "CINCO": 5,
	"SEIS": 6, "SETE": 7, "OITO": 8, "NOVE": 9, "DEZ": 10}

// unitCount reads the count a term starts with: its value (-1 when it is
// not a whole number within bounds) and the words after it; isCount is
// false when the term does not start with a count.
func unitCount(t []string) (count int, rest []string, isCount bool) {
	w := strings.Trim(t[0], "().:")
	if v, ok := countWords[w]; ok {
		return v, t[1:], true
	}
	if w == "" || !unicode.IsDigit(rune(w[0])) {
		return 0, nil, false
	}
	// "1ON": a count written against its class.
	i := 0
	for i < len(w) && w[i] >= '0' && w[i] <= '9' {
		i++
	}
	num, tail := w[:i], w[i:]
	if strings.HasPrefix(tail, ".") || strings.HasPrefix(tail, ",") {
		return -1, nil, true
	}
	v, err := strconv.Atoi(num)
	if err != nil || v > maxUnitShares {
		return -1, nil, true
	}
	rest = t[1:]
	if tail != "" {
		rest = append([]string{tail}, rest...)
	}
	return v, rest, true
}

// countsShares reports whether the words after a count name shares: a
// class, a share ticker or the word for shares; not a receipt, a right or
// a bonus.
func countsShares(rest []string) bool {
	if len(rest) == 0 {
		return false
	}
	w := strings.Trim(rest[0], "().:")
	switch w {
	case "ON", "PN", "PNA", "PNB", "PNC", "PND", "PNE":
		return true
	case "ACAO", "ACOES", "ORDINARIA", "ORDINARIAS", "PREFERENCIAL", "PREFERENCIAIS":
		return true
	}
	return shareTicker(w)
}

// shareTicker reports whether w is a share ticker: three or four letters
// or digits, then 3 (common) or 4 to 8 (preferred classes).
func shareTicker(w string) bool {
	if len(w) < 4 || len(w) > 5 {
		return false
	}
	c := w[len(w)-1]
	if c < '3' || c > '8' {
		return false
	}
	for i := 0; i < len(w)-1; i++ {
		if !(w[i] >= 'A' && w[i] <= 'Z' || i > 0 && w[i] >= '0' && w[i] <= '9') {
			return false
		}
	}
	return true
}

// UnitFactors returns the shares per unit the FCA declares
// (Composicao_BDR_Unit, read by UnitShares) for the units of the current
// listings (CurrentListings): by ticker, and by company when every unit
// row of the company declares the same composition (some FCAs write no
// real ticker on the unit's row: "000000"); and, sorted, the compositions
// it could not read ("CNPJ TICKER: text").
func UnitFactors(ls []Listing) (byTicker, byCompany map[string]int, unread []string) {
	byTicker, byCompany = map[string]int{}, map[string]int{}
	mixed := map[string]bool{}
	for _, l := range CurrentListings(ls) {
		if l.StockType != engine.ClassUnit || strings.TrimSpace(l.UnitComposition) == "" {
			continue
		}
		n, ok := UnitShares(l.UnitComposition)
		if !ok {
			unread = append(unread, fmt.Sprintf("%s %s: %q", l.CompanyID, l.Ticker, l.UnitComposition))
			continue
		}
		byTicker[l.Ticker] = n
		if prev, seen := byCompany[l.CompanyID]; seen && prev != n {
			mixed[l.CompanyID] = true
		}
		byCompany[l.CompanyID] = n
	}
	for id := range mixed {
		delete(byCompany, id)
	}
	sort.Strings(unread)
	return byTicker, byCompany, unread
}
