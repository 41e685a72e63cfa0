package flatfiles

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// smallSize is a demo market with every dataset: two years of daily
// bars, two sessions of 1-minute bars, reports, funds and events.
var smallSize = demo.Size{Companies: 8, SponsoredBDRs: 1, UnsponsoredBDRs: 1, FIIs: 3, ETFs: 1,
	IntradayTickers: 3, IntradaySessions: 2, ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2025}

var (
	smallOnce sync.Once
	smallDS   *engine.Dataset
	smallErr  error
)

// small returns the Dataset of smallSize, built once.
func small(tb testing.TB) *engine.Dataset {
	tb.Helper()
	smallOnce.Do(func() {
		u := demo.GenerateSize(3, smallSize)
		d, err := ratios.Derive(u)
		if err != nil {
			smallErr = err
			return
		}
		u.Derived = d
		smallDS, smallErr = engine.Build(u)
	})
	if smallErr != nil {
		tb.Fatal(smallErr)
	}
	return smallDS
}

func mustExport(tb testing.TB, ds *engine.Dataset, dir string, opt Options) *Manifest {
	tb.Helper()
	opt.NoSync = true
	m, err := Export(context.Background(), ds, dir, opt)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// table is a file read back: its header and its rows, every cell as the
// API would write it ("" for null).
type table struct {
	header []string
	rows   [][]string
	types  []arrow.DataType // Parquet only
}

// readParquet reads a Parquet file back with Arrow and formats every
// cell: decimals as the double c / 10^s the docs promise, in the API's
// shortest form.
func readParquet(tb testing.TB, path string) table {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	pf, err := pqfile.NewParquetReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		tb.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	defer tbl.Release()
	var t table
	n := int(tbl.NumRows())
	t.rows = make([][]string, n)
	for i := range t.rows {
		t.rows[i] = make([]string, tbl.NumCols())
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		t.header = append(t.header, col.Name())
		t.types = append(t.types, col.DataType())
		row := 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				t.rows[row][c] = cell(tb, chunk, i)
				row++
			}
		}
	}
	return t
}

func cell(tb testing.TB, a arrow.Array, i int) string {
	if a.IsNull(i) {
		return ""
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Date32:
		return engine.Date(a.Value(i)).String()
	case *array.Timestamp:
		return time.UnixMicro(int64(a.Value(i))).UTC().Format(time.RFC3339Nano)
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'f', -1, 64)
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i))
	case *array.Decimal128:
		s := a.DataType().(*arrow.Decimal128Type).Scale
		v := a.Value(i)
		if v.HighBits() != 0 && v.HighBits() != -1 {
			tb.Fatalf("decimal %v beyond 64 bits", v)
		}
		return strconv.FormatFloat(float64(int64(v.LowBits()))/pow10[s], 'f', -1, 64)
	}
	tb.Fatalf("unexpected column type %s", a.DataType())
	return ""
}

func readCSV(tb testing.TB, path string) table {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	// No name and no time (MTIME 0): the same rows, the same bytes, and
	// gunzip -N stamps nothing.
	if !zr.Header.ModTime.IsZero() || zr.Header.Name != "" {
		tb.Errorf("%s: gzip header name %q, time %v; want none", path, zr.Header.Name, zr.Header.ModTime)
	}
	recs, err := csv.NewReader(zr).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	return table{header: recs[0], rows: recs[1:]}
}

