package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pregao/pregao/engine"
)

var actLabels = map[string]string{
	engine.ActStockSplit:            "DESDOBRAMENTO",
	engine.ActReverseSplit:          "GRUPAMENTO",
	engine.ActStockBonus:            "BONIFICACAO",
	engine.ActSpinOff:               "CISAO COM REDUCAO DE CAPITAL",
	engine.ActSpinOffQuantity:       "CISAO COM REDUCAO DE CAPITAL E QUANTIDADE",
	engine.ActMerger:                "INCORPORACAO",
	engine.ActTotalRedemption:       "RESGATE TOTAL",
	engine.ActRestitutionInShares:   "RESTITUICAO DE CAPITAL EM ACOES",
	engine.ActRestitutionWithReduce: "RESTITUICAO DE CAPITAL COM REDUCAO DE ACOES",
	engine.ActSubscription:          "SUBSCRICAO",
}

// detailEntity builds the non-price entities of one entity.
func (g *gen) detailEntity(idx int) {
	e := g.ents[idx]
	o := g.outs[idx]
	r := g.rng(idx, 2)
	end := len(g.cal) - 1
	// Securities and renames.
	for _, c := range e.classes {
		to := engine.NoDate
		if e.last < end {
			to = g.cal[e.last]
		}
		uf := engine.Null
		if c.stock == engine.ClassUnit {
			uf = 3
		}
		sec := engine.Security{Ticker: c.ticker, CompanyID: e.c.ID, ISIN: c.isin, StockType: c.stock, Currency: "BRL",
			UnitFactor: uf, ListedFrom: g.cal[e.first], ListedTo: to}
		if c.oldTicker != "" {
			old := sec
			old.Ticker, old.ListedTo = c.oldTicker, g.cal[e.renameAt-1]
			sec.ListedFrom = g.cal[e.renameAt]
			o.secs = append(o.secs, old)
			o.renames = append(o.renames, engine.TickerRename{From: c.oldTicker, To: c.ticker, Date: g.cal[e.renameAt]})
		}
		o.secs = append(o.secs, sec)
	}
	g.shareActions(e, o)
	g.cashActions(e, o, r, g.rng(idx, 7))
	g.sharePoints(e, o, r)
	if e.c.Kind == engine.KindCompany || (e.c.Kind == engine.KindBDR && e.c.BDRSponsored) {
		g.reports(e, o, g.rng(idx, 3))
	}
	if e.c.Kind == engine.KindFII || e.c.Kind == engine.KindETF {
		g.fundReports(e, o, g.rng(idx, 4))
	}
	if e.c.Kind == engine.KindCompany {
		g.insiderReports(e, o, g.rng(idx, 5))
		g.documents(e, o, g.rng(idx, 6))
	}
}

// closeAt returns entity i's close of class k on global session s (the
// last close before it if s is past its last session).
func (g *gen) closeAt(i, k, s int) float64 {
	e, o := g.ents[i], g.outs[i]
	s = min(max(s, e.first), e.last)
	return float64(o.series[k].Close[s-e.first])
}

