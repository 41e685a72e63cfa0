package httpapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pregao/pregao/internal/csvcell"
)

// CSV answers (addition): the quote routes, the total-return routes, the
// ratio routes and the cash corporate actions answer text/csv when the
// query says format=csv, or, without format, when Accept prefers
// text/csv. The CSV is made from the JSON answer, so its values are the
// same text: numbers as written in JSON (exact decimals), null as an
// empty cell, one header row. The JSON of a CSV answer is not streamed; a
// source over maxCSVSource is refused (400) rather than held, so a
// request's memory stays bounded.
//
// The columns are fixed per form (csvColumns): the JSON fields of its
// points in the JSON's order, whatever the data, so that an empty answer,
// an error among a batch's tickers or the tickers' order do not change
// them. A batch (keyed by ticker) has a ticker column first and an error
// column last, a chart a preset column after the ticker; a field absent
// from a row is an empty cell.
//
// A text cell that a spreadsheet would read as a formula (one that begins
// with =, +, -, @, a tab or a carriage return) is sent with a leading
// apostrophe (csvcell.Safe), as OWASP's advice on CSV injection has it; JSON
// numbers, and text that is a plain decimal number, are sent as given.

// CSV forms of a Route (Route.CSV), and those a handler chooses for its
// answer (answer.csvKind) when the fields depend on the request.
const (
	csvQuotes        = "quotes"         // historical and chart points: date, prices…, adjustment_factor
	csvQuotesCurrent = "quotes-current" // current points: no adjustment_factor (type=current, the eod plan)
	csvRatios        = "ratios"         // indicator, frequency, then the point's fields
	csvRatiosCalc    = "ratios-calc"    // … and calculation (show_calculation)
	csvFundRatios    = "fund-ratios"    // indicator, frequency, then a fund ratio point's fields
	csvCash          = "cash"           // one row per action, source_url for its source
	// csvTotalReturn: the points of a total-return series (a ticker column
	// for a batch).
	csvTotalReturn = "total-return"
)

// csvColumns are the columns of each form, after the fixed ones (ticker,
// preset; indicator, frequency) and before error: a point's scalar fields
// in the order the JSON writes them.
var csvColumns = map[string][]string{
	csvQuotes:        {"date", "open_price", "close_price", "highest_price", "lowest_price", "volume", "currency", "variation", "variation_value", "adjustment_factor"},
	csvQuotesCurrent: {"date", "open_price", "close_price", "highest_price", "lowest_price", "volume", "currency", "variation", "variation_value"},
	csvTotalReturn:   {"date", "close_price", "total_return_index", "cash_value"},
	csvRatios:        {"value", "format", "reference_date", "publish_date", "retrieval_date"},
	csvRatiosCalc:    {"value", "format", "reference_date", "publish_date", "retrieval_date", "calculation"},
	csvFundRatios:    {"value", "reference_date", "publish_date", "retrieval_date"},
	csvCash: {"id", "company_id", "ticker", "stock_type", "isin_code", "approval_date", "prior_ex_date", "publish_date", "payment_date",
		"protocol", "name", "code", "declared_value", "monetary_correction", "monetary_correction_start_date", "monetary_correction_end_date",
		"value", "net_value", "adjusted_declared_value", "adjusted_monetary_correction", "adjusted_value", "adjusted_net_value",
		"adjustment_factor", "currency", "source_url"},
}

// setCSVForm sets the CSV form of c's answer to kind when its route's is
// from (a handler's choice among the forms of its route: csvColumns).
func setCSVForm(c *call, from, kind string) {
	if c.out.csvKind == from {
		c.out.csvKind = kind
	}
}

// maxCSVSource bounds the JSON a CSV answer is made from (a variable for
// the tests).
var maxCSVSource = 64 << 20

var errCSVTooLarge = errors.New("csv source too large")

var ctCSV = []string{"text/csv; charset=utf-8"}

