package assemble

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
)

// TestAsOfRule checks the as-of day and the retrieval stamps: given, else
// the last session, whatever the reports' reference dates and the fund
// reports' months; 21:00 UTC that day.
func TestAsOfRule(t *testing.T) {
	d := engine.MakeDate
	at := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 21, 0, 0, 0, time.UTC) }
	given := time.Date(2024, 5, 1, 12, 0, 0, 0, time.FixedZone("BRT", -3*3600))
	for _, c := range []struct {
		name      string
		sessions  []engine.Date // last session of each quoted ticker
		asOf      engine.Date   // 0: not given
		retrieved time.Time
		reports   []engine.Date // reference dates
		funds     []engine.Date // reference months
		want      time.Time     // as of
		wantRetr  time.Time     // stamped on every report
		err       string
	}{
		{name: "last session", sessions: []engine.Date{d(2022, 2, 3), d(2022, 2, 4)},
			want: at(2022, 2, 4), wantRetr: at(2022, 2, 4)},
		{name: "a later report", sessions: []engine.Date{d(2022, 2, 4)}, reports: []engine.Date{d(2021, 12, 31), d(2023, 6, 30)},
			want: at(2022, 2, 4), wantRetr: at(2022, 2, 4)},
		{name: "an earlier report", sessions: []engine.Date{d(2022, 2, 4)}, reports: []engine.Date{d(2021, 12, 31), engine.NoDate},
			want: at(2022, 2, 4), wantRetr: at(2022, 2, 4)},
		{name: "a fund report's month end", sessions: []engine.Date{d(2022, 2, 4)}, funds: []engine.Date{d(2022, 2, 1), d(2022, 1, 1)},
			want: at(2022, 2, 4), wantRetr: at(2022, 2, 4)},
		{name: "given as of", sessions: []engine.Date{d(2022, 2, 4)}, asOf: d(2021, 3, 26), reports: []engine.Date{d(2023, 6, 30)},
			want: at(2021, 3, 26), wantRetr: at(2021, 3, 26)},
		{name: "given retrieval time", sessions: []engine.Date{d(2022, 2, 4)}, retrieved: given, reports: []engine.Date{d(2023, 6, 30)},
			want: at(2022, 2, 4), wantRetr: given.UTC()},
		{name: "no quotes, as of given", asOf: d(2023, 1, 2), want: at(2023, 1, 2), wantRetr: at(2023, 1, 2)},
		{name: "no quotes", reports: []engine.Date{d(2023, 6, 30)}, err: "--as-of is required"},
	} {
		cfg := DefaultConfig()
		if c.asOf != 0 {
			cfg.AsOf = c.asOf
		}
		cfg.Retrieved = c.retrieved
		a := newAssembler(cfg)
		for i, s := range c.sessions {
			a.quotes.Securities = append(a.quotes.Securities, cotahist.Security{Ticker: "TCK" + string(rune('A'+i)) + "3", Last: s})
		}
		err := a.readDates(context.Background(), nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// What the CVM readers would have stamped, read before settling.
		src := []engine.Source{{RetrievedAt: a.opt.Retrieved}}
		for _, r := range c.reports {
			a.u.Reports = append(a.u.Reports, engine.Report{ReferenceDate: r, RetrievalDate: engine.StampOf(a.opt.Retrieved), Sources: engine.SourcesOf(src)})
		}
		for _, r := range c.funds {
			a.u.FundReports = append(a.u.FundReports, engine.FundReport{ReferenceDate: r, RetrievalDate: a.opt.Retrieved,
				Sources: []engine.Source{{RetrievedAt: a.opt.Retrieved}}})
		}
		if err := a.settleAsOf(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if !a.u.Meta.AsOf.Equal(c.want) || a.u.Meta.AsOf.Location() != time.UTC || a.asOf != engine.DateOf(c.want) {
			t.Errorf("%s: as of %v (day %s), want %v", c.name, a.u.Meta.AsOf, a.asOf, c.want)
		}
		if !a.opt.Retrieved.Equal(c.wantRetr) || a.opt.Retrieved.Location() != time.UTC {
			t.Errorf("%s: retrieved %v, want %v", c.name, a.opt.Retrieved, c.wantRetr)
		}
		for _, r := range a.u.Reports {
			if !r.RetrievalDate.Equal(engine.StampOf(c.wantRetr)) || !r.Sources.All()[0].RetrievedAt.Equal(c.wantRetr) {
				t.Errorf("%s: report retrieved %v, source %v", c.name, r.RetrievalDate, r.Sources.All()[0].RetrievedAt)
			}
		}
		for _, r := range a.u.FundReports {
			if !r.RetrievalDate.Equal(c.wantRetr) || !r.Sources[0].RetrievedAt.Equal(c.wantRetr) {
				t.Errorf("%s: fund report retrieved %v, source %v", c.name, r.RetrievalDate, r.Sources[0].RetrievedAt)
			}
		}
		// The summary states the rule, and counts later reports.
		rule := "the last COTAHIST session"
		if c.asOf != 0 {
			rule = "given by --as-of"
		}
		later := 0
		for _, r := range c.reports {
			if r.Valid() && r > engine.DateOf(c.want) {
				later++
			}
		}
		if len(a.rep.Notes) != 1 || !strings.HasPrefix(a.rep.Notes[0], "as of "+engine.DateOf(c.want).String()+", "+rule) ||
			strings.Contains(a.rep.Notes[0], "never served as current") != (later > 0) {
			t.Errorf("%s: notes %q", c.name, a.rep.Notes)
		}
	}
}
