package cvm

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// File kinds of the DFP and ITR datasets.
const (
	KindStatement = "statement" // one statement table (BPA, DRE, DMPL...)
	KindIndex     = "index"     // dfp_cia_aberta_YYYY.csv: one row per filing, with LINK_DOC
	KindCapital   = "capital"   // composicao_capital
	KindOther     = "other"     // parecer and unknown members
)

// FileInfo is what a DFP/ITR file name tells: form, table and, for
// statements, statement acronym and aggregation.
type FileInfo struct {
	Form        string // DFP or ITR
	Kind        string // Kind* constant
	Statement   string // BPA, BPP, DRE, DRA, DVA, DFC_MI, DFC_MD or DMPL
	Aggregation string // engine.AggConsolidated (_con) or engine.AggIndividual (_ind)
}

var statementNames = []string{"DFC_MI", "DFC_MD", "DMPL", "BPA", "BPP", "DRE", "DRA", "DVA"}

// ParseFileName classifies a DFP/ITR file name such as
// "dfp_cia_aberta_DRE_con_2023.csv", "itr_cia_aberta_2024.csv" or
// "dfp_cia_aberta_composicao_capital_2023.csv" (directories are ignored,
// case is not significant).
func ParseFileName(name string) (FileInfo, error) {
	base := strings.ToLower(baseName(name))
	var fi FileInfo
	var rest string
	switch {
	case strings.HasPrefix(base, "dfp_cia_aberta_"):
		fi.Form, rest = "DFP", base[len("dfp_cia_aberta_"):]
	case strings.HasPrefix(base, "itr_cia_aberta_"):
		fi.Form, rest = "ITR", base[len("itr_cia_aberta_"):]
	default:
		return fi, fmt.Errorf("%s: not a DFP or ITR file name (want dfp_cia_aberta_* or itr_cia_aberta_*)", name)
	}
	rest = strings.TrimSuffix(rest, ".csv")
	for _, s := range statementNames {
		p := strings.ToLower(s) + "_"
		if !strings.HasPrefix(rest, p) {
			continue
		}
		agg := rest[len(p):]
		switch {
		case strings.HasPrefix(agg, "con"):
			fi.Aggregation = engine.AggConsolidated
		case strings.HasPrefix(agg, "ind"):
			fi.Aggregation = engine.AggIndividual
		default:
			return fi, fmt.Errorf("%s: statement file without _con or _ind", name)
		}
		fi.Kind, fi.Statement = KindStatement, s
		return fi, nil
	}
	switch {
	case strings.HasPrefix(rest, "composicao_capital"):
		fi.Kind = KindCapital
	case rest == "header" || isYear(rest):
		fi.Kind = KindIndex
	default:
		fi.Kind = KindOther
	}
	return fi, nil
}

