package flatfiles

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	pqfile "github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/klauspost/compress/gzip"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/csvcell"
)

// colType is the type of a column, the same in both formats.
type colType uint8

const (
	tString  colType = iota // text (Parquet STRING); "" is null
	tDate                   // engine.Date (Parquet DATE); NoDate is null
	tTime                   // an instant (Parquet TIMESTAMP, UTC, microseconds); the zero time is null
	tInt                    // int64 (Parquet INT64), never null
	tFloat                  // engine.Num (Parquet DOUBLE); a Num that is not Valid is null
	tDecimal                // engine.Num as DECIMAL(18, s) (see decimalScale), else DOUBLE; null as tFloat
	tBool                   // bool (Parquet BOOLEAN)
	tCount                  // engine.Num holding whole numbers (Parquet INT64), else DOUBLE; null as tFloat
)

// typeName is the column type as docs/files.md states it.
func (t colType) typeName() string {
	return [...]string{"STRING", "DATE", "TIMESTAMP (UTC, µs)", "BIGINT", "DOUBLE", "DECIMAL(18,s)", "BOOLEAN", "BIGINT"}[t]
}

// column is one column of a dataset: its name, type and what it holds
// (unit, null meaning), as docs/files.md documents it.
type column struct {
	name string
	typ  colType
	desc string
}

// schema is a dataset's columns, its sort order and the column whose
// range the manifest states.
type schema struct {
	cols   []column
	sortBy []string // the columns rows are sorted by, in order
	date   string   // the DATE or TIMESTAMP column of the manifest's min_date and max_date; "" none
}

// dateCol returns the index of the date column, -1 when none.
func (s *schema) dateCol() int {
	if s.date == "" {
		return -1
	}
	return s.index(s.date)
}

func (s *schema) index(name string) int {
	for i, c := range s.cols {
		if c.name == name {
			return i
		}
	}
	panic("BUG: no column " + name)
}

// Decimal columns are written as DECIMAL(18, s) with s the least scale
// from minScale to maxScale that holds every value of the file exactly
// (the value read back as a double is the Num bit for bit); a column of
// a file with a value no such scale holds is written as DOUBLE.
const (
	minScale  = 2
	maxScale  = 8
	precision = 18
)

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}

// fits reports whether v is exactly c/10^s for an integer c of at most
// precision digits, and returns c.
func fits(v float64, s int) (int64, bool) {
	f := v * pow10[s]
	if !(f > -1e18 && f < 1e18) {
		return 0, false
	}
	c := math.Round(f)
	return int64(c), math.Float64bits(c/pow10[s]) == math.Float64bits(v)
}

// rowGroupRows is the number of rows of a Parquet row group: a year of
// daily bars of a few hundred tickers, so that a reader that filters by
// ticker or date skips the others by their statistics.
const rowGroupRows = 64 << 10

// zstdLevel is the Parquet pages' zstd level.
const zstdLevel = 9

// rows receives the rows of one file, one value at a time in column
// order, each row ended by end. In the scan pass it only counts rows,
// the date range and the decimal scales; in the write pass it writes
// the Parquet and CSV forms. Errors are kept: the first one stops the
// writing and is returned by the pass.
type rows struct {
	s    *schema
	scan bool
	c    int   // next column
	n    int64 // rows ended
	err  error

	// What the scan pass finds (and the write pass uses).
	scale    []int8 // per tDecimal column: its scale, -1 for DOUBLE (tCount: >= 0 BIGINT, -1 DOUBLE)
	dateCol  int    // s.dateCol()
	min, max engine.Date

	// The write pass's sinks (nil when that format is not written).
	pw      *pqfile.Writer
	cols    []pqColumn // the row group being written, per column
	pending int        // its rows
	csv     *bufio.Writer
	line    []byte
}

// pqColumn is one column of the row group being written: the
// definition level of each row when the column is nullable (0 null,
// 1 a value), and the values, in the slice of the column's physical
// type.
type pqColumn struct {
	def []int16
	i32 []int32
	i64 []int64
	f64 []float64
	ba  []parquet.ByteArray
	b   []bool
}

