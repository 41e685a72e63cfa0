package engine

import "testing"

// Build ranks the latest quotes without the market calendar, made on a
// ranking's first use; the session before any date is the same either
// way.
func TestSessionCalLazy(t *testing.T) {
	for _, u := range []*Universe{testUniverse(t), trEdgeUniverse()} {
		ds := mustBuild(t, u)
		for i := range ds.indexes {
			if c := ds.indexes[i].cal; c == nil || c.cal != nil {
				t.Fatalf("index %d: calendar %v made at build", i, c)
			}
		}
		lo, hi := NoDate, NoDate
		for _, a := range ds.assets {
			if n := a.Daily.Len(); n > 0 {
				if !lo.Valid() || a.Daily.Dates[0] < lo {
					lo = a.Daily.Dates[0]
				}
				hi = max(hi, a.Daily.Dates[n-1])
			}
		}
		if !lo.Valid() {
			t.Fatal("no daily bars")
		}
		c := &sessionCal{assets: ds.assets}
		for d := lo - 3; d <= hi+3; d++ {
			if got, want := sessionBefore(ds.assets, d), c.before(d); got != want {
				t.Fatalf("before %s: %s without the calendar, %s with it", d, got, want)
			}
		}
		if len(c.cal) == 0 {
			t.Fatal("no calendar made on use")
		}
	}
}
