package snapshot

import (
	"slices"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/pregao/pregao/engine"
)

// Items of a part citing equal source lists share one decoded slice;
// different lists, nil and empty ones stay what they were, and a shared
// list's capacity is its length (an append never reaches another list).
func TestSourcesShared(t *testing.T) {
	u := synthUniverse(1, 2, 0, 0, 40)
	doc := func(i int) engine.Source {
		at := t0.Add(-time.Duration(i) * time.Hour)
		return engine.Source{VisualizationURL: engine.URLOf("https://example.invalid/doc/" + string(rune('a'+i))), DownloadURL: engine.URLOf("https://example.invalid/dl"), PublishedAt: at, RetrievedAt: t0, Name: "ITR"}
	}
	same := func(a, b []engine.Source) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }
	lists := [][]engine.Source{{doc(0)}, {doc(1)}, {doc(0), doc(1)}, nil, {}, {doc(2)}}
	for i := range u.Reports {
		// Equal lists are separate slices in the universe written, two
		// by two next to each other, and again further on.
		u.Reports[i].Sources = engine.SourcesOf(slices.Clone(lists[i/2%len(lists)]))
	}
	u.Derived.FundRatios, u.Derived.FundSources = nil, nil
	for i := range 12 {
		addFundPoint(&u.Derived, engine.FundRatioPoint{FundID: engine.Intern("1"), Indicator: uint16(i % 2), Frequency: engine.FrequencyMonthly,
			ReferenceDate: d0 - engine.Date(i%3), PublishDate: engine.StampOf(t0)}, slices.Clone(lists[i%3]))
	}
	b := mustWrite(t, u, WriteOptions{})
	// When every list hashes alike, each is still decoded as written: the
	// first list keeps the key, equal ones share it, the others are their
	// own.
	defer func(h func([]byte) uint64) { sourceHash = h }(sourceHash)
	sourceHash = func([]byte) uint64 { return 7 }
	got, _ := mustDecode(t, b)
	if d := diff(u, got); d != "" {
		t.Fatalf("all lists colliding: round trip differs at %s", d)
	}
	if r := got.Reports; !same(r[0].Sources.All(), r[12].Sources.All()) || same(r[2].Sources.All(), r[14].Sources.All()) || !same(r[2].Sources.All(), r[3].Sources.All()) {
		t.Errorf("all lists colliding: reports 0/12 shared %v (want true), 2/14 shared %v (want false), 2/3 shared %v (want true)",
			same(r[0].Sources.All(), r[12].Sources.All()), same(r[2].Sources.All(), r[14].Sources.All()), same(r[2].Sources.All(), r[3].Sources.All()))
	}
	sourceHash = xxhash.Sum64
	got, _ = mustDecode(t, b)
	if d := diff(u, got); d != "" {
		t.Fatalf("round trip differs at %s", d)
	}
	check := func(kind string, n int, src func(i int) []engine.Source, list func(i int) int) {
		t.Helper()
		for i := 0; i < n; i++ {
			s := src(i)
			if cap(s) != len(s) {
				t.Errorf("%s %d: cap %d, len %d", kind, i, cap(s), len(s))
			}
			if (s == nil) != (lists[list(i)] == nil) {
				t.Errorf("%s %d: nil %v, want nil %v", kind, i, s == nil, lists[list(i)] == nil)
			}
			for j := 0; j < i; j++ {
				if want := list(i) == list(j); same(s, src(j)) != want && len(s) > 0 {
					t.Errorf("%s %d and %d: shared %v, want %v", kind, i, j, !want, want)
				}
			}
		}
	}
	check("report", len(got.Reports), func(i int) []engine.Source { return got.Reports[i].Sources.All() }, func(i int) int { return i / 2 % len(lists) })
	check("fund ratio", len(got.Derived.FundRatios), func(i int) []engine.Source { return got.Derived.FundSourcesOf(&got.Derived.FundRatios[i]) }, func(i int) int { return i % 3 })
}

