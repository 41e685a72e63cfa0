package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
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
	end, fault := numberSpan(s.b, s.i)
	s.i = end
	switch fault {
	case numNoDigit:
		s.i = start
		return 0, errWantNumber
	case numLeadingZero:
		return 0, s.errorf("malformed number (leading zero)")
	case numMalformed:
		return 0, s.errorf("malformed number")
	}
	// string(b) of a short number does not allocate: ParseFloat does not
	// keep its argument (TestNumberZeroAlloc).
	f, err := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	if err != nil {
		return 0, s.errorf("number out of range")
	}
	return f, nil
}

// numFault is why numberSpan found no JSON number.
type numFault int

const (
	numOK          numFault = iota
	numNoDigit              // no digit begins it
	numLeadingZero          // a 0 followed by a digit
	numMalformed            // a fraction or an exponent without a digit
)

// numberSpan scans the JSON number that starts at s[i]
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?) and returns where it
// ends, or where it stops being one and why. A request body's scanner
// (bytes) and the CSV form's parser (a string) share it.
func numberSpan[T string | []byte](s T, i int) (int, numFault) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			return i, numLeadingZero
		}
	} else if j := digitsEnd(s, i); j == i {
		return i, numNoDigit
	} else {
		i = j
	}
	if i < len(s) && s[i] == '.' {
		j := digitsEnd(s, i+1)
		if j == i+1 {
			return j, numMalformed
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digitsEnd(s, i)
		if j == i {
			return j, numMalformed
		}
		i = j
	}
	return i, numOK
}

