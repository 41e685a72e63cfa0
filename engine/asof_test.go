package engine

import (
	"slices"
	"sort"
	"sync"
	"testing"
	"time"
)

// spTime is hh:mm in São Paulo on day d.
func spTime(d Date, hh, mm int) time.Time {
	return d.Time().Add(time.Duration(hh+3)*time.Hour + time.Duration(mm)*time.Minute)
}

func TestSaoPauloDay(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want Date
	}{
		{time.Date(2024, 1, 3, 2, 59, 59, 0, time.UTC), MakeDate(2024, 1, 2)}, // 23:59:59 the day before in São Paulo
		{time.Date(2024, 1, 3, 3, 0, 0, 0, time.UTC), MakeDate(2024, 1, 3)},
		{time.Date(2024, 1, 3, 21, 0, 0, 0, time.UTC), MakeDate(2024, 1, 3)},
	} {
		if got := SaoPauloDay(c.t); got != c.want {
			t.Errorf("SaoPauloDay(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

func TestCashCurrentAt(t *testing.T) {
	u := testUniverse(t)
	u.CashActions[0].PublishDate = StampOf(at(0, 12, 0)) // c1 v1
	u.CashActions[1].PublishDate = StampOf(at(2, 12, 0)) // c1 v2
	ds := mustBuild(t, u)
	ev := map[string]*CashEvent{}
	for i := range ds.CashActions() {
		e := &ds.CashActions()[i]
		ev[e.ID] = e
	}
	for _, c := range []struct {
		id          string
		t           time.Time
		known, curr bool
	}{
		{"c1v1", at(0, 11, 59), false, false},
		{"c1v1", at(0, 12, 0), true, true},
		{"c1v2", at(1, 0, 0), false, false},
		{"c1v1", at(2, 11, 0), true, true},
		{"c1v1", at(2, 12, 0), true, false}, // v2 published at that instant
		{"c1v2", at(2, 12, 0), true, true},
		{"c1v2", at(4, 0, 0), true, true},
		{"c2v1", at(4, 0, 0), true, true}, // one version, published at the zero time
	} {
		e := ev[c.id]
		if got := e.KnownAt(c.t); got != c.known {
			t.Errorf("%s KnownAt(%v) = %v, want %v", c.id, c.t, got, c.known)
		}
		if got := e.CurrentAt(c.t); got != c.curr {
			t.Errorf("%s CurrentAt(%v) = %v, want %v", c.id, c.t, got, c.curr)
		}
	}
}

// TestCashFactorAt checks that the adjustment factor as known at t is the
// one a Dataset built from the share actions known at t gives, to the
// bit.
func TestCashFactorAt(t *testing.T) {
	base := testUniverse(t)
	base.ShareActions[0].ApprovalDate = d(1) // PETR4 split 1:10, prior_ex d1
	base.ShareActions[1].ApprovalDate = d(2) // PETR3 reverse 10:1, prior_ex d2
	base.ShareActions[2].ApprovalDate = d(0) // PETR3 bonus 5 %, prior_ex d0
	full := mustBuild(t, base)
	for _, when := range []time.Time{spTime(d(0), 12, 0), spTime(d(1), 0, 0), spTime(d(1), 12, 0), spTime(d(2), 12, 0), spTime(d(4), 12, 0)} {
		u := testUniverse(t)
		u.ShareActions = nil
		for _, sa := range base.ShareActions {
			if sa.KnownAt(when) {
				u.ShareActions = append(u.ShareActions, sa)
			}
		}
		part := mustBuild(t, u)
		for i := range full.CashActions() {
			e := &full.CashActions()[i]
			var want Num
			for j := range part.CashActions() {
				if part.CashActions()[j].ID == e.ID {
					want = part.CashActions()[j].Factor
				}
			}
			if got := full.CashFactorAt(e, when); got != want && (got.Valid() || want.Valid()) {
				t.Errorf("at %v: %s factor %v, want %v (built from the actions known then)", when, e.ID, got, want)
			}
		}
	}
	// The split of PETR4 (c1's ticker) is known from d1 in São Paulo.
	e := &full.CashActions()[slices.IndexFunc(full.CashActions(), func(e CashEvent) bool { return e.ID == "c1v1" })]
	if f := full.CashFactorAt(e, spTime(d(0), 23, 59)); f != 1 {
		t.Errorf("c1v1 factor before the split's approval = %v, want 1", f)
	}
	if f := full.CashFactorAt(e, spTime(d(1), 0, 0)); f != 10 {
		t.Errorf("c1v1 factor from the split's approval = %v, want 10", f)
	}
}

func TestSharesAt(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	is, _ := ds.Issuer(petroID)
	for _, c := range []struct {
		t      time.Time
		ok     bool
		common int64
	}{
		{spTime(MakeDate(2021, 12, 31), 23, 59), false, 0},
		{spTime(MakeDate(2022, 1, 1), 0, 0), true, 100},
		{spTime(MakeDate(2023, 5, 31), 23, 59), true, 100},
		{spTime(MakeDate(2023, 6, 1), 0, 0), true, 110},
		{at(4, 21, 0), true, 110},
	} {
		p, ok := is.SharesAt(c.t)
		if ok != c.ok || p.Common != c.common {
			t.Errorf("SharesAt(%v) = %d, %v; want %d, %v", c.t, p.Common, ok, c.common, c.ok)
		}
	}
	if got, want := ds.FirstPublished(), spTime(MakeDate(2022, 1, 1), 0, 0); !got.Equal(want) {
		t.Errorf("FirstPublished = %v, want %v (the first share count)", got, want)
	}
}

// TestRatioKnownAt checks RatioFilter.KnownAt and LatestKnown on one
// series with a re-filed reference date and a point priced at a session.
func TestRatioKnownAt(t *testing.T) {
	q1, q2, sess := MakeDate(2023, 9, 30), MakeDate(2023, 12, 31), MakeDate(2024, 3, 1)
	pts := []RatioPoint{
		{ReferenceDate: q1, PublishDate: StampOf(spTime(MakeDate(2023, 11, 1), 19, 0)), Value: 1},
		{ReferenceDate: q1, PublishDate: StampOf(spTime(MakeDate(2024, 2, 1), 19, 0)), Value: 2}, // re-filed
		{ReferenceDate: q2, PublishDate: StampOf(spTime(MakeDate(2024, 1, 20), 19, 0)), Value: 3},
		{ReferenceDate: sess, PublishDate: StampOf(spTime(MakeDate(2024, 1, 20), 19, 0)), Value: 4}, // priced at a session
	}
	for _, c := range []struct {
		t      time.Time
		all    []int // SelectRatioPoints with KnownAt
		latest []int // ... and LatestByReference
		last   int   // LatestKnown
	}{
		{spTime(MakeDate(2023, 10, 31), 12, 0), nil, nil, -1},
		{spTime(MakeDate(2023, 11, 1), 19, 0), []int{0}, []int{0}, 0},
		{spTime(MakeDate(2024, 1, 31), 12, 0), []int{0, 2}, []int{0, 2}, 2},
		{spTime(MakeDate(2024, 2, 1), 19, 0), []int{0, 1, 2}, []int{1, 2}, 2},
		{spTime(MakeDate(2024, 3, 1), 17, 59), []int{0, 1, 2}, []int{1, 2}, 2}, // the session has not closed
		{spTime(MakeDate(2024, 3, 1), 18, 0), []int{0, 1, 2, 3}, []int{1, 2, 3}, 3},
	} {
		got := slices.Collect(SelectRatioPoints(pts, &RatioFilter{Reference: NoDate, KnownAt: c.t}))
		if !slices.Equal(got, c.all) {
			t.Errorf("KnownAt %v: %v, want %v", c.t, got, c.all)
		}
		got = slices.Collect(SelectRatioPoints(pts, &RatioFilter{Reference: NoDate, KnownAt: c.t, LatestByReference: true}))
		if !slices.Equal(got, c.latest) {
			t.Errorf("KnownAt %v, latest by reference: %v, want %v", c.t, got, c.latest)
		}
		if got := LatestKnown(pts, nil, c.t); got != c.last {
			t.Errorf("LatestKnown(%v) = %d, want %d", c.t, got, c.last)
		}
	}
}

// TestScreenerAt checks the screener as known at an instant: closes and
// volumes of the last session closed by then, rows without one left out
// of ByVolume, ratio cells known then, and only the columns asked for.
func TestScreenerAt(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	s := ds.Screener()
	row := func(ticker string) int {
		for r, a := range s.Assets {
			if a.Ticker == ticker {
				return r
			}
		}
		t.Fatalf("no screener row %s", ticker)
		return -1
	}
	petr4, spun3 := row("PETR4"), row("SPUN3")
	for _, c := range []struct {
		t            time.Time
		close        Num
		spunListed   bool
		dividendCell Num // PETR4's DIVIDEND_YIELD (TTM, reference d4, published at d4 00:00 UTC)
	}{
		{SessionClose(d(2)).Add(-time.Second), 110, false, Null},
		{SessionClose(d(2)), 11.5, false, Null},
		{SessionClose(d(3)), 12, true, Null},
		{SessionClose(d(4)), 12.6, true, 0.08},
	} {
		_, p := s.At(c.t, []int{1})
		if p.Close[petr4] != c.close || p.Volume[petr4] != c.close*1000 {
			t.Errorf("at %v: PETR4 close %v volume %v, want %v and %v", c.t, p.Close[petr4], p.Volume[petr4], c.close, c.close*1000)
		}
		if got := slices.Contains(p.ByVolume, int32(spun3)); got != c.spunListed {
			t.Errorf("at %v: SPUN3 (first session d3) a row: %v, want %v", c.t, got, c.spunListed)
		}
		if got := p.Ratios[1][petr4]; got != c.dividendCell && (got.Valid() || c.dividendCell.Valid()) {
			t.Errorf("at %v: PETR4 DIVIDEND_YIELD %v, want %v", c.t, got, c.dividendCell)
		}
		if p.Ratios[0] != nil {
			t.Errorf("at %v: column 0 computed though not asked for", c.t)
		}
	}
}

func TestSessionAt(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	ss := ds.sessionDates()
	if len(ss) < 2 {
		t.Fatal("the test universe has fewer than two sessions")
	}
	first, second := ss[0], ss[1]
	for _, c := range []struct {
		t    time.Time
		want Date
	}{
		{spTime(first, 17, 59), NoDate}, // before the first close
		{spTime(first, 18, 0), first},   // at the close
		{spTime(second, 17, 59), first},
		{spTime(second, 18, 0), second},
		{spTime(ss[len(ss)-1], 23, 0), ss[len(ss)-1]},
	} {
		if got := ds.SessionAt(c.t); got != c.want {
			t.Errorf("SessionAt(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

// TestCashSameVersion: of two rows of one event with one version number
// (a source republishing without bumping it), the later published is
// current, and of two published together the greater id; Current,
// CurrentAt and ExCash (total return) follow that rule, each event
// counted once, and CurrentAt at the snapshot's as_of is Current.
func TestCashSameVersion(t *testing.T) {
	u := testUniverse(t)
	u.CashActions[2].PublishDate = StampOf(at(1, 12, 0)) // c2v1: 0.5
	// c2 republished as version 1 with another value, and c5 whose two
	// rows share version and publication: c5b (the greater id) is current.
	rep := u.CashActions[2]
	rep.ID, rep.PublishDate, rep.DeclaredValue, rep.NetValue = "c2v1r", StampOf(at(3, 12, 0)), 0.6, 0.6
	c5a := CashAction{ID: "c5b", EventID: "c5", Version: 1, CompanyID: Intern(petroID), Ticker: Intern("PETR4"), StockType: MustLabel(ClassPS), PriorExDate: d(1),
		PublishDate: StampOf(at(1, 9, 0)), DeclaredValue: 0.7, MonetaryCorrection: 0, NetValue: 0.7, Name: MustLabel("DIVIDEND")}
	c5b := c5a
	c5b.ID, c5b.DeclaredValue, c5b.NetValue = "c5a", 0.4, 0.4
	u.CashActions = append([]CashAction{rep, c5a}, append(u.CashActions, c5b)...)
	ds := mustBuild(t, u)
	ev := map[string]*CashEvent{}
	for i := range ds.CashActions() {
		e := &ds.CashActions()[i]
		ev[e.ID] = e
	}
	for id, want := range map[string]bool{"c2v1": false, "c2v1r": true, "c5a": false, "c5b": true, "c1v1": false, "c1v2": true} {
		if got := ev[id].Current; got != want {
			t.Errorf("%s Current = %v, want %v", id, got, want)
		}
	}
	for _, c := range []struct {
		id   string
		t    time.Time
		curr bool
	}{
		{"c2v1", at(1, 12, 0), true},
		{"c2v1", at(3, 11, 59), true},
		{"c2v1", at(3, 12, 0), false}, // republished at that instant
		{"c2v1r", at(3, 12, 0), true},
		{"c5a", at(1, 9, 0), false},
		{"c5b", at(1, 9, 0), true},
	} {
		if got := ev[c.id].CurrentAt(c.t); got != c.curr {
			t.Errorf("%s CurrentAt(%v) = %v, want %v", c.id, c.t, got, c.curr)
		}
	}
	for id, e := range ev {
		if got := e.CurrentAt(ds.AsOf()); got != e.Current {
			t.Errorf("%s CurrentAt(as_of) = %v, Current %v", id, got, e.Current)
		}
	}
	a, _ := ds.Asset("PETR4")
	want := []ExCash{{d(0), 1.3, 1.1}, {d(1), 0.7, 0.7}, {d(3), 0.6, 0.6}}
	if got := ds.ExCash(a); !slices.Equal(got, want) {
		t.Errorf("PETR4 ExCash %v, want %v (each event once, at its current row)", got, want)
	}
}

// TestDividendYieldAtFormerTicker: a DIVIDEND_YIELD point whose ticker is
// a former ticker of its class (VVAR3, renamed VIIA3) counts the cash of
// the whole rename chain, as a point under the current ticker does: the
// events recorded under VVAR3 and under VIIA3 (their ISINs differ).
// Total return already joins them: ExCash matches an event to its asset
// with renames resolved.
func TestDividendYieldAtFormerTicker(t *testing.T) {
	u := testUniverse(t)
	u.CashActions = append(u.CashActions,
		CashAction{ID: "v1", EventID: "v1", Version: 1, CompanyID: Intern(viaID), Ticker: Intern("VVAR3"), StockType: MustLabel(ClassCS), ISIN: Intern("BRVVARACNOR1"),
			PriorExDate: d(1), PublishDate: StampOf(at(0, 12, 0)), DeclaredValue: 0.25, Name: MustLabel("DIVIDEND")},
		CashAction{ID: "v2", EventID: "v2", Version: 1, CompanyID: Intern(viaID), Ticker: Intern("VIIA3"), StockType: MustLabel(ClassCS),
			PriorExDate: d(3), PublishDate: StampOf(at(3, 12, 0)), DeclaredValue: 0.5, Name: MustLabel("DIVIDEND")})
	ds := mustBuild(t, u)
	is, _ := ds.Issuer(viaID)
	buf := make([]Num, 2)
	for _, tk := range []string{"VIIA3", "VVAR3"} {
		p := &RatioPoint{CompanyID: Intern(viaID), Indicator: 1, Class: ShareClassCS, Ticker: Intern(tk), Frequency: FrequencyTTM,
			ReferenceDate: d(4), PublishDate: StampOf(at(4, 0, 0)), Value: 0}
		got, vs := ds.DividendYieldAt(is, p, []Num{0, 6}, at(4, 21, 0), buf)
		if vs[0] != 0.75 || got != 0.125 {
			t.Errorf("ticker %s: cash %v, yield %v; want 0.75 (both events of the chain), 0.125", tk, vs[0], got)
		}
	}
	for _, tk := range []string{"VIIA3", "VVAR3"} {
		a, _ := ds.Asset(tk)
		if got, want := ds.ExCash(a), []ExCash{{d(1), 0.25, Null}, {d(3), 0.5, Null}}; len(got) != 2 || got[0].PriorEx != want[0].PriorEx || got[0].Gross != want[0].Gross || got[1].Gross != want[1].Gross {
			t.Errorf("ExCash(%s) = %v, want the gross of %v", tk, got, want)
		}
	}
}

// TestScreenerAtDividendYield checks a DIVIDEND_YIELD cell whose latest
// point known at t is a stored quarter-end one (no valuation at the
// session before t: no valuation point at the newest period): it counts
// the cash versions current at t, not the correction published later
// that the snapshot's point counts.
func TestScreenerAtDividendYield(t *testing.T) {
	u := testUniverse(t)
	u.Derived.Catalog[1].Variables = []string{"CASH_PER_SHARE_12M", "PRICE"}
	// c1 (PETR4, 1 BRL corrected to 1.2) goes ex in the twelve months
	// of the quarter ending 2023-12-31; its correction is published on
	// d4 at 13:00 UTC.
	for i := range u.CashActions[:2] {
		u.CashActions[i].PriorExDate = MakeDate(2023, 12, 1)
	}
	u.CashActions[0].PublishDate = StampOf(at(0, 12, 0))
	u.CashActions[1].PublishDate = StampOf(at(4, 13, 0))
	q := MakeDate(2023, 12, 31)
	u.Derived.Ratios = append(u.Derived.Ratios, RatioPoint{CompanyID: Intern(petroID), Indicator: 1, Class: ShareClassPS, Ticker: Intern("PETR4"),
		Frequency: FrequencyTTM, ReferenceDate: q, PublishDate: StampOf(dayStart(q)), Value: DividendYield(1.2, 100),
		VarsAt: uint32(len(u.Derived.RatioVars)), NVars: 2})
	u.Derived.RatioVars = append(u.Derived.RatioVars, 1.2, 100)
	ds := mustBuild(t, u)
	s := ds.Screener()
	petr4 := slices.IndexFunc(s.Assets, func(a *Asset) bool { return a.Ticker == "PETR4" })
	for _, c := range []struct {
		t    time.Time
		want Num
	}{
		{at(4, 12, 0), DividendYield(1, 100)},   // c1 v1 current
		{at(4, 13, 0), DividendYield(1.2, 100)}, // v2 published
		{at(4, 20, 0), DividendYield(1.2, 100)},
	} {
		if sv := ds.SessionValuationAt(s.Issuers[petr4], c.t); sv != nil {
			t.Fatalf("at %v: a valuation at the session (%v): the cell would not be the stored point", c.t, sv.Session)
		}
		if _, p := s.At(c.t, []int{1}); p.Ratios[1][petr4] != c.want {
			t.Errorf("at %v: PETR4 DIVIDEND_YIELD %v, want %v", c.t, p.Ratios[1][petr4], c.want)
		}
	}
}

// TestScreenerAtRows checks the screener's rows at an instant against
// those of a Dataset built from the sessions closed by then: a ticker
// delisted before the snapshot's last session (PETR3, delisted on d2)
// is a row while the last session closed is not after d2, a ticker
// listed later (SPUN3, from d3) is not one before, and each company's
// primary row is its first in liquidity order then (PETR3 and PETR4
// without rank: by the volume of their last session then, PETR3's the
// larger; from d3 no row of the company is primary, as Build makes it).
func TestScreenerAtRows(t *testing.T) {
	universe := func() *Universe {
		u := testUniverse(t)
		for i := range u.Securities {
			switch u.Securities[i].Ticker {
			case "PETR3":
				u.Securities[i].ListedTo = d(2)
				u.Securities[i].LiquidityRank = 0
			case "PETR4":
				u.Securities[i].LiquidityRank = 0
			}
		}
		for i := range u.Daily {
			if u.Daily[i].Ticker == "PETR3" {
				u.Daily[i] = mkSeries("PETR3", []int{0, 1, 2}, []float64{1000, 1000, 1000})
			}
		}
		return u
	}
	full := mustBuild(t, universe())
	s := full.Screener()
	if slices.ContainsFunc(s.Assets, func(a *Asset) bool { return a.Ticker == "PETR3" }) {
		t.Fatal("PETR3, delisted before the last session, is a row of the snapshot")
	}
	sawPETR3 := false
	for _, when := range []time.Time{
		SessionClose(d(0)).Add(-time.Second), SessionClose(d(0)), SessionClose(d(2)),
		SessionClose(d(3)).Add(-time.Second), SessionClose(d(3)), SessionClose(d(4)),
	} {
		// A Dataset of the sessions closed by then.
		u := universe()
		u.Intraday = nil
		for i, sr := range u.Daily {
			n := sort.Search(len(sr.Dates), func(k int) bool { return SessionClose(sr.Dates[k]).After(when) })
			u.Daily[i] = Series{Ticker: sr.Ticker, Dates: sr.Dates[:n], Open: sr.Open[:n], High: sr.High[:n], Low: sr.Low[:n],
				Close: sr.Close[:n], Volume: sr.Volume[:n], Quantity: sr.Quantity[:n], Trades: sr.Trades[:n]}
		}
		then := mustBuild(t, u).Screener()
		var want, wantPrimary []string
		for r, a := range then.Assets {
			want = append(want, a.Ticker)
			if then.Primary[r] {
				wantPrimary = append(wantPrimary, a.Ticker)
			}
		}
		rows, p := s.At(when, nil)
		var got, gotPrimary []string
		for _, r := range p.ByVolume {
			got = append(got, rows.Assets[r].Ticker)
			if p.Primary[r] {
				gotPrimary = append(gotPrimary, rows.Assets[r].Ticker)
			}
		}
		slices.Sort(got)
		slices.Sort(gotPrimary)
		if !slices.Equal(got, want) || !slices.Equal(gotPrimary, wantPrimary) {
			t.Errorf("at %v: rows %v, primary %v; want %v, %v (a Dataset of the sessions closed by then)", when, got, gotPrimary, want, wantPrimary)
		}
		sawPETR3 = sawPETR3 || slices.Contains(got, "PETR3")
	}
	if !sawPETR3 {
		t.Error("PETR3 was never a row")
	}
}

// closedBy(t) is the last date whose session is closed at t
// (SessionClose), to the nanosecond and in any time zone.
func TestClosedBy(t *testing.T) {
	for _, day := range []Date{MakeDate(1969, 12, 31), MakeDate(1970, 1, 1), MakeDate(2024, 2, 29), MakeDate(2026, 11, 27)} {
		for _, off := range []time.Duration{-24 * time.Hour, -time.Second, -time.Nanosecond, 0, time.Nanosecond, time.Second, 3 * time.Hour, 24*time.Hour - time.Nanosecond, 24 * time.Hour} {
			for _, loc := range []*time.Location{time.UTC, SaoPaulo} {
				at := SessionClose(day).Add(off).In(loc)
				for _, d := range []Date{day - 1, day, day + 1} {
					if got, want := d <= closedBy(at), !SessionClose(d).After(at); got != want {
						t.Errorf("at %v: %v <= closedBy = %v, want %v (closedBy %v)", at, d, got, want, closedBy(at))
					}
				}
			}
		}
	}
}

// FirstPublished is not computed by Build (a pass over the published
// kinds that a server's start need not wait for) but on first use, once,
// with the same answer from every goroutine that asks first at once.
func TestFirstPublishedOnFirstUse(t *testing.T) {
	for _, opt := range []BuildOptions{{}, {Serial: true}} {
		ds, err := BuildWith(testUniverse(t), opt)
		if err != nil {
			t.Fatal(err)
		}
		if !ds.firstPublished.IsZero() {
			t.Fatalf("Build computed FirstPublished (%v): it is left to first use", ds.firstPublished)
		}
		want := spTime(MakeDate(2022, 1, 1), 0, 0) // the first share count
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if got := ds.FirstPublished(); !got.Equal(want) {
					t.Errorf("FirstPublished = %v, want %v", got, want)
				}
			})
		}
		wg.Wait()
	}
}
