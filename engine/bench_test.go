package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchUniverse returns a synthetic universe of n companies with two
// tickers each, days daily sessions per ticker, 10 sessions of 1-minute
// bars (7 hours) for the first 100 tickers, and a split every 500 sessions.
func benchUniverse(tb testing.TB, n, days int) *Universe {
	tb.Helper()
	u := &Universe{}
	for c := 0; c < n; c++ {
		id := fmt.Sprintf("%014d", 10000000000000+c)
		sym := fmt.Sprintf("C%03d", c)
		u.Companies = append(u.Companies, Company{ID: id, CVMCode: fmt.Sprint(20000 + c), Symbol: sym, Kind: KindCompany, Employees: int64(c), FreeFloat: Null})
		for k, cl := range []string{ClassCS, ClassPS} {
			t := fmt.Sprintf("%s%d", sym, 3+k)
			u.Securities = append(u.Securities, Security{Ticker: t, CompanyID: id, StockType: cl, UnitFactor: Null, LiquidityRank: 2*c + k + 1})
			s := Series{Ticker: t}
			for i := 0; i < days; i++ {
				p := Num(10 + i%50)
				s.Dates = append(s.Dates, Date(10000+i))
				s.Open = append(s.Open, p)
				s.High = append(s.High, p+1)
				s.Low = append(s.Low, p-1)
				s.Close = append(s.Close, p)
				s.Volume = append(s.Volume, p*1000)
				s.Quantity = append(s.Quantity, 1000)
				s.Trades = append(s.Trades, 10)
				if i%500 == 499 {
					u.ShareActions = append(u.ShareActions, ShareAction{CompanyID: id, Ticker: t, PriorExDate: Date(10000 + i), Type: ActStockSplit, Factor: 2})
				}
			}
			u.Daily = append(u.Daily, s)
			if len(u.Intraday) < 100 {
				in := Intraday{Ticker: t}
				for dd := days - 10; dd < days; dd++ {
					for m := 0; m < 420; m++ {
						p := Num(10 + m%7)
						in.Times = append(in.Times, int64(10000+dd)*86400+13*3600+int64(m)*60)
						in.Open = append(in.Open, p)
						in.High = append(in.High, p+0.5)
						in.Low = append(in.Low, p-0.5)
						in.Close = append(in.Close, p)
						in.Volume = append(in.Volume, p*100)
						in.Quantity = append(in.Quantity, 100)
					}
				}
				u.Intraday = append(u.Intraday, in)
			}
		}
	}
	return u
}

var benchDS *Dataset

func benchDataset(b *testing.B) *Dataset {
	b.Helper()
	if benchDS == nil {
		benchDS = mustBuild(b, benchUniverse(b, 500, 2500))
	}
	return benchDS
}

func BenchmarkResolve(b *testing.B) {
	ds := benchDataset(b)
	for _, tc := range []struct{ name, id string }{
		{"ticker", "C2504"},
		{"symbol", "C250"},
		{"company_id", fmt.Sprintf("%014d", 10000000000000+250)},
		{"company_id_punct", "10.000.000/0002-50"},
		{"ticker_lower", "c2504"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if _, err := ds.Resolve(tc.id); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				sinkResolved, _ = ds.Resolve(tc.id)
			}
		})
	}
	b.Run("ticker_parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, _ := ds.Resolve("C2504")
				if r.Asset == nil {
					panic("miss")
				}
			}
		})
	})
}

func BenchmarkDayIndex(b *testing.B) {
	ds := benchDataset(b)
	a, _ := ds.Asset("C1003")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sinkInt += a.DayIndex(Date(10000 + i%2600))
	}
}

func BenchmarkDayRangeAppendDaily(b *testing.B) {
	ds := benchDataset(b)
	a, _ := ds.Asset("C1003")
	buf := make([]Bar, 0, 300)
	for _, adjusted := range []bool{false, true} {
		b.Run(fmt.Sprintf("1y_adjusted=%v", adjusted), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				lo, hi := a.DayRange(Date(10000+1000), Date(10000+1251))
				buf = a.AppendDaily(buf[:0], lo, hi, adjusted)
			}
			sinkInt += len(buf)
		})
	}
}

