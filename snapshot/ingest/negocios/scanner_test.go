package negocios

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// readAll returns every row of f, failing on an error.
func readAll(tb testing.TB, f *File) []Trade {
	tb.Helper()
	var out []Trade
	for f.Next() {
		out = append(out, *f.Trade())
	}
	if err := f.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func openFile(tb testing.TB, path string, opt Options) *File {
	tb.Helper()
	f, err := Open(path, opt)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

func realPath(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := datafile.RealPath(rel)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// at returns the unix milliseconds of local time hh:mm:ss.ms (UTC-3) on d.
func at(d engine.Date, hh, mm, ss, ms int) int64 {
	return UnixMilli(d, int64(((hh*60+mm)*60+ss)*1000+ms))
}

func day(y int, m time.Month, d int) engine.Date { return engine.MakeDate(y, m, d) }

// TestRealLayout2021 reads the excerpt of a 2020-2021 day file (English
// header, 9 columns): facts read from the file itself.
func TestRealLayout2021(t *testing.T) {
	f := openFile(t, realPath(t, "b3-negocios/renserrano__dados-intraday-python/teste-intraday.txt"), Options{})
	rows := readAll(t, f)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	d := day(2021, 2, 19)
	want := Trade{RefDate: d, TradeDate: d, Ticker: "TF693", Action: ActionNew, Session: SessionRegular, Price: 11000, Quantity: 10,
		Time: at(d, 2, 29, 46, 807), ID: 10}
	if rows[0] != want {
		t.Errorf("row 1 = %+v\nwant    %+v", rows[0], want)
	}
	if r := rows[5]; r.Ticker != "TF703" || r.ID != 20 || r.Time != at(d, 2, 29, 54, 307) {
		t.Errorf("row 6 = %+v", r)
	}
	if got := time.UnixMilli(rows[0].Time).UTC().Format(time.RFC3339Nano); got != "2021-02-19T05:29:46.807Z" {
		t.Errorf("row 1 time = %s", got)
	}
	if st := f.Stats(); st.Lines != 7 || st.Rows != 6 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestRealLayout2025 reads the excerpt of a 2025 NEGOCIOSAVISTA file
// (Portuguese header, 11 columns, participant codes).
func TestRealLayout2025(t *testing.T) {
	f := openFile(t, realPath(t, "b3-negocios/matheus-alvs01dev__b3-challenge/mock-csv.txt"), Options{})
	rows := readAll(t, f)
	d := day(2025, 6, 2)
	want := []Trade{
		{RefDate: d, TradeDate: d, Ticker: "TF583R", Session: 1, Price: 10000, Quantity: 10000, Time: at(d, 3, 5, 7, 886), ID: 10, Buyer: 100, Seller: 100},
		{RefDate: d, TradeDate: d, Ticker: "FRCQ25", Session: 1, Price: 5740, Quantity: 870, Time: at(d, 9, 0, 0, 644), ID: 10, Buyer: 127, Seller: 127},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v\nwant    %+v", i+1, rows[i], want[i])
		}
	}
}

// TestLayout2026 reads the hand-made 2026 equities file: byte order mark,
// metadata line, CRLF, empty participants, a cancellation and an
// after-market trade.
func TestLayout2026(t *testing.T) {
	f := openFile(t, "testdata/NEGOCIOSAVISTA_RV_2026.txt", Options{})
	rows := readAll(t, f)
	if len(rows) != 6 {
		t.Fatalf("%d rows, want 6", len(rows))
	}
	d := day(2026, 11, 19)
	if r := rows[0]; r != (Trade{RefDate: d, TradeDate: d, Ticker: "PLAE3", Session: 1, Price: 23480, Quantity: 100,
		Time: at(d, 10, 0, 0, 123), ID: 10, Buyer: 3, Seller: 8}) {
		t.Errorf("row 1 = %+v", r)
	}
	if r := rows[1]; r.Buyer != 0 || r.Seller != 0 || r.Price != 23500 {
		t.Errorf("row 2 = %+v", r)
	}
	if r := rows[4]; r.Action != ActionCancel || r.ID != 20 || r.Time != at(d, 11, 30, 0, 0) {
		t.Errorf("row 5 = %+v", r)
	}
	if r := rows[5]; r.Session != SessionAfterMarket || r.Time != at(d, 17, 30, 10, 500) {
		t.Errorf("row 6 = %+v", r)
	}
	if h := f.Header(); len(h) != 11 || h[0] != "DataReferencia" {
		t.Errorf("header %q", h)
	}
	if st := f.Stats(); st.Lines != 8 || st.Rows != 6 {
		t.Errorf("stats %+v", st)
	}
}

// TestLayout2026Derivatives maps reordered columns by name, ignores
// TipoDoCanal and keeps negative prices and the trade date.
func TestLayout2026Derivatives(t *testing.T) {
	rows := readAll(t, openFile(t, "testdata/NEGOCIOSAVISTA_DRV_2026.txt", Options{}))
	d := day(2026, 11, 19)
	want := []Trade{
		{RefDate: d, TradeDate: d, Ticker: "DI1F27", Session: 1, Price: -35, Quantity: 10, Time: at(d, 9, 15, 0, 1), ID: 10},
		{RefDate: d + 1, TradeDate: d + 1, Ticker: "WDOZ26", Session: 1, Price: 5400500, Quantity: 1, Time: at(d+1, 23, 59, 59, 999), ID: 10},
	}
	for i := range want {
		if i >= len(rows) || rows[i] != want[i] {
			t.Fatalf("rows = %+v\nwant %+v", rows, want)
		}
	}
}

// TestLatin1 decodes ISO-8859-1 text.
func TestLatin1(t *testing.T) {
	rows := readAll(t, openFile(t, "testdata/latin1_2024.txt", Options{}))
	if len(rows) != 1 || rows[0].Ticker != "AÇÃO3" || rows[0].Price != 1500 {
		t.Fatalf("rows = %+v", rows)
	}
}

// TestTimestampFromTradeDate builds the time from DataNegocio, not
// DataReferencia.
func TestTimestampFromTradeDate(t *testing.T) {
	in := "DataReferencia;CodigoInstrumento;AcaoAtualizacao;PrecoNegocio;QuantidadeNegociada;HoraFechamento;CodigoIdentificadorNegocio;TipoSessaoPregao;DataNegocio\n" +
		"2025-06-02;TF583R;0;10,000;1;010000000;10;1;2025-06-03\n"
	f, err := OpenBytes([]byte(in), "x.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := readAll(t, f)
	if rows[0].RefDate != day(2025, 6, 2) || rows[0].Time != at(day(2025, 6, 3), 1, 0, 0, 0) {
		t.Errorf("row = %+v", rows[0])
	}
}

const hdr = "RptDt;TckrSymb;UpdActn;GrssTradAmt;TradQty;NtryTm;TradId;TradgSsnId;TradDt\n"

// TestRowErrors: every bad field names the file, the line, the field as
// the header spells it and the text; strict mode stops there, lenient
// mode counts and goes on.
func TestRowErrors(t *testing.T) {
	good := "2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19"
	cases := []struct{ row, want string }{
		{"2021-02-30;ABCD3;0;11,000;10;102946807;10;1;2021-02-19", `x.txt:3: RptDt "2021-02-30": no such day`},
		{"2021-02-19;ABCD3;0;11,000;10;102946807;10;1;19/02/2021", `x.txt:3: TradDt "19/02/2021": want YYYY-MM-DD`},
		{"2021-02-19;;0;11,000;10;102946807;10;1;2021-02-19", `x.txt:3: TckrSymb: empty`},
		{"2021-02-19;AB\x01D;0;11,000;10;102946807;10;1;2021-02-19", `x.txt:3: TckrSymb "AB\x01D": control character`},
		{"2021-02-19;ABCD3;x;11,000;10;102946807;10;1;2021-02-19", `x.txt:3: UpdActn "x": want digits`},
		{"2021-02-19;ABCD3;0;11,000;10;102946807;10;999;2021-02-19", `x.txt:3: TradgSsnId "999": above 255`},
		{"2021-02-19;ABCD3;0;11,0001;10;102946807;10;1;2021-02-19", `x.txt:3: GrssTradAmt "11,0001": more than 3 decimals`},
		{"2021-02-19;ABCD3;0;11,;10;102946807;10;1;2021-02-19", `x.txt:3: GrssTradAmt "11,": want digits after the decimal comma`},
		{"2021-02-19;ABCD3;0;1.100,00;10;102946807;10;1;2021-02-19", `x.txt:3: GrssTradAmt "1.100,00": want a decimal number: want digits`},
		{"2021-02-19;ABCD3;0;11,000;-10;102946807;10;1;2021-02-19", `x.txt:3: TradQty "-10": want digits`},
		{"2021-02-19;ABCD3;0;11,000;10;246000000;10;1;2021-02-19", `x.txt:3: NtryTm "246000000": want HHMMSSfff, a time of day`},
		{"2021-02-19;ABCD3;0;11,000;10;1029468070;10;1;2021-02-19", `x.txt:3: NtryTm "1029468070": want HHMMSSfff`},
		{"2021-02-19;ABCD3;0;11,000;10;102946807;;1;2021-02-19", `x.txt:3: TradId: empty`},
		{"2021-02-19;ABCD3;0;11,000;10;102946807;10;1", `x.txt:3: 8 fields, want 9 (the header's)`},
		{"2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19;x", `x.txt:3: 10 fields, want 9 (the header's)`},
	}
	for _, c := range cases {
		in := hdr + good + "\n" + c.row + "\n" + good + "\n"
		f, err := OpenBytes([]byte(in), "x.txt", Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for f.Next() {
			n++
		}
		var le *LineError
		if err := f.Err(); err == nil || err.Error() != c.want || !errors.As(err, &le) || n != 1 {
			t.Errorf("%q: %d rows, err %v\nwant %s", c.row, n, err, c.want)
		}
		f, _ = OpenBytes([]byte(in), "x.txt", Options{Lenient: true})
		n = 0
		for f.Next() {
			n++
		}
		if st := f.Stats(); f.Err() != nil || n != 2 || st.Skipped != 1 || len(st.Errors) != 1 || st.Errors[0].Error() != c.want {
			t.Errorf("lenient %q: %d rows, err %v, stats %+v", c.row, n, f.Err(), st)
		}
	}
}

// TestTrailingEmptyField accepts a trailing separator.
func TestTrailingEmptyField(t *testing.T) {
	f, _ := OpenBytes([]byte(hdr+"2021-02-19;ABCD3;0;11;10;102946807;10;1;2021-02-19;\r\n\r\n"), "x.txt", Options{})
	if rows := readAll(t, f); len(rows) != 1 || rows[0].Price != 11000 {
		t.Fatalf("rows %+v", rows)
	}
}

// TestLenientKeepsFirstErrors keeps MaxErrors errors and counts the rest.
func TestLenientKeepsFirstErrors(t *testing.T) {
	in := hdr + strings.Repeat("bad\n", 25) + "2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"
	f, _ := OpenBytes([]byte(in), "x.txt", Options{Lenient: true})
	rows := readAll(t, f)
	if st := f.Stats(); len(rows) != 1 || st.Skipped != 25 || len(st.Errors) != MaxErrors {
		t.Errorf("%d rows, stats %+v", len(rows), st)
	}
}

// TestLongLine: a line longer than the buffer is one malformed row.
func TestLongLine(t *testing.T) {
	in := hdr + strings.Repeat("x", maxLine+10) + "\n2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"
	f, _ := OpenBytes([]byte(in), "x.txt", Options{Lenient: true})
	if rows := readAll(t, f); len(rows) != 1 || f.Stats().Skipped != 1 {
		t.Errorf("%d rows, stats %+v", len(rows), f.Stats())
	}
	f, _ = OpenBytes([]byte(in), "x.txt", Options{})
	for f.Next() {
	}
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), "x.txt:2: line longer than") {
		t.Errorf("strict: %v", err)
	}
}

// TestHeaderErrors: no header, or a missing column, is fatal in both
// modes and names the column.
func TestHeaderErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "no header line"},
		{"1\n2\n3\n4\n5\n6\n" + hdr, "no header line"},
		{"RptDt;TckrSymb;UpdActn;GrssTradAmt;TradQty;NtryTm;TradId;TradDt\n", "no column TipoSessaoPregao (want one of TradgSsnId, TipoSessaoPregao)"},
	} {
		for _, lenient := range []bool{false, true} {
			_, err := OpenBytes([]byte(c.in), "x.txt", Options{Lenient: lenient})
			if !errors.Is(err, ErrHeader) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q: %v, want %s", c.in, err, c.want)
			}
		}
	}
	// Five lines of preamble are skipped.
	f, err := OpenBytes([]byte("1\n2\n3\n4\n5\n"+hdr+"2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"), "x.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rows := readAll(t, f); len(rows) != 1 {
		t.Errorf("%d rows", len(rows))
	}
}

