package ratios

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// synthUniverse builds a demo-sized universe: n companies with eight fiscal
// years (2017-2024) of ITR and DFP filings (DRE, DRA, BPA, BPP, DVA,
// DFC_MI; individual and consolidated; about 5 % re-filed), CS/PS tickers
// (every third company also a UNIT), daily closes, yearly share counts and
// quarterly dividends, and n/2 funds with monthly reports.
func synthUniverse(n int) *engine.Universe {
	rng := rand.New(rand.NewPCG(1, 2))
	u := &engine.Universe{Meta: engine.Meta{AsOf: time.Date(2024, 12, 30, 21, 0, 0, 0, time.UTC)}}
	var sessions []engine.Date
	for d := engine.MakeDate(2016, 1, 1); d <= engine.MakeDate(2024, 12, 30); d++ {
		if wd := d.Time().Weekday(); wd != time.Saturday && wd != time.Sunday {
			sessions = append(sessions, d)
		}
	}
	closes := func(base float64) engine.Series {
		s := engine.Series{Dates: sessions, Close: make([]engine.Num, len(sessions))}
		p := base
		for i := range s.Close {
			p *= 1 + (rng.Float64()-0.5)*0.04
			s.Close[i] = engine.Num(p)
		}
		return s
	}
	filler := func(prefix string, k int) []engine.Account {
		out := make([]engine.Account, k)
		for i := range out {
			out[i] = engine.NewAccount(fmt.Sprintf("%s.%02d.%02d", prefix, 50+i/10, i%10), "Outros", false, engine.Num(rng.Float64()*1e6))
		}
		return out
	}
	for c := 0; c < n; c++ {
		id := fmt.Sprintf("%014d", 10000000000000+c)
		root := fmt.Sprintf("C%03d", c)
		u.Companies = append(u.Companies, engine.Company{ID: id, Symbol: root, Kind: engine.KindCompany})
		classes := []string{engine.ClassCS, engine.ClassPS}
		if c%3 == 0 {
			classes = append(classes, engine.ClassUnit)
		}
		for k, cl := range classes {
			t := root + []string{"3", "4", "11"}[k]
			sec := engine.Security{Ticker: t, CompanyID: id, ISIN: "BR" + t, StockType: cl, UnitFactor: engine.Null, LiquidityRank: c*3 + k + 1}
			if cl == engine.ClassUnit {
				sec.UnitFactor = 3
			}
			u.Securities = append(u.Securities, sec)
			s := closes(5 + rng.Float64()*50)
			s.Ticker = t
			u.Daily = append(u.Daily, s)
			for y := 2016; y <= 2024; y++ {
				for q := 0; q < 4; q++ {
					u.CashActions = append(u.CashActions, engine.CashAction{
						ID: fmt.Sprintf("%s-%d-%d", t, y, q), EventID: fmt.Sprintf("%s-%d-%d", t, y, q), Version: 1,
						CompanyID: engine.Intern(id), Ticker: engine.Intern(t), StockType: engine.MustLabel(cl), ISIN: engine.Intern("BR" + t), Name: engine.MustLabel("DIVIDEND"),
						PriorExDate: engine.MakeDate(y, time.Month(3*q+2), 10), DeclaredValue: engine.Num(rng.Float64()),
					})
				}
			}
		}
		for y := 2016; y <= 2024; y++ {
			u.Shares = append(u.Shares, engine.SharesPoint{CompanyID: id, Date: engine.MakeDate(y, 1, 1),
				Common: 1e8 + int64(rng.IntN(1e6)), Preferred: 5e7, Treasury: int64(rng.IntN(1e6))})
		}
		scale := 1e6 * (1 + rng.Float64()*100)
		for y := 2017; y <= 2024; y++ {
			for q := 1; q <= 4; q++ {
				form, start := "ITR", engine.MakeDate(y, time.Month(3*q-2), 1)
				if q == 4 {
					form, start = "DFP", engine.MakeDate(y, 1, 1)
				}
				ref := engine.MakeDate(y, time.Month(3*q+1), 1) - 1
				pub := ref.Time().AddDate(0, 1, 10).Add(20 * time.Hour)
				mult := 1.0
				if q == 4 {
					mult = 4
				}
				f := func() float64 { return scale * mult * (0.5 + rng.Float64()) }
				b := func() float64 { return scale * 10 * (0.5 + rng.Float64()) }
				fg := fig{form: form, ref: ref, start: start, pub: pub, ver: 1,
					rev: f(), cogs: -f() / 2, ebit: f() / 5, finExp: -f() / 20, preTax: f() / 6, tax: -f() / 20, ni: f() / 8,
					da: -f() / 20, jcp: f() / 50, div: f() / 40,
					assets: b() * 3, ca: b(), cash: b() / 5, sti: b() / 10, inv: b() / 5, cl: b() / 2, std: b() / 5, ltd: b(), eq: b()}
				versions := []fig{fg}
				if rng.IntN(20) == 0 {
					v2 := fg
					v2.ver, v2.pub, v2.rev = 2, pub.AddDate(0, 2, 0), fg.rev*1.01
					versions = append(versions, v2)
				}
				for _, v := range versions {
					for _, agg := range []string{engine.AggConsolidated, engine.AggIndividual} {
						rs := v.reports(id, agg)
						for i := range rs {
							prefix := map[string]string{"DRE": "3", "DVA": "7", "BPA": "1", "BPP": "2"}[rs[i].Statement.String()]
							rs[i].Accounts = append(rs[i].Accounts, filler(prefix, 30)...)
						}
						dfc := engine.Report{CompanyID: id, Statement: engine.LabelDFCMI, Aggregation: engine.MustLabel(agg), Form: engine.MustLabel(form), ReferenceDate: ref,
							StartDate: start, EndDate: ref, PublishDate: engine.StampOf(v.pub), RetrievalDate: engine.StampOf(v.pub), Version: v.ver,
							Accounts: append([]engine.Account{engine.NewAccount("6.01", "", false, engine.Num(f())), engine.NewAccount("6.02", "", false, engine.Num(-f()))}, filler("6", 20)...)}
						dra := dfc
						dra.Statement = engine.LabelDRA
						dra.Accounts = []engine.Account{engine.NewAccount("4.01", "", false, engine.Num(v.ni)), engine.NewAccount("4.03", "", false, engine.Num(v.ni))}
						u.Reports = append(u.Reports, rs...)
						u.Reports = append(u.Reports, dfc, dra)
					}
				}
			}
		}
	}
	for f := 0; f < n/2; f++ {
		id := fmt.Sprintf("%014d", 20000000000000+f)
		t := fmt.Sprintf("F%03d11", f)
		u.Companies = append(u.Companies, engine.Company{ID: id, Kind: engine.KindFII})
		u.Securities = append(u.Securities, engine.Security{Ticker: t, CompanyID: id, StockType: engine.ClassFundUnit, UnitFactor: engine.Null})
		s := closes(100)
		s.Ticker = t
		u.Daily = append(u.Daily, s)
		for y := 2017; y <= 2024; y++ {
			for m := time.January; m <= time.December; m++ {
				ref := engine.MakeDate(y, m, 1)
				u.FundReports = append(u.FundReports, engine.FundReport{FundID: id, ReferenceDate: ref, Version: 1,
					PublishDate: ref.Time().AddDate(0, 1, 15), NetAssets: 1e8, SharesOut: 1e6, NAVPerShare: engine.Num(90 + rng.Float64()*20),
					Investors: 1000, DividendYield: 0.008, MonthlyReturn: 0.01})
			}
		}
	}
	return u
}

