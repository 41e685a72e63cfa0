package bcb

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// Point is one value of an SGS series: Value in the series' unit (see
// Mapping) on Date.
type Point struct {
	Date  engine.Date
	Value float64
}

// SGSFile is what ReadSGS read from one answer: the points in file order
// and the records it skipped.
type SGSFile struct {
	Points []Point
	// Empty counts the records without a value (an empty "valor"):
	// skipped, never read as 0.
	Empty int
	// Malformed counts the records skipped by a lenient read.
	Malformed int
}

// MaxAnswerBytes bounds an SGS answer or closing-rates file the readers
// accept: 64 MiB, far above the largest (a 10-year daily series is some
// 140 kB, a closing file 11 kB).
const MaxAnswerBytes = 64 << 20

// ErrNotSeries is wrapped by the error of an answer that is not a series:
// an HTML page (the Banco Central's firewall answers a request it rejects
// with one, "Requisição inválida!"), an error object, or other text.
var ErrNotSeries = errors.New("not an SGS series answer")

// ReadSGS reads one SGS answer from r: the JSON array of {"data", "valor"}
// records, or the CSV ("data";"valor" header, ";" separators, quoted
// fields, decimal comma). name is used in errors. Strict (lenient false),
// a malformed record is an error naming the file, the record and the
// value; lenient, it is skipped and counted. An answer that is no series
// (ErrNotSeries) is an error either way. The result is the caller's.
func ReadSGS(r io.Reader, name string, lenient bool) (*SGSFile, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > MaxAnswerBytes {
		return nil, fmt.Errorf("%s: more than %d bytes: not an SGS answer", name, MaxAnswerBytes)
	}
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case len(t) == 0:
		return nil, fmt.Errorf("%s: empty: %w", name, ErrNotSeries)
	case t[0] == '[':
		return readSGSJSON(t, name, lenient)
	case t[0] == '"' || bytes.IndexByte([]byte(snippet(t)), ';') >= 0:
		return readSGSCSV(t, name, lenient)
	}
	return nil, fmt.Errorf("%s: starts with %q: %w%s", name, snippet(t), ErrNotSeries, pageHint(t))
}

// pageHint says what a non-series answer is, when it is recognised.
func pageHint(t []byte) string {
	switch {
	case bytes.Contains(t, []byte("Requisi")) && bytes.Contains(t, []byte("<html")):
		return " (the Banco Central's page \"Requisição inválida!\": a request its firewall rejected; fetch it again later)"
	case t[0] == '<':
		return " (an HTML page)"
	case t[0] == '{':
		return " (a JSON object: an error answer?)"
	}
	return ""
}

// snippet returns the first line of b, at most 60 bytes.
func snippet(b []byte) string {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		b = b[:i]
	}
	if len(b) > 60 {
		b = b[:60]
	}
	return string(b)
}

// sgsRecord is one record of the JSON answer. Valor is a string in the
// answers ("4.50"); a number is accepted too. Other fields (some series
// add "datafim") are ignored.
type sgsRecord struct {
	Data  *string         `json:"data"`
	Valor json.RawMessage `json:"valor"`
}

func readSGSJSON(b []byte, name string, lenient bool) (*SGSFile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '['
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := &SGSFile{}
	for i := 1; dec.More(); i++ {
		var rec sgsRecord
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", name, i, err)
		}
		p, empty, err := rec.point()
		switch {
		case err != nil && lenient:
			out.Malformed++
		case err != nil:
			return nil, fmt.Errorf("%s: record %d: %w", name, i, err)
		case empty:
			out.Empty++
		default:
			out.Points = append(out.Points, p)
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: text after the array", name)
	}
	return out, nil
}

func (r *sgsRecord) point() (Point, bool, error) {
	if r.Data == nil {
		return Point{}, false, errors.New(`no "data"`)
	}
	d, err := ParseDate(*r.Data)
	if err != nil {
		return Point{}, false, fmt.Errorf("data: %w", err)
	}
	raw := bytes.TrimSpace(r.Valor)
	if len(raw) == 0 {
		return Point{}, false, errors.New(`no "valor"`)
	}
	var s string
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return Point{}, false, fmt.Errorf("valor %s: %w", raw, err)
		}
	case 'n': // null
		if string(raw) != "null" {
			return Point{}, false, fmt.Errorf("valor %s: not a number", raw)
		}
	default:
		s = string(raw)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return Point{Date: d}, true, nil
	}
	v, err := parseDot(s)
	if err != nil {
		return Point{}, false, fmt.Errorf("valor: %w", err)
	}
	return Point{Date: d, Value: v}, false, nil
}

