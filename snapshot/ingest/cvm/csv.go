package cvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// maxRecord bounds one record (a quoted field may span lines): a longer
// record is malformed rather than a reason to read a whole file into memory.
const maxRecord = 1 << 20

// ErrMissingColumn is wrapped by the error of a header that lacks a
// required column.
var ErrMissingColumn = errors.New("missing required column")

// ParseError is a malformed file, header or row. Line is the 1-based
// physical line where the record starts (the header is line 1); Column is
// the header name of the offending field, "" when the whole row is wrong.
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Reader streams the records of one CVM open-data CSV file: ';'
// separated, first row a header, CRLF or LF line ends, UTF-8 or
// ISO-8859-1 text.
//
// Encoding: the first 64 KiB decide. If they are valid UTF-8 (a leading
// BOM is dropped) records are read as UTF-8, otherwise as ISO-8859-1 and
// converted. A later record that is not valid UTF-8 switches the file to
// ISO-8859-1 from that record on.
//
// Quoting: a field that starts with '"' and whose closing '"' is followed
// by ';' or the end of the record is a quoted field ("" is an escaped
// quote; it may hold ';' and line breaks). Any other '"' is literal text,
// as CVM writes quotes inside unquoted fields (BL "C"). A quoted field
// left open at the end of the file is an error, and so is a field holding
// a NUL byte (datafile.ErrNUL: a *ParseError naming line and column).
//
// Memory is constant: the byte slices returned by Field are valid until
// the next call to Next. A Reader is not safe for concurrent use.
type Reader struct {
	name   string
	br     *bufio.Reader
	phys   int // physical lines consumed
	line   int // first physical line of the current record
	latin1 bool
	init   bool

	raw    []byte   // current record, raw bytes without the line end
	conv   []byte   // ISO-8859-1 record converted to UTF-8
	unq    []byte   // unquoted field bytes
	fields [][]byte // fields of the current record

	header   []string
	cols     map[string]int
	interned map[string]string

	rows, bytes  int64 // data rows returned by Next (malformed included); bytes consumed
	progress     func(file string, rows, bytes int64)
	every, next  int64 // rows between progress calls; row count of the next call
	progressDone bool  // the final progress call was made
}

// NewReader returns a Reader of r; name is the file name used in errors.
func NewReader(r io.Reader, name string) *Reader {
	return &Reader{name: name, br: bufio.NewReaderSize(r, 64<<10)}
}

// Rows returns the number of data rows read so far: the records Next
// returned, malformed ones included (not the header, not blank lines).
func (r *Reader) Rows() int64 { return r.rows }

// Bytes returns the number of bytes of the file consumed so far, line
// ends, blank lines and the header included (after any decompression
// done by the caller; before conversion from ISO-8859-1).
func (r *Reader) Bytes() int64 { return r.bytes }

// Name returns the file name given to NewReader.
func (r *Reader) Name() string { return r.name }

// Line returns the physical line where the current record starts.
func (r *Reader) Line() int { return r.line }

// Latin1 reports whether the file is being read as ISO-8859-1.
func (r *Reader) Latin1() bool { return r.latin1 }

func (r *Reader) detect() {
	r.init = true
	if b, _ := r.br.Peek(3); bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		n, _ := r.br.Discard(3)
		r.bytes += int64(n)
	}
	b, _ := r.br.Peek(r.br.Size())
	if len(b) == r.br.Size() {
		// The buffer may end inside a character: judge whole lines, or
		// drop the last (possibly cut) character of a longer line.
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i]
		} else {
			j := len(b) - 1
			for j > 0 && j > len(b)-4 && !utf8.RuneStart(b[j]) {
				j--
			}
			b = b[:j]
		}
	}
	r.latin1 = !utf8.Valid(b)
}

// ReadHeader reads the header row. It must be called once, before Next.
func (r *Reader) ReadHeader() error {
	if err := r.readRecord(); err != nil {
		if err == io.EOF {
			return &ParseError{File: r.name, Line: 1, Err: errors.New("empty file: no header row")}
		}
		return err
	}
	r.header = r.header[:0]
	r.cols = make(map[string]int, len(r.fields))
	for i, f := range r.fields {
		h := strings.TrimSpace(string(f))
		r.header = append(r.header, h)
		if _, dup := r.cols[h]; !dup && h != "" {
			r.cols[h] = i
		}
	}
	if r.progress != nil {
		r.progress(r.name, 0, r.bytes)
	}
	return nil
}

