package assemble

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/fii"
)

// readFII reads the CVM FII monthly reports: their funds become companies
// (the ISIN map links fund quotas to them) and their reports the fund
// reports.
func (a *assembler) readFII(_ context.Context, prog Progress) error {
	files, err := expand(a.cfg.FII, func(b string) bool { return isFII(b) })
	if err != nil {
		return fmt.Errorf("--fii: %w", err)
	}
	if len(files) == 0 {
		return nil
	}
	var in []fii.File
	for _, f := range files {
		f := f
		in = append(in, fii.File{Name: plainName(f), Open: func() (io.ReadCloser, error) { return datafile.Open(f) }})
	}
	m, err := fii.ReadMonthlyFiles(in, a.withProgress(prog, "CVM FII"))
	if err != nil {
		return err
	}
	for _, c := range m.Funds {
		a.addCompany(c)
	}
	for id, isin := range m.ISIN {
		a.isinFund[isin] = id
	}
	// Money and rates keep their sign as filed (negative yields, returns,
	// net and total assets are real); the bundle format takes counts >= 0
	// only, so a negative share or investor count is imported as missing,
	// and counted.
	neg := map[string]int{}
	for i := range m.Reports {
		r := &m.Reports[i]
		for _, f := range []struct {
			name string
			v    *engine.Num
		}{{"shares outstanding", &r.SharesOut}, {"investors", &r.Investors}} {
			if f.v.Valid() && *f.v < 0 {
				*f.v = engine.Null
				neg[f.name]++
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(neg)) {
		a.rep.notef("FII: %d monthly reports with a negative %s (as filed) imported as null", neg[k], k)
	}
	a.u.FundReports = m.Reports
	if m.Orphans > 0 {
		a.rep.notef("FII: %d complement rows without a general row", m.Orphans)
	}
	return nil
}
