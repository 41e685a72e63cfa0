package b3

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
)

// fold returns s in lower case with the Portuguese accents removed, for
// matching column titles ("Código" -> "codigo").
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case 'á', 'à', 'â', 'ã', 'Á', 'À', 'Â', 'Ã':
			r = 'a'
		case 'é', 'ê', 'É', 'Ê':
			r = 'e'
		case 'í', 'Í':
			r = 'i'
		case 'ó', 'ô', 'õ', 'Ó', 'Ô', 'Õ':
			r = 'o'
		case 'ú', 'ü', 'Ú', 'Ü':
			r = 'u'
		case 'ç', 'Ç':
			r = 'c'
		case utf8.RuneError:
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// ClassOf maps a B3 share-type label ("ON", "PN", "PNA"... "UNT", "CI",
// "DRN"; extra words such as "ON      NM" are ignored) to an engine.Class*
// constant, or "" when it is none of them.
func ClassOf(typ string) string {
	f := strings.Fields(typ)
	if len(f) == 0 {
		return ""
	}
	switch f[0] {
	case "ON":
		return engine.ClassCS
	case "PN":
		return engine.ClassPS
	case "PNA":
		return engine.ClassPSA
	case "PNB":
		return engine.ClassPSB
	case "PNC":
		return engine.ClassPSC
	case "PND":
		return engine.ClassPSD
	case "PNE":
		return engine.ClassPSE
	case "UNT":
		return engine.ClassUnit
	case "CI":
		return engine.ClassFundUnit
	case "DR1", "DR2", "DR3", "DRN", "BDR":
		return engine.ClassBDR
	}
	return ""
}
