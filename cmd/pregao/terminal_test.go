package main

import (
	"bytes"
	"os"
	"testing"
)

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer is not a terminal")
	}
}

// TestProgressTo checks the terminal line: the previous line erased, the
// new one written as is (a "%" included), no line end.
func TestProgressTo(t *testing.T) {
	var b bytes.Buffer
	p := progressTo(&b)
	p("x 1")
	p("y 100%")
	if b.String() != "\r\033[Kx 1\r\033[Ky 100%" {
		t.Errorf("terminal lines %q", b.String())
	}
}
