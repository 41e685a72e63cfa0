package engine_test

import (
	"cmp"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var (
	asOfDemoOnce sync.Once
	asOfDemo     *engine.Dataset
	asOfDemoErr  error
)

// raceDemoSize is the demo the demo tests walk under the race detector:
// every kind of data of the scale-1 demo (splits, restatements, funds'
// distributions, BDRs, 1-minute bars) for a tenth of its issuers and
// ten years of history. Under -race the scale-1 demo takes these tests
// minutes (TestBuildCashDemo 124 s against 7.4 s without); make test
// runs them on the scale-1 demo in its pass without -race.
var raceDemoSize = demo.Size{Companies: 45, SponsoredBDRs: 4, UnsponsoredBDRs: 4, FIIs: 30, ETFs: 8, IntradayTickers: 15, IntradaySessions: 3,
	ReportsFrom: 2020, FundReportsFrom: 2020, EventsFrom: 2022, HistoryFrom: 2016}

// demoUniverse returns the seed-1 demo: scale 1, or raceDemoSize under
// the race detector.
func demoUniverse() *engine.Universe {
	if raceEnabled {
		return demo.GenerateSize(1, raceDemoSize)
	}
	return demo.Generate(1, 1)
}

// mustAsOfDemo returns demoUniverse's Dataset (without derived ratios),
// built once.
func mustAsOfDemo(tb testing.TB) *engine.Dataset {
	tb.Helper()
	asOfDemoOnce.Do(func() { asOfDemo, asOfDemoErr = engine.Build(demoUniverse()) })
	if asOfDemoErr != nil {
		tb.Fatal(asOfDemoErr)
	}
	return asOfDemo
}

// On the demo, the splits cashAt orders by the positions Build keeps are
// in the order of a scan of the Universe.
func TestShareActionUniverseOrderDemo(t *testing.T) {
	n := engine.CheckShareActionOrder(t, mustAsOfDemo(t))
	t.Logf("%d issuers list their share actions out of the Universe's order", n)
}

// On the demo, with one volume in every ten sessions' bars missing and
// one in ten set to 1000 (ties), the screener's rows at as_of are by
// volume descending, missing last, then ticker: each row strictly before
// the next.
func TestScreenerAtByVolumeDemo(t *testing.T) {
	u := demoUniverse()
	for i := range u.Daily {
		vs := u.Daily[i].Volume
		for j := range vs {
			switch (i + j) % 10 {
			case 0:
				vs[j] = engine.Null
			case 1:
				vs[j] = 1000
			}
		}
	}
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	s := ds.Screener()
	last := engine.SessionClose(ds.LastSession())
	ties := 0
	for _, at := range []time.Time{last, last.AddDate(0, -1, 0), last.AddDate(-1, 0, 0), last.AddDate(-5, 0, -3)} {
		tab, p := s.At(at, nil)
		if len(p.ByVolume) == 0 {
			t.Fatalf("at %v: no row", at)
		}
		for i := 1; i < len(p.ByVolume); i++ {
			x, y := p.ByVolume[i-1], p.ByVolume[i]
			vx, vy := p.Volume[x], p.Volume[y]
			c := 0
			switch {
			case vx.Valid() && !vy.Valid():
				c = -1
			case !vx.Valid() && vy.Valid():
				c = 1
			case vx.Valid():
				c = cmp.Compare(vy, vx)
			}
			if c == 0 {
				ties++
				c = cmp.Compare(p.TickerOf(tab, int(x)), p.TickerOf(tab, int(y)))
			}
			if c >= 0 {
				t.Fatalf("at %v: row %s (volume %v) before %s (volume %v)", at, p.TickerOf(tab, int(x)), vx, p.TickerOf(tab, int(y)), vy)
			}
		}
	}
	if ties == 0 {
		t.Fatal("no two rows of the same volume: the tickers' order is not exercised")
	}
}