// TestParsePrice covers the decimal forms.
func TestParsePrice(t *testing.T) {
	f := func(in string, want int64, ok bool) {
		t.Helper()
		got, err := ParsePrice([]byte(in))
		if (err == nil) != ok || ok && got != want {
			t.Errorf("ParsePrice(%q) = %d, %v; want %d ok=%v", in, got, err, want, ok)
		}
	}
	f("23,480", 23480, true)
	f("23,48", 23480, true)
	f("23.4", 23400, true)
	f("23", 23000, true)
	f("0,001", 1, true)
	f("-0,035", -35, true)
	f("23,4800", 23480, true)
	f("23,4801", 0, false)
	f("", 0, false)
	f("-", 0, false)
	f(",5", 0, false)
	f("1e3", 0, false)
	f("1000000000", 1000000000000, true)
	f("1000000001", 0, false)
}

// TestFormatPrice is ParsePrice's inverse.
func TestFormatPrice(t *testing.T) {
	for _, p := range []int64{0, 1, 10, 999, 1000, 23480, -35, -1000, 1000000000000} {
		b := FormatPrice(nil, p)
		if q, err := ParsePrice(b); err != nil || q != p {
			t.Errorf("%d -> %q -> %d, %v", p, b, q, err)
		}
	}
	if got := string(FormatPrice(nil, -35)); got != "-0,035" {
		t.Errorf("FormatPrice(-35) = %q", got)
	}
}

