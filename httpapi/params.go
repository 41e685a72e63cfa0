package httpapi

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// maxParams is the most parameters (path and query) a Route may declare:
// the query reader keeps one value per declaration in a fixed array.
const maxParams = 16

// query reads the query parameters of one request through the declarations
// of its Route: a handler's first lines name its parameters, and their
// type, default, range and allowed values come from the declaration. Errors
// are sticky, like the snapshot decoder's: the first one is kept, later
// reads return defaults, and err returns it once the handler has read
// every parameter.
//
// Decisions (docs/api.md): a parameter the operation does not declare is a
// 400 naming it and the accepted ones; a parameter given twice is a 400,
// but a TypeList one: its values then join in order (tickers=A&tickers=B
// is tickers=A,B, how generated clients send an array); an empty value
// (?limit=) is the same as an absent parameter. The query
// string's errors (malformed, unknown or repeated parameter) come before
// any value's.
//
// A query lives on the handler's stack; it aliases the request's query
// string and must not outlive the request.
type query struct {
	params []Param           // the route's declarations
	vals   [maxParams]string // value of params[i] ("" when absent)
	seen   uint32            // bit i: params[i] was given
	read   uint32            // bit i: params[i] was read
	next   int               // where the next read looks first
	first  error             // the first error
}

// newQuery parses raw (a URL's raw query string) against params.
func newQuery(raw string, params []Param) query {
	if len(params) > maxParams {
		panic("BUG: more than maxParams parameters")
	}
	q := query{params: params}
	if raw == "" {
		return q
	}
	// One pass: segments url.ParseQuery refuses make the whole string
	// malformed (its message, first), then the first unknown or repeated
	// name in query string order.
	malformed := false
	var nameErr error
	n := 0
	for s := raw; s != ""; {
		var seg string
		seg, s, _ = strings.Cut(s, "&")
		n++
		if strings.IndexByte(seg, ';') >= 0 {
			malformed = true
			continue
		}
		if seg == "" {
			continue
		}
		k, v, _ := strings.Cut(seg, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			malformed = true
			continue
		}
		if v, err = url.QueryUnescape(v); err != nil {
			malformed = true
			continue
		}
		if nameErr != nil || malformed {
			continue
		}
		i := q.find(k)
		switch {
		case i < 0:
			nameErr = unknownParam(k, params)
		case q.seen&(1<<i) != 0 && q.params[i].Type == TypeList:
			q.vals[i] += "," + v // an empty part is list's 400
		case q.seen&(1<<i) != 0:
			nameErr = badRequest("query parameter %q is given more than once", k)
		default:
			q.seen |= 1 << i
			q.vals[i] = v
		}
	}
	if malformed || n > maxParams {
		// url.ParseQuery also caps the number of parameters.
		if _, err := url.ParseQuery(raw); err != nil {
			q.first = badRequest("malformed query string: %v", err)
			return q
		}
	}
	q.first = nameErr
	return q
}

// unknownParam is the 400 of an undeclared query parameter.
func unknownParam(name string, params []Param) error {
	accepted := queryNames(params)
	if accepted == "" {
		return badRequest("unknown query parameter %q: this operation accepts none", name)
	}
	return badRequest("unknown query parameter %q (accepted: %s)", name, accepted)
}

// find returns the index of the query parameter name in q.params, or -1.
func (q *query) find(name string) int {
	if i := q.next; i < len(q.params) && q.params[i].Name == name && q.params[i].In == InQuery {
		return i
	}
	for i := range q.params {
		if q.params[i].Name == name && q.params[i].In == InQuery {
			return i
		}
	}
	return -1
}

// value returns the declaration of the query parameter name, which must be
// declared with type t, and its value ("" when absent or after an error).
func (q *query) value(name string, t Type) (*Param, string) {
	i := q.find(name)
	if i < 0 || q.params[i].Type != t {
		panic(fmt.Sprintf("BUG: the handler reads query parameter %q as a %v, which the route does not declare", name, t))
	}
	q.next = i + 1
	q.read |= 1 << i
	if q.first != nil {
		return &q.params[i], ""
	}
	return &q.params[i], q.vals[i]
}

// fail records err unless an error is already recorded.
func (q *query) fail(err error) {
	if q.first == nil {
		q.first = err
	}
}

// err returns the first error. Call it once every parameter is read: it
// panics if a declared query parameter was not, since the declarations
// would then document a parameter the handler ignores.
func (q *query) err() error {
	for i := range q.params {
		if q.params[i].In == InQuery && q.read&(1<<i) == 0 {
			panic(fmt.Sprintf("BUG: query parameter %q is declared but the handler does not read it", q.params[i].Name))
		}
	}
	return q.first
}

// str returns the value of a TypeString parameter, its default when absent.
func (q *query) str(name string) string {
	p, s := q.value(name, TypeString)
	if s == "" {
		def, _ := p.Default.(string)
		return def
	}
	return s
}

// boolean returns the value of a TypeBoolean parameter: exactly true or
// false; its default when absent.
func (q *query) boolean(name string) bool {
	p, s := q.value(name, TypeBoolean)
	switch s {
	case "":
		def, _ := p.Default.(bool)
		return def
	case "true":
		return true
	case "false":
		return false
	}
	q.fail(badRequest("query parameter %s=%q: want true or false", name, s))
	return false
}

