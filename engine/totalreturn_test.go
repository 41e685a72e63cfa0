package engine

import (
	"fmt"
	"math"
	"testing"
)

// trOf returns the total-return series of ticker over the sessions
// [from, to] of the test universe.
func trOf(t *testing.T, ds *Dataset, ticker string, from, to Date, net bool) []TRPoint {
	t.Helper()
	a, ok := ds.Asset(ticker)
	if !ok {
		t.Fatalf("no %s", ticker)
	}
	lo, hi := a.DayRange(from, to)
	return ds.AppendTotalReturn(nil, a, a.AppendDaily(nil, lo, hi, false), net)
}

// The index follows index_t = index_{t-1} × close_t × F_{t-1} /
// ((close_{t-1} − D_t) × F_t), written out by hand for the test
// universe: PETR4's interest on equity going ex on d1 (highest version:
// 1.2 + 0.1 gross, 1.1 net), its split 1:10 after d1 and its dividend
// going ex on d4; PETR3's dividend ex on d1 across a bonus and a reverse
// split; HGLG11, without events, its price return exactly.
func TestTotalReturnByHand(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for _, c := range []struct {
		ticker   string
		from     Date
		net      bool
		want     []float64
		wantCash []float64
	}{
		{"PETR4", d(0), false, []float64{1, 110 / 98.7, 110 / 98.7 * 115 / 110, 110 / 98.7 * 115 / 110 * 12 / 11.5, 110 / 98.7 * 115 / 110 * 12 / 11.5 * 12.6 / 11.5},
			[]float64{0, 1.3, 0, 0, 0.5}},
		{"PETR4", d(0), true, []float64{1, 110 / 98.9, 110 / 98.9 * 115 / 110, 110 / 98.9 * 115 / 110 * 12 / 11.5, 110 / 98.9 * 115 / 110 * 12 / 11.5 * 12.6 / 11.5},
			[]float64{0, 1.1, 0, 0, 0.5}},
		// A window starting on an ex-date: 1.0 there, its cash shown, not applied.
		{"PETR4", d(1), false, []float64{1, 115.0 / 110, 115.0 / 110 * 12 / 11.5, 115.0 / 110 * 12 / 11.5 * 12.6 / 11.5}, []float64{1.3, 0, 0, 0.5}},
		{"PETR4", d(2), false, []float64{1, 12 / 11.5, 12 / 11.5 * 12.6 / 11.5}, []float64{0, 0, 0.5}},
		{"PETR3", d(0), false, []float64{1, 1.05 / 0.79, 1.05 / 0.79, 1.05 / 0.79, 1.05 / 0.79}, []float64{0, 0.21, 0, 0, 0}},
		{"HGLG11", d(0), false, []float64{1, 151.0 / 150, 152.0 / 150, 153.0 / 150, 1}, []float64{0, 0, 0, 0, 0}},
	} {
		got := trOf(t, ds, c.ticker, c.from, d(4), c.net)
		if len(got) != len(c.want) {
			t.Fatalf("%s from %s: %d points, want %d", c.ticker, c.from, len(got), len(c.want))
		}
		for i, p := range got {
			if math.Abs(float64(p.Index)/c.want[i]-1) > 1e-14 || float64(p.Cash) != c.wantCash[i] {
				t.Errorf("%s from %s net=%v, %s: index %v cash %v, want %v cash %v", c.ticker, c.from, c.net, p.Date, p.Index, p.Cash, c.want[i], c.wantCash[i])
			}
		}
	}
	// No cash event and no share event in the window: the price return,
	// bit for bit.
	for i, p := range trOf(t, ds, "HGLG11", d(0), d(4), false) {
		if closes := []Num{150, 151, 152, 153, 150}; p.Index != closes[i]/closes[0] || p.Close != closes[i] {
			t.Errorf("HGLG11 %s: index %v, want %v", p.Date, p.Index, closes[i]/closes[0])
		}
	}
}

// ExCash sums the current versions by ticker and prior_ex_date; events
// without a prior_ex_date are left out.
func TestExCash(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	for _, c := range []struct {
		ticker string
		want   []ExCash
	}{
		{"PETR4", []ExCash{{d(0), 1.3, 1.1}, {d(3), 0.5, 0.5}}},
		{"PETR3", []ExCash{{d(0), 0.21, 0.21}}},
		{"VALE3", nil},
		{"HGLG11", nil},
	} {
		a, _ := ds.Asset(c.ticker)
		got := ds.ExCash(a)
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.ticker, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.ticker, got, c.want)
			}
		}
	}
}