func isYear(s string) bool {
	if len(s) != 4 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Current-period marker of ORDEM_EXERC. CVM writes "ÚLTIMO" (current
// period) and "PENÚLTIMO" (the previous period's comparatives).
func isLast(b []byte) (last, ok bool) {
	switch string(b) {
	case "ÚLTIMO":
		return true, true
	case "PENÚLTIMO":
		return false, true
	}
	switch strings.ToUpper(string(b)) {
	case "ÚLTIMO", "ULTIMO":
		return true, true
	case "PENÚLTIMO", "PENULTIMO":
		return false, true
	}
	return false, false
}

// ReadStatements reads one DFP/ITR statement table (a per-statement CSV;
// name decides form, statement and aggregation, see ParseFileName) into
// reports, one per (company, DT_REFER, VERSAO, DT_INI_EXERC,
// DT_FIM_EXERC), sorted by company, reference date, start date, end date
// and version. Every version is its own report.
//
// Only rows of the current period (ORDEM_EXERC ÚLTIMO) are imported:
// PENÚLTIMO rows repeat the previous period's figures as comparatives and
// are counted in Stats.Previous (that period's own filing carries them).
// ITR statements of results hold two current periods per filing (the
// quarter and the year to date): they become two reports, told apart by
// StartDate.
//
// VL_CONTA is multiplied by ESCALA_MOEDA (UNIDADE 1, MIL 1000) except on
// the per-share lines of the DRE (codes 3.99...), which are BRL per share.
// StartDate is NoDate for balance sheets (no DT_INI_EXERC column).
// PublishDate is zero and Sources empty: AttachIndex fills them from the
// filing index. RetrievalDate is opt.Retrieved.
//
// DMPL tables (statement of changes in equity, one more dimension
// COLUNA_DF) are read and validated but not imported: the API has no such
// statement; their rows are counted in Stats.Ignored and no report is
// returned.
func ReadStatements(r io.Reader, name string, opt Options) ([]engine.Report, error) {
	fi, err := ParseFileName(name)
	if err != nil {
		return nil, err
	}
	if fi.Kind != KindStatement {
		return nil, fmt.Errorf("%s: not a statement table", name)
	}
	return readStatements(r, name, fi, opt)
}

type reportKey struct {
	company      string
	ref, ini, fm engine.Date
	version      int
}

func readStatements(r io.Reader, name string, fi FileInfo, opt Options) ([]engine.Report, error) {
	rd, err := opt.Open(r, name)
	if err != nil {
		return nil, err
	}
	cols := map[string]int{}
	req := []string{"CNPJ_CIA", "DT_REFER", "VERSAO", "ESCALA_MOEDA", "ORDEM_EXERC", "DT_FIM_EXERC",
		"CD_CONTA", "DS_CONTA", "VL_CONTA", "ST_CONTA_FIXA"}
	if fi.Statement != "BPA" && fi.Statement != "BPP" {
		req = append(req, "DT_INI_EXERC")
	}
	if fi.Statement == "DMPL" {
		req = append(req, "COLUNA_DF")
	}
	for _, c := range req {
		i, err := rd.Require(c)
		if err != nil {
			return nil, err
		}
		cols[c] = i
	}
	cIni := rd.Col("DT_INI_EXERC")
	cOrd, cCNPJ, cRef, cFim, cVer := cols["ORDEM_EXERC"], cols["CNPJ_CIA"], cols["DT_REFER"], cols["DT_FIM_EXERC"], cols["VERSAO"]
	cEsc, cCode, cVal, cFix, cDesc := cols["ESCALA_MOEDA"], cols["CD_CONTA"], cols["VL_CONTA"], cols["ST_CONTA_FIXA"], cols["DS_CONTA"]
	var lastRaw []byte // CNPJ field of the previous row, and its digits
	lastID := ""
	dmpl := fi.Statement == "DMPL"

	type group struct {
		idx   int
		codes map[string]struct{}
	}
	groups := map[reportKey]*group{}
	var lastKey reportKey
	var lastGroup *group
	var reports []engine.Report
	err = opt.EachRow(rd, func() error {
		current, ok := isLast(rd.Field(cOrd))
		if !ok {
			return rd.Errorf(cOrd, "want ÚLTIMO or PENÚLTIMO, got %q", rd.Field(cOrd))
		}
		var k reportKey
		var err error
		if raw := rd.Field(cCNPJ); lastID != "" && bytes.Equal(raw, lastRaw) {
			k.company = lastID
		} else {
			if k.company, err = cnpj(raw); err != nil {
				return rd.Errorf(cCNPJ, "%v", err)
			}
			lastRaw, lastID = append(lastRaw[:0], raw...), k.company
		}
		if k.ref, err = reqDate(rd, cRef); err != nil {
			return err
		}
		if k.fm, err = reqDate(rd, cFim); err != nil {
			return err
		}
		k.ini = engine.NoDate
		if cIni >= 0 {
			if k.ini, err = reqDate(rd, cIni); err != nil {
				return err
			}
			if k.ini > k.fm {
				return rd.Errorf(cIni, "period starts %s, after its end %s", k.ini, k.fm)
			}
		}
		if k.version, err = version(rd, cVer); err != nil {
			return err
		}
		scale, err := escala(rd, cEsc)
		if err != nil {
			return err
		}
		code := rd.Intern(cCode)
		if !ValidAccountCode(code) {
			return rd.Errorf(cCode, "bad account code %q (want dotted digits, e.g. 1.01.02)", code)
		}
		val, err := ParseNum(rd.Field(cVal))
		if err != nil {
			return rd.Errorf(cVal, "%v: %q", err, rd.Field(cVal))
		}
		fixed, err := yesNo(rd, cFix)
		if err != nil {
			return err
		}
		if dmpl {
			opt.add(func(s *Stats) { s.Ignored++ })
			return nil
		}
		if !current {
			opt.add(func(s *Stats) { s.Previous++ })
			return nil
		}
		if !(fi.Statement == "DRE" && (code == "3.99" || strings.HasPrefix(code, "3.99."))) {
			val *= engine.Num(scale)
		}
		g := lastGroup
		if g == nil || k != lastKey {
			var ok bool
			if g, ok = groups[k]; !ok {
				g = &group{idx: len(reports), codes: map[string]struct{}{}}
				groups[k] = g
				reports = append(reports, engine.Report{
					CompanyID:     k.company,
					Statement:     engine.MustLabel(fi.Statement),
					Aggregation:   engine.MustLabel(fi.Aggregation),
					Form:          engine.MustLabel(fi.Form),
					ReferenceDate: k.ref,
					StartDate:     k.ini,
					EndDate:       k.fm,
					RetrievalDate: engine.StampOf(opt.Retrieved),
					Version:       k.version,
				})
			}
			lastGroup, lastKey = g, k
		}
		if _, dup := g.codes[code]; dup {
			return rd.Errorf(cCode, "account %s repeated in one report", code)
		}
		g.codes[code] = struct{}{}
		gi := g.idx
		reports[gi].Accounts = append(reports[gi].Accounts, engine.NewAccount(code, rd.Intern(cDesc), fixed, val))
		return nil
	})
	if err != nil {
		return nil, err
	}
	SortReports(reports)
	return reports, nil
}

// SortReports orders reports by company, form, statement, aggregation,
// reference date, start date, end date and version.
func SortReports(rs []engine.Report) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := &rs[i], &rs[j]
		switch {
		case a.CompanyID != b.CompanyID:
			return a.CompanyID < b.CompanyID
		case a.Form != b.Form:
			return a.Form.Compare(b.Form) < 0
		case a.Statement != b.Statement:
			return a.Statement.Compare(b.Statement) < 0
		case a.Aggregation != b.Aggregation:
			return a.Aggregation.Compare(b.Aggregation) < 0
		case a.ReferenceDate != b.ReferenceDate:
			return a.ReferenceDate < b.ReferenceDate
		case a.StartDate != b.StartDate:
			return a.StartDate < b.StartDate
		case a.EndDate != b.EndDate:
			return a.EndDate < b.EndDate
		}
		return a.Version < b.Version
	})
}

