package cvm

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// DocEntry is one row of a filing index (dfp_cia_aberta_YYYY.csv,
// itr_cia_aberta_YYYY.csv, fca_cia_aberta_YYYY.csv): one version of one
// filing.
type DocEntry struct {
	Form          string      // DFP, ITR... (from the file name)
	CompanyID     string      // CNPJ digits
	ReferenceDate engine.Date // DT_REFER
	Version       int         // VERSAO
	CompanyName   string      // DENOM_CIA
	CVMCode       string      // CD_CVM without leading zeros
	Category      string      // CATEG_DOC
	DocID         string      // ID_DOC
	Received      time.Time   // DT_RECEB, the São Paulo day it was published at the CVM, at its start (SaoPauloDay)
	Link          string      // LINK_DOC: the filing's page at the CVM
}

// ReadDocIndex reads a filing index file. The form is taken from the
// file name prefix (dfp_, itr_, fca_...; upper-cased); rows are returned in
// file order. Required columns: CNPJ_CIA, DT_REFER, VERSAO, DT_RECEB,
// LINK_DOC.
func ReadDocIndex(r io.Reader, name string, opt Options) ([]DocEntry, error) {
	form := formOf(name)
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	c, err := rd.requireAll("CNPJ_CIA", "DT_REFER", "VERSAO", "DT_RECEB", "LINK_DOC")
	if err != nil {
		return nil, err
	}
	cName, cCode, cCat, cID := rd.Col("DENOM_CIA"), rd.Col("CD_CVM"), rd.Col("CATEG_DOC"), rd.Col("ID_DOC")
	var out []DocEntry
	err = opt.EachRow(rd, func() error {
		e := DocEntry{Form: form}
		var err error
		if e.CompanyID, e.ReferenceDate, e.Version, err = filingKey(rd, c); err != nil {
			return err
		}
		recv, err := ParseDate(rd.Field(c[3]))
		if err != nil {
			return rd.Errorf(c[3], "%v: %q", err, rd.Field(c[3]))
		}
		if recv.Valid() {
			e.Received = SaoPauloDay(recv)
		}
		e.Link = rd.String(c[4])
		if e.Link != "" && !strings.HasPrefix(e.Link, "https://") && !strings.HasPrefix(e.Link, "http://") {
			return rd.Errorf(c[4], "want an http(s) address, got %q", e.Link)
		}
		e.CompanyName = rd.String(cName)
		e.CVMCode = CVMCode(rd.Field(cCode))
		e.Category = rd.String(cCat)
		e.DocID = rd.String(cID)
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaoPauloDay is the start of day d in São Paulo, in UTC: 03:00 UTC
// (São Paulo is UTC-3; in the summers it kept daylight saving time, until
// 2019, it was UTC-2, and 03:00 UTC was still that day). The CVM's dates
// of publication (DT_RECEB, Data_Entrega) are São Paulo days: at 00:00 UTC
// they would be the evening before there.
func SaoPauloDay(d engine.Date) time.Time {
	return d.Time().Add(3 * time.Hour)
}

func formOf(name string) string {
	base := []byte(baseName(name))
	for i, c := range base {
		if c == '_' {
			base = base[:i]
			break
		}
	}
	for i, c := range base {
		if c >= 'a' && c <= 'z' {
			base[i] = c - 'a' + 'A'
		}
	}
	return string(base)
}

func baseName(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' || name[i] == '\\' || name[i] == ':' { // dir/file, archive:member
			return name[i+1:]
		}
	}
	return name
}

type docKey struct {
	form, company string
	ref           engine.Date
	version       int
}

// AttachIndex completes reports from filing index entries of the same
// form, company, reference date and version: PublishDate = DT_RECEB and
// one Source {VisualizationURL: LINK_DOC, PublishedAt, RetrievedAt:
// report's RetrievalDate, Name: "CVM <form> <ID_DOC>"}. It modifies
// reports in place and returns how many found no entry (those keep a zero
// PublishDate, which the API answers as null). When an index lists one
// filing twice, the later DT_RECEB wins.
func AttachIndex(reports []engine.Report, idx []DocEntry) (unmatched int) {
	m := make(map[docKey]*DocEntry, len(idx))
	for i := range idx {
		e := &idx[i]
		k := docKey{e.Form, e.CompanyID, e.ReferenceDate, e.Version}
		if p, ok := m[k]; !ok || e.Received.After(p.Received) {
			m[k] = e
		}
	}
	for i := range reports {
		r := &reports[i]
		e, ok := m[docKey{r.Form.String(), r.CompanyID, r.ReferenceDate, r.Version}]
		if !ok {
			unmatched++
			continue
		}
		r.PublishDate = engine.StampOf(e.Received)
		r.Sources = engine.SourcesOf([]engine.Source{{
			VisualizationURL: engine.URLOf(e.Link),
			PublishedAt:      e.Received,
			RetrievedAt:      r.RetrievalDate.Time(),
			Name:             fmt.Sprintf("CVM %s %s", e.Form, e.DocID),
		}})
	}
	return unmatched
}

// ReadCapital reads a composicao_capital table into share counts: one
// point per company and DT_REFER, from its highest VERSAO, sorted by
// company and date. Common = QT_ACAO_ORDIN_CAP_INTEGR, Preferred =
// QT_ACAO_PREF_CAP_INTEGR, Treasury = QT_ACAO_TOTAL_TESOURO (blank counts
// are 0; the spellings QT_ACAO_ORDINARIA_... and QT_ACAO_PREFERENCIAL_...
// are accepted too). Required columns: CNPJ_CIA, DT_REFER, VERSAO and those
// three.
func ReadCapital(r io.Reader, name string, opt Options) ([]engine.SharesPoint, error) {
	cp, err := ReadCapitalVersions(r, name, opt)
	if err != nil {
		return nil, err
	}
	out := make([]engine.SharesPoint, len(cp))
	for i := range cp {
		out[i] = cp[i].SharesPoint
	}
	return out, nil
}

// CapitalPoint is a share count and the VERSAO of the filing it comes
// from.
type CapitalPoint struct {
	engine.SharesPoint
	Version int
}

// ReadCapitalVersions is ReadCapital keeping each point's VERSAO: an
// import of several downloads of one year (each holding the latest
// version of each filing then) keeps the count of the highest.
func ReadCapitalVersions(r io.Reader, name string, opt Options) ([]CapitalPoint, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	names := [][]string{{"CNPJ_CIA"}, {"DT_REFER"}, {"VERSAO"},
		{"QT_ACAO_ORDIN_CAP_INTEGR", "QT_ACAO_ORDINARIA_CAP_INTEGR"},
		{"QT_ACAO_PREF_CAP_INTEGR", "QT_ACAO_PREFERENCIAL_CAP_INTEGR"},
		{"QT_ACAO_TOTAL_TESOURO"}}
	c := make([]int, len(names))
	for i, n := range names {
		if c[i], err = rd.Require(n...); err != nil {
			return nil, err
		}
	}
	type key struct {
		id  string
		ref engine.Date
	}
	best := map[key]CapitalPoint{}
	err = opt.EachRow(rd, func() error {
		var p engine.SharesPoint
		id, ref, v, err := filingKey(rd, c)
		if err != nil {
			return err
		}
		p.CompanyID, p.Date = id, ref
		dst := []*int64{&p.Common, &p.Preferred, &p.Treasury}
		for j, d := range dst {
			f := rd.Field(c[3+j])
			if len(f) == 0 {
				continue
			}
			n, err := ParseInt(f)
			if err != nil || n < 0 {
				return rd.Errorf(c[3+j], "bad share count %q", f)
			}
			*d = n
		}
		k := key{p.CompanyID, p.Date}
		if old, ok := best[k]; !ok || v > old.Version {
			best[k] = CapitalPoint{p, v}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]CapitalPoint, 0, len(best))
	for _, p := range best {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CompanyID != out[j].CompanyID {
			return out[i].CompanyID < out[j].CompanyID
		}
		return out[i].Date < out[j].Date
	})
	return out, nil
}
