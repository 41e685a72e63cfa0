package demo

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// roles assigns the rarer events: spin-offs (with a new listed child),
// ticker renames, mergers, fund redemptions and the other share actions.
func (g *gen) roles(r *rand.Rand, usedRoot, usedCNPJ map[string]bool, usedCode map[int]bool, usedName map[string]bool) {
	nComp := g.sz.Companies
	busy := make([]bool, len(g.ents))
	between := func(y0, y1 int) int {
		y0 = max(y0, g.cal[0].Time().Year()+2)
		y1 = max(y1, y0)
		d := engine.MakeDate(y0, time.January, 2) + engine.Date(r.IntN(365*(y1-y0+1)))
		return min(g.session(d), len(g.cal)-60)
	}
	// candidates returns free Brazilian ON-only companies listed before session s.
	candidates := func(s int, onOnly bool) []int {
		var out []int
		for i, e := range g.ents {
			if busy[i] || e.c.Kind != engine.KindCompany || e.first >= s || e.last < len(g.cal)-1 {
				continue
			}
			if onOnly && len(e.classes) != 1 {
				continue
			}
			out = append(out, i)
		}
		return out
	}
	take := func(c []int) int {
		if len(c) == 0 {
			return -1
		}
		i := c[r.IntN(len(c))]
		busy[i] = true
		return i
	}
	// Spin-offs.
	for k := 0; k < max(1, nComp/150); k++ {
		ex := between(2012, 2024)
		p := take(candidates(ex-250, true))
		if p < 0 {
			break
		}
		pe := g.ents[p]
		child := &entity{tag: pe.tag}
		child.c.Kind = engine.KindCompany
		sub := g.pickSub(r, child.tag)
		var name string
		var words []string
		for {
			name, words = companyName(r, child.tag)
			if !usedName[strings.ToLower(name)] {
				usedName[strings.ToLower(name)] = true
				break
			}
		}
		root := pickRoot(r, words, usedRoot)
		child.c.ID = newCNPJ(r, usedCNPJ)
		for {
			c := 10000 + r.IntN(29999)
			if !usedCode[c] {
				usedCode[c] = true
				child.c.CVMCode = itoa(c)
				break
			}
		}
		g.registry(r, child, sub, name, words, root)
		child.c.Description = strings.Replace(child.c.Description, ". Dados", ", cindida de "+pe.c.TradingName+". Dados", 1)
		child.c.ListingSegment = "NOVO MERCADO"
		child.first, child.last = ex, len(g.cal)-1
		child.c.IPODate = g.cal[ex]
		child.c.FoundingDate = g.cal[ex] - engine.Date(60+r.IntN(200))
		child.mcap = pe.mcap * uniform(r, 0.1, 0.4)
		child.vol, child.beta, child.drift, child.turnover = pe.vol*1.1, pe.beta, uniform(r, 0, 0.1), uniform(r, 0.3, 1.5)
		child.fracON = 1
		child.dfcMD = r.Float64() < 0.1
		child.classes = []*class{newClass(root, "3", r)}
		g.dividendPolicy(r, child)
		child.idx = len(g.ents)
		child.spinParent, child.mergeInto = p, -1
		g.ents = append(g.ents, child)
		busy = append(busy, true)
		pe.spin = &spinPlan{child: child.idx, ex: ex, r: uniform(r, 0.12, 0.3)}
	}
	// Ticker renames.
	for k := 0; k < max(1, nComp/90); k++ {
		at := between(2013, 2025)
		i := take(candidates(at-250, false))
		if i < 0 {
			break
		}
		e := g.ents[i]
		w := inventedWord(r)
		newRoot := pickRoot(r, []string{w, e.c.Name}, usedRoot)
		e.renameAt, e.oldRoot = at, e.c.Symbol
		e.c.Symbol = newRoot
		e.c.TradingName = strings.ToUpper(w)
		e.c.LogoURL = URLBase + "/logos/" + newRoot
		for _, c := range e.classes {
			c.oldTicker = c.ticker
			c.ticker = newRoot + c.suffix
		}
	}
	// Mergers: the absorbed company delists; holders receive acquirer shares.
	for k := 0; k < max(1, nComp/225); k++ {
		at := between(2010, 2024)
		i := take(candidates(at-250, true))
		if i < 0 {
			break
		}
		acq := candidates(at-250, true)
		if len(acq) == 0 {
			busy[i] = false
			break
		}
		e := g.ents[i]
		e.mergeInto = acq[r.IntN(len(acq))]
		e.last = at - 1
		e.c.Status = "CANCELLED"
		e.c.StatusDate = g.cal[min(e.last+1, len(g.cal)-1)] // registration cancelled after its last session
	}
	// Fund redemptions (TOTAL_EQUITY_REDEMPTION).
	if g.sz.FIIs > 0 {
		var funds []int
		cut := g.session(engine.MakeDate(2018, 1, 1))
		for i, e := range g.ents {
			if e.c.Kind == engine.KindFII && e.first < cut && !busy[i] {
				funds = append(funds, i)
			}
		}
		for k := 0; k < max(1, g.sz.FIIs/150) && len(funds) > 0; k++ {
			j := r.IntN(len(funds))
			e := g.ents[funds[j]]
			funds = append(funds[:j], funds[j+1:]...)
			busy[e.idx] = true
			e.redeem = true
			e.last = between(2019, 2025)
			e.c.Status = "CANCELLED"
			e.c.StatusDate = g.cal[min(e.last+1, len(g.cal)-1)]
		}
	}
	// Rarer share actions.
	types := []string{engine.ActStockSplit, engine.ActReverseSplit, engine.ActStockBonus, engine.ActSubscription, engine.ActRestitutionInShares, engine.ActRestitutionWithReduce, engine.ActSpinOffQuantity}
	for k := 0; k < max(1, nComp/225); k++ {
		for _, t := range types {
			ex := between(2016, 2025)
			i := take(candidates(ex-250, true))
			if i < 0 {
				continue
			}
			sp := &special{typ: t, ex: ex, other: -1, f: 1}
			switch t {
			case engine.ActStockSplit:
				sp.f = pick(r, 2.0, 4, 5, 10)
			case engine.ActReverseSplit:
				sp.f = pick(r, 0.1, 0.05)
			case engine.ActStockBonus:
				sp.f = pick(r, 1.05, 1.1)
			case engine.ActSubscription:
				sp.f = pick(r, 1.1, 1.2, 1.25)
			case engine.ActRestitutionWithReduce:
				sp.f = pick(r, 0.9, 0.95)
			case engine.ActSpinOffQuantity:
				sp.f = pick(r, 0.8, 0.9)
			}
			if t == engine.ActRestitutionInShares || t == engine.ActSpinOffQuantity {
				others := candidates(ex-250, true)
				if len(others) == 0 {
					continue
				}
				sp.other = others[r.IntN(len(others))]
				sp.r = uniform(r, 0.03, 0.12)
			}
			g.ents[i].special = sp
		}
	}
}