// formatParam is the format query parameter of the routes with a CSV form.
var formatParam = Param{Name: "format", In: InQuery, Type: TypeEnum, Enum: []string{"json", "csv"}, Fold: true,
	Desc: "json or csv (text/csv: one header row, null as an empty cell); default: json, or csv when Accept prefers text/csv (addition)"}

// wantsCSV reports whether r's Accept header prefers text/csv to JSON.
func wantsCSV(r *http.Request) bool {
	best, bestQ := "", -1.0
	acceptRanges(r, func(mt string, q float64) {
		if (mt == "text/csv" || mt == "application/json") && q > bestQ {
			best, bestQ = mt, q
		}
	})
	return best == "text/csv" && bestQ > 0
}

// acceptRanges calls fn with each media range of r's Accept headers and
// its q (1 when absent or unreadable); a range that does not parse is
// skipped.
func acceptRanges(r *http.Request, fn func(mt string, q float64)) {
	for _, h := range r.Header["Accept"] {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					q = f
				}
			}
			fn(mt, q)
		}
	}
}

// jv is a JSON value, an object's keys kept in order. A scalar's text
// (a number as written, a string unescaped, true or false) is in s, a
// slice of the source when it needs no unescaping; an object's or an
// array's members are in n. The zero jv is no value (a key not there).
type jv struct {
	s    string
	kind byte
	n    *jmembers
}

// Kinds of jv.
const (
	jNone byte = iota
	jNull
	jBool
	jNum
	jStr
	jObj
	jArr
)

// jmembers are an object's keys and values, or an array's values (keys
// nil).
type jmembers struct {
	keys []string
	vals []jv
}

// members returns v's keys (nil for an array) and values; none for a
// scalar.
func (v jv) members() ([]string, []jv) {
	if v.n == nil {
		return nil, nil
	}
	return v.n.keys, v.n.vals
}

// get returns the value of key in object v, or no value.
func (v jv) get(key string) jv {
	if v.kind != jObj {
		return jv{}
	}
	for i, k := range v.n.keys {
		if k == key {
			return v.n.vals[i]
		}
	}
	return jv{}
}

// jsonMaxDepth bounds the nesting parseOrdered follows, as encoding/json
// bounds it (the answers it reads nest four deep).
const jsonMaxDepth = 10000

// parseOrdered parses the first JSON value of b, keeping the order of
// object keys. It allocates a copy of b (whose slices the scalars are),
// and per object or array its two member slices, exactly sized: no
// allocation per scalar but for a string with escapes or that is not
// valid UTF-8 (decoded as encoding/json decodes it).
func parseOrdered(b []byte) (jv, error) {
	v, _, err := parseCounted(b)
	return v, err
}

// parseCounted is parseOrdered, and returns an upper bound of the cells
// of a table made of the value: a row's cells are its object's scalars
// and at most three more (its fixed cells, a cash action's source_url),
// so at most the values read and two more per object.
func parseCounted(b []byte) (jv, int, error) {
	p := jparser{s: string(b)}
	v, err := p.value(0)
	return v, p.count + 2*p.objects, err
}

// jparser parses JSON text s from i on; keys and vals are the members of
// the objects and arrays open, innermost last.
type jparser struct {
	s       string
	i       int
	keys    []string
	vals    []jv
	count   int // values read
	objects int // objects read
}

var errJSONSyntax = errors.New("JSON syntax error")

func (p *jparser) fail() error {
	return fmt.Errorf("%w at byte %d", errJSONSyntax, p.i)
}

