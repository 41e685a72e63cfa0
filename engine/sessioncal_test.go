package engine

import (
	"fmt"
	"testing"
)

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

// withSummaries returns a copy of u whose histories carry their
// summaries, as a format 6 load gives them.
func withSummaries(u *Universe) *Universe {
	v := *u
	v.Daily = append([]Series(nil), u.Daily...)
	for i := range v.Daily {
		if sm, ok := SummarizeDaily(NewDailyBars(&v.Daily[i])); ok {
			v.Daily[i].SetSummary(sm)
		}
	}
	v.Intraday = append([]Intraday(nil), u.Intraday...)
	for i := range v.Intraday {
		if sm, ok := SummarizeIntraday(&v.Intraday[i]); ok {
			v.Intraday[i].SetSummary(sm)
		}
	}
	return &v
}

// With summaries, the session before a date near the end is answered
// without the calendar, the same as with it, and older dates make it;
// the latest quotes and the quotes before every date are those made
// from the bars.
func TestSessionCalFromSummaries(t *testing.T) {
	for _, u := range []*Universe{testUniverse(t), trEdgeUniverse()} {
		plain, ds := mustBuild(t, u), mustBuild(t, withSummaries(u))
		lo, hi := NoDate, NoDate
		for _, a := range ds.assets {
			if n := a.Daily.Len(); n > 0 {
				if !lo.Valid() || a.Daily.Dates[0] < lo {
					lo = a.Daily.Dates[0]
				}
				hi = max(hi, a.Daily.Dates[n-1])
			}
		}
		c := &sessionCal{assets: ds.assets, sums: true}
		for d := hi + 3; d >= lo-3; d-- { // newest first: the calendar is made last
			if got, want := c.before(d), sessionBefore(plain.assets, d); got != want {
				t.Fatalf("before %s: %s from the summaries, %s from the dates", d, got, want)
			}
			if d == hi && c.made.Load() {
				t.Fatalf("calendar made for the newest session")
			}
		}
		if !c.made.Load() {
			t.Fatal("calendar never made for old dates")
		}
		for i := range ds.assets {
			a, b := &plain.assets[i], &ds.assets[i]
			if fmt.Sprintf("%+v", a.Latest) != fmt.Sprintf("%+v", b.Latest) {
				t.Errorf("%s: latest %+v from the summaries, %+v from the bars", a.Ticker, b.Latest, a.Latest)
			}
			for d := lo - 1; d <= hi+1; d++ {
				x, y := a.QuoteBefore(d), b.QuoteBefore(d)
				if fmt.Sprintf("%+v", x) != fmt.Sprintf("%+v", y) {
					t.Fatalf("%s: quote before %s: %+v from the summaries, %+v from the bars", a.Ticker, d, y, x)
				}
			}
		}
	}
}

// QuoteBeforeReadsNoBar tells the days whose QuoteBefore the summary
// answers (after the second-last bar, or up to the first: no bar before
// it) from the older ones, which read the bars; a history without a
// summary (held in the heap) reads none.
func TestQuoteBeforeReadsNoBar(t *testing.T) {
	u := benchUniverse(t, 2, 50)
	for _, sums := range []bool{false, true} {
		v := u
		if sums {
			v = withSummaries(u)
		}
		ds := mustBuild(t, v)
		n := 0
		for i := range ds.Assets() {
			a := &ds.Assets()[i]
			k := a.Daily.Len()
			if k < 4 {
				continue
			}
			n++
			last, prev, before := a.Daily.Dates[k-1], a.Daily.Dates[k-2], a.Daily.Dates[k-3]
			for _, c := range []struct {
				d    Date
				want bool
			}{{last + 5, true}, {last, true}, {prev + 1, true}, {prev, false}, {before, false}, {a.Daily.Dates[1], false}, {a.Daily.Dates[0], true}} {
				want := c.want || !sums
				if got := a.QuoteBeforeReadsNoBar(c.d); got != want {
					t.Errorf("summaries %v, %s before %s: %v, want %v", sums, a.Ticker, c.d, got, want)
				}
			}
		}
		if n == 0 {
			t.Fatal("no asset with four bars")
		}
	}
}
