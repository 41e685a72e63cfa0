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
// A text cell that a spreadsheet would read as a formula (one that begins
// with =, +, -, @, a tab or a carriage return) is sent with a leading
// apostrophe (safeCell), as OWASP's advice on CSV injection has it; JSON
// numbers, and text that is a plain decimal number, are sent as given.

// CSV forms of a Route (Route.CSV).
const (
	csvQuotes = "quotes" // points: date, prices… (ticker and preset columns when needed)
	csvRatios = "ratios" // indicator, frequency, then the point's fields
	csvCash   = "cash"   // one row per action, source_url for its source
	// csvTotalReturn: the points of a total-return series (a ticker column
	// for a batch).
	csvTotalReturn = "total-return"
)

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
	acc := r.Header["Accept"]
	if len(acc) == 0 {
		return false
	}
	best, bestQ := "", -1.0
	for _, h := range acc {
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
			if (mt == "text/csv" || mt == "application/json") && q > bestQ {
				best, bestQ = mt, q
			}
		}
	}
	return best == "text/csv" && bestQ > 0
}

// node is a JSON value with its object keys in order.
type node struct {
	obj    bool
	arr    bool
	keys   []string
	vals   []*node
	scalar string // the JSON text of a number, the string, "" for null
	null   bool
	num    bool // scalar is a JSON number
}

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// parseOrdered parses JSON keeping the order of object keys.
func parseOrdered(b []byte) (*node, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var parse func() (*node, error)
	parse = func() (*node, error) {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch v := t.(type) {
		case json.Delim:
			n := &node{obj: v == '{', arr: v == '['}
			for d.More() {
				if n.obj {
					kt, err := d.Token()
					if err != nil {
						return nil, err
					}
					n.keys = append(n.keys, kt.(string))
				}
				c, err := parse()
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, c)
			}
			if _, err := d.Token(); err != nil { // the closing delimiter
				return nil, err
			}
			return n, nil
		case json.Number:
			return &node{scalar: v.String(), num: true}, nil
		case string:
			return &node{scalar: v}, nil
		case bool:
			if v {
				return &node{scalar: "true"}, nil
			}
			return &node{scalar: "false"}, nil
		case nil:
			return &node{null: true}, nil
		}
		return nil, fmt.Errorf("unexpected token %v", t)
	}
	return parse()
}

// table collects rows under a header made of the columns seen, in order.
type table struct {
	cols  []string
	index map[string]int
	rows  []map[int]string
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

// row adds a row: the fixed cells first, then the scalar fields of obj.
func (t *table) row(fixed [][2]string, obj *node) map[int]string {
	r := map[int]string{}
	for _, f := range fixed {
		r[t.col(f[0])] = safeCell(f[1])
	}
	if obj != nil && obj.obj {
		for i, k := range obj.keys {
			v := obj.vals[i]
			if v.obj || v.arr {
				continue
			}
			r[t.col(k)] = cellOf(v)
		}
	}
	t.rows = append(t.rows, r)
	return r
}

func (t *table) write(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(t.cols); err != nil {
		return err
	}
	rec := make([]string, len(t.cols))
	for _, r := range t.rows {
		for i := range rec {
			rec[i] = r[i]
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// toCSV turns the JSON answer src of a route of CSV form kind into CSV.
func toCSV(kind string, src []byte) ([]byte, error) {
	root, err := parseOrdered(src)
	if err != nil {
		return nil, err
	}
	var t table
	switch kind {
	case csvQuotes:
		quoteRows(&t, nil, root)
		if len(t.cols) == 0 {
			t.cols = []string{"date", "open_price", "close_price", "highest_price", "lowest_price", "volume", "currency", "variation", "variation_value"}
		}
	case csvTotalReturn:
		quoteRows(&t, nil, root)
		if len(t.cols) == 0 {
			t.cols = []string{"date", "close_price", "total_return_index", "cash_value"}
		}
	case csvRatios:
		for i, id := range root.keys {
			byFreq := root.vals[i]
			for j, freq := range byFreq.keys {
				for _, p := range byFreq.vals[j].vals {
					t.row([][2]string{{"indicator", id}, {"frequency", freq}}, p)
				}
			}
		}
		if len(t.cols) == 0 {
			t.cols = []string{"indicator", "frequency", "value", "reference_date", "publish_date", "retrieval_date"}
		}
	case csvCash:
		for _, a := range root.vals {
			r := t.row(nil, a)
			if s := a.get("source"); s != nil {
				if u := s.get("visualization_url"); u != nil {
					r[t.col("source_url")] = cellOf(u)
				}
			}
		}
		if len(t.cols) == 0 {
			t.cols = []string{"id", "company_id", "ticker", "stock_type", "prior_ex_date", "payment_date", "value"}
		}
	default:
		return nil, fmt.Errorf("no CSV form %q", kind)
	}
	var b bytes.Buffer
	err = t.write(&b)
	return b.Bytes(), err
}

// quoteRows adds the rows of a quote answer: a point, a series, a chart
// ({"chart":{preset: series}}) or, at the top, a batch keyed by ticker
// (fixed is nil only at the top).
func quoteRows(t *table, fixed [][2]string, n *node) {
	switch {
	case n.arr:
		for _, p := range n.vals {
			t.row(fixed, p)
		}
	case n.obj && n.get("chart") != nil:
		ch := n.get("chart")
		for i, preset := range ch.keys {
			quoteRows(t, append(fixed[:len(fixed):len(fixed)], [2]string{"preset", preset}), ch.vals[i])
		}
	case n.obj && n.get("error") != nil:
		msg := ""
		if m := n.get("error").get("message"); m != nil {
			msg = m.scalar
		}
		t.row(append(fixed[:len(fixed):len(fixed)], [2]string{"error", msg}), nil)
	case n.obj && (n.get("date") != nil || fixed != nil):
		t.row(fixed, n)
	case n.obj: // a batch: keyed by ticker
		for i, tk := range n.keys {
			quoteRows(t, [][2]string{{"ticker", tk}}, n.vals[i])
		}
	}
}

// cellOf returns the CSV cell of a scalar: a JSON number as written, text
// through safeCell.
func cellOf(n *node) string {
	if n.num {
		return n.scalar
	}
	return safeCell(n.scalar)
}

// safeCell returns s as a CSV cell that no spreadsheet reads as a formula:
// text that begins with =, +, -, @, a tab or a carriage return gets a
// leading apostrophe (=HYPERLINK(…) becomes '=HYPERLINK(…)), unless it
// is a plain decimal number (-1.5, +2), which is sent as given. Other text
// is returned as is, without allocating.
func safeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
	default:
		return s
	}
	if plainNumber(s) {
		return s
	}
	return "'" + s
}

// plainNumber reports whether s is a decimal number: an optional sign,
// digits, at most one point among them, an optional exponent (1e-5).
func plainNumber(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	digits, dot := 0, false
	for i := 0; i < len(mant); i++ {
		switch c := mant[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	if digits == 0 {
		return false
	}
	if !hasExp {
		return true
	}
	if exp != "" && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	if exp == "" {
		return false
	}
	for i := 0; i < len(exp); i++ {
		if exp[i] < '0' || exp[i] > '9' {
			return false
		}
	}
	return true
}
