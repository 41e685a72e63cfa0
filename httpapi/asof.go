package httpapi

import (
	"errors"
	"fmt"
	"time"

	"github.com/pregao/pregao/engine"
)

// as_of (an addition, docs/api.md "Point in time"): the routes whose
// answer depends on what was published answer as they would have at an
// instant, from the same snapshot: nothing published after it.

// asOfParam is the as_of query parameter of those routes.
var asOfParam = Param{Name: "as_of", In: InQuery, Type: TypeAsOf, Example: "",
	Desc: "point in time (addition): answer as at this instant, from what was published by then (docs/api.md, Point in time). " +
		"A date YYYY-MM-DD is the end of that day in São Paulo; a date-time YYYY-MM-DDTHH:MM[:SS] is São Paulo time (UTC-3), or RFC 3339 with Z or an offset. " +
		"From the snapshot's first publication to its own as_of; default: now, as without it"}

// asOfWant is the form as_of must have, for messages.
const asOfWant = "a date YYYY-MM-DD or a São Paulo date-time YYYY-MM-DDTHH:MM[:SS]"

// asOfPattern is the OpenAPI pattern of an as_of value.
const asOfPattern = `^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$`

var errAsOf = errors.New("bad as_of")

// parseAsOf parses an as_of value: YYYY-MM-DD (the last instant of that
// day in São Paulo: day is true), YYYY-MM-DDTHH:MM, YYYY-MM-DDTHH:MM:SS
// or with a fraction of a second (São Paulo time), or any of the
// date-times with Z or an offset (that instant). Years are 1900 to 2200.
func parseAsOf(s string) (t time.Time, day bool, err error) {
	switch {
	case len(s) == 10:
		d, err := parseDate(s)
		if err != nil {
			return time.Time{}, false, err
		}
		t = d.Time().AddDate(0, 0, 1).Add(3*time.Hour - time.Nanosecond) // next day 00:00 in São Paulo, less 1 ns
		day = true
	case len(s) < 16 || len(s) > 35 || s[10] != 'T':
		return time.Time{}, false, errAsOf
	default:
		local := true
		switch c := s[len(s)-1]; {
		case c == 'Z':
			local = false
		case len(s) >= 22 && (s[len(s)-6] == '+' || s[len(s)-6] == '-') && s[len(s)-3] == ':':
			local = false
		}
		layout := "2006-01-02T15:04"
		if len(s) > 16 && s[16] == ':' {
			layout = "2006-01-02T15:04:05.999999999"
		}
		if !local {
			layout += "Z07:00"
		}
		t, err = time.ParseInLocation(layout, s, engine.SaoPaulo)
		if err != nil {
			return time.Time{}, false, errAsOf
		}
	}
	if y := t.In(engine.SaoPaulo).Year(); y < 1900 || y > 2200 {
		return time.Time{}, false, errAsOf
	}
	return t.UTC(), day, nil
}

// asOf reads the as_of parameter (TypeAsOf) and checks it against ds: the
// zero time when absent. A value before ds's first publication, or after
// ds's own as_of, is a 400 naming the parameter; a date (day) that is the
// snapshot's as-of day means the snapshot's as_of.
func (q *query) asOf(ds *engine.Dataset) time.Time {
	_, s := q.value("as_of", TypeAsOf)
	if s == "" {
		return time.Time{}
	}
	t, err := checkAsOf(s, ds)
	if err != nil {
		q.fail(badRequest("query parameter as_of=%q: %s", s, err))
		return time.Time{}
	}
	return t
}

// checkAsOf parses s (parseAsOf) and bounds it by ds's data; the error
// says what is wrong with the value.
func checkAsOf(s string, ds *engine.Dataset) (time.Time, error) {
	t, day, err := parseAsOf(s)
	if err != nil {
		return time.Time{}, errors.New(dateProblem(s, "want "+asOfWant))
	}
	if snap := ds.AsOf(); !snap.IsZero() && t.After(snap) {
		if !day || engine.SaoPauloDay(snap) != engine.SaoPauloDay(t) {
			return time.Time{}, fmt.Errorf("after the snapshot's as_of (%s)", snap.In(engine.SaoPaulo).Format(time.RFC3339))
		}
		t = snap
	}
	if first := ds.FirstPublished(); !first.IsZero() && t.Before(first) {
		return time.Time{}, fmt.Errorf("before the snapshot's first data (published %s)", first.In(engine.SaoPaulo).Format(time.RFC3339))
	}
	return t, nil
}
