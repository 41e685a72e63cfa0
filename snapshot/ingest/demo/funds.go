package demo

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pregao/pregao/engine"
)

// fundReports writes one monthly report per month since FundReportsFrom
// (or listing), NAV following the price at a slowly varying P/NAV.
func (g *gen) fundReports(e *entity, o *output, r *rand.Rand) {
	asOfDay := g.cal[len(g.cal)-1]
	start := firstOfMonth(g.cal[e.first])
	if s := engine.MakeDate(g.sz.FundReportsFrom, time.January, 1); start < s {
		start = s
	}
	mean := uniform(r, 0.82, 1.05)
	if e.c.Kind == engine.KindETF {
		mean = 1
	}
	pnav := mean
	investors := uniform(r, 300, 3000)
	target := lognormal(r, 40000, 1.2)
	if e.c.Kind == engine.KindETF {
		target = lognormal(r, 8000, 1.2)
	}
	prevNAV := math.NaN()
	divByMonth := map[engine.Date]float64{}
	for _, c := range o.cash {
		divByMonth[firstOfMonth(g.cal[c.ex-1])] += c.amt[0]
	}
	seq := 0
	for m := start; ; m = firstOfMonth(m + 32) {
		y, mo, _ := ymd(m)
		mEnd := monthEnd(y, mo)
		s := g.session(mEnd+1) - 1
		if s < e.first || s > e.last {
			if s > e.last {
				break
			}
			continue
		}
		pub := localTime(mEnd+engine.Date(8+r.IntN(12)), 17+r.IntN(5), r.IntN(60))
		if engine.DateOf(pub) > asOfDay {
			break
		}
		if e.c.Kind == engine.KindETF {
			pnav = 1 + 0.002*r.NormFloat64()
		} else {
			pnav = math.Max(0.7, math.Min(1.3, mean+0.85*(pnav-mean)+0.03*r.NormFloat64()))
		}
		price := g.closeAt(e.idx, 0, s)
		nav := round(price/pnav, 6)
		common, _ := sharesOn(o, mEnd)
		shares := float64(common)
		net := round(nav*shares, 2)
		investors += (target - investors) * 0.04 * uniform(r, 0.5, 1.5)
		div := divByMonth[m]
		dy := round(div/nav, 6)
		ret := math.NaN()
		if !math.IsNaN(prevNAV) {
			ret = round((nav-prevNAV+div)/prevNAV, 6)
		}
		prevNAV = nav
		seq++
		ret2 := pub.Add(time.Duration(3+r.IntN(30)) * time.Hour)
		fr := engine.FundReport{FundID: e.c.ID, ReferenceDate: m, Version: 1, PublishDate: pub, RetrievalDate: ret2,
			NetAssets: engine.Num(net), SharesOut: engine.Num(shares), NAVPerShare: engine.Num(nav),
			Investors: engine.Num(math.Round(investors)), DividendYield: engine.Num(dy), MonthlyReturn: engine.Num(ret),
			TotalAssets: engine.Num(round(net*uniform(r, 1.005, 1.12), 2)),
			Sources: []engine.Source{{VisualizationURL: engine.URLOf(fmt.Sprintf("%s/cvm/fnet/informe-mensal/%s/%d-%02d", URLBase, e.c.ID, y, int(mo))),
				PublishedAt: pub, RetrievedAt: ret2, Name: fmt.Sprintf("Informe Mensal %02d/%d", int(mo), y)}}}
		o.funds = append(o.funds, fr)
		if r.Float64() < 0.03 {
			v2 := fr
			v2.Version = 2
			v2.PublishDate = pub.Add(time.Duration(5+r.IntN(40)) * 24 * time.Hour)
			if engine.DateOf(v2.PublishDate) <= asOfDay {
				v2.RetrievalDate = v2.PublishDate.Add(4 * time.Hour)
				v2.Investors = engine.Num(math.Round(investors * 1.01))
				v2.TotalAssets = engine.Num(round(float64(fr.TotalAssets)*(1+0.01*r.NormFloat64()), 2))
				v2.Sources = []engine.Source{fr.Sources[0]}
				v2.Sources[0].PublishedAt, v2.Sources[0].RetrievedAt = v2.PublishDate, v2.RetrievalDate
				v2.Sources[0].Name += " (reapresentação)"
				o.funds = append(o.funds, v2)
			}
		}
	}
}

var insiderGroups = map[string][]string{
	engine.AggIndividual:   {"CONTROLLER", "TREASURY", "SUBSIDIARY"},
	engine.AggConsolidated: {"BOARD", "EXECUTIVE_BOARD", "AUDIT_COUNCIL"},
}

