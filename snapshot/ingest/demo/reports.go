package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// Flow items of one period (BRL; costs and expenses negative).
const (
	fRev = iota
	fCogs
	fSell
	fGA
	fOthInc
	fOthExp
	fEqRes
	fFinInc
	fFinExp
	fTaxCur
	fTaxDef
	fMinority // part of net income attributable to non-controlling holders
	fDA       // depreciation and amortisation (positive)
	fCapex    // positive
	fWC       // working-capital cash effect
	fFX       // exchange effect on cash
	fOCI      // other comprehensive income
	fPersonnel
	fJCP
	fDiv
	nFlow
)

// Stock items at a balance-sheet date (BRL).
const (
	sCash = iota
	sFinApp
	sClients
	sOtherRec
	sInventory
	sTaxRec
	sPrepaid
	sOtherCA
	sLTReal
	sInvest
	sPPE
	sIntang
	sSocial
	sSuppliers
	sTaxObl
	sLoansST
	sOtherST
	sProvST
	sLoansLT
	sOtherLT
	sDefTax
	sProvLT
	sCapital
	sCapRes
	sOCIAcc
	sMinorityEq
	nStock
)

type flows [nFlow]float64
type stocks [nStock]float64

func (a flows) plus(b flows) flows {
	for i := range a {
		a[i] += b[i]
	}
	return a
}

// period is one filing period of a company.
type period struct {
	form        string // DFP or ITR
	ref, start  engine.Date
	ytdStart    engine.Date
	fl, ytd     flows  // period flows (quarter for ITR, year for DFP) and year-to-date
	st          stocks // at ref
	cashStart   float64
	common, pfd int64
}

// companyProfile holds a company's stable accounting habits.
type companyProfile struct {
	ps, gm, sga, da, assetMult, lev, minority, pers, growth float64
	wA                                                      [12]float64 // asset leaf weights (sCash..sIntang)
	wL                                                      [10]float64 // liability leaf weights (sSocial..sProvLT)
}

func (g *gen) profile(e *entity, r *rand.Rand) companyProfile {
	p := companyProfile{
		ps: lognormal(r, 0.9, 0.6), gm: uniform(r, 0.18, 0.55), da: uniform(r, 0.02, 0.09),
		assetMult: uniform(r, 0.9, 2.8), lev: uniform(r, 0.35, 0.75), pers: uniform(r, 0.06, 0.2),
		growth: 0.07 + 0.06*r.NormFloat64(),
	}
	p.sga = p.gm * uniform(r, 0.35, 0.8)
	if r.Float64() < 0.4 {
		p.minority = uniform(r, 0.02, 0.15)
	}
	base := [12]float64{0.08, 0.05, 0.10, 0.02, 0.08, 0.02, 0.01, 0.02, 0.06, 0.06, 0.38, 0.12}
	for i := range base {
		p.wA[i] = base[i] * uniform(r, 0.4, 1.6)
	}
	lb := [10]float64{0.03, 0.10, 0.04, 0.10, 0.05, 0.02, 0.40, 0.12, 0.06, 0.08}
	for i := range lb {
		p.wL[i] = lb[i] * uniform(r, 0.4, 1.6)
	}
	if e.bank {
		p.assetMult, p.lev, p.gm, p.sga = uniform(r, 7, 12), uniform(r, 0.88, 0.93), uniform(r, 0.35, 0.5), uniform(r, 0.15, 0.25)
		p.wA[sInventory] = 0
		p.wA[sFinApp] *= 6
	}
	if e.tag == "ins" {
		p.wA[sInventory] = 0
		p.wA[sFinApp] *= 4
	}
	normalize(p.wA[:])
	normalize(p.wL[:])
	return p
}

func normalize(w []float64) {
	var s float64
	for _, v := range w {
		s += v
	}
	for i := range w {
		w[i] /= s
	}
}

