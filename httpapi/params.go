package httpapi

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// query holds the validated query parameters of one request.
//
// Decisions (docs/api.md): a parameter the operation does not accept is a
// 400 naming it and the accepted ones; a parameter given twice is a 400;
// an empty value (?limit=) is the same as an absent parameter.
type query struct {
	vals url.Values
}

// parseQuery parses raw and checks every name against allowed.
func parseQuery(raw string, allowed ...string) (query, error) {
	if raw == "" {
		return query{}, nil
	}
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return query{}, badRequest("malformed query string: %v", err)
	}
	for name, vs := range vals {
		ok := false
		for _, a := range allowed {
			if a == name {
				ok = true
				break
			}
		}
		if !ok {
			if len(allowed) == 0 {
				return query{}, badRequest("unknown query parameter %q: this operation accepts none", name)
			}
			return query{}, badRequest("unknown query parameter %q (accepted: %s)", name, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 {
			return query{}, badRequest("query parameter %q is given more than once", name)
		}
	}
	return query{vals: vals}, nil
}

// str returns the value of name and whether it is present and non-empty.
func (q query) str(name string) (string, bool) {
	vs := q.vals[name]
	if len(vs) == 0 || vs[0] == "" {
		return "", false
	}
	return vs[0], true
}

// boolean parses name as true or false (nothing else), def when absent.
func (q query) boolean(name string, def bool) (bool, error) {
	s, ok := q.str(name)
	if !ok {
		return def, nil
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badRequest("query parameter %s=%q: want true or false", name, s)
}

// integer parses name as a decimal integer in [min, max], def when absent.
func (q query) integer(name string, def, min, max int) (int, error) {
	s, ok := q.str(name)
	if !ok {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest("query parameter %s=%q: want an integer", name, s)
	}
	if v < min || v > max {
		return 0, badRequest("query parameter %s=%d: want %d to %d", name, v, min, max)
	}
	return v, nil
}

// date parses name as YYYY-MM-DD; NoDate when absent.
func (q query) date(name string) (engine.Date, error) {
	s, ok := q.str(name)
	if !ok {
		return engine.NoDate, nil
	}
	d, err := parseDate(s)
	if err != nil {
		return engine.NoDate, badRequest("query parameter %s=%q: want a date YYYY-MM-DD", name, s)
	}
	return d, nil
}

// timestamp parses name as an ISO 8601 timestamp; zero when absent.
func (q query) timestamp(name string) (time.Time, error) {
	s, ok := q.str(name)
	if !ok {
		return time.Time{}, nil
	}
	t, err := parseTimestamp(s)
	if err != nil {
		return time.Time{}, badRequest("query parameter %s=%q: want an ISO 8601 timestamp (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)", name, s)
	}
	return t, nil
}

// day parses name as an ISO 8601 timestamp or date and returns its UTC
// day; NoDate when absent.
func (q query) day(name string) (engine.Date, error) {
	t, err := q.timestamp(name)
	if err != nil || t.IsZero() {
		return engine.NoDate, err
	}
	return engine.DateOf(t), nil
}

// dayRange parses the start_date and end_date bounds of a listing, each
// with get (query.date or query.day); NoDate for an absent bound. A start
// after the end is a 400, whatever the endpoint.
func (q query) dayRange(get func(query, string) (engine.Date, error)) (from, to engine.Date, err error) {
	if from, err = get(q, "start_date"); err != nil {
		return engine.NoDate, engine.NoDate, err
	}
	if to, err = get(q, "end_date"); err != nil {
		return engine.NoDate, engine.NoDate, err
	}
	if from.Valid() && to.Valid() && from > to {
		return engine.NoDate, engine.NoDate, badRequest("start_date %s is after end_date %s", from, to)
	}
	return from, to, nil
}

// enum returns the value of name, which must be one of values; "" when
// absent. Matching is exact (upper case as documented) unless fold is set.
func (q query) enum(name string, fold bool, values ...string) (string, error) {
	s, ok := q.str(name)
	if !ok {
		return "", nil
	}
	for _, v := range values {
		if s == v || (fold && strings.EqualFold(s, v)) {
			return v, nil
		}
	}
	return "", badRequest("query parameter %s=%q: want one of %s", name, s, strings.Join(values, ", "))
}

// list splits name on commas, trimming spaces; empty items are a 400.
func (q query) list(name string) ([]string, error) {
	s, ok := q.str(name)
	if !ok {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, badRequest("query parameter %s=%q: empty item in the comma-separated list", name, s)
		}
		parts[i] = p
	}
	return parts, nil
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
