package engine

import (
	"math"
	"slices"
	"strings"
)

// Sections of standardized lines.
const (
	SectionBalanceSheet        = "BALANCE_SHEET"
	SectionIncomeStatement     = "INCOME_STATEMENT"
	SectionComprehensiveIncome = "COMPREHENSIVE_INCOME"
	SectionCashFlow            = "CASH_FLOW"
	SectionValueAdded          = "VALUE_ADDED"
)

// StandardLine is one line of the standardized reports: a stable id mapped
// to the CVM account codes (CD_CONTA) that carry it. Values are BRL as
// filed (costs, expenses and taxes negative, as in the DRE).
//
// CVM has two account models: the one of commercial and industrial
// companies (Codes) and the one of financial institutions (FinancialCodes),
// recognized by account names: DRE 3.05 "Resultado Antes dos Tributos sobre
// o Lucro" (or, unnamed, 3.01 "Receitas da Intermediação Financeira" without
// a 3.11), BPA 1.01 "Caixa...", BPP 2.01 "Passivos Financeiros...". In the
// financial model EQUITY is the first top-level BPP account named
// "Patrimônio Líquido...", and lines without FinancialCodes are null. A
// named DVA account fills DEPRECIATION_AMORTIZATION, EQUITY_REMUNERATION,
// INTEREST_ON_EQUITY or DIVIDENDS only when its name says so.
type StandardLine struct {
	ID             string   // e.g. TOTAL_ASSETS
	Name           string   // CVM name of the first code (DS_CONTA)
	Section        string   // Section* constant
	Statement      string   // BPA, BPP, DRE, DRA, DVA or DFC_MI (cash-flow lines apply to DFC_MD too)
	Codes          []string // CVM codes; the first present in a report wins
	FinancialCodes []string // the same for the financial institutions' model
}

// stdLine makes a line of the commercial model; cash-flow and
// comprehensive-income lines, total assets and total liabilities have the
// same codes in the financial model.
func stdLine(id, name, section, statement string, codes ...string) StandardLine {
	l := StandardLine{ID: id, Name: name, Section: section, Statement: statement, Codes: codes}
	if statement == "DFC_MI" || statement == "DRA" || id == "TOTAL_ASSETS" || id == "TOTAL_LIABILITIES_AND_EQUITY" {
		l.FinancialCodes = codes // the same in both models
	}
	return l
}

// finCodes sets the financial-model codes of l.
func finCodes(l StandardLine, codes ...string) StandardLine {
	l.FinancialCodes = codes
	return l
}