// TestExportParquetEqualsCSV exports every dataset of the small market
// and reads every file back: the Parquet and CSV forms hold the same
// rows cell by cell, in the schema's columns and sort order (the one
// the footer records), as many as the manifest says, with its date
// range.
func TestExportParquetEqualsCSV(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	m := mustExport(t, ds, dir, Options{})
	seen := map[string]int{}
	for _, e := range m.Files {
		seen[e.Dataset]++
	}
	for _, d := range ourDatasets {
		if seen[d.name] == 0 {
			t.Errorf("dataset %s: no file (the small market should have every dataset)", d.name)
		}
	}
	for i := 0; i+1 < len(m.Files); i += 2 {
		pe, ce := m.Files[i], m.Files[i+1]
		if pe.Format != Parquet || ce.Format != CSV || strings.TrimSuffix(pe.File, ".parquet") != strings.TrimSuffix(ce.File, ".csv.gz") {
			t.Fatalf("files %d and %d are %s and %s, want one file's Parquet then CSV", i, i+1, pe.File, ce.File)
		}
		set := findSet(t, pe.Dataset)
		pq, cs := readParquet(t, filepath.Join(dir, pe.File)), readCSV(t, filepath.Join(dir, ce.File))
		var names []string
		for _, c := range set.schema.cols {
			names = append(names, c.name)
		}
		if !slices.Equal(pq.header, names) || !slices.Equal(cs.header, names) {
			t.Errorf("%s: columns %v (Parquet) and %v (CSV), want %v", pe.File, pq.header, cs.header, names)
		}
		if int64(len(pq.rows)) != pe.Rows || int64(len(cs.rows)) != ce.Rows || pe.Rows == 0 {
			t.Errorf("%s: %d and %d rows, manifest %d and %d", pe.File, len(pq.rows), len(cs.rows), pe.Rows, ce.Rows)
		}
		for r := range min(len(pq.rows), len(cs.rows)) {
			if !slices.Equal(pq.rows[r], cs.rows[r]) {
				t.Fatalf("%s row %d:\nParquet %q\nCSV     %q", pe.File, r, pq.rows[r], cs.rows[r])
			}
		}
		checkSorted(t, pe.File, &set.schema, cs)
		checkSortingColumns(t, filepath.Join(dir, pe.File), &set.schema)
		checkRange(t, pe, &set.schema, cs)
		if pe.MinDate != ce.MinDate || pe.MaxDate != ce.MaxDate {
			t.Errorf("%s: date ranges differ between formats", pe.File)
		}
	}
}

func findSet(tb testing.TB, name string) *dataset {
	for _, d := range ourDatasets {
		if d.name == name {
			return d
		}
	}
	tb.Fatalf("no dataset %s", name)
	return nil
}

// checkSorted checks that the rows are in the schema's sort order
// (numeric columns as numbers, the rest as text: dates and instants
// in their ISO forms sort as text; a null first).
func checkSorted(tb testing.TB, name string, s *schema, t table) {
	tb.Helper()
	var keys []int
	for _, k := range s.sortBy {
		keys = append(keys, s.index(k))
	}
	compare := func(k int, a, b string) int {
		switch s.cols[k].typ {
		case tInt, tCount, tFloat, tDecimal:
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			return cmp.Compare(x, y)
		}
		return strings.Compare(a, b)
	}
	for r := 1; r < len(t.rows); r++ {
		for _, k := range keys {
			c := compare(k, t.rows[r-1][k], t.rows[r][k])
			if c < 0 {
				break
			}
			if c > 0 {
				tb.Errorf("%s: row %d %q comes before row %d %q, out of the order %v", name, r-1, t.rows[r-1], r, t.rows[r], s.sortBy)
				return
			}
		}
	}
}

