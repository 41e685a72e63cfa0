package fii

import (
	"archive/zip"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// Table kinds of the monthly report.
const (
	TableGeneral     = "geral"
	TableComplement  = "complemento"
	TableAssetsLiabs = "ativo_passivo"
)

// TableOf returns the table of an inf_mensal_fii file name (geral,
// complemento or ativo_passivo), or "" for any other name.
func TableOf(name string) string {
	base := strings.ToLower(filepath.Base(name))
	if i := strings.LastIndexByte(base, ':'); i >= 0 {
		base = base[i+1:] // archive:member
	}
	if !strings.HasPrefix(base, "inf_mensal_fii_") || !strings.HasSuffix(base, ".csv") {
		return ""
	}
	rest := base[len("inf_mensal_fii_"):]
	for _, t := range []string{TableGeneral, TableComplement, TableAssetsLiabs} {
		if strings.HasPrefix(rest, t) {
			return t
		}
	}
	return ""
}

// Fund is a fund as its latest general report (highest Data_Referencia,
// then Versao) describes it.
type Fund struct {
	Company  engine.Company
	ISIN     string      // Codigo_ISIN, "" when the fund has none
	Segment  string      // Segmento_Atuacao (Shoppings, Logística...)
	Mandate  string      // Mandato (Renda, Títulos e Valores Mobiliários...)
	Audience string      // Publico_Alvo
	Latest   engine.Date // reference month of that report
}

// Monthly is the result of reading a set of monthly-report tables.
type Monthly struct {
	// Funds has one Company per fund (KindFII, ID = CNPJ digits), sorted
	// by ID.
	Funds []engine.Company
	// Reports has one FundReport per (fund, month, version), sorted by
	// fund, month and version.
	Reports []engine.FundReport
	// ISIN maps fund ID -> ISIN of its latest general report, for the
	// join to the quote files' tickers; funds without an ISIN are absent.
	ISIN map[string]string
	// Details has the extra fields of each fund, by fund ID.
	Details map[string]Fund
	// Orphans counts complement or assets/liabilities rows whose key has
	// no general row: their report has no publish date and the fund no
	// name.
	Orphans int
	// Repeated counts general and complement rows of a (fund, month,
	// version) an earlier file gave, with the same figures: two
	// downloads of a year's tables (each holds the latest version of each
	// month then) repeat what did not change.
	Repeated int
}

type key struct {
	id      string
	ref     engine.Date
	version int
}

// entry is what the tables say about one (fund, month, version).
type entry struct {
	rep                      engine.FundReport
	general, complement, any bool // rows seen: general, complement, any table
	genFile, compFile        int  // the file (joiner.file) of the general and complement rows
}

// joiner accumulates the three tables.
type joiner struct {
	opt     cvm.Options
	entries map[key]*entry
	slab    []entry // entries are allocated from here, in blocks
	funds   map[string]*Fund
	fundKey map[string]key

	lastRaw []byte // CNPJ field of the previous row, and its digits
	lastID  string

	file     int // files read so far: the number of the current one
	repeated int // rows an earlier file gave alike (Monthly.Repeated)
}

func newJoiner(opt cvm.Options) *joiner {
	return &joiner{opt: opt, entries: map[key]*entry{}, funds: map[string]*Fund{}, fundKey: map[string]key{}}
}

func (j *joiner) entry(k key) *entry {
	if e, ok := j.entries[k]; ok {
		return e
	}
	if len(j.slab) == 0 {
		j.slab = make([]entry, 1024)
	}
	e := &j.slab[0]
	j.slab = j.slab[1:]
	e.rep = engine.FundReport{
		FundID: k.id, ReferenceDate: k.ref, Version: k.version, RetrievalDate: j.opt.Retrieved,
		NetAssets: engine.Null, SharesOut: engine.Null, NAVPerShare: engine.Null, Investors: engine.Null,
		DividendYield: engine.Null, MonthlyReturn: engine.Null, TotalAssets: engine.Null,
	}
	j.entries[k] = e
	return e
}

// Column spellings: up to 2023 the key is CNPJ_Fundo and the name
// Nome_Fundo; from 2024 (funds with classes) CNPJ_Fundo_Classe and
// Nome_Fundo_Classe. Either is accepted.
var (
	colCNPJ = []string{"CNPJ_Fundo", "CNPJ_Fundo_Classe"}
	colName = []string{"Nome_Fundo", "Nome_Fundo_Classe"}
)

func (j *joiner) keyOf(rd *cvm.Reader, c [3]int) (key, error) {
	var k key
	raw := rd.Field(c[0])
	if j.lastID != "" && bytes.Equal(raw, j.lastRaw) {
		k.id = j.lastID
	} else {
		id := cvm.Digits(raw)
		if id == "" || len(id) > 14 {
			return k, rd.Errorf(c[0], "bad CNPJ %q", raw)
		}
		k.id = strings.Repeat("0", 14-len(id)) + id
		j.lastRaw, j.lastID = append(j.lastRaw[:0], raw...), k.id
	}
	d, err := cvm.ParseDate(rd.Field(c[1]))
	if err != nil || !d.Valid() {
		return k, rd.Errorf(c[1], "bad reference date %q", rd.Field(c[1]))
	}
	if y, m, day := d.Time().Date(); day != 1 {
		d = engine.MakeDate(y, m, 1) // the month, as CVM writes it (first day)
	}
	k.ref = d
	v, err := cvm.ParseInt(rd.Field(c[2]))
	if err != nil || v < 1 || v > 1<<20 {
		return k, rd.Errorf(c[2], "bad version %q", rd.Field(c[2]))
	}
	k.version = int(v)
	return k, nil
}

// read reads one table from r.
func (j *joiner) read(r io.Reader, name, table string) error {
	rd, err := j.opt.Open(r, name)
	if err != nil {
		return err
	}
	j.file++
	var kc [3]int
	if kc[0], err = rd.Require(colCNPJ...); err != nil {
		return err
	}
	if kc[1], err = rd.Require("Data_Referencia"); err != nil {
		return err
	}
	if kc[2], err = rd.Require("Versao"); err != nil {
		return err
	}
	var row func(k key) error
	switch table {
	case TableGeneral:
		row, err = j.generalRow(rd)
	case TableComplement:
		row, err = j.complementRow(rd)
	case TableAssetsLiabs:
		row = func(k key) error { j.entry(k).any = true; return nil }
	default:
		return fmt.Errorf("%s: unknown monthly-report table %q", name, table)
	}
	if err != nil {
		return err
	}
	return j.opt.EachRow(rd, func() error {
		k, err := j.keyOf(rd, kc)
		if err != nil {
			return err
		}
		return row(k)
	})
}

func (j *joiner) generalRow(rd *cvm.Reader) (func(key) error, error) {
	cEnt, err := rd.Require("Data_Entrega")
	if err != nil {
		return nil, err
	}
	cName, err := rd.Require(colName...)
	if err != nil {
		return nil, err
	}
	cISIN, err := rd.Require("Codigo_ISIN")
	if err != nil {
		return nil, err
	}
	cFunc, cSeg, cMand, cPub, cSite := rd.Col("Data_Funcionamento"), rd.Col("Segmento_Atuacao"), rd.Col("Mandato"),
		rd.Col("Publico_Alvo"), rd.Col("Site")
	cLog, cNum, cComp, cBai, cCid, cUF, cCEP := rd.Col("Logradouro"), rd.Col("Numero"), rd.Col("Complemento"),
		rd.Col("Bairro"), rd.Col("Cidade"), rd.Col("Estado"), rd.Col("CEP")
	return func(k key) error {
		ent, err := cvm.ParseDate(rd.Field(cEnt))
		if err != nil {
			return rd.Errorf(cEnt, "bad date %q", rd.Field(cEnt))
		}
		fd, err := cvm.ParseDate(rd.Field(cFunc))
		if err != nil {
			return rd.Errorf(cFunc, "bad date %q", rd.Field(cFunc))
		}
		e := j.entry(k)
		var pub time.Time
		if ent.Valid() {
			pub = cvm.SaoPauloDay(ent)
		}
		if e.general {
			if e.genFile == j.file {
				return rd.Errorf(-1, "fund %s month %s version %d repeated", k.id, k.ref, k.version)
			}
			if !pub.Equal(e.rep.PublishDate) {
				return rd.Errorf(cEnt, "fund %s month %s version %d delivered %s in an earlier file", k.id, k.ref, k.version, dayOf(e.rep.PublishDate))
			}
			j.repeated++ // another download's copy
			return nil
		}
		e.general, e.any, e.genFile = true, true, j.file
		rep := &e.rep
		rep.PublishDate = pub
		prev, ok := j.fundKey[k.id]
		if ok && (k.ref < prev.ref || (k.ref == prev.ref && k.version < prev.version)) {
			return nil
		}
		j.fundKey[k.id] = k
		line1 := rd.String(cLog)
		if n := rd.String(cNum); n != "" {
			line1 = strings.TrimSpace(line1 + ", " + n)
		}
		seg := rd.String(cSeg)
		sub, _ := sectors.FromFII(seg)
		j.funds[k.id] = &Fund{
			Company: engine.Company{
				ID: k.id, Name: rd.String(cName), Kind: engine.KindFII, Employees: -1, SubIndustryID: sub,
				FreeFloat: engine.Null, FoundingDate: fd, IPODate: engine.NoDate, StatusDate: engine.NoDate, Website: rd.String(cSite),
				Address: engine.Address{Line1: line1, Line2: join(rd.String(cComp), rd.String(cBai)),
					City: rd.String(cCid), State: rd.String(cUF), PostalCode: rd.String(cCEP), Country: "BRASIL"},
			},
			ISIN: strings.ToUpper(rd.String(cISIN)), Segment: seg, Mandate: rd.String(cMand),
			Audience: rd.String(cPub), Latest: k.ref,
		}
		return nil
	}, nil
}

// dayOf is the São Paulo day of a publish time (cvm.SaoPauloDay), "none"
// when zero.
func dayOf(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return t.Format(time.DateOnly)
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " - " + b
}

func (j *joiner) complementRow(rd *cvm.Reader) (func(key) error, error) {
	names := []string{"Patrimonio_Liquido", "Cotas_Emitidas", "Valor_Patrimonial_Cotas", "Total_Numero_Cotistas",
		"Percentual_Dividend_Yield_Mes", "Percentual_Rentabilidade_Efetiva_Mes", "Valor_Ativo"}
	var c [7]int
	for i, n := range names {
		var err error
		if c[i], err = rd.Require(n); err != nil {
			return nil, err
		}
	}
	return func(k key) error {
		var v [7]engine.Num
		for i := range c {
			n, err := cvm.ParseNum(rd.Field(c[i]))
			if err != nil {
				return rd.Errorf(c[i], "%v: %q", err, rd.Field(c[i]))
			}
			v[i] = n
		}
		e := j.entry(k)
		r := &e.rep
		if e.complement {
			if e.compFile == j.file {
				return rd.Errorf(-1, "fund %s month %s version %d repeated", k.id, k.ref, k.version)
			}
			old := [7]engine.Num{r.NetAssets, r.SharesOut, r.NAVPerShare, r.Investors, r.DividendYield, r.MonthlyReturn, r.TotalAssets}
			for i := range v {
				if v[i] != old[i] && (v[i].Valid() || old[i].Valid()) {
					return rd.Errorf(c[i], "fund %s month %s version %d: other figures than an earlier file's (%v)", k.id, k.ref, k.version, old[i])
				}
			}
			j.repeated++ // another download's copy
			return nil
		}
		e.complement, e.any, e.compFile = true, true, j.file
		r.NetAssets, r.SharesOut, r.NAVPerShare, r.Investors = v[0], v[1], v[2], v[3]
		r.DividendYield, r.MonthlyReturn, r.TotalAssets = v[4], v[5], v[6]
		return nil
	}, nil
}

func (j *joiner) result() *Monthly {
	m := &Monthly{ISIN: map[string]string{}, Details: map[string]Fund{}, Repeated: j.repeated}
	for _, e := range j.entries {
		if !e.general {
			m.Orphans++
		}
	}
	latest := engine.NoDate
	for _, f := range j.funds {
		if f.Latest > latest {
			latest = f.Latest
		}
	}
	for id, f := range j.funds {
		if f.Latest == latest {
			f.Company.Status = "ACTIVE"
		}
		m.Funds = append(m.Funds, f.Company)
		m.Details[id] = *f
		if f.ISIN != "" {
			m.ISIN[id] = f.ISIN
		}
	}
	sort.Slice(m.Funds, func(a, b int) bool { return m.Funds[a].ID < m.Funds[b].ID })
	// Sort entry pointers, then copy each report once.
	es := make([]*entry, 0, len(j.entries))
	for _, e := range j.entries {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b *entry) int {
		x, y := &a.rep, &b.rep
		return cmp.Or(strings.Compare(x.FundID, y.FundID), cmp.Compare(x.ReferenceDate, y.ReferenceDate),
			cmp.Compare(x.Version, y.Version))
	})
	m.Reports = make([]engine.FundReport, 0, len(es))
	// Reports published the same day share one (read-only) Sources slice.
	sources := map[time.Time][]engine.Source{}
	for _, e := range es {
		r := &e.rep
		if pub := r.PublishDate; !pub.IsZero() {
			src, ok := sources[pub]
			if !ok {
				src = []engine.Source{{
					VisualizationURL: engine.URLOf("https://dados.cvm.gov.br/dataset/fii-doc-inf_mensal"),
					PublishedAt:      pub,
					RetrievedAt:      r.RetrievalDate,
					Name:             "CVM inf_mensal_fii",
				}}
				sources[pub] = src
			}
			r.Sources = src
		}
		m.Reports = append(m.Reports, *r)
	}
	return m
}

