package engine

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// FuzzBuild breaks the test universe in ways driven by the input and
// checks that Build either succeeds or returns an ErrInvalid error (never
// a recovered panic), and that the resulting Dataset answers every reader
// without panicking.
func FuzzBuild(f *testing.F) {
	for _, s := range []string{"", "\x00\x01\x02", "\x01\x00\x02\x01\x03\x03", "\x05\x03\x00\x0a\x01\x01", "\x09\x04\x03\x0b\x00\x05"} {
		f.Add([]byte(s))
	}
	tickers := []string{"PETR4", "PETR3", "VALE3", "SPUN3", "VVAR3", "VIIA3", "HGLG11", "SELIC", "NOPE3", ""}
	nums := []Num{0, -1, Null, Num(math.Inf(1)), 1e-300, 1e300, 0.5, 2}
	f.Fuzz(func(t *testing.T, ops []byte) {
		u := testUniverse(t)
		for len(ops) >= 3 {
			op, a, b := ops[0], int(ops[1]), int(ops[2])
			ops = ops[3:]
			switch op % 12 {
			case 0:
				s := &u.Daily[a%len(u.Daily)]
				if n := s.Len(); n > 1 {
					i, j := a%n, b%n
					s.Dates[i], s.Dates[j] = s.Dates[j], s.Dates[i]
				}
			case 1:
				u.ShareActions[a%len(u.ShareActions)].Factor = nums[b%len(nums)]
			case 2:
				s := &u.Daily[a%len(u.Daily)]
				s.Volume = s.Volume[:b%(len(s.Volume)+1)]
			case 3:
				u.Renames = append(u.Renames, TickerRename{From: tickers[a%len(tickers)], To: tickers[b%len(tickers)], Date: d(a % 6)})
			case 4:
				u.CashActions[a%len(u.CashActions)].Ticker = Intern(tickers[b%len(tickers)])
			case 5:
				sa := &u.ShareActions[3]
				sa.Legs[a%len(sa.Legs)].Ticker = tickers[b%len(tickers)]
				sa.Legs[a%len(sa.Legs)].Factor = nums[b%len(nums)]
			case 6:
				u.Securities[a%len(u.Securities)].CompanyID = []string{"", petroID, "X"}[b%3]
			case 7:
				in := &u.Intraday[0]
				in.Times[a%len(in.Times)] = int64(b) * 60
			case 8:
				u.Sectors[a%len(u.Sectors)].ParentID = u.Sectors[b%len(u.Sectors)].ID
			case 9:
				s := &u.Daily[a%len(u.Daily)]
				if s.Len() > 0 {
					s.Close[b%s.Len()] = nums[b%len(nums)]
				}
			case 10:
				u.Indexes[0].Members = append(u.Indexes[0].Members, IndexMember{Ticker: tickers[a%len(tickers)]})
			case 11:
				u.Daily[a%len(u.Daily)].Ticker = tickers[b%len(tickers)]
			}
		}
		ds, err := Build(u)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "BUG") {
				t.Fatalf("Build error %v", err)
			}
			return
		}
		buf := make([]Bar, 0, 16)
		for i := range ds.Assets() {
			a := &ds.Assets()[i]
			for h := 0; h < 7*24; h += 5 {
				_ = a.QuoteAt(at(0, h, 0))
			}
			buf = a.AppendDaily(buf[:0], 0, a.Daily.Len(), true)
			buf = a.AppendIntradayBuckets(buf[:0], 0, a.Intraday.Len(), 120, true)
		}
		for i := range ds.Indexes() {
			ds.Indexes()[i].RankAt(at(4, 13, 2), true, nil)
		}
		_ = ds.Screener().Len()
	})
}
