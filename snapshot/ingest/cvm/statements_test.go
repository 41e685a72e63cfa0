package cvm

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

var dfpFiles = []string{
	"dfp_cia_aberta_BPA_con_2023.csv",
	"dfp_cia_aberta_BPP_con_2023.csv",
	"dfp_cia_aberta_DRE_con_2023.csv",
	"dfp_cia_aberta_DRE_con_2022.csv",
}

func readDFP(tb testing.TB, name string, opt Options) []engine.Report {
	tb.Helper()
	rs, err := ReadStatements(bytes.NewReader(readReal(tb, "cvm-dfp/"+name+".zst")), name, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

func findReport(tb testing.TB, rs []engine.Report, company string, ref engine.Date, version int) *engine.Report {
	tb.Helper()
	var found *engine.Report
	for i := range rs {
		r := &rs[i]
		if r.CompanyID == company && r.ReferenceDate == ref && r.Version == version {
			if found != nil {
				tb.Fatalf("two reports for %s %s v%d", company, ref, version)
			}
			found = r
		}
	}
	if found == nil {
		tb.Fatalf("no report for %s %s v%d", company, ref, version)
	}
	return found
}

func account(tb testing.TB, r *engine.Report, code string) engine.Account {
	tb.Helper()
	for _, a := range r.Accounts {
		if a.Code() == code {
			return a
		}
	}
	tb.Fatalf("%s %s: no account %s", r.CompanyID, r.Statement, code)
	return engine.Account{}
}

func TestDFPRealDRE2022(t *testing.T) {
	var st Stats
	rs := readDFP(t, "dfp_cia_aberta_DRE_con_2022.csv", Options{Retrieved: retrieved, Stats: &st})
	// 844 data rows: 422 ÚLTIMO (imported) and 422 PENÚLTIMO (comparatives).
	if st.Rows != 844 || st.Previous != 422 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
	// 13 companies, one filing each; versions 1, 2 (Camil) and 3 (Jalles).
	if len(rs) != 13 {
		t.Fatalf("%d reports, want 13", len(rs))
	}
	n := 0
	for _, r := range rs {
		n += len(r.Accounts)
		if r.Form.String() != "DFP" || r.Statement.String() != "DRE" || r.Aggregation.String() != engine.AggConsolidated ||
			!r.StartDate.Valid() || !r.RetrievalDate.Equal(engine.StampOf(retrieved)) || !r.PublishDate.IsZero() {
			t.Errorf("report header %+v", r)
		}
	}
	if n != 422 {
		t.Errorf("%d accounts, want 422 (ÚLTIMO rows)", n)
	}
	// 02.635.522/0001-95;2022-03-31;3;JALLES MACHADO S.A.;...;MIL;ÚLTIMO;2021-04-01;2022-03-31;3.01;Receita de Venda de Bens e/ou Serviços;1449073.0000000000;S
	j := findReport(t, rs, "02635522000195", engine.MakeDate(2022, 3, 31), 3)
	if j.StartDate != engine.MakeDate(2021, 4, 1) || j.EndDate != engine.MakeDate(2022, 3, 31) {
		t.Errorf("Jalles period %s..%s", j.StartDate, j.EndDate)
	}
	if a := account(t, j, "3.01"); a.Value != 1449073000 || !a.Fixed() || a.Name() != "Receita de Venda de Bens e/ou Serviços" {
		t.Errorf("3.01 = %+v, want 1449073 thousand BRL", a)
	}
	if a := account(t, j, "3.11"); a.Value != 387907000 {
		t.Errorf("3.11 = %v", a.Value)
	}
	// Per-share lines are BRL per share: not scaled (3.99.01.01 ON 1.3162900000).
	if a := account(t, j, "3.99.01.01"); a.Value != 1.31629 || a.Fixed() {
		t.Errorf("EPS = %+v", a)
	}
	findReport(t, rs, "64904295000103", engine.MakeDate(2022, 2, 28), 2) // Camil, version 2
	// ESCALA_MOEDA UNIDADE: PETTENATI 3.01 844013027.0000000000 stays as is.
	p := findReport(t, rs, "88613658000110", engine.MakeDate(2022, 6, 30), 1)
	if a := account(t, p, "3.01"); a.Value != 844013027 {
		t.Errorf("UNIDADE 3.01 = %v", a.Value)
	}
	// A quarter filed in this file (BANCO INTER, 2022-01-01..2022-03-31).
	b := findReport(t, rs, "00416968000101", engine.MakeDate(2022, 3, 31), 1)
	if b.StartDate != engine.MakeDate(2022, 1, 1) || account(t, b, "3.01").Value != 723645000 {
		t.Errorf("INTER %s %v", b.StartDate, account(t, b, "3.01").Value)
	}
}

func TestDFPRealBalance2023(t *testing.T) {
	rs := readDFP(t, "dfp_cia_aberta_BPA_con_2023.csv", Options{})
	if len(rs) != 11 {
		t.Fatalf("%d reports, want 11", len(rs))
	}
	// 33.453.598/0001-23;2023-03-31;1;RAÍZEN S.A.;...;ÚLTIMO;2023-03-31;1;Ativo Total;111551463.0000000000;S
	r := findReport(t, rs, "33453598000123", engine.MakeDate(2023, 3, 31), 1)
	if r.StartDate.Valid() || r.EndDate != engine.MakeDate(2023, 3, 31) || r.Statement.String() != "BPA" {
		t.Errorf("balance header %+v", r)
	}
	if a := account(t, r, "1"); a.Value != 111551463000 || a.Name() != "Ativo Total" {
		t.Errorf("Ativo Total = %+v", a)
	}
	// Version 2 filings (re-filed) are their own reports.
	j := findReport(t, rs, "02635522000195", engine.MakeDate(2023, 3, 31), 2)
	if a := account(t, j, "1"); a.Value != 6119077000 {
		t.Errorf("Jalles v2 Ativo Total = %v", a.Value)
	}
	findReport(t, rs, "06981381000113", engine.MakeDate(2023, 3, 31), 2)
	// Accounts keep the file's order: the tree root first.
	if r.Accounts[0].Code() != "1" {
		t.Errorf("first account %q", r.Accounts[0].Code())
	}
	for _, name := range []string{"dfp_cia_aberta_BPP_con_2023.csv", "dfp_cia_aberta_DRE_con_2023.csv"} {
		if rs := readDFP(t, name, Options{}); len(rs) != 11 {
			t.Errorf("%s: %d reports, want 11", name, len(rs))
		}
	}
}

// TestDFPVersions builds one company's filing in two versions from real
// rows: both are imported, each as its own report.
func TestDFPVersions(t *testing.T) {
	raw := string(readReal(t, "cvm-dfp/dfp_cia_aberta_BPA_con_2023.csv.zst"))
	lines := strings.Split(raw, "\n")
	var v1 []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "02.635.522/0001-95;2023-03-31;2;") {
			l = strings.Replace(l, ";2023-03-31;2;", ";2023-03-31;1;", 1)
			l = strings.Replace(l, ";1;Ativo Total;6119077.0000000000;", ";1;Ativo Total;6000000.0000000000;", 1)
			v1 = append(v1, l)
		}
	}
	in := raw + strings.Join(v1, "\n") + "\n"
	rs, err := ReadStatements(strings.NewReader(in), "dfp_cia_aberta_BPA_con_2023.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	a1 := account(t, findReport(t, rs, "02635522000195", engine.MakeDate(2023, 3, 31), 1), "1")
	a2 := account(t, findReport(t, rs, "02635522000195", engine.MakeDate(2023, 3, 31), 2), "1")
	if a1.Value != 6000000000 || a2.Value != 6119077000 {
		t.Errorf("v1 %v v2 %v", a1.Value, a2.Value)
	}
	if len(rs) != 12 {
		t.Errorf("%d reports, want 12", len(rs))
	}
}

// fixture rows in the layout of the real files, for tables that have no
// data rows in the samples.
func flowRow(cnpj, ref, ver, ordem, ini, fim, code, name, val string) string {
	return strings.Join([]string{cnpj, ref, ver, "EMPRESA TESTE S.A.", "099999", "DF Individual - Teste", "REAL", "MIL",
		ordem, ini, fim, code, name, val, "S"}, ";")
}

func TestStatementsAllHeaders(t *testing.T) {
	// Every real DFP/ITR statement header is accepted, and the name
	// decides form, statement and aggregation.
	for _, form := range []string{"dfp", "itr"} {
		for _, st := range []string{"BPA", "BPP", "DRE", "DRA", "DVA", "DFC_MI", "DFC_MD", "DMPL"} {
			for _, agg := range []string{"con", "ind"} {
				table := form + "_cia_aberta_" + st + "_" + agg
				name := table + "_2024.csv"
				fi, err := ParseFileName(name)
				if err != nil || fi.Kind != KindStatement || fi.Statement != st || fi.Form != strings.ToUpper(form) ||
					(agg == "con") != (fi.Aggregation == engine.AggConsolidated) {
					t.Errorf("%s: %+v %v", name, fi, err)
				}
				rs, err := ReadStatements(strings.NewReader(header(t, table)), name, Options{})
				if err != nil || len(rs) != 0 {
					t.Errorf("%s: %v %d", name, err, len(rs))
				}
			}
		}
	}
}

func TestITRQuarterAndYTD(t *testing.T) {
	h := headerLine(t, "itr_cia_aberta_DRE_ind")
	c := "11.111.111/0001-11"
	in := strings.Join([]string{h,
		flowRow(c, "2024-06-30", "1", "ÚLTIMO", "2024-04-01", "2024-06-30", "3.01", "Receita", "100.5"),
		flowRow(c, "2024-06-30", "1", "ÚLTIMO", "2024-01-01", "2024-06-30", "3.01", "Receita", "190"),
		flowRow(c, "2024-06-30", "1", "PENÚLTIMO", "2023-04-01", "2023-06-30", "3.01", "Receita", "90"),
		flowRow(c, "2024-06-30", "1", "PENÚLTIMO", "2023-01-01", "2023-06-30", "3.01", "Receita", "170"),
		flowRow(c, "2024-06-30", "2", "ÚLTIMO", "2024-04-01", "2024-06-30", "3.01", "Receita", "101"),
	}, "\r\n") + "\r\n"
	var st Stats
	rs, err := ReadStatements(strings.NewReader(string(latin1(in))), "itr_cia_aberta_DRE_ind_2024.csv", Options{Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || st.Previous != 2 {
		t.Fatalf("%d reports, stats %+v", len(rs), st)
	}
	// Sorted: start date 2024-01-01 (YTD) first, then the quarter v1, v2.
	want := []struct {
		ini     engine.Date
		version int
		value   engine.Num
	}{
		{engine.MakeDate(2024, 1, 1), 1, 190000},
		{engine.MakeDate(2024, 4, 1), 1, 100500},
		{engine.MakeDate(2024, 4, 1), 2, 101000},
	}
	for i, w := range want {
		r := rs[i]
		if r.Form.String() != "ITR" || r.Aggregation.String() != engine.AggIndividual || r.StartDate != w.ini || r.Version != w.version ||
			r.Accounts[0].Value != w.value {
			t.Errorf("report %d: %+v", i, r)
		}
	}
}

func TestStatementsDMPL(t *testing.T) {
	h := headerLine(t, "dfp_cia_aberta_DMPL_con")
	row := "11.111.111/0001-11;2023-12-31;1;EMPRESA;099999;DF Consolidado - DMPL;REAL;MIL;ÚLTIMO;2023-01-01;2023-12-31;Capital Social Integralizado;5.01;Saldos Iniciais;1000;S"
	var st Stats
	rs, err := ReadStatements(strings.NewReader(h+"\n"+row+"\n"+row+"\n"), "dfp_cia_aberta_DMPL_con_2023.csv", Options{Stats: &st})
	if err != nil || len(rs) != 0 || st.Ignored != 2 {
		t.Errorf("DMPL: %v %d %+v", err, len(rs), st)
	}
}

func TestStatementsErrors(t *testing.T) {
	h := headerLine(t, "dfp_cia_aberta_DVA_con")
	ok := flowRow("11.111.111/0001-11", "2023-12-31", "1", "ÚLTIMO", "2023-01-01", "2023-12-31", "7.01", "Receitas", "10")
	cases := []struct{ name, row, col string }{
		{"scale", strings.Replace(ok, ";MIL;", ";MILHAO;", 1), "ESCALA_MOEDA"},
		{"ordem", strings.Replace(ok, ";ÚLTIMO;", ";ATUAL;", 1), "ORDEM_EXERC"},
		{"value", strings.Replace(ok, ";10;S", ";1O;S", 1), "VL_CONTA"},
		{"date", strings.Replace(ok, ";2023-12-31;1;", ";2023-12-32;1;", 1), "DT_REFER"},
		{"version", strings.Replace(ok, ";2023-12-31;1;", ";2023-12-31;v1;", 1), "VERSAO"},
		{"fixed", strings.Replace(ok, ";10;S", ";10;X", 1), "ST_CONTA_FIXA"},
		{"code", strings.Replace(ok, ";7.01;", ";;", 1), "CD_CONTA"},
		{"code dots", strings.Replace(ok, ";7.01;", ";7..01;", 1), "CD_CONTA"},
		{"version 0", strings.Replace(ok, ";2023-12-31;1;", ";2023-12-31;0;", 1), "VERSAO"},
		{"period", strings.Replace(ok, ";2023-01-01;2023-12-31;", ";2024-01-01;2023-12-31;", 1), "DT_INI_EXERC"},
		{"duplicate", ok + "\n" + ok, "CD_CONTA"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := h + "\n" + c.row + "\n"
			_, err := ReadStatements(strings.NewReader(in), "dfp_cia_aberta_DVA_con_2023.csv", Options{})
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Column != c.col || pe.File != "dfp_cia_aberta_DVA_con_2023.csv" {
				t.Fatalf("got %v, want column %s", err, c.col)
			}
			var st Stats
			if _, err := ReadStatements(strings.NewReader(in), "dfp_cia_aberta_DVA_con_2023.csv", Options{Lenient: true, Stats: &st}); err != nil || st.Skipped != 1 {
				t.Errorf("lenient: %v %+v", err, st)
			}
		})
	}
	if _, err := ReadStatements(strings.NewReader(h+"\n"), "dfp_cia_aberta_2023.csv", Options{}); err == nil {
		t.Error("index file read as statement")
	}
	if _, err := ReadStatements(strings.NewReader(h+"\n"), "other.csv", Options{}); err == nil {
		t.Error("unknown file name accepted")
	}
	bpa := headerLine(t, "dfp_cia_aberta_BPA_con")
	_, err := ReadStatements(strings.NewReader(strings.Replace(bpa, ";VL_CONTA", "", 1)+"\n"), "dfp_cia_aberta_BPA_con_2023.csv", Options{})
	if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "VL_CONTA") {
		t.Errorf("missing VL_CONTA: %v", err)
	}
	// DRE without DT_INI_EXERC is malformed (balance sheets only lack it).
	_, err = ReadStatements(strings.NewReader(bpa+"\n"), "dfp_cia_aberta_DRE_con_2023.csv", Options{})
	if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "DT_INI_EXERC") {
		t.Errorf("missing DT_INI_EXERC: %v", err)
	}
}

