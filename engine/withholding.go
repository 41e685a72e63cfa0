package engine

import "time"

// Cash distribution names (CashAction.Name) the withholding table reads.
const (
	CashDividend = "DIVIDEND"
	CashInterest = "INTEREST_ON_EQUITY"
)

// WithholdingRate is one row of the table of income tax withheld at
// source on interest on equity (juros sobre capital próprio, JCP) paid to
// a shareholder resident in Brazil: the rate in force from From (inclusive)
// until the next row's From.
type WithholdingRate struct {
	From Date // first day in force
	Rate Num  // fraction of the gross value withheld
	Net  Num  // 1 − Rate, written as its decimal (the fraction the holder receives)
	Law  string
}

// InterestWithholding is the table of the withholding on interest on
// equity, oldest row first (docs/api.md, "Total return", lists it with its
// sources):
//
//   - 15 % from 1996-01-01: Lei 9.249/1995, art. 9, § 2 (the law that
//     created interest on equity, in force from 1996);
//   - 17.5 % from 2026-01-01: Lei Complementar 224/2025 (published
//     2025-12-26), which raised the rate of art. 9, § 2; income-tax
//     changes of that law take effect from 2026-01-01.
//
// The tax falls due when the interest is paid or credited to the holder;
// the data carry no credit date, so NetCashValue reads the table at the
// event's prior_ex_date (the record date, on which most companies credit
// it). Dividends have no per-share withholding: the 10 % withheld from
// 2026 on dividends above BRL 50,000 a month from one company to one
// individual (Lei 15.270/2025) depends on the holder, not on the share.
var InterestWithholding = []WithholdingRate{
	{From: MakeDate(1996, time.January, 1), Rate: 0.15, Net: 0.85, Law: "Lei 9.249/1995, art. 9, § 2"},
	{From: MakeDate(2026, time.January, 1), Rate: 0.175, Net: 0.825, Law: "Lei Complementar 224/2025"},
}

// InterestWithholdingAt returns the row of InterestWithholding in force on
// d: the last row from on or before d (the first row before 1996, when
// interest on equity did not exist; a missing date reads the first row).
func InterestWithholdingAt(d Date) WithholdingRate {
	r := InterestWithholding[0]
	if !d.Valid() {
		return r
	}
	for _, x := range InterestWithholding[1:] {
		if x.From > d {
			break
		}
		r = x
	}
	return r
}

// NetCashValue returns the net value per share of a cash distribution of
// gross value gross (BRL per share) whose prior_ex_date is d: gross ×
// Net of the withholding row in force on d for interest on equity,
// gross for every other distribution. Null when gross is missing.
func NetCashValue(name string, gross Num, d Date) Num {
	if !gross.Valid() || name != CashInterest {
		return gross
	}
	return gross * InterestWithholdingAt(d).Net
}
