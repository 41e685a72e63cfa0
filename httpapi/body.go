package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
)

// jsonScanner reads a JSON document strictly (RFC 8259 grammar).
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jsonScanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *jsonScanner) errorf(format string, args ...any) error {
	return badRequest("request body: "+format+" (at byte %d)", append(args, s.i)...)
}

// literal consumes lit (true, false, null).
func (s *jsonScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// null consumes a null if one is next.
func (s *jsonScanner) null() bool {
	if s.peek() == 'n' {
		return s.literal("null")
	}
	return false
}

// str reads a JSON string. Without escapes the result aliases the input.
func (s *jsonScanner) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, errWantString
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			s.i++
			if !utf8.Valid(out) {
				return []byte(string(bytes.ToValidUTF8(out, []byte("\uFFFD")))), nil
			}
			return out, nil
		case c == '\\':
			return s.strSlow(start)
		case c < 0x20:
			return nil, s.errorf("control character in string")
		}
		s.i++
	}
	return nil, s.errorf("unterminated string")
}

var errWantString = errors.New("want a string")

// strSlow decodes a string with escapes from start (just after the quote).
func (s *jsonScanner) strSlow(start int) ([]byte, error) {
	out := append([]byte(nil), s.b[start:s.i]...)
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			if !utf8.Valid(out) {
				out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
			}
			return out, nil
		case c < 0x20:
			return nil, s.errorf("control character in string")
		case c != '\\':
			out = append(out, c)
			s.i++
			continue
		}
		s.i++
		if s.i >= len(s.b) {
			break
		}
		e := s.b[s.i]
		s.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := s.hex4()
			if !ok {
				return nil, s.errorf("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := utf8.RuneError
				save := s.i
				if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
					s.i += 2
					if lo, ok := s.hex4(); ok {
						if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
							r2 = d
						} else {
							s.i = save
						}
					} else {
						return nil, s.errorf("bad \\u escape")
					}
				}
				r = r2
			}
			out = utf8.AppendRune(out, r)
		default:
			return nil, s.errorf("bad escape \\%c", e)
		}
	}
	return nil, s.errorf("unterminated string")
}

func (s *jsonScanner) hex4() (rune, bool) {
	if len(s.b)-s.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.b[s.i : s.i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	s.i += 4
	return r, true
}

// number reads a JSON number.
func (s *jsonScanner) number() (float64, error) {
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := func() int {
		n := 0
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
			n++
		}
		return n
	}
	if s.i < len(s.b) && s.b[s.i] == '0' {
		s.i++
		if s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			return 0, s.errorf("malformed number (leading zero)")
		}
	} else if digits() == 0 {
		s.i = start
		return 0, errWantNumber
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if digits() == 0 {
			return 0, s.errorf("malformed number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if digits() == 0 {
			return 0, s.errorf("malformed number")
		}
	}
	// string(b) of a short number does not allocate: ParseFloat does not
	// keep its argument (TestNumberZeroAlloc).
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return 0, s.errorf("number out of range")
	}
	return f, nil
}

var errWantNumber = errors.New("want a number")

// boolean reads true or false.
func (s *jsonScanner) boolean() (bool, error) {
	switch s.peek() {
	case 't':
		if s.literal("true") {
			return true, nil
		}
	case 'f':
		if s.literal("false") {
			return false, nil
		}
	}
	return false, errWantBool
}

var errWantBool = errors.New("want true or false")

// end fails unless only white space remains.
func (s *jsonScanner) end() error {
	if s.peek() != 0 {
		return s.errorf("unexpected data after the JSON object")
	}
	return nil
}

// quotesRequest is the body of POST /quotes. Tickers alias the request body
// buffer: they are valid only while the request is served.
type quotesRequest struct {
	Tickers  [][]byte
	Type     string // "" when absent
	Interval int64  // 0 when absent
	Start    engine.Date
	End      engine.Date
	Adjusted bool

	hasTickers, hasType, hasInterval, hasStart, hasEnd bool
}

// Quote request types.
const (
	TypeCurrent    = "current"
	TypeHistorical = "historical"
	TypeChart      = "chart"
)

// MaxTickers is the largest number of tickers of one POST /quotes.
const MaxTickers = 500

// fieldErr is a 400 naming a body field.
func fieldErr(field, format string, args ...any) error {
	return badRequest("request body: field %q: %s", field, fmt.Sprintf(format, args...))
}

