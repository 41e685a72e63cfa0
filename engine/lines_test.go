package engine

import (
	"bufio"
	"compress/gzip"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// cvmReport reads the ÚLTIMO rows of a gzipped CVM DFP/ITR statement file
// (ISO-8859-1, ';') ending at the reference date into a Report. Values are
// scaled by ESCALA_MOEDA.
func cvmReport(tb testing.TB, path, statement string) Report {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	var col map[string]int
	r := Report{Statement: MustLabel(statement), Aggregation: LabelConsolidated, Form: LabelDFP, StartDate: NoDate}
	for line := 1; sc.Scan(); line++ {
		// ISO-8859-1 to UTF-8: every byte is one rune.
		b := sc.Bytes()
		rs := make([]rune, len(b))
		for i, c := range b {
			rs[i] = rune(c)
		}
		fields := strings.Split(strings.TrimRight(string(rs), "\r"), ";")
		if col == nil {
			col = map[string]int{}
			for i, h := range fields {
				col[strings.TrimPrefix(h, "\ufeff")] = i
			}
			continue
		}
		get := func(name string) string {
			i, ok := col[name]
			if !ok || i >= len(fields) {
				tb.Fatalf("%s:%d: no column %s", path, line, name)
			}
			return fields[i]
		}
		if get("ORDEM_EXERC") != "ÚLTIMO" || get("DT_FIM_EXERC") != get("DT_REFER") {
			continue
		}
		r.CompanyID = get("CNPJ_CIA")
		r.ReferenceDate = mustDate(tb, get("DT_REFER"))
		r.EndDate = r.ReferenceDate
		if _, ok := col["DT_INI_EXERC"]; ok {
			r.StartDate = mustDate(tb, get("DT_INI_EXERC"))
		}
		r.Version, _ = strconv.Atoi(get("VERSAO"))
		v, err := strconv.ParseFloat(get("VL_CONTA"), 64)
		if err != nil {
			tb.Fatalf("%s:%d: %v", path, line, err)
		}
		if get("ESCALA_MOEDA") == "MIL" && !strings.HasPrefix(get("CD_CONTA"), "3.99") {
			v *= 1000
		}
		r.Accounts = append(r.Accounts, NewAccount(get("CD_CONTA"), get("DS_CONTA"), get("ST_CONTA_FIXA") == "S", Num(v)))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(r.Accounts) == 0 {
		tb.Fatalf("%s: no rows", path)
	}
	return r
}

func mustDate(tb testing.TB, s string) Date {
	tb.Helper()
	d, err := ParseDate(s)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// close12 reports whether a and b agree to 12 significant digits (both
// NaN counts as equal).
func close12(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-12*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func lineValues(tb testing.TB, r *Report) map[string]Num {
	tb.Helper()
	ls, vs := LinesFor(r.Statement.String()), Standardize(r)
	if len(ls) != len(vs) {
		tb.Fatalf("%d lines, %d values", len(ls), len(vs))
	}
	m := map[string]Num{}
	for i, l := range ls {
		m[l.ID] = vs[i]
	}
	return m
}

func TestStandardizeRealCVM(t *testing.T) {
	const dir = "testdata/cvm/"
	bpa := cvmReport(t, dir+"dfp_cia_aberta_BPA_con_2023_jalles.csv.gz", "BPA")
	bpp := cvmReport(t, dir+"dfp_cia_aberta_BPP_con_2023_jalles.csv.gz", "BPP")
	dre := cvmReport(t, dir+"dfp_cia_aberta_DRE_con_2023_jalles.csv.gz", "DRE")
	want := map[string]float64{
		"TOTAL_ASSETS": 6119077e3, "CURRENT_ASSETS": 2051383e3, "CASH_AND_EQUIVALENTS": 999121e3,
		"SHORT_TERM_INVESTMENTS": 14149e3, "RECEIVABLES": 47500e3, "INVENTORIES": 196186e3,
		"TOTAL_LIABILITIES_AND_EQUITY": 6119077e3, "CURRENT_LIABILITIES": 830359e3, "SHORT_TERM_DEBT": 343985e3,
		"LONG_TERM_DEBT": 3005099e3, "EQUITY": 1937244e3,
		"NET_REVENUE": 1707488e3, "COST_OF_GOODS_SOLD": -1160457e3, "GROSS_PROFIT": 547031e3,
		"OPERATING_EXPENSES": 429602e3, "EBIT": 976633e3, "FINANCIAL_RESULT": -268946e3,
		"FINANCIAL_EXPENSES": -445228e3, "PRE_TAX_INCOME": 707687e3, "INCOME_TAXES": -15358e3, "NET_INCOME": 692329e3,
	}
	got := map[string]Num{}
	for _, r := range []*Report{&bpa, &bpp, &dre} {
		for k, v := range lineValues(t, r) {
			got[k] = v
		}
		// The names of the standard lines are CVM's.
		names := map[string]string{}
		for _, a := range r.Accounts {
			names[a.Code()] = a.Name()
		}
		for _, l := range LinesFor(r.Statement.String()) {
			if name, ok := names[l.Codes[0]]; ok && name != l.Name {
				t.Errorf("%s: code %s is %q in CVM's file, %q here", l.ID, l.Codes[0], name, l.Name)
			}
		}
	}
	for id, w := range want {
		if !close12(float64(got[id]), w) {
			t.Errorf("%s = %v, want %v", id, got[id], w)
		}
	}
}

func TestStandardizeFinancialModel(t *testing.T) {
	dre := cvmReport(t, "testdata/cvm/dfp_cia_aberta_DRE_con_2022_bancointer.csv.gz", "DRE")
	got := lineValues(t, &dre)
	for id, w := range map[string]float64{
		"NET_REVENUE": 723645e3, "GROSS_PROFIT": 362092e3, "PRE_TAX_INCOME": -98571e3, "INCOME_TAXES": 71273e3,
		"CONTINUING_NET_INCOME": -27298e3, "NET_INCOME": -27298e3, "NET_INCOME_PARENT": -37767e3,
		// Lines of the commercial model only.
		"EBIT": math.NaN(), "FINANCIAL_RESULT": math.NaN(), "FINANCIAL_EXPENSES": math.NaN(), "SELLING_EXPENSES": math.NaN(),
	} {
		if !close12(float64(got[id]), w) {
			t.Errorf("%s = %v, want %v", id, got[id], w)
		}
	}
	// A bank's balance sheet: cash at 1.01, equity found by name.
	bpa := Report{Statement: LabelBPA, Accounts: []Account{
		NewAccount("1", "Ativo Total", false, 100), NewAccount("1.01", "Caixa e Equivalentes de Caixa", false, 7),
		NewAccount("1.02", "Ativos Financeiros", false, 90), NewAccount("1.01.01", "Disponibilidades", false, 3)}}
	b := lineValues(t, &bpa)
	if b["TOTAL_ASSETS"] != 100 || b["CASH_AND_EQUIVALENTS"] != 7 || b["CURRENT_ASSETS"].Valid() || b["NON_CURRENT_ASSETS"].Valid() {
		t.Errorf("bank BPA %v", b)
	}
	bpp := Report{Statement: LabelBPP, Accounts: []Account{
		NewAccount("2", "Passivo Total", false, 100),
		NewAccount("2.01", "Passivos Financeiros Avaliados ao Valor Justo através do Resultado", false, 10),
		NewAccount("2.03", "Provisões", false, 5),
		NewAccount("2.07", "Patrimônio Líquido Consolidado", false, 12),
		NewAccount("2.07.01", "Capital Social Realizado", false, 8)}}
	p := lineValues(t, &bpp)
	if p["EQUITY"] != 12 || p["CURRENT_LIABILITIES"].Valid() || p["SHORT_TERM_DEBT"].Valid() || p["TOTAL_LIABILITIES_AND_EQUITY"] != 100 {
		t.Errorf("bank BPP %v", p)
	}
}

func TestStandardize(t *testing.T) {
	r := Report{Statement: LabelDFCMD, Accounts: []Account{
		NewAccount("6.01", "", false, 10), NewAccount("6.02", "", false, -4), NewAccount("6.05", "", false, Null)}}
	v := lineValues(t, &r)
	if v["OPERATING_CASH_FLOW"] != 10 || v["INVESTING_CASH_FLOW"] != -4 || v["FINANCING_CASH_FLOW"].Valid() || v["NET_CHANGE_IN_CASH"].Valid() {
		t.Errorf("DFC_MD %v", v)
	}
	dva := Report{Statement: LabelDVA, Accounts: []Account{NewAccount("7.04.01", "", false, -5), NewAccount("7.08.04.02", "", false, 2)}}
	if v := lineValues(t, &dva); v["DEPRECIATION_AMORTIZATION"] != -5 || v["DIVIDENDS"] != 2 || v["INTEREST_ON_EQUITY"].Valid() {
		t.Errorf("DVA %v", v)
	}
	if Standardize(&Report{Statement: MustLabel("XYZ")}) != nil || LinesFor("XYZ") != nil {
		t.Error("unknown statement")
	}
	// Every statement has lines; ids are unique; every line has codes.
	seen := map[string]bool{}
	for _, l := range StandardLines() {
		if seen[l.ID] {
			t.Errorf("duplicate line %s", l.ID)
		}
		seen[l.ID] = true
		if len(l.Codes) == 0 || l.Name == "" || l.Section == "" {
			t.Errorf("incomplete line %+v", l)
		}
	}
	for _, st := range Statements {
		if len(LinesFor(st)) == 0 {
			t.Errorf("no lines for %s", st)
		}
	}
	for _, id := range []string{"TOTAL_ASSETS", "CURRENT_ASSETS", "CASH_AND_EQUIVALENTS", "SHORT_TERM_INVESTMENTS", "RECEIVABLES",
		"INVENTORIES", "NON_CURRENT_ASSETS", "TOTAL_LIABILITIES_AND_EQUITY", "CURRENT_LIABILITIES", "SHORT_TERM_DEBT",
		"NON_CURRENT_LIABILITIES", "LONG_TERM_DEBT", "EQUITY", "NET_REVENUE", "COST_OF_GOODS_SOLD", "GROSS_PROFIT",
		"OPERATING_EXPENSES", "EBIT", "FINANCIAL_RESULT", "PRE_TAX_INCOME", "INCOME_TAXES", "NET_INCOME",
		"DEPRECIATION_AMORTIZATION", "OPERATING_CASH_FLOW", "INVESTING_CASH_FLOW", "FINANCING_CASH_FLOW"} {
		if !seen[id] {
			t.Errorf("missing line %s", id)
		}
	}
}

func TestStandardizeModelDetection(t *testing.T) {
	// Bank names on the commercial layout (3.05 EBIT, 3.11 net income) are
	// read with the commercial codes.
	hybrid := Report{Statement: LabelDRE, Accounts: []Account{
		NewAccount("3.01", "Receitas da Intermediação Financeira", false, 100),
		NewAccount("3.05", "Resultado Antes do Resultado Financeiro e dos Tributos", false, 30),
		NewAccount("3.07", "Resultado Antes dos Tributos sobre o Lucro", false, 30),
		NewAccount("3.08", "Imposto de Renda e Contribuição Social sobre o Lucro", false, -10),
		NewAccount("3.09", "Resultado Líquido das Operações Continuadas", false, 20),
		NewAccount("3.11", "Lucro/Prejuízo Consolidado do Período", false, 20)}}
	v := lineValues(t, &hybrid)
	if v["EBIT"] != 30 || v["INCOME_TAXES"] != -10 || v["NET_INCOME"] != 20 || v["PRE_TAX_INCOME"] != 30 {
		t.Errorf("hybrid %v", v)
	}
	// Unnamed accounts: the financial layout is recognized by 3.01 and the
	// absence of 3.11; otherwise the commercial codes apply.
	unnamed := Report{Statement: LabelDRE, Accounts: []Account{
		NewAccount("3.01", "", false, 100), NewAccount("3.05", "", false, 30), NewAccount("3.11", "", false, 20)}}
	if v := lineValues(t, &unnamed); v["EBIT"] != 30 || v["NET_INCOME"] != 20 {
		t.Errorf("unnamed %v", v)
	}
	bank := Report{Statement: LabelDRE, Accounts: []Account{
		NewAccount("3.01", "RECEITAS DA INTERMEDIACAO FINANCEIRA", false, 100), NewAccount("3.05", "", false, 30), NewAccount("3.09", "", false, 20)}}
	if v := lineValues(t, &bank); v["EBIT"].Valid() || v["PRE_TAX_INCOME"] != 30 || v["NET_INCOME"] != 20 {
		t.Errorf("unnamed bank %v", v)
	}
}

func TestStandardizeDVAGuards(t *testing.T) {
	r := Report{Statement: LabelDVA, Accounts: []Account{
		NewAccount("7.04.01", "Provisão para Créditos de Liquidação Duvidosa", false, -9),
		NewAccount("7.08.04.01", "Juros sobre o Capital Próprio", false, 3),
		NewAccount("7.08.04.02", "DIVIDENDOS", false, 4)}}
	v := lineValues(t, &r)
	if v["DEPRECIATION_AMORTIZATION"].Valid() || v["INTEREST_ON_EQUITY"] != 3 || v["DIVIDENDS"] != 4 {
		t.Errorf("guarded DVA %v", v)
	}
}

// TestAppendStandardized: the append form writes Standardize's values
// after dst's, without allocating when dst has room, and LinesFor shares
// its slices.
func TestAppendStandardized(t *testing.T) {
	r := Report{Statement: LabelDFCMD, Accounts: []Account{NewAccount("6.01", "", false, 10), NewAccount("6.05", "", false, 3)}}
	want := Standardize(&r)
	buf := make([]Num, 1, 64)
	buf[0] = 42
	got := AppendStandardized(buf, &r)
	if len(got) != 1+len(want) || got[0] != 42 {
		t.Fatalf("AppendStandardized = %v", got)
	}
	for i, v := range want {
		if !close12(float64(got[1+i]), float64(v)) {
			t.Errorf("value %d: %v, want %v", i, got[1+i], v)
		}
	}
	if got := AppendStandardized(buf[:1], &Report{Statement: MustLabel("XYZ")}); len(got) != 1 {
		t.Errorf("unknown statement appended %v", got[1:])
	}
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendStandardized(buf[:0], &r)
		if len(LinesFor(r.Statement.String())) != len(buf) {
			t.Fatal("lines and values differ in length")
		}
	}); n > 0 {
		t.Errorf("AppendStandardized and LinesFor allocate %v times", n)
	}
	if &LinesFor("DFC_MD")[0] != &LinesFor("DFC_MI")[0] {
		t.Error("DFC_MD does not share the DFC_MI lines")
	}
}