func readSGSCSV(b []byte, name string, lenient bool) (*SGSFile, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	out := &SGSFile{}
	line := 0
	header := false
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(text) == "" {
			continue
		}
		f := strings.Split(text, ";")
		for i := range f {
			f[i] = unquote(f[i])
		}
		if datafile.NULField(f) >= 0 {
			return nil, fmt.Errorf("%s:%d: %w", name, line, datafile.ErrNUL)
		}
		if !header {
			if len(f) < 2 || !strings.EqualFold(f[0], "data") || !strings.EqualFold(f[1], "valor") {
				return nil, fmt.Errorf("%s:%d: header %q, want \"data\";\"valor\": %w", name, line, text, ErrNotSeries)
			}
			header = true
			continue
		}
		p, empty, err := csvPoint(f)
		switch {
		case err != nil && lenient:
			out.Malformed++
		case err != nil:
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		case empty:
			out.Empty++
		default:
			out.Points = append(out.Points, p)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return out, nil
}

func csvPoint(f []string) (Point, bool, error) {
	if len(f) != 2 {
		return Point{}, false, fmt.Errorf("%d fields, want 2 (data;valor)", len(f))
	}
	d, err := ParseDate(f[0])
	if err != nil {
		return Point{}, false, fmt.Errorf("data: %w", err)
	}
	if strings.TrimSpace(f[1]) == "" {
		return Point{Date: d}, true, nil
	}
	v, err := ParseComma(f[1])
	if err != nil {
		return Point{}, false, fmt.Errorf("valor: %w", err)
	}
	return Point{Date: d, Value: v}, false, nil
}

// unquote removes one pair of surrounding double quotes and spaces.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return s
}

// ParseDate parses the Banco Central's dd/mm/yyyy (or ddmmyyyy, as its
// per-period CSV writes it) into a Date. The day must exist (no
// 31/02/2021).
func ParseDate(s string) (engine.Date, error) {
	s = strings.TrimSpace(s)
	var dd, mm, yy string
	switch {
	case len(s) == 10 && s[2] == '/' && s[5] == '/':
		dd, mm, yy = s[0:2], s[3:5], s[6:10]
	case len(s) == 8:
		dd, mm, yy = s[0:2], s[2:4], s[4:8]
	default:
		return engine.NoDate, fmt.Errorf("%q: want dd/mm/yyyy", s)
	}
	d, err1 := digits(dd)
	m, err2 := digits(mm)
	y, err3 := digits(yy)
	if err1 != nil || err2 != nil || err3 != nil || y < 1900 || m < 1 || m > 12 || d < 1 {
		return engine.NoDate, fmt.Errorf("%q: want dd/mm/yyyy", s)
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return engine.NoDate, fmt.Errorf("%q: no such day", s)
	}
	return engine.MakeDate(y, time.Month(m), d), nil
}

// digits parses a run of ASCII digits.
func digits(s string) (int, error) {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q: not digits", s)
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, nil
}

// parseDot parses a number with a decimal point ("4.50", "-0.31"), as the
// JSON answers write them: digits, at most one point with digits on both
// sides, an optional leading minus. Thousands separators, exponents and
// non-finite values are refused.
func parseDot(s string) (float64, error) {
	if !plainDecimal(s) {
		return 0, fmt.Errorf("%q: want a decimal number with a point", s)
	}
	return finite(s)
}

// ParseComma parses a number with a decimal comma ("1,27", "-0,31",
// "5,07730000"), as the CSV files write them; "." groups thousands
// ("1.234,5") and is accepted only as such.
func ParseComma(s string) (float64, error) {
	s = strings.TrimSpace(s)
	intPart, frac, hasComma := strings.Cut(s, ",")
	if strings.Contains(intPart, ".") {
		groups := strings.Split(strings.TrimPrefix(intPart, "-"), ".")
		for i, g := range groups {
			if i == 0 && (len(g) < 1 || len(g) > 3) || i > 0 && len(g) != 3 {
				return 0, fmt.Errorf("%q: misplaced thousands separator", s)
			}
		}
		intPart = strings.ReplaceAll(intPart, ".", "")
	}
	n := intPart
	if hasComma {
		n += "." + frac
	}
	if !plainDecimal(n) {
		return 0, fmt.Errorf("%q: want a decimal number with a comma", s)
	}
	return finite(n)
}

// plainDecimal reports whether s is -?digits(.digits)?.
func plainDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	ip, fp, dot := strings.Cut(s, ".")
	isDigits := func(x string) bool {
		for i := 0; i < len(x); i++ {
			if x[i] < '0' || x[i] > '9' {
				return false
			}
		}
		return x != ""
	}
	return isDigits(ip) && (!dot || isDigits(fp))
}

// finite parses s and refuses NaN and infinities.
func finite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: not a finite number", s)
	}
	return v, nil
}