func TestParseFileName(t *testing.T) {
	cases := map[string]FileInfo{
		"dfp_cia_aberta_2023.csv":                    {Form: "DFP", Kind: KindIndex},
		"/x/ITR_CIA_ABERTA_2024.CSV":                 {Form: "ITR", Kind: KindIndex},
		"dfp_cia_aberta_composicao_capital_2023.csv": {Form: "DFP", Kind: KindCapital},
		"itr_cia_aberta_parecer_2023.csv":            {Form: "ITR", Kind: KindOther},
		"itr_cia_aberta_DFC_MD_ind_2023.csv":         {Form: "ITR", Kind: KindStatement, Statement: "DFC_MD", Aggregation: engine.AggIndividual},
		"/d/x.zip:itr_cia_aberta_BPA_con_2023.csv":   {Form: "ITR", Kind: KindStatement, Statement: "BPA", Aggregation: engine.AggConsolidated},
		`C:\d\dfp_cia_aberta_2023.csv`:               {Form: "DFP", Kind: KindIndex},
	}
	for in, want := range cases {
		if got, err := ParseFileName(in); err != nil || got != want {
			t.Errorf("%s: %+v %v", in, got, err)
		}
	}
	if _, err := ParseFileName("fre_cia_aberta_2023.csv"); err == nil {
		t.Error("fre accepted")
	}
}

