package cvm

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// progressCall is one call of Options.Progress.
type progressCall struct {
	file        string
	rows, bytes int64
}

// recorder returns a Progress hook appending to calls.
func recorder(calls *[]progressCall) func(string, int64, int64) {
	return func(file string, rows, bytes int64) {
		*calls = append(*calls, progressCall{file, rows, bytes})
	}
}

// checkProgress checks the calls made for one file: a start call with 0
// rows, then a call every `every` rows, then the totals.
func checkProgress(t *testing.T, calls []progressCall, file string, every, rows, size int64) {
	t.Helper()
	want := 2 + rows/every
	if int64(len(calls)) != want {
		t.Fatalf("%s: %d calls, want %d: %v", file, len(calls), want, calls)
	}
	for i, c := range calls {
		if c.file != file {
			t.Fatalf("call %d names %q, want %q", i, c.file, file)
		}
		if i == len(calls)-1 {
			break
		}
		if c.rows != int64(i)*every {
			t.Errorf("call %d: %d rows, want %d", i, c.rows, int64(i)*every)
		}
		if i > 0 && (c.bytes <= calls[i-1].bytes || c.bytes > size) {
			t.Errorf("call %d: %d bytes after %d (file %d)", i, c.bytes, calls[i-1].bytes, size)
		}
	}
	if last := calls[len(calls)-1]; last.rows != rows || last.bytes != size {
		t.Errorf("final call %+v, want %d rows, %d bytes", last, rows, size)
	}
}

// TestProgressRealDFP reads a real DFP table with a Progress hook: it is
// called with increasing row and byte counts and ends with the file's
// totals; the hook does not change what is read.
func TestProgressRealDFP(t *testing.T) {
	const name = "dfp_cia_aberta_BPP_con_2023.csv"
	raw := readReal(t, "cvm-dfp/"+name+".zst")
	// Data rows: every line but the header (the file has no blank line).
	rows := int64(bytes.Count(raw, []byte("\n")) - 1)
	var calls []progressCall
	var st Stats
	opt := Options{Retrieved: retrieved, Stats: &st, Progress: recorder(&calls), ProgressEvery: 500}
	got := readDFP(t, name, opt)
	checkProgress(t, calls, name, 500, rows, int64(len(raw)))
	if int64(st.Rows) != rows {
		t.Errorf("Stats.Rows %d, progress %d", st.Rows, rows)
	}
	if want := readDFP(t, name, Options{Retrieved: retrieved}); !reflect.DeepEqual(got, want) {
		t.Error("reports differ with a Progress hook")
	}
}

// TestProgressZip checks that each archive member is reported under its
// archive:member name, with its own totals.
func TestProgressZip(t *testing.T) {
	members := map[string]string{"dfp_cia_aberta_parecer_2023.csv": header(t, "dfp_cia_aberta_parecer")}
	for _, n := range dfpFiles[:2] {
		members[n] = string(readReal(t, "cvm-dfp/"+n+".zst"))
	}
	p := buildZip(t, members)
	var calls []progressCall
	if _, err := ReadStatementsZip(p, Options{Retrieved: retrieved, Progress: recorder(&calls)}); err != nil {
		t.Fatal(err)
	}
	byFile := map[string][]progressCall{}
	var order []string
	for _, c := range calls {
		if byFile[c.file] == nil {
			order = append(order, c.file)
		}
		byFile[c.file] = append(byFile[c.file], c)
	}
	if len(order) != 2 {
		t.Fatalf("files reported %v, want the 2 statement tables", order)
	}
	for _, n := range dfpFiles[:2] {
		body := members[n]
		checkProgress(t, byFile[p+":"+n], p+":"+n, DefaultProgressEvery, int64(strings.Count(body, "\n")-1), int64(len(body)))
	}
}

