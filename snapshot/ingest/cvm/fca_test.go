package cvm

import (
	"errors"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// valorMobiliarioCSV is a fixture with the real FCA header and rows in
// the official layout (ISO-8859-1, CRLF).
func valorMobiliarioCSV(tb testing.TB) []byte {
	h := headerLine(tb, "fca_cia_aberta_valor_mobiliario")
	rows := []string{
		// Two FCA versions of one reference date: only the latest counts.
		"33.000.167/0001-01;2024-01-01;1;130001;PETROLEO BRASILEIRO S.A. PETROBRAS;Ações Ordinárias;;;PETR3;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;1977-07-20;;Nível 2;1977-07-20;",
		"33.000.167/0001-01;2024-01-01;2;130002;PETROLEO BRASILEIRO S.A. PETROBRAS;Ações Ordinárias;;;PETR3;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;1977-07-20;;Nível 2;1977-07-20;",
		"33.000.167/0001-01;2024-01-01;2;130002;PETROLEO BRASILEIRO S.A. PETROBRAS;Ações Preferenciais;PN;Preferencial;PETR4;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;1977-07-20;;Nível 2;1977-07-20;",
		"33.000.167/0001-01;2024-01-01;2;130002;PETROLEO BRASILEIRO S.A. PETROBRAS;Debêntures;;;;;Balcão Organizado;B3;B3 S.A. - Brasil, Bolsa, Balcão;2015-01-01;;;;",
		"60.746.948/0001-12;2024-01-01;1;130003;BCO BRADESCO S.A.;Ações Preferenciais;PNA;Preferencial Classe A;bbdc4;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;1946-01-01;;Nível 1;1946-01-01;",
		"60.746.948/0001-12;2024-01-01;1;130003;BCO BRADESCO S.A.;Ações Ordinárias;;;BBDC3;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;1946-01-01;;Nível 1;1946-01-01;",
		"07.859.971/0001-30;2024-01-01;1;130004;TRANSMISSORA ALIANÇA DE ENERGIA ELÉTRICA S.A.;Units;;;TAEE11;1 ON + 2 PN;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;2006-07-27;;Nível 2;2006-07-27;",
		// An older FCA of a company, superseded by the 2024 one above.
		"07.859.971/0001-30;2023-01-01;1;120004;TRANSMISSORA ALIANÇA DE ENERGIA ELÉTRICA S.A.;Ações Ordinárias;;;TAEE3;;Bolsa;B3;B3 S.A. - Brasil, Bolsa, Balcão;2006-07-27;2023-06-30;Nível 2;2006-07-27;",
	}
	return latin1(h + "\r\n" + strings.Join(rows, "\r\n") + "\r\n")
}

func TestValorMobiliario(t *testing.T) {
	ls, err := ReadValorMobiliario(strings.NewReader(string(valorMobiliarioCSV(t))), "fca_cia_aberta_valor_mobiliario_2024.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 8 {
		t.Fatalf("%d rows", len(ls))
	}
	l := ls[2]
	want := Listing{
		CompanyID: "33000167000101", ReferenceDate: engine.MakeDate(2024, 1, 1), Version: 2, DocID: "130002",
		CompanyName: "PETROLEO BRASILEIRO S.A. PETROBRAS", SecurityType: "Ações Preferenciais", PrefClassCode: "PN",
		PrefClass: "Preferencial", Ticker: "PETR4", StockType: engine.ClassPS, Market: "Bolsa", Exchange: "B3",
		TradingFrom: engine.MakeDate(1977, 7, 20), TradingTo: engine.NoDate, Segment: "Nível 2",
		ListedFrom: engine.MakeDate(1977, 7, 20), ListedTo: engine.NoDate,
	}
	if l != want {
		t.Errorf("\n got %+v\nwant %+v", l, want)
	}
	if ls[4].Ticker != "BBDC4" || ls[4].StockType != engine.ClassPSA || ls[6].StockType != engine.ClassUnit ||
		ls[6].UnitComposition != "1 ON + 2 PN" || ls[3].StockType != "" || ls[7].TradingTo != engine.MakeDate(2023, 6, 30) {
		t.Errorf("rows %+v", ls)
	}

	tm := TickerMap(ls)
	wantMap := map[string]string{"PETR3": "33000167000101", "PETR4": "33000167000101", "BBDC3": "60746948000112",
		"BBDC4": "60746948000112", "TAEE11": "07859971000130"}
	if len(tm) != len(wantMap) {
		t.Errorf("ticker map %v", tm)
	}
	for k, v := range wantMap {
		if tm[k] != v {
			t.Errorf("ticker %s -> %q, want %q", k, tm[k], v)
		}
	}

	comps := []engine.Company{
		{ID: "07859971000130", IPODate: engine.NoDate},
		{ID: "33000167000101", IPODate: engine.NoDate},
		{ID: "60746948000112", IPODate: engine.NoDate, Symbol: "BBDC"},
		{ID: "99999999000199", IPODate: engine.NoDate},
	}
	ApplyListings(comps, ls)
	if c := comps[1]; c.Symbol != "PETR" || c.ListingSegment != "Nível 2" || c.IPODate != engine.MakeDate(1977, 7, 20) {
		t.Errorf("PETROBRAS %+v", c)
	}
	if c := comps[0]; c.Symbol != "TAEE" || c.IPODate != engine.MakeDate(2006, 7, 27) {
		t.Errorf("TAESA %+v", c)
	}
	if c := comps[2]; c.Symbol != "BBDC" || c.ListingSegment != "Nível 1" {
		t.Errorf("BRADESCO %+v", c)
	}
	if c := comps[3]; c.Symbol != "" || c.IPODate.Valid() {
		t.Errorf("unlisted %+v", c)
	}

	secs := Securities(ls)
	if len(secs) != 5 || secs[0].Ticker != "BBDC3" || secs[0].StockType != engine.ClassCS || secs[0].Currency != "BRL" ||
		secs[0].UnitFactor.Valid() || secs[4].Ticker != "TAEE11" || secs[4].StockType != engine.ClassUnit {
		t.Errorf("securities %+v", secs)
	}
}

func TestValorMobiliarioErrors(t *testing.T) {
	in := string(valorMobiliarioCSV(t))
	bad := strings.Replace(in, " 2;1977-07-20;\r\n", " 2;1977-13-20;\r\n", 1)
	_, err := ReadValorMobiliario(strings.NewReader(bad), "v.csv", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Column != "Data_Inicio_Listagem" || pe.Line != 2 {
		t.Errorf("got %v", err)
	}
	_, err = ReadValorMobiliario(strings.NewReader("CNPJ_Companhia;Data_Referencia;Versao;Valor_Mobiliario\n"), "v.csv", Options{})
	if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "Codigo_Negociacao") {
		t.Errorf("got %v", err)
	}
}

func TestStockType(t *testing.T) {
	cases := []struct{ typ, code, want string }{
		{"Ações Ordinárias", "", engine.ClassCS},
		{"Ações Preferenciais", "", engine.ClassPS},
		{"Ações Preferenciais", "PNB", engine.ClassPSB},
		{"Ações Preferenciais", "PNE", engine.ClassPSE},
		{"Units", "", engine.ClassUnit},
		{"Certificado de Depósito de Valores Mobiliários - BDR", "", engine.ClassBDR},
		{"Debêntures", "", ""},
		{"Notas Comerciais", "", ""},
	}
	for _, c := range cases {
		if got := StockType(c.typ, c.code); got != c.want {
			t.Errorf("StockType(%q, %q) = %q, want %q", c.typ, c.code, got, c.want)
		}
	}
}

func enderecoCSV(tb testing.TB) string {
	h := headerLine(tb, "fca_cia_aberta_endereco")
	return h + "\r\n" +
		"33.000.167/0001-01;2023-01-01;1;120001;PETROLEO BRASILEIRO S.A. PETROBRAS;Sede;Av. República do Chile, 65;;Centro;Rio de Janeiro;RJ;Brasil;20031912;;55;21;32241510;;;;petroinvest@petrobras.com.br\r\n" +
		"33.000.167/0001-01;2024-01-01;2;130002;PETROLEO BRASILEIRO S.A. PETROBRAS;Sede;Av. Henrique Valadares, 28;Torre A;Centro;Rio de Janeiro;RJ;Brasil;20231030;;55;21;32241510;;;;petroinvest@petrobras.com.br\r\n" +
		"33.000.167/0001-01;2024-01-01;2;130002;PETROLEO BRASILEIRO S.A. PETROBRAS;Correspondência;Caixa Postal 1;;Centro;Rio de Janeiro;RJ;Brasil;20031912;;55;21;32241510;;;;\r\n"
}

func TestEndereco(t *testing.T) {
	rows, err := ReadEndereco(strings.NewReader(string(latin1(enderecoCSV(t)))), "fca_cia_aberta_endereco_2024.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].Version != 2 || rows[2].Type != "Correspondência" || rows[0].Address.PostalCode != "20031-912" {
		t.Fatalf("rows %+v", rows)
	}
	comps := []engine.Company{{ID: "33000167000101"}, {ID: "1", Address: engine.Address{City: "X"}}}
	ApplyAddresses(comps, rows, false)
	want := engine.Address{Line1: "Av. Henrique Valadares, 28", Line2: "Torre A - Centro", City: "Rio de Janeiro",
		State: "RJ", PostalCode: "20231-030", Country: "Brasil"}
	if comps[0].Address != want || comps[1].Address.City != "X" {
		t.Errorf("got %+v", comps)
	}
	kept := []engine.Company{{ID: "33000167000101", Address: engine.Address{City: "Y"}}}
	ApplyAddresses(kept, rows, false)
	if kept[0].Address.City != "Y" {
		t.Error("address overwritten")
	}
	ApplyAddresses(kept, rows, true)
	if kept[0].Address != want {
		t.Error("address not overwritten")
	}
	bad := strings.Replace(enderecoCSV(t), ";2024-01-01;2;", ";2024-01-01;two;", 1)
	if _, err := ReadEndereco(strings.NewReader(bad), "e.csv", Options{}); err == nil || !strings.Contains(err.Error(), "e.csv:3: column Versao") {
		t.Errorf("bad version: %v", err)
	}
}

func geralCSV(tb testing.TB) string {
	h := headerLine(tb, "fca_cia_aberta_geral")
	return h + "\r\n" +
		"33.000.167/0001-01;2023-01-01;1;120001;PETROLEO BRASILEIRO S.A. PETROBRAS;;;1953-10-03;009512;1977-07-20;Categoria A;2010-01-01;Ativo;1977-07-20;Brasil;Brasil;Petróleo e Gás;Pesquisa e lavra de petróleo;Fase Operacional;1977-07-20;Estatal Holding;1953-10-03;31;12;;www.petrobras.com.br\r\n" +
		"33.000.167/0001-01;2024-01-01;1;130001;PETROLEO BRASILEIRO S.A. PETROBRAS;;;1953-10-03;009512;1977-07-20;Categoria A;2010-01-01;Ativo;1977-07-20;Brasil;Brasil;Petróleo e Gás;Petróleo, Gás e Biocombustíveis;Fase Operacional;1977-07-20;Estatal Holding;1953-10-03;31;12;;https://petrobras.com.br/ri\r\n"
}

func TestFCAGeral(t *testing.T) {
	rows, err := ReadFCAGeral(strings.NewReader(geralCSV(t)), "fca_cia_aberta_geral_2024.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].CVMCode != "9512" || rows[1].FoundingDate != engine.MakeDate(1953, 10, 3) ||
		rows[1].Sector != "Petróleo e Gás" || rows[0].Description != "Pesquisa e lavra de petróleo" {
		t.Fatalf("rows %+v", rows)
	}
	comps := []engine.Company{{ID: "33000167000101", FoundingDate: engine.NoDate}, {ID: "1", Website: "w", FoundingDate: engine.NoDate}}
	ApplyGeneral(comps, rows)
	if c := comps[0]; c.Website != "https://petrobras.com.br/ri" || c.Description != "Petróleo, Gás e Biocombustíveis" ||
		c.FoundingDate != engine.MakeDate(1953, 10, 3) {
		t.Errorf("got %+v", c)
	}
	if comps[1].Website != "w" {
		t.Error("unrelated company changed")
	}
	bad := strings.Replace(geralCSV(t), ";1953-10-03;009512;", ";03/10/53;009512;", 1)
	if _, err := ReadFCAGeral(strings.NewReader(bad), "g.csv", Options{}); err == nil || !strings.Contains(err.Error(), "g.csv:2: column Data_Constituicao") {
		t.Errorf("bad date: %v", err)
	}
}

func TestReadFCAZip(t *testing.T) {
	idx := strings.ReplaceAll(indexCSV(t, "fca"), ";DFP;", ";FCA;")
	p := buildZip(t, map[string]string{
		"fca_cia_aberta_2024.csv":                  idx,
		"fca_cia_aberta_valor_mobiliario_2024.csv": string(valorMobiliarioCSV(t)),
		"fca_cia_aberta_endereco_2024.csv":         string(latin1(enderecoCSV(t))),
		"fca_cia_aberta_geral_2024.csv":            geralCSV(t),
		"fca_cia_aberta_dri_2024.csv":              "x\n",
	})
	var st Stats
	f, err := ReadFCAZip(p, Options{Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Listings) != 8 || len(f.Addresses) != 3 || len(f.General) != 2 || len(f.Index) != 3 || f.Index[0].Form != "FCA" || st.Unused != 1 {
		t.Errorf("got %d %d %d %d %+v", len(f.Listings), len(f.Addresses), len(f.General), len(f.Index), st)
	}
	bad := buildZip(t, map[string]string{"fca_cia_aberta_geral_2024.csv": "CNPJ_Companhia\n"})
	if _, err := ReadFCAZip(bad, Options{}); !errors.Is(err, ErrMissingColumn) {
		t.Errorf("missing column: %v", err)
	}
	if _, err := ReadFCAZip(p+".missing", Options{}); err == nil {
		t.Error("missing archive")
	}
}