// File is one input table: Name decides the table (see TableOf) and is
// used in errors; Open returns its bytes.
type File struct {
	Name string
	Open func() (io.ReadCloser, error)
}

// ReadMonthly reads FII monthly reports from paths: CSV files named
// inf_mensal_fii_{geral,complemento,ativo_passivo}_YYYY.csv, yearly
// archives inf_mensal_fii_YYYY.zip holding them, or directories holding
// either (not recursive). Files of other names inside directories and
// archives are ignored; a path given explicitly must be a table or an
// archive. See ReadMonthlyFiles for the join.
func ReadMonthly(paths []string, opt cvm.Options) (*Monthly, error) {
	var files []File
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	var add func(p string, explicit bool) error
	add = func(p string, explicit bool) error {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		switch {
		case st.IsDir():
			if !explicit {
				return nil
			}
			ents, err := os.ReadDir(p)
			if err != nil {
				return err
			}
			for _, e := range ents {
				if err := add(filepath.Join(p, e.Name()), false); err != nil {
					return err
				}
			}
		case strings.HasSuffix(strings.ToLower(p), ".zip"):
			zr, err := zip.OpenReader(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			closers = append(closers, zr)
			for _, zf := range zr.File {
				if TableOf(zf.Name) == "" {
					continue
				}
				files = append(files, File{Name: p + ":" + zf.Name, Open: zf.Open})
			}
		case TableOf(p) != "":
			files = append(files, File{Name: p, Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		case explicit:
			return fmt.Errorf("%s: not an inf_mensal_fii table or archive", p)
		}
		return nil
	}
	for _, p := range paths {
		if err := add(p, true); err != nil {
			return nil, err
		}
	}
	return ReadMonthlyFiles(files, opt)
}

// ReadMonthlyFiles reads the given tables and joins them on (CNPJ,
// Data_Referencia, Versao); every version is its own FundReport. CVM's
// yearly tables hold the latest version of each fund's month only, so
// the versions are kept by reading every download of a year: a general
// or complement row of a key an earlier file gave is skipped and counted
// (Monthly.Repeated) when it says the same (delivery date; the
// complement's figures), an error when it does not; within one file a
// repeated key is an error.
//
// From the general table (geral): the fund (name, ISIN, start of
// operations as FoundingDate, address, site) as of its latest report, and
// PublishDate = Data_Entrega. From the complement (complemento):
// NetAssets = Patrimonio_Liquido, SharesOut = Cotas_Emitidas, NAVPerShare
// = Valor_Patrimonial_Cotas, Investors = Total_Numero_Cotistas,
// DividendYield = Percentual_Dividend_Yield_Mes, MonthlyReturn =
// Percentual_Rentabilidade_Efetiva_Mes, TotalAssets = Valor_Ativo.
// ReferenceDate is the first day of the Data_Referencia month (CVM
// writes it so; another day of the month is brought back to the first). The
// Percentual_* columns are fractions in the files (0.00711 is 0.711%) and
// are kept as fractions. Blank values are Null. The assets/liabilities
// table (ativo_passivo) is read and validated for the join but feeds no
// FundReport field.
//
// A fund whose latest general report is for the latest month of the
// input has Status ACTIVE; others have Status "" (unknown). Sources name
// the CVM dataset with the Data_Entrega date.
func ReadMonthlyFiles(files []File, opt cvm.Options) (*Monthly, error) {
	j := newJoiner(opt)
	for _, f := range files {
		t := TableOf(f.Name)
		if t == "" {
			return nil, fmt.Errorf("%s: not an inf_mensal_fii table", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		err = j.read(rc, f.Name, t)
		rc.Close()
		if err != nil {
			return nil, err
		}
	}
	return j.result(), nil
}

// ReadMonthlyReader reads one table from r (name decides the table) and
// returns the joined result of that table alone. It is meant for tests
// and tools; imports use ReadMonthly.
func ReadMonthlyReader(r io.Reader, name string, opt cvm.Options) (*Monthly, error) {
	t := TableOf(name)
	if t == "" {
		return nil, fmt.Errorf("%s: not an inf_mensal_fii table", name)
	}
	j := newJoiner(opt)
	if err := j.read(r, name, t); err != nil {
		return nil, err
	}
	return j.result(), nil
}