func TestSynthUniverse(t *testing.T) {
	u := synthUniverse(6)
	d := mustDerive(t, u)
	periods := 6 * 32
	if len(d.Ratios) < 100*periods || len(d.Ratios) > 400*periods {
		t.Errorf("%d points for %d company-periods", len(d.Ratios), periods)
	}
	if len(d.FundRatios) != 3*96*7 {
		t.Errorf("%d fund points", len(d.FundRatios))
	}
	valid := 0
	for _, p := range d.Ratios {
		if p.Value.Valid() {
			valid++
		}
	}
	if valid*10 < len(d.Ratios)*8 {
		t.Errorf("only %d of %d points have a value", valid, len(d.Ratios))
	}
}

var sinkDerived engine.Derived

// BenchmarkDerive runs Derive on a demo-sized universe (450 companies,
// 32 periods each, 225 funds with 96 months each). cpu-ns/op is the
// process CPU time per run, summed over both cores.
func BenchmarkDerive(b *testing.B) {
	u := synthUniverse(450)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, n := cpuTime(), 0
	for b.Loop() {
		d, err := Derive(u)
		if err != nil {
			b.Fatal(err)
		}
		sinkDerived = d
		n++
	}
	// CPU time (all goroutines and the collector) per Derive: wall time
	// says little on a shared machine.
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
	b.ReportMetric(float64(len(sinkDerived.Ratios)), "points")
	b.ReportMetric(float64(len(sinkDerived.Ratios))/(450*32), "points/company-period")
	b.ReportMetric(float64(len(sinkDerived.FundRatios)), "fundpoints")
}