// digitsEnd returns the end of the decimal digits at s[i:].
func digitsEnd[T string | []byte](s T, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
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

// kind names the JSON type of the next value ("a string"), or "" when no
// value starts there.
func (s *jsonScanner) kind() string {
	c := s.peek()
	switch {
	case c == '"':
		return "a string"
	case c == '-' || '0' <= c && c <= '9':
		return "a number"
	case c == '[':
		return "an array"
	case c == '{':
		return "an object"
	case c == 't' && bytes.HasPrefix(s.b[s.i:], []byte("true")), c == 'f' && bytes.HasPrefix(s.b[s.i:], []byte("false")):
		return "a boolean"
	case c == 'n' && bytes.HasPrefix(s.b[s.i:], []byte("null")):
		return "null"
	}
	return ""
}

// maxDepth is the deepest nesting of objects a body declaration may have
// (the screener's filters are objects in an array of the body).
const maxDepth = 4

// bodyDecoder decodes a JSON request body strictly through its declaration
// (a TypeObject Param), the one decoding style of every body:
//
//	request body: empty; want a JSON object
//	request body: unknown field "typo" (accepted: tickers, type, …)
//	request body: field "filters[0].value": want a number, got a string
//	request body: field "limit": 0: want 1 to 500
//	request body: want , or } (at byte 12)
//
// null is the same as an absent field; a field given twice in one object
// is refused (as a query parameter given twice is); trailing data is
// refused. Errors are sticky: the first is kept and the
// reads after it return zero values. Callers loop over the fields:
//
//	d := bodyDecoder{s: jsonScanner{b: body}}
//	d.begin(&quotesBody)
//	for d.next() {
//		switch d.name() { case "type": … default: d.unhandled() }
//	}
//	if err := d.end(); err != nil { … }
//
// A bodyDecoder lives on the caller's stack; the strings str returns alias
// the body.
type bodyDecoder struct {
	s     jsonScanner
	err   error
	stack [maxDepth]bodyFrame // the open objects, outermost first
	depth int
}

// bodyFrame is one open object.
type bodyFrame struct {
	decl  *Param // the object's declaration
	field *Param // the field being decoded
	n     int    // fields read so far
	seen  uint64 // bit i: decl.Fields[i] was read (at most 64 fields)
	item  int    // index of the item being decoded in an array field; -1 outside
}

// fail records err unless an error is already recorded.
func (d *bodyDecoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

// syntax records a JSON syntax error at the current byte.
func (d *bodyDecoder) syntax(format string, args ...any) { d.fail(d.s.errorf(format, args...)) }

// invalid records a 400 naming the field (or item) being decoded.
func (d *bodyDecoder) invalid(format string, args ...any) {
	if d.err == nil {
		d.err = badRequest("request body: field %q: %s", d.path(""), fmt.Sprintf(format, truncateEchoes(format, args)...))
	}
}

// path names the field (or item) being decoded, e.g. filters[0].value;
// with key set, the field key of the innermost object instead.
func (d *bodyDecoder) path(key string) string {
	var b strings.Builder
	for i := 0; i < d.depth; i++ {
		f := &d.stack[i]
		if i > 0 {
			b.WriteByte('.')
		}
		if i == d.depth-1 && key != "" {
			b.WriteString(key)
			break
		}
		if f.field != nil {
			b.WriteString(f.field.Name)
		}
		if f.item >= 0 {
			fmt.Fprintf(&b, "[%d]", f.item)
		}
	}
	return b.String()
}

// decl returns the declaration of the value being decoded: the field's, or
// its items' inside an array.
func (d *bodyDecoder) decl() *Param {
	f := &d.stack[d.depth-1]
	if f.item >= 0 {
		return f.field.Items
	}
	return f.field
}

// typeErr records that the value being decoded has the wrong JSON type.
func (d *bodyDecoder) typeErr() {
	want := wantKind(d.decl())
	if got := d.s.kind(); got != "" {
		d.invalid("want %s, got %s", want, got)
	} else {
		d.invalid("want %s (at byte %d)", want, d.s.i)
	}
}

// wantKind describes the JSON a declaration accepts ("an array of
// strings").
func wantKind(p *Param) string {
	switch p.Type {
	case TypeBoolean:
		return "true or false"
	case TypeInteger, TypeNumber:
		if p.Unit != "" {
			return "a number of " + p.Unit
		}
		return "a number"
	case TypeDate:
		return "a date YYYY-MM-DD"
	case TypeTimestamp:
		return "an ISO 8601 timestamp"
	case TypeAsOf:
		return asOfWant
	case TypeTime:
		return "an RFC 3339 time or unix milliseconds"
	case TypeArray:
		if p.Items.Type == TypeObject {
			return "an array of objects"
		}
		return "an array of strings"
	case TypeObject:
		return "an object"
	}
	return "a string"
}

// begin opens the body, an object declared by decl.
func (d *bodyDecoder) begin(decl *Param) {
	switch d.s.peek() {
	case '{':
		d.open(decl)
	case 0:
		d.fail(badRequest("request body: empty; want a JSON object"))
	default:
		d.syntax("want a JSON object")
	}
}

func (d *bodyDecoder) open(decl *Param) {
	if d.depth == maxDepth {
		panic("BUG: body declaration nested deeper than maxDepth")
	}
	d.s.i++ // {
	d.stack[d.depth] = bodyFrame{decl: decl, item: -1}
	d.depth++
}

// object opens the value being decoded, which must be an object declared
// by decl, and reports whether it did.
func (d *bodyDecoder) object(decl *Param) bool {
	if d.err != nil {
		return false
	}
	if d.s.peek() != '{' {
		d.typeErr()
		return false
	}
	d.open(decl)
	return true
}

// next moves to the next field of the innermost open object and reports
// whether there is one (then name names it and the caller decodes its
// value); false at the object's end (the object is closed) or after an
// error. An undeclared field is a 400 naming it and the declared ones.
func (d *bodyDecoder) next() bool {
	if d.err != nil {
		return false
	}
	f := &d.stack[d.depth-1]
	c := d.s.peek()
	if c == '}' {
		d.s.i++
		d.depth--
		return false
	}
	if f.n > 0 {
		if c != ',' {
			d.syntax("want , or }")
			return false
		}
		d.s.i++
	}
	key, err := d.s.str()
	if err != nil {
		if err == errWantString {
			d.syntax("want a field name")
		} else {
			d.fail(err)
		}
		return false
	}
	if d.s.peek() != ':' {
		d.syntax("want :")
		return false
	}
	d.s.i++
	f.n++
	f.item = -1
	for i := range f.decl.Fields {
		if string(key) == f.decl.Fields[i].Name {
			if f.seen&(1<<i) != 0 {
				d.fail(badRequest("request body: field %q is given more than once", d.path(string(key))))
				return false
			}
			f.seen |= 1 << i
			f.field = &f.decl.Fields[i]
			return true
		}
	}
	d.fail(badRequest("request body: unknown field %q (accepted: %s)", d.path(string(key)), fieldNames(f.decl)))
	return false
}

// name returns the name of the field next moved to.
func (d *bodyDecoder) name() string { return d.stack[d.depth-1].field.Name }

// unhandled panics: the field is declared but the caller has no case for
// it (a setup mistake the tests catch).
func (d *bodyDecoder) unhandled() {
	panic(fmt.Sprintf("BUG: body field %q is declared but not decoded", d.path("")))
}

// end checks that only white space follows the body and returns the first
// error.
func (d *bodyDecoder) end() error {
	if d.err == nil {
		if err := d.s.end(); err != nil {
			d.fail(err)
		}
	}
	return d.err
}

// null reports whether the value is null, consuming it; also true after
// an error, so that the caller moves on.
func (d *bodyDecoder) null() bool { return d.err != nil || d.s.null() }

// array opens the value being decoded, which must be an array, and
// reports whether it did; item then moves through its items.
func (d *bodyDecoder) array() bool {
	if d.err != nil {
		return false
	}
	if d.s.peek() != '[' {
		d.typeErr()
		return false
	}
	d.s.i++
	d.stack[d.depth-1].item = -1
	return true
}

// item moves to the next item of the array array opened and reports
// whether there is one; false at its end (closed) or after an error.
func (d *bodyDecoder) item() bool {
	if d.err != nil {
		return false
	}
	f := &d.stack[d.depth-1]
	c := d.s.peek()
	if c == ']' {
		d.s.i++
		f.item = -1
		return false
	}
	if f.item >= 0 {
		if c != ',' {
			d.syntax("want , or ] in %s", f.field.Name)
			return false
		}
		d.s.i++
	}
	if max := f.field.Max; max > 0 && f.item+1 >= max {
		// The declared cap bounds the work and the answer of a request.
		f.item = -1
		d.invalid("at most %d %s per request", max, itemNoun(f.field))
		return false
	}
	f.item++
	return true
}

// itemNoun names the items of array declaration p in an error message.
func itemNoun(p *Param) string {
	if p.Noun != "" {
		return p.Noun
	}
	return "items"
}

// str reads a string; without escapes the result aliases the body.
func (d *bodyDecoder) str() []byte {
	if d.err != nil {
		return nil
	}
	if d.s.peek() != '"' {
		d.typeErr()
		return nil
	}
	b, err := d.s.str()
	if err != nil {
		d.fail(err)
		return nil
	}
	return b
}

// text reads a string and copies it; "" for null.
func (d *bodyDecoder) text() string {
	if d.null() {
		return ""
	}
	return string(d.str())
}

// number reads a number.
func (d *bodyDecoder) number() float64 {
	if d.err != nil {
		return 0
	}
	f, err := d.s.number()
	if err != nil {
		if err == errWantNumber {
			d.typeErr()
		} else {
			d.fail(err)
		}
		return 0
	}
	return f
}

// numberPtr reads a number into a new variable; nil for null.
func (d *bodyDecoder) numberPtr() *float64 {
	if d.null() {
		return nil
	}
	v := d.number()
	if d.err != nil {
		return nil
	}
	return &v
}

// integer reads a whole number in the declaration's [Min, Max].
func (d *bodyDecoder) integer() int {
	f := d.number()
	if d.err != nil {
		return 0
	}
	p := d.decl()
	switch {
	case f != math.Trunc(f):
		d.invalid("%v: want a whole number from %d to %d%s", f, p.Min, p.Max, unitSuffix(p))
	case f < float64(p.Min) || f > float64(p.Max):
		d.invalid("%v: want %d to %d%s", f, p.Min, p.Max, unitSuffix(p))
	default:
		return int(f)
	}
	return 0
}

// boolean reads true or false.
func (d *bodyDecoder) boolean() bool {
	if d.err != nil {
		return false
	}
	v, err := d.s.boolean()
	if err != nil {
		d.typeErr()
	}
	return v
}

// date reads a date YYYY-MM-DD.
func (d *bodyDecoder) date() engine.Date {
	v := d.str()
	if d.err != nil {
		return engine.NoDate
	}
	t, err := parseDate(string(v))
	if err != nil {
		d.invalid("%q: %s", v, dateProblem(string(v), "want a date YYYY-MM-DD"))
		return engine.NoDate
	}
	return t
}

// tickerPattern is the form of a ticker or macro series (documentation;
// validTicker checks it).
const tickerPattern = `^([A-Z0-9]{4}[0-9]?[0-9]?|SELIC|IPCA|CDI|[A-Z]{3})$`

// tickerWant says what tickerPattern accepts, in error messages.
const tickerWant = "want 4 letters or digits and up to 2 digits (e.g. PETR4), or a macro series: SELIC, IPCA, CDI or a currency's ISO code (USD, EUR...)"

// tickerListPattern is the shape of the path of GET /quotes/{ticker}: one
// ticker, or several comma-separated, in either case (the handler checks
// each against tickerPattern once upper-cased).
const tickerListPattern = `^[A-Za-z0-9]{3,6}(,[A-Za-z0-9]{3,6})*$`

// The quote options of POST /quotes and GET /quotes/{ticker}.
var (
	quoteType = Param{Name: "type", In: InQuery, Type: TypeEnum, Enum: []string{TypeCurrent, TypeHistorical, TypeChart},
		Desc: "current: the latest quote; historical: a series of datapoints; chart: the 1d, 5d, 1M, 6M, 1Y and 5Y presets. Default historical (eod plans: the previous session's quote, and the option is refused)"}
	quoteInterval = Param{Name: "interval", In: InQuery, Type: TypeInteger, Min: 60, Max: 1 << 40, Unit: "seconds",
		Desc: "seconds per datapoint of a historical series, a whole number, at least 60; default 86400 (daily)"}
	quoteAdjusted = Param{Name: "adjusted", In: InQuery, Type: TypeBoolean, Default: false,
		Desc: "divide prices by the cumulative adjustment factor of the later corporate events"}
)

const (
	quoteStartDesc = "first day of a historical series; default 365 days before end_date (daily) or end_date (intraday, at most 5 days before it)"
	quoteEndDesc   = "last day of a historical series; default the last complete session (daily) or today (intraday)"
)

// asField returns p declared as a body field.
func asField(p Param) Param {
	p.In = ""
	return p
}

// quotesBody declares the body of POST /quotes.
var quotesBody = Param{Name: "QuotesRequest", Type: TypeObject, Fields: []Param{
	{Name: "tickers", Type: TypeArray, Required: true, Min: 1, Max: MaxTickers, Noun: "tickers",
		Items: &Param{Type: TypeString, Pattern: tickerPattern},
		Desc:  "tickers (upper case) or macro series (SELIC, IPCA, CDI, and the PTAX rates by ISO code: USD, EUR...); a repeated ticker is answered once"},
	asField(quoteType),
	asField(quoteInterval),
	{Name: "start_date", Type: TypeDate, Desc: quoteStartDesc},
	{Name: "end_date", Type: TypeDate, Desc: quoteEndDesc},
	asField(quoteAdjusted),
}}

// The bodies of the quote routes of one type (POST /quotes/current,
// /historical and /chart): the fields of quotesBody that type reads.
var (
	currentQuotesBody = Param{Name: "CurrentQuotesRequest", Type: TypeObject, Fields: []Param{
		quotesBody.Fields[0], asField(quoteAdjusted),
	}}
	historicalQuotesBody = Param{Name: "HistoricalQuotesRequest", Type: TypeObject, Fields: []Param{
		quotesBody.Fields[0], asField(quoteInterval),
		{Name: "start_date", Type: TypeDate, Desc: quoteStartDesc},
		{Name: "end_date", Type: TypeDate, Desc: quoteEndDesc},
		asField(quoteAdjusted),
	}}
	chartQuotesBody = Param{Name: "ChartQuotesRequest", Type: TypeObject, Fields: []Param{
		quotesBody.Fields[0], asField(quoteAdjusted),
	}}
)

// quotesRequest is the body of POST /quotes. Tickers alias the request body
// buffer: they are valid only while the request is served. It is pooled
// in call.
type quotesRequest struct {
	Tickers  [][]byte
	Type     string // "" when absent
	Interval int64  // 0 when absent
	Start    engine.Date
	End      engine.Date
	Adjusted bool

	hasTickers bool
}

// reset empties q for the next request, keeping the Tickers array.
func (q *quotesRequest) reset() {
	*q = quotesRequest{Tickers: q.Tickers[:0], Start: engine.NoDate, End: engine.NoDate}
}

// Quote request types.
const (
	TypeCurrent    = "current"
	TypeHistorical = "historical"
	TypeChart      = "chart"
)

// decodeTickers reads the value of the tickers field into tickers
// (emptied first; the strings alias the body) and records whether it was
// an array (hasTickers): null or another type leaves none.
func (q *quotesRequest) decodeTickers(d *bodyDecoder, tickers [][]byte) [][]byte {
	tickers, q.hasTickers = tickers[:0], false
	if d.null() || !d.array() {
		return tickers
	}
	q.hasTickers = true
	for d.item() {
		t := d.str()
		if d.err != nil {
			break
		}
		tickers = append(tickers, t)
	}
	return tickers
}

// MaxTickers is the largest number of tickers of one POST /quotes.
const MaxTickers = 500

// fieldErr is a 400 naming a body field.
func fieldErr(field, format string, args ...any) error {
	return badRequest("request body: field %q: %s", field, fmt.Sprintf(format, truncateEchoes(format, args)...))
}

// parseQuotesRequest decodes body strictly into q (reset first; its
// Tickers array is reused) through decl, quotesBody or the body of a
// route of one type (whose fields are some of quotesBody's). It
// validates values but not plan restrictions.
func parseQuotesRequest(body []byte, q *quotesRequest, decl *Param) error {
	q.reset()
	tickers := q.Tickers
	d := bodyDecoder{s: jsonScanner{b: body}}
	d.begin(decl)
	for d.next() {
		switch d.name() {
		case "tickers":
			tickers = q.decodeTickers(&d, tickers)
		case "type":
			q.Type = ""
			if d.null() {
				continue
			}
			switch v := d.str(); string(v) {
			case TypeCurrent:
				q.Type = TypeCurrent
			case TypeHistorical:
				q.Type = TypeHistorical
			case TypeChart:
				q.Type = TypeChart
			default:
				d.invalid("%q: want current, historical or chart", v)
			}
		case "interval":
			q.Interval = 0
			if d.null() {
				continue
			}
			f := d.number()
			if d.err != nil {
				continue
			}
			if f != float64(int64(f)) || f < 60 || f > 1<<40 {
				d.invalid("%v: want a whole number of seconds, at least 60", f)
				continue
			}
			q.Interval = int64(f)
		case "start_date":
			q.Start = engine.NoDate
			if !d.null() {
				q.Start = d.date()
			}
		case "end_date":
			q.End = engine.NoDate
			if !d.null() {
				q.End = d.date()
			}
		case "adjusted":
			q.Adjusted = false
			if !d.null() {
				q.Adjusted = d.boolean()
			}
		default:
			d.unhandled()
		}
	}
	q.Tickers = tickers
	if err := d.end(); err != nil {
		return err
	}
	if !q.hasTickers || len(tickers) == 0 {
		return fieldErr("tickers", "required: 1 to %d tickers", MaxTickers)
	}
	for _, t := range tickers {
		if !validTicker(string(t)) {
			return fieldErr("tickers", "%q: %s", t, tickerWant)
		}
	}
	return nil
}

// validTicker reports whether t is a ticker (engine.ValidTicker:
// ^[A-Z0-9]{4}[0-9]{0,2}$) or the name of a macro series: SELIC, IPCA,
// CDI, or three capital letters, a currency's ISO 4217 code (the PTAX
// rates: USD, EUR...). A well-formed name the snapshot lacks is a 404.
func validTicker(t string) bool {
	switch t {
	case "SELIC", "IPCA", "CDI":
		return true
	}
	if len(t) == 3 && isUpper(t[0]) && isUpper(t[1]) && isUpper(t[2]) {
		return true
	}
	return engine.ValidTicker(t)
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// Caps of a screener body: each bounds the work of one request (a sort key
// or a filter is a pass over the candidates). Beyond them the answer is a
// 400 naming the cap.
const (
	MaxScreenerFilters = 64  // filters per request
	MaxScreenerSorts   = 8   // sort keys per request
	MaxScreenerSectors = 256 // sector ids (or index symbols) in one filter's "in"
)

// screenerBody declares the body of POST /screener.
var screenerBody = Param{Name: "ScreenerRequest", Type: TypeObject, Fields: []Param{
	{Name: "limit", Type: TypeInteger, Default: defaultScreenerLimit, Min: 1, Max: MaxScreenerLimit, Desc: "number of results"},
	{Name: "offset", Type: TypeInteger, Default: 0, Min: 0, Max: 1<<31 - 1,
		Desc: "number of results to skip, in answer order (addition): with limit, pages through every result past the first 500; X-Total-Count gives their number"},
	{Name: "primaryOnly", Type: TypeBoolean, Default: true, Desc: "keep only the most liquid ticker of each company"},
	{Name: "filters", Type: TypeArray, Max: MaxScreenerFilters, Noun: "filters", Items: &screenerFilterDecl, Desc: "conditions every result meets (a missing value never matches)"},
	{Name: "sort", Type: TypeArray, Max: MaxScreenerSorts, Noun: "sort keys", Items: &screenerSortDecl, Desc: "sort keys, the first one first; default volume descending; ties by ticker"},
	{Name: "as_of", Type: TypeAsOf, Desc: "point in time (addition): screen as at this instant, from what was published by then (docs/api.md, Point in time): closes and volumes of the last session closed by then, each ratio the latest point known then (valuation ratios at the last session closed by then). " +
		"A date YYYY-MM-DD is the end of that day in São Paulo; a date-time YYYY-MM-DDTHH:MM[:SS] is São Paulo time (UTC-3), or RFC 3339 with Z or an offset"},
}}

var screenerFilterDecl = Param{Name: "ScreenerFilter", Type: TypeObject, Fields: []Param{
	{Name: "type", Type: TypeEnum, Required: true, Enum: []string{"close_price", "current_price", "volume", "employee_count", "sector", "index", "droplet"},
		Desc: "the filtered value: a scalar field (current_price is close_price), sector ids, index membership (addition), or a ratio (droplet)"},
	{Name: "op", Type: TypeEnum, Enum: []string{">=", ">", "<=", "<", "==", "between"}, Desc: "comparison of scalar and droplet filters"},
	{Name: "value", Type: TypeNumber, Desc: "the operand of >=, >, <=, < and =="},
	{Name: "min", Type: TypeNumber, Desc: "lower bound of between (inclusive)"},
	{Name: "max", Type: TypeNumber, Desc: "upper bound of between (inclusive)"},
	{Name: "in", Type: TypeArray, Max: MaxScreenerSectors, Noun: "ids", Items: &Param{Type: TypeString},
		Desc: "sector ids of any level (a sector filter), or index symbols, IBOV… (an index filter: the members of any of them, addition)"},
	{Name: "id", Type: TypeString, Desc: "ratio id of a droplet filter (see /ratios/catalog), optionally with a class suffix"},
}}

var screenerSortDecl = Param{Name: "ScreenerSort", Type: TypeObject, Fields: []Param{
	{Name: "by", Type: TypeString, Required: true, Desc: "close_price (alias current_price), volume, employee_count or droplet:<ratio id>"},
	{Name: "order", Type: TypeEnum, Enum: []string{"asc", "desc"}, Default: "desc", Desc: "sort order"},
}}

// parseScreenerRequest decodes body strictly into req through
// screenerBody. Strings are copied.
func parseScreenerRequest(body []byte, req *screenerRequest) error {
	*req = screenerRequest{}
	d := bodyDecoder{s: jsonScanner{b: body}}
	d.begin(&screenerBody)
	for d.next() {
		switch d.name() {
		case "limit":
			req.Limit = nil
			if d.null() {
				continue
			}
			if n := d.integer(); d.err == nil {
				req.Limit = &n
			}
		case "offset":
			req.Offset = nil
			if d.null() {
				continue
			}
			if n := d.integer(); d.err == nil {
				req.Offset = &n
			}
		case "primaryOnly":
			req.PrimaryOnly = nil
			if d.null() {
				continue
			}
			if b := d.boolean(); d.err == nil {
				req.PrimaryOnly = &b
			}
		case "filters":
			req.Filters = nil
			if d.null() || !d.array() {
				continue
			}
			req.Filters = []screenerFilter{}
			for d.item() {
				req.Filters = append(req.Filters, screenerFilter{})
				decodeScreenerFilter(&d, &req.Filters[len(req.Filters)-1])
			}
		case "as_of":
			req.AsOf = d.text()
		case "sort":
			req.Sort = nil
			if d.null() || !d.array() {
				continue
			}
			req.Sort = []screenerSort{}
			for d.item() {
				req.Sort = append(req.Sort, screenerSort{})
				decodeScreenerSort(&d, &req.Sort[len(req.Sort)-1])
			}
		default:
			d.unhandled()
		}
	}
	return d.end()
}

func decodeScreenerFilter(d *bodyDecoder, f *screenerFilter) {
	if !d.object(&screenerFilterDecl) {
		return
	}
	for d.next() {
		switch d.name() {
		case "type":
			f.Type = d.text()
		case "op":
			f.Op = d.text()
		case "value":
			f.Value = d.numberPtr()
		case "min":
			f.Min = d.numberPtr()
		case "max":
			f.Max = d.numberPtr()
		case "in":
			f.In = nil
			if d.null() || !d.array() {
				continue
			}
			f.In = []string{}
			for d.item() {
				f.In = append(f.In, string(d.str()))
			}
		case "id":
			f.ID = d.text()
		default:
			d.unhandled()
		}
	}
}

func decodeScreenerSort(d *bodyDecoder, s *screenerSort) {
	if !d.object(&screenerSortDecl) {
		return
	}
	for d.next() {
		switch d.name() {
		case "by":
			s.By = d.text()
		case "order":
			s.Order = d.text()
		default:
			d.unhandled()
		}
	}
}
