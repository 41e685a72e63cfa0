package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// ratioSplitByAppend is the runs of points in order as Build found them
// before (a company's run, then appendSeries within it): the definition
// scanRatios' split must match.
func ratioSplitByAppend(ps []RatioPoint) ratioSplit {
	var sp ratioSplit
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].CompanyID == ps[lo].CompanyID {
			hi++
		}
		sp.company = append(sp.company, lo)
		sp.first = append(sp.first, len(sp.series))
		at := lo
		appendSeries(nil, ps[lo:hi], func(x, y *RatioPoint) bool {
			return x.Indicator == y.Indicator && x.Class == y.Class && x.Frequency == y.Frequency
		}, func(g []RatioPoint) int {
			sp.series = append(sp.series, at)
			at += len(g)
			return 0
		})
		lo = hi
	}
	sp.company, sp.first = append(sp.company, len(ps)), append(sp.first, len(sp.series))
	return sp
}

func TestScanRatios(t *testing.T) {
	a, b := Intern("scan-A"), Intern("scan-B")
	pt := func(c Sym, ind uint16, cl ShareClass, f Frequency, ref int, pub int64) RatioPoint {
		return RatioPoint{CompanyID: c, Indicator: ind, Class: cl, Frequency: f, ReferenceDate: d(ref), PublishDate: MakeStamp(1.7e9+pub, 0)}
	}
	base := []RatioPoint{
		pt(a, 0, 0, 1, 0, 5), pt(a, 0, 0, 1, 1, 5), pt(a, 0, 0, 1, 1, 6), pt(a, 0, 0, 2, 0, 0),
		pt(a, 0, 1, 1, 0, 0), pt(a, 1, 0, 1, 0, 0), pt(b, 0, 0, 1, 0, 0), pt(b, 0, 0, 1, 3, 0),
	}
	mod := func(i int, f func(p *RatioPoint)) []RatioPoint {
		ps := slices.Clone(base)
		f(&ps[i])
		return ps
	}
	for _, c := range []struct {
		name   string
		ps     []RatioPoint
		syms   bool // the points index a table of their own
		sym    int
		ind    int
		sorted bool
	}{
		{"in order", base, false, -1, -1, true},
		{"publication back", mod(2, func(p *RatioPoint) { p.PublishDate = MakeStamp(1.7e9+4, 0) }), false, -1, -1, false},
		{"publication missing", mod(2, func(p *RatioPoint) { p.PublishDate = 0 }), false, -1, -1, false},
		{"reference date back", mod(1, func(p *RatioPoint) { p.ReferenceDate = d(-1) }), false, -1, -1, false},
		{"frequency back", mod(3, func(p *RatioPoint) { p.Frequency = 0 }), false, -1, -1, false},
		{"class back", mod(5, func(p *RatioPoint) { p.Indicator = 0; p.Class = 0; p.Frequency = 0 }), false, -1, -1, false},
		{"indicator back", mod(6, func(p *RatioPoint) { p.CompanyID = a }), false, -1, -1, false},
		{"company back", mod(0, func(p *RatioPoint) { p.CompanyID = b }), false, -1, -1, false},
		{"indicator outside", mod(4, func(p *RatioPoint) { p.Indicator = 9 }), false, -1, 4, false},
		{"variables beyond", mod(7, func(p *RatioPoint) { p.VarsAt, p.NVars = 3, 1 }), false, -1, 7, true},
		{"symbols in order", symIndexes(base), true, -1, -1, true},
		{"symbol outside", func() []RatioPoint { ps := symIndexes(base); ps[6].Ticker = 9; return ps }(), true, 6, -1, true},
		{"empty", nil, false, -1, -1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dv := &Derived{Ratios: c.ps}
			if c.syms {
				dv.RatioSyms = []Sym{Intern(""), a, b}
			}
			scan, sp := scanRatios(dv, 3, 3, true)
			if scan.sym != c.sym || scan.indicator != c.ind || (c.sym < 0 && c.ind < 0 && scan.sorted != c.sorted) {
				t.Errorf("scan %+v, want symbol %d, indicator %d, sorted %v", scan, c.sym, c.ind, c.sorted)
			}
			if want := ratioSplitByAppend(c.ps); !slices.Equal(sp.company, want.company) || !slices.Equal(sp.first, want.first) || !slices.Equal(sp.series, want.series) {
				t.Errorf("split %+v, want %+v", sp, want)
			}
			if compare := compareRatioPointsIn(dv); c.sym < 0 && scan.sorted != isSorted(c.ps, compare) {
				t.Errorf("sorted %v, isSorted %v", scan.sorted, !scan.sorted)
			}
		})
	}
	// Random points: the order and the split agree with the definitions.
	r := rand.New(rand.NewPCG(3, 3))
	for n := range 300 {
		ps := make([]RatioPoint, n%40)
		for i := range ps {
			ps[i] = pt([]Sym{a, b}[r.IntN(2)], uint16(r.IntN(2)), ShareClass(r.IntN(2)), Frequency(r.IntN(2)), r.IntN(2), int64(r.IntN(2)))
		}
		if n%2 == 0 {
			slices.SortStableFunc(ps, func(x, y RatioPoint) int { return CompareRatioPoints(&x, &y) })
		}
		scan, sp := scanRatios(&Derived{Ratios: ps}, 3, 0, true)
		if scan.sorted != isSorted(ps, CompareRatioPoints) {
			t.Fatalf("%d: sorted %v, want %v", n, scan.sorted, !scan.sorted)
		}
		want := ratioSplitByAppend(ps)
		if !slices.Equal(sp.company, want.company) || !slices.Equal(sp.series, want.series) || !slices.Equal(sp.first, want.first) {
			t.Fatalf("%d: split %+v, want %+v", n, sp, want)
		}
	}
}