func BenchmarkQuoteAt(b *testing.B) {
	ds := benchDataset(b)
	intr, _ := ds.Asset("C0003") // has intraday bars
	daily, _ := ds.Asset("C4003")
	t := time.Unix(int64(10000+2499)*86400+15*3600, 0)
	for _, tc := range []struct {
		name string
		a    *Asset
	}{{"intraday", intr}, {"daily", daily}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkQuote = tc.a.QuoteAt(t)
			}
		})
	}
}

func BenchmarkRankAt(b *testing.B) {
	u := benchUniverse(b, 50, 300)
	ix := Index{Symbol: "IBOV"}
	for _, s := range u.Securities {
		ix.Members = append(ix.Members, IndexMember{Ticker: s.Ticker})
	}
	u.Indexes = []Index{ix}
	ds := mustBuild(b, u)
	x, _ := ds.Index("IBOV")
	t := time.Unix(int64(10000+299)*86400+15*3600, 0)
	buf := make([]RankEntry, 0, 128)
	b.ReportAllocs()
	for b.Loop() {
		buf = x.RankAt(t, false, buf[:0])
	}
}

func BenchmarkBuild(b *testing.B) {
	u := benchUniverse(b, 500, 2500)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(u); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAggregate(b *testing.B) {
	ds := benchDataset(b)
	a, _ := ds.Asset("C0003") // 10 sessions of 1-minute bars
	buf := make([]Bar, 0, a.Intraday.Len())
	for _, width := range []int64{300, 1800} {
		b.Run(fmt.Sprintf("intraday_10d_%ds", width), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buf = a.AppendIntradayBuckets(buf[:0], 0, a.Intraday.Len(), width, false)
			}
			sinkInt += len(buf)
		})
	}
}

// BenchmarkQuoteBefore is the end-of-day view's read of one asset: the
// session before the last and an older one, from the bars or from the
// summaries a format 6 load gives.
func BenchmarkQuoteBefore(b *testing.B) {
	u := benchUniverse(b, 20, 2500)
	for _, sums := range []bool{false, true} {
		v := u
		if sums {
			v = withSummaries(u)
		}
		ds := mustBuild(b, v)
		a, _ := ds.Asset("C0104")
		for _, d := range []struct {
			name string
			at   Date
		}{{"last", Date(10000 + 2499)}, {"older", Date(10000 + 1000)}} {
			b.Run(fmt.Sprintf("summaries=%v/%s", sums, d.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkQuote = a.QuoteBefore(d.at)
				}
			})
		}
	}
}

// BenchmarkBuildCash is Build of a universe whose cash actions outweigh
// the rest (as at scale 10, where the cash steps are Build's longest
// path), stored in the engine's order as a format 6 snapshot holds them.
func BenchmarkBuildCash(b *testing.B) {
	u := benchUniverse(b, 200, 300)
	for i := range 300000 {
		s := &u.Securities[i%len(u.Securities)]
		ex := Date(10000 + (i*7)%300)
		u.CashActions = append(u.CashActions, CashAction{
			ID: fmt.Sprintf("ca%d", i), EventID: fmt.Sprintf("ev%d", i), Version: 1,
			DeclaredValue: Num(1+i%5) / 8, MonetaryCorrection: Null, NetValue: Num(1+i%5) / 10,
			PriorExDate: ex, PaymentDate: ex + 30, CompanyID: Intern(s.CompanyID), Ticker: Intern(s.Ticker),
		})
	}
	slices.SortStableFunc(u.CashActions, func(x, y CashAction) int { return CompareCashRows(&x, &y) })
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(u); err != nil {
			b.Fatal(err)
		}
	}
}