func zipOf(tb testing.TB, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			tb.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenZip reads the one .txt of an archive, by content whatever the
// name, and refuses archives with none or several.
func TestOpenZip(t *testing.T) {
	body := hdr + "2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"
	dir := t.TempDir()
	p := filepath.Join(dir, "TradeIntraday_ABCD3_20210219_1.bin")
	os.WriteFile(p, zipOf(t, map[string]string{"dir/": "", "TradeIntraday_ABCD3_20210219_1.txt": body}), 0o644)
	f := openFile(t, p, Options{})
	if rows := readAll(t, f); len(rows) != 1 || rows[0].Ticker != "ABCD3" {
		t.Errorf("rows %+v", rows)
	}
	if !strings.HasSuffix(f.Name, ".bin!TradeIntraday_ABCD3_20210219_1.txt") {
		t.Errorf("name %s", f.Name)
	}
	if _, err := OpenBytes(zipOf(t, map[string]string{"a.txt": body, "b.TXT": body}), "two.zip", Options{}); err == nil || !strings.Contains(err.Error(), "want one .txt") {
		t.Errorf("two texts: %v", err)
	}
	if _, err := OpenBytes(zipOf(t, map[string]string{"a.csv": body}), "none.zip", Options{}); !errors.Is(err, errNoText) {
		t.Errorf("no text: %v", err)
	}
	if _, err := OpenBytes([]byte("PK\x03\x04garbage"), "bad.zip", Options{}); err == nil {
		t.Error("corrupt zip opened")
	}
	// Errors inside name the archive and the text.
	bad := zipOf(t, map[string]string{"d.txt": hdr + "x\n"})
	f, _ = OpenBytes(bad, "d.zip", Options{})
	for f.Next() {
	}
	if err := f.Err(); err == nil || !strings.HasPrefix(err.Error(), "d.zip!d.txt:2: ") {
		t.Errorf("error %v", err)
	}
}

// TestOpenGzip reads a compressed text.
func TestOpenGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(hdr + "2021-02-19;ABCD3;0;11,000;10;102946807;10;1;2021-02-19\n"))
	zw.Close()
	p := filepath.Join(t.TempDir(), "x.txt.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	if rows := readAll(t, openFile(t, p, Options{})); len(rows) != 1 {
		t.Errorf("%d rows", len(rows))
	}
}