var standardLines = []StandardLine{
	stdLine("TOTAL_ASSETS", "Ativo Total", SectionBalanceSheet, "BPA", "1"),
	stdLine("CURRENT_ASSETS", "Ativo Circulante", SectionBalanceSheet, "BPA", "1.01"),
	finCodes(stdLine("CASH_AND_EQUIVALENTS", "Caixa e Equivalentes de Caixa", SectionBalanceSheet, "BPA", "1.01.01"), "1.01"),
	stdLine("SHORT_TERM_INVESTMENTS", "Aplicações Financeiras", SectionBalanceSheet, "BPA", "1.01.02"),
	stdLine("RECEIVABLES", "Contas a Receber", SectionBalanceSheet, "BPA", "1.01.03"),
	stdLine("INVENTORIES", "Estoques", SectionBalanceSheet, "BPA", "1.01.04"),
	stdLine("NON_CURRENT_ASSETS", "Ativo Não Circulante", SectionBalanceSheet, "BPA", "1.02"),
	stdLine("LONG_TERM_RECEIVABLES", "Ativo Realizável a Longo Prazo", SectionBalanceSheet, "BPA", "1.02.01"),
	stdLine("INVESTMENTS", "Investimentos", SectionBalanceSheet, "BPA", "1.02.02"),
	stdLine("PROPERTY_PLANT_EQUIPMENT", "Imobilizado", SectionBalanceSheet, "BPA", "1.02.03"),
	stdLine("INTANGIBLE_ASSETS", "Intangível", SectionBalanceSheet, "BPA", "1.02.04"),

	stdLine("TOTAL_LIABILITIES_AND_EQUITY", "Passivo Total", SectionBalanceSheet, "BPP", "2"),
	stdLine("CURRENT_LIABILITIES", "Passivo Circulante", SectionBalanceSheet, "BPP", "2.01"),
	stdLine("SUPPLIERS", "Fornecedores", SectionBalanceSheet, "BPP", "2.01.02"),
	stdLine("SHORT_TERM_DEBT", "Empréstimos e Financiamentos", SectionBalanceSheet, "BPP", "2.01.04"),
	stdLine("NON_CURRENT_LIABILITIES", "Passivo Não Circulante", SectionBalanceSheet, "BPP", "2.02"),
	stdLine("LONG_TERM_DEBT", "Empréstimos e Financiamentos", SectionBalanceSheet, "BPP", "2.02.01"),
	stdLine("EQUITY", "Patrimônio Líquido Consolidado", SectionBalanceSheet, "BPP", "2.03"),
	stdLine("SHARE_CAPITAL", "Capital Social Realizado", SectionBalanceSheet, "BPP", "2.03.01"),
	stdLine("NON_CONTROLLING_INTERESTS", "Participação dos Acionistas Não Controladores", SectionBalanceSheet, "BPP", "2.03.09"),

	finCodes(stdLine("NET_REVENUE", "Receita de Venda de Bens e/ou Serviços", SectionIncomeStatement, "DRE", "3.01"), "3.01"),
	finCodes(stdLine("COST_OF_GOODS_SOLD", "Custo dos Bens e/ou Serviços Vendidos", SectionIncomeStatement, "DRE", "3.02"), "3.02"),
	finCodes(stdLine("GROSS_PROFIT", "Resultado Bruto", SectionIncomeStatement, "DRE", "3.03"), "3.03"),
	finCodes(stdLine("OPERATING_EXPENSES", "Despesas/Receitas Operacionais", SectionIncomeStatement, "DRE", "3.04"), "3.04"),
	stdLine("SELLING_EXPENSES", "Despesas com Vendas", SectionIncomeStatement, "DRE", "3.04.01"),
	stdLine("GENERAL_AND_ADMINISTRATIVE_EXPENSES", "Despesas Gerais e Administrativas", SectionIncomeStatement, "DRE", "3.04.02"),
	stdLine("EQUITY_METHOD_RESULT", "Resultado de Equivalência Patrimonial", SectionIncomeStatement, "DRE", "3.04.06"),
	stdLine("EBIT", "Resultado Antes do Resultado Financeiro e dos Tributos", SectionIncomeStatement, "DRE", "3.05"),
	stdLine("FINANCIAL_RESULT", "Resultado Financeiro", SectionIncomeStatement, "DRE", "3.06"),
	stdLine("FINANCIAL_INCOME", "Receitas Financeiras", SectionIncomeStatement, "DRE", "3.06.01"),
	stdLine("FINANCIAL_EXPENSES", "Despesas Financeiras", SectionIncomeStatement, "DRE", "3.06.02"),
	finCodes(stdLine("PRE_TAX_INCOME", "Resultado Antes dos Tributos sobre o Lucro", SectionIncomeStatement, "DRE", "3.07"), "3.05"),
	finCodes(stdLine("INCOME_TAXES", "Imposto de Renda e Contribuição Social sobre o Lucro", SectionIncomeStatement, "DRE", "3.08"), "3.06"),
	finCodes(stdLine("CONTINUING_NET_INCOME", "Resultado Líquido das Operações Continuadas", SectionIncomeStatement, "DRE", "3.09"), "3.07"),
	finCodes(stdLine("DISCONTINUED_NET_INCOME", "Resultado Líquido de Operações Descontinuadas", SectionIncomeStatement, "DRE", "3.10"), "3.08"),
	finCodes(stdLine("NET_INCOME", "Lucro/Prejuízo Consolidado do Período", SectionIncomeStatement, "DRE", "3.11"), "3.09"),
	finCodes(stdLine("NET_INCOME_PARENT", "Atribuído a Sócios da Empresa Controladora", SectionIncomeStatement, "DRE", "3.11.01"), "3.09.01"),
	finCodes(stdLine("NET_INCOME_NON_CONTROLLING", "Atribuído a Sócios Não Controladores", SectionIncomeStatement, "DRE", "3.11.02"), "3.09.02"),

	stdLine("COMPREHENSIVE_NET_INCOME", "Lucro Líquido do Período", SectionComprehensiveIncome, "DRA", "4.01"),
	stdLine("OTHER_COMPREHENSIVE_INCOME", "Outros Resultados Abrangentes", SectionComprehensiveIncome, "DRA", "4.02"),
	stdLine("COMPREHENSIVE_INCOME", "Resultado Abrangente do Período", SectionComprehensiveIncome, "DRA", "4.03"),

	stdLine("OPERATING_CASH_FLOW", "Caixa Líquido Atividades Operacionais", SectionCashFlow, "DFC_MI", "6.01"),
	stdLine("INVESTING_CASH_FLOW", "Caixa Líquido Atividades de Investimento", SectionCashFlow, "DFC_MI", "6.02"),
	stdLine("FINANCING_CASH_FLOW", "Caixa Líquido Atividades de Financiamento", SectionCashFlow, "DFC_MI", "6.03"),
	stdLine("FX_EFFECT_ON_CASH", "Variação Cambial s/ Caixa e Equivalentes", SectionCashFlow, "DFC_MI", "6.04"),
	stdLine("NET_CHANGE_IN_CASH", "Aumento (Redução) de Caixa e Equivalentes", SectionCashFlow, "DFC_MI", "6.05"),

	stdLine("REVENUES_VALUE_ADDED", "Receitas", SectionValueAdded, "DVA", "7.01"),
	stdLine("DEPRECIATION_AMORTIZATION", "Depreciação, Amortização e Exaustão", SectionValueAdded, "DVA", "7.04.01"),
	stdLine("VALUE_ADDED_TO_DISTRIBUTE", "Valor Adicionado Total a Distribuir", SectionValueAdded, "DVA", "7.07"),
	stdLine("PERSONNEL", "Pessoal", SectionValueAdded, "DVA", "7.08.01"),
	stdLine("TAXES_AND_CONTRIBUTIONS", "Impostos, Taxas e Contribuições", SectionValueAdded, "DVA", "7.08.02"),
	stdLine("THIRD_PARTY_CAPITAL_REMUNERATION", "Remuneração de Capitais de Terceiros", SectionValueAdded, "DVA", "7.08.03"),
	stdLine("EQUITY_REMUNERATION", "Remuneração de Capitais Próprios", SectionValueAdded, "DVA", "7.08.04"),
	stdLine("INTEREST_ON_EQUITY", "Juros sobre o Capital Próprio", SectionValueAdded, "DVA", "7.08.04.01"),
	stdLine("DIVIDENDS", "Dividendos", SectionValueAdded, "DVA", "7.08.04.02"),
	stdLine("RETAINED_EARNINGS", "Lucros Retidos / Prejuízo do Período", SectionValueAdded, "DVA", "7.08.04.03"),
}