// present records a row with a value in column c (nullable or not).
func (r *rows) present(c int) *pqColumn {
	col := &r.cols[c]
	if r.s.cols[c].nullable() {
		col.def = append(col.def, 1)
	}
	return col
}

// null records a null in column c.
func (r *rows) null(c int) { r.cols[c].def = append(r.cols[c].def, 0) }

// nullable reports whether the column may hold nulls: every type but
// integers and booleans.
func (c column) nullable() bool { return c.typ != tInt && c.typ != tBool }

// double reports whether the file writes column c, a tDecimal or tCount,
// as DOUBLE (the scale the scan found is -1).
func (r *rows) double(c int) bool { return r.scale[c] < 0 }

func (r *rows) next(t colType) int {
	c := r.c
	if c >= len(r.s.cols) || r.s.cols[c].typ != t {
		panic(fmt.Sprintf("BUG: value of type %d for column %d of %d", t, c, len(r.s.cols)))
	}
	r.c++
	if r.csv != nil && c > 0 {
		r.line = append(r.line, ',')
	}
	return c
}

func (r *rows) seeDate(c int, d engine.Date) {
	if c != r.dateCol || !d.Valid() {
		return
	}
	if !r.min.Valid() || d < r.min {
		r.min = d
	}
	if !r.max.Valid() || d > r.max {
		r.max = d
	}
}

// str appends a text value ("" is null).
func (r *rows) str(v string) {
	c := r.next(tString)
	if r.scan {
		return
	}
	if r.pw != nil {
		if v == "" {
			r.null(c)
		} else {
			col := r.present(c)
			col.ba = append(col.ba, parquet.ByteArray(v))
		}
	}
	if r.csv != nil {
		r.line = appendCSVText(r.line, v)
	}
}

// date appends a day (NoDate is null).
func (r *rows) date(d engine.Date) {
	c := r.next(tDate)
	if r.scan {
		r.seeDate(c, d)
		return
	}
	if r.pw != nil {
		if d.Valid() {
			col := r.present(c)
			col.i32 = append(col.i32, int32(d))
		} else {
			r.null(c)
		}
	}
	if r.csv != nil {
		r.line = d.AppendFormat(r.line)
	}
}

// time appends an instant (the zero time is null).
func (r *rows) time(t time.Time) {
	c := r.next(tTime)
	if r.scan {
		if !t.IsZero() {
			r.seeDate(c, engine.DateOf(t))
		}
		return
	}
	if r.pw != nil {
		if t.IsZero() {
			r.null(c)
		} else {
			col := r.present(c)
			col.i64 = append(col.i64, t.UnixMicro())
		}
	}
	if r.csv != nil && !t.IsZero() {
		r.line = t.UTC().Truncate(time.Microsecond).AppendFormat(r.line, time.RFC3339Nano)
	}
}

// int appends an integer.
func (r *rows) int(v int64) {
	c := r.next(tInt)
	if r.scan {
		return
	}
	if r.pw != nil {
		col := r.present(c)
		col.i64 = append(col.i64, v)
	}
	if r.csv != nil {
		r.line = strconv.AppendInt(r.line, v, 10)
	}
}

// bool appends a boolean.
func (r *rows) bool(v bool) {
	c := r.next(tBool)
	if r.scan {
		return
	}
	if r.pw != nil {
		col := r.present(c)
		col.b = append(col.b, v)
	}
	if r.csv != nil {
		r.line = strconv.AppendBool(r.line, v)
	}
}

// float appends a number as a double (null when not Valid).
func (r *rows) float(v engine.Num) {
	c := r.next(tFloat)
	if r.scan {
		return
	}
	if r.pw != nil {
		r.appendDouble(c, v)
	}
	r.csvNum(v)
}

