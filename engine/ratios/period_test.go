package ratios

import (
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestPeriodFromDates: the period of a statement comes from its start and
// end dates, not from its form. Construtora Tenda's DFP of 2023-03-31
// holds a DRE of 2023-01-01..2023-03-31 (ÚLTIMO, revenue 651,443
// thousand): it is that quarter, never ANNUAL, and makes no TTM alone. A
// DFP of six months (Claranet's of 2022-06-30) is neither a year nor a
// quarter. An ITR's year-to-date DRE never stands for its quarter. (The
// quarter is also its fiscal year to date: YTD of a December year.)
func TestPeriodFromDates(t *testing.T) {
	tenda := fig{form: "DFP", ref: day("2023-03-31"), start: day("2023-01-01"), pub: at("2023-05-10"), ver: 1,
		rev: 651443e3, cogs: -518805e3, ebit: 50e6, preTax: 40e6, ni: 30e6, assets: 4176858e3, eq: 1e9}
	half := fig{form: "DFP", ref: day("2022-06-30"), start: day("2022-01-01"), pub: at("2022-09-10"), ver: 1,
		rev: 80e6, ni: 5e6, assets: 1e8, eq: 5e7}
	q2 := fig{form: "ITR", ref: day("2024-06-30"), start: day("2024-04-01"), pub: at("2024-08-10"), ver: 1, rev: 110, ni: 10, assets: 1000, eq: 500}
	q2ytd := q2
	q2ytd.start, q2ytd.rev, q2ytd.ni = day("2024-01-01"), 210, 19
	var rs []engine.Report
	rs = append(rs, tenda.reports("TEND", engine.AggConsolidated)...)
	rs = append(rs, half.reports("CLAR", engine.AggConsolidated)...)
	// The year to date after the quarter, and before it: the quarter wins
	// either way.
	rs = append(rs, q2.reports("ITRQ", engine.AggConsolidated)[:1]...)
	rs = append(rs, q2ytd.reports("ITRQ", engine.AggConsolidated)[:1]...)
	rs = append(rs, q2ytd.reports("ITRY", engine.AggConsolidated)[:1]...)
	rs = append(rs, q2.reports("ITRY", engine.AggConsolidated)[:1]...)
	d := mustDerive(t, &engine.Universe{Companies: []engine.Company{{ID: "TEND"}, {ID: "CLAR"}, {ID: "ITRQ"}, {ID: "ITRY"}}, Reports: rs})
	if ps := pointsOf(t, d, "TEND", engine.IndFundamental, "NET_REVENUE", "", engine.FreqAnnual, "2023-03-31"); len(ps) != 0 {
		t.Errorf("Tenda's quarter served as ANNUAL: %v", ps[0].Value)
	}
	// TTM needs the three quarters before it: missing, so null.
	if ps := pointsOf(t, d, "TEND", engine.IndFundamental, "NET_REVENUE", "", engine.FreqTTM, "2023-03-31"); len(ps) != 1 || ps[0].Value.Valid() {
		t.Errorf("Tenda's TTM %+v, want null", ps)
	}
	if ps := pointsOf(t, d, "TEND", engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2023-03-31"); len(ps) != 1 || ps[0].Value != 651443e3 {
		t.Errorf("Tenda's quarter: %+v", ps)
	}
	for _, p := range d.Ratios {
		if p.CompanyID.String() == "CLAR" {
			t.Fatalf("a six-month period gave %s %s %v", p.Frequency, p.ReferenceDate, p.Value)
		}
	}
	for _, id := range []string{"ITRQ", "ITRY"} {
		if ps := pointsOf(t, d, id, engine.IndFundamental, "NET_REVENUE", "", engine.FreqQuarterly, "2024-06-30"); len(ps) != 1 || ps[0].Value != 110 {
			t.Errorf("%s quarter %+v, want the three months' 110", id, ps)
		}
	}
}

// TestReportsAfterAsOf: a report whose reference date is after the
// snapshot's as-of day, or after the day it was retrieved, gives no ratio
// point: it is never a current value.
func TestReportsAfterAsOf(t *testing.T) {
	early := fig{form: "DFP", ref: day("2021-12-31"), start: day("2021-01-01"), pub: at("2022-03-01"), ver: 1, rev: 100, ni: 10, assets: 1000, eq: 500}
	late := fig{form: "DFP", ref: day("2022-12-31"), start: day("2022-01-01"), pub: at("2023-03-01"), ver: 1, rev: 200, ni: 20, assets: 1000, eq: 500}
	rs := append(early.reports("X", engine.AggConsolidated), late.reports("X", engine.AggConsolidated)...)
	// Retrieved before its period closed: not known either.
	odd := early
	odd.ref, odd.start, odd.pub = day("2022-06-30"), day("2021-07-01"), at("2022-03-02")
	for _, r := range odd.reports("Y", engine.AggConsolidated) {
		r.RetrievalDate = engine.StampOf(at("2022-03-02"))
		rs = append(rs, r)
	}
	u := &engine.Universe{Meta: engine.Meta{AsOf: at("2022-06-30")}, Companies: []engine.Company{{ID: "X"}, {ID: "Y"}}, Reports: rs}
	d := mustDerive(t, u)
	if ps := pointsOf(t, d, "X", engine.IndFundamental, "NET_REVENUE", "", engine.FreqAnnual, "2021-12-31"); len(ps) != 1 {
		t.Errorf("the year before the as-of day: %+v", ps)
	}
	for _, p := range d.Ratios {
		if p.ReferenceDate > day("2022-06-30") || p.CompanyID.String() == "Y" {
			t.Errorf("%s %s %s: a report not known on the as-of day", p.CompanyID, p.Frequency, p.ReferenceDate)
		}
	}
}

// TestTreasuryText: the formulas say what is computed: treasury shares are
// removed only when the share count's source gives them (B3's
// listed-company counts do not).
func TestTreasuryText(t *testing.T) {
	for _, id := range []string{"MARKET_CAP", "EARNINGS_PER_SHARE", "BOOK_VALUE_PER_SHARE"} {
		found := false
		for _, ind := range Catalog() {
			if ind.ID == id {
				found = true
				if !strings.Contains(ind.Formula, "B3's listed-company data does not") {
					t.Errorf("%s: %q", id, ind.Formula)
				}
			}
		}
		if !found {
			t.Errorf("%s not in the catalog", id)
		}
	}
}