// integer returns the value of a TypeInteger parameter: a decimal integer
// in [Min, Max]; its default when absent.
func (q *query) integer(name string) int {
	p, s := q.value(name, TypeInteger)
	if s == "" {
		def, _ := p.Default.(int)
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		if p.Unit != "" {
			q.fail(badRequest("query parameter %s=%q: want a whole number of %s", name, s, p.Unit))
		} else {
			q.fail(badRequest("query parameter %s=%q: want an integer", name, s))
		}
		return 0
	}
	if v < p.Min || v > p.Max {
		q.fail(badRequest("query parameter %s=%d: want %d to %d%s", name, v, p.Min, p.Max, unitSuffix(p)))
		return 0
	}
	return v
}

// unitSuffix returns " UNIT" for a parameter with a Unit, "" otherwise.
func unitSuffix(p *Param) string {
	if p.Unit == "" {
		return ""
	}
	return " " + p.Unit
}

// date returns the value of a TypeDate parameter (YYYY-MM-DD); NoDate
// when absent.
func (q *query) date(name string) engine.Date {
	_, s := q.value(name, TypeDate)
	if s == "" {
		return engine.NoDate
	}
	d, err := parseDate(s)
	if err != nil {
		q.fail(badRequest("query parameter %s=%q: %s", name, s, dateProblem(s, "want a date YYYY-MM-DD")))
		return engine.NoDate
	}
	return d
}

// timestamp returns the value of a TypeTimestamp parameter (ISO 8601);
// zero when absent.
func (q *query) timestamp(name string) time.Time {
	_, s := q.value(name, TypeTimestamp)
	if s == "" {
		return time.Time{}
	}
	t, err := parseTimestamp(s)
	if err != nil {
		q.fail(badRequest("query parameter %s=%q: %s", name, s, dateProblem(s, "want an ISO 8601 timestamp (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)")))
		return time.Time{}
	}
	return t
}

// day returns the UTC day of a TypeTimestamp parameter; NoDate when absent.
func (q *query) day(name string) engine.Date {
	t := q.timestamp(name)
	if t.IsZero() {
		return engine.NoDate
	}
	return engine.DateOf(t)
}

// dayRange returns the start_date and end_date bounds of a listing, by
// day: each is declared TypeDate, or TypeTimestamp (then its UTC day is
// taken); NoDate for an absent bound. A start after the end is a 400,
// whatever the endpoint.
func (q *query) dayRange() (from, to engine.Date) {
	from, to = q.bound("start_date"), q.bound("end_date")
	if q.first == nil && from.Valid() && to.Valid() && from > to {
		q.fail(badRequest("start_date %s is after end_date %s", from, to))
	}
	return from, to
}

func (q *query) bound(name string) engine.Date {
	if i := q.find(name); i >= 0 && q.params[i].Type == TypeTimestamp {
		return q.day(name)
	}
	return q.date(name)
}

// enum returns the value of a TypeEnum parameter, as declared in Enum
// (matched exactly, or ignoring case with Fold); its default ("" if none)
// when absent.
func (q *query) enum(name string) string {
	p, s := q.value(name, TypeEnum)
	if s == "" {
		def, _ := p.Default.(string)
		return def
	}
	for _, v := range p.Enum {
		if s == v || (p.Fold && strings.EqualFold(s, v)) {
			return v
		}
	}
	q.fail(badRequest("query parameter %s=%q: want one of %s", name, s, strings.Join(p.Enum, ", ")))
	return ""
}

// list returns the items of a TypeList parameter, split on commas and
// trimmed (an empty item is a 400); nil when absent.
func (q *query) list(name string) []string {
	_, s := q.value(name, TypeList)
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			q.fail(badRequest("query parameter %s=%q: empty item in the comma-separated list", name, s))
			return nil
		}
		parts[i] = p
	}
	return parts
}

// parseDate parses exactly YYYY-MM-DD.
func parseDate(s string) (engine.Date, error) {
	if len(s) != 10 {
		return engine.NoDate, errBadDate
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return engine.NoDate, err
	}
	return engine.DateOf(t), nil
}

var errBadDate = badRequest("bad date")

// dateProblem says what is wrong with s, a date or timestamp that did not
// parse: a day that is not in the calendar when s has the shape of one
// (2026-02-30, 2026-13-01: "not a calendar date: February 2026 has 28
// days"), else want, the form expected.
func dateProblem(s, want string) string {
	if len(s) < 10 {
		return want
	}
	for i, c := range []byte(s[:10]) {
		if (i == 4 || i == 7) != (c == '-') || i != 4 && i != 7 && (c < '0' || c > '9') {
			return want
		}
	}
	y, _ := strconv.Atoi(s[:4])
	m, _ := strconv.Atoi(s[5:7])
	d, _ := strconv.Atoi(s[8:10])
	if m < 1 || m > 12 {
		return fmt.Sprintf("not a calendar date: there is no month %02d", m)
	}
	days := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if d < 1 || d > days {
		return fmt.Sprintf("not a calendar date: %s %d has %d days", time.Month(m), y, days)
	}
	return want
}

// parseTimestamp parses an ISO 8601 timestamp: a date (midnight UTC), a
// date and time without zone (UTC), or RFC 3339 with Z or an offset.
func parseTimestamp(s string) (time.Time, error) {
	if len(s) == 10 {
		d, err := parseDate(s)
		if err != nil {
			return time.Time{}, err
		}
		return d.Time(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
