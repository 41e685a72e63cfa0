package b3

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// withNUL returns data with the byte at the first occurrence of old on
// line (1-based) replaced by a NUL.
func withNUL(tb testing.TB, data []byte, line int, old string) []byte {
	tb.Helper()
	lines := bytes.SplitAfter(bytes.Clone(data), []byte("\n"))
	i := bytes.Index(lines[line-1], []byte(old))
	if i < 0 {
		tb.Fatalf("line %d lacks %q: %q", line, old, lines[line-1])
	}
	lines[line-1][i] = 0
	return bytes.Join(lines, nil)
}

// TestIndexCSVRefusesNUL: a NUL byte in a field of an index portfolio
// (the real IBOV of 2021-03-26, one byte changed) is an error wrapping
// datafile.ErrNUL naming file, line and column, in any field.
func TestIndexCSVRefusesNUL(t *testing.T) {
	real := readReal(t, fileIbov21)
	for _, c := range []struct {
		line int
		old  string
		want string
	}{
		{3, "AMBEV", "IBOVDia_26-03-21.csv:3:2: NUL byte"},      // the name, which no other check reads
		{4, "ON      NM", "IBOVDia_26-03-21.csv:4:3: NUL byte"}, // the type
		{2, "Tipo", "IBOVDia_26-03-21.csv:2:3: NUL byte"},       // the header
	} {
		_, err := ReadIndexCSV(bytes.NewReader(withNUL(t, real, c.line, c.old)), "IBOVDia_26-03-21.csv")
		if !errors.Is(err, datafile.ErrNUL) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("NUL in %q: %v, want %q", c.old, err, c.want)
		}
	}
}

// TestListingsRefusesNUL: a NUL byte in a listing export's row is an
// error naming file, line and column, or a skipped and counted row when
// lenient; in the header it is an error either way.
func TestListingsRefusesNUL(t *testing.T) {
	real := readReal(t, fileETF)
	clean, _, err := ReadListings(bytes.NewReader(real), "etfs.csv", true)
	if err != nil {
		t.Fatal(err)
	}
	row := withNUL(t, real, 2, "IAGRO")
	_, _, err = ReadListings(bytes.NewReader(row), "etfs.csv", false)
	if !errors.Is(err, datafile.ErrNUL) || !strings.HasPrefix(err.Error(), "etfs.csv:2:1: NUL byte") {
		t.Errorf("NUL in a row: %v", err)
	}
	ls, bad, err := ReadListings(bytes.NewReader(row), "etfs.csv", true)
	if err != nil || len(ls) != len(clean)-1 || bad != 1 {
		t.Errorf("lenient: %v, %d listings of %d, %d bad", err, len(ls), len(clean), bad)
	}
	_, _, err = ReadListings(bytes.NewReader(withNUL(t, real, 1, "Fundo")), "etfs.csv", true)
	if !errors.Is(err, datafile.ErrNUL) || !strings.HasPrefix(err.Error(), "etfs.csv:1:2: NUL byte") {
		t.Errorf("NUL in the header: %v", err)
	}
}
