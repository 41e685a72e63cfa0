package sectors

import (
	"strings"
	"testing"
)

func TestTaxonomyShape(t *testing.T) {
	nodes := Nodes()
	if len(nodes) < 150 {
		t.Fatalf("%d nodes, want the whole tree", len(nodes))
	}
	children := map[string]int{}
	for _, n := range nodes {
		if n.Level > 1 {
			p, ok := Lookup(n.ParentID)
			if !ok || p.Level != n.Level-1 {
				t.Errorf("%s: parent %s not at level %d", n.ID, n.ParentID, n.Level-1)
			}
			children[n.ParentID]++
		} else if n.ParentID != "" {
			t.Errorf("%s: level 1 with a parent", n.ID)
		}
	}
	for _, n := range nodes {
		if n.Level < 4 && children[n.ID] == 0 {
			t.Errorf("%s (level %d) has no children: every company needs one entry per level", n.ID, n.Level)
		}
	}
	for _, want := range []string{"FINANCIALS", "TRADITIONAL_BANKS", UnclassifiedID} {
		if _, ok := Lookup(want); !ok {
			t.Errorf("no node %s", want)
		}
	}
	p, ok := Path("TRADITIONAL_BANKS")
	if !ok || p[0].ID != "FINANCIALS" || p[1].ID != "FINANCIAL_INTERMEDIARIES" || p[2].ID != "BANKS" || p[3].ID != "TRADITIONAL_BANKS" {
		t.Errorf("Path(TRADITIONAL_BANKS) = %v %v", p, ok)
	}
	if _, ok := Path("FINANCIALS"); ok {
		t.Error("Path of a level-1 node should fail")
	}
}

// Every sub-industry's B3 classification maps back to it: the official
// writer and the importer agree.
func TestB3RoundTrip(t *testing.T) {
	for _, n := range Nodes() {
		if n.Level != 4 {
			continue
		}
		c, ok := B3Classification(n.ID)
		if !ok {
			t.Fatalf("%s: no B3 classification", n.ID)
		}
		got, ok := FromB3(strings.Split(c, " / "))
		if !ok || got != n.ID {
			t.Errorf("FromB3(%q) = %q, %v; want %s", c, got, ok, n.ID)
		}
	}
}