// lineGuards are name fragments (folded) that a named account must contain to
// fill a line: the DVA codes differ between CVM's models.
var lineGuards = map[string]string{
	"DEPRECIATION_AMORTIZATION": "deprecia",
	"EQUITY_REMUNERATION":       "capitais proprios",
	"INTEREST_ON_EQUITY":        "juros sobre o capital",
	"DIVIDENDS":                 "dividendo",
}

// StandardLines returns every standardized line, grouped by statement in a
// stable order. The caller owns the slice (Codes are shared: do not modify).
func StandardLines() []StandardLine { return append([]StandardLine(nil), standardLines...) }

// LinesFor returns the standardized lines of statement, in the order of
// Standardize's values (DFC_MD uses the DFC_MI lines); nil for an unknown
// statement. The slice is shared and must not be modified; it does not
// allocate.
func LinesFor(statement string) []StandardLine {
	if t := lineTables[lineStatement(statement)]; t != nil {
		return t.std
	}
	return nil
}

// Standardize returns r's values (BRL) for LinesFor(r.Statement), in that
// order; a line whose codes are all absent (or whose value is missing) is
// Null. Unknown statements return nil. The caller owns the slice.
func Standardize(r *Report) []Num {
	t := lineTables[lineStatement(r.Statement.String())]
	if t == nil {
		return nil
	}
	return AppendStandardized(make([]Num, 0, t.width), r)
}

// AppendStandardized appends Standardize(r)'s values to dst and returns
// the extended slice; dst is returned unchanged for an unknown statement.
// It allocates only when dst lacks the capacity.
func AppendStandardized(dst []Num, r *Report) []Num {
	t := lineTables[lineStatement(r.Statement.String())]
	if t == nil {
		return dst
	}
	n := len(dst)
	dst = slices.Grow(dst, t.width)[:n+t.width]
	t.fill(r.AccountList(), dst[n:])
	return dst
}

// lineStatement maps a statement to the one whose lines it uses.
func lineStatement(s string) string {
	if s == "DFC_MD" {
		return "DFC_MI"
	}
	return s
}

// lineTable is the compiled code lookup of one statement, for both models.
type lineTable struct {
	statement string
	std       []StandardLine             // its lines, in value order (LinesFor)
	codes     [2]map[string][]lineTarget // per model: code -> positions it fills
	equity    int                        // position of EQUITY (BPP), else -1
	width     int
}