func (g *gen) shareActions(e *entity, o *output) {
	for _, ev := range o.events {
		for k, c := range e.classes {
			a := engine.ShareAction{CompanyID: e.c.ID, ISIN: c.isin, IssuedISIN: c.isin, Ticker: e.tickerAt(c, ev.ex-1),
				ApprovalDate: ev.approval, PriorExDate: g.cal[ev.ex-1], Type: ev.typ, Label: actLabels[ev.typ],
				Factor: engine.Num(ev.factor), Legs: []engine.Leg{}}
			switch ev.typ {
			case engine.ActSpinOff, engine.ActSpinOffQuantity, engine.ActRestitutionInShares, engine.ActRestitutionWithReduce:
				a.Factor = engine.Null
				a.Legs = append(a.Legs, engine.Leg{LegType: engine.LegOriginal, ISIN: c.isin, Ticker: a.Ticker, Factor: engine.Num(ev.factor)})
				if ev.other >= 0 {
					oe := g.ents[ev.other]
					oc := oe.classes[0]
					var f float64
					if ev.typ == engine.ActSpinOff {
						f = g.outs[ev.other].childF
						a.Remarks = "Cisão parcial com versão de parcela do patrimônio para " + oe.c.Name
					} else {
						f = round(ev.r*g.closeAt(e.idx, k, ev.ex-1)/g.closeAt(ev.other, 0, ev.ex-1), 6)
						a.Remarks = "Entrega de ações de " + oe.c.TradingName + " detidas pela companhia"
					}
					a.IssuedISIN = oc.isin
					a.Legs = append(a.Legs, engine.Leg{LegType: engine.LegReceived, ISIN: oc.isin, Ticker: oe.tickerAt(oc, ev.ex), Factor: engine.Num(f)})
				}
			case engine.ActStockSplit:
				a.Remarks = fmt.Sprintf("Desdobramento na proporção de 1 para %g", ev.factor)
			case engine.ActReverseSplit:
				a.Remarks = fmt.Sprintf("Grupamento na proporção de %g para 1", math.Round(1/ev.factor))
			case engine.ActStockBonus:
				a.Remarks = fmt.Sprintf("Bonificação de %g%% em ações", math.Round((ev.factor-1)*100))
			}
			o.acts = append(o.acts, a)
		}
	}
	if e.mergeInto >= 0 {
		acq := g.ents[e.mergeInto]
		c, ac := e.classes[0], acq.classes[0]
		f := round(g.closeAt(e.idx, 0, e.last)/g.closeAt(acq.idx, 0, e.last)*1.05, 6)
		o.acts = append(o.acts, engine.ShareAction{CompanyID: e.c.ID, ISIN: c.isin, IssuedISIN: ac.isin, Ticker: e.tickerAt(c, e.last),
			ApprovalDate: g.cal[e.last] - 45, PriorExDate: g.cal[e.last], Type: engine.ActMerger, Label: actLabels[engine.ActMerger],
			Factor: engine.Null, Remarks: "Incorporação pela " + acq.c.Name,
			Legs: []engine.Leg{{LegType: engine.LegOriginal, ISIN: c.isin, Ticker: e.tickerAt(c, e.last), Factor: 1},
				{LegType: engine.LegReceived, ISIN: ac.isin, Ticker: acq.tickerAt(ac, e.last+1), Factor: engine.Num(f)}}})
	}
	if e.redeem {
		c := e.classes[0]
		o.acts = append(o.acts, engine.ShareAction{CompanyID: e.c.ID, ISIN: c.isin, IssuedISIN: c.isin, Ticker: c.ticker,
			ApprovalDate: g.cal[e.last] - 60, PriorExDate: g.cal[e.last], Type: engine.ActTotalRedemption,
			Label: actLabels[engine.ActTotalRedemption], Factor: engine.Null, Legs: []engine.Leg{},
			Remarks: "Liquidação do fundo e resgate total das cotas"})
	}
}

var cashCodes = map[string]string{"DIVIDEND": "DIVIDENDO", "INTEREST_ON_EQUITY": "JRS CAP PROPRIO", "RENDIMENTO": "RENDIMENTO"}

// netValue is the net value per share of a distribution of gross value
// (BRL per share) whose prior_ex_date is prior: the withholding table the
// B3 importer applies (engine.NetCashValue), rounded to 8 places.
func netValue(name string, value float64, prior engine.Date) engine.Num {
	return engine.Num(round(float64(engine.NetCashValue(name, engine.Num(value), prior)), 8))
}

// lateShare is the share of the corrected cash events (version 2) whose
// correction is published after their prior_ex_date (a late
// "retificação": 10 to 90 days after it), and lateValueShare the share
// of those that change the declared value (the others rectify the
// payment date, or a company's monetary correction).
const lateShare, lateValueShare = 0.4, 0.25

