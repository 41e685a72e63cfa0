package assemble

import (
	"slices"
	"testing"

	"github.com/pregao/pregao/engine"
)

func TestNormName(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := normName(in); got != want {
			t.Errorf("normName(%q) = %q, want %q", in, got, want)
		}
	}
	f("Ambev S.A.", "AMBEVSA")
	f("ITAÚ UNIBANCO", "ITAUUNIBANCO")
	f("Cia. Ça", "CIACA")
	f("Raízen Energia S/A", "RAIZENENERGIASA")
	f("São Martinho", "SAOMARTINHO")
	f("CONSTRUTORA TENDA S/A", "CONSTRUTORATENDASA")
	f("BR 163 - Concessionária", "BR163CONCESSIONARIA")
	f("àâãä éêè íì óôõò úüù ç", "AAAAEEEIIOOOOUUUC")
	f("ÁÀÂÃÄ ÉÊÈ ÍÌ ÓÔÕÒ ÚÜÙ Ç", "AAAAAEEEIIOOOOUUUC")
	f("España", "ESPAÑA") // a letter outside Portuguese's accents stays, upper-cased
	f("a&b_c-d/e", "ABCDE")
	f("", "")
	f(" .,;- ", "")
}

func TestNameWords(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		if got := nameWords(in); !slices.Equal(got, want) {
			t.Errorf("nameWords(%q) = %q, want %q", in, got, want)
		}
	}
	f("Construtora Tenda S/A", "CONSTRUTORA", "TENDA", "S", "A")
	f("Via Brasil BR 163 Concessionária", "VIA", "BRASIL", "BR", "163", "CONCESSIONARIA")
	f("  Raízen-Energia  ", "RAIZEN", "ENERGIA")
	f("")
	f("--")
}

func TestHasRun(t *testing.T) {
	w := []string{"CONSTRUTORA", "TENDA", "S", "A"}
	f := func(run []string, want bool) {
		t.Helper()
		if got := hasRun(w, run); got != want {
			t.Errorf("hasRun(%q, %q) = %v", w, run, got)
		}
	}
	f([]string{"TENDA"}, true)
	f([]string{"TENDA", "S"}, true)
	f([]string{"CONSTRUTORA", "TENDA", "S", "A"}, true)
	f([]string{"TEND"}, false) // whole words only
	f([]string{"S", "TENDA"}, false)
	f([]string{"A", "X"}, false) // past the end
}

// registry returns companies as CVM spells their names, keyed by id.
func registry(cs ...engine.Company) map[string]*engine.Company {
	cos := map[string]*engine.Company{}
	for _, c := range cs {
		if c.Kind == "" {
			c.Kind = engine.KindCompany
		}
		cos[c.ID] = &c
	}
	return cos
}

// TestNameIndexFind checks the rules of nameIndex.find on registry names
// as CVM spells them.
func TestNameIndexFind(t *testing.T) {
	ix := newNameIndex(registry(
		engine.Company{ID: "33453598000123", Name: "RAÍZEN S.A.", TradingName: "RAÍZEN S.A.", Status: "ACTIVE"},
		engine.Company{ID: "08070508000178", Name: "RAÍZEN ENERGIA S.A.", Status: "ACTIVE"},
		engine.Company{ID: "71476527000135", Name: "CONSTRUTORA TENDA S/A", TradingName: "CONSTRUTORA TENDA S/A", Status: "ACTIVE"},
		engine.Company{ID: "11111111000111", Name: "CONCESSIONARIA VIA LAGOS S.A.", Status: "ACTIVE"},
		engine.Company{ID: "07526557000100", Name: "AMBEV S.A.", TradingName: "AMBEV", Status: "ACTIVE"},
		engine.Company{ID: "22222222000122", Name: "BANCO DO BRASIL S.A.", Status: "ACTIVE"},
		engine.Company{ID: "33333333000133", Name: "BRASIL AGRO S.A.", Status: "ACTIVE"},
		engine.Company{ID: "55555555000155", Name: "BRASIL TELECOM S.A.", Status: "ACTIVE"},
		engine.Company{ID: "44444444000144", Name: "ANTIGA TENDA S.A.", Status: "CANCELLED"},
		engine.Company{ID: "66666666000166", Name: "MAGAZINE LUIZA S.A.", TradingName: "MAGAZ LUIZA"},
		engine.Company{ID: "77777777000177", Name: "ÔMEGA GERAÇÃO S.A.", Status: "CANCELLED"},
		engine.Company{ID: "77777777000178", Name: "ÔMEGA ENERGIA S.A.", Status: "CANCELLED"},
		engine.Company{ID: "88888888000188", Name: "KAPPA FUNDO DE INVESTIMENTO", Kind: engine.KindFII, Status: "ACTIVE"},
		engine.Company{ID: "99999999000199", Name: "ZETA BDR INC", Kind: engine.KindBDR, Status: "ACTIVE"},
		// A cancelled registrant whose name equals the short name, and
		// the active one it became, found only by prefix.
		engine.Company{ID: "12121212000112", Name: "SIGMA PAPEIS", Status: "CANCELLED"},
		engine.Company{ID: "13131313000113", Name: "SIGMA PAPEIS E EMBALAGENS S.A.", Status: "ACTIVE"},
	))
	for _, c := range []struct {
		short, want, why string
	}{
		{"AMBEV", "07526557000100", "equal trading name"},
		{"AMBEV S.A.", "07526557000100", "equal legal name"},
		{"ambev", "07526557000100", "normalized before matching"},
		{"RAIZEN", "33453598000123", `name plus "SA" beats the longer prefix match`},
		{"RAIZEN ENERG", "08070508000178", "prefix of the legal name"},
		{"TENDA", "71476527000135", "whole word, the active one"},
		{"VIA", "", "too short for a word match"},
		{"BRASIL", "", "ambiguous: three active companies"},
		{"BANCO DO BRA", "22222222000122", "prefix"},
		{"MAGAZ LUIZA", "66666666000166", "trading name of a company of unknown status"},
		{"LUIZA", "66666666000166", "the one match, none active"},
		{"OMEGA", "", "ambiguous: two matches, none active"},
		{"OMEGA GERAC", "77777777000177", "prefix, accents folded"},
		{"KAPPA", "", "funds are not found by name"},
		{"SIGMA PAPEIS", "13131313000113", "the active registrant by prefix, not the cancelled one of equal name"},
		{"ZETA", "", "BDR issuers are not found by name"},
		{"XY", "", "fewer than 3 characters"},
		{"A.B", "", "fewer than 3 letters and digits"},
		{"", "", "empty"},
	} {
		if got := ix.find(c.short); got != c.want {
			t.Errorf("find(%q) = %q, want %q (%s)", c.short, got, c.want, c.why)
		}
	}
}
