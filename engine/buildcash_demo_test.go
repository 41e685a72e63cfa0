package engine_test

import (
	"slices"
	"testing"

	"github.com/pregao/pregao/engine"
)

// On the demo, the cash steps that run beside each other (the issuers'
// cash lists and the total return's ex-cash) make what a serial Build
// makes; rows in the engine's order built with CashSorted make what the
// demo's order makes; and without CashSorted rows out of that order are
// sorted (a bundle's, a format 5 snapshot's), while with it they are
// kept: the option skips the check.
func TestBuildCashDemo(t *testing.T) {
	u := demoUniverse()
	byRows := func(x, y engine.CashAction) int { return engine.CompareCashRows(&x, &y) }
	if slices.IsSortedFunc(u.CashActions, byRows) {
		t.Fatal("the demo's cash actions are in the engine's order already: the test proves nothing")
	}
	build := func(u *engine.Universe, opt engine.BuildOptions) *engine.Dataset {
		t.Helper()
		ds, err := engine.BuildWith(u, opt)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	serial := build(u, engine.BuildOptions{Serial: true})
	for _, opt := range []engine.BuildOptions{{}, {OrderChecked: true, RatiosChecked: true}} {
		ds := build(u, opt)
		if !slices.IsSortedFunc(ds.CashActions(), func(x, y engine.CashEvent) int { return engine.CompareCashRows(x.CashAction, y.CashAction) }) {
			t.Fatalf("%+v: rows out of order not sorted", opt)
		}
		engine.SameBuild(t, serial, ds)
	}

	sorted := *u
	sorted.CashActions = slices.Clone(u.CashActions)
	slices.SortStableFunc(sorted.CashActions, byRows)
	for _, opt := range []engine.BuildOptions{{CashSorted: true}, {CashSorted: true, Serial: true}} {
		engine.SameBuild(t, serial, build(&sorted, opt))
	}

	kept := build(u, engine.BuildOptions{CashSorted: true})
	for i := range kept.CashActions() {
		if kept.CashActions()[i].CashAction != &u.CashActions[i] {
			t.Fatalf("CashSorted: row %d is not the universe's row %d", i, i)
		}
	}
}