type lineTarget struct {
	pos, prio int    // position in the statement's lines; index of the code in Codes (lower wins)
	guard     string // see lineGuards
}

const (
	modelCommercial = 0
	modelFinancial  = 1
)

var lineTables = compileLineTables()

func compileLineTables() map[string]*lineTable {
	m := map[string]*lineTable{}
	for _, l := range standardLines {
		t := m[l.Statement]
		if t == nil {
			t = &lineTable{statement: l.Statement, equity: -1,
				codes: [2]map[string][]lineTarget{{}, {}}}
			m[l.Statement] = t
		}
		pos := len(t.std)
		t.std = append(t.std, l)
		for model, codes := range [2][]string{l.Codes, l.FinancialCodes} {
			for p, c := range codes {
				t.codes[model][c] = append(t.codes[model][c], lineTarget{pos, p, lineGuards[l.ID]})
			}
		}
		if l.ID == "EQUITY" {
			t.equity = pos
		}
	}
	for _, t := range m {
		t.width = len(t.std)
	}
	return m
}

// model tells which CVM account model accounts follow.
func (t *lineTable) model(accounts AccountList) int {
	switch t.statement {
	case "DRE":
		// The financial model has no operating/financial split: its 3.05 is
		// the pre-tax result and it ends at 3.09.
		var n301, n305 string
		has305, has311 := false, false
		for i := range accounts.Len() {
			switch a := accounts.At(i); a.Code() {
			case "3.01":
				n301 = a.Name()
			case "3.05":
				n305, has305 = a.Name(), true
			case "3.11":
				has311 = true
			}
		}
		if has305 && n305 != "" {
			return modelOf(strings.HasPrefix(foldAccents(n305), "resultado antes dos tributos"))
		}
		return modelOf(strings.Contains(foldAccents(n301), "intermediacao financeira") && !has311)
	case "BPA":
		return modelOf(strings.HasPrefix(foldAccents(accountName(accounts, "1.01")), "caixa"))
	case "BPP":
		return modelOf(strings.HasPrefix(foldAccents(accountName(accounts, "2.01")), "passivos financeiros"))
	}
	return modelCommercial
}

func modelOf(financial bool) int {
	if financial {
		return modelFinancial
	}
	return modelCommercial
}

func accountName(accounts AccountList, code string) string {
	for i := range accounts.Len() {
		if a := accounts.At(i); a.Code() == code {
			return a.Name()
		}
	}
	return ""
}

// fill writes the values of accounts into out (len t.width), Null where
// absent.
func (t *lineTable) fill(accounts AccountList, out []Num) {
	var prioBuf [64]int
	var prio []int
	if t.width <= len(prioBuf) {
		prio = prioBuf[:t.width]
	} else {
		prio = make([]int, t.width)
	}
	for i := range out {
		out[i] = Null
		prio[i] = math.MaxInt
	}
	model := t.model(accounts)
	codes := t.codes[model]
	for ai := range accounts.Len() {
		a := accounts.At(ai)
		for _, tg := range codes[a.Code()] {
			if tg.guard != "" && a.Name() != "" && !strings.Contains(foldAccents(a.Name()), tg.guard) {
				continue
			}
			if tg.prio < prio[tg.pos] {
				prio[tg.pos] = tg.prio
				out[tg.pos] = a.Value
			}
		}
	}
	if model == modelFinancial && t.equity >= 0 {
		for ai := range accounts.Len() {
			a := accounts.At(ai)
			if strings.HasPrefix(a.Code(), "2.") && strings.Count(a.Code(), ".") == 1 &&
				strings.HasPrefix(foldAccents(a.Name()), "patrimonio liquido") {
				out[t.equity] = a.Value
				break
			}
		}
	}
}

// foldAccents lowercases s and removes Portuguese accents.
func foldAccents(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case 'á', 'à', 'â', 'ã', 'ä', 'Á', 'À', 'Â', 'Ã', 'Ä':
			r = 'a'
		case 'é', 'ê', 'è', 'É', 'Ê', 'È':
			r = 'e'
		case 'í', 'ì', 'Í', 'Ì':
			r = 'i'
		case 'ó', 'ô', 'õ', 'ò', 'Ó', 'Ô', 'Õ', 'Ò':
			r = 'o'
		case 'ú', 'ü', 'ù', 'Ú', 'Ü', 'Ù':
			r = 'u'
		case 'ç', 'Ç':
			r = 'c'
		default:
			if r >= 'A' && r <= 'Z' {
				r += 'a' - 'A'
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