func (p *jparser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jparser) value(depth int) (jv, error) {
	p.count++
	p.ws()
	if p.i >= len(p.s) {
		return jv{}, p.fail()
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		if depth >= jsonMaxDepth {
			return jv{}, p.fail()
		}
		return p.composite(c == '{', depth)
	case c == '"':
		s, err := p.str()
		return jv{s: s, kind: jStr}, err
	case c == 't':
		return p.literal("true", jv{s: "true", kind: jBool})
	case c == 'f':
		return p.literal("false", jv{s: "false", kind: jBool})
	case c == 'n':
		return p.literal("null", jv{kind: jNull})
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return jv{}, p.fail()
}

func (p *jparser) literal(word string, v jv) (jv, error) {
	if !strings.HasPrefix(p.s[p.i:], word) {
		return jv{}, p.fail()
	}
	p.i += len(word)
	return v, nil
}

// number scans a JSON number (numberSpan).
func (p *jparser) number() (jv, error) {
	end, fault := numberSpan(p.s, p.i)
	if fault != numOK {
		p.i = end
		return jv{}, p.fail()
	}
	v := jv{s: p.s[p.i:end], kind: jNum}
	p.i = end
	return v, nil
}

// str scans a JSON string at p.i and returns its value.
func (p *jparser) str() (string, error) {
	start := p.i
	p.i++
	plain := true
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '"':
			p.i++
			lit := p.s[start:p.i]
			if plain && utf8.ValidString(lit) {
				return lit[1 : len(lit)-1], nil
			}
			var out string
			if err := json.Unmarshal([]byte(lit), &out); err != nil {
				return "", fmt.Errorf("%w at byte %d: %v", errJSONSyntax, start, err)
			}
			return out, nil
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return "", p.fail()
		default:
			p.i++
		}
	}
	return "", p.fail()
}

// composite parses an object (obj) or an array at p.i.
func (p *jparser) composite(obj bool, depth int) (jv, error) {
	closer, kind := byte(']'), jArr
	if obj {
		closer, kind = '}', jObj
		p.objects++
	}
	p.i++
	k0, v0 := len(p.keys), len(p.vals)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == closer {
		p.i++
	} else {
		for {
			if obj {
				p.ws()
				if p.i >= len(p.s) || p.s[p.i] != '"' {
					return jv{}, p.fail()
				}
				k, err := p.str()
				if err != nil {
					return jv{}, err
				}
				p.ws()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return jv{}, p.fail()
				}
				p.i++
				p.keys = append(p.keys, k)
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return jv{}, err
			}
			p.vals = append(p.vals, v)
			p.ws()
			if p.i >= len(p.s) {
				return jv{}, p.fail()
			}
			if c := p.s[p.i]; c == ',' {
				p.i++
				continue
			} else if c == closer {
				p.i++
				break
			}
			return jv{}, p.fail()
		}
	}
	m := &jmembers{vals: append([]jv(nil), p.vals[v0:]...)}
	if obj {
		m.keys = append([]string(nil), p.keys[k0:]...)
	}
	clear(p.vals[v0:])
	p.keys, p.vals = p.keys[:k0], p.vals[:v0]
	return jv{kind: kind, n: m}, nil
}

// table collects rows under a header made of the columns seen, in order.
// A row's cells lie in cells, row after row (ends: where each row ends);
// a later cell of a row for a column wins over an earlier one.
type table struct {
	cols  []string
	index map[string]int
	cells []tcell
	ends  []int
}

// tcell is a cell of a table row: its column and text.
type tcell struct {
	col int
	val string
}

func (t *table) col(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[name] = len(t.cols)
	t.cols = append(t.cols, name)
	return t.index[name]
}

// addCols adds the columns names, in order, to those of the header.
func (t *table) addCols(names []string) {
	for _, n := range names {
		t.col(n)
	}
}

// cell adds a cell to the row being made.
func (t *table) cell(col string, val string) {
	t.cells = append(t.cells, tcell{t.col(col), val})
}

// fields adds the fixed cells, then the scalar fields of obj, to the row
// being made.
func (t *table) fields(fixed [][2]string, obj jv) {
	for _, f := range fixed {
		t.cell(f[0], csvcell.Safe(f[1]))
	}
	if obj.kind != jObj {
		return
	}
	keys, vals := obj.members()
	for i, k := range keys {
		if v := vals[i]; v.kind != jObj && v.kind != jArr {
			t.cell(k, cellOf(v))
		}
	}
}

// end ends the row being made.
func (t *table) end() { t.ends = append(t.ends, len(t.cells)) }

// row adds a row: the fixed cells first, then the scalar fields of obj.
func (t *table) row(fixed [][2]string, obj jv) {
	t.fields(fixed, obj)
	t.end()
}

