package engine

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"runtime/metrics"
	"testing"
)

// goroutinesCreated counts the goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A serial build starts no goroutine (a reload on a low-priority thread
// must not hand work to threads that compete with requests) and builds
// the same Dataset as the default one.
func TestBuildSerial(t *testing.T) {
	u := testUniverse(t)
	runtime.GC() // the collector's workers exist before counting
	n0 := goroutinesCreated()
	serial, err := BuildWith(u, BuildOptions{Serial: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := goroutinesCreated() - n0; n != 0 {
		t.Errorf("serial build started %d goroutines", n)
	}
	n0 = goroutinesCreated()
	def, err := Build(u)
	if err != nil {
		t.Fatal(err)
	}
	if goroutinesCreated() == n0 {
		t.Error("the default build started no goroutine: the count above proves nothing")
	}
	sameBuild(t, serial, def)
	if _, err := BuildWith(nil, BuildOptions{Serial: true}); err == nil {
		t.Error("serial build of a nil universe: no error")
	}
}

// same reports whether a and b hold the same values, a null (NaN)
// equal to a null: their Go-syntax forms match.
func same(a, b any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// sameBuild compares what Build's concurrent steps make (cash lists,
// ratio series, daily bars, screener columns) in two Datasets of one
// Universe. (A whole-Dataset reflect.DeepEqual cannot: the indexes hold
// functions.)
func sameBuild(t *testing.T, x, y *Dataset) {
	t.Helper()
	if len(x.cash) != len(y.cash) || !reflect.DeepEqual(x.cashByPay, y.cashByPay) {
		t.Fatalf("cash: %d and %d events, or their payment order differs", len(x.cash), len(y.cash))
	}
	// (Two Datasets of one Universe share their rows; of two Universes
	// holding the rows in other orders, their values are compared.)
	sameRow := func(a, b *CashAction) bool { return a == b || reflect.DeepEqual(*a, *b) }
	for i := range x.cash {
		a, b := x.cash[i], y.cash[i]
		if !sameRow(a.CashAction, b.CashAction) || a.Issuer.ID != b.Issuer.ID || math.Float64bits(float64(a.Factor)) != math.Float64bits(float64(b.Factor)) ||
			a.Current != b.Current || a.superseded != b.superseded || a.supersededAt != b.supersededAt || a.asset != b.asset {
			t.Errorf("cash event %d differs", i)
		}
	}
	// The total return's ex-cash, made beside the cash lists.
	if !same(x.exCash, y.exCash) || !reflect.DeepEqual(x.exCashAt, y.exCashAt) || len(x.trMarks) != len(y.trMarks) {
		t.Errorf("ex-cash: %d and %d sums, or their positions or marks differ", len(x.exCash), len(y.exCash))
	}
	if len(x.issuers) != len(y.issuers) {
		t.Fatalf("%d and %d issuers", len(x.issuers), len(y.issuers))
	}
	for i := range x.issuers {
		a, b := &x.issuers[i], &y.issuers[i]
		if !same(a.Ratios(), b.Ratios()) || !same(a.FundRatios(), b.FundRatios()) || len(a.CashActions()) != len(b.CashActions()) {
			t.Errorf("issuer %s: ratio series or cash list differ", a.ID)
			continue
		}
		for j := range a.CashActions() {
			if !sameRow(a.CashActions()[j].CashAction, b.CashActions()[j].CashAction) {
				t.Errorf("issuer %s: cash list differs at %d", a.ID, j)
			}
		}
	}
	for i := range x.assets {
		dx, dy := x.assets[i].Daily, y.assets[i].Daily
		if dx != nil && dy != nil && dx.wide != nil && dy.wide != nil && same(*dx.wide, *dy.wide) {
			// A series that does not fit the compact form is each Build's
			// own copy: compared by value.
			cx, cy := *dx, *dy
			cx.wide, cy.wide = nil, nil
			dx, dy = &cx, &cy
		}
		if !same(dx, dy) {
			t.Errorf("asset %s: daily bars differ", x.assets[i].Ticker)
		}
	}
	sx, sy := x.Screener(), y.Screener()
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"Close", sx.Close, sy.Close}, {"Volume", sx.Volume, sy.Volume}, {"Employees", sx.Employees, sy.Employees},
		{"LiquidityRank", sx.LiquidityRank, sy.LiquidityRank}, {"Primary", sx.Primary, sy.Primary},
		{"SectorID", sx.SectorID, sy.SectorID}, {"Ratios", sx.Ratios, sy.Ratios},
		{"RatioPublished", sx.RatioPublished, sy.RatioPublished}, {"ByVolume", sx.ByVolume, sy.ByVolume},
	} {
		if !same(c.a, c.b) {
			t.Errorf("screener column %s differs", c.name)
		}
	}
	if len(sx.Assets) == 0 || len(sx.Assets) != len(sy.Assets) {
		t.Fatalf("screener rows: %d and %d", len(sx.Assets), len(sy.Assets))
	}
	for r := range sx.Assets {
		if sx.Assets[r].Ticker != sy.Assets[r].Ticker || sx.Issuers[r].ID != sy.Issuers[r].ID {
			t.Errorf("screener row %d differs", r)
		}
	}
}