// Header returns the column names of the header row.
func (r *Reader) Header() []string { return r.header }

// Col returns the index of the first of names present in the header, or
// -1 when none is (alternative spellings of one column).
func (r *Reader) Col(names ...string) int {
	for _, n := range names {
		if i, ok := r.cols[n]; ok {
			return i
		}
	}
	return -1
}

// Require is Col for a required column: it fails naming names[0] when no
// spelling is present.
func (r *Reader) Require(names ...string) (int, error) {
	if i := r.Col(names...); i >= 0 {
		return i, nil
	}
	return -1, &ParseError{File: r.name, Line: 1, Column: names[0], Err: ErrMissingColumn}
}

// requireAll returns the indexes of the required columns names, in
// order, or the error of Require for the first that is absent.
func (r *Reader) requireAll(names ...string) ([]int, error) {
	cols := make([]int, len(names))
	for i, n := range names {
		var err error
		if cols[i], err = r.Require(n); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// Next reads the next data row, skipping blank lines. It returns io.EOF
// at the end. A row whose field count differs from the header's is a
// *ParseError; the Reader stays usable and Next may be called again.
func (r *Reader) Next() error {
	for {
		if err := r.readRecord(); err != nil {
			if err == io.EOF && r.progress != nil && !r.progressDone {
				r.progressDone = true
				r.progress(r.name, r.rows, r.bytes)
			}
			return err
		}
		if len(r.fields) == 1 && len(bytes.TrimSpace(r.fields[0])) == 0 {
			continue // blank line
		}
		r.rows++
		if r.rows == r.next && r.progress != nil {
			r.next += r.every
			r.progress(r.name, r.rows, r.bytes)
		}
		if len(r.fields) != len(r.header) {
			col := ""
			if len(r.fields) < len(r.header) {
				col = r.header[len(r.fields)]
			}
			return &ParseError{File: r.name, Line: r.line, Column: col,
				Err: fmt.Errorf("row has %d fields, header has %d", len(r.fields), len(r.header))}
		}
		return nil
	}
}

// NumFields returns the number of fields of the current row.
func (r *Reader) NumFields() int { return len(r.fields) }

// Field returns field i of the current row with surrounding spaces
// trimmed, or nil when i is -1 (an optional column that is absent). The
// bytes are valid until the next call to Next.
func (r *Reader) Field(i int) []byte {
	if i < 0 || i >= len(r.fields) {
		return nil
	}
	return bytes.TrimSpace(r.fields[i])
}

// String returns Field(i) as a new string.
func (r *Reader) String(i int) string { return string(r.Field(i)) }

// Intern returns Field(i) as a string shared with earlier equal values
// of this Reader (account codes and names repeat across companies). At
// most 1<<16 distinct values are kept; later ones are plain copies.
func (r *Reader) Intern(i int) string {
	b := r.Field(i)
	if s, ok := r.interned[string(b)]; ok {
		return s
	}
	s := string(b)
	if r.interned == nil {
		r.interned = make(map[string]string)
	}
	if len(r.interned) < 1<<16 {
		r.interned[s] = s
	}
	return s
}

// Errorf returns a *ParseError for column i of the current row.
func (r *Reader) Errorf(i int, format string, args ...any) error {
	col := ""
	if i >= 0 && i < len(r.header) {
		col = r.header[i]
	}
	return &ParseError{File: r.name, Line: r.line, Column: col, Err: fmt.Errorf(format, args...)}
}

// readRecord reads one record (one line, or several when a quoted field
// holds line breaks) and splits it into r.fields.
func (r *Reader) readRecord() error {
	if !r.init {
		r.detect()
	}
	r.raw = r.raw[:0]
	r.line = r.phys + 1
	for {
		chunk, err := r.br.ReadSlice('\n')
		r.raw = append(r.raw, chunk...)
		r.bytes += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if len(r.raw) > maxRecord {
				return &ParseError{File: r.name, Line: r.line, Err: fmt.Errorf("record longer than %d bytes", maxRecord)}
			}
			continue
		}
		eof := false
		if err == io.EOF {
			if len(r.raw) == 0 {
				return io.EOF
			}
			eof = true
		} else if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		r.phys++
		if eof || !openQuote(r.raw) {
			break
		}
		if len(r.raw) > maxRecord {
			return &ParseError{File: r.name, Line: r.line, Err: fmt.Errorf("record longer than %d bytes", maxRecord)}
		}
	}
	rec := trimEOL(r.raw)
	if r.latin1 || !utf8.Valid(rec) {
		r.latin1 = true
		r.conv = datafile.AppendLatin1(r.conv[:0], rec)
		rec = r.conv
	}
	if err := r.split(rec); err != nil {
		return err
	}
	if bytes.IndexByte(rec, 0) >= 0 {
		i := datafile.NULField(r.fields)
		return &ParseError{File: r.name, Line: r.line, Column: r.colName(i), Err: fmt.Errorf("field %d: %w", i+1, datafile.ErrNUL)}
	}
	return nil
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// quotedEnd returns the index just past the closing quote of the quoted
// field starting at b[0] == '"', and whether that quote closes a proper
// quoted field (followed by ';', the end of b, or a line end).
// It returns -1 when the field is still open at the end of b.
func quotedEnd(b []byte) (int, bool) {
	for i := 1; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		if i+1 < len(b) && b[i+1] == '"' {
			i++
			continue
		}
		j := i + 1
		if j == len(b) || b[j] == ';' || b[j] == '\r' || b[j] == '\n' {
			return j, true
		}
		return j, false
	}
	return -1, false
}

// openQuote reports whether raw (one or more physical lines) ends inside
// a quoted field, so the record continues on the next line.
func openQuote(raw []byte) bool {
	if bytes.IndexByte(raw, '"') < 0 {
		return false
	}
	start := 0
	for start <= len(raw) {
		rest := raw[start:]
		if len(rest) > 0 && rest[0] == '"' {
			end, ok := quotedEnd(rest)
			if end < 0 {
				return true
			}
			if !ok {
				// Literal quote: the field runs to the next ';'.
				k := bytes.IndexByte(rest, ';')
				if k < 0 {
					return false
				}
				start += k + 1
				continue
			}
			start += end + 1
			continue
		}
		k := bytes.IndexByte(rest, ';')
		if k < 0 {
			return false
		}
		start += k + 1
	}
	return false
}

// split cuts rec into fields.
func (r *Reader) split(rec []byte) error {
	r.fields = r.fields[:0]
	if bytes.IndexByte(rec, '"') < 0 {
		for {
			k := bytes.IndexByte(rec, ';')
			if k < 0 {
				r.fields = append(r.fields, rec)
				return nil
			}
			r.fields = append(r.fields, rec[:k])
			rec = rec[k+1:]
		}
	}
	// Slow path: quoted fields. unq never outgrows len(rec), so slices
	// into it stay valid while it is filled.
	if cap(r.unq) < len(rec) {
		r.unq = make([]byte, 0, len(rec))
	}
	r.unq = r.unq[:0]
	for {
		if len(rec) > 0 && rec[0] == '"' {
			end, ok := quotedEnd(rec)
			if end < 0 {
				return &ParseError{File: r.name, Line: r.line, Column: r.colName(len(r.fields)),
					Err: errors.New("quoted field not closed")}
			}
			if ok {
				s := len(r.unq)
				body := rec[1 : end-1]
				for i := 0; i < len(body); i++ {
					r.unq = append(r.unq, body[i])
					if body[i] == '"' {
						i++ // "" -> "
					}
				}
				r.fields = append(r.fields, r.unq[s:len(r.unq):len(r.unq)])
				if end == len(rec) {
					return nil
				}
				rec = rec[end+1:]
				continue
			}
		}
		k := bytes.IndexByte(rec, ';')
		if k < 0 {
			r.fields = append(r.fields, rec)
			return nil
		}
		r.fields = append(r.fields, rec[:k])
		rec = rec[k+1:]
	}
}

func (r *Reader) colName(i int) string {
	if i < len(r.header) {
		return r.header[i]
	}
	return ""
}
