package assemble

import (
	"context"
	"fmt"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

// kindOK reports whether a company of kind may issue a security of stock
// type st.
func kindOK(kind, st string) bool {
	switch kind {
	case engine.KindBDR:
		return st == engine.ClassBDR
	case engine.KindFII, engine.KindETF:
		return st == engine.ClassFundUnit
	}
	return st != engine.ClassBDR && st != engine.ClassFundUnit
}

// syntheticID is the company_id of an issuer known only from the quote
// files: "99" (shares), "98" (funds) or "97" (BDRs) followed by two digits
// per character of the 4-character root (0-9 -> 00-09, A-Z -> 10-35). It
// has 10 digits, so it never collides with a CNPJ (14) or a CVM code (<= 6).
func syntheticID(root, st string) string {
	prefix := "99"
	switch st {
	case engine.ClassFundUnit:
		prefix = "98"
	case engine.ClassBDR:
		prefix = "97"
	}
	b := []byte(prefix)
	for i := 0; i < 4 && i < len(root); i++ {
		c := root[i]
		v := 0
		if c >= '0' && c <= '9' {
			v = int(c - '0')
		} else if c >= 'A' && c <= 'Z' {
			v = int(c-'A') + 10
		}
		b = append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return string(b)
}

// linkSecurities turns the quote files' tickers into securities of
// companies, following the linking rules of the package doc, and moves
// the quote series into the Universe.
func (a *assembler) linkSecurities(context.Context, Progress) error {
	detailCo := map[string]string{} // ticker or symbol -> CNPJ
	for _, d := range a.details {
		detailCo[d.Symbol] = d.CNPJ
		for t := range d.Tickers {
			detailCo[t] = d.CNPJ
		}
	}
	names := newNameIndex(a.companies)
	rootCo := map[string]string{} // root -> company found by name (shares only)
	symbolUsed := map[string]string{}
	for _, c := range a.companies {
		if c.Symbol != "" {
			symbolUsed[c.Symbol] = c.ID
		}
	}
	ranks := liquidityRanks(a.quotes.Series)
	lastSession := engine.NoDate
	for _, q := range a.quotes.Securities {
		if !lastSession.Valid() || q.Last > lastSession {
			lastSession = q.Last
		}
	}
	for i, q := range a.quotes.Securities {
		if !engine.ValidTicker(q.Ticker) {
			a.rep.BadTickers = append(a.rep.BadTickers, q.Ticker)
			continue
		}
		root := q.Ticker[:4]
		st := q.StockType
		var co string
		ok := func(id string) bool {
			c := a.companies[id]
			return c != nil && kindOK(c.Kind, st)
		}
		if ids := a.isinTied[q.ISIN]; st == engine.ClassFundUnit && ids != nil {
			a.rep.notef("%s: ISIN %s is in the latest FII reports of %d funds of the same month (%s): not linked by ISIN",
				q.Ticker, q.ISIN, len(ids), strings.Join(ids, ", "))
		}
		switch {
		case a.tickerCo[q.Ticker] != "" && ok(a.tickerCo[q.Ticker]):
			co = a.tickerCo[q.Ticker]
			a.rep.LinkedFCA++
		case st == engine.ClassFundUnit && ok(a.isinFund[q.ISIN]):
			co = a.isinFund[q.ISIN]
			a.rep.LinkedISIN++
		case ok(detailCo[q.Ticker]) || ok(detailCo[root]):
			co = detailCo[q.Ticker]
			if !ok(co) {
				co = detailCo[root]
			}
			a.rep.LinkedB3++
		case st != engine.ClassFundUnit && st != engine.ClassBDR:
			id, seen := rootCo[root]
			if !seen {
				id = names.find(q.Name)
				rootCo[root] = id
			}
			if ok(id) {
				co = id
				a.rep.LinkedName++
				c := a.companies[id]
				a.rep.NameLinks = append(a.rep.NameLinks, fmt.Sprintf("%s (%q) → %s %s [%s]", q.Ticker, q.Name, id, c.Name, statusOrUnknown(c.Status)))
			}
		}
		if co == "" {
			co = syntheticID(root, st)
			if _, exists := a.companies[co]; !exists {
				kind := engine.KindCompany
				switch st {
				case engine.ClassBDR:
					kind = engine.KindBDR
				case engine.ClassFundUnit:
					kind = engine.KindETF
					if (q.BDI == 12 || a.fiiCodes[root]) && !a.etfSyms[root] {
						kind = engine.KindFII
					}
				}
				// Traded in the last session of the files: active; else unknown.
				status := ""
				if q.Last == lastSession {
					status = "ACTIVE"
				}
				a.addCompany(engine.Company{ID: co, Name: q.Name, TradingName: q.Name, Kind: kind, BDRSponsored: q.Sponsored,
					Employees: -1, FreeFloat: engine.Null, FoundingDate: engine.NoDate, IPODate: engine.NoDate, Status: status,
					StatusDate: engine.NoDate})
				a.rep.Minimal++
			} else if q.Sponsored {
				a.companies[co].BDRSponsored = true
			}
		}
		c := a.companies[co]
		if c.Symbol == "" {
			if _, used := symbolUsed[root]; !used {
				c.Symbol = root
				symbolUsed[root] = co
			}
		}
		sec := engine.Security{Ticker: q.Ticker, CompanyID: co, ISIN: q.ISIN, StockType: st, Currency: "BRL", UnitFactor: engine.Null,
			ListedFrom: engine.NoDate, ListedTo: engine.NoDate, LiquidityRank: ranks[q.Ticker]}
		if f, ok := a.fcaSecs[q.Ticker]; ok {
			sec.ListedFrom, sec.ListedTo = f.ListedFrom, f.ListedTo
		}
		if len(sec.ISIN) != 12 {
			sec.ISIN = ""
		}
		a.u.Securities = append(a.u.Securities, sec)
		a.u.Daily = append(a.u.Daily, a.quotes.Series[i])
	}
	if len(a.fcaLists)+len(a.fcaGeneral)+len(a.fcaAddr) > 0 {
		cos := a.companyList()
		cvm.ApplyListings(cos, a.fcaLists)
		cvm.ApplyGeneral(cos, a.fcaGeneral)
		cvm.ApplyAddresses(cos, a.fcaAddr, true)
		for i := range cos {
			*a.companies[cos[i].ID] = cos[i]
		}
		a.uniqueSymbols()
	}
	a.quotes.Series = nil
	return nil
}

func statusOrUnknown(s string) string {
	if s == "" {
		return "status unknown"
	}
	return s
}