// decimal appends a number as a decimal of the file's scale for the
// column, or a double (null when not Valid).
func (r *rows) decimal(v engine.Num) {
	c := r.next(tDecimal)
	if r.scan {
		if s := r.scale[c]; s >= 0 && v.Valid() {
			for ; s <= maxScale; s++ {
				if _, ok := fits(float64(v), int(s)); ok {
					break
				}
			}
			if s > maxScale {
				s = -1
			}
			r.scale[c] = s
		}
		return
	}
	if r.pw != nil {
		switch {
		case r.double(c):
			r.appendDouble(c, v)
		case !v.Valid():
			r.null(c)
		default:
			n, ok := fits(float64(v), int(r.scale[c]))
			if !ok {
				r.fail(fmt.Errorf("column %s: %v does not fit the scale %d its scan found", r.s.cols[c].name, float64(v), r.scale[c]))
				n = 0 // the row stays whole; the error stops the file
			}
			col := r.present(c)
			col.i64 = append(col.i64, n)
		}
	}
	r.csvNum(v)
}

// count appends a whole number as an integer, or a double when the
// file's column holds a value that is not whole (null when not Valid).
func (r *rows) count(v engine.Num) {
	c := r.next(tCount)
	if r.scan {
		if v.Valid() && (float64(v) != math.Trunc(float64(v)) || math.Abs(float64(v)) >= 1<<53) {
			r.scale[c] = -1
		}
		return
	}
	if r.pw != nil {
		switch {
		case r.double(c):
			r.appendDouble(c, v)
		case !v.Valid():
			r.null(c)
		default:
			col := r.present(c)
			col.i64 = append(col.i64, int64(v))
		}
	}
	r.csvNum(v)
}

// csvNum appends v as the API writes a number: the shortest decimal that
// reads back as v (whole cents as such), nothing for a null.
func (r *rows) csvNum(v engine.Num) {
	if r.csv != nil && v.Valid() {
		r.line = strconv.AppendFloat(r.line, float64(v), 'f', -1, 64)
	}
}

func (r *rows) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// end ends a row.
func (r *rows) end() {
	if r.c != len(r.s.cols) {
		panic(fmt.Sprintf("BUG: row of %d values for %d columns", r.c, len(r.s.cols)))
	}
	r.c = 0
	r.n++
	if r.scan || r.err != nil {
		return
	}
	if r.csv != nil {
		r.line = append(r.line, '\n')
		if _, err := r.csv.Write(r.line); err != nil {
			r.fail(err)
		}
		r.line = r.line[:0]
	}
	if r.pw != nil {
		if r.pending++; r.pending == rowGroupRows {
			r.flush()
		}
	}
}

// flush writes the rows the columns hold as a row group.
func (r *rows) flush() {
	if r.pending == 0 || r.err != nil {
		return
	}
	r.pending = 0
	rg, err := r.pw.AppendRowGroupChecked()
	if err != nil {
		r.fail(err)
		return
	}
	for i := range r.cols {
		cw, err := rg.NextColumn()
		if err != nil {
			r.fail(err)
			return
		}
		col := &r.cols[i]
		switch w := cw.(type) {
		case *pqfile.Int32ColumnChunkWriter:
			_, err = w.WriteBatch(col.i32, col.def, nil)
		case *pqfile.Int64ColumnChunkWriter:
			_, err = w.WriteBatch(col.i64, col.def, nil)
		case *pqfile.Float64ColumnChunkWriter:
			_, err = w.WriteBatch(col.f64, col.def, nil)
		case *pqfile.ByteArrayColumnChunkWriter:
			_, err = w.WriteBatch(col.ba, col.def, nil)
		case *pqfile.BooleanColumnChunkWriter:
			_, err = w.WriteBatch(col.b, col.def, nil)
		default:
			err = fmt.Errorf("BUG: column %s: writer %T", r.s.cols[i].name, cw)
		}
		if err == nil {
			err = cw.Close()
		}
		if err != nil {
			r.fail(err)
			return
		}
		*col = pqColumn{def: col.def[:0], i32: col.i32[:0], i64: col.i64[:0], f64: col.f64[:0], ba: col.ba[:0], b: col.b[:0]}
	}
	if err := rg.Close(); err != nil {
		r.fail(err)
	}
}