// cashActions writes the cash events of e, drawing from r and, for the
// timing and kind of a late correction, from lr (its own stream, so that
// the rest of the entity's draws do not depend on it).
func (g *gen) cashActions(e *entity, o *output, r, lr randSource) {
	asOfDay := g.cal[len(g.cal)-1]
	for n, cd := range o.cash {
		prior := g.cal[cd.ex-1]
		approval := prior - engine.Date(5+r.IntN(25))
		if e.c.Kind == engine.KindFII {
			approval = prior
		}
		pay := addBusinessDays(prior, 8+r.IntN(40))
		noPay := r.Float64() < 0.03
		corr := r.Float64() < 0.04 && e.c.Kind == engine.KindCompany
		inst := r.Float64() < 0.03 && e.c.Kind == engine.KindCompany
		twoVer := r.Float64() < 0.03
		// A late correction: published lateDay, after the prior_ex_date
		// (and before the snapshot's last session), changing the declared
		// value (lateValue) or else the payment date or, for a company,
		// adding a monetary correction (lateCorr).
		late, lateValue, lateCorr, lateDay := false, false, false, engine.NoDate
		if twoVer {
			late = lr.Float64() < lateShare
			lateDay = prior + engine.Date(10+lr.IntN(81))
			lateValue = lr.Float64() < lateValueShare
			lateCorr = !lateValue && !corr && e.c.Kind == engine.KindCompany && lr.Float64() < 0.5
			late = late && lateDay < asOfDay
		}
		for k, c := range e.classes {
			amt := cd.amt[k]
			evID := fmt.Sprintf("C%06d-%05d-%d", e.idx, n, k)
			ca, err := engine.CashActionOf(engine.CashWords{StockType: c.stock, Name: cd.name, Code: cashCodes[cd.name], Currency: "BRL"})
			if err != nil {
				panic(err) // the generator's words are a dozen
			}
			pub := localTime(approval, 19, 0)
			ca.EventID, ca.CompanyID, ca.Ticker, ca.ISIN = evID, engine.Intern(e.c.ID), engine.Intern(e.tickerAt(c, cd.ex-1)), engine.Intern(c.isin)
			ca.ApprovalDate, ca.PriorExDate, ca.PublishDate, ca.PaymentDate = approval, prior, engine.StampOf(pub), pay
			ca.Protocol = fmt.Sprintf("%03d%09d", 100+e.idx%900, e.idx*10000+n)
			ca.DeclaredValue, ca.MonetaryCorrection = engine.Num(amt), 0
			ca.CorrectionStart, ca.CorrectionEnd = engine.NoDate, engine.NoDate
			insts := []engine.Installment{}
			if noPay || (pay > asOfDay && r.Float64() < 0.5) {
				ca.PaymentDate = engine.NoDate
			}
			if corr {
				ca.MonetaryCorrection = engine.Num(round(amt*uniform(r, 0.005, 0.03), 8))
				ca.CorrectionStart = firstOfMonth(prior)
				ca.CorrectionEnd = pay
			}
			value := float64(ca.DeclaredValue + ca.MonetaryCorrection)
			ca.NetValue = netValue(cd.name, value, prior)
			if inst && ca.PaymentDate.Valid() {
				parts := 2 + r.IntN(2)
				left := float64(ca.DeclaredValue)
				for p := 0; p < parts; p++ {
					d := round(float64(ca.DeclaredValue)/float64(parts), 8)
					if p == parts-1 {
						d = round(left, 8)
					}
					left -= d
					insts = append(insts, engine.Installment{DeclaredValue: engine.Num(d), MonetaryCorrection: 0,
						NetValue: netValue(cd.name, d, prior), Currency: "BRL", PaymentDate: addBusinessDays(pay, 21*p)})
				}
			}
			src := engine.Source{VisualizationURL: engine.URLOf(fmt.Sprintf("%s/b3/proventos/%s/%s", URLBase, ca.Ticker, evID)),
				PublishedAt: pub, RetrievedAt: pub.Add(6 * time.Hour), Name: "Aviso aos Acionistas - " + ca.Code.String()}
			if twoVer {
				v1 := ca
				v1Insts := append([]engine.Installment{}, insts...)
				v1.Version, v1.ID = 1, evID+"-v1"
				v1Pub := localTime(approval, 19, 0)
				v1.PublishDate = engine.StampOf(v1Pub)
				v1Src := src
				v1Src.PublishedAt, v1Src.RetrievedAt = v1Pub, v1Pub.Add(6*time.Hour)
				value := r.Float64() < 0.3
				pay := !value && ca.PaymentDate.Valid() && r.Float64() < 0.6
				if late {
					value, pay = lateValue, !lateValue && !lateCorr && ca.PaymentDate.Valid()
				}
				switch {
				case value:
					// The first announcement had a slightly different amount.
					v1.DeclaredValue = engine.Num(round(float64(ca.DeclaredValue)*0.98, 8))
					v1.NetValue = netValue(cd.name, float64(v1.DeclaredValue+v1.MonetaryCorrection), prior)
					v1Insts = []engine.Installment{}
				case late && lateCorr && ca.PaymentDate.Valid():
					// The correction adds the monetary correction up to
					// the payment the first announcement left out.
					ca.MonetaryCorrection = engine.Num(round(amt*0.01, 8))
					ca.CorrectionStart, ca.CorrectionEnd = firstOfMonth(prior), ca.PaymentDate
					ca.NetValue = netValue(cd.name, float64(ca.DeclaredValue+ca.MonetaryCorrection), prior)
				case pay:
					v1.PaymentDate = ca.PaymentDate - 7
					if len(v1Insts) > 0 {
						v1Insts[0].PaymentDate = v1.PaymentDate
					}
				default:
					v1.PaymentDate = engine.NoDate
				}
				v1.Installments, v1.Source = engine.InstallmentsOf(v1Insts), &v1Src
				o.cashActs = append(o.cashActs, v1)
				ca.Version = 2
				pub = localTime(approval+3, 19, 0)
				if late {
					pub = localTime(lateDay, 19, 0)
				}
				ca.PublishDate = engine.StampOf(pub)
				src.PublishedAt, src.RetrievedAt = pub, pub.Add(6*time.Hour)
				src.Name += " (retificação)"
			} else {
				ca.Version = 1
			}
			ca.Installments, ca.Source = engine.InstallmentsOf(insts), &src
			ca.ID = fmt.Sprintf("%s-v%d", evID, ca.Version)
			o.cashActs = append(o.cashActs, ca)
		}
	}
}

