package assemble

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// lastDay is the COTAHIST file of 2022-02-04 in testdata/real, the last
// session of the sample.
const lastDay = "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D04022022.TXT.zip"

// TestRunRegistryNewerThanQuotes imports the registry of 2024-05-27 with
// the quotes of 2022-02-04: Banco Inter (cancelled 2022-12-02) and Sul
// América (cancelled 2022-04-14), which traded that day, are served
// ACTIVE as they were, with an unknown status date; the summary says how
// many statuses were taken back. No company has a made-up status date.
func TestRunRegistryNewerThanQuotes(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	u, rep := run(t, cfg)
	co := map[string]*engine.Company{}
	for i := range u.Companies {
		c := &u.Companies[i]
		co[c.ID] = c
		if c.StatusDate == 0 {
			t.Errorf("%s %s: status date 1970-01-01 (unknown must be null)", c.ID, c.Name)
		}
	}
	for _, id := range []string{"00416968000101", "29978814000187"} {
		if c := co[id]; c == nil || c.Status != "ACTIVE" || c.StatusDate.Valid() {
			t.Errorf("%s: %+v, want ACTIVE since an unknown day", id, c)
		}
	}
	// Cancelled long before: as registered.
	if c := co["61194080000158"]; c == nil || c.Status != "CANCELLED" || c.StatusDate != engine.MakeDate(2009, 8, 31) {
		t.Errorf("Duratex SA: %+v", c)
	}
	if rep.StatusesTakenBack < 2 {
		t.Errorf("%d statuses taken back", rep.StatusesTakenBack)
	}
	var b bytes.Buffer
	rep.WriteSummary(&b, u)
	if !strings.Contains(b.String(), "statuses that began later taken back") {
		t.Errorf("summary does not say it:\n%s", b.String())
	}
}