// parquetSchema returns the file's Parquet schema: each column's
// physical and logical type, with the scales the scan found (the schema
// Arrow's pqarrow gives the Arrow schema of arrowSchema).
func (r *rows) parquetSchema(props *parquet.WriterProperties) (*pqschema.GroupNode, error) {
	fields := make(pqschema.FieldList, len(r.s.cols))
	for i, c := range r.s.cols {
		rep := parquet.Repetitions.Required
		if c.nullable() {
			rep = parquet.Repetitions.Optional
		}
		var lt pqschema.LogicalType = pqschema.NoLogicalType{}
		var pt parquet.Type
		switch {
		case c.typ == tString:
			lt, pt = pqschema.StringLogicalType{}, parquet.Types.ByteArray
		case c.typ == tDate:
			lt, pt = pqschema.DateLogicalType{}, parquet.Types.Int32
		case c.typ == tTime:
			lt, pt = pqschema.NewTimestampLogicalTypeForce(true, pqschema.TimeUnitMicros), parquet.Types.Int64
		case c.typ == tBool:
			pt = parquet.Types.Boolean
		case c.typ == tFloat, (c.typ == tDecimal || c.typ == tCount) && r.double(i):
			pt = parquet.Types.Double
		case c.typ == tDecimal:
			lt, pt = pqschema.NewDecimalLogicalType(precision, int32(r.scale[i])), parquet.Types.Int64
		default: // tInt, tCount
			lt, pt = pqschema.NewIntLogicalType(64, true), parquet.Types.Int64
		}
		n, err := pqschema.NewPrimitiveNodeLogical(c.name, rep, lt, pt, -1, -1)
		if err != nil {
			return nil, err
		}
		fields[i] = n
	}
	return pqschema.NewGroupNode(props.RootName(), props.RootRepetition(), fields, -1)
}

// arrowSchema returns the file's Arrow schema: the columns' types, with
// the scales the scan found.
func (r *rows) arrowSchema() *arrow.Schema {
	fields := make([]arrow.Field, len(r.s.cols))
	for i, c := range r.s.cols {
		var t arrow.DataType
		switch c.typ {
		case tString:
			t = arrow.BinaryTypes.String
		case tDate:
			t = arrow.FixedWidthTypes.Date32
		case tTime:
			t = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
		case tInt:
			t = arrow.PrimitiveTypes.Int64
		case tFloat:
			t = arrow.PrimitiveTypes.Float64
		case tDecimal:
			if s := r.scale[i]; s >= 0 {
				t = &arrow.Decimal128Type{Precision: precision, Scale: int32(s)}
			} else {
				t = arrow.PrimitiveTypes.Float64
			}
		case tBool:
			t = arrow.FixedWidthTypes.Boolean
		case tCount:
			if r.scale[i] >= 0 {
				t = arrow.PrimitiveTypes.Int64
			} else {
				t = arrow.PrimitiveTypes.Float64
			}
		}
		fields[i] = arrow.Field{Name: c.name, Type: t, Nullable: c.typ != tInt && c.typ != tBool}
	}
	return arrow.NewSchema(fields, nil)
}