// Times are written as deltas from the time read before them, so two
// lists of equal bytes may hold different times (each list's times move
// with the item's own): such lists are decoded, not shared, and what
// follows them reads as written.
func TestSourcesSharedTimes(t *testing.T) {
	u := synthUniverse(1, 2, 0, 0, 0)
	u.Derived.FundRatios, u.Derived.FundSources = nil, nil
	for i := range 4 {
		at := t0.Add(time.Duration(10*i) * time.Hour)
		addFundPoint(&u.Derived, engine.FundRatioPoint{FundID: engine.Intern("1"), Frequency: engine.FrequencyMonthly,
			ReferenceDate: d0 - engine.Date(i), PublishDate: engine.StampOf(at)},
			[]engine.Source{{VisualizationURL: engine.URLOf("https://example.invalid/doc"), PublishedAt: at.Add(time.Hour), RetrievedAt: at.Add(2 * time.Hour), Name: "informe"}})
	}
	got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{}))
	if d := diff(u, got); d != "" {
		t.Fatalf("round trip differs at %s", d)
	}
}

// A fund ratio point's list equal to the sources of a report of its fund
// and reference date is that report's slice after a load (the list the
// fund ratios part decoded is dropped); a list equal to no report's
// stays as decoded, and answers the same.
func TestFundSourcesShareReports(t *testing.T) {
	for _, version := range []uint16{5, 6} {
		u := synthUniverse(1, 2, 0, 0, 0)
		at := t0.Add(time.Hour)
		doc := func(url string) engine.Source {
			return engine.Source{VisualizationURL: engine.URLOf(url), PublishedAt: at, RetrievedAt: at.Add(time.Hour), Name: "informe"}
		}
		u.FundReports = []engine.FundReport{
			{FundID: "1", ReferenceDate: d0, Version: 1, PublishDate: t0, Sources: []engine.Source{doc("https://example.invalid/a")}},
			{FundID: "1", ReferenceDate: d0 - 30, Version: 1, PublishDate: t0, Sources: []engine.Source{doc("https://example.invalid/b"), doc("https://example.invalid/c")}},
		}
		other := doc("https://example.invalid/a")
		other.Name = "other" // the first URL and times of report 0, another list
		lists := [][]engine.Source{
			slices.Clone(u.FundReports[0].Sources), slices.Clone(u.FundReports[1].Sources), {other}, nil,
		}
		u.Derived.FundRatios, u.Derived.FundSources = nil, nil
		refs := []engine.Date{d0, d0 - 30, d0, d0}
		for i, l := range lists {
			addFundPoint(&u.Derived, engine.FundRatioPoint{FundID: engine.Intern("1"), Frequency: engine.FrequencyMonthly,
				ReferenceDate: refs[i], PublishDate: engine.StampOf(t0.Add(time.Duration(i) * time.Hour))}, l)
		}
		got, _ := mustDecode(t, mustWrite(t, u, WriteOptions{Version: version}))
		if d := diff(u, got); d != "" {
			t.Fatalf("format %d: round trip differs at %s", version, d)
		}
		// Point i (its publish date t0 + i hours; format 6 stores the
		// points in engine.CompareFundRatioPoints order).
		src := func(i int) []engine.Source {
			for k := range got.Derived.FundRatios {
				if p := &got.Derived.FundRatios[k]; p.PublishDate == engine.StampOf(t0.Add(time.Duration(i)*time.Hour)) {
					return got.Derived.FundSourcesOf(p)
				}
			}
			t.Fatalf("format %d: no point %d", version, i)
			return nil
		}
		same := func(a, b []engine.Source) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }
		if !same(src(0), got.FundReports[0].Sources) || !same(src(1), got.FundReports[1].Sources) {
			t.Errorf("format %d: the points' lists equal to a report's are not its slice", version)
		}
		if same(src(2), got.FundReports[0].Sources) || len(src(2)) != 1 || src(2)[0].Name != "other" || src(3) != nil {
			t.Errorf("format %d: points 2 and 3 read %+v, %+v", version, src(2), src(3))
		}
	}
}
