package datafile

import "testing"

func TestNULField(t *testing.T) {
	f := func(fields []string, want int) {
		t.Helper()
		if got := NULField(fields); got != want {
			t.Errorf("NULField(%q) = %d, want %d", fields, got, want)
		}
		b := make([][]byte, len(fields))
		for i, s := range fields {
			b[i] = []byte(s)
		}
		if got := NULField(b); got != want {
			t.Errorf("NULField(%q as bytes) = %d, want %d", fields, got, want)
		}
	}
	f(nil, -1)
	f([]string{"PETR4", "PETROBRAS", ""}, -1)
	f([]string{"\x00"}, 0)
	f([]string{"PETR4", "PETRO\x00BRAS", "x\x00"}, 1)
	f([]string{"a", "b", "c\x00"}, 2)
	f([]string{"São Paulo", "0,0"}, -1)
}
