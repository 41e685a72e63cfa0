package fii

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

const realDir = "../../../testdata/real/cvm-fii"

var retrieved = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// readReal returns the decompressed bytes of testdata/real/cvm-fii/<name>.zst.
func readReal(tb testing.TB, name string) []byte {
	tb.Helper()
	f, err := os.Open(filepath.Join(realDir, name+".zst"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func memFile(name string, b []byte) File {
	return File{Name: name, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
}

func realYear(tb testing.TB, year string) []File {
	var fs []File
	for _, t := range []string{TableGeneral, TableComplement, TableAssetsLiabs} {
		name := "inf_mensal_fii_" + t + "_" + year + ".csv"
		fs = append(fs, memFile(name, readReal(tb, name)))
	}
	return fs
}

func findReport(tb testing.TB, rs []engine.FundReport, id string, ref engine.Date) *engine.FundReport {
	tb.Helper()
	for i := range rs {
		if rs[i].FundID == id && rs[i].ReferenceDate == ref {
			return &rs[i]
		}
	}
	tb.Fatalf("no report %s %s", id, ref)
	return nil
}

func TestRealLF(t *testing.T) {
	// The sample files have LF line ends (and ISO-8859-1 text).
	b := readReal(t, "inf_mensal_fii_geral_2021.csv")
	if bytes.IndexByte(b, '\r') >= 0 || bytes.Count(b, []byte("\n")) != 7554 {
		t.Fatalf("fixture is not LF with 7554 lines")
	}
}

func TestMonthlyReal2021(t *testing.T) {
	var st cvm.Stats
	m, err := ReadMonthlyFiles(realYear(t, "2021"), cvm.Options{Retrieved: retrieved, Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	// 7,553 rows in each table, 720 funds.
	if len(m.Reports) != 7553 || len(m.Funds) != 720 || m.Orphans != 0 || st.Rows != 3*7553 || st.Files != 3 {
		t.Fatalf("reports %d funds %d orphans %d stats %+v", len(m.Reports), len(m.Funds), m.Orphans, st)
	}
	// KINEA RENDA IMOBILIARIA (KNRI11), June 2021, from the complement:
	// 12.005.956/0001-65;2021-06-01;1;2021-06-30;236956;...;3889613428.97;3833230862.74;24157121;158.679126653379;0.000918;0;0.021406;0.016984;0.004422;0
	r := findReport(t, m.Reports, "12005956000165", engine.MakeDate(2021, 6, 1))
	want := engine.FundReport{
		FundID: "12005956000165", ReferenceDate: engine.MakeDate(2021, 6, 1), Version: 1,
		PublishDate: time.Date(2021, 7, 15, 3, 0, 0, 0, time.UTC), RetrievalDate: retrieved,
		NetAssets: 3833230862.74, SharesOut: 24157121, NAVPerShare: 158.679126653379, Investors: 236956,
		DividendYield: 0.004422, MonthlyReturn: 0.021406, TotalAssets: 3889613428.97,
	}
	got := *r
	got.Sources = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("KNRI 2021-06:\n got %+v\nwant %+v", got, want)
	}
	if len(r.Sources) != 1 || !r.Sources[0].PublishedAt.Equal(want.PublishDate) || !r.Sources[0].RetrievedAt.Equal(retrieved) {
		t.Errorf("sources %+v", r.Sources)
	}
	// The fund and its ISIN.
	if m.ISIN["12005956000165"] != "BRKNRICTF007" {
		t.Errorf("ISIN %q", m.ISIN["12005956000165"])
	}
	d := m.Details["12005956000165"]
	c := d.Company
	if c.Name != "KINEA RENDA IMOBILIARIA FII" || c.Kind != engine.KindFII || c.FoundingDate != engine.MakeDate(2010, 8, 11) ||
		c.Status != "ACTIVE" || c.Website != "www.intrag.com.br" || c.Address.City != "SÃO PAULO" || d.Segment != "Híbrido" ||
		c.Address.Line1 != "AV BRIGADEIRO FARIA LIMA, 3400" || c.FreeFloat.Valid() || c.Employees != -1 {
		t.Errorf("fund %+v", d)
	}
	// Its segment places it in the taxonomy.
	if c.SubIndustryID != "FII_HYBRID" {
		t.Errorf("sub-industry %q, want FII_HYBRID", c.SubIndustryID)
	}
	// Every segment of the sample maps to a sub-industry.
	for id, f := range m.Details {
		if f.Segment != "" && f.Company.SubIndustryID == "" {
			t.Errorf("fund %s: segment %q has no sub-industry", id, f.Segment)
		}
	}
	// Versions: 01.235.622/0001-61 filed 2021-05 as version 3.
	if v := findReport(t, m.Reports, "01235622000161", engine.MakeDate(2021, 5, 1)); v.Version != 3 ||
		!v.PublishDate.Equal(time.Date(2021, 12, 21, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("version 3: %+v", v)
	}
	// Sorted by fund, month, version; funds by ID.
	for i := 1; i < len(m.Reports); i++ {
		a, b := m.Reports[i-1], m.Reports[i]
		if a.FundID > b.FundID || (a.FundID == b.FundID && a.ReferenceDate > b.ReferenceDate) {
			t.Fatalf("reports not sorted at %d", i)
		}
	}
	for i := 1; i < len(m.Funds); i++ {
		if m.Funds[i-1].ID >= m.Funds[i].ID {
			t.Fatalf("funds not sorted at %d", i)
		}
	}
	// Blank values are Null, not 0 (KNRI has blank investor breakdowns;
	// some funds leave the dividend yield blank).
	nulls := 0
	for _, r := range m.Reports {
		if !r.DividendYield.Valid() {
			nulls++
		}
	}
	t.Logf("%d reports without dividend yield", nulls)
}

func TestReadMonthlyPaths(t *testing.T) {
	dir := t.TempDir()
	// 2020 as a yearly archive, 2022 as loose CSVs, plus an unrelated file.
	zp := filepath.Join(dir, "inf_mensal_fii_2020.zip")
	f, err := os.Create(zp)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, tb := range []string{TableGeneral, TableComplement, TableAssetsLiabs} {
		name := "inf_mensal_fii_" + tb + "_2020.csv"
		w, _ := zw.Create(name)
		w.Write(readReal(t, name))
	}
	zw.Close()
	f.Close()
	for _, tb := range []string{TableGeneral, TableComplement} {
		name := "inf_mensal_fii_" + tb + "_2022.csv"
		if err := os.WriteFile(filepath.Join(dir, name), readReal(t, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	m, err := ReadMonthly([]string{dir}, cvm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Reports) != 6078+5851 {
		t.Errorf("%d reports, want %d", len(m.Reports), 6078+5851)
	}
	// The 2022 file runs to September: funds reporting 2022-09 are ACTIVE.
	active := 0
	for _, c := range m.Funds {
		if c.Status == "ACTIVE" {
			active++
			if m.Details[c.ID].Latest != engine.MakeDate(2022, 9, 1) {
				t.Fatalf("%s active with latest %s", c.ID, m.Details[c.ID].Latest)
			}
		}
	}
	if active == 0 {
		t.Error("no active fund")
	}
	if _, err := ReadMonthly([]string{filepath.Join(dir, "notes.txt")}, cvm.Options{}); err == nil {
		t.Error("explicit unknown file accepted")
	}
	if _, err := ReadMonthly([]string{filepath.Join(dir, "missing.csv")}, cvm.Options{}); err == nil {
		t.Error("missing file accepted")
	}
}

// 2024+ layout: CNPJ_Fundo_Classe, Nome_Fundo_Classe and a leading
// Tipo_Fundo_Classe column; CRLF and UTF-8.
const (
	geral2024 = "Tipo_Fundo_Classe;CNPJ_Fundo_Classe;Data_Referencia;Versao;Data_Entrega;Nome_Fundo_Classe;Data_Funcionamento;Publico_Alvo;Codigo_ISIN;Quantidade_Cotas_Emitidas;Fundo_Exclusivo;Cotistas_Vinculo_Familiar;Mandato;Segmento_Atuacao;Tipo_Gestao;Prazo_Duracao;Data_Prazo_Duracao;Encerramento_Exercicio_Social;Mercado_Negociacao_Bolsa;Mercado_Negociacao_MBO;Mercado_Negociacao_MB\r\n" +
		"Classe;11.728.688/0001-47;2025-01-01;1;2025-02-14;PATRIA LOG FII;2010-05-03;INVESTIDORES EM GERAL;BRXPLGCTF005;33787575;N;N;Renda;Logística;Ativa;Indeterminado;;31/12;S;N;N\r\n" +
		"Classe;11.728.688/0001-47;2025-01-01;2;2025-03-02;PATRIA LOG FII;2010-05-03;INVESTIDORES EM GERAL;BRXPLGCTF005;33787575;N;N;Renda;Logística;Ativa;Indeterminado;;31/12;S;N;N\r\n"
	complemento2024 = "CNPJ_Fundo_Classe;Data_Referencia;Versao;Data_Informacao_Numero_Cotistas;Total_Numero_Cotistas;Valor_Ativo;Patrimonio_Liquido;Cotas_Emitidas;Valor_Patrimonial_Cotas;Percentual_Rentabilidade_Efetiva_Mes;Percentual_Dividend_Yield_Mes\r\n" +
		"11.728.688/0001-47;2025-01-01;1;2025-01-31;401234;3980000000.5;3900000000;33787575;115.42;0.0081;0.0079\r\n" +
		"11.728.688/0001-47;2025-01-01;2;2025-01-31;401234;3980000000.5;3910000000;33787575;115.72;0.0081;\r\n"
)

func TestMonthly2024Names(t *testing.T) {
	m, err := ReadMonthlyFiles([]File{
		memFile("inf_mensal_fii_geral_2025.csv", []byte(geral2024)),
		memFile("inf_mensal_fii_complemento_2025.csv", []byte(complemento2024)),
	}, cvm.Options{Retrieved: retrieved})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Funds) != 1 || m.Funds[0].Name != "PATRIA LOG FII" || m.ISIN["11728688000147"] != "BRXPLGCTF005" {
		t.Fatalf("funds %+v isin %v", m.Funds, m.ISIN)
	}
	if len(m.Reports) != 2 {
		t.Fatalf("%d reports", len(m.Reports))
	}
	v1, v2 := m.Reports[0], m.Reports[1]
	if v1.Version != 1 || v1.NAVPerShare != 115.42 || v1.DividendYield != 0.0079 || v1.Investors != 401234 ||
		!v1.PublishDate.Equal(time.Date(2025, 2, 14, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("v1 %+v", v1)
	}
	if v2.Version != 2 || v2.NetAssets != 3910000000 || v2.DividendYield.Valid() ||
		!v2.PublishDate.Equal(time.Date(2025, 3, 2, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("v2 %+v (blank dividend yield must be Null)", v2)
	}
}

func TestMonthlyReferenceMonth(t *testing.T) {
	in := strings.ReplaceAll(complemento2024, ";2025-01-01;", ";2025-01-31;")
	m, err := ReadMonthlyReader(strings.NewReader(in), "inf_mensal_fii_complemento_2025.csv", cvm.Options{})
	if err != nil || len(m.Reports) != 2 || m.Reports[0].ReferenceDate != engine.MakeDate(2025, 1, 1) {
		t.Fatalf("%v %+v", err, m)
	}
}

func TestMonthlyOrphansAndErrors(t *testing.T) {
	// A complement row without a general row.
	m, err := ReadMonthlyReader(strings.NewReader(complemento2024), "inf_mensal_fii_complemento_2025.csv", cvm.Options{})
	if err != nil || m.Orphans != 2 || len(m.Reports) != 2 || len(m.Funds) != 0 || !m.Reports[0].PublishDate.IsZero() {
		t.Fatalf("orphans: %v %+v", err, m)
	}
	bad := strings.Replace(complemento2024, ";115.42;", ";115,4,2;", 1)
	_, err = ReadMonthlyReader(strings.NewReader(bad), "inf_mensal_fii_complemento_2025.csv", cvm.Options{})
	var pe *cvm.ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != "Valor_Patrimonial_Cotas" {
		t.Errorf("bad number: %v", err)
	}
	var st cvm.Stats
	m, err = ReadMonthlyReader(strings.NewReader(bad), "inf_mensal_fii_complemento_2025.csv", cvm.Options{Lenient: true, Stats: &st})
	if err != nil || st.Skipped != 1 || len(m.Reports) != 1 {
		t.Errorf("lenient: %v %+v", err, st)
	}
	dup := geral2024 + strings.SplitAfterN(geral2024, "\r\n", 3)[1]
	_, err = ReadMonthlyReader(strings.NewReader(dup), "inf_mensal_fii_geral_2025.csv", cvm.Options{})
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Errorf("repeated key: %v", err)
	}
	badKey := strings.Replace(geral2024, ";2025-01-01;1;", ";2025-01-01;x;", 1)
	_, err = ReadMonthlyReader(strings.NewReader(badKey), "inf_mensal_fii_geral_2025.csv", cvm.Options{})
	if !errors.As(err, &pe) || pe.Column != "Versao" {
		t.Errorf("bad version: %v", err)
	}
	noISIN := strings.Replace(geral2024, "Codigo_ISIN", "ISIN", 1)
	_, err = ReadMonthlyReader(strings.NewReader(noISIN), "inf_mensal_fii_geral_2025.csv", cvm.Options{})
	if !errors.Is(err, cvm.ErrMissingColumn) || !strings.Contains(err.Error(), "Codigo_ISIN") {
		t.Errorf("missing column: %v", err)
	}
	if _, err := ReadMonthlyReader(strings.NewReader(""), "cad.csv", cvm.Options{}); err == nil {
		t.Error("unknown table accepted")
	}
}

func TestTableOf(t *testing.T) {
	for in, want := range map[string]string{
		"inf_mensal_fii_geral_2021.csv":          TableGeneral,
		"/d/INF_MENSAL_FII_COMPLEMENTO_2021.CSV": TableComplement,
		"inf_mensal_fii_ativo_passivo_2021.csv":  TableAssetsLiabs,
		"inf_mensal_fii_2021.zip":                "",
		"inf_mensal_fii_geral_2021.txt":          "",
	} {
		if got := TableOf(in); got != want {
			t.Errorf("TableOf(%q) = %q", in, got)
		}
	}
}

// TestMonthlyTwoDownloads: CVM's yearly files hold the latest version of
// each fund's month only (the real 2020-2022 files: one Versao per fund
// and month), so its versions are kept by reading every download of the
// year. The rows two downloads repeat are read once and counted; a
// version the later download adds is a report of its own; one version
// with other figures is an error. In one file a repeated key stays an
// error (TestMonthlyOrphansAndErrors).
func TestMonthlyTwoDownloads(t *testing.T) {
	v1 := func(s string) string { // the first download: version 1 only
		lines := strings.SplitAfter(s, "\r\n")
		return lines[0] + lines[1]
	}
	m, err := ReadMonthlyFiles([]File{
		memFile("2025-02/inf_mensal_fii_geral_2025.csv", []byte(v1(geral2024))),
		memFile("2025-02/inf_mensal_fii_complemento_2025.csv", []byte(v1(complemento2024))),
		memFile("2025-03/inf_mensal_fii_geral_2025.csv", []byte(geral2024)),
		memFile("2025-03/inf_mensal_fii_complemento_2025.csv", []byte(complemento2024)),
	}, cvm.Options{Retrieved: retrieved})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Reports) != 2 || m.Reports[0].Version != 1 || m.Reports[1].Version != 2 || m.Repeated != 2 || len(m.Funds) != 1 {
		t.Fatalf("reports %+v, repeated %d", m.Reports, m.Repeated)
	}
	if v := m.Reports[0]; v.NAVPerShare != 115.42 || v.DividendYield != 0.0079 {
		t.Errorf("version 1 %+v", v)
	}
	changed := strings.Replace(complemento2024, ";115.42;", ";115.43;", 1)
	_, err = ReadMonthlyFiles([]File{
		memFile("2025-02/inf_mensal_fii_complemento_2025.csv", []byte(complemento2024)),
		memFile("2025-03/inf_mensal_fii_complemento_2025.csv", []byte(changed)),
	}, cvm.Options{})
	if err == nil || !strings.Contains(err.Error(), "2025-03/inf_mensal_fii_complemento_2025.csv:2") || !strings.Contains(err.Error(), "other figures") {
		t.Errorf("one version, two sets of figures: %v", err)
	}
	redelivered := strings.Replace(geral2024, ";2025-02-14;", ";2025-02-15;", 1)
	_, err = ReadMonthlyFiles([]File{
		memFile("2025-02/inf_mensal_fii_geral_2025.csv", []byte(geral2024)),
		memFile("2025-03/inf_mensal_fii_geral_2025.csv", []byte(redelivered)),
	}, cvm.Options{})
	if err == nil || !strings.Contains(err.Error(), "Data_Entrega") {
		t.Errorf("one version, two delivery dates: %v", err)
	}
}
