package demo

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/pregao/pregao/engine"
)

// output is what one entity produces. Simulation fills the price part;
// detailEntity fills the rest.
type output struct {
	series  []engine.Series
	tail    []engine.Series // with gen.sink: the last rows of series, whole (intraday reads them)
	lvl     []float64       // log level of the entity's value path per local session
	events  []doneEvent
	cash    []doneCash
	issues  []issue // share count changes without price effect
	childF  float64 // spin-off child: shares received per parent share
	avgVol  []float64
	last    []lastSession // per class: the universe's last session, from trades
	sharesT int64         // total shares (or quotas) at the last session
	sharesC int64         // common part of sharesT

	secs     []engine.Security
	renames  []engine.TickerRename
	cashActs []engine.CashAction
	acts     []engine.ShareAction
	shares   []engine.SharesPoint
	reports  []engine.Report
	funds    []engine.FundReport
	insider  []engine.InsiderReport
	docs     []engine.Document
}

// doneEvent is a share event applied to the prices on session ex.
type doneEvent struct {
	ex       int // global session index of the ex-date
	typ      string
	factor   float64 // share count multiplier (original leg)
	r        float64 // value fraction handed in other shares
	other    int     // entity delivered (-1 none)
	approval engine.Date
}

// doneCash is a cash distribution whose ex-date is session ex.
type doneCash struct {
	ex   int
	name string
	amt  []float64 // BRL per share, per class
}

// issue is a share count change on session at (follow-on, fund emission).
type issue struct {
	at     int
	factor float64
}

// schedEvent is a planned event.
type schedEvent struct {
	ex     int
	cash   string // cash name, "" for a share event
	weight float64
	ev     doneEvent
}

