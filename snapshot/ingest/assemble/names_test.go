package assemble

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
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
	f("España", "ESPAÑA")    // a letter outside Portuguese's accents stays, upper-cased
	f("a&b_c-d/e", "AEBCDE") // & reads E: C&A is CEA in B3's short names
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

// realCad returns the rows of the real registry sample (2024-05-27) of
// the given CNPJs (as written, "60.746.948/0001-12"), plus extra rows in
// the official layout, read by the registry reader.
func realCad(tb testing.TB, cnpjs []string, extra ...string) []cvm.CadRow {
	tb.Helper()
	b, err := datafile.ReadFile(filepath.Join(realDir(tb), "cvm-cad/cad_cia_aberta.csv.zst"))
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.SplitAfter(datafile.Text(b), "\n")
	in := lines[0]
	for _, l := range lines[1:] {
		for _, c := range cnpjs {
			if strings.HasPrefix(l, c+";") {
				in += l
			}
		}
	}
	in += strings.Join(extra, "")
	rows, err := cvm.ReadCadRows(strings.NewReader(in), "cad_cia_aberta.csv", cvm.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return rows
}

// cadLine is one registry row in the official layout (47 columns): the
// fields given, the others empty.
func cadLine(cnpj, name, reg, cancel, sit, since, code, market, categ string) string {
	f := make([]string, 47)
	f[0], f[1], f[2], f[3], f[5], f[7], f[8], f[9] = cnpj, name, name, reg, cancel, sit, since, code
	f[11], f[12] = market, categ
	return strings.Join(f, ";") + "\r\n"
}

// TestNameRule asks the name rule about the shares of large issuers, on
// the real registry rows of each and of the namesakes that misled it:
// Bradesco's and Santander's leasing arms, cancelled companies of the
// same name, registrants of another line of business.
func TestNameRule(t *testing.T) {
	rows := realCad(t, []string{
		"60.746.948/0001-12", "47.509.120/0001-82", // Banco Bradesco; Bradesco Leasing (active, Categoria B)
		"90.400.888/0001-42", "00.589.171/0001-06", // Banco Santander (Brasil); its leasing arm, cancelled 2009
		"92.702.067/0001-96", "92.721.232/0001-57", // Banrisul S/A; Banrisul Armazéns Gerais
		"56.720.428/0001-63", "10.810.653/0001-90", // Romi S.A.; Inds Romi do Nordeste, cancelled 1988
		"11.725.176/0001-27", "33.528.720/0001-83", // Boa Vista Serviços (cancelled 2023); Boavista SA Cred Fin (1990)
		"15.912.764/0001-20", "05.730.375/0001-20", // Smiles S.A. (cancelled 2017); Smiles Fidelidade (2021)
		"00.000.000/0001-91", "28.195.667/0001-06", "33.376.989/0001-91", "07.628.528/0001-59", "11.395.624/0001-71",
		"02.558.157/0001-62", "10.760.260/0001-19", "09.346.601/0001-25", // every "BRASIL"
		"37.663.076/0001-07", "00.194.724/0001-13", // AES Brasil Energia; AES Brasil Operações
		"03.220.438/0001-73", "04.895.728/0001-80", // Equatorial Energia; Equatorial Pará
		"61.194.080/0001-58", "97.837.181/0001-47", // Duratex SA (cancelled 2009); Dexco, as Duratex became
		"33.042.730/0001-04", "47.960.950/0001-21", "07.859.971/0001-30", "30.306.294/0001-45", "73.178.600/0001-18",
	},
		// A leasing arm on the exchange in Categoria A: still not the bank's shares.
		cadLine("62.868.302/0001-33", "BRADESCO LEASING E ARRENDAMENTO S.A.", "2001-01-02", "", "ATIVO", "2001-01-02", "90001", "BOLSA", "Categoria A"),
	)
	d := engine.MakeDate(2022, 2, 4)
	cos, _, _ := cvm.CompaniesOn(rows, d)
	m := map[string]*engine.Company{}
	for i := range cos {
		m[cos[i].ID] = &cos[i]
	}
	qs := []nameQuery{
		{"BBDC", "BRADESCO", d}, {"SANB", "SANTANDER BR", d}, {"BRSR", "BANRISUL", d}, {"ROMI", "INDS ROMI", d},
		{"BOAS", "BOA VISTA", d}, {"SMLS", "SMILES", engine.MakeDate(2021, 3, 26)}, {"BBAS", "BRASIL", d},
		{"ABCB", "ABC BRASIL", d}, {"IRBR", "IRBBRASIL RE", d}, {"AGRO", "BRASILAGRO", d}, {"B3SA", "B3", d},
		{"VIVT", "TELEF BRASIL", d}, {"CVCB", "CVC BRASIL", d}, {"AESB", "AES BRASIL", d}, {"EQTL", "EQUATORIAL", d},
		{"DTEX", "DURATEX", engine.MakeDate(2021, 6, 25)}, {"VIIA", "VIA", d}, {"CSNA", "SID NACIONAL", d},
		{"MGLU", "MAGAZ LUIZA", d}, {"TAEE", "TAESA", d}, {"BPAC", "BTGP BANCO", d}, {"CYRE", "CYRELA REALT", d},
	}
	got := newNameIndex(m, rows).resolve(qs)
	for _, c := range []struct{ code, want, why string }{
		{"BBDC", "60746948000112", "the bank, not a leasing arm (Categoria B, or lacking the code's second B)"},
		{"SANB", "90400888000142", "abbreviated words; the leasing arm was cancelled in 2009"},
		{"BRSR", "92702067000196", "equal trading name BANRISUL S/A over Banrisul Armazéns Gerais"},
		{"ROMI", "56720428000163", "generic INDS left out; the namesake was cancelled in 1988"},
		{"BOAS", "11725176000127", "active on the day, cancelled in 2023"},
		{"SMLS", "05730375000120", "active when SMLS3 last traded; Smiles S.A. was cancelled in 2017"},
		{"BBAS", "00000000000191", "whole word with the code in the name; ABC, IRB and B3 are taken by their own codes"},
		{"ABCB", "28195667000106", ""}, {"IRBR", "33376989000191", ""}, {"AGRO", "07628528000159", ""}, {"B3SA", "09346601000125", ""},
		{"VIVT", "02558157000162", "abbreviated words, no code in the name"},
		{"CVCB", "10760260000119", ""},
		{"AESB", "", "two registrants alike: ambiguous"},
		{"EQTL", "03220438000173", "fewer words left over than Equatorial Pará Distribuidora de Energia"},
		{"DTEX", "", "no registrant: Duratex SA was cancelled in 2009, Dexco's name no longer says Duratex"},
		{"VIIA", "", "one short word is never found abbreviated"},
		{"CSNA", "33042730000104", ""}, {"MGLU", "47960950000121", ""},
		{"TAEE", "07859971000130", "initials with the code: Transmissora Aliança de Energia Elétrica S.A."},
		{"BPAC", "30306294000145", "words of the name in another order, with the code"},
		{"CYRE", "73178600000118", "words of the name in order"},
	} {
		if a := got[c.code]; a.id != c.want {
			t.Errorf("%s: %q, want %q (%s); tied %d", c.code, a.id, c.want, c.why, len(a.tied))
		}
	}
	if a := got["AESB"]; len(a.tied) != 2 {
		t.Errorf("AESB tied %d", len(a.tied))
	}
	// Without the registry rows, the statuses alone (the name rule of an
	// import without --cad, from B3's details): an active company is found.
	only := newNameIndex(registry(engine.Company{ID: "1", Name: "ALFA S.A.", Status: "ACTIVE"},
		engine.Company{ID: "2", Name: "ALFA VELHA S.A.", Status: "CANCELLED"}), nil).resolve([]nameQuery{{"ALFA", "ALFA", d}})
	if only["ALFA"].id != "1" {
		t.Errorf("without rows: %+v", only["ALFA"])
	}
}

func TestShortNameLevels(t *testing.T) {
	f := func(short, name, code string, want matchLevel) {
		t.Helper()
		s := newShortName(short)
		n := newRegName(name)
		if got := n.level(&s, code); got != want {
			t.Errorf("%q vs %q: %v, want %v", short, name, got, want)
		}
	}
	f("AMBEV S/A", "AMBEV S.A.", "ABEV", matchEqual)
	f("RAIZEN", "RAÍZEN S.A.", "RAIZ", matchEqual)
	f("LOCALIZA", "LOCALIZA RENT A CAR SA", "RENT", matchPrefix)
	f("BRASIL", "BRASILAGRO CIA BRAS DE PROP AGRICOLAS", "BBAS", noMatch) // inside a word
	f("INFRACOMM", "INFRACOMMERCE CXAAS S.A.", "IFCM", matchPrefix)       // 8 characters or more
	f("JALLESMACHAD", "JALLES MACHADO S.A.", "JALL", matchPrefix)         // NOMRES's 12 characters
	f("BRADESCO", "BANCO BRADESCO S.A.", "BBDC", matchWords)
	f("ALFA INVEST", "BANCO ALFA DE INVESTIMENTO S.A.", "BRIV", matchAbbrev)
	f("SID NACIONAL", "CIA SIDERURGICA NACIONAL", "CSNA", matchAbbrev)
	f("VIA", "CVC BRASIL OPERADORA E AGÊNCIA DE VIAGENS SA", "VIIA", noMatch)
	f("JOAO CONSTR", "JOAO FORTES CONSTRUTORA S.A.", "XXXX", matchContains)
	f("BR PARTNERS", "BR ADVISORY PARTNERS PARTICIPACOES S.A.", "BRBI", matchContains) // whole words (BR too short as a prefix)
	f("INTER CO", "INTERNATIONAL MEAL COMPANY ALIMENTAÇÃO S.A.", "INBR", noMatch)
	f("BTGP BANCO", "BANCO BTG PACTUAL S/A", "BPAC", matchContains)
	f("PETROBRAS BR", "PETRÓLEO BRASILEIRO S.A. - PETROBRAS", "BRDT", noMatch) // out of order without the code
	f("INDS ROMI", "ROMI S.A.", "ROMI", matchLoose)
	f("COGNA ON", "COGNA EDUCAÇÃO S.A.", "COGN", matchLoose) // a share class in the short name
	f("TAESA", "TRANSMISSORA ALIANÇA DE ENERGIA ELÉTRICA S.A.", "TAEE", matchLoose)
	f("VIA", "VIVER INCORPORADORA E CONSTRUTORA S.A", "VIIA", noMatch) // initials need 4 letters
	f("", "ALFA", "ALFA", noMatch)
}

// FuzzNameLevel matches any short name against any name: no panic, a
// level in range, and a name always matches itself.
func FuzzNameLevel(f *testing.F) {
	f.Add("BTGP BANCO", "BANCO BTG PACTUAL S/A", "BPAC")
	f.Add("TAESA", "TRANSMISSORA ALIANÇA DE ENERGIA ELÉTRICA S.A.", "TAEE")
	f.Add("INDS ROMI", "ROMI S.A.", "ROMI")
	f.Add("", "", "")
	f.Add("S.A.", "---", "\xff")
	f.Fuzz(func(t *testing.T, short, name, code string) {
		s := newShortName(short)
		n := newRegName(name)
		l := n.level(&s, code)
		if l < noMatch || l > matchEqual {
			t.Fatalf("level %d", l)
		}
		_ = l.String()
		if n.extra(&s) < 0 {
			t.Fatal("negative extra")
		}
		self := newShortName(name)
		if n.key != "" && n.level(&self, code) != matchEqual {
			t.Fatalf("%q does not equal itself", name)
		}
	})
}
