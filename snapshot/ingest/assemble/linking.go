package assemble

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
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

// Evidence by which a security was linked to its company.
const (
	byNone    = iota
	byFCA     // the FCA ticker map
	byISIN    // a fund's ISIN in the FII reports
	byB3      // B3's company details, by ticker or root
	byListing // B3's instruments file: the issuer's legal name, one registrant's
	byCode    // the ISIN's issuer code, tied to a company by the above
	byName    // the name rule alone
	byCount   // number of kinds
)

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
	ok := func(id, st string) bool {
		c := a.companies[id]
		return c != nil && kindOK(c.Kind, st)
	}
	// Pass 1: the evidence of the FCA, the FII reports, B3's details and
	// B3's instruments file.
	ix := newNameIndex(a.companies, a.cadRows)
	ix.addFormer(a.fcaGeneral)
	listed := a.listedIssuers(ix)
	cos := make([]string, len(a.quotes.Securities))
	how := make([]int, len(a.quotes.Securities))
	for i, q := range a.quotes.Securities {
		if !engine.ValidTicker(q.Ticker) {
			continue
		}
		st, root := q.StockType, q.Ticker[:4]
		if ids := a.isinTied[q.ISIN]; st == engine.ClassFundUnit && ids != nil {
			a.rep.notef("%s: ISIN %s is in the latest FII reports of %d funds of the same month (%s): not linked by ISIN",
				q.Ticker, q.ISIN, len(ids), strings.Join(ids, ", "))
		}
		switch {
		case ok(a.tickerCo[q.Ticker], st):
			cos[i], how[i] = a.tickerCo[q.Ticker], byFCA
		case st == engine.ClassFundUnit && ok(a.isinFund[q.ISIN], st):
			cos[i], how[i] = a.isinFund[q.ISIN], byISIN
		case ok(detailCo[q.Ticker], st):
			cos[i], how[i] = detailCo[q.Ticker], byB3
		case ok(detailCo[root], st):
			cos[i], how[i] = detailCo[root], byB3
		case st != engine.ClassFundUnit && st != engine.ClassBDR && ok(listed(q), st):
			cos[i], how[i] = listed(q), byListing
		}
	}
	// Pass 2: the ISIN's issuer code (BRBBDCACNOR1: BBDC) of a share
	// linked above, or of a ticker of the FCA or B3's details, ties the
	// company's other shares (a unit, a class without an FCA row).
	codeCo := issuerCodes(a, cos)
	for i, q := range a.quotes.Securities {
		if cos[i] != "" || !engine.ValidTicker(q.Ticker) || q.StockType == engine.ClassFundUnit {
			continue
		}
		if id := codeCo[isinCode(q.ISIN)]; id != "" && ok(id, q.StockType) {
			cos[i], how[i] = id, byCode
		}
	}
	// Pass 3: the name rule, one question per issuer code, for the shares
	// and units nothing above linked.
	answers := a.nameAnswers(ix, cos)
	for i, q := range a.quotes.Securities {
		if !engine.ValidTicker(q.Ticker) {
			a.rep.BadTickers = append(a.rep.BadTickers, q.Ticker)
			continue
		}
		root, st := q.Ticker[:4], q.StockType
		co := cos[i]
		if co == "" && st != engine.ClassFundUnit && st != engine.ClassBDR {
			if ans := answers[root]; ans.id != "" && ok(ans.id, st) {
				co, how[i] = ans.id, byName
				c := a.companies[co]
				a.rep.NameLinks = append(a.rep.NameLinks, fmt.Sprintf("%s (%q) → %s (%s%s)", q.Ticker, q.Name,
					ans.cand.describe(c.Status), ans.level, codeNote(ans.cand.code, root)))
			} else if len(ans.tied) > 0 {
				var ts []string
				for k := range ans.tied {
					ts = append(ts, ans.tied[k].describe(a.companies[ans.tied[k].reg.id].Status))
				}
				a.rep.Ambiguous = append(a.rep.Ambiguous, fmt.Sprintf("%s (%q): %d registrants match alike (%s): %s",
					q.Ticker, q.Name, len(ans.tied), ans.level, strings.Join(ts, "; ")))
			}
		}
		a.rep.Linked[how[i]]++
		if co == "" {
			if st != engine.ClassFundUnit && st != engine.ClassBDR {
				a.rep.MadeUp = append(a.rep.MadeUp, fmt.Sprintf("%s (%q)", q.Ticker, q.Name))
			}
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
				a.made[co] = true
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
		if st == engine.ClassUnit {
			n := a.unitTicker[q.Ticker]
			if n == 0 {
				n = a.unitCompany[co]
			}
			if n > 0 {
				sec.UnitFactor = engine.Num(n)
				a.rep.UnitsComposed++
			} else {
				a.rep.UnitsWithout = append(a.rep.UnitsWithout, q.Ticker)
			}
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

// listedIssuers returns the function that tells the company B3's
// instruments file names as a quote's issuer: the row of its ticker (of
// the same ISIN, when both have one), else the row of its ISIN (a ticker
// renamed since), whose issuer's legal name is one eligible registrant's
// on the quote's last session (nameIndex.byLegalName); "" when there is
// no row, or no registrant or several hold that name (noted once per
// name).
func (a *assembler) listedIssuers(ix *nameIndex) func(q cotahist.Security) string {
	type key struct {
		name string
		day  engine.Date
	}
	memo := map[key]string{}
	return func(q cotahist.Security) string {
		in, ok := a.instrTicker[q.Ticker]
		if ok && in.ISIN != "" && q.ISIN != "" && in.ISIN != q.ISIN {
			ok = false
		}
		if !ok {
			if in, ok = a.instrISIN[q.ISIN]; !ok || q.ISIN == "" {
				return ""
			}
		}
		if in.Issuer == "" {
			return ""
		}
		k := key{in.Issuer, q.Last}
		if id, done := memo[k]; done {
			return id
		}
		id, n := ix.byLegalName(in.Issuer, q.Last)
		memo[k] = id
		if id == "" {
			if n == 0 {
				a.rep.ListingUnmatched = append(a.rep.ListingUnmatched, fmt.Sprintf("%s (%q)", q.Ticker, in.Issuer))
			} else {
				a.rep.notef("%s: B3's instruments file names %q, the legal name of %d registrants active on %s: not linked by it", q.Ticker, in.Issuer, n, q.Last)
			}
		}
		return id
	}
}

// isinCode is the issuer code of an ISIN (BRBBDCACNOR1: BBDC), "" when
// it is not a Brazilian ISIN of 12 characters.
func isinCode(isin string) string {
	if len(isin) != 12 || !strings.HasPrefix(isin, "BR") {
		return ""
	}
	return isin[2:6]
}

// issuerCodes maps issuer codes to the company that evidence ties them
// to: the ISIN code of every quote linked in cos, the roots of the FCA's
// tickers and B3's details (symbol, tickers and their ISINs). A code tied
// to two companies is left out.
func issuerCodes(a *assembler, cos []string) map[string]string {
	out := map[string]string{}
	tie := func(code, id string) {
		if code == "" || id == "" {
			return
		}
		if prev, ok := out[code]; ok && prev != id {
			out[code] = ""
			return
		}
		if _, ok := out[code]; !ok {
			out[code] = id
		}
	}
	for i, q := range a.quotes.Securities {
		if q.StockType != engine.ClassFundUnit {
			tie(isinCode(q.ISIN), cos[i])
		}
	}
	for t, id := range a.tickerCo {
		if len(t) >= 5 {
			tie(t[:4], id)
		}
	}
	for _, d := range a.details {
		tie(d.Symbol, d.CNPJ)
		for t, isin := range d.Tickers {
			tie(t[:4], d.CNPJ)
			tie(isinCode(isin), d.CNPJ)
		}
	}
	return out
}

// nameAnswers asks the name rule about every issuer code (ticker root) of
// a share or unit left unlinked in cos: its short name is the one of its
// ticker quoted last, its day the last session any of them traded.
func (a *assembler) nameAnswers(ix *nameIndex, cos []string) map[string]nameAnswer {
	qs := map[string]*nameQuery{}
	var codes []string
	for i, q := range a.quotes.Securities {
		st := q.StockType
		if cos[i] != "" || !engine.ValidTicker(q.Ticker) || st == engine.ClassFundUnit || st == engine.ClassBDR {
			continue
		}
		root := q.Ticker[:4]
		nq := qs[root]
		if nq == nil {
			nq = &nameQuery{code: root, last: engine.NoDate}
			qs[root] = nq
			codes = append(codes, root)
		}
		if !nq.last.Valid() || q.Last > nq.last {
			nq.last, nq.short = q.Last, q.Name
		}
	}
	if len(codes) == 0 {
		return nil
	}
	sort.Strings(codes)
	list := make([]nameQuery, len(codes))
	for i, c := range codes {
		list[i] = *qs[c]
	}
	return ix.resolve(list)
}

// codeNote says whether the issuer code was found in the name.
func codeNote(found bool, code string) string {
	if found {
		return ", code " + code + " in the name"
	}
	return ""
}

func statusOrUnknown(s string) string {
	if s == "" {
		return "status unknown"
	}
	return s
}
