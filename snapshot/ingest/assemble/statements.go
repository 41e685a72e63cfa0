package assemble

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// readReports reads the CVM DFP and ITR statements, capital tables and
// filing indexes, and keeps what refers to a known company.
func (a *assembler) readReports(ctx context.Context, prog Progress) error {
	var docs []cvm.DocEntry
	var caps []cvm.CapitalPoint
	for _, set := range []struct {
		flag, kind string
		vals       []string
		keep       func(string) bool
	}{{"--dfp", "CVM DFP", a.cfg.DFP, isDFP}, {"--itr", "CVM ITR", a.cfg.ITR, isITR}} {
		files, err := expand(set.vals, set.keep)
		if err != nil {
			return fmt.Errorf("%s: %w", set.flag, err)
		}
		opt := a.withProgress(prog, set.kind)
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if strings.EqualFold(filepath.Ext(f), ".zip") {
				fl, err := cvm.ReadStatementsZip(f, opt)
				if err != nil {
					return err
				}
				a.u.Reports = append(a.u.Reports, fl.Reports...)
				for i, p := range fl.Shares {
					caps = append(caps, cvm.CapitalPoint{SharesPoint: p, Version: fl.ShareVersions[i]})
				}
				continue
			}
			name := plainName(f)
			info, err := cvm.ParseFileName(name)
			if err != nil {
				return err
			}
			rc, err := datafile.Open(f)
			if err != nil {
				return err
			}
			switch info.Kind {
			case cvm.KindStatement:
				var rs []engine.Report
				rs, err = cvm.ReadStatements(rc, name, opt)
				a.u.Reports = append(a.u.Reports, rs...)
			case cvm.KindCapital:
				var cp []cvm.CapitalPoint
				cp, err = cvm.ReadCapitalVersions(rc, name, opt)
				caps = append(caps, cp...)
			case cvm.KindIndex:
				var d []cvm.DocEntry
				d, err = cvm.ReadDocIndex(rc, name, opt)
				docs = append(docs, d...)
			default:
				a.rep.notef("%s: not imported (no model for this table)", f)
			}
			rc.Close()
			if err != nil {
				return err
			}
		}
	}
	shares, err := oneCountPerDay(caps)
	if err != nil {
		return err
	}
	a.u.Shares = append(a.u.Shares, shares...)
	if len(docs) > 0 {
		if n := cvm.AttachIndex(a.u.Reports, docs); n > 0 {
			a.rep.notef("%d reports have no filing-index entry (no publish date)", n)
		}
	}
	// Keep what refers to a known company.
	var drop int
	rs := a.u.Reports[:0]
	for _, r := range a.u.Reports {
		if c := a.companies[r.CompanyID]; c != nil {
			rs = append(rs, r)
		} else {
			drop++
		}
	}
	a.u.Reports = rs
	sh := a.u.Shares[:0]
	for _, s := range a.u.Shares {
		if a.companies[s.CompanyID] != nil {
			sh = append(sh, s)
		} else {
			drop++
		}
	}
	a.u.Shares = sh
	if drop > 0 {
		a.rep.notef("%d reports and share counts of companies absent from the registry were dropped (give --cad)", drop)
	}
	cvm.SortReports(a.u.Reports)
	n, err := oncePerVersion(&a.u.Reports)
	if err != nil {
		return err
	}
	if n > 0 {
		a.rep.notef("%d reports repeated by another input imported once (two downloads of a year's DFP or ITR: each holds the latest version of each filing then)", n)
	}
	if n, ex := earlierVersionsMissing(a.u.Reports); n > 0 {
		a.rep.notef("%d DFP/ITR filings were restated and no input holds their earlier versions (%s): as_of before a restatement answers without the filing; import every download of the year (pregao fetch keeps them)", n, ex)
	}
	return nil
}

// earlierVersionsMissing counts the filings (company, form, reference
// date) of rs (one report per statement and version) whose versions
// below the highest are not all there, and names the first: a restated
// filing imported from one download only (each holds the latest version
// of each filing).
func earlierVersionsMissing(rs []engine.Report) (n int, first string) {
	type key struct {
		company, form string
		ref           engine.Date
	}
	n, k, hi := versionGaps(len(rs), func(i int) (key, int) {
		r := &rs[i]
		return key{r.CompanyID, r.Form.String(), r.ReferenceDate}, r.Version
	})
	if n > 0 {
		first = fmt.Sprintf("%s %s of %s, version %d", k.form, k.ref, k.company, hi)
	}
	return n, first
}

