package csvcell

import (
	"strings"
	"testing"
)

// A text cell a spreadsheet would take for a formula is sent with a
// leading apostrophe; numbers, and text that is a plain number, as given.
func TestSafe(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Safe(in); got != want {
			t.Errorf("Safe(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "")
	f("DIVIDEND", "DIVIDEND")
	f("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")")
	f("+55 11", "'+55 11")
	f("-A1", "'-A1")
	f("@SUM(A1)", "'@SUM(A1)")
	f("\tx", "'\tx")
	f("\rx", "'\rx")
	f("-1.5", "-1.5")
	f("+2", "+2")
	f("-1e-5", "-1e-5")
	f("-", "'-")
	f("-.", "'-.")
	f("-1e", "'-1e")
	f("-1.2.3", "'-1.2.3")
	f("a=1", "a=1")
	f("'=x", "'=x")
}

// Safe's answer is s, or s after an apostrophe; it never begins with
// a formula's first byte but for a plain number.
func FuzzSafe(f *testing.F) {
	for _, s := range []string{"", "=1+1", "-1.5", "+2", "@x", "-1e-5", "-1e", "\tx", "a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Safe(s)
		if got != s && got != "'"+s {
			t.Fatalf("Safe(%q) = %q", s, got)
		}
		if got != "" && strings.ContainsRune("=+-@\t\r", rune(got[0])) && !PlainNumber(got) {
			t.Fatalf("Safe(%q) = %q begins a formula", s, got)
		}
		if PlainNumber(s) && got != s {
			t.Fatalf("Safe(%q) = %q: a number changed", s, got)
		}
	})
}
