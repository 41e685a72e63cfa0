package official

import (
	"fmt"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestPublications: the downloads of a yearly archive hold, of each
// filing published by their day, its highest version then; one download
// is made the day before each restatement, the last holds the latest
// version of everything.
func TestPublications(t *testing.T) {
	d := func(m, day int) engine.Date { return engine.MakeDate(2025, time.Month(m), day) }
	type fv = filingVersion
	for _, c := range []struct {
		name string
		vs   []filingVersion
		want string // per download: its day, then the versions it holds
	}{
		{"no restatement", []fv{{"A", 1, d(3, 1)}, {"B", 1, d(4, 1)}}, "newest: A1 B1"},
		{"one restatement", []fv{{"A", 1, d(3, 1)}, {"A", 2, d(5, 10)}, {"B", 1, d(4, 1)}},
			"2025-05-09: A1 B1 | newest: A2 B1"},
		{"a filing after the restatement", []fv{{"A", 2, d(5, 10)}, {"A", 1, d(3, 1)}, {"B", 1, d(6, 1)}},
			"2025-05-09: A1 | newest: A2 B1"},
		{"three versions", []fv{{"A", 1, d(3, 1)}, {"A", 2, d(4, 1)}, {"A", 3, d(5, 1)}},
			"2025-03-31: A1 | 2025-04-30: A2 | newest: A3"},
		{"two restatements, nothing between", []fv{{"A", 1, d(3, 1)}, {"A", 2, d(5, 1)}, {"B", 1, d(3, 2)}, {"B", 2, d(5, 2)}},
			"2025-04-30: A1 B1 | 2025-05-01: A2 B1 | newest: A2 B2"},
		{"restated the day it was published", []fv{{"A", 1, d(3, 1)}, {"A", 2, d(3, 1)}}, "newest: A2"},
		{"restated before the other's first", []fv{{"A", 1, d(3, 1)}, {"A", 2, d(3, 5)}, {"B", 1, d(3, 1)}},
			"2025-03-04: A1 B1 | newest: A2 B1"},
		{"no day known", []fv{{"A", 1, engine.NoDate}, {"A", 2, d(3, 5)}}, "2025-03-04: A1 | newest: A2"},
	} {
		got := ""
		for i, p := range publications(c.vs) {
			if i > 0 {
				got += " | "
			}
			if p.day.Valid() {
				got += p.day.String() + ":"
			} else {
				got += "newest:"
			}
			// In the order of keys, then versions.
			for _, k := range []string{"A", "B"} {
				for v := 1; v <= 3; v++ {
					for j, x := range c.vs {
						if p.hold[j] && x.key == k && x.version == v {
							got += fmt.Sprintf(" %s%d", k, v)
						}
					}
				}
			}
		}
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