// symIndexes returns ps naming companies scan-A and scan-B by indexes 1
// and 2 (a table of their own).
func symIndexes(ps []RatioPoint) []RatioPoint {
	out := slices.Clone(ps)
	for i := range out {
		switch out[i].CompanyID.String() {
		case "scan-A":
			out[i].CompanyID = 1
		case "scan-B":
			out[i].CompanyID = 2
		}
	}
	return out
}

// latestRatio's point is the one a scan keeping the newest (reference
// date, then publication, the later of points alike) finds, on series in
// Build's order.
func TestLatestRatioIsScan(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	scan := func(ps []RatioPoint) *RatioPoint {
		best := &ps[0]
		for i := 1; i < len(ps); i++ {
			p := &ps[i]
			if p.ReferenceDate > best.ReferenceDate || p.ReferenceDate == best.ReferenceDate && p.PublishDate.Compare(best.PublishDate) >= 0 {
				best = p
			}
		}
		return best
	}
	for n := 1; n < 200; n++ {
		ps := make([]RatioPoint, 1+n%17)
		for i := range ps {
			ps[i] = RatioPoint{CompanyID: Intern("latest"), ReferenceDate: d(r.IntN(3)), Value: Num(i)}
			if r.IntN(4) > 0 {
				ps[i].PublishDate = MakeStamp(1.7e9+int64(r.IntN(3)), int64(r.IntN(2)))
			}
		}
		slices.SortStableFunc(ps, func(x, y RatioPoint) int { return CompareRatioPoints(&x, &y) })
		is := &Issuer{ratios: []RatioSeries{{Indicator: 0, Frequency: FreqTTM, Points: ps}}}
		if got, want := latestRatio(is, 0, ""), scan(ps); got != want {
			t.Fatalf("%d: point %v, the scan's %v", n, got.Value, want.Value)
		}
	}
}