// parseQuotesRequest decodes body strictly into q (whose Tickers slice is
// reused): unknown fields, wrong types and trailing data are 400s naming
// the field; null is the same as an absent field. It validates values but
// not plan restrictions.
func parseQuotesRequest(body []byte, q *quotesRequest) error {
	tickers := q.Tickers[:0]
	*q = quotesRequest{Start: engine.NoDate, End: engine.NoDate}
	s := &jsonScanner{b: body}
	if s.peek() != '{' {
		if s.peek() == 0 {
			return badRequest("request body: empty; want a JSON object")
		}
		return s.errorf("want a JSON object")
	}
	s.i++
	first := true
	for {
		c := s.peek()
		if c == '}' && first {
			s.i++
			break
		}
		if !first {
			if c == '}' {
				s.i++
				break
			}
			if c != ',' {
				return s.errorf("want , or }")
			}
			s.i++
		}
		first = false
		key, err := s.str()
		if err != nil {
			if err == errWantString {
				return s.errorf("want a field name")
			}
			return err
		}
		if s.peek() != ':' {
			return s.errorf("want :")
		}
		s.i++
		switch string(key) { // no copy: a switch compares the bytes
		case "tickers":
			if s.null() {
				tickers, q.hasTickers = tickers[:0], false
				continue
			}
			if s.peek() != '[' {
				return fieldErr("tickers", "want an array of strings")
			}
			s.i++
			tickers = tickers[:0]
			q.hasTickers = true
			for n := 0; ; n++ {
				c := s.peek()
				if c == ']' && n == 0 {
					s.i++
					break
				}
				if n > 0 {
					if c == ']' {
						s.i++
						break
					}
					if c != ',' {
						return s.errorf("want , or ] in tickers")
					}
					s.i++
				}
				t, err := s.str()
				if err != nil {
					if err == errWantString {
						return fieldErr("tickers", "item %d: want a string", n)
					}
					return err
				}
				if len(tickers) >= MaxTickers {
					return fieldErr("tickers", "at most %d tickers per call", MaxTickers)
				}
				tickers = append(tickers, t)
			}
		case "type":
			if s.null() {
				q.hasType = false
				continue
			}
			v, err := s.str()
			if err != nil {
				if err == errWantString {
					return fieldErr("type", "want a string")
				}
				return err
			}
			switch string(v) {
			case TypeCurrent:
				q.Type, q.hasType = TypeCurrent, true
			case TypeHistorical:
				q.Type, q.hasType = TypeHistorical, true
			case TypeChart:
				q.Type, q.hasType = TypeChart, true
			default:
				return fieldErr("type", "%q: want current, historical or chart", v)
			}
		case "interval":
			if s.null() {
				q.hasInterval = false
				continue
			}
			f, err := s.number()
			if err != nil {
				if err == errWantNumber {
					return fieldErr("interval", "want a number of seconds")
				}
				return err
			}
			if f != float64(int64(f)) || f < 60 || f > 1<<40 {
				return fieldErr("interval", "%v: want a whole number of seconds, at least 60", f)
			}
			q.Interval, q.hasInterval = int64(f), true
		case "start_date", "end_date":
			field := "start_date"
			if string(key) == "end_date" {
				field = "end_date"
			}
			if s.null() {
				if field == "start_date" {
					q.hasStart = false
				} else {
					q.hasEnd = false
				}
				continue
			}
			v, err := s.str()
			if err != nil {
				if err == errWantString {
					return fieldErr(field, "want a date YYYY-MM-DD")
				}
				return err
			}
			d, err := parseDate(string(v))
			if err != nil {
				return fieldErr(field, "%q: want a date YYYY-MM-DD", v)
			}
			if field == "start_date" {
				q.Start, q.hasStart = d, true
			} else {
				q.End, q.hasEnd = d, true
			}
		case "adjusted":
			if s.null() {
				q.Adjusted = false
				continue
			}
			v, err := s.boolean()
			if err != nil {
				return fieldErr("adjusted", "want true or false")
			}
			q.Adjusted = v
		default:
			return badRequest("request body: unknown field %q (accepted: tickers, type, interval, start_date, end_date, adjusted)", key)
		}
	}
	if err := s.end(); err != nil {
		return err
	}
	q.Tickers = tickers
	if !q.hasTickers || len(tickers) == 0 {
		return fieldErr("tickers", "required: 1 to %d tickers", MaxTickers)
	}
	for _, t := range tickers {
		if !validTicker(string(t)) {
			return fieldErr("tickers", "%q: want 4 letters or digits and up to 2 digits (e.g. PETR4), or SELIC, IPCA, USD", t)
		}
	}
	if !q.hasStart {
		q.Start = engine.NoDate
	}
	if !q.hasEnd {
		q.End = engine.NoDate
	}
	if !q.hasType {
		q.Type = ""
	}
	if !q.hasInterval {
		q.Interval = 0
	}
	return nil
}

// validTicker reports whether t matches ^[A-Z0-9]{4}[0-9]?[0-9]?$ or is one
// of the macro series SELIC, IPCA and USD.
func validTicker(t string) bool {
	switch t {
	case "SELIC", "IPCA", "USD":
		return true
	}
	if len(t) < 4 || len(t) > 6 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		digit := c >= '0' && c <= '9'
		if i < 4 {
			if !digit && !(c >= 'A' && c <= 'Z') {
				return false
			}
		} else if !digit {
			return false
		}
	}
	return true
}

// decodeStrict decodes body into v with encoding/json: unknown fields,
// wrong types (naming the field) and trailing data are 400s.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("request body: empty; want a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			if te.Field == "" {
				return badRequest("request body: want a JSON object")
			}
			return badRequest("request body: field %q: want %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		case errors.As(err, &se):
			return badRequest("request body: malformed JSON at byte %d: %v", se.Offset, se)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("request body: truncated JSON")
		}
		return badRequest("request body: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("request body: unexpected data after the JSON object")
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "int", "int64", "int32", "float64":
		return "a number"
	}
	return k
}
