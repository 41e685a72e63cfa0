package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sameTR reports the first point where got and want differ bit for bit
// (NaN included), or "".
func sameTR(got, want []TRPoint) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d points, want %d", len(got), len(want))
	}
	bits := func(n Num) uint64 { return math.Float64bits(float64(n)) }
	for i := range got {
		g, w := got[i], want[i]
		if g.Date != w.Date || bits(g.Close) != bits(w.Close) || bits(g.Cash) != bits(w.Cash) || bits(g.Index) != bits(w.Index) {
			return fmt.Sprintf("point %d: %+v, want %+v", i, g, w)
		}
	}
	return ""
}

// checkTRRows compares, for every window [lo, hi) of a given by windows
// and each method, with and without each extra bar, the series from the
// kept index (AppendTotalReturnRows) with the one from the bars
// (AppendTotalReturn).
func checkTRRows(t *testing.T, ds *Dataset, a *Asset, windows [][2]int, extras []*Bar) {
	t.Helper()
	var bars []Bar
	var got, want []TRPoint
	for _, w := range windows {
		for _, extra := range extras {
			for _, net := range []bool{false, true} {
				bars = a.AppendDaily(bars[:0], w[0], w[1], false)
				if extra != nil {
					bars = append(bars, *extra)
				}
				want = ds.AppendTotalReturn(want[:0], a, bars, net)
				got = ds.AppendTotalReturnRows(got[:0], a, w[0], w[1], extra, net)
				if diff := sameTR(got, want); diff != "" {
					t.Fatalf("%s rows [%d, %d) extra %v net %v: %s", a.Ticker, w[0], w[1], extra != nil, net, diff)
				}
			}
		}
	}
}

// trEdgeUniverse is trBenchUniverse's first tickers over 3 years, with
// the edges the kept index must reproduce: sessions without a close on
// and around ex-dates (the cash pending to the next close), two events
// going ex on one session, cash above the price (the index ends), and a
// live bar after the history.
func trEdgeUniverse() *Universe {
	u := trBenchUniverse(3, 3)
	for i := range u.Daily {
		s := &u.Daily[i]
		n := len(s.Dates)
		for _, k := range []int{63, 64, 126, 200, 201, 202, n - 1} {
			if i == 1 || k == 64 || k == n-1 {
				s.Close[k], s.Open[k], s.High[k], s.Low[k] = Null, Null, Null, Null
			}
		}
		s.Close[0] = Null // the first session without a close
	}
	tk := u.Daily[0].Ticker
	id := u.Companies[0].ID
	dates := u.Daily[0].Dates
	for k, v := range map[int]Num{189: 0.5, 300: 1e6} { // a second event on an ex-date; cash above the price
		u.CashActions = append(u.CashActions, CashAction{ID: fmt.Sprintf("x%d", k), EventID: fmt.Sprintf("x%d", k), Version: 1,
			CompanyID: Intern(id), Ticker: Intern(tk), StockType: MustLabel(ClassCS), PriorExDate: dates[k-1], Name: MustLabel(CashDividend), DeclaredValue: v,
			MonetaryCorrection: 0, NetValue: v, PaymentDate: NoDate})
	}
	// Cash going ex after the last session: the live bar's.
	u.CashActions = append(u.CashActions, CashAction{ID: "live", EventID: "live", Version: 1,
		CompanyID: Intern(id), Ticker: Intern(tk), StockType: MustLabel(ClassCS), PriorExDate: dates[len(dates)-1], Name: MustLabel(CashInterest), DeclaredValue: 0.25,
		MonetaryCorrection: 0, NetValue: 0.2125, PaymentDate: NoDate})
	return u
}