func TestFromB3(t *testing.T) {
	cases := []struct {
		in   []string
		want string
	}{
		// GetDetailsCompany of AMBEV (testdata/real b3-proventos).
		{[]string{"Consumo não Cíclico", "Bebidas", "Cervejas e Refrigerantes"}, "BREWERS_SOFT_DRINKS"},
		{[]string{"Financeiro", "Intermediários Financeiros", "Bancos"}, "TRADITIONAL_BANKS"},
		{[]string{"FINANCEIRO", " Intermediarios  Financeiros", "bancos "}, "TRADITIONAL_BANKS"},
		{[]string{"Petróleo, Gás e Biocombustíveis", "Petróleo, Gás e Biocombustíveis", "Exploração, Refino e Distribuição"}, "OIL_GAS_EXPLORATION_REFINING"},
		{[]string{"Utilidade Pública", "Energia Elétrica", "Energia Elétrica"}, "ELECTRIC_POWER"},
		// A subsector renamed by B3: the segment alone still decides
		// when it is unique.
		{[]string{"Materiais Básicos", "Mineração e Metais", "Minerais Metálicos"}, "METAL_MINING"},
		// Segment names shared by two sub-industries need the whole path.
		{[]string{"Outro", "Outro", "Serviços Diversos"}, ""},
		{[]string{"Saúde", "Comércio e Distribuição", "Medicamentos e Outros Produtos"}, "PHARMACIES_DRUG_DISTRIBUTION"},
		{[]string{"Saúde", "Medicamentos e Outros Produtos", "Medicamentos e Outros Produtos"}, "PHARMACEUTICALS"},
		{[]string{"Nada", "Nada", "Nada"}, ""},
		{nil, ""},
	}
	for _, c := range cases {
		got, ok := FromB3(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FromB3(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestFromCVM(t *testing.T) {
	cases := []struct{ in, want string }{
		{"Bancos", "TRADITIONAL_BANKS"},
		{"Energia Elétrica", "ELECTRIC_POWER"},
		{"ENERGIA ELETRICA", "ELECTRIC_POWER"},
		{"Emp. Adm. Part. - Energia Elétrica", "ELECTRIC_POWER"},
		{"Emp. Adm. Part.-Bolsas de Valores/Mercadorias e Futuros", "OTHER_FINANCIAL_SERVICES"},
		{"Emp. Adm. Part. - Serviços médicos", "HOSPITALS_DIAGNOSTICS"},
		{"Emp. Adm. Part. - Máqs., Equip., Veíc. e Peças", "INDUSTRIAL_MACHINERY"},
		{"Emp. Adm. Part. - Sem Setor Principal", "OTHER_ACTIVITIES"},
		{"Emp. Adm. Participações", "OTHER_ACTIVITIES"},
		{"Agricultura  (Açúcar, Álcool e Cana)", "AGRICULTURE"},
		{"Emp. Adm. Part. - Saneamento, Serv. Água e Gás", "GAS_DISTRIBUTION"},
		{"", ""},
		{"Astronáutica", ""},
	}
	for _, c := range cases {
		got, ok := FromCVM(c.in)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FromCVM(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestFundMaps(t *testing.T) {
	if id, _ := FromFII("Títulos e Val. Mob."); id != "FII_SECURITIES" {
		t.Errorf("FII securities = %q", id)
	}
	if id, _ := FromFII("Logistica"); id != "FII_LOGISTICS" {
		t.Errorf("FII logistics = %q", id)
	}
	if id, _ := FromETF("cripto"); id != "ETF_DIGITAL_ASSETS" {
		t.Errorf("ETF crypto = %q", id)
	}
	if _, ok := FromETF("MARS"); ok {
		t.Error("unknown geography mapped")
	}
	if got := Mapped(FII, "FII_HYBRID"); len(got) != 1 || got[0] != "Híbrido" {
		t.Errorf("Mapped(FII, FII_HYBRID) = %q", got)
	}
	// Several values, in table order; none for a sub-industry no value maps to.
	if got := Mapped(CVM, "REAL_ESTATE_DEVELOPMENT"); len(got) != 2 || got[0] != "Construção Civil, Mat. Constr. e Decoração" || got[1] != "Const. Civil, Mat. Const. e Decoração" {
		t.Errorf("Mapped(CVM, REAL_ESTATE_DEVELOPMENT) = %q", got)
	}
	if got := Mapped(ETF, "ETF_FIXED_INCOME"); len(got) != 0 {
		t.Errorf("Mapped(ETF, ETF_FIXED_INCOME) = %q", got)
	}
}

// The tables refuse the mistakes a reviewer of a change could miss.
func TestParseRefuses(t *testing.T) {
	good := "A | A | A\n B | B | B\n  C | C | C\n   " + UnclassifiedID + " | U | U\n"
	if _, err := parse(good, ""); err != nil {
		t.Fatalf("good tree refused: %v", err)
	}
	cases := map[string][2]string{
		"repeated id":        {good + "   " + UnclassifiedID + " | U | V\n", ""},
		"lower-case id":      {strings.Replace(good, "A | A", "a | A", 1), ""},
		"missing column":     {good + "   X | X\n", ""},
		"orphan":             {"  C | C | C\n" + good, ""},
		"childless parent":   {"Z | Z | Z\n" + good, ""},
		"no unclassified":    {"A | A | A\n B | B | B\n  C | C | C\n   D | D | D\n", ""},
		"unknown source":     {good, "xyz\tBancos\t" + UnclassifiedID},
		"target not level 4": {good, "cvm\tBancos\tA"},
		"repeated value":     {good, "cvm\tBancos\t" + UnclassifiedID + "\ncvm\tBANCOS\t" + UnclassifiedID},
		"repeated B3 path":   {good + "   D | D | U\n", ""},
	}
	for name, c := range cases {
		if _, err := parse(c[0], c[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
