package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

func TestParseAsOf(t *testing.T) {
	sp := func(y int, m time.Month, d, hh, mm, ss, ns int) time.Time {
		return time.Date(y, m, d, hh, mm, ss, ns, engine.SaoPaulo).UTC()
	}
	for _, c := range []struct {
		in   string
		want time.Time
		day  bool
		bad  bool
	}{
		{in: "2024-03-28", want: sp(2024, 3, 28, 23, 59, 59, 999999999), day: true},
		{in: "2024-03-28T10:30", want: sp(2024, 3, 28, 10, 30, 0, 0)},
		{in: "2024-03-28T10:30:15", want: sp(2024, 3, 28, 10, 30, 15, 0)},
		{in: "2024-03-28T10:30:15.25", want: sp(2024, 3, 28, 10, 30, 15, 250000000)},
		{in: "2024-03-28T13:30:00Z", want: sp(2024, 3, 28, 10, 30, 0, 0)},
		{in: "2024-03-28T10:30:00-03:00", want: sp(2024, 3, 28, 10, 30, 0, 0)},
		{in: "2024-03-28T10:30Z", want: sp(2024, 3, 28, 7, 30, 0, 0)},
		{in: "2024-02-29", want: sp(2024, 2, 29, 23, 59, 59, 999999999), day: true},
		{in: "2024-02-30", bad: true},
		{in: "2024-3-28", bad: true},
		{in: "2024-03-28 10:30", bad: true},
		{in: "2024-03-28t10:30", bad: true},
		{in: "2024-03-28T25:00", bad: true},
		{in: "2024-03-28T10", bad: true},
		{in: "2024-03-28T10:30:00+0300", bad: true},
		{in: "1899-12-31", bad: true},
		{in: "2201-01-01T00:00", bad: true},
		{in: "yesterday", bad: true},
		{in: "", bad: true},
	} {
		got, day, err := parseAsOf(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("parseAsOf(%q) = %v, want an error", c.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) || day != c.day {
			t.Errorf("parseAsOf(%q) = %v, %v, %v; want %v, %v", c.in, got, day, err, c.want, c.day)
		}
	}
}

// FuzzParseAsOf: parseAsOf never panics; what it accepts is in its years,
// and a date-time written back in São Paulo time parses to the same
// instant.
func FuzzParseAsOf(f *testing.F) {
	for _, s := range []string{"2024-03-28", "2024-03-28T10:30", "2024-03-28T10:30:15.123456789", "2024-03-28T10:30:00Z",
		"2024-03-28T10:30:00+05:45", "2024-02-30", "9999-12-31T23:59:59-23:59", "0000-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, day, err := parseAsOf(s)
		if err != nil {
			return
		}
		if y := got.In(engine.SaoPaulo).Year(); y < 1900 || y > 2200 {
			t.Fatalf("parseAsOf(%q) = %v: year %d", s, got, y)
		}
		if day != (len(s) == 10) {
			t.Fatalf("parseAsOf(%q): day %v", s, day)
		}
		back := got.In(engine.SaoPaulo).Format("2006-01-02T15:04:05.999999999")
		again, _, err := parseAsOf(back)
		if err != nil || !again.Equal(got) {
			t.Fatalf("parseAsOf(%q) = %v; written back %q parses to %v, %v", s, got, back, again, err)
		}
	})
}

// TestAsOfErrors: a malformed as_of, one before the snapshot's first data
// or after its own as_of is a 400 naming the parameter, on every route
// that declares it; the snapshot's as-of day as a date is its as_of.
func TestAsOfErrors(t *testing.T) {
	ts := newTestServer(t, true)
	ds := mustSmall(t)
	first := ds.FirstPublished().In(engine.SaoPaulo)
	before := first.Add(-time.Second).Format("2006-01-02T15:04:05")
	asOfDay := ds.AsOf().In(engine.SaoPaulo).Format(time.DateOnly)
	after := ds.AsOf().In(engine.SaoPaulo).Add(time.Second).Format("2006-01-02T15:04:05")
	n := 0
	for i := range routeTable {
		rt := &routeTable[i]
		if !declares(rt, "as_of") {
			continue
		}
		n++
		base := samplePath(rt)
		key := sampleKey(t, ts, rt)
		for _, c := range []struct{ v, want string }{
			{"2024-13-01", `query parameter as_of=\"2024-13-01\": not a calendar date: there is no month 13`},
			{"2024-03-28 10:00", `query parameter as_of=\"2024-03-28 10:00\": want a date YYYY-MM-DD or a São Paulo date-time`},
			{"soon", `query parameter as_of=\"soon\"`},
			{before, `query parameter as_of=\"` + before + `\": before the snapshot's first data`},
			{after, `query parameter as_of=\"` + after + `\": after the snapshot's as_of`},
		} {
			w := ts.do(rt.Method, base+"?"+url.Values{"as_of": {c.v}}.Encode(), key, sampleBody(rt))
			checkError(t, w, 400, strings.ReplaceAll(c.want, `\"`, `"`))
		}
		for _, ok := range []string{asOfDay, first.Format("2006-01-02T15:04:05")} {
			if w := ts.do(rt.Method, base+"?as_of="+url.QueryEscape(ok), key, sampleBody(rt)); w.Code != 200 && w.Code != 404 {
				t.Errorf("%s %s?as_of=%s: %d %s", rt.Method, base, ok, w.Code, w.Body)
			}
		}
	}
	if n != 16 {
		t.Errorf("%d routes declare as_of, want 16 (10 and the routes of 6 of their CSV forms)", n)
	}
	// The screener takes it in its body.
	for _, c := range []struct{ body, want string }{
		{`{"as_of":"2024-02-30"}`, `request body: field "as_of": "2024-02-30": not a calendar date: February 2024 has 29 days`},
		{`{"as_of":"` + after + `"}`, `request body: field "as_of": "` + after + `": after the snapshot's as_of`},
		{`{"as_of":"` + before + `"}`, `request body: field "as_of": "` + before + `": before the snapshot's first data`},
		{`{"as_of":20240328}`, `request body: field "as_of": want a date YYYY-MM-DD or a São Paulo date-time`},
	} {
		checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, c.body), 400, c.want)
	}
	for _, ok := range []string{asOfDay, first.Format("2006-01-02T15:04:05")} {
		if w := ts.do("POST", "/v2/screener", testKeyDelayed, `{"as_of":"`+ok+`"}`); w.Code != 200 {
			t.Errorf("POST /v2/screener as_of %s: %d %s", ok, w.Code, w.Body)
		}
	}
}

func declares(rt *Route, name string) bool {
	for i := range rt.Params {
		if rt.Params[i].Name == name && rt.Params[i].In == InQuery {
			return true
		}
	}
	return false
}

// TestAsOfAnswerKey: two spellings of one as_of instant share an answer
// key; another instant does not.
func TestAsOfAnswerKey(t *testing.T) {
	params := []Param{asOfParam}
	key := func(raw string) string {
		q := newQuery(raw, params)
		return string(appendQueryKey(nil, &q))
	}
	a, b := key("as_of=2024-03-28T10:30"), key("as_of=2024-03-28T13:30:00Z")
	if a != b {
		t.Errorf("keys of one instant differ: %q %q", a, b)
	}
	if c := key("as_of=2024-03-28T10:31"); c == a {
		t.Errorf("keys of two instants are equal: %q", c)
	}
	if key("") == a {
		t.Error("as_of is not part of the key")
	}
}