// TestProgressDefaultEvery checks the default interval and that the
// Reader counts malformed rows, not blank lines, and the BOM's bytes.
func TestProgressDefaultEvery(t *testing.T) {
	var b strings.Builder
	b.WriteString("\xef\xbb\xbfA;B\r\n")
	n := int64(2*DefaultProgressEvery + 7)
	for i := int64(0); i < n; i++ {
		if i == 10 {
			b.WriteString("\r\n") // blank: not a row
			b.WriteString("1;2;3\r\n")
			continue
		}
		fmt.Fprintf(&b, "%d;x\r\n", i)
	}
	var calls []progressCall
	opt := Options{Progress: recorder(&calls)}
	rd, err := opt.Open(strings.NewReader(b.String()), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for {
		err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			bad++
		}
	}
	if err := rd.Next(); err != io.EOF {
		t.Fatalf("after the end: %v", err)
	}
	if bad != 1 {
		t.Errorf("%d malformed rows, want 1", bad)
	}
	checkProgress(t, calls, "t.csv", DefaultProgressEvery, n, int64(b.Len()))
	if calls[0].bytes != int64(len("\xef\xbb\xbfA;B\r\n")) {
		t.Errorf("start call at %d bytes, want the BOM and header", calls[0].bytes)
	}
	if rd.Rows() != n || rd.Bytes() != int64(b.Len()) {
		t.Errorf("Rows %d Bytes %d", rd.Rows(), rd.Bytes())
	}
}

// TestProgressOtherReaders checks that every table reader reports.
func TestProgressOtherReaders(t *testing.T) {
	cad := readReal(t, "cvm-cad/cad_cia_aberta.csv.zst")
	for _, c := range []struct {
		name string
		body []byte
		read func(io.Reader, string, Options) error
	}{
		{"cad_cia_aberta.csv", cad, func(r io.Reader, n string, o Options) error { _, _, err := ReadCad(r, n, o); return err }},
		{"dfp_cia_aberta_2023.csv", []byte(indexCSV(t, "dfp")), func(r io.Reader, n string, o Options) error { _, err := ReadDocIndex(r, n, o); return err }},
		{"dfp_cia_aberta_composicao_capital_2023.csv", []byte(capitalCSV(t)), func(r io.Reader, n string, o Options) error { _, err := ReadCapital(r, n, o); return err }},
		{"fca_cia_aberta_valor_mobiliario_2024.csv", valorMobiliarioCSV(t), func(r io.Reader, n string, o Options) error { _, err := ReadValorMobiliario(r, n, o); return err }},
		{"fca_cia_aberta_endereco_2024.csv", latin1(enderecoCSV(t)), func(r io.Reader, n string, o Options) error { _, err := ReadEndereco(r, n, o); return err }},
		{"fca_cia_aberta_geral_2024.csv", []byte(geralCSV(t)), func(r io.Reader, n string, o Options) error { _, err := ReadFCAGeral(r, n, o); return err }},
	} {
		var calls []progressCall
		var st Stats
		if err := c.read(bytes.NewReader(c.body), c.name, Options{Lenient: true, Stats: &st, Progress: recorder(&calls), ProgressEvery: 1000}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkProgress(t, calls, c.name, 1000, int64(st.Rows), int64(len(c.body)))
	}
}

// BenchmarkDFPProgress is BenchmarkDFP with a Progress hook at the
// default interval: the cost of progress reporting.
func BenchmarkDFPProgress(b *testing.B) {
	in := newRepeated(b, "cvm-dfp/dfp_cia_aberta_DRE_con_2022.csv.zst", 400)
	rows := in.nrows
	b.SetBytes(in.size)
	b.ReportAllocs()
	b.ResetTimer()
	calls := 0
	opt := Options{Progress: func(string, int64, int64) { calls++ }}
	for i := 0; i < b.N; i++ {
		in.reset()
		rs, err := ReadStatements(in, "dfp_cia_aberta_DRE_con_2022.csv", opt)
		if err != nil {
			b.Fatal(err)
		}
		sinkReports = rs
	}
	sinkReports = nil
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
}