// A session without a close has a null index; the next close steps from
// the last one, with the cash of both sessions; cash above the price
// leaves the rest of the series null; an empty window is empty.
func TestTotalReturnGaps(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	a, _ := ds.Asset("PETR4")
	bars := a.AppendDaily(nil, 0, a.Daily.Len(), false)
	bars[1].Close = Null
	got := ds.AppendTotalReturn(nil, a, bars, false)
	if got[1].Index.Valid() || got[1].Cash != 1.3 {
		t.Errorf("d1 without close: %+v", got[1])
	}
	if want := 1.0 * 115 / 98.7; math.Abs(float64(got[2].Index)/want-1) > 1e-14 {
		t.Errorf("d2 after the gap: %v, want %v", got[2].Index, want)
	}
	bars = a.AppendDaily(nil, 0, a.Daily.Len(), false)
	bars[0].Close = 1 // below the cash going ex on d1
	got = ds.AppendTotalReturn(nil, a, bars, false)
	if got[0].Index != 1 || got[1].Index.Valid() || got[4].Index.Valid() {
		t.Errorf("cash above the price: %+v", got)
	}
	if got := ds.AppendTotalReturn(nil, a, nil, false); len(got) != 0 {
		t.Errorf("no bars: %v", got)
	}
}

func TestTotalReturnAllocs(t *testing.T) {
	ds := mustBuild(t, testUniverse(t))
	a, _ := ds.Asset("PETR4")
	bars := a.AppendDaily(nil, 0, a.Daily.Len(), false)
	dst := make([]TRPoint, 0, 16)
	if n := testing.AllocsPerRun(100, func() { dst = ds.AppendTotalReturn(dst[:0], a, bars, true) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// trBenchUniverse is n tickers of years × 252 daily sessions each, with a
// cash event every 63 sessions (alternately dividend and interest on
// equity) and a 1:2 split in the middle of the history.
func trBenchUniverse(n, years int) *Universe {
	u := &Universe{Meta: Meta{Description: "total-return benchmark"}}
	sessions := years * 252
	first := MakeDate(2006, 1, 2)
	for i := range n {
		sym := string(rune('A'+i/26%26)) + string(rune('A'+i%26)) + string(rune('A'+i/676%26)) + "B"
		id := fmt.Sprintf("%014d", i+1)
		tk := sym + "3"
		u.Companies = append(u.Companies, Company{ID: id, Symbol: sym, Name: sym, Kind: KindCompany, Employees: -1, FreeFloat: Null})
		u.Securities = append(u.Securities, Security{Ticker: tk, CompanyID: id, StockType: ClassCS, Currency: "BRL", UnitFactor: Null})
		s := Series{Ticker: tk}
		c := 20.0
		for k := range sessions {
			d := first + Date(k*7/5)
			c *= 1 + 0.01*math.Sin(float64(k*(i+3)))
			if k == sessions/2 {
				c /= 2
			}
			p := Num(math.Round(c*100) / 100)
			s.Dates = append(s.Dates, d)
			s.Open, s.High, s.Low, s.Close = append(s.Open, p), append(s.High, p), append(s.Low, p), append(s.Close, p)
			s.Volume, s.Quantity, s.Trades = append(s.Volume, p*100), append(s.Quantity, 100), append(s.Trades, 1)
			if k > 0 && k%63 == 0 {
				name := CashDividend
				if k%126 == 0 {
					name = CashInterest
				}
				v := Num(math.Round(c*0.01*1e8) / 1e8)
				u.CashActions = append(u.CashActions, CashAction{ID: fmt.Sprintf("%s-%d", tk, k), EventID: fmt.Sprintf("%s-%d", tk, k), Version: 1,
					CompanyID: Intern(id), Ticker: Intern(tk), StockType: MustLabel(ClassCS), PriorExDate: s.Dates[k-1], Name: MustLabel(name), DeclaredValue: v,
					MonetaryCorrection: 0, NetValue: NetCashValue(name, v, s.Dates[k-1]), PaymentDate: NoDate})
			}
		}
		u.Daily = append(u.Daily, s)
		u.ShareActions = append(u.ShareActions, ShareAction{CompanyID: id, Ticker: tk, PriorExDate: s.Dates[sessions/2-1], Type: ActStockSplit, Factor: 2})
	}
	return u
}

// BenchmarkTotalReturn500x20y: the total-return series of 500 tickers of
// 20 years of daily sessions (5,040 each, 79 cash events and a split),
// from their unadjusted bars, as the API computes them (AppendDaily then
// AppendTotalReturn); ns/op is per ticker.
func BenchmarkTotalReturn500x20y(b *testing.B) {
	ds, err := Build(trBenchUniverse(500, 20))
	if err != nil {
		b.Fatal(err)
	}
	assets := ds.Assets()
	var bars []Bar
	var out []TRPoint
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a := &assets[i%len(assets)]
		bars = a.AppendDaily(bars[:0], 0, a.Daily.Len(), false)
		out = ds.AppendTotalReturn(out[:0], a, bars, i%2 == 1)
	}
	if len(out) != 5040 {
		b.Fatalf("%d points", len(out))
	}
}
