package demo

import "github.com/pregao/pregao/engine"

// Counts are the entity and row counts of a Universe.
type Counts struct {
	Sectors, Companies, Securities, Renames, Indexes     int
	Daily, DailyRows, Intraday, IntradayRows             int
	Reports, Accounts, Shares, CashActions               int
	ShareActions, FundReports, InsiderReports, Documents int
}

// Count returns u's counts.
func Count(u *engine.Universe) Counts {
	c := Counts{Sectors: len(u.Sectors), Companies: len(u.Companies), Securities: len(u.Securities), Renames: len(u.Renames),
		Indexes: len(u.Indexes), Daily: len(u.Daily), Intraday: len(u.Intraday), Reports: len(u.Reports), Shares: len(u.Shares),
		CashActions: len(u.CashActions), ShareActions: len(u.ShareActions), FundReports: len(u.FundReports),
		InsiderReports: len(u.InsiderReports), Documents: len(u.Documents)}
	for i := range u.Daily {
		c.DailyRows += u.Daily[i].Len()
	}
	for i := range u.Intraday {
		c.IntradayRows += u.Intraday[i].Len()
	}
	for i := range u.Reports {
		c.Accounts += len(u.Reports[i].Accounts)
	}
	return c
}
