package httpapi

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// qp declares a query parameter for the reader's tests.
func qp(name string, t Type) Param { return Param{Name: name, In: InQuery, Type: t} }

func TestQueryNames(t *testing.T) {
	limit := Param{Name: "limit", In: InQuery, Type: TypeInteger, Default: 10, Min: 1, Max: 100}
	params := []Param{{Name: "id", In: InPath, Type: TypeString}, limit, qp("b", TypeBoolean)}
	f := func(raw string, params []Param, wantMsg string) {
		t.Helper()
		q := newQuery(raw, params)
		for i := range params {
			if params[i].In == InQuery {
				q.read |= 1 << i
			}
		}
		err := q.err()
		if wantMsg == "" {
			if err != nil {
				t.Errorf("newQuery(%q): %v", raw, err)
			}
			return
		}
		st, msg := statusOf(err)
		if st != 400 || msg != wantMsg {
			t.Errorf("newQuery(%q) = %d %q, want 400 %q", raw, st, msg, wantMsg)
		}
	}
	f("", nil, "")
	f("", params, "")
	f("limit=5", params, "")
	f("limit=", params, "")
	f("&&limit=5&", params, "")
	f("limit=5&b=true", params, "")
	f("limit=5&limit=6", params, `query parameter "limit" is given more than once`)
	f("limit=&limit=6", params, `query parameter "limit" is given more than once`)
	f("limits=5", params, `unknown query parameter "limits" (accepted: limit, b)`)
	f("id=5", params, `unknown query parameter "id" (accepted: limit, b)`) // a path parameter is not a query one
	f("x=1", nil, `unknown query parameter "x": this operation accepts none`)
	// The first offending name in query string order.
	f("b=true&zz=1&limit=5&limit=6", params, `unknown query parameter "zz" (accepted: limit, b)`)
	f("limit=5&limit=6&zz=1", params, `query parameter "limit" is given more than once`)
	// A malformed query string is refused before any name, with
	// url.ParseQuery's words.
	f("zz=1&a=%zz", params, `malformed query string: invalid URL escape "%zz"`)
	f("limit=5;b=true", params, `malformed query string: invalid semicolon separator in query`)
	f("li%6Dit=5", params, "")
	f("x="+strings.Repeat("&", 10000), nil, "malformed query string: number of URL query parameters exceeded limit")
}

// queryChecks returns checks of reads from raw against params: ok wants
// fn to succeed and return true, bad wants the reads to fail with wantMsg.
func queryChecks(t *testing.T, raw string, params []Param) (ok func(string, func(*query) bool), bad func(string, string, func(*query))) {
	read := func(fn func(q *query)) error {
		q := newQuery(raw, params)
		if q.first != nil {
			t.Fatal(q.first)
		}
		fn(&q)
		return q.first
	}
	ok = func(name string, fn func(q *query) bool) {
		t.Helper()
		var good bool
		if err := read(func(q *query) { good = fn(q) }); err != nil || !good {
			t.Errorf("%s: err %v", name, err)
		}
	}
	bad = func(name, wantMsg string, fn func(q *query)) {
		t.Helper()
		err := read(fn)
		if st, msg := statusOf(err); st != 400 || msg != wantMsg {
			t.Errorf("%s: %d %q, want 400 %q", name, st, msg, wantMsg)
		}
	}
	return ok, bad
}