// sharePoints writes the share count history: one point at the first
// session and one at each event that changes the count.
func (g *gen) sharePoints(e *entity, o *output, r randSource) {
	if e.c.Kind == engine.KindBDR && !e.c.BDRSponsored {
		return
	}
	type step struct {
		at int
		f  float64
	}
	var steps []step
	for _, ev := range o.events {
		steps = append(steps, step{ev.ex, ev.factor})
	}
	for _, is := range o.issues {
		steps = append(steps, step{is.at, is.factor})
	}
	for a := 1; a < len(steps); a++ {
		for b := a; b > 0 && steps[b].at < steps[b-1].at; b-- {
			steps[b], steps[b-1] = steps[b-1], steps[b]
		}
	}
	// Shares at the last session from the target market value.
	var px float64
	for k, c := range e.classes {
		if c.stock == engine.ClassUnit {
			continue
		}
		w := e.fracON
		if k > 0 {
			w = (1 - e.fracON) / float64(countPref(e))
		}
		px += w * g.closeAt(e.idx, k, e.last)
	}
	total := e.mcap / px
	cum := 1.0
	for _, s := range steps {
		cum *= s.f
	}
	at := []int{e.first}
	mult := []float64{1 / cum}
	c := 1 / cum
	for _, s := range steps {
		c *= s.f
		if at[len(at)-1] == s.at {
			mult[len(mult)-1] = c
			continue
		}
		at = append(at, s.at)
		mult = append(mult, c)
	}
	// Counts start from the first point and follow each factor, so a
	// 1:N split multiplies them exactly by N.
	t0 := math.Max(1000, math.Round(total*mult[0]))
	common := int64(math.Round(t0 * e.fracON))
	pref := int64(t0) - common
	for j := range at {
		if j > 0 {
			f := mult[j] / mult[j-1]
			common = int64(math.Round(float64(common) * f))
			pref = int64(math.Round(float64(pref) * f))
		}
		tr := int64(float64(common+pref) * uniform(r, 0, 0.02))
		if e.c.Kind != engine.KindCompany {
			tr = 0
		}
		o.shares = append(o.shares, engine.SharesPoint{CompanyID: e.c.ID, Date: g.cal[at[j]], Common: common, Preferred: pref, Treasury: tr})
	}
	last := o.shares[len(o.shares)-1]
	o.sharesT, o.sharesC = last.Common+last.Preferred, last.Common
}

func countPref(e *entity) int {
	n := 0
	for _, c := range e.classes[1:] {
		if c.stock != engine.ClassUnit {
			n++
		}
	}
	return max(n, 1)
}

// sharesOn returns the entity's (common, preferred) shares on day d.
func sharesOn(o *output, d engine.Date) (int64, int64) {
	if len(o.shares) == 0 {
		return 0, 0
	}
	p := o.shares[0]
	for _, s := range o.shares {
		if s.Date > d {
			break
		}
		p = s
	}
	return p.Common, p.Preferred
}

type randSource = *rand.Rand
