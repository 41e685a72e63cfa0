package ratios

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// hostileUniverse builds a small universe from seed with awkward data:
// NaN, zero, negative and infinite values, duplicate and out-of-order
// filings, missing statements, reports after the last session, odd share
// counts and unit factors.
func hostileUniverse(seed uint64) *engine.Universe {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	num := func() engine.Num {
		switch rng.IntN(12) {
		case 0:
			return engine.Null
		case 1:
			return 0
		case 2:
			return engine.Num(math.Inf(1 - 2*rng.IntN(2)))
		case 3:
			return engine.Num(-rng.Float64() * 1e9)
		case 4:
			return engine.Num(1e300)
		}
		return engine.Num(rng.Float64() * 1e9)
	}
	date := func() engine.Date {
		return engine.MakeDate(2019+rng.IntN(6), time.Month(1+rng.IntN(12)), 1+rng.IntN(28))
	}
	u := &engine.Universe{}
	classes := []string{engine.ClassCS, engine.ClassPS, engine.ClassPSA, engine.ClassPSE, engine.ClassUnit, engine.ClassBDR, engine.ClassFundUnit}
	for c := 0; c < 1+rng.IntN(3); c++ {
		id := string(rune('A' + c))
		u.Companies = append(u.Companies, engine.Company{ID: id})
		for k := 0; k < rng.IntN(4); k++ {
			t := id + string(rune('0'+k))
			u.Securities = append(u.Securities, engine.Security{Ticker: t, CompanyID: id, ISIN: "I" + t,
				StockType: classes[rng.IntN(len(classes))], UnitFactor: num(), LiquidityRank: rng.IntN(3)})
			s := engine.Series{Ticker: t}
			d := engine.MakeDate(2019, 1, 1)
			for i := 0; i < rng.IntN(300); i++ {
				d += engine.Date(1 + rng.IntN(10))
				s.Dates = append(s.Dates, d)
				s.Close = append(s.Close, num())
			}
			u.Daily = append(u.Daily, s)
			for i := 0; i < rng.IntN(6); i++ {
				u.CashActions = append(u.CashActions, engine.CashAction{ID: t + string(rune('a'+i)), EventID: t + string(rune('a'+i%3)),
					Version: rng.IntN(3), CompanyID: engine.Intern(id), Ticker: engine.Intern(t), Name: engine.MustLabel([]string{"DIVIDEND", "INTEREST_ON_EQUITY", "RESTITUTION"}[rng.IntN(3)]),
					PriorExDate: date(), DeclaredValue: num()})
			}
			if rng.IntN(3) == 0 {
				u.ShareActions = append(u.ShareActions, engine.ShareAction{CompanyID: id, Ticker: t, PriorExDate: date(), Factor: num()})
			}
		}
		if rng.IntN(2) == 0 {
			u.Renames = append(u.Renames, engine.TickerRename{From: id + "9", To: id + "0"}, engine.TickerRename{From: id + "0", To: id + "9"})
		}
		for i := 0; i < rng.IntN(4); i++ {
			u.Shares = append(u.Shares, engine.SharesPoint{CompanyID: id, Date: date(), Common: rng.Int64N(1e9) - 1e8,
				Preferred: rng.Int64N(1e9), Treasury: rng.Int64N(2e9)})
		}
		for i := 0; i < rng.IntN(30); i++ {
			ref := engine.MakeDate(2019+rng.IntN(7), time.Month(3*(1+rng.IntN(4))+1), 1) - 1
			form := "ITR"
			if rng.IntN(3) == 0 {
				form = "DFP"
			}
			pub := ref.Time().AddDate(0, rng.IntN(8), 0)
			for _, st := range []string{"DRE", "BPA", "BPP", "DVA", "DFC_MI", "DRA", "XYZ"} {
				if rng.IntN(4) == 0 {
					continue
				}
				r := engine.Report{CompanyID: id, Statement: engine.MustLabel(st), Form: engine.MustLabel(form), ReferenceDate: ref, StartDate: engine.NoDate, EndDate: ref,
					PublishDate: engine.StampOf(pub), Version: 1 + rng.IntN(2), Aggregation: engine.MustLabel([]string{engine.AggConsolidated, engine.AggIndividual}[rng.IntN(2)])}
				for _, code := range []string{"1", "1.01", "1.01.01", "1.01.02", "1.01.04", "2.01", "2.01.04", "2.02.01", "2.03",
					"3.01", "3.03", "3.05", "3.06.02", "3.08", "3.11", "7.04.01", "7.08.04.01", "7.08.04.02", "6.01.01.01"} {
					if rng.IntN(5) > 0 {
						r.Accounts = append(r.Accounts, engine.NewAccount(code, "Depreciação", false, num()))
					}
				}
				u.Reports = append(u.Reports, r)
			}
		}
	}
	for i := 0; i < rng.IntN(5); i++ {
		u.FundReports = append(u.FundReports, engine.FundReport{FundID: "A", ReferenceDate: date(), Version: 1, NAVPerShare: num(), DividendYield: num()})
	}
	return u
}

// FuzzDerive checks that Derive never panics and that its output is clean:
// no infinities, Vars of catalog length, strictly ordered points.
func FuzzDerive(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 3, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		d, err := Derive(hostileUniverse(seed))
		if err != nil {
			t.Fatal(err)
		}
		for i := range d.Ratios {
			p := &d.Ratios[i]
			if math.IsInf(float64(p.Value), 0) {
				t.Fatalf("infinite value %+v", p)
			}
			if int(p.Indicator) >= len(d.Catalog) || len(d.Vars(p)) != len(d.Catalog[p.Indicator].Variables) {
				t.Fatalf("bad point %+v", p)
			}
			if i > 0 {
				q := &d.Ratios[i-1]
				c := strings.Compare(q.CompanyID.String(), p.CompanyID.String())
				for _, x := range []int{int(q.Indicator) - int(p.Indicator), strings.Compare(q.Class.String(), p.Class.String()),
					strings.Compare(q.Frequency.String(), p.Frequency.String()), int(q.ReferenceDate) - int(p.ReferenceDate), q.PublishDate.Compare(p.PublishDate)} {
					if c == 0 {
						c = x
					}
				}
				if c >= 0 {
					t.Fatalf("points %d and %d out of order or duplicated:\n%+v\n%+v", i-1, i, *q, *p)
				}
			}
		}
		for _, p := range d.FundRatios {
			if math.IsInf(float64(p.Value), 0) {
				t.Fatalf("infinite fund value %+v", p)
			}
		}
	})
}
