package ratios

import (
	"math"
	"strings"

	"github.com/pregao/pregao/engine"
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

func sl(id, name, section, statement string, codes ...string) StandardLine {
	l := StandardLine{ID: id, Name: name, Section: section, Statement: statement, Codes: codes}
	if statement == "DFC_MI" || statement == "DRA" || id == "TOTAL_ASSETS" || id == "TOTAL_LIABILITIES_AND_EQUITY" {
		l.FinancialCodes = codes // the same in both models
	}
	return l
}

// fin sets the financial-model codes of l.
func fin(l StandardLine, codes ...string) StandardLine {
	l.FinancialCodes = codes
	return l
}

var standardLines = []StandardLine{
	sl("TOTAL_ASSETS", "Ativo Total", SectionBalanceSheet, "BPA", "1"),
	sl("CURRENT_ASSETS", "Ativo Circulante", SectionBalanceSheet, "BPA", "1.01"),
	fin(sl("CASH_AND_EQUIVALENTS", "Caixa e Equivalentes de Caixa", SectionBalanceSheet, "BPA", "1.01.01"), "1.01"),
	sl("SHORT_TERM_INVESTMENTS", "Aplicações Financeiras", SectionBalanceSheet, "BPA", "1.01.02"),
	sl("RECEIVABLES", "Contas a Receber", SectionBalanceSheet, "BPA", "1.01.03"),
	sl("INVENTORIES", "Estoques", SectionBalanceSheet, "BPA", "1.01.04"),
	sl("NON_CURRENT_ASSETS", "Ativo Não Circulante", SectionBalanceSheet, "BPA", "1.02"),
	sl("LONG_TERM_RECEIVABLES", "Ativo Realizável a Longo Prazo", SectionBalanceSheet, "BPA", "1.02.01"),
	sl("INVESTMENTS", "Investimentos", SectionBalanceSheet, "BPA", "1.02.02"),
	sl("PROPERTY_PLANT_EQUIPMENT", "Imobilizado", SectionBalanceSheet, "BPA", "1.02.03"),
	sl("INTANGIBLE_ASSETS", "Intangível", SectionBalanceSheet, "BPA", "1.02.04"),

	sl("TOTAL_LIABILITIES_AND_EQUITY", "Passivo Total", SectionBalanceSheet, "BPP", "2"),
	sl("CURRENT_LIABILITIES", "Passivo Circulante", SectionBalanceSheet, "BPP", "2.01"),
	sl("SUPPLIERS", "Fornecedores", SectionBalanceSheet, "BPP", "2.01.02"),
	sl("SHORT_TERM_DEBT", "Empréstimos e Financiamentos", SectionBalanceSheet, "BPP", "2.01.04"),
	sl("NON_CURRENT_LIABILITIES", "Passivo Não Circulante", SectionBalanceSheet, "BPP", "2.02"),
	sl("LONG_TERM_DEBT", "Empréstimos e Financiamentos", SectionBalanceSheet, "BPP", "2.02.01"),
	sl("EQUITY", "Patrimônio Líquido Consolidado", SectionBalanceSheet, "BPP", "2.03"),
	sl("SHARE_CAPITAL", "Capital Social Realizado", SectionBalanceSheet, "BPP", "2.03.01"),
	sl("NON_CONTROLLING_INTERESTS", "Participação dos Acionistas Não Controladores", SectionBalanceSheet, "BPP", "2.03.09"),

	fin(sl("NET_REVENUE", "Receita de Venda de Bens e/ou Serviços", SectionIncomeStatement, "DRE", "3.01"), "3.01"),
	fin(sl("COST_OF_GOODS_SOLD", "Custo dos Bens e/ou Serviços Vendidos", SectionIncomeStatement, "DRE", "3.02"), "3.02"),
	fin(sl("GROSS_PROFIT", "Resultado Bruto", SectionIncomeStatement, "DRE", "3.03"), "3.03"),
	fin(sl("OPERATING_EXPENSES", "Despesas/Receitas Operacionais", SectionIncomeStatement, "DRE", "3.04"), "3.04"),
	sl("SELLING_EXPENSES", "Despesas com Vendas", SectionIncomeStatement, "DRE", "3.04.01"),
	sl("GENERAL_AND_ADMINISTRATIVE_EXPENSES", "Despesas Gerais e Administrativas", SectionIncomeStatement, "DRE", "3.04.02"),
	sl("EQUITY_METHOD_RESULT", "Resultado de Equivalência Patrimonial", SectionIncomeStatement, "DRE", "3.04.06"),
	sl("EBIT", "Resultado Antes do Resultado Financeiro e dos Tributos", SectionIncomeStatement, "DRE", "3.05"),
	sl("FINANCIAL_RESULT", "Resultado Financeiro", SectionIncomeStatement, "DRE", "3.06"),
	sl("FINANCIAL_INCOME", "Receitas Financeiras", SectionIncomeStatement, "DRE", "3.06.01"),
	sl("FINANCIAL_EXPENSES", "Despesas Financeiras", SectionIncomeStatement, "DRE", "3.06.02"),
	fin(sl("PRE_TAX_INCOME", "Resultado Antes dos Tributos sobre o Lucro", SectionIncomeStatement, "DRE", "3.07"), "3.05"),
	fin(sl("INCOME_TAXES", "Imposto de Renda e Contribuição Social sobre o Lucro", SectionIncomeStatement, "DRE", "3.08"), "3.06"),
	fin(sl("CONTINUING_NET_INCOME", "Resultado Líquido das Operações Continuadas", SectionIncomeStatement, "DRE", "3.09"), "3.07"),
	fin(sl("DISCONTINUED_NET_INCOME", "Resultado Líquido de Operações Descontinuadas", SectionIncomeStatement, "DRE", "3.10"), "3.08"),
	fin(sl("NET_INCOME", "Lucro/Prejuízo Consolidado do Período", SectionIncomeStatement, "DRE", "3.11"), "3.09"),
	fin(sl("NET_INCOME_PARENT", "Atribuído a Sócios da Empresa Controladora", SectionIncomeStatement, "DRE", "3.11.01"), "3.09.01"),
	fin(sl("NET_INCOME_NON_CONTROLLING", "Atribuído a Sócios Não Controladores", SectionIncomeStatement, "DRE", "3.11.02"), "3.09.02"),

	sl("COMPREHENSIVE_NET_INCOME", "Lucro Líquido do Período", SectionComprehensiveIncome, "DRA", "4.01"),
	sl("OTHER_COMPREHENSIVE_INCOME", "Outros Resultados Abrangentes", SectionComprehensiveIncome, "DRA", "4.02"),
	sl("COMPREHENSIVE_INCOME", "Resultado Abrangente do Período", SectionComprehensiveIncome, "DRA", "4.03"),

	sl("OPERATING_CASH_FLOW", "Caixa Líquido Atividades Operacionais", SectionCashFlow, "DFC_MI", "6.01"),
	sl("INVESTING_CASH_FLOW", "Caixa Líquido Atividades de Investimento", SectionCashFlow, "DFC_MI", "6.02"),
	sl("FINANCING_CASH_FLOW", "Caixa Líquido Atividades de Financiamento", SectionCashFlow, "DFC_MI", "6.03"),
	sl("FX_EFFECT_ON_CASH", "Variação Cambial s/ Caixa e Equivalentes", SectionCashFlow, "DFC_MI", "6.04"),
	sl("NET_CHANGE_IN_CASH", "Aumento (Redução) de Caixa e Equivalentes", SectionCashFlow, "DFC_MI", "6.05"),

	sl("REVENUES_VALUE_ADDED", "Receitas", SectionValueAdded, "DVA", "7.01"),
	sl("DEPRECIATION_AMORTIZATION", "Depreciação, Amortização e Exaustão", SectionValueAdded, "DVA", "7.04.01"),
	sl("VALUE_ADDED_TO_DISTRIBUTE", "Valor Adicionado Total a Distribuir", SectionValueAdded, "DVA", "7.07"),
	sl("PERSONNEL", "Pessoal", SectionValueAdded, "DVA", "7.08.01"),
	sl("TAXES_AND_CONTRIBUTIONS", "Impostos, Taxas e Contribuições", SectionValueAdded, "DVA", "7.08.02"),
	sl("THIRD_PARTY_CAPITAL_REMUNERATION", "Remuneração de Capitais de Terceiros", SectionValueAdded, "DVA", "7.08.03"),
	sl("EQUITY_REMUNERATION", "Remuneração de Capitais Próprios", SectionValueAdded, "DVA", "7.08.04"),
	sl("INTEREST_ON_EQUITY", "Juros sobre o Capital Próprio", SectionValueAdded, "DVA", "7.08.04.01"),
	sl("DIVIDENDS", "Dividendos", SectionValueAdded, "DVA", "7.08.04.02"),
	sl("RETAINED_EARNINGS", "Lucros Retidos / Prejuízo do Período", SectionValueAdded, "DVA", "7.08.04.03"),
}

// guards are name fragments (folded) that a named account must contain to
// fill a line: the DVA codes differ between CVM's models.
var guards = map[string]string{
	"DEPRECIATION_AMORTIZATION": "deprecia",
	"EQUITY_REMUNERATION":       "capitais proprios",
	"INTEREST_ON_EQUITY":        "juros sobre o capital",
	"DIVIDENDS":                 "dividendo",
}

// StandardLines returns every standardized line, grouped by statement in a
// stable order. The caller owns the slice (Codes are shared: do not modify).
func StandardLines() []StandardLine { return append([]StandardLine(nil), standardLines...) }

// LinesFor returns the standardized lines of statement, in the order of
// Standardize's values (DFC_MD uses the DFC_MI lines). Unknown statements
// return nil.
func LinesFor(statement string) []StandardLine {
	t := tables[lineStatement(statement)]
	if t == nil {
		return nil
	}
	out := make([]StandardLine, len(t.lines))
	for i, li := range t.lines {
		out[i] = standardLines[li]
	}
	return out
}

// Standardize returns r's values (BRL) for LinesFor(r.Statement), in that
// order; a line whose codes are all absent (or whose value is missing) is
// engine.Null. Unknown statements return nil.
func Standardize(r *engine.Report) []engine.Num {
	t := tables[lineStatement(r.Statement)]
	if t == nil {
		return nil
	}
	out := make([]engine.Num, len(t.lines))
	t.fill(r.Accounts, out)
	return out
}

func lineStatement(s string) string {
	if s == "DFC_MD" {
		return "DFC_MI"
	}
	return s
}

// table is the compiled code lookup of one statement, for both models.
type table struct {
	statement string
	lines     []int                  // indexes into standardLines
	codes     [2]map[string][]target // per model: code -> positions it fills
	equity    int                    // position of EQUITY (BPP), else -1
	width     int
}

type target struct {
	pos, prio int    // position in lines; index of the code in Codes (lower wins)
	guard     string // see guards
}

const (
	modelCommercial = 0
	modelFinancial  = 1
)

var tables = compileTables()

func compileTables() map[string]*table {
	m := map[string]*table{}
	for i, l := range standardLines {
		t := m[l.Statement]
		if t == nil {
			t = &table{statement: l.Statement, equity: -1,
				codes: [2]map[string][]target{{}, {}}}
			m[l.Statement] = t
		}
		pos := len(t.lines)
		t.lines = append(t.lines, i)
		for model, codes := range [2][]string{l.Codes, l.FinancialCodes} {
			for p, c := range codes {
				t.codes[model][c] = append(t.codes[model][c], target{pos, p, guards[l.ID]})
			}
		}
		if l.ID == "EQUITY" {
			t.equity = pos
		}
	}
	for _, t := range m {
		t.width = len(t.lines)
	}
	return m
}

// model tells which CVM account model accounts follow.
func (t *table) model(accounts []engine.Account) int {
	switch t.statement {
	case "DRE":
		// The financial model has no operating/financial split: its 3.05 is
		// the pre-tax result and it ends at 3.09.
		var n301, n305 string
		has305, has311 := false, false
		for i := range accounts {
			switch accounts[i].Code() {
			case "3.01":
				n301 = accounts[i].Name()
			case "3.05":
				n305, has305 = accounts[i].Name(), true
			case "3.11":
				has311 = true
			}
		}
		if has305 && n305 != "" {
			return modelIf(strings.HasPrefix(fold(n305), "resultado antes dos tributos"))
		}
		return modelIf(strings.Contains(fold(n301), "intermediacao financeira") && !has311)
	case "BPA":
		return modelIf(strings.HasPrefix(fold(nameOf(accounts, "1.01")), "caixa"))
	case "BPP":
		return modelIf(strings.HasPrefix(fold(nameOf(accounts, "2.01")), "passivos financeiros"))
	}
	return modelCommercial
}

func modelIf(financial bool) int {
	if financial {
		return modelFinancial
	}
	return modelCommercial
}

func nameOf(accounts []engine.Account, code string) string {
	for i := range accounts {
		if accounts[i].Code() == code {
			return accounts[i].Name()
		}
	}
	return ""
}

// fill writes the values of accounts into out (len t.width), Null where
// absent.
func (t *table) fill(accounts []engine.Account, out []engine.Num) {
	var prioBuf [64]int
	var prio []int
	if t.width <= len(prioBuf) {
		prio = prioBuf[:t.width]
	} else {
		prio = make([]int, t.width)
	}
	for i := range out {
		out[i] = engine.Null
		prio[i] = math.MaxInt
	}
	model := t.model(accounts)
	codes := t.codes[model]
	for ai := range accounts {
		a := &accounts[ai]
		for _, tg := range codes[a.Code()] {
			if tg.guard != "" && a.Name() != "" && !strings.Contains(fold(a.Name()), tg.guard) {
				continue
			}
			if tg.prio < prio[tg.pos] {
				prio[tg.pos] = tg.prio
				out[tg.pos] = a.Value
			}
		}
	}
	if model == modelFinancial && t.equity >= 0 {
		for ai := range accounts {
			a := &accounts[ai]
			if strings.HasPrefix(a.Code(), "2.") && strings.Count(a.Code(), ".") == 1 &&
				strings.HasPrefix(fold(a.Name()), "patrimonio liquido") {
				out[t.equity] = a.Value
				break
			}
		}
	}
}

// fold lowercases s and removes Portuguese accents.
func fold(s string) string {
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

// Items of the ratio engine: flows first (summed over quarters), then
// balances (point in time).
const (
	itRevenue = iota
	itCOGS
	itGross
	itEBIT
	itFinExp
	itPreTax
	itTaxes
	itNetIncome
	itDA         // depreciation and amortization, magnitude (DVA, else DFC)
	itDAFallback // from the DFC add-backs
	itJCP
	itDividends
	nFlows
)

const (
	itAssets = nFlows + iota
	itCurAssets
	itCash
	itSTInvest
	itInventories
	itCurLiab
	itSTDebt
	itLTDebt
	itEquity
	nItems
)

// vals holds one value per item; NaN is missing.
type vals [nItems]float64

var nanVals = func() (v vals) {
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}()

// itemLines maps items to standard line ids.
var itemLines = map[int]string{
	itRevenue: "NET_REVENUE", itCOGS: "COST_OF_GOODS_SOLD", itGross: "GROSS_PROFIT", itEBIT: "EBIT",
	itFinExp: "FINANCIAL_EXPENSES", itPreTax: "PRE_TAX_INCOME", itTaxes: "INCOME_TAXES", itNetIncome: "NET_INCOME",
	itDA: "DEPRECIATION_AMORTIZATION", itJCP: "INTEREST_ON_EQUITY", itDividends: "DIVIDENDS",
	itAssets: "TOTAL_ASSETS", itCurAssets: "CURRENT_ASSETS", itCash: "CASH_AND_EQUIVALENTS",
	itSTInvest: "SHORT_TERM_INVESTMENTS", itInventories: "INVENTORIES", itCurLiab: "CURRENT_LIABILITIES",
	itSTDebt: "SHORT_TERM_DEBT", itLTDebt: "LONG_TERM_DEBT", itEquity: "EQUITY",
}

// extractor maps one statement's standardized values onto items.
type extractor struct {
	t     *table
	slots []int    // items this statement owns (reset on each new version)
	pairs [][2]int // item, position in the statement's lines
	dfc   bool
}

var extractors = compileExtractors()

func compileExtractors() map[string]*extractor {
	m := map[string]*extractor{}
	for st, t := range tables {
		e := &extractor{t: t}
		for pos, li := range t.lines {
			for it, id := range itemLines {
				if standardLines[li].ID == id {
					e.pairs = append(e.pairs, [2]int{it, pos})
					e.slots = append(e.slots, it)
				}
			}
		}
		if st == "DFC_MI" {
			e.dfc = true
			e.slots = append(e.slots, itDAFallback)
		}
		if len(e.slots) > 0 {
			m[st] = e
		}
	}
	return m
}

// apply replaces the items owned by r's statement in v with r's values.
func (e *extractor) apply(r *engine.Report, v *vals) {
	for _, it := range e.slots {
		v[it] = math.NaN()
	}
	var buf [64]engine.Num
	out := buf[:e.t.width]
	e.t.fill(r.Accounts, out)
	for _, p := range e.pairs {
		x := float64(out[p[1]])
		if p[0] == itDA {
			x = math.Abs(x)
		}
		v[p[0]] = x
	}
	if e.dfc {
		v[itDAFallback] = dfcDA(r.Accounts)
	}
}

// dfcDA sums the DFC add-backs under 6.01.01 whose name mentions
// depreciation or amortization, as a magnitude; NaN when there is none.
func dfcDA(accounts []engine.Account) float64 {
	sum, found := 0.0, false
	for i := range accounts {
		a := &accounts[i]
		if !strings.HasPrefix(a.Code(), "6.01.01.") || strings.Count(a.Code(), ".") != 3 || !a.Value.Valid() {
			continue
		}
		name := strings.ToLower(a.Name())
		if strings.Contains(name, "deprecia") || strings.Contains(name, "amortiza") || strings.Contains(name, "exaust") {
			sum += float64(a.Value)
			found = true
		}
	}
	if !found {
		return math.NaN()
	}
	return math.Abs(sum)
}