// TestScannerStreams: memory does not grow with the file.
func TestScannerStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	row := []byte("2026-11-19;PLAE3;0;23,480;100;100000123;10;1;2026-11-19;3;8\n")
	const n = 200000
	r := &repeatReader{head: []byte(Header2026 + "\n"), row: row, n: n}
	s, err := NewScanner(r, "big.txt", Options{})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() {
		for s.Next() {
		}
	})
	if s.Err() != nil || s.Stats().Rows != n {
		t.Fatalf("%v, %d rows", s.Err(), s.Stats().Rows)
	}
	if allocs > 100 {
		t.Errorf("%v allocations for %d rows: rows must not allocate", allocs, n)
	}
}

// repeatReader yields head, then row n times.
type repeatReader struct {
	head, row []byte
	n         int
	off       int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if len(r.head) > 0 {
		k := copy(p, r.head)
		r.head = r.head[k:]
		return k, nil
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.row[r.off:])
	r.off += k
	if r.off == len(r.row) {
		r.off = 0
		r.n--
	}
	return k, nil
}

// BenchmarkScan reads 200,000 rows of the 2026 layout from memory, in
// rows per second.
func BenchmarkScan(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	const n = 200000
	for i := 0; i < n; i++ {
		t := Trade{RefDate: d0, TradeDate: d0, Ticker: fmt.Sprintf("T%03d3", i%500), Session: 1, Price: 10000 + int64(i%977),
			Quantity: 100, Time: UnixMilli(d0, 36000000+int64(i)*100), ID: int64(10 * (i/500 + 1)), Buyer: 3, Seller: 8}
		w.Write(&t)
	}
	w.Flush()
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		s, err := NewScanner(bytes.NewReader(buf.Bytes()), "bench.txt", Options{})
		if err != nil {
			b.Fatal(err)
		}
		for s.Next() {
		}
		if s.Err() != nil || s.Stats().Rows != n {
			b.Fatal(s.Err())
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "rows/s")
}