// simulateEntity draws the daily bars of one entity.
func (g *gen) simulateEntity(idx int) {
	e := g.ents[idx]
	r := g.rng(idx, 1)
	o := &output{}
	g.outs[idx] = o
	n := e.last - e.first + 1
	nc := len(e.classes)
	sdDay := e.vol / math.Sqrt(252)
	sdIdio := sdDay
	if e.beta > 0 {
		sdIdio = math.Sqrt(math.Max(sdDay*sdDay-e.beta*e.beta*0.0125*0.0125-0.0055*0.0055, sdDay*sdDay*0.15))
	}
	mu := (e.drift+e.yield)/252 - 0.5*sdDay*sdDay // price return = drift; cash is paid out of it

	// Scheduled events.
	var sched []schedEvent
	for y := g.cal[e.first].Time().Year(); y <= g.cal[e.last].Time().Year(); y++ {
		for _, m := range e.divMonths {
			prior := g.session(monthEnd(y, m)+1) - 1
			if e.c.Kind != engine.KindFII {
				prior -= r.IntN(7)
			}
			if prior <= e.first+3 || prior >= e.last {
				continue
			}
			name := "DIVIDEND"
			switch {
			case e.c.Kind == engine.KindFII:
				name = "RENDIMENTO"
			case e.jcp && (m == time.June || m == time.December || len(e.divMonths) == 1):
				name = "INTEREST_ON_EQUITY"
			}
			sched = append(sched, schedEvent{ex: prior + 1, cash: name, weight: uniform(r, 0.6, 1.4) / float64(len(e.divMonths))})
		}
		if e.jcp && len(e.divMonths) <= 2 {
			prior := g.session(engine.MakeDate(y, time.December, 20)) - 1
			if prior > e.first+3 && prior < e.last {
				sched = append(sched, schedEvent{ex: prior + 1, cash: "INTEREST_ON_EQUITY", weight: uniform(r, 0.1, 0.3)})
			}
		}
	}
	if e.spin != nil {
		sched = append(sched, schedEvent{ex: e.spin.ex, ev: doneEvent{typ: engine.ActSpinOff, factor: 1, r: e.spin.r, other: e.spin.child}})
	}
	if sp := e.special; sp != nil {
		sched = append(sched, schedEvent{ex: sp.ex, ev: doneEvent{typ: sp.typ, factor: sp.f, r: sp.r, other: sp.other}})
	}
	// Follow-on offerings and fund emissions change share counts only.
	if (e.c.Kind == engine.KindCompany && r.Float64() < 0.15) || (e.c.Kind == engine.KindFII && r.Float64() < 0.4) || e.c.Kind == engine.KindETF {
		k := 1 + r.IntN(3)
		for j := 0; j < k; j++ {
			at := e.first + 60 + r.IntN(max(1, n-60))
			if at <= e.last {
				o.issues = append(o.issues, issue{at: at, factor: uniform(r, 1.05, 1.4)})
			}
		}
		sort.Slice(o.issues, func(a, b int) bool { return o.issues[a].at < o.issues[b].at })
	}
	for j := range sched {
		if sched[j].ev.approval == 0 {
			sched[j].ev.approval = g.cal[sched[j].ex-1] - engine.Date(15+r.IntN(40))
		}
		sched[j].ev.ex = sched[j].ex
	}
	sort.SliceStable(sched, func(a, b int) bool { return sched[a].ex < sched[b].ex })

	// Columns.
	o.series = make([]engine.Series, nc)
	for k := range o.series {
		s := &o.series[k]
		s.Ticker = e.classes[k].ticker
		s.Dates = g.cal[e.first : e.last+1 : e.last+1]
		s.Open, s.High, s.Low, s.Close = make([]engine.Num, n), make([]engine.Num, n), make([]engine.Num, n), make([]engine.Num, n)
		s.Volume, s.Quantity, s.Trades = make([]engine.Num, n), make([]int64, n), make([]int64, n)
	}
	o.lvl = make([]float64, n)
	unit := -1
	for k, c := range e.classes {
		if c.stock == engine.ClassUnit {
			unit = k
		}
	}
	prev := make([]float64, nc)
	ref := make([]float64, nc)
	spread := make([]float64, nc)
	start := e.startPrice
	if e.spinParent >= 0 {
		p := g.ents[e.spinParent]
		po := g.outs[e.spinParent]
		pc := float64(po.series[0].Close[p.spin.ex-1-p.first])
		target := uniform(r, 8, 30)
		o.childF = math.Max(0.01, round(p.spin.r*pc/target, 4))
		start = p.spin.r * pc / o.childF
	}
	for k, c := range e.classes {
		prev[k] = start * math.Exp(c.prem)
	}
	next := 0
	var pending *schedEvent
	lastSplit := -1000
	lvl := 0.0
	for j := 0; j < n; j++ {
		i := e.first + j
		copy(ref, prev)
		// Events with ex-date today.
		apply := func(s *schedEvent) {
			if s.cash != "" {
				amt := make([]float64, nc)
				y := e.yield * s.weight
				for k := range e.classes {
					if k == unit {
						continue
					}
					a := round(prev[k]*y*uniform(r, 0.97, 1.03), 8)
					if e.classes[k].stock == engine.ClassPS || e.classes[k].stock == engine.ClassPSA || e.classes[k].stock == engine.ClassPSB {
						a = round(a*1.1, 8)
					}
					a = math.Max(a, 0.00000001)
					amt[k] = a
					ref[k] = math.Max(ref[k]-a, ref[k]*0.5)
				}
				if unit >= 0 {
					amt[unit] = round(amt[0]+2*amt[1], 8)
				}
				o.cash = append(o.cash, doneCash{ex: i, name: s.cash, amt: amt})
				return
			}
			ev := s.ev
			// Planned splits fit their size to the price of the day.
			switch p := prev[0]; {
			case ev.typ == engine.ActStockSplit && ev.other < 0 && p < 60:
				ev.factor = 2
			case ev.typ == engine.ActStockSplit && ev.other < 0:
				ev.factor = splitFactor(p, 0)
			case ev.typ == engine.ActReverseSplit && p < 3:
				ev.factor = 0.1
			case ev.typ == engine.ActReverseSplit && p < 8:
				ev.factor = 0.2
			case ev.typ == engine.ActReverseSplit:
				ev.factor = 0.5
			}
			// A subscription adds shares paid in cash: no price effect.
			if ev.typ != engine.ActSubscription {
				for k := range ref {
					ref[k] = ref[k] * (1 - ev.r) / ev.factor
				}
			}
			o.events = append(o.events, ev)
			if ev.typ == engine.ActStockSplit || ev.typ == engine.ActReverseSplit {
				lastSplit = j
			}
		}
		for next < len(sched) && sched[next].ex <= i {
			if sched[next].ex == i {
				apply(&sched[next])
			}
			next++
		}
		if pending != nil && pending.ex == i {
			apply(pending)
			pending = nil
		}
		// Factor returns.
		var z float64
		switch {
		case e.c.Kind == engine.KindBDR || (e.c.Kind == engine.KindETF && e.c.SubIndustryID == "ETF_INTERNATIONAL_EQUITY"):
			z = mu + e.beta*g.world[i] + sdIdio*r.NormFloat64()
			if i > 0 {
				z += math.Log(g.usd[i] / g.usd[i-1])
			}
		case e.c.Kind == engine.KindETF && e.c.SubIndustryID == "ETF_FIXED_INCOME":
			z = g.selic[i]/100/252 + 0.0006*r.NormFloat64()
		default:
			z = mu + e.beta*g.mkt[i] + sdIdio*r.NormFloat64()
			if e.beta > 0.5 {
				z += g.secF[e.sec][i]
			}
			if r.Float64() < 0.015 {
				z += 3 * sdIdio * r.NormFloat64()
			}
		}
		lvl += z
		o.lvl[j] = lvl
		gap := 0.3 * sdDay * r.NormFloat64()
		for k := range e.classes {
			if k == unit {
				continue
			}
			ret := z
			if k > 0 {
				s := 0.004*r.NormFloat64() - 0.03*spread[k]
				spread[k] += s
				ret += s
			}
			op := cents(ref[k] * math.Exp(gap))
			cl := cents(ref[k] * math.Exp(ret))
			hi := cents(math.Max(op, cl) * math.Exp(math.Abs(r.NormFloat64())*0.45*sdDay))
			lo := cents(math.Min(op, cl) * math.Exp(-math.Abs(r.NormFloat64())*0.45*sdDay))
			g.setBar(&o.series[k], j, op, hi, lo, cl)
			prev[k] = cl
		}
		if unit >= 0 {
			s0, s1 := &o.series[0], &o.series[1]
			op := float64(s0.Open[j] + 2*s1.Open[j])
			cl := float64(s0.Close[j] + 2*s1.Close[j])
			hmax := float64(s0.High[j] + 2*s1.High[j])
			lmin := float64(s0.Low[j] + 2*s1.Low[j])
			hi := cents(math.Max(op, cl) + uniform(r, 0.2, 0.9)*(hmax-math.Max(op, cl)))
			lo := cents(math.Min(op, cl) - uniform(r, 0.2, 0.9)*(math.Min(op, cl)-lmin))
			op, cl = cents(op), cents(cl)
			g.setBar(&o.series[unit], j, op, math.Max(hi, math.Max(op, cl)), math.Min(lo, math.Min(op, cl)), cl)
			prev[unit] = cl
		}
		// Splits and reverse splits when the price drifts out of range.
		p := prev[0]
		if pending == nil && j-lastSplit > 500 && i+40 < e.last && !nearPlanned(e, i) {
			var ev doneEvent
			switch {
			case e.c.Kind != engine.KindFII && e.c.Kind != engine.KindETF && p > 140:
				ev = doneEvent{typ: engine.ActStockSplit, factor: splitFactor(p, r.IntN(3))}
			case (e.c.Kind == engine.KindFII || e.c.Kind == engine.KindETF) && p > 400:
				ev = doneEvent{typ: engine.ActStockSplit, factor: 10}
			case e.c.Kind == engine.KindCompany && p < 0.9:
				ev = doneEvent{typ: engine.ActReverseSplit, factor: 1 / reverseFactor(p)}
			case e.c.Kind == engine.KindCompany && r.Float64() < 0.012/252:
				ev = doneEvent{typ: engine.ActStockBonus, factor: pick(r, 1.05, 1.1, 1.1, 1.2)}
			}
			if ev.typ != "" {
				ex := i + 20 + r.IntN(20)
				ev.approval, ev.ex, ev.other = g.cal[i], ex, -1
				pending = &schedEvent{ex: ex, ev: ev}
				lastSplit = j
			}
		}
	}
	g.volumes(e, o, r, unit)
	o.lvl = nil
}

