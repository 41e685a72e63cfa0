package assemble

import (
	"context"
	"slices"
	"strings"

	"github.com/pregao/pregao/engine"
)

// recordRenames turns tickers that share an ISIN into what they are. One
// security under successive tickers (a ticker change inside the quoted
// period: each ticker's last session before the next one's first) is a
// rename chain: the old tickers resolve to the current one and their
// series join its history, under its company. Tickers whose sessions
// overlap cannot be one security renamed: the ISIN stays on the one quoted
// last (then the longest quoted) and is cleared on the others, with a note
// (an ISIN names one security to the engine). A rename chain's company is
// the one its latest ticker is linked to, unless that is an issuer made
// from the quote file and an earlier ticker's is not; an issuer made from
// the quote file left without a security is removed: a rename leaves one
// company.
func (a *assembler) recordRenames(context.Context, Progress) error {
	span := make(map[string][2]engine.Date, len(a.quotes.Securities))
	for _, q := range a.quotes.Securities {
		span[q.Ticker] = [2]engine.Date{q.First, q.Last}
	}
	byISIN := map[string][]int{}
	for i := range a.u.Securities {
		if s := &a.u.Securities[i]; s.ISIN != "" {
			byISIN[s.ISIN] = append(byISIN[s.ISIN], i)
		}
	}
	isins := make([]string, 0, len(byISIN))
	for isin, ix := range byISIN {
		if len(ix) > 1 {
			isins = append(isins, isin)
		}
	}
	slices.Sort(isins)
	var renamed, cleared []string
	for _, isin := range isins {
		ix := byISIN[isin]
		slices.SortFunc(ix, func(x, y int) int {
			return int(span[a.u.Securities[x].Ticker][0]) - int(span[a.u.Securities[y].Ticker][0])
		})
		disjoint := true
		for k := 1; k < len(ix); k++ {
			if span[a.u.Securities[ix[k-1]].Ticker][1] >= span[a.u.Securities[ix[k]].Ticker][0] {
				disjoint = false
			}
		}
		last := &a.u.Securities[ix[len(ix)-1]]
		if disjoint {
			co := last.CompanyID
			for k := len(ix) - 1; k >= 0 && a.made[co]; k-- {
				if id := a.u.Securities[ix[k]].CompanyID; !a.made[id] {
					co = id
				}
			}
			for k := 0; k+1 < len(ix); k++ {
				from, to := &a.u.Securities[ix[k]], &a.u.Securities[ix[k+1]]
				date := span[to.Ticker][0]
				a.u.Renames = append(a.u.Renames, engine.TickerRename{From: from.Ticker, To: to.Ticker, Date: date})
				renamed = append(renamed, from.Ticker+"→"+to.Ticker+" ("+date.String()+")")
			}
			for _, i := range ix {
				a.u.Securities[i].CompanyID = co
			}
			a.renameSymbol(co, a.u.Securities[ix[0]].Ticker[:4], last.Ticker[:4])
			continue
		}
		keep := ix[0]
		for _, i := range ix[1:] {
			s, k := span[a.u.Securities[i].Ticker], span[a.u.Securities[keep].Ticker]
			if s[1] > k[1] || s[1] == k[1] && s[1]-s[0] > k[1]-k[0] {
				keep = i
			}
		}
		for _, i := range ix {
			if i != keep {
				cleared = append(cleared, a.u.Securities[i].Ticker)
				a.u.Securities[i].ISIN = ""
			}
		}
		cleared[len(cleared)-1] += " (" + isin + " kept by " + a.u.Securities[keep].Ticker + ")"
	}
	if len(renamed) > 0 {
		a.rep.notef("%d ticker changes recorded as renames (same ISIN, one ticker after the other): %s", len(renamed), strings.Join(first(renamed, 10), ", "))
		if n := a.dropEmptyMade(); n > 0 {
			a.rep.notef("%d issuers made from COTAHIST names removed: their tickers were renamed into another company's", n)
		}
	}
	if len(cleared) > 0 {
		a.rep.notef("%d tickers share an ISIN with a ticker quoted at the same time; their ISIN was left out: %s", len(cleared), strings.Join(first(cleared, 10), ", "))
	}
	return nil
}

// renameSymbol moves company id's symbol from the root of a renamed
// ticker (old) to the root of its current ticker (cur), unless another
// company holds cur: linking gave the company the root of its first
// ticker in ticker order, which after a rename may be the old one.
func (a *assembler) renameSymbol(id, old, cur string) {
	c := a.companies[id]
	if c == nil || c.Symbol != old || old == cur {
		return
	}
	for _, o := range a.companies {
		if o.Symbol == cur && o.ID != id {
			return
		}
	}
	c.Symbol = cur
}

// dropEmptyMade removes the issuers made from the quote files that no
// security belongs to any more, and returns how many.
func (a *assembler) dropEmptyMade() int {
	used := map[string]bool{}
	for i := range a.u.Securities {
		used[a.u.Securities[i].CompanyID] = true
	}
	n := 0
	for id := range a.made {
		if !used[id] {
			delete(a.companies, id)
			delete(a.made, id)
			a.rep.Minimal--
			n++
		}
	}
	return n
}