// versionGaps counts the keys of n rows (at: row i's key and version)
// whose versions below the highest are not all there, and returns the
// first such key, in the rows' order, with its highest version. Rows
// repeating a key's version count once.
func versionGaps[K comparable](n int, at func(i int) (K, int)) (gaps int, first K, hi int) {
	versions := map[K]map[int]bool{}
	var order []K
	for i := range n {
		k, v := at(i)
		if versions[k] == nil {
			versions[k] = map[int]bool{}
			order = append(order, k)
		}
		versions[k][v] = true
	}
	for _, k := range order {
		top := 0
		for v := range versions[k] {
			top = max(top, v)
		}
		if len(versions[k]) < top {
			if gaps == 0 {
				first, hi = k, top
			}
			gaps++
		}
	}
	return gaps, first, hi
}

// oncePerVersion keeps one report of each filing version in *rs (sorted
// by cvm.SortReports): CVM's yearly DFP and ITR files hold only the
// latest version of each filing, so the versions of a restated filing
// are kept by importing every download of a year, and the downloads
// repeat the filings that did not change. A repeat is dropped (the copy
// with a publish date kept) and counted; one version with other figures
// is an error, not a choice to make.
func oncePerVersion(rs *[]engine.Report) (repeated int, err error) {
	in := *rs
	out := in[:0]
	for i := range in {
		r := &in[i]
		if len(out) == 0 || !sameFiling(&out[len(out)-1], r) {
			out = append(out, *r)
			continue
		}
		k := &out[len(out)-1]
		if code, ok := sameFigures(k, r); !ok {
			return 0, fmt.Errorf("--dfp/--itr: %s %s %s of %s, reference date %s (%s to %s), version %d: two inputs give account %s different values",
				r.Form, r.Statement, r.Aggregation, r.CompanyID, r.ReferenceDate, r.StartDate, r.EndDate, r.Version, code)
		}
		if k.PublishDate.IsZero() && !r.PublishDate.IsZero() {
			k.PublishDate, k.Sources = r.PublishDate, r.Sources
		}
		repeated++
	}
	clear(in[len(out):])
	*rs = out
	return repeated, nil
}

// sameFiling reports whether a and b are the same version of the same
// statement of one filing.
func sameFiling(a, b *engine.Report) bool {
	return a.CompanyID == b.CompanyID && a.Form == b.Form && a.Statement == b.Statement && a.Aggregation == b.Aggregation &&
		a.ReferenceDate == b.ReferenceDate && a.StartDate == b.StartDate && a.EndDate == b.EndDate && a.Version == b.Version
}

// sameFigures reports whether a and b hold the same accounts with the
// same values (null equal to null); when not, code names the first
// account that differs.
func sameFigures(a, b *engine.Report) (code string, ok bool) {
	if len(a.Accounts) != len(b.Accounts) {
		return "count", false
	}
	for i, x := range a.Accounts {
		y := b.Accounts[i]
		if x.Line != y.Line || x.Value != y.Value && (x.Value.Valid() || y.Value.Valid()) {
			return x.Code(), false
		}
	}
	return "", true
}

// oneCountPerDay keeps one share count per company and date of the
// capital tables read (several downloads of a year repeat them): the
// count of the highest version, sorted by company and date. One version
// with two different counts is an error.
func oneCountPerDay(caps []cvm.CapitalPoint) ([]engine.SharesPoint, error) {
	slices.SortStableFunc(caps, func(a, b cvm.CapitalPoint) int {
		return cmp.Or(strings.Compare(a.CompanyID, b.CompanyID), cmp.Compare(a.Date, b.Date), cmp.Compare(a.Version, b.Version))
	})
	var out []engine.SharesPoint
	for i, p := range caps {
		if i+1 < len(caps) && caps[i+1].CompanyID == p.CompanyID && caps[i+1].Date == p.Date {
			if caps[i+1].Version == p.Version && caps[i+1].SharesPoint != p.SharesPoint {
				return nil, fmt.Errorf("--dfp/--itr: composicao_capital of %s, reference date %s, version %d: two inputs give different share counts", p.CompanyID, p.Date, p.Version)
			}
			continue // a later version, or the same again, follows
		}
		out = append(out, p.SharesPoint)
	}
	return out, nil
}
