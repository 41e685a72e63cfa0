package assemble

import (
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestPortfolioChoice checks which of the portfolios offered for one
// index is imported.
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
		{"one", last, []offer{{after, true, "a"}}, "a"},
		{"latest quoted", last, []offer{{early, true, "early"}, {before, true, "before"}}, "before"},
		{"latest quoted, offered first", last, []offer{{before, true, "before"}, {early, true, "early"}}, "before"},
		{"the last session itself is quoted", last, []offer{{last, false, "last"}, {after, true, "after"}}, "last"},
		{"quoted over later", last, []offer{{after, true, "after"}, {early, false, "early"}, {later, true, "later"}}, "early"},
		{"none quoted: the latest", last, []offer{{after, true, "after"}, {later, false, "later"}}, "later"},
		{"weighted over a list of the same day", last, []offer{{before, false, "list"}, {before, true, "weighted"}}, "weighted"},
		{"weighted first, list after", last, []offer{{before, true, "weighted"}, {before, false, "list"}}, "weighted"},
		{"same day, same kind: the first", last, []offer{{before, true, "first"}, {before, true, "second"}}, "first"},
		{"a later list over an earlier weighted one", last, []offer{{early, true, "weighted"}, {before, false, "list"}}, "list"},
		{"no quotes: every day is quoted", engine.NoDate, []offer{{before, true, "before"}, {later, false, "later"}}, "later"},
	} {
		p := portfolios{lastSession: c.session}
		for _, o := range c.offers {
			p.offer(engine.Index{Symbol: "IBOV", Name: o.tag, AsOf: o.day}, o.weighted)
		}
		p.offer(engine.Index{Symbol: "SMLL", Name: "other", AsOf: later}, true) // other symbols do not compete
		if got := p.best["IBOV"].x.Name; got != c.want || len(p.best) != 2 {
			t.Errorf("%s: chose %q, want %q", c.name, got, c.want)
		}
	}
}
