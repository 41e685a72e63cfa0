package ratios

import (
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestCatalogPriceRules: every VALUATION entry declares a price rule and
// no other entry does; the engine reads the rule back from the entry as a
// snapshot stores it (engine.ParsePriceRule of its variables), and the
// entry's variables, class split, formula and report independence are the
// rule's.
func TestCatalogPriceRules(t *testing.T) {
	for i := range defs {
		d := &defs[i]
		if got, want := d.price.Priced(), d.Kind == engine.IndValuation; got != want {
			t.Errorf("%s %s: declares a price rule: %v, want %v", d.Kind, d.ID, got, want)
		}
		if !d.price.Priced() {
			continue
		}
		if got := engine.ParsePriceRule(&d.Indicator); got != d.price {
			t.Errorf("%s: declares %v, read back as %v", d.ID, d.price, got)
		}
		if d.ByClass != d.price.ByClass() || d.static != d.price.Static() || (d.grp == grpValClass) != d.price.ByClass() {
			t.Errorf("%s: class split or report independence differ from its rule's", d.ID)
		}
	}
}
