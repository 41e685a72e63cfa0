package engine

import (
	"cmp"
	"slices"
	"testing"
)

// universeOrderScan is how cashAt ordered a company's splits before
// Build kept their positions: by a scan of every share action of the
// Universe. The reference of checkShareActionOrder.
func universeOrderScan(d *Dataset, ss []*ShareAction) {
	pos := make(map[*ShareAction]int, len(ss))
	for _, s := range ss {
		pos[s] = -1
	}
	for i := range d.u.ShareActions {
		if _, ok := pos[&d.u.ShareActions[i]]; ok {
			pos[&d.u.ShareActions[i]] = i
		}
	}
	slices.SortFunc(ss, func(a, b *ShareAction) int { return cmp.Compare(pos[a], pos[b]) })
}

// checkShareActionOrder checks that each issuer's shareActionAt is the
// position of its share actions in the Universe, and that ordering them
// by it (as cashAt does) is the order of universeOrderScan. It returns
// how many issuers list their share actions in another order than the
// Universe's (the cases where the order is not the list's own).
func checkShareActionOrder(tb testing.TB, d *Dataset) (reordered int) {
	tb.Helper()
	for i := range d.issuers {
		is := &d.issuers[i]
		if len(is.shareActionAt) != len(is.ShareActions) {
			tb.Fatalf("%s: %d positions for %d share actions", is.ID, len(is.shareActionAt), len(is.ShareActions))
		}
		var got []split
		for k, s := range is.ShareActions {
			if at := is.shareActionAt[k]; &d.u.ShareActions[at] != s {
				tb.Fatalf("%s: share action %d is not the Universe's %d", is.ID, k, at)
			}
			got = append(got, split{is.shareActionAt[k], s})
		}
		slices.SortFunc(got, func(x, y split) int { return cmp.Compare(x.at, y.at) })
		want := slices.Clone(is.ShareActions)
		universeOrderScan(d, want)
		if !slices.Equal(want, is.ShareActions) {
			reordered++
		}
		for k := range want {
			if got[k].s != want[k] {
				tb.Fatalf("%s: split %d: %+v, want %+v", is.ID, k, *got[k].s, *want[k])
			}
		}
	}
	return reordered
}

// Splits of one date, ISIN and type (ties of the issuer's list order)
// listed among others out of date order: their order by the positions
// Build keeps is the Universe's.
func TestShareActionUniverseOrder(t *testing.T) {
	u := testUniverse(t)
	split := func(day int, f Num) ShareAction {
		return ShareAction{CompanyID: petroID, Ticker: "PETR4", ISIN: "BRPETRACNPR6", PriorExDate: d(day), Type: ActStockSplit, Factor: f}
	}
	u.ShareActions = slices.Insert(u.ShareActions, 1, split(4, 3), split(1, 7))
	u.ShareActions = append(u.ShareActions, split(4, 2), split(0, 5), split(4, 11))
	ds := mustBuild(t, u)
	if n := checkShareActionOrder(t, ds); n == 0 {
		t.Fatal("no issuer lists its share actions out of the Universe's order: the fixture tests nothing")
	}
}