// Index and capital fixtures: real headers, rows in the files' layout.
func indexCSV(tb testing.TB, form string) string {
	h := headerLine(tb, form+"_cia_aberta")
	return h + "\r\n" +
		"02.635.522/0001-95;2023-03-31;1;JALLES MACHADO S.A.;025496;DFP;129001;2023-05-30;https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numSequencia=1&numVersao=1&numProtocolo=129001&descTipo=IPE&CodigoInstituicao=1\r\n" +
		"02.635.522/0001-95;2023-03-31;2;JALLES MACHADO S.A.;025496;DFP;129002;2023-06-14;https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?Tela=ext&numSequencia=2&numVersao=2&numProtocolo=129002&descTipo=IPE&CodigoInstituicao=1\r\n" +
		"33.453.598/0001-23;2023-03-31;1;RAÍZEN S.A.;025917;DFP;129003;2023-06-21;https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?numProtocolo=129003\r\n"
}

func TestDocIndexAttach(t *testing.T) {
	idx, err := ReadDocIndex(strings.NewReader(indexCSV(t, "dfp")), "dfp_cia_aberta_2023.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx) != 3 || idx[1].Version != 2 || idx[1].CVMCode != "25496" || idx[1].DocID != "129002" ||
		!idx[1].Received.Equal(time.Date(2023, 6, 14, 3, 0, 0, 0, time.UTC)) || idx[2].CompanyName != "RAÍZEN S.A." || idx[0].Form != "DFP" {
		t.Fatalf("index %+v", idx)
	}
	rs := readDFP(t, "dfp_cia_aberta_BPA_con_2023.csv", Options{Retrieved: retrieved})
	un := AttachIndex(rs, idx)
	if un != 9 {
		t.Errorf("unmatched %d, want 9", un)
	}
	j := findReport(t, rs, "02635522000195", engine.MakeDate(2023, 3, 31), 2)
	if !j.PublishDate.Equal(engine.StampOf(idx[1].Received)) || j.Sources.Len() != 1 || j.Sources.All()[0].VisualizationURL.String() != idx[1].Link ||
		!j.Sources.All()[0].RetrievedAt.Equal(retrieved) || j.Sources.All()[0].Name != "CVM DFP 129002" {
		t.Errorf("attached %+v %+v", j.PublishDate, j.Sources)
	}
	// An ITR index does not match DFP reports.
	itr, err := ReadDocIndex(strings.NewReader(indexCSV(t, "itr")), "itr_cia_aberta_2023.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rs = readDFP(t, "dfp_cia_aberta_BPA_con_2023.csv", Options{})
	if un := AttachIndex(rs, itr); un != len(rs) {
		t.Errorf("ITR index matched DFP reports: %d unmatched of %d", un, len(rs))
	}
	// A link that is not an http(s) address.
	badLink := strings.Replace(indexCSV(t, "dfp"), ";https://www.rad.cvm.gov.br/ENET/frmDownloadDocumento.aspx?numProtocolo=129003", ";www.rad.cvm.gov.br", 1)
	if _, err := ReadDocIndex(strings.NewReader(badLink), "dfp_cia_aberta_2023.csv", Options{}); err == nil ||
		!strings.Contains(err.Error(), ":4: column LINK_DOC") {
		t.Errorf("bad LINK_DOC: %v", err)
	}
	// Bad date in the index.
	bad := strings.Replace(indexCSV(t, "dfp"), ";2023-05-30;", ";30-05-2023;", 1)
	if _, err := ReadDocIndex(strings.NewReader(bad), "dfp_cia_aberta_2023.csv", Options{}); err == nil ||
		!strings.Contains(err.Error(), "column DT_RECEB") {
		t.Errorf("bad DT_RECEB: %v", err)
	}
}

func capitalCSV(tb testing.TB) string {
	h := headerLine(tb, "dfp_cia_aberta_composicao_capital")
	return h + "\r\n" +
		"02.635.522/0001-95;2023-03-31;1;JALLES MACHADO S.A.;302010000;0;302010000;5000000;0;5000000\r\n" +
		"02.635.522/0001-95;2023-03-31;2;JALLES MACHADO S.A.;302010000;0;302010000;5500000;0;5500000\r\n" +
		"33.000.167/0001-01;2023-12-31;1;PETROLEO BRASILEIRO S.A. PETROBRAS;7442454142;5602042788;13044496930;0;0;0\r\n" +
		"11.111.111/0001-11;2023-12-31;1;SEM PREFERENCIAIS S.A.;1000;;1000;;;\r\n"
}

func TestReadCapital(t *testing.T) {
	sp, err := ReadCapital(strings.NewReader(capitalCSV(t)), "dfp_cia_aberta_composicao_capital_2023.csv", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.SharesPoint{
		{CompanyID: "02635522000195", Date: engine.MakeDate(2023, 3, 31), Common: 302010000, Preferred: 0, Treasury: 5500000},
		{CompanyID: "11111111000111", Date: engine.MakeDate(2023, 12, 31), Common: 1000},
		{CompanyID: "33000167000101", Date: engine.MakeDate(2023, 12, 31), Common: 7442454142, Preferred: 5602042788},
	}
	if len(sp) != len(want) {
		t.Fatalf("got %+v", sp)
	}
	for i := range want {
		if sp[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, sp[i], want[i])
		}
	}
	alt := strings.Replace(strings.Replace(capitalCSV(t), "QT_ACAO_ORDIN_CAP", "QT_ACAO_ORDINARIA_CAP", 1), "QT_ACAO_PREF_CAP", "QT_ACAO_PREFERENCIAL_CAP", 1)
	if sp2, err := ReadCapital(strings.NewReader(alt), "c.csv", Options{}); err != nil || len(sp2) != 3 || sp2[2] != want[2] {
		t.Errorf("alternative spellings: %v %+v", err, sp2)
	}
	bad := strings.Replace(capitalCSV(t), ";7442454142;", ";7442454142.5;", 1)
	if _, err := ReadCapital(strings.NewReader(bad), "c.csv", Options{}); err == nil ||
		!strings.Contains(err.Error(), "c.csv:4: column QT_ACAO_ORDIN_CAP_INTEGR") {
		t.Errorf("bad count: %v", err)
	}
}

// buildZip writes a yearly archive with the given members.
func buildZip(tb testing.TB, members map[string]string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "dfp_cia_aberta_2023.zip")
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range members {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestReadStatementsZip(t *testing.T) {
	members := map[string]string{
		"dfp_cia_aberta_2023.csv":                    indexCSV(t, "dfp"),
		"dfp_cia_aberta_composicao_capital_2023.csv": capitalCSV(t),
		"dfp_cia_aberta_parecer_2023.csv":            header(t, "dfp_cia_aberta_parecer"),
		"dfp_cia_aberta_DMPL_con_2023.csv":           header(t, "dfp_cia_aberta_DMPL_con"),
		"readme.txt":                                 "x",
	}
	for _, n := range dfpFiles[:3] {
		members[n] = string(readReal(t, "cvm-dfp/"+n+".zst"))
	}
	p := buildZip(t, members)
	var st Stats
	fl, err := ReadStatementsZip(p, Options{Retrieved: retrieved, Stats: &st})
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Reports) != 33 || len(fl.Shares) != 3 || len(fl.Index) != 3 || st.Unused != 2 {
		t.Fatalf("reports %d shares %d index %d stats %+v", len(fl.Reports), len(fl.Shares), len(fl.Index), st)
	}
	// Jalles Machado's count is of its version 2, the others' of version 1.
	if v := fl.ShareVersions; len(v) != 3 || v[0] != 2 || v[1] != 1 || v[2] != 1 {
		t.Errorf("share versions %v", v)
	}
	// Jalles v2 (BPA, BPP, DRE) and Raízen v1 (3 statements) are matched.
	if fl.Unmatched != 33-6 {
		t.Errorf("unmatched %d", fl.Unmatched)
	}
	n := 0
	for i := range fl.Reports {
		r := &fl.Reports[i]
		if r.CompanyID == "33453598000123" {
			n++
			if !r.PublishDate.Equal(engine.StampOf(time.Date(2023, 6, 21, 3, 0, 0, 0, time.UTC))) || r.Sources.Len() != 1 {
				t.Errorf("Raízen %s: %v %v", r.Statement, r.PublishDate, r.Sources)
			}
		}
		if i > 0 && fl.Reports[i-1].CompanyID > r.CompanyID {
			t.Fatal("reports not sorted")
		}
	}
	if n != 3 {
		t.Errorf("Raízen: %d reports, want BPA, BPP, DRE", n)
	}
	if _, err := ReadStatementsZip(filepath.Join(t.TempDir(), "missing.zip"), Options{}); err == nil {
		t.Error("missing archive")
	}
}
