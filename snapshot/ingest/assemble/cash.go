package assemble

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// readCash merges B3's listed-company responses: the cash dividends of
// the company their input names (SYMBOL=path; the response names none),
// each event once, and the supplements' payment dates, share counts
// (dated the as-of day, unless the company has one of that day) and share
// actions on quoted ISINs, their legs' tickers resolved from the quotes'
// ISINs; the stockDividends labels no type maps are counted in the
// report.
func (a *assembler) readCash(context.Context, Progress) error {
	bySym := map[string][]engine.Security{}
	byISIN := map[string]engine.Security{}
	for _, s := range a.u.Securities {
		bySym[s.Ticker[:4]] = append(bySym[s.Ticker[:4]], s)
		if s.ISIN != "" {
			byISIN[s.ISIN] = s
		}
	}
	// seen holds each event taken, by id, and its value: an event given
	// again (two fetches of one company) is taken once, and noted when its
	// value differs.
	seen := map[string]engine.Num{}
	for _, v := range a.cfg.Cash {
		sym, p := symbolPath(v)
		if sym == "" {
			return fmt.Errorf("--cash-dividends %s: the response names no company: give SYMBOL=%s (e.g. ABEV=...)", v, p)
		}
		secs := bySym[sym]
		if len(secs) == 0 {
			return fmt.Errorf("--cash-dividends %s: no quoted ticker of %s", v, sym)
		}
		ctx := b3.CashContext{CompanyID: secs[0].CompanyID, Symbol: sym, Tickers: map[string]string{}, ISINs: map[string]string{}, Retrieved: a.opt.Retrieved}
		for _, s := range secs {
			if s.CompanyID != ctx.CompanyID {
				continue
			}
			if _, dup := ctx.Tickers[s.StockType]; !dup {
				ctx.Tickers[s.StockType], ctx.ISINs[s.StockType] = s.Ticker, s.ISIN
			}
		}
		b, err := datafile.ReadFile(p)
		if err != nil {
			return err
		}
		cas, st, err := b3.ReadCashDividends(b, p, ctx)
		if err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(st.NoTicker)) {
			a.rep.notef("%s: %d events of %s %s skipped (no quoted ticker)", p, st.NoTicker[k], sym, k)
		}
		for _, k := range slices.Sorted(maps.Keys(st.UnknownLabel)) {
			a.rep.notef("%s: %d events labelled %q skipped", p, st.UnknownLabel[k], k)
		}
		for _, c := range cas {
			if prev, dup := seen[c.ID]; dup {
				if prev != c.DeclaredValue {
					a.rep.notef("%s: %s of %s with prior-ex date %s (%s) given again with the value %v BRL a share; the first answer's %v kept",
						p, c.Name, c.Ticker, c.PriorExDate, c.EventID, float64(c.DeclaredValue), float64(prev))
				}
				continue
			}
			seen[c.ID] = c.DeclaredValue
			a.u.CashActions = append(a.u.CashActions, c)
		}
	}
	files, err := expand(a.cfg.Supplement, isJSON)
	if err != nil {
		return fmt.Errorf("--supplement: %w", err)
	}
	// actSeen holds the bundle key of each share action taken (company,
	// ticker, ISINs, type, last "with" date) and its terms: the same event
	// in two supplements (two fetches of one company) is taken once.
	actSeen := map[string]string{}
	shareSeen := map[string]bool{}
	for _, s := range a.u.Shares {
		shareSeen[s.CompanyID+s.Date.String()] = true
	}
	// A supplement dates the payments of its own company's events only:
	// matching every event of the market against every supplement was
	// quadratic (most of a scale-10 import), and could date another
	// company's event of the same name, dates and value.
	cashOf := map[string][]int{}
	for i := range a.u.CashActions {
		cashOf[a.u.CashActions[i].CompanyID.String()] = append(cashOf[a.u.CashActions[i].CompanyID.String()], i)
	}
	var own []engine.CashAction
	for _, f := range files {
		b, err := datafile.ReadFile(f)
		if err != nil {
			return err
		}
		sup, err := b3.ReadSupplement(b, f)
		if err != nil {
			return err
		}
		secs := bySym[sup.Symbol]
		if len(secs) == 0 {
			a.rep.notef("%s: no quoted ticker of %s, ignored", f, sup.Symbol)
			continue
		}
		co := secs[0].CompanyID
		own = own[:0]
		for _, i := range cashOf[co] {
			own = append(own, a.u.CashActions[i])
		}
		b3.ApplyPaymentDates(own, sup)
		for k, i := range cashOf[co] {
			a.u.CashActions[i].PaymentDate = own[k].PaymentDate
		}
		if sup.Common >= 0 && sup.Preferred >= 0 && !shareSeen[co+a.asOf.String()] {
			shareSeen[co+a.asOf.String()] = true
			// B3 gives no treasury shares: when the CVM's latest capital
			// composition has the same shares, that one (with its treasury
			// shares) stays in effect; else B3's counts, whole.
			if cv, ok := latestShares(a.u.Shares, co, a.asOf); ok && cv.Common == sup.Common && cv.Preferred == sup.Preferred {
				a.rep.SharesKeptCVM++
			} else {
				a.u.Shares = append(a.u.Shares, engine.SharesPoint{CompanyID: co, Date: a.asOf, Common: sup.Common, Preferred: sup.Preferred})
				a.rep.SharesNoTreasury = append(a.rep.SharesNoTreasury, sup.Symbol)
			}
		}
		for label, n := range sup.UnknownLabels {
			if a.rep.UnknownShareLabels == nil {
				a.rep.UnknownShareLabels = map[string]int{}
			}
			a.rep.UnknownShareLabels[label] += n
		}
		for _, sa := range sup.ShareActions {
			s, ok := byISIN[sa.ISIN]
			if !ok || s.CompanyID != co {
				a.rep.notef("%s: share action on %s skipped (ISIN not quoted)", f, sa.ISIN)
				continue
			}
			sa.CompanyID, sa.Ticker = co, s.Ticker
			// Each leg's ticker is that of its ISIN among the quotes (a
			// received asset may be another company's); "" when the asset
			// has no quotes (the engine then finds no price for it).
			unquoted := 0
			for k := range sa.Legs {
				if ls, ok := byISIN[sa.Legs[k].ISIN]; ok {
					sa.Legs[k].Ticker = ls.Ticker
				} else {
					unquoted++
				}
			}
			key := strings.Join([]string{sa.CompanyID, sa.Ticker, sa.ISIN, sa.IssuedISIN, sa.Type, sa.PriorExDate.String()}, "\x00")
			terms := fmt.Sprint(float64(sa.Factor), sa.Legs)
			if prev, dup := actSeen[key]; dup {
				if prev != terms {
					a.rep.notef("%s: %s of %s on %s given again with other terms (factor or legs); the first kept", f, sa.Type, sa.Ticker, sa.PriorExDate)
				}
				continue
			}
			actSeen[key] = terms
			a.rep.UnquotedLegs += unquoted
			a.u.ShareActions = append(a.u.ShareActions, sa)
		}
	}
	return nil
}

// latestShares returns the latest share count of company id dated on or
// before day d.
func latestShares(ps []engine.SharesPoint, id string, d engine.Date) (engine.SharesPoint, bool) {
	var best engine.SharesPoint
	found := false
	for _, p := range ps {
		if p.CompanyID == id && p.Date <= d && (!found || p.Date > best.Date) {
			best, found = p, true
		}
	}
	return best, found
}
