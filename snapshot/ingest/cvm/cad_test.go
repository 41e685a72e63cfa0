package cvm

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

const cadFile = "cvm-cad/cad_cia_aberta.csv.zst"

func TestCadRealRows(t *testing.T) {
	var st Stats
	rows, err := ReadCadRows(bytes.NewReader(readReal(t, cadFile)), "cad_cia_aberta.csv", Options{Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2604 || st.Rows != 2604 || st.Skipped != 0 {
		t.Fatalf("rows %d, stats %+v; want 2604", len(rows), st)
	}
	count := map[string]int{}
	for _, r := range rows {
		count[r.Company.Status]++
	}
	if count["ACTIVE"] != 778 || count["CANCELLED"] != 1823 || count["SUSPENDED"] != 3 {
		t.Errorf("status counts %v; want 778 ACTIVE, 1823 CANCELLED, 3 SUSPENDED", count)
	}
}

func TestCadReal(t *testing.T) {
	comps, unmapped, err := ReadCad(bytes.NewReader(readReal(t, cadFile)), "cad_cia_aberta.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2,475 distinct CNPJs (the registry repeats some).
	if len(comps) != 2475 {
		t.Errorf("%d companies, want 2475", len(comps))
	}
	for i := 1; i < len(comps); i++ {
		if comps[i-1].ID >= comps[i].ID {
			t.Fatalf("not sorted/unique at %d: %s %s", i, comps[i-1].ID, comps[i].ID)
		}
	}
	find := func(id string) *engine.Company {
		for i := range comps {
			if comps[i].ID == id {
				return &comps[i]
			}
		}
		t.Fatalf("company %s not found", id)
		return nil
	}
	// 33.000.167/0001-01;PETRÓLEO BRASILEIRO  S.A.  - PETROBRAS;PETROBRAS;1977-07-20;1953-10-03;;;ATIVO;1977-07-20;9512;Petróleo e Gás;...
	p := find("33000167000101")
	want := engine.Company{
		ID: "33000167000101", CVMCode: "9512", Name: "PETRÓLEO BRASILEIRO  S.A.  - PETROBRAS", TradingName: "PETROBRAS",
		Kind: engine.KindCompany, SubIndustryID: "OIL_GAS_EXPLORATION_REFINING", Employees: -1, FreeFloat: p.FreeFloat,
		Address: engine.Address{Line1: "Av. República do Chile, nº 65", Line2: "24º andar - Centro", City: "RIO DE JANEIRO",
			State: "RJ", PostalCode: "20031-912", Country: "BRASIL"},
		FoundingDate: engine.MakeDate(1953, 10, 3), IPODate: engine.NoDate, Status: "ACTIVE",
	}
	if p.FreeFloat.Valid() {
		t.Errorf("free float %v, want Null", p.FreeFloat)
	}
	if !equalCompany(*p, want) {
		t.Errorf("PETROBRAS:\n got %+v\nwant %+v", *p, want)
	}
	// 08.773.135/0001-00 2W ECOBANK: CEP 4711130 has lost its leading zero.
	if e := find("08773135000100"); e.Address.PostalCode != "04711-130" || e.TradingName != "2W ECOBANK S.A." ||
		e.FoundingDate != engine.MakeDate(2007, 3, 23) || e.SubIndustryID != "ELECTRIC_POWER" {
		t.Errorf("2W ECOBANK: %+v", e)
	}
	// 11.396.633/0001-87 3A COMPANHIA SECURITIZADORA is CANCELADA.
	if c := find("11396633000187"); c.Status != "CANCELLED" || c.CVMCode != "21954" || c.StatusDate != engine.MakeDate(2015, 12, 18) {
		t.Errorf("3A: %+v", c)
	}
	// The status date of an active company is DT_INI_SIT.
	if e := find("08773135000100"); e.Status != "ACTIVE" || e.StatusDate != engine.MakeDate(2020, 10, 29) {
		t.Errorf("2W ECOBANK status %s since %v", e.Status, e.StatusDate)
	}
	// Every SETOR_ATIV of the registry is in the reviewed mapping: only
	// the 6 companies with a blank one stay unclassified.
	if len(unmapped) != 0 {
		t.Errorf("SETOR_ATIV values without a sub-industry: %q", unmapped)
	}
	blank := 0
	for _, c := range comps {
		if c.SubIndustryID == "" {
			blank++
		} else if n, ok := sectors.Lookup(c.SubIndustryID); !ok || n.Level != 4 {
			t.Fatalf("%s: sector %q not a sub-industry", c.ID, c.SubIndustryID)
		}
	}
	if blank > 6 {
		t.Errorf("%d companies unclassified, want at most the 6 blank SETOR_ATIV rows", blank)
	}
	// Determinism: a second read gives the same result.
	comps2, _, _ := ReadCad(bytes.NewReader(readReal(t, cadFile)), "cad_cia_aberta.csv", Options{})
	for i := range comps {
		if !equalCompany(comps[i], comps2[i]) {
			t.Fatalf("not deterministic at %d", i)
		}
	}
}

func equalCompany(a, b engine.Company) bool {
	a.FreeFloat, b.FreeFloat = 0, 0
	return a.ID == b.ID && a.CVMCode == b.CVMCode && a.Symbol == b.Symbol && a.Name == b.Name &&
		a.TradingName == b.TradingName && a.Kind == b.Kind && a.SubIndustryID == b.SubIndustryID &&
		a.Employees == b.Employees && a.Address == b.Address && a.FoundingDate == b.FoundingDate &&
		a.IPODate == b.IPODate && a.Status == b.Status && a.ListingSegment == b.ListingSegment &&
		a.Website == b.Website
}

func TestCadDedup(t *testing.T) {
	h := headerLine(t, "cad_cia_aberta")
	row := func(cnpj, sit, iniSit, code string) string {
		f := make([]string, 47)
		f[0], f[1], f[7], f[8], f[9] = cnpj, "EMPRESA "+code, sit, iniSit, code
		return strings.Join(f, ";")
	}
	in := strings.Join([]string{h,
		row("11.111.111/0001-11", "CANCELADA", "2020-01-01", "1"),
		row("11.111.111/0001-11", "ATIVO", "2010-01-01", "2"),
		row("11.111.111/0001-11", "CANCELADA", "2021-01-01", "3"),
		row("", "ATIVO", "2010-01-01", "00777"),
	}, "\r\n") + "\r\n"
	comps, secs, err := ReadCad(strings.NewReader(in), "cad.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(comps) != 2 || comps[0].ID != "11111111000111" || comps[0].CVMCode != "2" || comps[1].ID != "777" {
		t.Errorf("got %+v", comps)
	}
	if len(secs) != 0 || comps[0].SubIndustryID != "" {
		t.Errorf("unmapped %q, sub-industry %q for a blank SETOR_ATIV", secs, comps[0].SubIndustryID)
	}
}

// A registry row's SETOR_ATIV places the company through the reviewed
// mapping; a value the mapping lacks is returned, once, for the summary.
func TestCadSectors(t *testing.T) {
	h := headerLine(t, "cad_cia_aberta")
	row := func(cnpj, setor string) string {
		f := make([]string, 47)
		f[0], f[1], f[7], f[8], f[9], f[10] = cnpj, "EMPRESA", "ATIVO", "2010-01-01", "1", setor
		return strings.Join(f, ";")
	}
	in := strings.Join([]string{h,
		row("11.111.111/0001-11", "Bancos"),
		row("22.222.222/0001-22", "Emp. Adm. Part. - Energia Elétrica"),
		row("33.333.333/0001-33", "Astronáutica"),
		row("44.444.444/0001-44", "Astronáutica"),
	}, "\r\n") + "\r\n"
	comps, unmapped, err := ReadCad(strings.NewReader(in), "cad.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{comps[0].SubIndustryID, comps[1].SubIndustryID, comps[2].SubIndustryID, comps[3].SubIndustryID}
	if want := []string{"TRADITIONAL_BANKS", "ELECTRIC_POWER", "", ""}; !slices.Equal(got, want) {
		t.Errorf("sub-industries %q, want %q", got, want)
	}
	if len(unmapped) != 1 || unmapped[0] != "Astronáutica" {
		t.Errorf("unmapped %q", unmapped)
	}
}

func TestCadErrors(t *testing.T) {
	h := headerLine(t, "cad_cia_aberta")
	row := func(mod func(f []string)) string {
		f := make([]string, 47)
		f[0], f[1], f[7], f[9] = "11.111.111/0001-11", "X", "ATIVO", "1"
		mod(f)
		return h + "\n" + strings.Join(f, ";") + "\n"
	}
	cases := []struct {
		name, in, col string
	}{
		{"status", row(func(f []string) { f[7] = "EXTINTA" }), "SIT"},
		{"date", row(func(f []string) { f[4] = "1953-13-03" }), "DT_CONST"},
		{"cnpj", row(func(f []string) { f[0] = "123456789012345678" }), "CNPJ_CIA"},
		{"no id", row(func(f []string) { f[0], f[9] = "", "" }), "CNPJ_CIA"},
		{"short", h + "\n1;2;3\n", "DT_REG"},
		{"NUL in the name", row(func(f []string) { f[1] = "X\x00 S.A." }), "DENOM_SOCIAL"},
		{"NUL in a quoted field", row(func(f []string) { f[2] = "\"X;\x00\"" }), "DENOM_COMERC"},
		{"NUL alone", row(func(f []string) { f[10] = "\x00" }), "SETOR_ATIV"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ReadCad(strings.NewReader(c.in), "cad.csv", Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Column != c.col || pe.Line != 2 {
				t.Fatalf("got %v, want column %s line 2", err, c.col)
			}
			var st Stats
			comps, _, err := ReadCad(strings.NewReader(c.in), "cad.csv", Options{Lenient: true, Stats: &st})
			if err != nil || len(comps) != 0 || st.Skipped != 1 {
				t.Errorf("lenient: %v %d %+v", err, len(comps), st)
			}
		})
	}
	_, _, err := ReadCad(strings.NewReader("CNPJ_CIA;DENOM_SOCIAL;SIT\n"), "cad.csv", Options{Lenient: true})
	if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "CD_CVM") {
		t.Errorf("missing column: %v", err)
	}
}

func TestStatus(t *testing.T) {
	for in, want := range map[string]string{"ATIVO": "ACTIVE", "CANCELADA": "CANCELLED",
		"SUSPENSO(A) - DECISÃO ADM": "SUSPENDED", "Ativo": "ACTIVE"} {
		if got, ok := Status(in); !ok || got != want {
			t.Errorf("Status(%q) = %q", in, got)
		}
	}
	if _, ok := Status("?"); ok {
		t.Error("unknown accepted")
	}
}
