package engine

import (
	"testing"
	"time"
)

// The withholding on interest on equity follows its table by the
// event's prior_ex_date: 15 % from 1996 (and before, when interest on
// equity did not exist), 17.5 % from 2026-01-01; every other
// distribution keeps its gross value; a missing value stays missing.
func TestNetCashValue(t *testing.T) {
	d := func(y int, m time.Month, day int) Date { return MakeDate(y, m, day) }
	for _, c := range []struct {
		name  string
		gross Num
		prior Date
		net   Num // the fraction kept: want gross × net, in float64
	}{
		{CashInterest, 1, d(1995, time.December, 29), 0.85},
		{CashInterest, 1, d(1996, time.January, 1), 0.85},
		{CashInterest, 0.4702, d(2021, time.December, 17), 0.85},
		{CashInterest, 1, d(2025, time.December, 31), 0.85},
		{CashInterest, 1, d(2026, time.January, 1), 0.825},
		{CashInterest, 0.018182, d(2026, time.January, 30), 0.825},
		{CashInterest, 1, NoDate, 0.85},
		{CashDividend, 0.37, d(2026, time.March, 2), 1},
		{"RENDIMENTO", 1.1, d(2026, time.March, 2), 1},
		{"RESTITUTION", 0.5, d(2020, time.March, 2), 1},
		{"AMORTIZATION", 0.5, d(2026, time.March, 2), 1},
	} {
		if got, want := NetCashValue(c.name, c.gross, c.prior), c.gross*c.net; got != want {
			t.Errorf("%s %v on %s: net %v, want %v", c.name, c.gross, c.prior, got, want)
		}
	}
	if got := NetCashValue(CashInterest, Null, d(2026, time.March, 2)); got.Valid() {
		t.Errorf("missing gross: net %v, want null", got)
	}
}

// The table's rows are in date order, each rate in (0, 1) and each Net
// the decimal 1 − Rate.
func TestInterestWithholdingTable(t *testing.T) {
	for i, r := range InterestWithholding {
		if i > 0 && r.From <= InterestWithholding[i-1].From {
			t.Errorf("row %d (%s) not after row %d", i, r.From, i-1)
		}
		if r.Rate <= 0 || r.Rate >= 1 || Sum(r.Rate, r.Net) != 1 || r.Law == "" {
			t.Errorf("row %d: %+v", i, r)
		}
	}
	if r := InterestWithholdingAt(MakeDate(2026, time.November, 20)); r.Rate != 0.175 {
		t.Errorf("2026-11-20: rate %v, want 0.175", r.Rate)
	}
}