func TestQueryValues(t *testing.T) {
	ok, bad := queryChecks(t, "b=true&f=false&x=yes&n=7&big=501&neg=-1&bad=7a&d=2024-03-28&dbad=2024-3-28", []Param{
		qp("b", TypeBoolean), qp("f", TypeBoolean), qp("x", TypeBoolean),
		{Name: "bt", In: InQuery, Type: TypeBoolean, Default: true},
		{Name: "n", In: InQuery, Type: TypeInteger, Default: 10, Min: 1, Max: 500},
		{Name: "big", In: InQuery, Type: TypeInteger, Min: 1, Max: 500},
		{Name: "neg", In: InQuery, Type: TypeInteger, Min: 1, Max: 500},
		{Name: "bad", In: InQuery, Type: TypeInteger, Min: 1, Max: 500},
		{Name: "nd", In: InQuery, Type: TypeInteger, Default: 10, Min: 1, Max: 500},
		qp("d", TypeDate), qp("dbad", TypeDate), qp("dabs", TypeDate),
	})
	ok("b", func(q *query) bool { return q.boolean("b") })
	ok("f", func(q *query) bool { return !q.boolean("f") })
	ok("bt default", func(q *query) bool { return q.boolean("bt") })
	bad("x", `query parameter x="yes": want true or false`, func(q *query) { q.boolean("x") })
	ok("n", func(q *query) bool { return q.integer("n") == 7 })
	ok("nd default", func(q *query) bool { return q.integer("nd") == 10 })
	bad("big", "query parameter big=501: want 1 to 500", func(q *query) { q.integer("big") })
	bad("neg", "query parameter neg=-1: want 1 to 500", func(q *query) { q.integer("neg") })
	bad("bad", `query parameter bad="7a": want an integer`, func(q *query) { q.integer("bad") })
	ok("d", func(q *query) bool { return q.date("d") == engine.MakeDate(2024, 3, 28) })
	ok("dabs", func(q *query) bool { return q.date("dabs") == engine.NoDate })
	bad("dbad", `query parameter dbad="2024-3-28": want a date YYYY-MM-DD`, func(q *query) { q.date("dbad") })
	// Sticky: the first error is kept, later reads return defaults.
	bad("first error kept", `query parameter x="yes": want true or false`, func(q *query) {
		q.boolean("x")
		q.integer("big")
		if q.integer("n") != 10 || q.boolean("b") {
			t.Error("a read after an error returned a value")
		}
	})

	ok, bad = queryChecks(t, "ts=2024-03-28T10:00:00Z&tsd=2024-03-28&tsn=2024-03-28T10:00:00&tso=2024-03-28T10:00:00-03:00&tsbad=yesterday&e=ANNUAL&el=annual&ef=annual&l=A,%20B,C&lbad=A,,B&s=a%20b", []Param{
		qp("ts", TypeTimestamp), qp("tsd", TypeTimestamp), qp("tsn", TypeTimestamp), qp("tso", TypeTimestamp), qp("tsbad", TypeTimestamp),
		{Name: "e", In: InQuery, Type: TypeEnum, Enum: []string{"ANNUAL", "TTM"}},
		{Name: "el", In: InQuery, Type: TypeEnum, Enum: []string{"ANNUAL", "TTM"}},
		{Name: "ef", In: InQuery, Type: TypeEnum, Enum: []string{"ANNUAL", "TTM"}, Fold: true},
		{Name: "edef", In: InQuery, Type: TypeEnum, Enum: []string{"ANNUAL", "TTM"}, Default: "TTM"},
		qp("l", TypeList), qp("lbad", TypeList), qp("s", TypeString),
	})
	want := time.Date(2024, 3, 28, 10, 0, 0, 0, time.UTC)
	for name, w := range map[string]time.Time{"ts": want, "tsn": want, "tsd": time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC), "tso": want.Add(3 * time.Hour)} {
		ok(name, func(q *query) bool { return q.timestamp(name).Equal(w) })
	}
	ok("day", func(q *query) bool { return q.day("tso") == engine.MakeDate(2024, 3, 28) })
	bad("tsbad", `query parameter tsbad="yesterday": want an ISO 8601 timestamp (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)`, func(q *query) { q.timestamp("tsbad") })
	ok("e", func(q *query) bool { return q.enum("e") == "ANNUAL" })
	bad("el exact", `query parameter el="annual": want one of ANNUAL, TTM`, func(q *query) { q.enum("el") })
	ok("ef fold", func(q *query) bool { return q.enum("ef") == "ANNUAL" })
	ok("edef default", func(q *query) bool { return q.enum("edef") == "TTM" })
	ok("l", func(q *query) bool { l := q.list("l"); return len(l) == 3 && l[1] == "B" })
	bad("lbad", `query parameter lbad="A,,B": empty item in the comma-separated list`, func(q *query) { q.list("lbad") })
	ok("s", func(q *query) bool { return q.str("s") == "a b" })

	// A list given more than once is every value, in order (the form of
	// an array that generated clients send); an empty one is an empty
	// item.
	ok, bad = queryChecks(t, "l=A&s=x&l=B,C&l=D&lbad=A&lbad=", []Param{qp("l", TypeList), qp("lbad", TypeList), qp("s", TypeString)})
	ok("l repeated", func(q *query) bool { return slices.Equal(q.list("l"), []string{"A", "B", "C", "D"}) })
	bad("lbad repeated", `query parameter lbad="A,": empty item in the comma-separated list`, func(q *query) { q.list("lbad") })
}