// With RatiosChecked, Build files each run of Derived.RatioRuns under its
// company without reading a point, and Issuer.Ratios and the screener's
// ratio columns are those of a Build that reads them; runs outside the
// points, of an unknown company or of a company seen twice are refused.
func TestBuildRatiosChecked(t *testing.T) {
	eager, err := Build(testUniverse(t))
	if err != nil {
		t.Fatal(err)
	}
	runsOf := func(ps []RatioPoint) []RatioRun {
		var rs []RatioRun
		for lo := 0; lo < len(ps); {
			hi := lo + 1
			for hi < len(ps) && ps[hi].CompanyID == ps[lo].CompanyID {
				hi++
			}
			rs = append(rs, RatioRun{Company: ps[lo].CompanyID, Lo: lo, Hi: hi})
			lo = hi
		}
		return rs
	}
	u := testUniverse(t)
	SortRatioPoints(u.Derived.Ratios)
	u.Derived.RatioRuns = runsOf(u.Derived.Ratios)
	if len(u.Derived.RatioRuns) < 2 {
		t.Fatalf("%d runs: want two companies with points", len(u.Derived.RatioRuns))
	}
	lazy, err := BuildWith(u, BuildOptions{RatiosChecked: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range lazy.Issuers() {
		if is := &lazy.Issuers()[i]; is.ratios != nil {
			t.Fatalf("%s: series made before first use", is.ID)
		}
	}
	// First uses from many goroutines at once (go test -race) make each
	// company's series and the screener's columns once.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			lazy.Screener()
			for i := range lazy.Issuers() {
				lazy.Issuers()[i].Ratios()
			}
		})
	}
	wg.Wait()
	for i := range eager.Issuers() {
		w := &eager.Issuers()[i]
		g, _ := lazy.Issuer(w.ID)
		gs, ws := g.Ratios(), w.Ratios()
		if len(gs) != len(ws) {
			t.Fatalf("%s: %d series, want %d", w.ID, len(gs), len(ws))
		}
		for k := range ws {
			if gs[k].Indicator != ws[k].Indicator || gs[k].Class != ws[k].Class || gs[k].Frequency != ws[k].Frequency ||
				!slices.EqualFunc(gs[k].Points, ws[k].Points, samePoint) || !slices.Equal(gs[k].KnownFrom, ws[k].KnownFrom) {
				t.Fatalf("%s series %d: %+v, want %+v", w.ID, k, gs[k], ws[k])
			}
		}
	}
	gs, ws := lazy.Screener(), eager.Screener()
	for k := range ws.Ratios {
		if !slices.EqualFunc(gs.Ratios[k], ws.Ratios[k], func(x, y Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }) || !slices.Equal(gs.RatioPublished[k], ws.RatioPublished[k]) {
			t.Fatalf("screener indicator %d: %v %v, want %v %v", k, gs.Ratios[k], gs.RatioPublished[k], ws.Ratios[k], ws.RatioPublished[k])
		}
	}
	for _, c := range []struct {
		name string
		edit func([]RatioRun) []RatioRun
	}{
		{"a run beyond the points", func(rs []RatioRun) []RatioRun { rs[len(rs)-1].Hi++; return rs }},
		{"an empty run", func(rs []RatioRun) []RatioRun { rs[0].Hi = rs[0].Lo; return rs }},
		{"an unknown company", func(rs []RatioRun) []RatioRun { rs[0].Company = Intern("no-such-company"); return rs }},
		{"a company twice", func(rs []RatioRun) []RatioRun { rs[1].Company = rs[0].Company; return rs }},
	} {
		u := testUniverse(t)
		SortRatioPoints(u.Derived.Ratios)
		u.Derived.RatioRuns = c.edit(runsOf(u.Derived.Ratios))
		if _, err := BuildWith(u, BuildOptions{RatiosChecked: true}); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
}

// samePoint reports whether x and y are the same point, values bit for
// bit.
func samePoint(x, y RatioPoint) bool {
	xv, yv := math.Float64bits(float64(x.Value)), math.Float64bits(float64(y.Value))
	x.Value, y.Value = 0, 0
	return xv == yv && x == y
}

// attach files items under their issuers in each list's order whatever
// the items' order (a list already in order is kept, one out of order
// sorted stably), each list's capacity its length; with at, the
// positions follow the list; an unknown owner fails naming the item.
func TestAttach(t *testing.T) {
	type item struct {
		owner    string
		key, seq int // seq: the item's place in the input
	}
	u := &Universe{}
	for i, id := range []string{"A", "B", "C", "D"} {
		u.Companies = append(u.Companies, Company{ID: id, CVMCode: fmt.Sprint(i + 1), Symbol: id, Name: id, Kind: KindCompany, Employees: -1})
	}
	b := &builder{u: u, d: &Dataset{u: u}, lastIssuer: -1}
	if err := b.buildIssuers(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 60 {
		items := make([]item, r.IntN(40))
		for i := range items {
			items[i] = item{owner: string(rune('A' + r.IntN(3))), key: r.IntN(5), seq: i} // D has none
			if round%3 == 0 {
				items[i].key = i // already in order
			}
		}
		for _, withAt := range []bool{false, true} {
			lists := map[*Issuer]*[]*item{}
			ats := map[*Issuer]*[]int32{}
			l := issuerList[item]{
				owner: func(x *item) string { return x.owner },
				what:  func(x *item) string { return fmt.Sprint("item ", x.seq) },
				list: func(is *Issuer) *[]*item {
					if lists[is] == nil {
						lists[is] = new([]*item)
					}
					return lists[is]
				},
				order: func(x, y *item) int { return cmp.Compare(x.key, y.key) },
			}
			if withAt {
				l.at = func(is *Issuer) *[]int32 {
					if ats[is] == nil {
						ats[is] = new([]int32)
					}
					return ats[is]
				}
			}
			if err := attach(b, items, l); err != nil {
				t.Fatal(err)
			}
			for k := range b.d.issuers {
				is := &b.d.issuers[k]
				var want []*item
				for i := range items {
					if items[i].owner == is.ID {
						want = append(want, &items[i])
					}
				}
				slices.SortStableFunc(want, func(x, y *item) int { return cmp.Compare(x.key, y.key) })
				var have []*item
				if p := lists[is]; p != nil {
					have = *p
				}
				if !slices.Equal(have, want) || cap(have) != len(have) {
					t.Fatalf("round %d, at %v, %s: %d items (cap %d), want %d in order", round, withAt, is.ID, len(have), cap(have), len(want))
				}
				if withAt && len(want) > 0 {
					at := *ats[is]
					if len(at) != len(have) {
						t.Fatalf("round %d, %s: %d positions for %d items", round, is.ID, len(at), len(have))
					}
					for j, i := range at {
						if &items[i] != have[j] {
							t.Fatalf("round %d, %s: position %d is item %d, the list's %d", round, is.ID, j, i, have[j].seq)
						}
					}
				}
			}
		}
	}
	err := attach(b, []item{{owner: "A"}, {owner: "Z", seq: 1}}, issuerList[item]{
		owner: func(x *item) string { return x.owner },
		what:  func(x *item) string { return fmt.Sprint("item ", x.seq) },
		list:  func(*Issuer) *[]*item { return new([]*item) },
		order: func(x, y *item) int { return 0 },
	})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "item 1") {
		t.Fatalf("unknown owner: %v", err)
	}
}