// The series from the index kept with the Dataset are those computed
// from the bars, bit for bit, for every window of the edge universe.
func TestTotalReturnRowsEqualBars(t *testing.T) {
	ds := mustBuild(t, trEdgeUniverse())
	for ai := range ds.Assets() {
		a := &ds.Assets()[ai]
		n := a.Daily.Len()
		last := a.Daily.Dates[n-1]
		extras := []*Bar{nil,
			{Time: int64(last+1) * 86400, Date: last + 1, Close: 21.37, Factor: 1},
			{Time: int64(last+3) * 86400, Date: last + 3, Close: Null, Factor: 1},
			{Time: int64(last+1) * 86400, Date: last + 1, Close: 5.5, Factor: 2}}
		var windows [][2]int
		for lo := 0; lo <= n; lo += 7 {
			for _, hi := range []int{lo, lo + 1, lo + 2, lo + 64, n} {
				if hi <= n && hi >= lo {
					windows = append(windows, [2]int{lo, hi})
				}
			}
		}
		for _, lo := range []int{62, 63, 64, 65, 188, 189, 190, 199, 200, 201, 202, 203, 299, 300, 301} {
			windows = append(windows, [2]int{lo, n}, [2]int{lo, min(n, lo+3)})
		}
		checkTRRows(t, ds, a, windows, extras)
	}
	if ds.TRIndexBytes() <= 0 {
		t.Error("no index kept")
	}
}

// The marks are made on an asset's first use: concurrent first uses of
// every asset give the series from the bars, and none is made before.
func TestTotalReturnRowsFirstUseConcurrent(t *testing.T) {
	ds := mustBuild(t, trEdgeUniverse())
	if n := ds.TRIndexBytes(); n != int64(len(ds.Assets()))*8 {
		t.Errorf("%d bytes kept before any use, want only the %d slots", n, len(ds.Assets())*8)
	}
	errs := make(chan string, 4*len(ds.Assets()))
	done := make(chan struct{})
	for range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for ai := range ds.Assets() {
				a := &ds.Assets()[ai]
				n := a.Daily.Len()
				for _, net := range []bool{false, true} {
					want := ds.AppendTotalReturn(nil, a, a.AppendDaily(nil, 0, n, false), net)
					if diff := sameTR(ds.AppendTotalReturnRows(nil, a, 0, n, nil, net), want); diff != "" {
						errs <- a.Ticker + ": " + diff
					}
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// The same on the hand-written universe of TestTotalReturnByHand, every
// window.
func TestTotalReturnRowsByHand(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for ai := range ds.Assets() {
		a := &ds.Assets()[ai]
		n := a.Daily.Len()
		var windows [][2]int
		for lo := 0; lo <= n; lo++ {
			for hi := lo; hi <= n; hi++ {
				windows = append(windows, [2]int{lo, hi})
			}
		}
		var extras []*Bar
		extras = append(extras, nil)
		if n > 0 {
			last := a.Daily.Dates[n-1]
			extras = append(extras, &Bar{Time: int64(last+1) * 86400, Date: last + 1, Close: 10, Factor: 1})
		}
		checkTRRows(t, ds, a, windows, extras)
	}
}

// Random windows of the benchmark universe.
func TestTotalReturnRowsRandom(t *testing.T) {
	ds := mustBuild(t, trBenchUniverse(20, 5))
	r := rand.New(rand.NewPCG(1, 2))
	for ai := range ds.Assets() {
		a := &ds.Assets()[ai]
		n := a.Daily.Len()
		var windows [][2]int
		for range 50 {
			lo := r.IntN(n + 1)
			windows = append(windows, [2]int{lo, lo + r.IntN(n-lo+1)})
		}
		checkTRRows(t, ds, a, windows, []*Bar{nil})
	}
}

func TestTotalReturnRowsAllocs(t *testing.T) {
	ds := mustBuild(t, trBenchUniverse(1, 2))
	a := &ds.Assets()[0]
	dst := make([]TRPoint, 0, a.Daily.Len())
	if n := testing.AllocsPerRun(100, func() { dst = ds.AppendTotalReturnRows(dst[:0], a, 0, a.Daily.Len(), nil, true) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// BenchmarkTotalReturnRows500x20y is BenchmarkTotalReturn500x20y from the
// index kept with the Dataset (AppendTotalReturnRows): no bars made, no
// ex-cash walked; ns/op is per ticker.
func BenchmarkTotalReturnRows500x20y(b *testing.B) {
	ds, err := Build(trBenchUniverse(500, 20))
	if err != nil {
		b.Fatal(err)
	}
	assets := ds.Assets()
	var out []TRPoint
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := &assets[i%len(assets)]
		out = ds.AppendTotalReturnRows(out[:0], a, 0, a.Daily.Len(), nil, i%2 == 1)
	}
	if len(out) != 5040 {
		b.Fatalf("%d points", len(out))
	}
}
