package assemble

import (
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestEarlierVersionsMissing: a filing whose versions below its highest
// are not all imported (one download of a restated year) is counted once
// and the first named; a filing with all its versions, or one version,
// is not.
func TestEarlierVersionsMissing(t *testing.T) {
	d := engine.MakeDate(2024, 12, 31)
	r := func(co, form, stmt string, v int) engine.Report {
		return engine.Report{CompanyID: co, Form: engine.MustLabel(form), Statement: engine.MustLabel(stmt), ReferenceDate: d, Version: v}
	}
	for _, c := range []struct {
		name  string
		rs    []engine.Report
		n     int
		first string
	}{
		{"every version", []engine.Report{r("A", "DFP", "BPA", 1), r("A", "DFP", "BPA", 2), r("A", "DFP", "DRE", 1), r("A", "DFP", "DRE", 2)}, 0, ""},
		{"one version", []engine.Report{r("A", "DFP", "BPA", 1), r("A", "DFP", "DRE", 1)}, 0, ""},
		{"version 2 alone", []engine.Report{r("A", "DFP", "BPA", 2), r("A", "DFP", "DRE", 2), r("B", "ITR", "DRE", 1)}, 1, "DFP 2024-12-31 of A, version 2"},
		{"a gap", []engine.Report{r("A", "ITR", "DRE", 1), r("A", "ITR", "DRE", 3), r("B", "DFP", "DRE", 3)}, 2, "ITR 2024-12-31 of A, version 3"},
	} {
		n, first := earlierVersionsMissing(c.rs)
		if n != c.n || first != c.first {
			t.Errorf("%s: %d %q, want %d %q", c.name, n, first, c.n, c.first)
		}
	}
	f := func(id string, m, v int) engine.FundReport {
		return engine.FundReport{FundID: id, ReferenceDate: engine.MakeDate(2024, time.Month(m), 1), Version: v}
	}
	// H's month 3 is version 2 given twice (two downloads read): its
	// version 1 is still missing.
	if n, first := fundVersionsMissing([]engine.FundReport{f("F", 1, 1), f("F", 1, 2), f("F", 2, 2), f("G", 2, 1), f("H", 3, 2), f("H", 3, 2)}); n != 2 || first != "fund F, month 2024-02-01, version 2" {
		t.Errorf("fund reports: %d %q", n, first)
	}
}