// With BuildOptions.FundRatiosChecked and Derived.FundRuns, Build reads
// no fund ratio point: each fund's series are made on its first use,
// once however many goroutines ask at once (go test -race), the same
// series as a Build of the points; the points may name their fund by
// FundSyms.
func TestBuildFundRatiosChecked(t *testing.T) {
	eager, err := Build(testUniverse(t))
	if err != nil {
		t.Fatal(err)
	}
	u := testUniverse(t)
	SortFundRatioPoints(u.Derived.FundRatios)
	// The points name their fund by an index into FundSyms, as a
	// snapshot's points in place do.
	ps := slices.Clone(u.Derived.FundRatios)
	var syms []Sym
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].FundID == ps[lo].FundID {
			hi++
		}
		k := Sym(len(syms))
		syms = append(syms, ps[lo].FundID)
		u.Derived.FundRuns = append(u.Derived.FundRuns, RatioRun{Company: k, Lo: lo, Hi: hi})
		for i := lo; i < hi; i++ {
			ps[i].FundID = k
		}
		lo = hi
	}
	u.Derived.FundRatios, u.Derived.FundSyms = ps, syms
	if len(u.Derived.FundRuns) == 0 {
		t.Fatal("no fund points")
	}
	lazy, err := BuildWith(u, BuildOptions{FundRatiosChecked: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range lazy.Issuers() {
		if is := &lazy.Issuers()[i]; is.fundRatios != nil {
			t.Fatalf("%s: fund series made before first use", is.ID)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range lazy.Issuers() {
				for _, s := range lazy.Issuers()[i].FundRatios() {
					for j := range s.Points {
						_ = lazy.FundSources(&s.Points[j])
					}
				}
			}
		})
	}
	wg.Wait()
	n := 0
	for i := range eager.Issuers() {
		w := &eager.Issuers()[i]
		g, _ := lazy.Issuer(w.ID)
		gs, ws := g.FundRatios(), w.FundRatios()
		if len(gs) != len(ws) {
			t.Fatalf("%s: %d fund series, want %d", w.ID, len(gs), len(ws))
		}
		for k := range ws {
			if gs[k].Indicator != ws[k].Indicator || gs[k].Frequency != ws[k].Frequency || len(gs[k].Points) != len(ws[k].Points) {
				t.Fatalf("%s fund series %d: %+v, want %+v", w.ID, k, gs[k], ws[k])
			}
			for j := range ws[k].Points {
				a, b := gs[k].Points[j], ws[k].Points[j]
				if !slices.Equal(lazy.FundSources(&a), eager.FundSources(&b)) {
					t.Fatalf("%s fund series %d point %d: other sources", w.ID, k, j)
				}
				same := math.Float64bits(float64(a.Value)) == math.Float64bits(float64(b.Value))
				a.FundID, b.FundID, a.Value, b.Value = 0, 0, 0, 0
				if !same || a != b {
					t.Fatalf("%s fund series %d point %d: %+v, want %+v", w.ID, k, j, a, b)
				}
				n++
			}
		}
	}
	if n == 0 {
		t.Fatal("no fund point compared")
	}
}
