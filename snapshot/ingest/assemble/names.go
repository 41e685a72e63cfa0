package assemble

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/pregao/pregao/engine"
)

// normName folds a name to upper-case letters and digits for matching
// ("Ambev S.A." -> "AMBEVSA"): the accented letters of Portuguese become
// their ASCII letter ("Itaú" -> "ITAU"), other letters are upper-cased,
// everything else (spaces, punctuation) is dropped.
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 32)
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127 && unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(foldRune(r)))
		}
	}
	return b.String()
}

func foldRune(r rune) rune {
	switch unicode.ToLower(r) {
	case 'á', 'à', 'â', 'ã', 'ä':
		return 'a'
	case 'é', 'ê', 'è':
		return 'e'
	case 'í', 'ì':
		return 'i'
	case 'ó', 'ô', 'õ', 'ò':
		return 'o'
	case 'ú', 'ü', 'ù':
		return 'u'
	case 'ç':
		return 'c'
	}
	return r
}

// nameIndex finds the one registry company whose trading or legal name
// matches a COTAHIST short name (NOMRES, 12 characters at most).
type nameIndex struct {
	keys  [][2]string // normalized trading name, legal name
	words [][]string  // each name's words, normalized (trading name's, then legal name's)
	ids   []string
	act   []bool
}

// newNameIndex indexes the companies of kind COMPANY among cos (funds and
// BDR issuers are never found by name).
func newNameIndex(cos map[string]*engine.Company) *nameIndex {
	ix := &nameIndex{}
	ids := make([]string, 0, len(cos))
	for id, c := range cos {
		if c.Kind == engine.KindCompany {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := cos[id]
		ix.keys = append(ix.keys, [2]string{normName(c.TradingName), normName(c.Name)})
		ix.words = append(ix.words, append(nameWords(c.TradingName), nameWords(c.Name)...))
		ix.ids = append(ix.ids, id)
		ix.act = append(ix.act, c.Status == "ACTIVE")
	}
	return ix
}

// nameWords splits a name into normalized words ("Construtora Tenda
// S/A" -> CONSTRUTORA, TENDA, S, A).
func nameWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if n := normName(w); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// find returns the company whose name (normalized), by the first rule
// that applies:
//  1. equals short;
//  2. equals short followed by the corporate form "SA" ("RAIZEN" ->
//     "Raízen S.A.", not "Raízen Energia S.A.");
//  3. starts with short;
//  4. for a short name of 5 characters or more, has its words as a run of
//     whole words ("TENDA" -> "Construtora Tenda S/A"; "VIA" is too short
//     to tell "Via S.A." from "Via Brasil BR 163 Concessionária");
//
// A cancelled (or suspended) registrant is never preferred to an active
// one: the rules are tried first for the one active company they match,
// and only when no rule matches an active company, for the one company
// they match. Else "" (nothing or ambiguous). A short name of fewer than
// 3 letters and digits finds nothing.
func (ix *nameIndex) find(short string) string {
	n := normName(short)
	if len(n) < 3 {
		return ""
	}
	key := func(match func(k string) bool) func(int) bool {
		return func(i int) bool { return match(ix.keys[i][0]) || match(ix.keys[i][1]) }
	}
	rules := []func(int) bool{
		key(func(k string) bool { return k == n }),
		key(func(k string) bool { return k == n+"SA" }),
		key(func(k string) bool { return k != "" && strings.HasPrefix(k, n) }),
	}
	if sw := nameWords(short); len(n) >= 5 && len(sw) > 0 {
		rules = append(rules, func(i int) bool { return hasRun(ix.words[i], sw) })
	}
	for _, activeOnly := range []bool{true, false} {
		for _, r := range rules {
			if id := ix.pickBy(r, activeOnly); id != "" {
				return id
			}
		}
	}
	return ""
}

// hasRun reports whether run occurs in words as consecutive elements.
func hasRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// pickBy returns the one active company matching when activeOnly is set;
// otherwise the one company matching when none of the matches is active.
// Else "".
func (ix *nameIndex) pickBy(match func(i int) bool, activeOnly bool) string {
	var all, active []string
	for i := range ix.keys {
		if match(i) {
			all = append(all, ix.ids[i])
			if ix.act[i] {
				active = append(active, ix.ids[i])
			}
		}
	}
	switch {
	case activeOnly && len(active) == 1:
		return active[0]
	case !activeOnly && len(active) == 0 && len(all) == 1:
		return all[0]
	}
	return ""
}
