package cvm

import (
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// rows reads every row of in with a Reader and returns them as strings.
func rows(tb testing.TB, in []byte) ([][]string, error) {
	tb.Helper()
	rd := NewReader(strings.NewReader(string(in)), "t.csv")
	if err := rd.ReadHeader(); err != nil {
		return nil, err
	}
	out := [][]string{rd.Header()}
	for {
		err := rd.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		var row []string
		for i := 0; i < rd.NumFields(); i++ {
			row = append(row, rd.String(i))
		}
		out = append(out, row)
	}
}

func TestReaderFormats(t *testing.T) {
	want := [][]string{{"A", "B"}, {"São", "1,5"}, {"x", ""}}
	cases := []struct {
		name string
		in   []byte
	}{
		{"utf8 LF", []byte("A;B\nSão;1,5\nx;\n")},
		{"utf8 CRLF", []byte("A;B\r\nSão;1,5\r\nx;\r\n")},
		{"utf8 BOM", []byte("\xef\xbb\xbfA;B\nSão;1,5\nx;\n")},
		{"latin1 CRLF", latin1("A;B\r\nSão;1,5\r\nx;\r\n")},
		{"no final newline", []byte("A;B\nSão;1,5\nx;")},
		{"blank lines", []byte("A;B\n\nSão;1,5\n\r\nx;\n\n")},
		{"quoted", []byte("A;B\n\"São\";\"1,5\"\nx;\"\"\n")},
		{"spaces trimmed", []byte(" A ; B\nSão ; 1,5\nx;  \n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := rows(t, c.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestReaderQuotes(t *testing.T) {
	f := func(in string, want [][]string) {
		t.Helper()
		got, err := rows(t, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
	// Quotes inside unquoted fields are literal (as in the registry).
	f("A;B\nSCN QD 3 BL \"C\" SOBRELOJA;x\n", [][]string{{"A", "B"}, {`SCN QD 3 BL "C" SOBRELOJA`, "x"}})
	// A leading quote that does not close the field is literal too.
	f("A;B\n\"BOM\" PRECO;x\n", [][]string{{"A", "B"}, {`"BOM" PRECO`, "x"}})
	// Quoted separators, escaped quotes and line breaks.
	f("A;B\n\"a;b\";\"say \"\"hi\"\"\"\n", [][]string{{"A", "B"}, {"a;b", `say "hi"`}})
	f("A;B\n\"line1\r\nline2\";x\ny;z\n", [][]string{{"A", "B"}, {"line1\r\nline2", "x"}, {"y", "z"}})
}

func TestReaderLatin1Switch(t *testing.T) {
	// A file whose first 64 KiB are ASCII but which later holds ISO-8859-1.
	var in []byte
	in = append(in, "A;B\n"...)
	for len(in) < 70000 {
		in = append(in, "abc;def\n"...)
	}
	in = append(in, latin1("Açúcar;Álcool\n")...)
	got, err := rows(t, in)
	if err != nil {
		t.Fatal(err)
	}
	last := got[len(got)-1]
	if last[0] != "Açúcar" || last[1] != "Álcool" {
		t.Errorf("got %q", last)
	}
}

func TestReaderErrors(t *testing.T) {
	t.Run("field count", func(t *testing.T) {
		_, err := rows(t, []byte("A;B;C\n1;2;3\n4;5\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != "C" || pe.File != "t.csv" {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "t.csv:3: column C:") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("too many fields", func(t *testing.T) {
		_, err := rows(t, []byte("A;B\n1;2;3\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("unterminated quote", func(t *testing.T) {
		_, err := rows(t, []byte("A;B\n1;\"open\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || pe.Column != "B" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("empty", func(t *testing.T) {
		_, err := rows(t, nil)
		if err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("missing column", func(t *testing.T) {
		rd := NewReader(strings.NewReader("A;B\n"), "m.csv")
		if err := rd.ReadHeader(); err != nil {
			t.Fatal(err)
		}
		if _, err := rd.Require("A"); err != nil {
			t.Fatal(err)
		}
		_, err := rd.Require("C", "C2")
		if !errors.Is(err, ErrMissingColumn) || !strings.Contains(err.Error(), "column C:") {
			t.Fatalf("got %v", err)
		}
		if i := rd.Col("X", "B"); i != 1 {
			t.Errorf("alias lookup = %d", i)
		}
	})
	t.Run("line numbers after multi-line record", func(t *testing.T) {
		_, err := rows(t, []byte("A;B\n\"x\ny\";1\n2\n"))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 4 {
			t.Fatalf("got %v", err)
		}
	})
}

func TestParseNum(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1977997.0000000000", 1977997, true},
		{"-693741.0000000000", -693741, true},
		{"0.003795", 0.003795, true},
		{"-4E-06", -4e-6, true},
		{"8.3E-05", 8.3e-5, true},
		{"1234,56", 1234.56, true},
		{"1.234,56", 1234.56, true},
		{"-1.234.567,5", -1234567.5, true},
		{"1.234.567", 1234567, true},
		{"1.234", 1.234, true},
		{"1.234.500", 1234500, true},
		{"1.200,500", 1200.5, true},
		{".0", 0, true},
		{"-.50", -0.5, true},
		{"100", 100, true},
		{"111551463.0000000000", 111551463, true},
		{"0.0000000000", 0, true},
		{" 42 ", 42, true},
		{"0", 0, true},
		{"1,2,3", 0, false},
		{"abc", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1e999", 0, false},
		{"0x10", 0, false},
		{"1_000", 0, false},
		{"--1", 0, false},
		// '.' groups thousands only before the decimal comma, by threes:
		// anything else is another convention or a typo, not a number.
		{"1,234.56", 0, false},  // English: would read 1.23456
		{"1.234,5.6", 0, false}, // would read 1234.56
		{"1.23,4", 0, false},    // would read 123.4
		{"1.2.3", 0, false},     // would read 123
		{"12.34.567", 0, false}, // would read 1234567
		{"1234.567.890", 0, false},
		{"-1.234,5", -1234.5, true},
		{"+1.234.567", 1234567, true},
	}
	for _, c := range cases {
		got, err := ParseNum([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if c.ok && math.Abs(float64(got)-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%q = %v, want %v", c.in, got, c.want)
		}
	}
	if n, err := ParseNum([]byte("  ")); err != nil || n.Valid() {
		t.Errorf("blank = %v, %v; want Null", n, err)
	}
}

func TestParseDate(t *testing.T) {
	cases := []struct {
		in   string
		want engine.Date
		ok   bool
	}{
		{"2023-03-31", engine.MakeDate(2023, 3, 31), true},
		{"31/03/2023", engine.MakeDate(2023, 3, 31), true},
		{"1923-05-23", engine.MakeDate(1923, 5, 23), true},
		{"2024-02-29", engine.MakeDate(2024, 2, 29), true},
		{"1970-01-01", 0, true},
		{"0001-01-01", engine.MakeDate(1, 1, 1), true},
		{"2023-03-31 10:22:00", engine.MakeDate(2023, 3, 31), true},
		{"", engine.NoDate, true},
		{"2023-02-29", 0, false},
		{"2023-13-01", 0, false},
		{"2023-00-10", 0, false},
		{"31/04/2023", 0, false},
		{"2023/03/31", 0, false},
		{"20230331", 0, false},
		{"2023-3-31", 0, false},
	}
	for _, c := range cases {
		got, err := ParseDate([]byte(c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if c.ok && got != c.want {
			t.Errorf("%q = %v, want %v", c.in, got, c.want)
		}
	}
	// civil agrees with the engine over a wide range.
	for d := engine.MakeDate(1899, 12, 1); d < engine.MakeDate(2101, 1, 1); d += 17 {
		s := d.String()
		got, err := ParseDate([]byte(s))
		if err != nil || got != d {
			t.Fatalf("%s: got %v, %v", s, got, err)
		}
	}
}

func TestParseInt(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"3", 3, true}, {"-12", -12, true}, {"1200.000", 1200, true}, {"1200.5", 0, false},
		{"", 0, false}, {"x", 0, false}, {"1234567890123456789", 0, false},
	}
	for _, c := range cases {
		got, err := ParseInt([]byte(c.in))
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("%q = %v, %v", c.in, got, err)
		}
	}
}

func TestDigitsAndCNPJ(t *testing.T) {
	if got := Digits([]byte("00.416.968/0001-01")); got != "00416968000101" {
		t.Errorf("Digits = %q", got)
	}
	if got, err := cnpj([]byte("416.968/0001-01")); err != nil || got != "00416968000101" {
		t.Errorf("cnpj = %q, %v", got, err)
	}
	if _, err := cnpj([]byte("123456789012345")); err == nil {
		t.Error("15 digits accepted")
	}
	if got := CVMCode([]byte("025496")); got != "25496" {
		t.Errorf("CVMCode = %q", got)
	}
}

// Open and EachRow: every row counts, a malformed row (from Next or from
// the row function) is skipped in Lenient mode and fails otherwise, and
// any other error stops the read.
func TestEachRow(t *testing.T) {
	errStop := errors.New("stop")
	for _, tc := range []struct {
		name    string
		in      string
		lenient bool
		rowErr  string // the row function fails on this field A
		other   bool   // ... with a plain error rather than a *ParseError
		want    string // the A fields read, joined
		err     string
		stats   Stats
	}{
		{name: "lenient", in: "A;B\n1;2\nbad\n3;4\n", lenient: true, want: "1,3",
			stats: Stats{Files: 1, Rows: 3, Skipped: 1}},
		{name: "strict", in: "A;B\n1;2\nbad\n3;4\n", want: "1", err: "l.csv:3: column B: row has 1 fields",
			stats: Stats{Files: 1, Rows: 2}},
		{name: "row error lenient", in: "A;B\n1;2\n3;4\n5;6\n", lenient: true, rowErr: "3", want: "1,5",
			stats: Stats{Files: 1, Rows: 3, Skipped: 1}},
		{name: "row error strict", in: "A;B\n1;2\n3;4\n5;6\n", rowErr: "3", want: "1", err: "l.csv:3: column A: bad 3",
			stats: Stats{Files: 1, Rows: 2}},
		{name: "other error", in: "A;B\n1;2\n3;4\n5;6\n", lenient: true, rowErr: "3", other: true, want: "1", err: "stop",
			stats: Stats{Files: 1, Rows: 2}},
		{name: "no header", in: "", lenient: true, err: "l.csv:1: empty file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var st Stats
			opt := Options{Lenient: tc.lenient, Stats: &st}
			var got []string
			rd, err := opt.Open(strings.NewReader(tc.in), "l.csv")
			if err == nil {
				err = opt.EachRow(rd, func() error {
					a := rd.String(0)
					if a == tc.rowErr {
						if tc.other {
							return errStop
						}
						return rd.Errorf(0, "bad %s", a)
					}
					got = append(got, a)
					return nil
				})
			}
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", err, tc.err)
			}
			if s := strings.Join(got, ","); s != tc.want {
				t.Errorf("rows %q, want %q", s, tc.want)
			}
			if st != tc.stats {
				t.Errorf("stats %+v, want %+v", st, tc.stats)
			}
		})
	}
}

func TestReaderDetectCutRune(t *testing.T) {
	// A first line longer than the detection window, with a UTF-8
	// character across the window's end: still UTF-8.
	col := strings.Repeat("x", 65536-2-1) + "é"
	in := "A;" + col + "\n1;2\n"
	rd := NewReader(strings.NewReader(in), "long.csv")
	if err := rd.ReadHeader(); err != nil {
		t.Fatal(err)
	}
	if rd.Latin1() || rd.Header()[1] != col {
		t.Errorf("latin1=%v, header cut or converted", rd.Latin1())
	}
}