// reports writes DFP and ITR reports of every period since ReportsFrom.
func (g *gen) reports(e *entity, o *output, r *rand.Rand) {
	p := g.profile(e, r)
	y0 := max(g.sz.ReportsFrom, e.c.IPODate.Time().Year()-1)
	y1 := g.cal[e.last].Time().Year()
	if y0 > y1 {
		return
	}
	// Annual revenue path ending at the company's size in 2025.
	lastYear := g.cal[len(g.cal)-1].Time().Year()
	rev2025 := e.mcap * p.ps
	if e.bank {
		rev2025 = e.mcap * uniform(r, 0.6, 1.2)
	}
	annual := func(y int) float64 { return rev2025 * math.Exp(-p.growth*float64(2025-y)) }
	o.reports = make([]engine.Report, 0, (min(y1, lastYear)-y0+1)*4*12*21/20)
	var prevSt stocks
	first := true
	var ytd flows
	var yearCashStart float64
	capital := 0.0
	hasPN := len(e.classes) > 1
	asOfDay := g.cal[len(g.cal)-1]
	seq := 0
	for y := y0 - 1; y <= min(y1, lastYear); y++ {
		shock := 1.0
		if r.Float64() < 0.08 {
			shock = uniform(r, -0.5, 0.3) // a bad year
		}
		for q := 1; q <= 4; q++ {
			qStart := engine.MakeDate(y, time.Month(3*q-2), 1)
			ref := engine.MakeDate(y, time.Month(3*q+1), 1) - 1
			rev := annual(y) / 4 * (1 + 0.06*math.Sin(float64(q)*1.7)) * (1 + 0.04*r.NormFloat64())
			var fl flows
			gm := p.gm*(1+0.05*r.NormFloat64()) - (1-shock)*0.1
			fl[fRev] = rev
			fl[fCogs] = -rev * (1 - gm)
			fl[fSell] = -rev * p.sga * 0.45
			fl[fGA] = -rev * p.sga * 0.55
			if e.bank {
				fl[fSell] = math.NaN()
			}
			fl[fOthInc] = rev * 0.01 * math.Abs(r.NormFloat64())
			fl[fOthExp] = -rev * 0.012 * math.Abs(r.NormFloat64())
			fl[fEqRes] = rev * 0.01 * r.NormFloat64()
			A := annual(y) * p.assetMult * (1 + 0.02*r.NormFloat64())
			debt := A * p.lev * (p.wL[sLoansST-sSocial] + p.wL[sLoansLT-sSocial])
			rate := g.selic[min(g.session(ref), len(g.cal)-1)] / 100
			fl[fFinInc] = A * p.wA[sCash] * rate / 4 * uniform(r, 0.7, 1.1)
			fl[fFinExp] = -debt * (rate + 0.02) / 4 * uniform(r, 0.8, 1.2)
			if e.bank {
				fl[fFinInc], fl[fFinExp] = math.NaN(), math.NaN()
			}
			pre := nz(fl[fRev]) + nz(fl[fCogs]) + nz(fl[fSell]) + nz(fl[fGA]) + fl[fOthInc] + fl[fOthExp] + fl[fEqRes] + nz(fl[fFinInc]) + nz(fl[fFinExp])
			tax := -0.3 * pre
			if pre < 0 {
				tax = 0.1 * -pre
			}
			fl[fTaxCur] = tax * 0.7
			fl[fTaxDef] = tax * 0.3
			fl[fDA] = rev * p.da
			fl[fCapex] = rev * p.da * uniform(r, 0.8, 1.6)
			fl[fWC] = rev * 0.03 * r.NormFloat64()
			fl[fFX] = 0
			if r.Float64() < 0.2 {
				fl[fFX] = rev * 0.002 * r.NormFloat64()
			}
			fl[fOCI] = rev * 0.004 * r.NormFloat64()
			fl[fPersonnel] = rev * p.pers
			for i := range fl {
				if !math.IsNaN(fl[i]) {
					fl[i] = thousand(fl[i])
				}
			}
			ni := netIncome(fl)
			fl[fMinority] = thousand(ni * p.minority)
			if ni > 0 {
				if e.jcp {
					fl[fJCP] = thousand(ni * 0.12)
				}
				fl[fDiv] = thousand(ni*0.25) - fl[fJCP]
			}
			// Balance sheet.
			var st stocks
			for i := 0; i < 12; i++ {
				st[i] = thousand(A * p.wA[i] * (1 + 0.04*r.NormFloat64()))
			}
			L := A * p.lev
			for i := 0; i < 10; i++ {
				st[sSocial+i] = thousand(L * p.wL[i] * (1 + 0.04*r.NormFloat64()))
			}
			eq := sumRange(st[:], sCash, sIntang) - sumRange(st[:], sSocial, sProvLT)
			if capital == 0 {
				capital = thousand(math.Max(eq, A*0.2) * 0.6)
			}
			st[sCapital] = capital
			st[sCapRes] = thousand(capital * 0.08)
			st[sOCIAcc] = thousand(eq * 0.02 * r.NormFloat64())
			st[sMinorityEq] = thousand(eq * p.minority)
			if q == 1 {
				ytd = flows{}
				yearCashStart = prevSt[sCash]
				if first {
					yearCashStart = thousand(st[sCash] * 0.9)
				}
			}
			ytd = ytd.plus(fl)
			prevSt = st
			first = false
			if y < y0 {
				continue
			}
			common, pfd := sharesOn(o, ref)
			if q < 4 {
				per := period{form: "ITR", ref: ref, start: qStart, ytdStart: engine.MakeDate(y, 1, 1), fl: fl, ytd: ytd, st: st,
					cashStart: yearCashStart, common: common, pfd: pfd}
				seq = g.emitPeriod(e, o, r, &per, hasPN, asOfDay, seq)
			} else {
				per := period{form: "DFP", ref: ref, start: engine.MakeDate(y, 1, 1), ytdStart: engine.MakeDate(y, 1, 1), fl: ytd, ytd: ytd,
					st: st, cashStart: yearCashStart, common: common, pfd: pfd}
				seq = g.emitPeriod(e, o, r, &per, hasPN, asOfDay, seq)
			}
			if y == y1 && ref >= g.cal[e.last] {
				break
			}
		}
	}
}

