package engine

import (
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeLazyReports gives a Universe's reports company by company, counting
// the companies read.
type fakeLazyReports struct {
	byCompany map[string][]Report
	ids       []string
	first     Stamp
	reads     atomic.Int64
}

func newFakeLazyReports(rs []Report) *fakeLazyReports {
	f := &fakeLazyReports{byCompany: map[string][]Report{}}
	for _, r := range rs {
		if _, ok := f.byCompany[r.CompanyID]; !ok {
			f.ids = append(f.ids, r.CompanyID)
		}
		f.byCompany[r.CompanyID] = append(f.byCompany[r.CompanyID], r)
		if r.PublishDate != 0 && (f.first == 0 || r.PublishDate < f.first) {
			f.first = r.PublishDate
		}
	}
	return f
}

func (f *fakeLazyReports) Companies() []string   { return f.ids }
func (f *fakeLazyReports) FirstPublished() Stamp { return f.first }
func (f *fakeLazyReports) Reports(id string) []Report {
	f.reads.Add(1)
	return append([]Report(nil), f.byCompany[id]...)
}

// TestLazyReportsAsBuilt: a Universe whose reports are given company by
// company builds a Dataset whose issuers list the same reports in the
// same order as one built from the reports themselves, reads no
// company before its first use, and the same first publication.
func TestLazyReportsAsBuilt(t *testing.T) {
	u := testUniverse(t)
	// Out of order, so that the lazy list must sort as attach does.
	rs := append([]Report(nil), u.Reports...)
	for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
		rs[i], rs[j] = rs[j], rs[i]
	}
	u.Reports = rs
	eager := mustBuild(t, u)

	lu := testUniverse(t)
	src := newFakeLazyReports(rs)
	lu.Reports, lu.LazyReports = nil, src
	lazy := mustBuild(t, lu)
	if n := src.reads.Load(); n != 0 {
		t.Fatalf("%d companies read by Build", n)
	}
	if got, want := lazy.FirstPublished(), eager.FirstPublished(); !got.Equal(want) {
		t.Errorf("first published %v, want %v", got, want)
	}
	n := 0
	for i := range eager.Issuers() {
		want := &eager.Issuers()[i]
		got, ok := lazy.Issuer(want.ID)
		if !ok {
			t.Fatalf("%s: not in the lazy Dataset", want.ID)
		}
		if len(got.Reports()) != len(want.Reports()) {
			t.Fatalf("%s: %d reports, want %d", want.ID, len(got.Reports()), len(want.Reports()))
		}
		for j, r := range want.Reports() {
			if !reflect.DeepEqual(*got.Reports()[j], *r) {
				t.Errorf("%s: report %d = %+v, want %+v", want.ID, j, *got.Reports()[j], *r)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no report compared")
	}
	if got, want := src.reads.Load(), int64(len(src.ids)); got != want {
		t.Errorf("%d companies read, want each of the %d once", got, want)
	}
}

// TestLazyReportsUnknownCompany: reports of a company the Universe lacks
// fail the Build, as they do from Universe.Reports.
func TestLazyReportsUnknownCompany(t *testing.T) {
	u := testUniverse(t)
	rs := append([]Report(nil), u.Reports...)
	rs[0].CompanyID = "NOSUCH"
	u.Reports, u.LazyReports = nil, newFakeLazyReports(rs)
	if _, err := Build(u); err == nil {
		t.Fatal("Build of reports of an unknown company succeeded")
	}
}

// TestLazyReportsConcurrentFirstUse: many readers of one company's
// reports on its first use read it once and see the same list (run
// under -race).
func TestLazyReportsConcurrentFirstUse(t *testing.T) {
	u := testUniverse(t)
	src := newFakeLazyReports(u.Reports)
	u.Reports, u.LazyReports = nil, src
	ds := mustBuild(t, u)
	var wg sync.WaitGroup
	lists := make([][]*Report, 16)
	for g := range lists {
		wg.Go(func() {
			for _, id := range src.ids {
				is, _ := ds.Issuer(id)
				l := is.Reports()
				if id == src.ids[0] {
					lists[g] = l
				}
			}
		})
	}
	wg.Wait()
	for g := range lists {
		if len(lists[g]) == 0 || &lists[g][0] != &lists[0][0] {
			t.Fatalf("reader %d saw another list", g)
		}
	}
	if got, want := src.reads.Load(), int64(len(src.ids)); got != want {
		t.Errorf("%d companies read, want %d", got, want)
	}
}
