package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// statementNames are the report names of the raw statements.
var statementNames = map[string]string{
	"BPA":    "Balanço Patrimonial Ativo",
	"BPP":    "Balanço Patrimonial Passivo",
	"DRE":    "Demonstração do Resultado",
	"DRA":    "Demonstração do Resultado Abrangente",
	"DVA":    "Demonstração do Valor Adicionado",
	"DFC_MI": "Demonstração do Fluxo de Caixa - Método Indireto",
	"DFC_MD": "Demonstração do Fluxo de Caixa - Método Direto",
}

// reportFilter is the common filter of raw and standardized reports.
type reportFilter struct {
	statements []string // "" = every one
	agg        string
	ref        engine.Date
	year       int
	quarter    int
	pub, ret   timeParam
	latestRef  bool
	asOf       time.Time // zero: now
}

type timeParam = struct {
	set bool
	t   int64 // unix nanoseconds
}

func (f *reportFilter) keep(r *engine.Report) bool {
	if f.statements != nil && !contains(f.statements, r.Statement.String()) {
		return false
	}
	if f.agg != "" && r.Aggregation.String() != f.agg {
		return false
	}
	if f.ref.Valid() && r.ReferenceDate != f.ref {
		return false
	}
	if f.year != 0 || f.quarter != 0 {
		y, m, _ := r.ReferenceDate.Time().Date()
		if f.year != 0 && y != f.year || f.quarter != 0 && (int(m)+2)/3 != f.quarter {
			return false
		}
	}
	if f.pub.set && r.PublishDate.Time().UnixNano() <= f.pub.t || f.ret.set && r.RetrievalDate.Time().UnixNano() <= f.ret.t {
		return false
	}
	if !f.asOf.IsZero() && !r.KnownAt(f.asOf) {
		return false
	}
	return true
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// superseded reports whether a later report of the same statement,
// aggregation and reference date (reports are in reference_date,
// statement, aggregation, version order) passes the filter.
func superseded(rs []*engine.Report, i int, f *reportFilter) bool {
	r := rs[i]
	for _, o := range rs[i+1:] {
		if o.ReferenceDate != r.ReferenceDate {
			return false
		}
		if o.Statement == r.Statement && o.Aggregation == r.Aggregation && f.keep(o) && !o.PublishDate.Before(r.PublishDate) {
			return true
		}
	}
	return false
}

// readReportFilter reads the parameters shared by both report endpoints.
func readReportFilter(q *query, ds *engine.Dataset) reportFilter {
	f := reportFilter{
		agg:     q.enum("aggregation"),
		ref:     q.date("reference_date"),
		year:    q.integer("year"),
		quarter: q.integer("quarter"),
	}
	pub := q.timestamp("publish_date")
	ret := q.timestamp("retrieval_date")
	f.pub = timeParam{!pub.IsZero(), pub.UnixNano()}
	f.ret = timeParam{!ret.IsZero(), ret.UnixNano()}
	f.latestRef = q.boolean("latest_by_reference_date")
	f.asOf = q.asOf(ds)
	return f
}

// rawReports serves GET /companies/:id/raw-reports: reports as filed, in
// reference_date, statement, aggregation and version order.
func (a *API) rawReports(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	f := readReportFilter(&q, c.ds)
	if rt := q.enum("report_type"); rt != "" {
		f.statements = []string{rt}
	}
	flat := q.boolean("flat")
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	if err := a.checkCompany(c, res.Issuer); err != nil {
		return nil, err
	}
	rs := res.Issuer.Reports()
	pass := func(i int) bool { return f.keep(rs[i]) && !(f.latestRef && superseded(rs, i, &f)) }
	sendCount(c, len(rs), pass)
	k := 0 // passing items seen
	dst = append(dst, '[')
	n := 0
	for i, rep := range rs {
		if !pass(i) {
			continue
		}
		if k++; !w.in(k - 1) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"report_type":{"name":`...)
		dst = appendString(dst, statementNames[rep.Statement.String()])
		dst = append(dst, `,"acronym":`...)
		dst = appendString(dst, rep.Statement.String())
		dst = append(dst, `,"aggregation":`...)
		dst = appendString(dst, rep.Aggregation.String())
		dst = append(dst, '}')
		dst = appendReportDates(dst, rep)
		if flat {
			dst = append(dst, `,"data":`...)
			dst = appendFlat(dst, rep.AccountList())
		} else {
			dst = append(dst, `,"tree_data":`...)
			dst = appendTree(dst, rep)
		}
		dst = append(dst, `,"sources":`...)
		dst = appendSources(dst, rep.Sources.All())
		dst = c.flush(append(dst, '}'))
	}
	return append(dst, ']'), nil
}

func appendReportDates(dst []byte, rep *engine.Report) []byte {
	dst = append(dst, `,"reference_date":`...)
	dst = appendDateISO(dst, rep.ReferenceDate)
	dst = append(dst, `,"start_date":`...)
	dst = appendDateISO(dst, rep.StartDate)
	dst = append(dst, `,"end_date":`...)
	dst = appendDateISO(dst, rep.EndDate)
	dst = append(dst, `,"publish_date":`...)
	dst = appendTime(dst, rep.PublishDate.Time())
	dst = append(dst, `,"retrieval_date":`...)
	dst = appendTime(dst, rep.RetrievalDate.Time())
	dst = append(dst, `,"version":`...)
	return appendInt(dst, int64(rep.Version))
}

// appendTree appends the account tree of rep. The node is the report's only
// top-level account when there is one; otherwise a root named after the
// report, with the top-level digit as code and value null, holds them. An
// account whose parent code is absent hangs from the nearest present
// ancestor (or is top-level). Children keep the report's order. As the
// specification's tree node says, aggregating nodes (with children) have
// value null; leaves carry the reported value.
func appendTree(dst []byte, rep *engine.Report) []byte {
	acc := rep.AccountList()
	pos := make(map[string]int32, acc.Len())
	for i := range acc.Len() {
		pos[acc.At(i).Code()] = int32(i)
	}
	// parent[i] is the index of account i's nearest present ancestor, or
	// -1; the children of account p are kids[first[p]:first[p+1]], in
	// report order (one array for the whole tree).
	parent := make([]int32, acc.Len())
	first := make([]int32, acc.Len()+2)
	ntop := 0
	for i := range acc.Len() {
		parent[i] = -1
		code := acc.At(i).Code()
		for j := len(code) - 1; j >= 0; j-- {
			if code[j] != '.' {
				continue
			}
			if p, ok := pos[code[:j]]; ok {
				parent[i] = p
				break
			}
		}
		if parent[i] < 0 {
			ntop++
		} else {
			first[parent[i]+2]++
		}
	}
	for k := 2; k < len(first); k++ {
		first[k] += first[k-1]
	}
	kids := make([]int32, acc.Len()-ntop)
	var tops []int32
	for i := range acc.Len() {
		if p := parent[i]; p < 0 {
			tops = append(tops, int32(i))
		} else {
			kids[first[p+1]] = int32(i)
			first[p+1]++
		}
	}
	t := tree{acc: acc, kids: kids, first: first[:acc.Len()+1]}
	if len(tops) == 1 {
		return t.appendNode(dst, tops[0])
	}
	code := ""
	if acc.Len() > 0 {
		code, _, _ = strings.Cut(acc.At(0).Code(), ".")
	}
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, statementNames[rep.Statement.String()])
	dst = append(dst, `,"code":`...)
	dst = appendString(dst, code)
	dst = append(dst, `,"value":null,"children":[`...)
	for j, i := range tops {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = t.appendNode(dst, i)
	}
	return append(dst, "]}"...)
}

// tree is an account tree: the children of account i are
// kids[first[i]:first[i+1]].
type tree struct {
	acc         engine.AccountList
	kids, first []int32
}

// appendNode appends account i and its descendants.
func (t *tree) appendNode(dst []byte, i int32) []byte {
	a := t.acc.At(int(i))
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, a.Name())
	dst = append(dst, `,"code":`...)
	dst = appendString(dst, a.Code())
	dst = append(dst, `,"value":`...)
	kids := t.kids[t.first[i]:t.first[i+1]]
	if len(kids) > 0 {
		dst = append(dst, "null"...) // an aggregating node; its reported total is in the flat data
	} else {
		dst = appendNum(dst, a.Value)
	}
	dst = append(dst, `,"children":[`...)
	for n, j := range kids {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = t.appendNode(dst, j)
	}
	return append(dst, "]}"...)
}

// appendFlat appends {"Name | Child | Grandchild": value, ...}: each
// account keyed by the names of its path joined with " | " (an account
// whose key was already given gets " (code)" appended). One string is
// allocated per account (the key, remembered to find repeats).
func appendFlat(dst []byte, acc engine.AccountList) []byte {
	byCode := make(map[string]string, acc.Len())
	for i := range acc.Len() {
		a := acc.At(i)
		byCode[a.Code()] = a.Name()
	}
	dst = append(dst, '{')
	seen := make(map[string]struct{}, acc.Len())
	var buf [256]byte
	for i := range acc.Len() {
		a := acc.At(i)
		code := a.Code()
		key, names := buf[:0], 0
		for j := 0; j <= len(code); j++ { // every prefix ending at a dot, then the code
			if j < len(code) && code[j] != '.' {
				continue
			}
			if n, ok := byCode[code[:j]]; ok {
				if names > 0 {
					key = append(key, " | "...)
				}
				key = append(key, n...)
				names++
			}
		}
		if _, dup := seen[string(key)]; dup {
			key = append(key, " ("...) // two accounts with the same path of names
			key = append(key, code...)
			key = append(key, ')')
		}
		k := string(key)
		seen[k] = struct{}{}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendNum(dst, a.Value)
	}
	return append(dst, '}')
}

// Standardized report sections and the statements they draw from.
var sectionStatements = map[string][]string{
	engine.SectionBalanceSheet:        {"BPA", "BPP"},
	engine.SectionIncomeStatement:     {"DRE"},
	engine.SectionComprehensiveIncome: {"DRA"},
	engine.SectionCashFlow:            {"DFC_MI", "DFC_MD"},
	engine.SectionValueAdded:          {"DVA"},
}

// reports serves GET /companies/:id/reports: standardized statements, one
// item per filed report, its values keyed by standardized line id.
// frequency selects the reports of that period (reportFrequency).
func (a *API) reports(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	f := readReportFilter(&q, c.ds)
	if sec := q.enum("section"); sec != "" {
		f.statements = sectionStatements[sec]
	}
	freq := q.enum("frequency")
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	if err := a.checkCompany(c, res.Issuer); err != nil {
		return nil, err
	}
	rs := res.Issuer.Reports()
	var valBuf [64]engine.Num
	pass := func(i int) bool {
		return f.keep(rs[i]) && (freq == "" || reportFrequency(rs, i) == freq) &&
			!(f.latestRef && superseded(rs, i, &f)) && len(engine.LinesFor(rs[i].Statement.String())) > 0
	}
	sendCount(c, len(rs), pass)
	k := 0 // passing items seen
	dst = append(dst, '[')
	n := 0
	for i, rep := range rs {
		if !pass(i) {
			continue
		}
		if k++; !w.in(k - 1) {
			continue
		}
		lines := engine.LinesFor(rep.Statement.String())
		vals := engine.AppendStandardized(valBuf[:0], rep)
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"section":`...)
		dst = appendString(dst, lines[0].Section)
		dst = append(dst, `,"statement":`...)
		dst = appendString(dst, rep.Statement.String())
		dst = append(dst, `,"aggregation":`...)
		dst = appendString(dst, rep.Aggregation.String())
		dst = append(dst, `,"frequency":`...)
		dst = appendString(dst, reportFrequency(rs, i))
		dst = appendReportDates(dst, rep)
		dst = append(dst, `,"data":{`...)
		for j, l := range lines {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, l.ID)
			dst = append(dst, ':')
			v := engine.Null
			if j < len(vals) {
				v = vals[j]
			}
			dst = appendNum(dst, v)
		}
		dst = append(dst, `},"sources":`...)
		dst = appendSources(dst, rep.Sources.All())
		dst = c.flush(append(dst, '}'))
	}
	return append(dst, ']'), nil
}

// reportFrequency returns the period of rs[i] (a company's reports, in
// reference date order) from its dates, as the ratio derivation takes it
// (engine.Report.Span), not from its form: flows of twelve months are
// ANNUAL, of three months QUARTERLY (a DFP of one quarter included), of
// another length YTD (an ITR's year to date, a DFP of six months). A
// balance sheet (no start date) is its filing's: an ITR's is QUARTERLY, a
// DFP's has the period of the DFP flows of its reference date and
// aggregation (ANNUAL when they all span a year or there are none, YTD
// when they disagree).
func reportFrequency(rs []*engine.Report, i int) string {
	r := rs[i]
	sp := r.Span()
	if sp == engine.SpanNone {
		if r.Form.String() != "DFP" {
			return engine.FreqQuarterly
		}
		lo, hi := i, i+1
		for lo > 0 && rs[lo-1].ReferenceDate == r.ReferenceDate {
			lo--
		}
		for hi < len(rs) && rs[hi].ReferenceDate == r.ReferenceDate {
			hi++
		}
		for _, o := range rs[lo:hi] {
			if o.Form != r.Form || o.Aggregation != r.Aggregation {
				continue
			}
			switch osp := o.Span(); {
			case osp == engine.SpanNone:
			case sp == engine.SpanNone || sp == osp:
				sp = osp
			default:
				sp = engine.SpanOther // flows of two lengths: neither
			}
		}
	}
	switch sp {
	case engine.SpanNone, engine.SpanYear:
		return engine.FreqAnnual
	case engine.SpanQuarter:
		return engine.FreqQuarterly
	}
	return engine.FreqYTD
}