// parquetProps returns the writer properties of a file of schema sc:
// zstd pages, dictionaries for text, delta encoding for integers, dates,
// instants and decimals, byte-stream split for doubles, the sort order
// recorded.
//
// Integers and decimals stay delta-encoded: DuckDB (1.5) refuses a file
// whose integers are byte-stream split ("only supported for FLOAT or
// DOUBLE"), though that layout with brotli pages is the smallest
// measured (the scale-1 demo's daily bars: 11.80 bytes a bar, against
// 12.54 here; docs/files.md has the other layouts measured). zstd leaves
// delta's bit-packed values as they are; it shrinks the other columns.
func (r *rows) parquetProps(sc *arrow.Schema) *parquet.WriterProperties {
	opts := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(zstdLevel),
		parquet.WithStoreDecimalAsInteger(true),
		parquet.WithMaxRowGroupLength(rowGroupRows),
		parquet.WithDictionaryDefault(false),
		parquet.WithCreatedBy("pregao"),
	}
	for _, f := range sc.Fields() {
		switch f.Type.ID() {
		case arrow.STRING:
			opts = append(opts, parquet.WithDictionaryFor(f.Name, true))
		case arrow.FLOAT64:
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.ByteStreamSplit))
		case arrow.BOOL:
		default:
			opts = append(opts, parquet.WithEncodingFor(f.Name, parquet.Encodings.DeltaBinaryPacked))
		}
	}
	// A null sorts first: the rows are ordered by the engine's values, in
	// which a missing date (NoDate) is the least and a missing text ""
	// (cash_actions' prior_ex_date). The footer says so, or a reader
	// that trusts it (a merge, an as-of join, a binary search) would look
	// for the nulls at the end.
	var sorting []parquet.SortingColumn
	for _, name := range r.s.sortBy {
		sorting = append(sorting, parquet.SortingColumn{ColumnIdx: int32(r.s.index(name)), NullsFirst: true})
	}
	return parquet.NewWriterProperties(append(opts, parquet.WithSortingColumns(sorting))...)
}

// startParquet makes r write Parquet to w. The footer carries the
// Arrow schema (key ARROW:schema, an IPC schema message in base64, as
// Arrow's writers store it), so that Arrow readers get the types back
// as written (timestamps in UTC, not merely adjusted to it).
func (r *rows) startParquet(w io.Writer) error {
	sc := r.arrowSchema()
	props := r.parquetProps(sc)
	root, err := r.parquetSchema(props)
	if err != nil {
		return err
	}
	var ipcSchema bytes.Buffer
	if err := ipc.NewWriter(&ipcSchema, ipc.WithSchema(sc)).Close(); err != nil {
		return err
	}
	meta := metadata.NewKeyValueMetadata()
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(ipcSchema.Bytes()))
	pw, err := pqfile.NewParquetWriterWithError(w, root, pqfile.WithWriterProps(props), pqfile.WithWriteMetadata(meta))
	if err != nil {
		return err
	}
	r.pw = pw
	r.cols = make([]pqColumn, len(r.s.cols))
	return nil
}

// finishParquet writes the last row group and the footer.
func (r *rows) finishParquet() error {
	r.flush()
	if err := r.pw.Close(); err != nil {
		r.fail(err)
	}
	return r.err
}

// csvHeader is the header row of the CSV form.
func (r *rows) csvHeader() []byte {
	var b []byte
	for i, c := range r.s.cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c.name...)
	}
	return append(b, '\n')
}

// appendCSVText appends s as a CSV field, quoted when it holds a comma, a
// quote, a line break or leading or trailing space; text a spreadsheet
// would read as a formula gets a leading apostrophe (csvcell.Safe), as
// the API's CSV answers do.
func appendCSVText(dst []byte, s string) []byte {
	s = csvcell.Safe(s)
	if !strings.ContainsAny(s, ",\"\r\n") && strings.TrimSpace(s) == s {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

// counter counts and hashes what is written through it.
type counter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func newCounter(w io.Writer) *counter { return &counter{w: w, h: sha256.New()} }

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	return n, err
}

func (c *counter) sum() string { return hex.EncodeToString(c.h.Sum(nil)) }

// gzipWriter returns a gzip stream on w whose header carries no name and
// no time, so that the same rows give the same bytes.
func gzipWriter(w io.Writer) *gzip.Writer {
	zw, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	// MTIME 0 is "no time" (RFC 1952); the zero time.Time would be
	// written as its Unix seconds cut to 32 bits, a date in 2042.
	zw.ModTime = time.Unix(0, 0)
	return zw
}

// appendDouble appends v to column c as a double, null when it is not
// Valid.
func (r *rows) appendDouble(c int, v engine.Num) {
	if v.Valid() {
		col := r.present(c)
		col.f64 = append(col.f64, float64(v))
	} else {
		r.null(c)
	}
}
