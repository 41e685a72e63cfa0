package engine

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestSelectRatioPoints(t *testing.T) {
	day := func(i int) Date { return MakeDate(2024, 3, 31) + Date(i) }
	ts := func(h int) time.Time { return time.Date(2024, 5, 1, h, 0, 0, 0, time.UTC) }
	// A series: reference dates ascending, then publication ascending.
	type pt struct {
		ref      Date
		pub, ret int // hours after ts(0)
	}
	series := []pt{
		{day(0), 1, 1},   // 0
		{day(0), 3, 3},   // 1: re-filed
		{day(0), 5, 2},   // 2: re-filed again, retrieved earlier
		{day(91), 2, 2},  // 3
		{day(182), 4, 4}, // 4
		{day(182), 6, 6}, // 5
	}
	for _, tc := range []struct {
		name string
		f    RatioFilter
		want []int
	}{
		{"every point", RatioFilter{Reference: NoDate}, []int{0, 1, 2, 3, 4, 5}},
		{"reference date", RatioFilter{Reference: day(0)}, []int{0, 1, 2}},
		{"unknown reference date", RatioFilter{Reference: day(1)}, nil},
		{"zero date is a date", RatioFilter{}, nil},
		{"published strictly after", RatioFilter{Reference: NoDate, PublishedAfter: ts(3)}, []int{2, 4, 5}},
		{"retrieved strictly after", RatioFilter{Reference: NoDate, RetrievedAfter: ts(2)}, []int{1, 4, 5}},
		{"latest by reference date", RatioFilter{Reference: NoDate, LatestByReference: true}, []int{2, 3, 5}},
		{"latest of the kept points", RatioFilter{Reference: NoDate, RetrievedAfter: ts(2), LatestByReference: true}, []int{1, 5}},
		{"latest after a publish date", RatioFilter{Reference: NoDate, PublishedAfter: ts(1), LatestByReference: true}, []int{2, 3, 5}},
		{"latest of one reference date", RatioFilter{Reference: day(182), LatestByReference: true}, []int{5}},
		{"latest, nothing kept", RatioFilter{Reference: NoDate, PublishedAfter: ts(6), LatestByReference: true}, nil},
		{"every condition", RatioFilter{Reference: day(0), PublishedAfter: ts(1), RetrievedAfter: ts(1), LatestByReference: true}, []int{2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := make([]RatioPoint, len(series))
			fs := make([]FundRatioPoint, len(series))
			for i, p := range series {
				rs[i] = RatioPoint{ReferenceDate: p.ref, PublishDate: StampOf(ts(p.pub)), RetrievalDate: StampOf(ts(p.ret))}
				fs[i] = FundRatioPoint{ReferenceDate: p.ref, PublishDate: StampOf(ts(p.pub)), RetrievalDate: StampOf(ts(p.ret))}
			}
			if got := slices.Collect(SelectRatioPoints(rs, &tc.f)); !slices.Equal(got, tc.want) {
				t.Errorf("company points: %v, want %v", got, tc.want)
			}
			if got := slices.Collect(SelectRatioPoints(fs, &tc.f)); !slices.Equal(got, tc.want) {
				t.Errorf("fund points: %v, want %v", got, tc.want)
			}
			// Stopping early yields a prefix.
			for stop := range tc.want {
				var got []int
				for i := range SelectRatioPoints(rs, &tc.f) {
					got = append(got, i)
					if len(got) == stop+1 {
						break
					}
				}
				if !slices.Equal(got, tc.want[:stop+1]) {
					t.Errorf("stopped after %d: %v", stop+1, got)
				}
			}
			sum := 0
			if n := testing.AllocsPerRun(100, func() {
				for i := range SelectRatioPoints(rs, &tc.f) {
					sum += i
				}
			}); n > 0 {
				t.Errorf("allocates %v times", n)
			}
		})
	}
	for range SelectRatioPoints([]RatioPoint(nil), &RatioFilter{Reference: NoDate, LatestByReference: true}) {
		t.Error("a point of the empty series")
	}
}

// TestSelectRatioPointsRandom compares SelectRatioPoints with the
// definition, point by point, on random sorted series: a point is kept
// when it passes the conditions and, with LatestByReference, no later
// point of its reference date passes them.
func TestSelectRatioPointsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	hour := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
	for iter := 0; iter < 2000; iter++ {
		ps := make([]RatioPoint, r.IntN(12))
		for i := range ps {
			ps[i] = RatioPoint{ReferenceDate: Date(r.IntN(4)), PublishDate: StampOf(hour(r.IntN(8))), RetrievalDate: StampOf(hour(r.IntN(8)))}
		}
		SortRatioPoints(ps)
		f := RatioFilter{Reference: NoDate, LatestByReference: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			f.Reference = Date(r.IntN(4))
		}
		if r.IntN(2) == 0 {
			f.PublishedAfter = hour(r.IntN(8))
		}
		if r.IntN(2) == 0 {
			f.RetrievedAfter = hour(r.IntN(8))
		}
		passes := func(p *RatioPoint) bool {
			return (!f.Reference.Valid() || p.ReferenceDate == f.Reference) &&
				(f.PublishedAfter.IsZero() || p.PublishDate.Time().After(f.PublishedAfter)) &&
				(f.RetrievedAfter.IsZero() || p.RetrievalDate.Time().After(f.RetrievedAfter))
		}
		var want []int
		for i := range ps {
			if !passes(&ps[i]) {
				continue
			}
			later := false
			for j := i + 1; f.LatestByReference && j < len(ps) && ps[j].ReferenceDate == ps[i].ReferenceDate; j++ {
				later = later || passes(&ps[j])
			}
			if !later {
				want = append(want, i)
			}
		}
		if got := slices.Collect(SelectRatioPoints(ps, &f)); !slices.Equal(got, want) {
			t.Fatalf("filter %+v on %+v: %v, want %v", f, ps, got, want)
		}
	}
}
