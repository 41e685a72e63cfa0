package cvm

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// TestReaderRefusesNUL: a NUL byte in any field of a CVM table (the
// registry here, the real file with one byte changed; UTF-8 or
// ISO-8859-1) is a *ParseError wrapping datafile.ErrNUL that names the
// file, the line and the column; in the header it is refused in lenient
// mode too, in a row lenient mode skips and counts the row.
func TestReaderRefusesNUL(t *testing.T) {
	real := readReal(t, cadFile)
	lines := bytes.SplitAfter(real, []byte("\n"))
	// Line 3's DENOM_SOCIAL (field 2) gets a NUL in place of its first
	// character; the file is ISO-8859-1.
	third := bytes.Clone(lines[2])
	third[bytes.IndexByte(third, ';')+1] = 0
	damaged := bytes.Join([][]byte{lines[0], lines[1], third, lines[3]}, nil)
	_, _, err := ReadCad(bytes.NewReader(damaged), "cad_cia_aberta.csv", Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, datafile.ErrNUL) || pe.Line != 3 || pe.Column != "DENOM_SOCIAL" ||
		!strings.HasPrefix(err.Error(), "cad_cia_aberta.csv:3: column DENOM_SOCIAL: field 2: NUL byte") {
		t.Fatalf("got %v, want a NUL error at cad_cia_aberta.csv:3 column DENOM_SOCIAL", err)
	}
	var st Stats
	comps, _, err := ReadCad(bytes.NewReader(damaged), "cad_cia_aberta.csv", Options{Lenient: true, Stats: &st})
	if err != nil || len(comps) != 2 || st.Skipped != 1 {
		t.Errorf("lenient: %v, %d companies, %+v", err, len(comps), st)
	}

	for _, c := range []struct {
		name, in string
		line     int
		col      string
	}{
		{"header", "A;B\x00\n1;2\n", 1, ""},
		{"first field", "A;B\n\x00;2\n", 2, "A"},
		{"quoted field over two lines", "A;B\n1;2\n3;\"x\ny\x00\"\n", 3, "B"},
		{"after a quoted field", "A;B;C\n\"a;b\";\x00;c\n", 2, "B"},
		{"utf-8", "A;B\nSão;Açú\x00car\n", 2, "B"},
	} {
		_, err := rows(t, []byte(c.in))
		if !errors.As(err, &pe) || !errors.Is(err, datafile.ErrNUL) || pe.Line != c.line || pe.Column != c.col {
			t.Errorf("%s: %v, want a NUL error on line %d column %q", c.name, err, c.line, c.col)
		}
	}
	if _, err := rows(t, latin1("A;B\nSão;Açúcar\n")); err != nil {
		t.Errorf("clean ISO-8859-1: %v", err)
	}
}
