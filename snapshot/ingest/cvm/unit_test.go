package cvm

import (
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestUnitShares reads unit compositions in the forms companies write in
// the FCA's Composicao_BDR_Unit.
func TestUnitShares(t *testing.T) {
	f := func(text string, want int, wantOK bool) {
		t.Helper()
		if n, ok := UnitShares(text); n != want || ok != wantOK {
			t.Errorf("UnitShares(%q) = %d, %v; want %d, %v", text, n, ok, want, wantOK)
		}
	}
	f("1 ON E 2 PN", 3, true)
	f("1 ON E 2 PNA", 3, true)
	f("2 ações preferenciais e 1 ação ordinária", 3, true)
	f("1 ação ordinária e 4 ações preferenciais", 5, true)
	f("1 ON e 2 PN", 3, true)
	f("1 KLBN3 + 4 KLBN4", 5, true)
	f("1 ON + 1 PN", 2, true)
	f("1 ON / 2 PN", 3, true)
	f("1 ENG3 e 4 ENGI4", 5, true) // a three-letter ticker
	f("1 PN + 3 Recibos de Subscrição", 1, true)
	f("uma ação ordinária e duas ações preferenciais", 3, true)
	f("3 ações", 3, true)
	f("1ON+2PN", 3, true)
	f("Vide item 9.1", 0, false)
	f("", 0, false)
	f("0 ON", 0, false)
	f("1,5 ON", 0, false)
	f("2000 PN", 0, false)
	f("999 ON + 999 PN", 0, false)
	f("3 bônus de subscrição", 0, false)
}

// TestUnitFactors reads FCA valor_mobiliario rows in the official layout:
// a unit with its composition, one whose row has no real ticker, one the
// reader cannot read.
func TestUnitFactors(t *testing.T) {
	in := header(t, "fca_cia_aberta_valor_mobiliario") +
		"11.111.111/0001-11;2023-01-01;1;1;ALFA S.A.;Units;;;ALFA11;1 ON e 2 PN;Bolsa;B3;B3 S.A.;2010-01-04;;Nível 2;2010-01-04;\n" +
		"11.111.111/0001-11;2023-01-01;1;1;ALFA S.A.;Ações Ordinárias;;;ALFA3;;Bolsa;B3;B3 S.A.;2010-01-04;;Nível 2;2010-01-04;\n" +
		"22.222.222/0001-22;2023-01-01;1;2;BETA S.A.;Units;;;000000;1 ON E 2 PNA;Bolsa;B3;B3 S.A.;2012-05-02;;Nível 2;2012-05-02;\n" +
		"33.333.333/0001-33;2023-01-01;1;3;GAMA S.A.;Units;;;GAMA11;Vide item 9.1;Bolsa;B3;B3 S.A.;2012-05-02;;Nível 2;2012-05-02;\n"
	ls, err := ReadValorMobiliario(strings.NewReader(in), "fca_cia_aberta_valor_mobiliario_2023.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ls[0].StockType != engine.ClassUnit {
		t.Fatalf("units row read as %q", ls[0].StockType)
	}
	byTicker, byCompany, unread := UnitFactors(ls)
	if byTicker["ALFA11"] != 3 || byCompany["11111111000111"] != 3 || byCompany["22222222000122"] != 3 || len(byTicker) != 2 {
		t.Errorf("by ticker %v, by company %v", byTicker, byCompany)
	}
	if len(unread) != 1 || !strings.Contains(unread[0], "GAMA11") {
		t.Errorf("unread %q", unread)
	}
}

// FuzzUnitShares reads any text as a unit composition: no panic, and a
// composition read holds 1 to 1000 shares.
func FuzzUnitShares(f *testing.F) {
	for _, s := range []string{"1 ON E 2 PN", "1 KLBN3 + 4 KLBN4", "2 ações preferenciais e 1 ação ordinária", "1,5 ON", "Vide item 9.1", "", "1ON+2PN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := UnitShares(s)
		if ok && (n < 1 || n > maxUnitShares) || !ok && n != 0 {
			t.Fatalf("UnitShares(%q) = %d, %v", s, n, ok)
		}
	})
}
