package assemble

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
)

// TestRunDFPQuarterRow imports the real DFP tables of 2023: Construtora
// Tenda's DFP of 2023-03-31 holds a DRE of 2023-01-01..2023-03-31 (ÚLTIMO,
// revenue 651,443 thousand). As of 2023-06-30 it is a quarter, never
// ANNUAL; Jalles Machado's twelve months to 2023-03-31 are. As of the
// quotes' last day (2022-02-04) none of these reports is known: the
// summary says so and they yield no ratio point.
func TestRunDFPQuarterRow(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.DFP = []string{filepath.Join(dir, "cvm-dfp")}
	cfg.AsOf = engine.MakeDate(2023, 6, 30)
	u, _ := run(t, cfg)
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := ratios.Lookup(engine.IndFundamental, "NET_REVENUE")
	rev := map[string]engine.Num{}
	for _, p := range d.Ratios {
		if p.Indicator == ix && p.ReferenceDate == engine.MakeDate(2023, 3, 31) {
			rev[p.CompanyID.String()+" "+p.Frequency.String()] = p.Value
		}
	}
	if v, ok := rev["71476527000135 ANNUAL"]; ok {
		t.Errorf("Tenda's quarter served as the year: %v", v)
	}
	if v := rev["71476527000135 QUARTERLY"]; v != 651443e3 {
		t.Errorf("Tenda's quarter %v", v)
	}
	if v := rev["02635522000195 ANNUAL"]; !v.Valid() || v < 1e9 {
		t.Errorf("Jalles Machado's year %v", v)
	}

	cfg.AsOf = engine.NoDate
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	u, rep := run(t, cfg)
	if d, err = ratios.Derive(u); err != nil {
		t.Fatal(err)
	}
	if len(d.Ratios) != 0 || len(u.Reports) == 0 {
		t.Errorf("%d ratio points of %d reports dated after the as-of day", len(d.Ratios), len(u.Reports))
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "never served as current") {
		t.Errorf("notes %s", notes)
	}
}
