package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// readReports reads the CVM DFP and ITR statements, capital tables and
// filing indexes, and keeps what refers to a known company.
func (a *assembler) readReports(ctx context.Context, prog Progress) error {
	var docs []cvm.DocEntry
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
				a.u.Shares = append(a.u.Shares, fl.Shares...)
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
				var sh []engine.SharesPoint
				sh, err = cvm.ReadCapital(rc, name, opt)
				a.u.Shares = append(a.u.Shares, sh...)
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
	return nil
}