// checkRange checks the manifest's date range against the rows.
func checkRange(tb testing.TB, e Entry, s *schema, t table) {
	tb.Helper()
	lo, hi := "", ""
	if c := s.dateCol(); c >= 0 {
		for _, row := range t.rows {
			v := row[c]
			if len(v) > 10 {
				v = v[:10]
			}
			if v != "" && (lo == "" || v < lo) {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
	}
	if e.MinDate.String() != lo || e.MaxDate.String() != hi {
		tb.Errorf("%s: manifest range %s..%s, rows %s..%s", e.File, e.MinDate, e.MaxDate, lo, hi)
	}
}

func num(v engine.Num) string {
	if !v.Valid() {
		return ""
	}
	return strconv.FormatFloat(float64(v), 'f', -1, 64)
}

// TestDailyBarsAndTotalReturnAreTheEngines checks every daily bar and
// every total-return point of every ticker in the files against the
// engine's answers for the whole history (the API's), number for number.
func TestDailyBarsAndTotalReturnAreTheEngines(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	m := mustExport(t, ds, dir, Options{Datasets: []string{"daily_bars", "total_return"}, Formats: []string{Parquet}})
	daily := map[string][][]string{}
	tr := map[string][][]string{}
	for _, e := range m.Files {
		tb := readParquet(t, filepath.Join(dir, e.File))
		for _, row := range tb.rows {
			if e.Dataset == "daily_bars" {
				daily[row[0]] = append(daily[row[0]], row)
			} else {
				tr[row[0]] = append(tr[row[0]], row)
			}
		}
		for i, typ := range tb.types {
			if strings.HasPrefix(tb.header[i], "open") || tb.header[i] == "close" {
				if _, ok := typ.(*arrow.Decimal128Type); !ok {
					t.Errorf("%s: column %s is %s, want a decimal (whole cents)", e.File, tb.header[i], typ)
				}
			}
		}
	}
	as := ds.Assets()
	n := 0
	for i := range as {
		a := &as[i]
		if a.StockType == engine.ClassMacro {
			continue
		}
		bars := a.AppendDaily(nil, 0, a.Daily.Len(), false)
		if len(daily[a.Ticker]) != len(bars) {
			t.Errorf("%s: %d daily rows, the engine %d", a.Ticker, len(daily[a.Ticker]), len(bars))
			continue
		}
		for k, b := range bars {
			want := []string{a.Ticker, b.Date.String(), num(b.Open), num(b.High), num(b.Low), num(b.Close), num(b.Volume), num(b.Quantity),
				strconv.FormatInt(b.Trades, 10), num(b.Factor)}
			if got := daily[a.Ticker][k]; !slices.Equal(got, want) {
				t.Fatalf("%s daily row %d: %q, want %q", a.Ticker, k, got, want)
			}
			// The adjusted price is one division, as the API's.
			adj := a.AppendDaily(nil, k, k+1, true)[0]
			if got, _ := strconv.ParseFloat(daily[a.Ticker][k][5], 64); b.Close.Valid() && math.Float64bits(got/float64(b.Factor)) != math.Float64bits(float64(adj.Close)) {
				t.Fatalf("%s %s: close %v / factor %v = %v, the engine's adjusted close %v", a.Ticker, b.Date, got, b.Factor, got/float64(b.Factor), adj.Close)
			}
		}
		g := ds.AppendTotalReturn(nil, a, bars, false)
		nt := ds.AppendTotalReturn(nil, a, bars, true)
		if len(tr[a.Ticker]) != len(g) {
			t.Errorf("%s: %d total-return rows, the engine %d", a.Ticker, len(tr[a.Ticker]), len(g))
			continue
		}
		for k := range g {
			want := []string{a.Ticker, g[k].Date.String(), num(g[k].Close), num(g[k].Cash), num(nt[k].Cash), num(g[k].Index), num(nt[k].Index)}
			if got := tr[a.Ticker][k]; !slices.Equal(got, want) {
				t.Fatalf("%s total-return row %d: %q, want %q", a.Ticker, k, got, want)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("no ticker checked")
	}
}

// TestParquetLayout reads the footer of the small market's daily bars:
// each column has the encoding and codec parquetProps gives its type
// (docs/files.md; one DuckDB reads), and every row group's ticker and
// date statistics are the range of its rows, what a reader skips row
// groups by.
func TestParquetLayout(t *testing.T) {
	dir := t.TempDir()
	m := mustExport(t, small(t), dir, Options{Datasets: []string{"daily_bars"}, Formats: []string{Parquet}})
	want := map[string]struct {
		enc   parquet.Encoding
		codec compress.Compression
	}{
		"ticker":            {parquet.Encodings.RLEDict, compress.Codecs.Zstd},
		"date":              {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"open":              {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"high":              {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"low":               {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"close":             {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"volume":            {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"quantity":          {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"trades":            {parquet.Encodings.DeltaBinaryPacked, compress.Codecs.Zstd},
		"adjustment_factor": {parquet.Encodings.ByteStreamSplit, compress.Codecs.Zstd},
	}
	for _, e := range m.Files {
		path := filepath.Join(dir, e.File)
		rows := readParquet(t, path).rows
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		pf, err := pqfile.NewParquetReader(f)
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		first := 0
		for g := range md.NumRowGroups() {
			rg := md.RowGroup(g)
			n := int(rg.NumRows())
			if n == 0 || n > rowGroupRows {
				t.Errorf("%s: row group %d has %d rows, want 1..%d", e.File, g, n, rowGroupRows)
			}
			for c := range rg.NumColumns() {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				name := md.Schema.Column(c).Name()
				w, ok := want[name]
				if !ok {
					t.Fatalf("%s: unexpected column %s", e.File, name)
				}
				if !slices.Contains(cc.Encodings(), w.enc) || cc.Compression() != w.codec {
					t.Errorf("%s: %s is %v, %v; want %v, %v", e.File, name, cc.Encodings(), cc.Compression(), w.enc, w.codec)
				}
				st, err := cc.Statistics()
				if err != nil || st == nil || !st.HasMinMax() {
					t.Errorf("%s: row group %d: %s has no min/max statistics (%v)", e.File, g, name, err)
					continue
				}
				group := rows[first : first+n]
				switch st := st.(type) {
				case *metadata.ByteArrayStatistics: // ticker: rows are sorted by it
					if lo, hi := string(st.Min()), string(st.Max()); lo != group[0][c] || hi != group[n-1][c] {
						t.Errorf("%s: row group %d: ticker statistics %s..%s, rows %s..%s", e.File, g, lo, hi, group[0][c], group[n-1][c])
					}
				case *metadata.Int32Statistics: // date
					lo, hi := group[0][c], group[0][c]
					for _, r := range group {
						lo, hi = min(lo, r[c]), max(hi, r[c])
					}
					if a, b := engine.Date(st.Min()).String(), engine.Date(st.Max()).String(); a != lo || b != hi {
						t.Errorf("%s: row group %d: date statistics %s..%s, rows %s..%s", e.File, g, a, b, lo, hi)
					}
				}
			}
			first += n
		}
		if first != len(rows) {
			t.Errorf("%s: row groups hold %d rows, the file %d", e.File, first, len(rows))
		}
	}
}

// TestParquetIsArrows holds the Parquet writer, parquet/file's column
// writers fed by rows, to what Arrow's pqarrow writes from the same
// table with the same properties (the writer the files were first
// written with): every file of the small market, byte for byte.
func TestParquetIsArrows(t *testing.T) {
	dir := t.TempDir()
	m := mustExport(t, small(t), dir, Options{Formats: []string{Parquet}})
	for _, e := range m.Files {
		d := ourDatasets[slices.IndexFunc(ourDatasets, func(d *dataset) bool { return d.name == e.Dataset })]
		got, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		pf, err := pqfile.NewParquetReader(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The schema as written: without the field ids the reader adds.
		fields := tbl.Schema().Fields()
		cols := make([]arrow.Column, len(fields))
		for i := range fields {
			fields[i].Metadata = arrow.Metadata{}
			cols[i] = *arrow.NewColumn(fields[i], tbl.Column(i).Data())
		}
		sc := arrow.NewSchema(fields, nil)
		written := array.NewTable(sc, cols, tbl.NumRows())
		r := &rows{s: &d.schema}
		var want bytes.Buffer
		fw, err := pqarrow.NewFileWriter(sc, &want, r.parquetProps(sc), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		if err := fw.WriteTable(written, rowGroupRows); err != nil {
			t.Fatal(err)
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		written.Release()
		tbl.Release()
		pf.Close()
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: %d bytes, pqarrow writes %d bytes", e.File, len(got), want.Len())
		}
	}
}

// TestExportIsDeterministic exports the same Dataset twice: the same
// bytes, the same manifest.
func TestExportIsDeterministic(t *testing.T) {
	ds := small(t)
	a, b := t.TempDir(), t.TempDir()
	ma := mustExport(t, ds, a, Options{Snapshot: "s1"})
	mb := mustExport(t, ds, b, Options{Snapshot: "s1"})
	if !slices.Equal(ma.Files, mb.Files) {
		t.Fatalf("manifests differ:\n%v\n%v", ma.Files, mb.Files)
	}
	for _, e := range ma.Files {
		x, _ := os.ReadFile(filepath.Join(a, e.File))
		y, _ := os.ReadFile(filepath.Join(b, e.File))
		if !bytes.Equal(x, y) || int64(len(x)) != e.Bytes {
			t.Errorf("%s: %d and %d bytes, manifest %d", e.File, len(x), len(y), e.Bytes)
		}
	}
	x, _ := os.ReadFile(filepath.Join(a, ManifestName))
	y, _ := os.ReadFile(filepath.Join(b, ManifestName))
	if !bytes.Equal(x, y) {
		t.Error("manifest.json differs")
	}
	got, err := ReadManifest(a)
	if err != nil || !slices.Equal(got.Files, ma.Files) {
		t.Errorf("ReadManifest: %v", err)
	}
}

// TestExportThrough cuts the priced datasets at a session and leaves
// the others whole.
func TestExportThrough(t *testing.T) {
	ds := small(t)
	full := mustExport(t, ds, t.TempDir(), Options{Formats: []string{CSV}})
	var last engine.Date
	for _, e := range full.Files {
		if e.Dataset == "daily_bars" {
			last = max(last, e.MaxDate)
		}
	}
	through := last - 1
	dir := t.TempDir()
	m := mustExport(t, ds, dir, Options{Formats: []string{CSV}, Through: through})
	if m.Through != through {
		t.Errorf("manifest through %s, want %s", m.Through, through)
	}
	for _, e := range m.Files {
		switch {
		case findSet(t, e.Dataset).priced:
			if e.MaxDate > through {
				t.Errorf("%s: max date %s beyond %s", e.File, e.MaxDate, through)
			}
		default:
			f, ok := full.Find(e.File)
			if !ok || f.SHA256 != e.SHA256 {
				t.Errorf("%s: changed by Through", e.File)
			}
		}
	}
}

// TestExportFolder: a folder holding other files is refused naming
// them; files of an earlier export no longer written are removed.
func TestExportFolder(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	_, err := Export(context.Background(), ds, dir, Options{NoSync: true})
	var fe *ForeignError
	if !errors.As(err, &fe) || !slices.Equal(fe.Names, []string{"notes.txt", "sub/"}) {
		t.Fatalf("err = %v, want a ForeignError naming notes.txt and sub/", err)
	}
	if !strings.Contains(err.Error(), `"notes.txt"`) {
		t.Errorf("error %q does not name the file", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("the refused export wrote %d entries", len(ents)-2)
	}

	dir = t.TempDir()
	mustExport(t, ds, dir, Options{})
	m := mustExport(t, ds, dir, Options{Datasets: []string{"companies"}, Formats: []string{Parquet}})
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"companies.parquet", ManifestName}; !slices.Equal(names, want) || len(m.Files) != 1 {
		t.Errorf("after a narrower export the folder holds %v, want %v", names, want)
	}

	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if err := CheckDir(file); err == nil {
		t.Error("CheckDir of a file: no error")
	}
	if err := CheckDir(filepath.Join(t.TempDir(), "new")); err != nil {
		t.Errorf("CheckDir of a missing folder: %v", err)
	}
}

func TestExportBadOptions(t *testing.T) {
	ds := small(t)
	for _, opt := range []Options{{Datasets: []string{"daily"}}, {Formats: []string{"xlsx"}}} {
		_, err := Export(context.Background(), ds, t.TempDir(), opt)
		if err == nil || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("%+v: err = %v, want unknown", opt, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	if _, err := Export(ctx, ds, dir, Options{NoSync: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled export: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		t.Error("a canceled export wrote a manifest")
	}
}

func TestFits(t *testing.T) {
	f := func(v float64, s int, want bool) {
		t.Helper()
		if _, ok := fits(v, s); ok != want {
			t.Errorf("fits(%v, %d) = %v, want %v", v, s, ok, want)
		}
	}
	f(12.34, 2, true)
	f(0.1, 2, true)
	f(12.345, 2, false)
	f(12.345, 3, true)
	f(1.0/3, 8, false)
	f(1e17, 2, false)
	f(math.NaN(), 2, false)
	f(math.Inf(1), 2, false)
	f(-0.07, 2, true)
}

func TestAppendCSVText(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := string(appendCSVText(nil, in)); got != want {
			t.Errorf("appendCSVText(%q) = %s, want %s", in, got, want)
		}
	}
	f("PETR4", "PETR4")
	f("a,b", `"a,b"`)
	f(`say "x"`, `"say ""x"""`)
	f("two\nlines", "\"two\nlines\"")
	f(" lead", `" lead"`)
	f("", "")
	// A formula's first byte: an apostrophe before it, as the API's CSV.
	f(`=HYPERLINK("http://x","y")`, `"'=HYPERLINK(""http://x"",""y"")"`)
	f("@SUM(A1)", "'@SUM(A1)")
	f("-1.5", "-1.5")
	// Read back by encoding/csv.
	in := []string{"a,b", `q"q`, "l\r\nx", " s "}
	var line []byte
	for i, s := range in {
		if i > 0 {
			line = append(line, ',')
		}
		line = appendCSVText(line, s)
	}
	got, err := csv.NewReader(bytes.NewReader(append(line, '\n'))).Read()
	if err != nil || len(got) != len(in) {
		t.Fatalf("read back %q: %v", got, err)
	}
	for i := range in {
		if got[i] != strings.ReplaceAll(in[i], "\r\n", "\n") {
			t.Errorf("field %d: %q, want %q", i, got[i], in[i])
		}
	}
}

var sink *Manifest

// BenchmarkExportSmall exports every dataset of the small market in
// Parquet (the bytes per daily bar are reported).
func BenchmarkExportSmall(b *testing.B) {
	ds := small(b)
	b.ReportAllocs()
	for b.Loop() {
		dir := b.TempDir()
		sink = mustExport(b, ds, dir, Options{Formats: []string{Parquet}})
	}
	var bars, bytes int64
	for _, e := range sink.Files {
		if e.Dataset == "daily_bars" {
			bars += e.Rows
			bytes += e.Bytes
		}
	}
	b.ReportMetric(float64(bytes)/float64(bars), "B/bar")
}

// TestIndexLevelsAreTheEngines checks index_levels against the levels
// recomputed for every session of every index of the market: the
// closing level is LevelOn's (the API's close_price), the opening one
// Σ quantity × the member's adjusted open (its last close without a bar
// that session) ÷ reductor, and a session has a row exactly when every
// member has a price.
func TestIndexLevelsAreTheEngines(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	m := mustExport(t, ds, dir, Options{Datasets: []string{"index_levels"}, Formats: []string{Parquet}})
	if len(m.Files) != 1 {
		t.Fatalf("%d files, want 1", len(m.Files))
	}
	got := map[string][][]string{}
	for _, row := range readParquet(t, filepath.Join(dir, m.Files[0].File)).rows {
		got[row[0]] = append(got[row[0]], row)
	}
	ixs := ds.Indexes()
	checked := 0
	for i := range ixs {
		ix := &ixs[i]
		if !ix.HasLevel() {
			if len(got[ix.Symbol]) != 0 {
				t.Errorf("%s: %d rows for an index without a level", ix.Symbol, len(got[ix.Symbol]))
			}
			continue
		}
		var sessions []engine.Date
		for _, as := range ix.Members {
			sessions = append(sessions, as.Daily.Dates...)
		}
		slices.Sort(sessions)
		sessions = slices.Compact(sessions)
		var want [][]string
		for _, d := range sessions {
			level := ix.LevelOn(d)
			if !level.Valid() {
				continue
			}
			var open float64
			for k, as := range ix.Members {
				p := engine.Null
				if j := as.DayIndex(d); j >= 0 && as.Daily.Dates[j] == d {
					p = as.DailyBar(j, true).Open
				}
				if !p.Valid() {
					p = as.DailyBar(as.DayIndex(d-1), true).Close
				}
				open += float64(ix.Index.Members[k].TheoreticalQty) * float64(p)
			}
			want = append(want, []string{ix.Symbol, d.String(), num(engine.Num(open / float64(ix.Reductor))), num(level), ix.AsOf.String()})
		}
		if len(want) == 0 {
			t.Errorf("%s: no session with a level", ix.Symbol)
		}
		if len(got[ix.Symbol]) != len(want) {
			t.Errorf("%s: %d rows, %d sessions with a level", ix.Symbol, len(got[ix.Symbol]), len(want))
			continue
		}
		for k := range want {
			if !slices.Equal(got[ix.Symbol][k], want[k]) {
				t.Fatalf("%s row %d: %q, want %q", ix.Symbol, k, got[ix.Symbol][k], want[k])
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no index checked")
	}
	t.Logf("%d indexes, %d rows checked", checked, m.Files[0].Rows)
}

// TestExportWhatTheSourceLeavesOut exports the small market with what a
// source may leave out (docs/data-format.md): a cash action without
// currency or prior_ex_date, a company whose employee count is unknown,
// a ticker without liquidity rank. Unknowns are nulls, not the engine's
// sentinels (-1 employees, rank 0) a reader would count as values; the
// currency is the API's (BRL when none is named); and every Parquet
// footer records the order the rows are in, a null first (the cash
// action without prior_ex_date is its ticker's first row).
func TestExportWhatTheSourceLeavesOut(t *testing.T) {
	u := demo.GenerateSize(3, smallSize)
	per := map[string]int{}
	for i := range u.CashActions {
		per[u.CashActions[i].Ticker.String()]++
	}
	k := slices.IndexFunc(u.CashActions, func(c engine.CashAction) bool { return per[c.Ticker.String()] > 1 })
	if k < 0 {
		t.Fatal("no ticker with two cash actions")
	}
	u.CashActions[k].Currency = engine.LabelNone
	u.CashActions[k].PriorExDate = engine.NoDate
	cashID, cashTicker := u.CashActions[k].ID, u.CashActions[k].Ticker.String()
	u.Companies[0].Employees = -1
	company := u.Companies[0].ID
	u.Securities[0].LiquidityRank = 0
	ticker := u.Securities[0].Ticker
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := mustExport(t, ds, dir, Options{Datasets: []string{"cash_actions", "companies", "securities"}})
	// want: per file's dataset, the row (its first cell, the column to
	// match) and the cells it must hold.
	type check struct {
		key, keyCol string
		cells       map[string]string
	}
	want := map[string]check{
		"cash_actions": {cashID, "id", map[string]string{"currency": "BRL", "prior_ex_date": "", "adjustment_factor": ""}},
		"companies":    {company, "company_id", map[string]string{"employees": ""}},
		"securities":   {ticker, "ticker", map[string]string{"liquidity_rank": ""}},
	}
	for _, e := range m.Files {
		w := want[e.Dataset]
		var tb table
		if e.Format == Parquet {
			tb = readParquet(t, filepath.Join(dir, e.File))
		} else {
			tb = readCSV(t, filepath.Join(dir, e.File))
		}
		col := func(name string) int { return slices.Index(tb.header, name) }
		found := false
		for r, row := range tb.rows {
			if row[col(w.keyCol)] != w.key {
				continue
			}
			found = true
			for c, v := range w.cells {
				if row[col(c)] != v {
					t.Errorf("%s: %s %s: %s is %q, want %q", e.File, w.keyCol, w.key, c, row[col(c)], v)
				}
			}
			if e.Dataset == "cash_actions" && (r > 0 && tb.rows[r-1][0] == cashTicker) {
				t.Errorf("%s: the action without prior_ex_date is not its ticker's first row", e.File)
			}
		}
		if !found {
			t.Errorf("%s: no row of %s %s", e.File, w.keyCol, w.key)
		}
		if e.Format == Parquet {
			for c := range w.cells {
				if typ := tb.types[col(c)]; c != "adjustment_factor" && c != "currency" && c != "prior_ex_date" && typ.ID() != arrow.INT64 {
					t.Errorf("%s: %s is %s, want int64 (BIGINT)", e.File, c, typ)
				}
			}
			checkSortingColumns(t, filepath.Join(dir, e.File), &findSet(t, e.Dataset).schema)
		}
	}
}

// checkSortingColumns checks that each row group of the Parquet file at
// path records the schema's sort order, ascending, a null first: the
// order the rows are in (checkSorted).
func checkSortingColumns(tb testing.TB, path string, s *schema) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	pf, err := pqfile.NewParquetReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	defer pf.Close()
	var want []parquet.SortingColumn
	for _, name := range s.sortBy {
		want = append(want, parquet.SortingColumn{ColumnIdx: int32(s.index(name)), NullsFirst: true})
	}
	md := pf.MetaData()
	for g := range md.NumRowGroups() {
		if got := md.RowGroup(g).SortingColumns(); !slices.Equal(got, want) {
			tb.Errorf("%s: row group %d records the order %+v, want %+v (ascending, a null first)", filepath.Base(path), g, got, want)
		}
	}
}

// TestExportKeepsOtherFiles: a file whose name starts as a dataset's but
// is not one an export writes (a researcher's
// daily_bars-2025-adjusted.parquet next to the files) is refused as any
// other file, and never removed.
func TestExportKeepsOtherFiles(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	mustExport(t, ds, dir, Options{Datasets: []string{"companies", "daily_bars"}, Formats: []string{CSV}})
	mine := []string{"companies-mine.csv.gz", "daily_bars-2025-adjusted.parquet", "minute_bars-2026.parquet"}
	for _, n := range mine {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Export(context.Background(), ds, dir, Options{Datasets: []string{"companies"}, Formats: []string{CSV}, NoSync: true})
	var fe *ForeignError
	if !errors.As(err, &fe) || !slices.Equal(fe.Names, mine) {
		t.Errorf("err = %v, want a ForeignError naming %v", err, mine)
	}
	for _, n := range mine {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != "mine" {
			t.Errorf("%s: %q, %v: the export removed or changed it", n, b, err)
		}
	}
	for _, n := range []string{"daily_bars-2025.csv.gz", "minute_bars-2026-01-05.parquet", "companies.parquet", ManifestName} {
		if !ownName(n) {
			t.Errorf("ownName(%q) = false, an export's name", n)
		}
	}
}
