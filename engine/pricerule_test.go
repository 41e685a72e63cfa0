package engine_test

import (
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestParsePriceRule: a rule reads back from the variables it writes,
// whatever the indicator's id, and nothing else reads as a rule: another
// kind, the other class split, a variable renamed or left out.
func TestParsePriceRule(t *testing.T) {
	for _, r := range []engine.PriceRule{
		{Form: engine.PriceToItem, Item: "NET_INCOME"},
		{Form: engine.ItemToPrice, Item: "EQUITY"},
		{Form: engine.CashToPrice},
		{Form: engine.MarketCapSum},
		{Form: engine.EVSum},
		{Form: engine.EVToItem, Item: "EBIT"},
	} {
		ind := engine.Indicator{ID: "ANY_ID", Kind: engine.IndValuation, Variables: r.Variables(), ByClass: r.ByClass()}
		if got := engine.ParsePriceRule(&ind); got != r {
			t.Errorf("%v: read back as %v from %v", r, got, ind.Variables)
		}
		misses := map[string]engine.Indicator{
			"fundamental": {Kind: engine.IndFundamental, Variables: ind.Variables, ByClass: ind.ByClass},
			"class split": {Kind: engine.IndValuation, Variables: ind.Variables, ByClass: !ind.ByClass},
			"one fewer":   {Kind: engine.IndValuation, Variables: ind.Variables[1:], ByClass: ind.ByClass},
			"one more":    {Kind: engine.IndValuation, Variables: append(slices.Clone(ind.Variables), "EXTRA"), ByClass: ind.ByClass},
			"renamed":     {Kind: engine.IndValuation, Variables: rename(ind.Variables, func(v string) bool { return v != r.Item }, "OTHER"), ByClass: ind.ByClass},
		}
		if r.Item != "" {
			misses["item unnamed"] = engine.Indicator{Kind: engine.IndValuation, Variables: rename(ind.Variables, func(v string) bool { return v == r.Item }, ""), ByClass: ind.ByClass}
		}
		for name, m := range misses {
			if got := engine.ParsePriceRule(&m); got.Priced() {
				t.Errorf("%v, %s (%v): read as %v", r, name, m.Variables, got)
			}
		}
	}
}

// rename returns a copy of vs with its first variable for which is
// holds renamed to to.
func rename(vs []string, is func(string) bool, to string) []string {
	out := slices.Clone(vs)
	if i := slices.IndexFunc(out, is); i >= 0 {
		out[i] = to
	}
	return out
}

// TestPriceRulesEveryPath: every catalog entry with a price rule is
// priced by each of the three paths that read the rule, on the
// hand-built market (for a by-class rule, C1's preferred class, which has
// a distribution): the derivation makes a point with a value at the last
// session; the screener reprices it (at the build's closes to the stored
// bits, at new closes to another value); the valuation at the last
// session as of an instant after its close, and the valuation on the
// last session from everything the Dataset holds, are the derivation's
// point, bit for bit. Every VALUATION entry has a rule. A new valuation ratio is one
// catalog entry: this test fails if any path cannot price it.
func TestPriceRulesEveryPath(t *testing.T) {
	ds := derivedDataset(t, handMarket())
	s := ds.Screener()
	last := ds.LastSession()
	is, ok := ds.Issuer("C1")
	row := slices.IndexFunc(s.Assets, func(a *engine.Asset) bool { return a.Ticker == "CAAA4" })
	if !ok || row < 0 {
		t.Fatal("no C1 or no CAAA4 row")
	}
	same := s.Priced(func(a *engine.Asset) engine.Quote { return a.Latest })
	moved := s.Priced(quotesAt(pday("2024-04-01"), map[string]float64{"CAAA3": 20, "CAAA4": 16, "CAAA11": 50}, nil))
	sv := ds.SessionValuationAt(is, engine.SessionClose(last).Add(time.Hour))
	if sv == nil || sv.Session != last {
		t.Fatalf("as_of: no valuation at the last session %v: %+v", last, sv)
	}
	on := ds.SessionValuationOn(is, last, nil)
	if on == nil || on.Session != last {
		t.Fatalf("on: no valuation at the last session %v: %+v", last, on)
	}
	// Priced at the session's quotes instead of its bars: the same; at
	// other closes, other values.
	quoted := ds.SessionValuationOn(is, last, func(tk string) engine.Num {
		a, ok := ds.Asset(tk)
		if !ok {
			return engine.Null
		}
		return a.Latest.Close
	})
	doubled := ds.SessionValuationOn(is, last, func(tk string) engine.Num {
		a, ok := ds.Asset(tk)
		if !ok {
			return engine.Null
		}
		return 2 * a.Latest.Close
	})
	if quoted == nil || doubled == nil {
		t.Fatalf("on, priced at quotes: %+v, %+v", quoted, doubled)
	}
	priced := 0
	for k, ind := range ds.Catalog() {
		rule := ds.PriceRule(k)
		if ind.Kind == engine.IndValuation && !rule.Priced() {
			t.Errorf("%s: a VALUATION indicator without a price rule", ind.ID)
		}
		if !rule.Priced() {
			continue
		}
		priced++
		t.Run(ind.ID, func(t *testing.T) {
			class := ""
			if rule.ByClass() {
				class = engine.ClassPS
			}
			g := is.RatioGroup(uint16(k), class, engine.FreqTTM)
			if g == nil || len(g.Points) == 0 {
				t.Fatalf("derivation: no TTM point of class %q", class)
			}
			p := &g.Points[len(g.Points)-1]
			if p.ReferenceDate != last || !p.Value.Valid() {
				t.Errorf("derivation: last point %v = %v, want a value at %v", p.ReferenceDate, p.Value, last)
			}
			stored := s.Ratios[k][row]
			if !s.PriceDerived(k) {
				t.Error("screener: not repriced")
			}
			if got := same.Ratios[k][row]; !sameBits(got, stored) {
				t.Errorf("screener: at the build's closes %v, stored %v", got, stored)
			}
			if got := moved.Ratios[k][row]; !got.Valid() || sameBits(got, stored) {
				t.Errorf("screener: at new closes %v, stored %v", got, stored)
			}
			if sp, _ := sv.Point(uint16(k), class); sp == nil || !sameBits(sp.Value, p.Value) {
				t.Errorf("as_of: %+v, derivation %v", sp, p.Value)
			}
			if sp, _ := on.Point(uint16(k), class); sp == nil || !sameBits(sp.Value, p.Value) || sp.ReferenceDate != p.ReferenceDate ||
				sp.PublishDate != p.PublishDate || sp.RetrievalDate != p.RetrievalDate {
				t.Errorf("on: %+v, derivation %+v", sp, p)
			}
			if sp, _ := quoted.Point(uint16(k), class); sp == nil || !sameBits(sp.Value, p.Value) {
				t.Errorf("on, at the quotes: %+v, derivation %v", sp, p.Value)
			}
			if sp, _ := doubled.Point(uint16(k), class); sp == nil || !sp.Value.Valid() || sameBits(sp.Value, p.Value) {
				t.Errorf("on, at twice the quotes: %+v, derivation %v", sp, p.Value)
			}
		})
	}
	if priced == 0 {
		t.Error("no catalog entry has a price rule")
	}
}
