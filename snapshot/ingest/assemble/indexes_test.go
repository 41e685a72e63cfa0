package assemble

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestPortfolioChoice checks which of the portfolios offered for one
// index is imported: the latest on or before the as-of day, else the
// earliest after it.
func TestPortfolioChoice(t *testing.T) {
	last := engine.MakeDate(2022, 2, 4)
	type offer struct {
		day      engine.Date
		weighted bool
		tag      string
	}
	before, early, after, later := last-10, last-400, last+300, last+900
	for _, c := range []struct {
		name    string
		session engine.Date
		offers  []offer
		want    string
	}{
		{"one, after the as-of day", last, []offer{{after, true, "a"}}, "a"},
		{"latest quoted", last, []offer{{early, true, "early"}, {before, true, "before"}}, "before"},
		{"latest quoted, offered first", last, []offer{{before, true, "before"}, {early, true, "early"}}, "before"},
		{"the as-of day itself is within", last, []offer{{last, false, "last"}, {after, true, "after"}}, "last"},
		{"within over later", last, []offer{{after, true, "after"}, {early, false, "early"}, {later, true, "later"}}, "early"},
		{"none within: the earliest after", last, []offer{{later, false, "later"}, {after, true, "after"}}, "after"},
		{"none within: the earliest after, offered first", last, []offer{{after, false, "after"}, {later, true, "later"}}, "after"},
		{"none within: weighted over a list of the same day", last, []offer{{after, false, "list"}, {after, true, "weighted"}}, "weighted"},
		{"an as-of day after the quotes: a portfolio between them is served", after + 30, []offer{{before, true, "before"}, {after, false, "after"}}, "after"},
		{"weighted over a list of the same day", last, []offer{{before, false, "list"}, {before, true, "weighted"}}, "weighted"},
		{"weighted first, list after", last, []offer{{before, true, "weighted"}, {before, false, "list"}}, "weighted"},
		{"same day, same kind: the first", last, []offer{{before, true, "first"}, {before, true, "second"}}, "first"},
		{"a later list over an earlier weighted one", last, []offer{{early, true, "weighted"}, {before, false, "list"}}, "list"},
		{"no as-of day: every day is within", engine.NoDate, []offer{{before, true, "before"}, {later, false, "later"}}, "later"},
	} {
		p := portfolios{asOf: c.session}
		for _, o := range c.offers {
			p.offer(engine.Index{Symbol: "IBOV", Name: o.tag, AsOf: o.day}, o.weighted)
		}
		p.offer(engine.Index{Symbol: "SMLL", Name: "other", AsOf: later}, true) // other symbols do not compete
		if got := p.best["IBOV"].x.Name; got != c.want || len(p.best) != 2 {
			t.Errorf("%s: chose %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRunPortfoliosAsOf imports the real IBOV portfolios of 2021-03-26
// and 2024-12-30 and SMLL's of 2025-07-02 with the quotes of 2022-02-04:
// IBOV's of 2021 is served, the later one noted as passed over; SMLL has
// none on or before the day, the one after it is served and said so.
func TestRunPortfoliosAsOf(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	cfg.Index = []string{
		filepath.Join(dir, "b3-indexes/ManoelAugustoOliveira__proppaga/IBOVDia_30-12-24.csv.zst"),
		filepath.Join(dir, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst"),
		filepath.Join(dir, "b3-indexes/igor64BR__calculadora-b3-ativos/SMLLDia_02-07-25.csv.zst"),
	}
	u, rep := run(t, cfg)
	got := map[string]engine.Date{}
	for _, x := range u.Indexes {
		got[x.Symbol] = x.AsOf
	}
	if got["IBOV"] != engine.MakeDate(2021, 3, 26) || got["SMLL"] != engine.MakeDate(2025, 7, 2) {
		t.Errorf("portfolios served %v", got)
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, want := range []string{
		"index IBOV: the portfolio of 2021-03-26 is served, the latest on or before the as-of day 2022-02-04; passed over: 2024-12-30 (after the as-of day)",
		"1 indexes have no portfolio on or before the as-of day 2022-02-04 and are served with the earliest one after it: SMLL 2025-07-02",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}