func (t *table) write(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.cols); err != nil {
		return err
	}
	rec := make([]string, len(t.cols))
	start := 0
	for _, end := range t.ends {
		clear(rec)
		for _, c := range t.cells[start:end] {
			rec[c.col] = c.val
		}
		start = end
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// toCSV turns the JSON answer src of a route of CSV form kind into CSV.
func toCSV(kind string, src []byte) ([]byte, error) {
	cols, ok := csvColumns[kind]
	if !ok {
		return nil, fmt.Errorf("no CSV form %q", kind)
	}
	root, cells, err := parseCounted(src)
	if err != nil {
		return nil, err
	}
	t := table{cells: make([]tcell, 0, cells)} // made once, not grown
	switch kind {
	case csvQuotes, csvQuotesCurrent, csvTotalReturn:
		batch := isBatch(root)
		if batch {
			t.col("ticker")
		}
		if isChart(root, batch) {
			t.col("preset")
		}
		t.addCols(cols)
		if batch {
			t.col("error")
		}
		quoteRows(&t, nil, root)
	case csvRatios, csvRatiosCalc, csvFundRatios:
		t.col("indicator")
		t.col("frequency")
		t.addCols(cols)
		ids, byFreqs := root.members()
		for i, id := range ids {
			freqs, series := byFreqs[i].members()
			for j, freq := range freqs {
				_, points := series[j].members()
				for _, p := range points {
					t.row([][2]string{{"indicator", id}, {"frequency", freq}}, p)
				}
			}
		}
	case csvCash:
		t.addCols(cols)
		_, actions := root.members()
		for _, a := range actions {
			t.fields(nil, a)
			if u := a.get("source").get("visualization_url"); u.kind != jNone {
				t.cell("source_url", cellOf(u))
			}
			t.end()
		}
	}
	var b bytes.Buffer
	b.Grow(len(src) / 2) // a CSV form is a third to a half of its JSON
	err = t.write(&b)
	return b.Bytes(), err
}

// isBatch reports whether a quote or total-return answer is a batch: an
// object keyed by ticker, not a point, a chart or an error.
func isBatch(n jv) bool {
	return n.kind == jObj && n.get("date").kind == jNone && n.get("chart").kind == jNone && n.get("error").kind == jNone
}

// isChart reports whether a quote answer holds charts: it is one, or a
// batch of them (a batch whose every ticker is an error has no preset
// column).
func isChart(n jv, batch bool) bool {
	if !batch {
		return n.get("chart").kind != jNone
	}
	_, vals := n.members()
	for _, v := range vals {
		if v.get("chart").kind != jNone {
			return true
		}
	}
	return false
}

// quoteRows adds the rows of a quote answer: a point, a series, a chart
// ({"chart":{preset: series}}) or, at the top, a batch keyed by ticker
// (fixed is nil only at the top).
func quoteRows(t *table, fixed [][2]string, n jv) {
	keys, vals := n.members()
	switch {
	case n.kind == jArr:
		for _, p := range vals {
			t.row(fixed, p)
		}
	case n.get("chart").kind != jNone:
		presets, series := n.get("chart").members()
		for i, preset := range presets {
			quoteRows(t, append(fixed[:len(fixed):len(fixed)], [2]string{"preset", preset}), series[i])
		}
	case n.get("error").kind != jNone:
		t.row(append(fixed[:len(fixed):len(fixed)], [2]string{"error", n.get("error").get("message").s}), jv{})
	case n.kind == jObj && (n.get("date").kind != jNone || fixed != nil):
		t.row(fixed, n)
	case n.kind == jObj: // a batch: keyed by ticker
		for i, tk := range keys {
			quoteRows(t, [][2]string{{"ticker", tk}}, vals[i])
		}
	}
}

// cellOf returns the CSV cell of a scalar: a JSON number as written, text
// through csvcell.Safe.
func cellOf(v jv) string {
	if v.kind == jNum {
		return v.s
	}
	return csvcell.Safe(v.s)
}