func TestQueryDayRange(t *testing.T) {
	days := []Param{qp("start_date", TypeDate), qp("end_date", TypeDate)}
	stamps := []Param{qp("start_date", TypeTimestamp), qp("end_date", TypeTimestamp)}
	f := func(params []Param, raw string, from, to engine.Date, wantMsg string) {
		t.Helper()
		q := newQuery(raw, params)
		gf, gt := q.dayRange()
		err := q.err()
		if wantMsg != "" {
			if _, msg := statusOf(err); msg != wantMsg {
				t.Errorf("%q: %v, want %q", raw, err, wantMsg)
			}
			return
		}
		if err != nil || gf != from || gt != to {
			t.Errorf("%q = %v %v %v, want %v %v", raw, gf, gt, err, from, to)
		}
	}
	d := engine.MakeDate
	f(days, "", engine.NoDate, engine.NoDate, "")
	f(days, "start_date=2024-03-01", d(2024, 3, 1), engine.NoDate, "")
	f(days, "start_date=2024-03-01&end_date=2024-03-01", d(2024, 3, 1), d(2024, 3, 1), "")
	f(days, "start_date=2024-03-02&end_date=2024-03-01", 0, 0, "start_date 2024-03-02 is after end_date 2024-03-01")
	f(days, "start_date=2024-03-01T00:00:00Z", 0, 0, `query parameter start_date="2024-03-01T00:00:00Z": want a date YYYY-MM-DD`)
	f(stamps, "start_date=2024-03-01T23:00:00-03:00&end_date=2024-03-02", d(2024, 3, 2), d(2024, 3, 2), "")
	f(stamps, "start_date=2024-03-02T10:00:00Z&end_date=2024-03-01T23:59:59Z", 0, 0, "start_date 2024-03-02 is after end_date 2024-03-01")
	// A bad bound comes before an inverted range.
	f(stamps, "start_date=2024-03-02&end_date=nope", 0, 0, `query parameter end_date="nope": want an ISO 8601 timestamp (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ)`)
}

// TestQueryReadsOnlyDeclared checks the reader's setup checks: reading an
// undeclared parameter, or as another type, and leaving a declared one
// unread are bugs.
func TestQueryReadsOnlyDeclared(t *testing.T) {
	params := []Param{qp("b", TypeBoolean), {Name: "id", In: InPath, Type: TypeString}}
	panics := func(name string, fn func(q *query)) {
		t.Helper()
		defer func() {
			if p := recover(); p == nil || !strings.HasPrefix(p.(string), "BUG: ") {
				t.Errorf("%s: recovered %v, want a BUG panic", name, p)
			}
		}()
		q := newQuery("", params)
		fn(&q)
	}
	panics("undeclared", func(q *query) { q.boolean("x") })
	panics("other type", func(q *query) { q.integer("b") })
	panics("path parameter", func(q *query) { q.str("id") })
	panics("unread", func(q *query) { q.err() })
}

func TestQueryAllocations(t *testing.T) {
	params := []Param{
		{Name: "limit", In: InQuery, Type: TypeInteger, Default: 10, Min: 1, Max: 100},
		{Name: "type", In: InQuery, Type: TypeEnum, Enum: []string{"current", "chart"}},
		qp("start_date", TypeTimestamp), qp("end_date", TypeTimestamp), qp("flag", TypeBoolean),
	}
	if n := testing.AllocsPerRun(100, func() {
		q := newQuery("limit=5&type=chart&start_date=2024-03-01&end_date=2024-03-28T10:00:00Z&flag=true", params)
		q.integer("limit")
		q.enum("type")
		q.dayRange()
		q.boolean("flag")
		if err := q.err(); err != nil {
			t.Fatal(err)
		}
	}); n > 0 {
		t.Errorf("reading a query allocates %v times", n)
	}
}

// FuzzQuery checks that no query string makes the reader panic and that
// every error is a 4xx.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10", "limit=0", "b=true", "d=2024-02-30", "ts=2024-03-28T10:00:00Z",
		"ids=A,B", "ids=,", "x=%", "limit=99999999999999999999", "ts=2024-03-28T25:00:00Z", "a;b", "e=a&e=b"} {
		f.Add(s)
	}
	params := []Param{
		{Name: "limit", In: InQuery, Type: TypeInteger, Default: 10, Min: 1, Max: 100},
		qp("b", TypeBoolean), qp("d", TypeDate), qp("ts", TypeTimestamp), qp("ids", TypeList),
		{Name: "e", In: InQuery, Type: TypeEnum, Enum: []string{"A", "B"}, Fold: true},
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := newQuery(raw, params)
		q.integer("limit")
		q.boolean("b")
		q.date("d")
		q.timestamp("ts")
		q.list("ids")
		q.enum("e")
		if err := q.err(); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
				t.Fatalf("%q: error %v is not a 4xx", raw, err)
			}
		}
	})
}