func nz(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

func sumRange(s []float64, a, b int) float64 {
	var t float64
	for i := a; i <= b; i++ {
		t += s[i]
	}
	return t
}

func netIncome(fl flows) float64 {
	return nz(fl[fRev]) + nz(fl[fCogs]) + nz(fl[fSell]) + nz(fl[fGA]) + fl[fOthInc] + fl[fOthExp] + fl[fEqRes] +
		nz(fl[fFinInc]) + nz(fl[fFinExp]) + fl[fTaxCur] + fl[fTaxDef]
}

// individual returns the parent-only view of consolidated figures: every
// line scaled by k, equity method result and investments chosen so that net
// income and equity equal the consolidated figures attributable to the
// controlling holders.
func individual(fl flows, st stocks, k float64) (flows, stocks) {
	ni := netIncome(fl) - fl[fMinority]
	var f2 flows
	for i := range fl {
		f2[i] = thousand(fl[i] * k)
		if math.IsNaN(fl[i]) {
			f2[i] = math.NaN()
		}
	}
	f2[fMinority] = 0
	f2[fEqRes] = 0
	f2[fEqRes] = ni - netIncome(f2)
	var s2 stocks
	for i := range st {
		s2[i] = thousand(st[i] * k)
	}
	s2[sCapital], s2[sCapRes], s2[sOCIAcc], s2[sMinorityEq] = st[sCapital], st[sCapRes], st[sOCIAcc], 0
	eqCons := sumRange(st[:], sCash, sIntang) - sumRange(st[:], sSocial, sProvLT)
	eqInd := eqCons - st[sMinorityEq]
	s2[sInvest] = 0
	s2[sInvest] = eqInd + sumRange(s2[:], sSocial, sProvLT) - sumRange(s2[:], sCash, sIntang)
	return f2, s2
}

// emitPeriod appends the 12 reports (6 statements, 2 aggregations) of a
// period, plus re-filed versions, and returns the next document sequence.
func (g *gen) emitPeriod(e *entity, o *output, r *rand.Rand, p *period, hasPN bool, asOfDay engine.Date, seq int) int {
	lag := 30 + r.IntN(15)
	if p.form == "DFP" {
		lag = 55 + r.IntN(35)
	}
	pub := localTime(p.ref+engine.Date(lag), 18+r.IntN(4), r.IntN(60))
	versions := 1
	if x := r.Float64(); x < 0.05 {
		versions = 2
		if x < 0.006 {
			versions = 3
		}
	}
	k := uniform(r, 0.6, 0.92)
	for v := 1; v <= versions; v++ {
		fl, ytd, st := p.fl, p.ytd, p.st
		if v > 1 {
			pub = pub.Add(time.Duration(20+r.IntN(100)) * 24 * time.Hour)
			d := 1 + 0.01*r.NormFloat64()
			fl[fCogs] = thousand(fl[fCogs] * d)
			ytd[fCogs] += fl[fCogs] - p.fl[fCogs]
			st[sClients] = thousand(st[sClients] * (1 + 0.02*r.NormFloat64()))
			st[sSuppliers] = thousand(st[sSuppliers] * (1 + 0.02*r.NormFloat64()))
			p.fl, p.ytd, p.st = fl, ytd, st
		}
		if engine.DateOf(pub) > asOfDay {
			break
		}
		seq++
		ret := pub.Add(time.Duration(2+r.IntN(20)) * time.Hour)
		docNum := (e.idx+1)*100000 + seq
		y, m, d := p.ref.Time().Date()
		src := []engine.Source{{
			VisualizationURL: engine.URLOf(fmt.Sprintf("%s/cvm/enet/frmGerenciaPaginaFRE.aspx?NumeroSequencialDocumento=%d&CodigoTipoInstituicao=2", URLBase, docNum)),
			PublishedAt:      pub, RetrievedAt: ret,
			Name: fmt.Sprintf("%s %02d/%02d/%d - versão %d", p.form, d, int(m), y, v),
		}}
		for _, agg := range []string{engine.AggConsolidated, engine.AggIndividual} {
			cfl, cytd, cst := fl, ytd, st
			cashStart := p.cashStart
			if agg == engine.AggIndividual {
				cfl, cst = individual(fl, st, k)
				cytd, _ = individual(ytd, st, k)
				cashStart = thousand(cashStart * k)
			}
			for _, sts := range []string{"BPA", "BPP", "DRE", "DRA", "DVA", "DFC"} {
				rep := engine.Report{CompanyID: e.c.ID, Statement: engine.MustLabel(sts), Aggregation: engine.MustLabel(agg), Form: engine.MustLabel(p.form), ReferenceDate: p.ref,
					StartDate: p.start, EndDate: p.ref, PublishDate: engine.StampOf(pub), RetrievalDate: engine.StampOf(ret), Version: v, Sources: engine.SourcesOf(src)}
				cons := agg == engine.AggConsolidated
				switch sts {
				case "BPA":
					rep.StartDate = engine.NoDate
					rep.Accounts = bpa(cst, e.bank)
				case "BPP":
					rep.StartDate = engine.NoDate
					rep.Accounts = bpp(cst, cons)
				case "DRE":
					rep.Accounts = dre(cfl, cons, e.bank, p.common, p.pfd, hasPN)
				case "DRA":
					rep.Accounts = dra(cfl, cons)
				case "DVA":
					rep.StartDate = p.ytdStart
					rep.Accounts = dva(cytd, cons, e.bank)
				case "DFC":
					rep.StartDate = p.ytdStart
					if e.dfcMD {
						rep.Statement = engine.LabelDFCMD
					} else {
						rep.Statement = engine.LabelDFCMI
					}
					rep.Accounts = dfc(cytd, cashStart, cst[sCash], e.dfcMD)
				}
				o.reports = append(o.reports, rep)
			}
		}
	}
	return seq
}

// acc builds account lists; values NaN are kept as Null.
type acc []engine.Account

func (a *acc) add(code, name string, v float64) float64 {
	*a = append(*a, engine.NewAccount(code, name, !strings.HasPrefix(code, "3.99"), engine.Num(v)))
	return v
}

func bpa(s stocks, bank bool) []engine.Account {
	a := make(acc, 0, 20)
	ca := sumRange(s[:], sCash, sOtherCA)
	nca := sumRange(s[:], sLTReal, sIntang)
	a.add("1", "Ativo Total", ca+nca)
	a.add("1.01", "Ativo Circulante", ca)
	a.add("1.01.01", "Caixa e Equivalentes de Caixa", s[sCash])
	a.add("1.01.02", "Aplicações Financeiras", s[sFinApp])
	a.add("1.01.03", "Contas a Receber", s[sClients]+s[sOtherRec])
	a.add("1.01.03.01", "Clientes", s[sClients])
	a.add("1.01.03.02", "Outras Contas a Receber", s[sOtherRec])
	if !bank {
		a.add("1.01.04", "Estoques", s[sInventory])
	}
	a.add("1.01.06", "Tributos a Recuperar", s[sTaxRec])
	a.add("1.01.07", "Despesas Antecipadas", s[sPrepaid])
	a.add("1.01.08", "Outros Ativos Circulantes", s[sOtherCA])
	a.add("1.02", "Ativo Não Circulante", nca)
	a.add("1.02.01", "Ativo Realizável a Longo Prazo", s[sLTReal])
	a.add("1.02.02", "Investimentos", s[sInvest])
	a.add("1.02.03", "Imobilizado", s[sPPE])
	a.add("1.02.04", "Intangível", s[sIntang])
	return a
}

func bpp(s stocks, cons bool) []engine.Account {
	a := make(acc, 0, 24)
	total := sumRange(s[:], sCash, sIntang)
	cl := sumRange(s[:], sSocial, sProvST)
	ncl := sumRange(s[:], sLoansLT, sProvLT)
	eq := total - cl - ncl
	a.add("2", "Passivo Total", total)
	a.add("2.01", "Passivo Circulante", cl)
	a.add("2.01.01", "Obrigações Sociais e Trabalhistas", s[sSocial])
	a.add("2.01.02", "Fornecedores", s[sSuppliers])
	a.add("2.01.03", "Obrigações Fiscais", s[sTaxObl])
	a.add("2.01.04", "Empréstimos e Financiamentos", s[sLoansST])
	a.add("2.01.05", "Outras Obrigações", s[sOtherST])
	a.add("2.01.06", "Provisões", s[sProvST])
	a.add("2.02", "Passivo Não Circulante", ncl)
	a.add("2.02.01", "Empréstimos e Financiamentos", s[sLoansLT])
	a.add("2.02.02", "Outras Obrigações", s[sOtherLT])
	a.add("2.02.03", "Tributos Diferidos", s[sDefTax])
	a.add("2.02.04", "Provisões", s[sProvLT])
	minority := 0.0
	if cons {
		a.add("2.03", "Patrimônio Líquido Consolidado", eq)
		minority = s[sMinorityEq]
	} else {
		a.add("2.03", "Patrimônio Líquido", eq)
	}
	a.add("2.03.01", "Capital Social Realizado", s[sCapital])
	a.add("2.03.02", "Reservas de Capital", s[sCapRes])
	a.add("2.03.04", "Reservas de Lucros", eq-s[sCapital]-s[sCapRes]-s[sOCIAcc]-minority)
	a.add("2.03.08", "Outros Resultados Abrangentes", s[sOCIAcc])
	if cons {
		a.add("2.03.09", "Participação dos Acionistas Não Controladores", minority)
	}
	return a
}

func dre(f flows, cons, bank bool, common, pfd int64, hasPN bool) []engine.Account {
	a := make(acc, 0, 30)
	gross := nz(f[fRev]) + nz(f[fCogs])
	ops := nz(f[fSell]) + f[fGA] + f[fOthInc] + f[fOthExp] + f[fEqRes]
	ebit := gross + ops
	fin := nz(f[fFinInc]) + nz(f[fFinExp])
	pre := ebit + fin
	tax := f[fTaxCur] + f[fTaxDef]
	ni := pre + tax
	ctrl := ni
	if cons {
		ctrl = ni - f[fMinority]
	}
	if bank {
		// CVM's model of financial institutions: no EBIT or financial
		// result lines; pre-tax income 3.05, taxes 3.06, net income 3.09.
		a.add("3.01", "Receitas da Intermediação Financeira", f[fRev])
		a.add("3.02", "Despesas da Intermediação Financeira", f[fCogs])
		a.add("3.03", "Resultado Bruto Intermediação Financeira", gross)
		a.add("3.04", "Outras Despesas/Receitas Operacionais", ops+fin)
		a.add("3.04.03", "Outras Despesas Administrativas", nz(f[fSell])+f[fGA])
		a.add("3.04.05", "Outras Receitas Operacionais", f[fOthInc]+nz(f[fFinInc]))
		a.add("3.04.06", "Outras Despesas Operacionais", f[fOthExp]+nz(f[fFinExp]))
		a.add("3.04.07", "Resultado da Equivalência Patrimonial", f[fEqRes])
		a.add("3.05", "Resultado Antes dos Tributos sobre o Lucro", pre)
		a.add("3.06", "Imposto de Renda e Contribuição Social sobre o Lucro", tax)
		a.add("3.06.01", "Corrente", f[fTaxCur])
		a.add("3.06.02", "Diferido", f[fTaxDef])
		a.add("3.07", "Resultado Líquido das Operações Continuadas", ni)
		if cons {
			a.add("3.09", "Lucro/Prejuízo Consolidado do Período", ni)
			a.add("3.09.01", "Atribuído a Sócios da Empresa Controladora", ctrl)
			a.add("3.09.02", "Atribuído a Sócios Não Controladores", f[fMinority])
		} else {
			a.add("3.09", "Lucro/Prejuízo do Período", ni)
		}
	} else {
		a.add("3.01", "Receita de Venda de Bens e/ou Serviços", f[fRev])
		a.add("3.02", "Custo dos Bens e/ou Serviços Vendidos", f[fCogs])
		a.add("3.03", "Resultado Bruto", gross)
		a.add("3.04", "Despesas/Receitas Operacionais", ops)
		a.add("3.04.01", "Despesas com Vendas", f[fSell])
		a.add("3.04.02", "Despesas Gerais e Administrativas", f[fGA])
		a.add("3.04.04", "Outras Receitas Operacionais", f[fOthInc])
		a.add("3.04.05", "Outras Despesas Operacionais", f[fOthExp])
		a.add("3.04.06", "Resultado de Equivalência Patrimonial", f[fEqRes])
		a.add("3.05", "Resultado Antes do Resultado Financeiro e dos Tributos", ebit)
		a.add("3.06", "Resultado Financeiro", fin)
		a.add("3.06.01", "Receitas Financeiras", f[fFinInc])
		a.add("3.06.02", "Despesas Financeiras", f[fFinExp])
		a.add("3.07", "Resultado Antes dos Tributos sobre o Lucro", pre)
		a.add("3.08", "Imposto de Renda e Contribuição Social sobre o Lucro", tax)
		a.add("3.08.01", "Corrente", f[fTaxCur])
		a.add("3.08.02", "Diferido", f[fTaxDef])
		a.add("3.09", "Resultado Líquido das Operações Continuadas", ni)
		if cons {
			a.add("3.11", "Lucro/Prejuízo Consolidado do Período", ni)
			a.add("3.11.01", "Atribuído a Sócios da Empresa Controladora", ctrl)
			a.add("3.11.02", "Atribuído a Sócios Não Controladores", f[fMinority])
		} else {
			a.add("3.11", "Lucro/Prejuízo do Período", ni)
		}
	}
	// Earnings per share (BRL per share): header lines carry no value.
	eps := math.NaN()
	if common+pfd > 0 {
		eps = round(ctrl/float64(common+pfd), 8)
	}
	a.add("3.99", "Lucro por Ação - (Reais / Ação)", math.NaN())
	a.add("3.99.01", "Lucro Básico por Ação", math.NaN())
	a.add("3.99.01.01", "ON", eps)
	if hasPN {
		a.add("3.99.01.02", "PN", eps)
	}
	a.add("3.99.02", "Lucro Diluído por Ação", math.NaN())
	a.add("3.99.02.01", "ON", round(eps*0.998, 8))
	if hasPN {
		a.add("3.99.02.02", "PN", round(eps*0.998, 8))
	}
	return a
}

func dra(f flows, cons bool) []engine.Account {
	a := make(acc, 0, 6)
	ni := netIncome(f)
	a.add("4.01", "Lucro Líquido do Período", ni)
	a.add("4.02", "Outros Resultados Abrangentes", f[fOCI])
	a.add("4.03", "Resultado Abrangente do Período", ni+f[fOCI])
	if cons {
		m := thousand(f[fMinority] * (ni + f[fOCI]) / nonZero(ni))
		a.add("4.03.01", "Atribuído a Sócios da Empresa Controladora", ni+f[fOCI]-m)
		a.add("4.03.02", "Atribuído a Sócios Não Controladores", m)
	}
	return a
}

func nonZero(v float64) float64 {
	if v == 0 {
		return 1
	}
	return v
}

func dva(f flows, cons, bank bool) []engine.Account {
	a := make(acc, 0, 26)
	ni := netIncome(f)
	r01 := thousand(nz(f[fRev]) * 1.17)
	r02 := f[fOthInc]
	pessoal := f[fPersonnel]
	impostos := thousand(nz(f[fRev])*0.17) - f[fTaxCur] - f[fTaxDef]
	terceiros := -nz(f[fFinExp]) + thousand(nz(f[fRev])*0.01)
	minority := 0.0
	if cons {
		minority = f[fMinority]
	}
	retained := ni - f[fJCP] - f[fDiv] - minority
	proprio := ni
	total := pessoal + impostos + terceiros + proprio
	transf := f[fEqRes] + nz(f[fFinInc])
	liquido := total - transf
	bruto := liquido + f[fDA]
	insumos := bruto - (r01 + r02)
	i1 := thousand(insumos * 0.65)
	a.add("7.01", "Receitas", r01+r02)
	a.add("7.01.01", "Vendas de Mercadorias, Produtos e Serviços", r01)
	a.add("7.01.02", "Outras Receitas", r02)
	a.add("7.02", "Insumos Adquiridos de Terceiros", insumos)
	if bank {
		a.add("7.02.02", "Materiais, Energia, Servs. de Terceiros e Outros", insumos)
	} else {
		a.add("7.02.01", "Custos Prods., Mercs. e Servs. Vendidos", i1)
		a.add("7.02.02", "Materiais, Energia, Servs. de Terceiros e Outros", insumos-i1)
	}
	a.add("7.03", "Valor Adicionado Bruto", bruto)
	a.add("7.04", "Retenções", -f[fDA])
	a.add("7.04.01", "Depreciação, Amortização e Exaustão", -f[fDA])
	a.add("7.05", "Valor Adicionado Líquido Produzido", liquido)
	a.add("7.06", "Vlr Adicionado Recebido em Transferência", transf)
	a.add("7.06.01", "Resultado de Equivalência Patrimonial", f[fEqRes])
	a.add("7.06.02", "Receitas Financeiras", nz(f[fFinInc]))
	a.add("7.07", "Valor Adicionado Total a Distribuir", total)
	a.add("7.08", "Distribuição do Valor Adicionado", total)
	a.add("7.08.01", "Pessoal", pessoal)
	a.add("7.08.02", "Impostos, Taxas e Contribuições", impostos)
	a.add("7.08.03", "Remuneração de Capitais de Terceiros", terceiros)
	a.add("7.08.04", "Remuneração de Capitais Próprios", proprio)
	a.add("7.08.04.01", "Juros sobre o Capital Próprio", f[fJCP])
	a.add("7.08.04.02", "Dividendos", f[fDiv])
	a.add("7.08.04.03", "Lucros Retidos / Prejuízo do Período", retained)
	if cons {
		a.add("7.08.04.04", "Part. Não Controladores nos Lucros Retidos", minority)
	}
	return a
}

func dfc(f flows, cashStart, cashEnd float64, direct bool) []engine.Account {
	a := make(acc, 0, 12)
	ni := netIncome(f)
	op := ni + f[fDA] + f[fWC]
	inv := -f[fCapex]
	fx := f[fFX]
	finc := cashEnd - cashStart - op - inv - fx
	a.add("6.01", "Caixa Líquido Atividades Operacionais", op)
	if direct {
		rec := thousand(nz(f[fRev]) * 1.05)
		oth := f[fTaxCur]
		a.add("6.01.01", "Recebimentos de Clientes", rec)
		a.add("6.01.02", "Pagamentos a Fornecedores e Empregados", op-rec-oth)
		a.add("6.01.03", "Outros", oth)
	} else {
		a.add("6.01.01", "Caixa Gerado nas Operações", ni+f[fDA])
		a.add("6.01.02", "Variações nos Ativos e Passivos", f[fWC])
	}
	a.add("6.02", "Caixa Líquido Atividades de Investimento", inv)
	a.add("6.03", "Caixa Líquido Atividades de Financiamento", finc)
	a.add("6.04", "Variação Cambial s/ Caixa e Equivalentes", fx)
	a.add("6.05", "Aumento (Redução) de Caixa e Equivalentes", cashEnd-cashStart)
	a.add("6.05.01", "Saldo Inicial de Caixa e Equivalentes", cashStart)
	a.add("6.05.02", "Saldo Final de Caixa e Equivalentes", cashEnd)
	return a
}
