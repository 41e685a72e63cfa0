package httpapi

import (
	"errors"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

func statusFor(err error) int {
	st, _ := statusOf(err)
	return st
}

func TestParseQuery(t *testing.T) {
	f := func(raw string, wantErr bool, allowed ...string) {
		t.Helper()
		_, err := parseQuery(raw, allowed...)
		if (err != nil) != wantErr {
			t.Errorf("parseQuery(%q) err = %v, want error %v", raw, err, wantErr)
		}
		if err != nil && statusFor(err) != 400 {
			t.Errorf("parseQuery(%q) status %d", raw, statusFor(err))
		}
	}
	f("", false)
	f("limit=5", false, "limit")
	f("limit=5&limit=6", true, "limit")
	f("limits=5", true, "limit")
	f("x=1", true)
	f("a=%zz", true, "a")
	f("limit=", false, "limit")
}

func TestQueryValues(t *testing.T) {
	q, err := parseQuery("b=true&f=false&x=yes&n=7&big=501&neg=-1&bad=7a&d=2024-03-28&dbad=2024-3-28&ts=2024-03-28T10:00:00Z&tsd=2024-03-28&tsn=2024-03-28T10:00:00&tso=2024-03-28T10:00:00-03:00&tsbad=yesterday&e=ANNUAL&el=annual&l=A,%20B,C&lbad=A,,B&empty=",
		"b", "f", "x", "n", "big", "neg", "bad", "d", "dbad", "ts", "tsd", "tsn", "tso", "tsbad", "e", "el", "l", "lbad", "empty", "absent")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := q.boolean("b", false); !v || err != nil {
		t.Error("b")
	}
	if v, err := q.boolean("f", true); v || err != nil {
		t.Error("f")
	}
	if _, err := q.boolean("x", false); statusFor(err) != 400 {
		t.Error("x: want 400")
	}
	if v, err := q.boolean("absent", true); !v || err != nil {
		t.Error("absent default")
	}
	if v, err := q.boolean("empty", true); !v || err != nil {
		t.Error("empty is absent")
	}
	if v, err := q.integer("n", 10, 1, 500); v != 7 || err != nil {
		t.Error("n")
	}
	if v, err := q.integer("absent", 10, 1, 500); v != 10 || err != nil {
		t.Error("default")
	}
	for _, name := range []string{"big", "neg", "bad"} {
		if _, err := q.integer(name, 10, 1, 500); statusFor(err) != 400 {
			t.Errorf("%s: want 400", name)
		}
	}
	if d, err := q.date("d"); err != nil || d != engine.MakeDate(2024, 3, 28) {
		t.Error("d")
	}
	if d, err := q.date("absent"); err != nil || d != engine.NoDate {
		t.Error("absent date")
	}
	if _, err := q.date("dbad"); statusFor(err) != 400 {
		t.Error("dbad")
	}
	want := time.Date(2024, 3, 28, 10, 0, 0, 0, time.UTC)
	for name, w := range map[string]time.Time{"ts": want, "tsn": want, "tsd": time.Date(2024, 3, 28, 0, 0, 0, 0, time.UTC), "tso": want.Add(3 * time.Hour)} {
		if v, err := q.timestamp(name); err != nil || !v.Equal(w) {
			t.Errorf("%s = %v, %v; want %v", name, v, err, w)
		}
	}
	if _, err := q.timestamp("tsbad"); statusFor(err) != 400 {
		t.Error("tsbad")
	}
	if v, err := q.enum("e", false, "ANNUAL", "TTM"); v != "ANNUAL" || err != nil {
		t.Error("e")
	}
	if _, err := q.enum("el", false, "ANNUAL", "TTM"); statusFor(err) != 400 {
		t.Error("el exact")
	}
	if v, err := q.enum("el", true, "ANNUAL", "TTM"); v != "ANNUAL" || err != nil {
		t.Error("el fold")
	}
	if l, err := q.list("l"); err != nil || len(l) != 3 || l[1] != "B" {
		t.Errorf("l = %q %v", l, err)
	}
	if _, err := q.list("lbad"); statusFor(err) != 400 {
		t.Error("lbad")
	}
}

// FuzzQuery checks that no query string makes the parsers panic and that
// every error is a 4xx.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"", "limit=10", "limit=0", "b=true", "d=2024-02-30", "ts=2024-03-28T10:00:00Z",
		"ids=A,B", "ids=,", "x=%", "limit=99999999999999999999", "ts=2024-03-28T25:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseQuery(raw, "limit", "b", "d", "ts", "ids", "e")
		check := func(err error) {
			if err == nil {
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
				t.Fatalf("%q: error %v is not a 4xx", raw, err)
			}
		}
		check(err)
		if err != nil {
			return
		}
		_, err = q.integer("limit", 10, 1, 100)
		check(err)
		_, err = q.boolean("b", false)
		check(err)
		_, err = q.date("d")
		check(err)
		_, err = q.timestamp("ts")
		check(err)
		_, err = q.list("ids")
		check(err)
		_, err = q.enum("e", true, "A", "B")
		check(err)
	})
}