func (g *gen) setBar(s *engine.Series, j int, op, hi, lo, cl float64) {
	s.Open[j], s.High[j], s.Low[j], s.Close[j] = engine.Num(op), engine.Num(hi), engine.Num(lo), engine.Num(cl)
}

// splitFactor chooses N of a 1:N split bringing price p to 15-50.
func splitFactor(p float64, v int) float64 {
	for _, n := range []float64{2, 3, 4, 5, 8, 10, 20, 50, 100} {
		if p/n <= 50 {
			if v > 0 && p/(n*2) >= 12 && v == 2 {
				return n * 2
			}
			return n
		}
	}
	return 100
}

// reverseFactor chooses N of an N:1 reverse split bringing price p to 8-60.
func reverseFactor(p float64) float64 {
	for _, n := range []float64{10, 20, 25, 50, 100, 200, 500, 1000} {
		if p*n >= 8 {
			return n
		}
	}
	return 1000
}

// volumes fills volume, quantity and trades from the level path.
func (g *gen) volumes(e *entity, o *output, r *rand.Rand, unit int) {
	n := len(o.lvl)
	end := o.lvl[n-1]
	lastYear := float64(g.cal[len(g.cal)-1].Time().Year())
	o.avgVol = make([]float64, len(e.classes))
	for k := range e.classes {
		share := 1.0
		if len(e.classes) > 1 {
			switch {
			case unit >= 0 && k == unit:
				share = 0.6
			case unit >= 0:
				share = 0.2
			case k == 0:
				share = e.fracON
			default:
				share = (1 - e.fracON) / float64(len(e.classes)-1)
			}
		}
		base := e.mcap * share * e.turnover / 252
		tradeSize := lognormal(r, 300, 0.4)
		if e.c.Kind == engine.KindFII {
			tradeSize = uniform(r, 6, 25)
		}
		s := &o.series[k]
		var sum float64
		var cnt int
		for j := 0; j < n; j++ {
			y := float64(s.Dates[j].Time().Year())
			growth := math.Exp(-0.09 * (lastYear - y))
			cl := float64(s.Close[j])
			ret := 0.0
			if j > 0 {
				ret = math.Abs(math.Log(cl / float64(s.Close[j-1])))
			}
			v := base * math.Exp(0.8*(o.lvl[j]-end)) * growth * (1 + 6*ret) * math.Exp(0.45*r.NormFloat64())
			vwap := (float64(s.High[j]) + float64(s.Low[j]) + 2*cl) / 4
			q := int64(math.Max(1, math.Round(v/vwap)))
			if e.c.Kind == engine.KindCompany && q > 100 {
				q = q / 100 * 100
			}
			vol := round(float64(q)*vwap, 2)
			s.Quantity[j] = q
			s.Volume[j] = engine.Num(vol)
			ps := tradeSize
			if cl > 100 && e.c.Kind != engine.KindFII {
				ps = math.Max(1, tradeSize*30/cl)
			}
			s.Trades[j] = max(1, int64(float64(q)/ps))
			if j == n-1 && e.last == len(g.cal)-1 {
				if o.last == nil {
					o.last = make([]lastSession, len(e.classes))
				}
				vol = g.lastSession(e, o, k, s, j)
			}
			if j >= n-63 {
				sum += vol
				cnt++
			}
		}
		if cnt > 0 {
			o.avgVol[k] = sum / float64(cnt)
		}
	}
}

// nearPlanned reports whether session i is within 60 sessions before a
// planned spin-off or special share action (no split is scheduled there).
func nearPlanned(e *entity, i int) bool {
	if e.spin != nil && i+60 >= e.spin.ex && i <= e.spin.ex {
		return true
	}
	return e.special != nil && i+60 >= e.special.ex && i <= e.special.ex
}