// insiderReports writes monthly VLMO-style reports for a subset of companies.
func (g *gen) insiderReports(e *entity, o *output, r *rand.Rand) {
	if !e.insider {
		return
	}
	asOfDay := g.cal[len(g.cal)-1]
	start := firstOfMonth(g.cal[e.first])
	if s := engine.MakeDate(g.sz.EventsFrom, 1, 1); start < s {
		start = s
	}
	for m := start; ; m = firstOfMonth(m + 32) {
		y, mo, _ := ymd(m)
		mEnd := monthEnd(y, mo)
		pub := localTime(mEnd+engine.Date(7+r.IntN(4)), 18, r.IntN(60))
		if engine.DateOf(pub) > asOfDay || g.session(m) > e.last {
			break
		}
		for _, agg := range []string{engine.AggIndividual, engine.AggConsolidated} {
			ir := engine.InsiderReport{CompanyID: e.c.ID, ReferenceDate: m, Aggregation: agg, Version: 1, PublishDate: pub,
				RetrievalDate: pub.Add(5 * time.Hour), Movements: []engine.InsiderMove{}}
			nm := r.IntN(4)
			if r.Float64() < 0.4 {
				nm = 0
			}
			for j := 0; j < nm; j++ {
				s := g.session(m + engine.Date(r.IntN(28)))
				if s > e.last || s < e.first || g.cal[s] > mEnd {
					continue
				}
				k := r.IntN(len(e.classes))
				c := e.classes[k]
				px := g.closeAt(e.idx, k, s)
				q := int64(100 * (1 + r.IntN(500)))
				op := pick(r, "BUY", "SELL", "BUY")
				grp := pick(r, insiderGroups[agg]...)
				if grp == "TREASURY" {
					op = "BUYBACK"
				}
				ir.Movements = append(ir.Movements, engine.InsiderMove{Group: grp, Operation: op, Ticker: e.tickerAt(c, s),
					StockType: c.stock, Date: g.cal[s], Quantity: q, Price: engine.Num(px), Volume: engine.Num(round(px*float64(q), 2))})
			}
			ir.Sources = []engine.Source{{VisualizationURL: engine.URLOf(fmt.Sprintf("%s/cvm/vlmo/%s/%d-%02d/%s", URLBase, e.c.ID, y, int(mo), agg)),
				PublishedAt: pub, RetrievedAt: ir.RetrievalDate, Name: fmt.Sprintf("Valores Mobiliários Negociados e Detidos %02d/%d", int(mo), y)}}
			o.insider = append(o.insider, ir)
		}
	}
}

var docKinds = []struct{ cat, typ, title string }{
	{"Fato Relevante", "Outros", "Fato Relevante - %s"},
	{"Comunicado ao Mercado", "Outros", "Comunicado ao Mercado - %s"},
	{"Aviso aos Acionistas", "Outros Avisos", "Aviso aos Acionistas - %s"},
	{"Assembleia", "AGO", "Edital de Convocação AGO - %s"},
	{"Calendário de Eventos Corporativos", "Calendário", "Calendário de Eventos Corporativos %s"},
	{"Comunicado ao Mercado", "Apresentações a analistas/agentes do mercado", "Apresentação de Resultados - %s"},
}

// documents writes a few regulatory documents per year since EventsFrom.
func (g *gen) documents(e *entity, o *output, r *rand.Rand) {
	asOfDay := g.cal[len(g.cal)-1]
	from := max(g.sz.EventsFrom, g.cal[e.first].Time().Year())
	seq := 0
	for y := from; y <= g.cal[e.last].Time().Year(); y++ {
		n := 2 + r.IntN(4)
		for j := 0; j < n; j++ {
			d := engine.MakeDate(y, 1, 2) + engine.Date(r.IntN(360))
			if d > asOfDay || g.session(d) > e.last || g.session(d) < e.first {
				continue
			}
			k := docKinds[r.IntN(len(docKinds))]
			seq++
			pub := localTime(d, 8+r.IntN(12), r.IntN(60))
			id := fmt.Sprintf("DOC%06d-%04d", e.idx, seq)
			title := fmt.Sprintf(k.title, e.c.TradingName)
			if k.cat == "Calendário de Eventos Corporativos" {
				title = fmt.Sprintf(k.title, itoa(y))
			}
			doc := engine.Document{ID: id, CompanyID: e.c.ID, Category: k.cat, Type: k.typ, Title: title, ReferenceDate: d,
				PublishDate: pub, RetrievalDate: pub.Add(2 * time.Hour), Version: 1,
				Source: engine.Source{VisualizationURL: engine.URLOf(fmt.Sprintf("%s/cvm/ipe/%s/%s", URLBase, e.c.ID, id)), PublishedAt: pub,
					RetrievedAt: pub.Add(2 * time.Hour), Name: title}}
			o.docs = append(o.docs, doc)
		}
	}
	for _, ev := range o.events {
		d := ev.approval
		if d.Time().Year() < g.sz.EventsFrom || d > asOfDay {
			continue
		}
		seq++
		id := fmt.Sprintf("DOC%06d-%04d", e.idx, seq)
		title := "Fato Relevante - " + actLabels[ev.typ]
		pub := localTime(d, 20, 0)
		o.docs = append(o.docs, engine.Document{ID: id, CompanyID: e.c.ID, Category: "Fato Relevante", Type: "Outros", Title: title,
			ReferenceDate: d, PublishDate: pub, RetrievalDate: pub.Add(2 * time.Hour), Version: 1,
			Source: engine.Source{VisualizationURL: engine.URLOf(fmt.Sprintf("%s/cvm/ipe/%s/%s", URLBase, e.c.ID, id)), PublishedAt: pub,
				RetrievedAt: pub.Add(2 * time.Hour), Name: title}})
	}
}
