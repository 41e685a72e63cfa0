package assemble

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

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
		if strings.EqualFold(filepath.Ext(f), ".zip") {
			// The yearly archive (inf_mensal_fii_YYYY.zip, as CVM
			// publishes and pregao fetch downloads it): its tables.
			zr, err := zip.OpenReader(f)
			if err != nil {
				return fmt.Errorf("--fii: %w", err)
			}
			defer zr.Close()
			for _, zf := range zr.File {
				if fii.TableOf(zf.Name) != "" {
					in = append(in, fii.File{Name: f + ":" + zf.Name, Open: zf.Open})
				}
			}
			continue
		}
		in = append(in, fii.File{Name: plainName(f), Open: func() (io.ReadCloser, error) { return datafile.Open(f) }})
	}
	m, err := fii.ReadMonthlyFiles(in, a.withProgress(prog, "CVM FII"))
	if err != nil {
		return err
	}
	for _, c := range m.Funds {
		a.addCompany(c)
	}
	latest := make(map[string]engine.Date, len(m.Details))
	for id, f := range m.Details {
		latest[id] = f.Latest
	}
	owners, tied := isinOwners(m.ISIN, latest)
	maps.Copy(a.isinFund, owners)
	a.isinTied = tied
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
	if m.Repeated > 0 {
		a.rep.notef("FII: %d monthly-report rows repeated by another input read once (two downloads of a year: each holds the latest version of each month then)", m.Repeated)
	}
	if m.Orphans > 0 {
		a.rep.notef("FII: %d complement rows without a general row", m.Orphans)
	}
	if n, ex := fundVersionsMissing(m.Reports); n > 0 {
		a.rep.notef("FII: %d monthly reports were restated and no input holds their earlier versions (%s): as_of before a restatement answers without the month; import every download of the year (pregao fetch keeps them)", n, ex)
	}
	return nil
}

// fundVersionsMissing counts the (fund, month) reports of rs whose
// versions below the highest are not all there, and names the first.
func fundVersionsMissing(rs []engine.FundReport) (n int, first string) {
	type key struct {
		fund string
		ref  engine.Date
	}
	n, k, hi := versionGaps(len(rs), func(i int) (key, int) { return key{rs[i].FundID, rs[i].ReferenceDate}, rs[i].Version })
	if n > 0 {
		first = fmt.Sprintf("fund %s, month %s, version %d", k.fund, k.ref, hi)
	}
	return n, first
}

// isinOwners maps each ISIN of isins (fund ID -> the ISIN of its latest
// report) to its fund. When the latest reports of several funds carry the
// same ISIN, the fund whose latest report (latest, by fund ID) is the most
// recent gets it; if those tie, the claim is ambiguous: no fund gets it
// and tied lists the funds, by ID.
func isinOwners(isins map[string]string, latest map[string]engine.Date) (owners map[string]string, tied map[string][]string) {
	claims := map[string][]string{}
	for id, isin := range isins {
		claims[isin] = append(claims[isin], id)
	}
	owners = make(map[string]string, len(claims))
	for isin, ids := range claims {
		slices.Sort(ids)
		best, n := "", 0 // the most recent fund and how many share its date
		for _, id := range ids {
			switch {
			case best == "" || latest[id] > latest[best]:
				best, n = id, 1
			case latest[id] == latest[best]:
				n++
			}
		}
		if n > 1 {
			if tied == nil {
				tied = map[string][]string{}
			}
			for _, id := range ids {
				if latest[id] == latest[best] {
					tied[isin] = append(tied[isin], id)
				}
			}
			continue
		}
		owners[isin] = best
	}
	return owners, tied
}