// ValidAccountCode reports whether code is dotted digits ("3", "1.01.02").
func ValidAccountCode(code string) bool {
	digit := false
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' && digit:
			digit = false
		default:
			return false
		}
	}
	return digit
}

func reqDate(rd *Reader, col int) (engine.Date, error) {
	d, err := ParseDate(rd.Field(col))
	if err != nil {
		return engine.NoDate, rd.Errorf(col, "%v: %q", err, rd.Field(col))
	}
	if !d.Valid() {
		return engine.NoDate, rd.Errorf(col, "empty date")
	}
	return d, nil
}

// filingKey reads what keys a row of a periodic filing: the company id
// (the CNPJ of column cols[0]), the reference date (cols[1], required)
// and the version (cols[2]).
func filingKey(rd *Reader, cols []int) (id string, ref engine.Date, ver int, err error) {
	if id, err = cnpj(rd.Field(cols[0])); err != nil {
		return "", engine.NoDate, 0, rd.Errorf(cols[0], "%v", err)
	}
	if ref, err = reqDate(rd, cols[1]); err != nil {
		return "", engine.NoDate, 0, err
	}
	if ver, err = version(rd, cols[2]); err != nil {
		return "", engine.NoDate, 0, err
	}
	return id, ref, ver, nil
}

// version reads the document version of column col: an integer from 1
// to 1<<20 (VERSAO, Versao).
func version(rd *Reader, col int) (int, error) {
	v, err := ParseInt(rd.Field(col))
	if err != nil || v < 1 || v > 1<<20 {
		return 0, rd.Errorf(col, "bad version %q", rd.Field(col))
	}
	return int(v), nil
}

func escala(rd *Reader, col int) (float64, error) {
	switch strings.ToUpper(string(rd.Field(col))) {
	case "UNIDADE":
		return 1, nil
	case "MIL":
		return 1000, nil
	}
	return 0, rd.Errorf(col, "unknown scale %q (want UNIDADE or MIL)", rd.Field(col))
}

func yesNo(rd *Reader, col int) (bool, error) {
	switch string(rd.Field(col)) {
	case "S":
		return true, nil
	case "N", "":
		return false, nil
	}
	return false, rd.Errorf(col, "want S or N, got %q", rd.Field(col))
}
