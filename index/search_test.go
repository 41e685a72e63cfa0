package index

import (
	"math/rand/v2"
	"sort"
	"testing"
)

type day int32

func TestSearch(t *testing.T) {
	s := []day{10, 20, 30, 40}
	for _, tc := range []struct {
		v              day
		ge, gt, le, lt int
	}{
		{5, 0, 0, -1, -1},
		{10, 0, 1, 0, -1},
		{15, 1, 1, 0, 0},
		{20, 1, 2, 1, 0},
		{40, 3, 4, 3, 2},
		{45, 4, 4, 3, 3},
	} {
		if got := FirstGE(s, tc.v); got != tc.ge {
			t.Errorf("FirstGE(%d) = %d, want %d", tc.v, got, tc.ge)
		}
		if got := FirstGT(s, tc.v); got != tc.gt {
			t.Errorf("FirstGT(%d) = %d, want %d", tc.v, got, tc.gt)
		}
		if got := LastLE(s, tc.v); got != tc.le {
			t.Errorf("LastLE(%d) = %d, want %d", tc.v, got, tc.le)
		}
		if got := LastLT(s, tc.v); got != tc.lt {
			t.Errorf("LastLT(%d) = %d, want %d", tc.v, got, tc.lt)
		}
	}
	if FirstGE([]int64(nil), 3) != 0 || LastLE([]int64(nil), 3) != -1 {
		t.Error("empty slice")
	}
}

func TestSpan(t *testing.T) {
	s := []day{10, 20, 30, 40}
	for _, tc := range []struct {
		from, to day
		lo, hi   int
	}{
		{0, 100, 0, 4},
		{10, 40, 0, 4},
		{11, 39, 1, 3},
		{20, 20, 1, 2},
		{21, 29, 2, 2},
		{50, 60, 4, 4},
		{0, 5, 0, 0},
		{30, 20, 0, 0},
	} {
		lo, hi := Span(s, tc.from, tc.to)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("Span(%d,%d) = %d,%d want %d,%d", tc.from, tc.to, lo, hi, tc.lo, tc.hi)
		}
	}
}

func TestSearchMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 50; n++ {
		s := make([]int64, n)
		for i := range s {
			s[i] = r.Int64N(100)
		}
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		for v := int64(-1); v <= 101; v++ {
			if got, want := FirstGE(s, v), sort.Search(len(s), func(i int) bool { return s[i] >= v }); got != want {
				t.Fatalf("FirstGE(%v,%d)=%d want %d", s, v, got, want)
			}
			if got, want := FirstGT(s, v), sort.Search(len(s), func(i int) bool { return s[i] > v }); got != want {
				t.Fatalf("FirstGT(%v,%d)=%d want %d", s, v, got, want)
			}
		}
	}
}

func TestIsSorted(t *testing.T) {
	for _, tc := range []struct {
		s    []day
		want bool
	}{
		{nil, true}, {[]day{1}, true}, {[]day{1, 2, 3}, true}, {[]day{1, 1}, false}, {[]day{2, 1}, false},
	} {
		if got := IsSorted(tc.s); got != tc.want {
			t.Errorf("IsSorted(%v) = %v", tc.s, got)
		}
	}
}

func TestSearchZeroAlloc(t *testing.T) {
	s := make([]day, 6000)
	for i := range s {
		s[i] = day(i * 2)
	}
	if n := testing.AllocsPerRun(100, func() {
		sinkInt += FirstGE(s, 4001) + LastLE(s, 4001)
		lo, hi := Span(s, 100, 200)
		sinkInt += lo + hi
	}); n > 0 {
		t.Errorf("search allocates %v", n)
	}
}

func BenchmarkLastLE(b *testing.B) {
	s := make([]day, 6500) // ~26 years of sessions
	for i := range s {
		s[i] = day(i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sinkInt += LastLE(s, day(i%7000))
	}
}
