package engine

import (
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// Build leaves the running aggregates of intraday bars unbuilt (Latest is
// computed from its session's bars); the aggregate sessionAgg computes
// for any bar is the one the columns hold, bit for bit, missing values
// and inexact volumes included; the first quote of an earlier bar builds
// the columns once.
func TestRunAggLazy(t *testing.T) {
	u := testUniverse(t)
	rng := rand.New(rand.NewPCG(3, 4))
	s := Intraday{Ticker: "SPUN3"}
	maybe := func(v Num) Num {
		if rng.IntN(9) == 0 {
			return Null
		}
		return v
	}
	for day := 0; day < 4; day++ {
		for m := 0; m < 50+rng.IntN(30); m += 1 + rng.IntN(3) {
			s.Times = append(s.Times, at(day, 13, 0).Unix()+int64(m)*60)
			px := Num(900+rng.IntN(200)) / 100
			s.Open = append(s.Open, maybe(px))
			s.High = append(s.High, maybe(px+0.05))
			s.Low = append(s.Low, maybe(px-0.05))
			s.Close = append(s.Close, maybe(px+0.01))
			vol := Num(rng.IntN(1e6)) / 100
			if rng.IntN(40) == 0 {
				vol += 0.001 // not whole cents: the sum turns to floats
			}
			s.Volume = append(s.Volume, maybe(vol))
			s.Quantity = append(s.Quantity, int64(rng.IntN(1000)))
		}
	}
	u.Intraday = append(u.Intraday, s)
	ds := mustBuild(t, u)
	same := func(x, y Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	n := 0
	for i := range ds.Assets() {
		a := &ds.Assets()[i]
		if a.Intraday.Len() == 0 {
			continue
		}
		n++
		if a.cum == nil || a.cum.p.Load() != nil {
			t.Fatalf("%s: after Build, running aggregates %v (want a holder, not built)", a.Ticker, a.cum)
		}
		ref := a.buildRunAgg()
		for j, tm := range a.Intraday.Times {
			r := a.sessionAgg(j, DateOfUnix(tm))
			if !same(r.open, ref.open[j]) || !same(r.high, ref.high[j]) || !same(r.low, ref.low[j]) || !same(r.close, ref.close[j]) ||
				!same(r.vol.value(), ref.vol[j]) || !same(r.qty, ref.qty[j]) {
				t.Fatalf("%s bar %d: session aggregate %+v (volume %v), columns %v %v %v %v %v %v", a.Ticker, j, r, r.vol.value(),
					ref.open[j], ref.high[j], ref.low[j], ref.close[j], ref.vol[j], ref.qty[j])
			}
		}
		if a.Latest.Intraday {
			last := a.Intraday.Len() - 1
			if !same(a.Latest.Close, ref.close[last]) || !same(a.Latest.Volume, ref.vol[last]) || !same(a.Latest.High, ref.high[last]) {
				t.Errorf("%s: Latest %+v, columns' last bar close %v volume %v high %v", a.Ticker, a.Latest, ref.close[last], ref.vol[last], ref.high[last])
			}
		}
		if a.Intraday.Len() > 1 {
			a.QuoteAt(time.Unix(a.Intraday.Times[0]+60, 0))
			c := a.cum.p.Load()
			if c == nil {
				t.Fatalf("%s: a quote of the first bar left the running aggregates unbuilt", a.Ticker)
			}
			a.QuoteAt(time.Unix(a.Intraday.Times[0]+60, 0))
			if a.cum.p.Load() != c {
				t.Errorf("%s: running aggregates built twice", a.Ticker)
			}
		}
	}
	if n < 2 {
		t.Fatalf("%d assets with intraday bars", n)
	}
}

// Quotes asked at once of an asset whose running aggregates are not built
// yet all get the same answer (run with -race: the build is published
// atomically).
func TestRunAggConcurrent(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	p, _ := ds.Asset("PETR4")
	tm := time.Unix(p.Intraday.Times[0]+60, 0)
	want := p.quoteAt(tm.Unix())
	p.cum = new(lazyAgg) // start again unbuilt
	var wg sync.WaitGroup
	got := make([]Quote, 8)
	for g := range got {
		wg.Go(func() { got[g] = p.QuoteAt(tm) })
	}
	wg.Wait()
	for g, q := range got {
		if !quoteEq(q, want) {
			t.Errorf("goroutine %d: %+v, want %+v", g, q, want)
		}
	}
}
