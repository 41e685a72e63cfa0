package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// TestReportFrequencyFromDates: /reports labels each statement with the
// period its start and end dates span, not with its form: a DFP of one
// quarter (a company changing its fiscal year) is QUARTERLY, its balance
// sheet too; an ITR's year to date and a DFP of six months are YTD; the
// frequency filter follows the label.
func TestReportFrequencyFromDates(t *testing.T) {
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	const enhz = "12345678000195"
	day := func(s string) engine.Date {
		d, err := engine.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	pub := time.Date(2023, 11, 10, 20, 0, 0, 0, time.UTC)
	rep := func(form, st, start, end string) engine.Report {
		s := engine.NoDate
		if start != "" {
			s = day(start)
		}
		code := "3.01"
		if st == "BPA" {
			code = "1"
		}
		return engine.Report{CompanyID: enhz, Statement: engine.MustLabel(st), Aggregation: engine.LabelConsolidated, Form: engine.MustLabel(form),
			ReferenceDate: day(end), StartDate: s, EndDate: day(end), PublishDate: engine.StampOf(pub), RetrievalDate: engine.StampOf(pub),
			Version: 1, Accounts: []engine.Account{engine.NewAccount(code, "x", true, 100)}}
	}
	u.Reports = append(u.Reports,
		// A DFP of one quarter: 2023-07-01..2023-09-30.
		rep("DFP", "DRE", "2023-07-01", "2023-09-30"), rep("DFP", "BPA", "", "2023-09-30"),
		// An ITR of 2023-06-30: its quarter and its year to date.
		rep("ITR", "DRE", "2023-04-01", "2023-06-30"), rep("ITR", "DRE", "2023-01-01", "2023-06-30"),
		rep("ITR", "BPA", "", "2023-06-30"),
		// A DFP of six months (2022-07-01..2022-12-31): neither a year
		// nor a quarter.
		rep("DFP", "DRE", "2022-07-01", "2022-12-31"), rep("DFP", "BPA", "", "2022-12-31"),
	)
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(ds)
	ts.api = New(DefaultConfig(), ts.store, testKeys(t), nil, ts.reg, nil)

	label := func(item any) string {
		m := obj(item)
		start, _ := m["start_date"].(string)
		return fmt.Sprintf("%s %s %s %.10s", m["statement"], m["reference_date"].(string)[:10], m["frequency"], start)
	}
	got := map[string]bool{}
	for _, it := range arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?year=2023&quarter=3", testKeyDelayed, "")) {
		got[label(it)] = true
	}
	for _, it := range arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?year=2023&quarter=2", testKeyDelayed, "")) {
		got[label(it)] = true
	}
	for _, it := range arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?reference_date=2022-12-31", testKeyDelayed, "")) {
		got[label(it)] = true
	}
	for _, want := range []string{
		"DRE 2023-09-30 QUARTERLY 2023-07-01", "BPA 2023-09-30 QUARTERLY ",
		"DRE 2023-06-30 QUARTERLY 2023-04-01", "DRE 2023-06-30 YTD 2023-01-01", "BPA 2023-06-30 QUARTERLY ",
		"DRE 2022-12-31 YTD 2022-07-01", "BPA 2022-12-31 YTD ",
	} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	// The filter: ANNUAL keeps only twelve-month periods (the small
	// bundle's 2023 DFP), QUARTERLY the quarters whatever the form, YTD
	// the year to date.
	for freq, want := range map[string]int{"ANNUAL": 0, "QUARTERLY": 2, "YTD": 0} {
		items := arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?year=2023&quarter=3&frequency="+freq, testKeyDelayed, ""))
		if len(items) != want {
			t.Errorf("2023 Q3, frequency=%s: %d items, want %d", freq, len(items), want)
		}
		for _, it := range items {
			if obj(it)["frequency"] != freq {
				t.Errorf("frequency=%s: item %s", freq, label(it))
			}
		}
	}
	if items := arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?reference_date=2023-06-30&frequency=YTD", testKeyDelayed, "")); len(items) != 1 {
		t.Errorf("2023-06-30, frequency=YTD: %d items, want 1", len(items))
	}
	annual := arr(ts.getJSON(t, "GET", "/v2/companies/ENHZ/reports?frequency=ANNUAL", testKeyDelayed, ""))
	if len(annual) == 0 {
		t.Error("frequency=ANNUAL: no item (the small bundle's 2023 DFP)")
	}
	for _, it := range annual {
		if m := obj(it); m["reference_date"] != "2023-12-31T00:00:00Z" {
			t.Errorf("frequency=ANNUAL: %s", label(it))
		}
	}
}
