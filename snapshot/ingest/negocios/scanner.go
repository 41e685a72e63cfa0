package negocios

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// LineError is an error at one line of one file. Field is the column's
// name as the file's header spells it ("" when the whole line is at
// fault); Value is the offending text.
type LineError struct {
	File  string
	Line  int64
	Field string
	Value string
	Err   error
}

func (e *LineError) Error() string {
	switch {
	case e.Field == "":
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	case e.Value == "":
		return fmt.Sprintf("%s:%d: %s: %v", e.File, e.Line, e.Field, e.Err)
	}
	return fmt.Sprintf("%s:%d: %s %q: %v", e.File, e.Line, e.Field, e.Value, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// ErrHeader is wrapped by the error of a file whose header is missing or
// lacks a required column. It is fatal in lenient mode too.
var ErrHeader = errors.New("negocios: bad header")

// Options tune a Scanner.
type Options struct {
	// Lenient skips malformed rows and counts them (Stats.Skipped, the
	// first MaxErrors kept in Stats.Errors) instead of stopping at the
	// first one. A missing or incomplete header stops the scan in both
	// modes. The feeds read lenient; imports and tests strict.
	Lenient bool
}

// MaxErrors is the number of row errors a lenient Scanner keeps.
const MaxErrors = 10

// ScanStats counts what a Scanner read.
type ScanStats struct {
	Lines   int64   // lines read, header and preamble included
	Rows    int64   // rows returned by Next
	Skipped int64   // malformed rows skipped (lenient mode)
	Errors  []error // the first MaxErrors skipped rows' errors (*LineError)
}

// column identifies one field of the layout, whatever its generation.
type column int

const (
	colRefDate column = iota
	colTicker
	colAction
	colPrice
	colQuantity
	colTime
	colID
	colSession
	colTradeDate
	colBuyer
	colSeller
	nColumns
)

// columnNames are the header names of every column in the three layout
// generations (case-insensitive): the 2020-2021 English names, then the
// Portuguese ones of 2022 on. A file's other columns (TipoDoCanal...)
// are ignored.
var columnNames = [nColumns][]string{
	colRefDate:   {"RptDt", "DataReferencia"},
	colTicker:    {"TckrSymb", "CodigoInstrumento"},
	colAction:    {"UpdActn", "AcaoAtualizacao"},
	colPrice:     {"GrssTradAmt", "PrecoNegocio"},
	colQuantity:  {"TradQty", "QuantidadeNegociada"},
	colTime:      {"NtryTm", "HoraFechamento"},
	colID:        {"TradId", "CodigoIdentificadorNegocio"},
	colSession:   {"TradgSsnId", "TipoSessaoPregao"},
	colTradeDate: {"TradDt", "DataNegocio"},
	colBuyer:     {"BuyrCd", "CodigoParticipanteComprador"},
	colSeller:    {"SellrCd", "CodigoParticipanteVendedor"},
}

// optional columns may be absent (the 2020-2021 layout has no
// participant codes).
func (c column) optional() bool { return c == colBuyer || c == colSeller }

// maxPreamble is the number of lines a header may follow (a metadata
// line such as a row count).
const maxPreamble = 5

// maxLine bounds a line; a longer one is malformed.
const maxLine = 1 << 16

// Scanner streams the rows of one trade file (text; see Open for zip and
// compressed files). Columns are found by their header names; memory does
// not grow with the file. A Scanner is not safe for concurrent use.
type Scanner struct {
	r    *bufio.Reader
	name string
	opt  Options

	header  []string      // the header's names, as spelled
	pos     [nColumns]int // field index of each column, -1 when absent
	fields  [][]byte      // the current row's fields
	tickers map[string]string
	trade   Trade
	stats   ScanStats
	err     error
	done    bool
	first   bool // no line read yet (BOM)
}

// NewScanner returns a Scanner reading the text of a trade file from r;
// name is used in errors. It reads up to the header, and returns its error
// (wrapping ErrHeader) when there is none or it lacks a required column.
func NewScanner(r io.Reader, name string, opt Options) (*Scanner, error) {
	s := &Scanner{r: bufio.NewReaderSize(r, maxLine), name: name, opt: opt, tickers: map[string]string{}, first: true}
	if err := s.readHeader(); err != nil {
		return nil, err
	}
	return s, nil
}

// Header returns the column names of the file's header, as spelled.
func (s *Scanner) Header() []string { return s.header }

// Stats returns what was read so far.
func (s *Scanner) Stats() ScanStats { return s.stats }

// Trade returns the current row; it is overwritten by Next.
func (s *Scanner) Trade() *Trade { return &s.trade }

// Err returns the error that stopped the scan, nil at a clean end.
func (s *Scanner) Err() error { return s.err }

// readLine returns the next line without its line end and BOM; io.EOF at
// the end.
func (s *Scanner) readLine() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = s.r.ReadSlice('\n')
		}
		s.stats.Lines++
		return nil, &LineError{File: s.name, Line: s.stats.Lines, Err: fmt.Errorf("line longer than %d bytes", maxLine)}
	}
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if len(b) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	s.stats.Lines++
	if s.first {
		s.first = false
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	for n := len(b); n > 0 && (b[n-1] == '\n' || b[n-1] == '\r'); n = len(b) {
		b = b[:n-1]
	}
	return b, nil
}

func (s *Scanner) readHeader() error {
	for i := 0; i <= maxPreamble; i++ {
		line, err := s.readLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		names := strings.Split(text(line), ";")
		for j := range names {
			names[j] = strings.TrimSpace(names[j])
		}
		if find(names, colTicker) < 0 {
			continue // a metadata line before the header
		}
		for c := range s.pos {
			s.pos[c] = find(names, column(c))
			if s.pos[c] < 0 && !column(c).optional() {
				return fmt.Errorf("%s:%d: %w: no column %s (want one of %s)", s.name, s.stats.Lines, ErrHeader,
					columnNames[c][1], strings.Join(columnNames[c], ", "))
			}
		}
		s.header = names
		s.fields = make([][]byte, 0, len(names)+1)
		return nil
	}
	return fmt.Errorf("%s: %w: no header line naming %s in its first %d lines", s.name, ErrHeader,
		strings.Join(columnNames[colTicker], " or "), maxPreamble+1)
}

// find returns the index of column c in names, -1 when absent.
func find(names []string, c column) int {
	for i, n := range names {
		for _, want := range columnNames[c] {
			if strings.EqualFold(n, want) {
				return i
			}
		}
	}
	return -1
}

// Next advances to the next row and reports whether there is one. At the
// end, or at an error in strict mode, it returns false; Err tells which.
func (s *Scanner) Next() bool {
	for !s.done {
		line, err := s.readLine()
		if err == io.EOF {
			s.done = true
			return false
		}
		if err == nil {
			if len(bytes.TrimSpace(line)) == 0 {
				continue // blank lines, as at the end of a file
			}
			err = s.parse(line)
		}
		if err == nil {
			s.stats.Rows++
			return true
		}
		var le *LineError
		if s.opt.Lenient && errors.As(err, &le) {
			s.stats.Skipped++
			if len(s.stats.Errors) < MaxErrors {
				s.stats.Errors = append(s.stats.Errors, err)
			}
			continue
		}
		s.err = err
		s.done = true
	}
	return false
}

// fieldError returns the error of column c's field at the current line.
func (s *Scanner) fieldError(c column, v []byte, err error) error {
	return &LineError{File: s.name, Line: s.stats.Lines, Field: s.header[s.pos[c]], Value: text(v), Err: err}
}

// parse reads one row into s.trade.
func (s *Scanner) parse(line []byte) error {
	s.fields = s.fields[:0]
	for {
		i := bytes.IndexByte(line, ';')
		if i < 0 {
			s.fields = append(s.fields, line)
			break
		}
		s.fields = append(s.fields, line[:i])
		line = line[i+1:]
	}
	if n := len(s.fields); n < len(s.header) {
		return &LineError{File: s.name, Line: s.stats.Lines, Err: fmt.Errorf("%d fields, want %d (the header's)", n, len(s.header))}
	}
	for _, f := range s.fields[len(s.header):] {
		if len(bytes.TrimSpace(f)) > 0 {
			return &LineError{File: s.name, Line: s.stats.Lines, Err: fmt.Errorf("%d fields, want %d (the header's)", len(s.fields), len(s.header))}
		}
	}
	t := &s.trade
	var err error
	get := func(c column) []byte { return bytes.TrimSpace(s.fields[s.pos[c]]) }
	if t.RefDate, err = parseDate(get(colRefDate)); err != nil {
		return s.fieldError(colRefDate, get(colRefDate), err)
	}
	if t.TradeDate, err = parseDate(get(colTradeDate)); err != nil {
		return s.fieldError(colTradeDate, get(colTradeDate), err)
	}
	if t.Ticker, err = s.ticker(get(colTicker)); err != nil {
		return s.fieldError(colTicker, get(colTicker), err)
	}
	var v int64
	if v, err = parseUint(get(colAction), 255); err != nil {
		return s.fieldError(colAction, get(colAction), err)
	}
	t.Action = Action(v)
	if v, err = parseUint(get(colSession), 255); err != nil {
		return s.fieldError(colSession, get(colSession), err)
	}
	t.Session = Session(v)
	if t.Price, err = ParsePrice(get(colPrice)); err != nil {
		return s.fieldError(colPrice, get(colPrice), err)
	}
	if t.Quantity, err = parseUint(get(colQuantity), maxCount); err != nil {
		return s.fieldError(colQuantity, get(colQuantity), err)
	}
	var ms int64
	if ms, err = parseTime(get(colTime)); err != nil {
		return s.fieldError(colTime, get(colTime), err)
	}
	t.Time = UnixMilli(t.TradeDate, ms)
	if t.ID, err = parseUint(get(colID), maxCount); err != nil {
		return s.fieldError(colID, get(colID), err)
	}
	t.Buyer, t.Seller = 0, 0
	for _, c := range [...]column{colBuyer, colSeller} {
		if s.pos[c] < 0 {
			continue
		}
		f := get(c)
		if len(f) == 0 {
			continue
		}
		if v, err = parseUint(f, 1<<31-1); err != nil {
			return s.fieldError(c, f, err)
		}
		if c == colBuyer {
			t.Buyer = int32(v)
		} else {
			t.Seller = int32(v)
		}
	}
	return nil
}

// maxCount bounds quantities and trade ids: 10^15, far above any real
// one, so that products and sums of them stay within int64 (see
// Aggregator).
const maxCount = 1_000_000_000_000_000

// maxTicker bounds an instrument code's length in bytes of UTF-8.
const maxTicker = 32

// ticker returns the interned instrument code of b (Latin-1 decoded when
// it is not UTF-8).
func (s *Scanner) ticker(b []byte) (string, error) {
	if t, ok := s.tickers[string(b)]; ok {
		return t, nil
	}
	if len(b) == 0 {
		return "", errors.New("empty")
	}
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return "", errors.New("control character")
		}
	}
	t := text(b)
	if len(t) > maxTicker {
		return "", fmt.Errorf("longer than %d bytes", maxTicker)
	}
	if len(s.tickers) < 1<<17 {
		s.tickers[string(b)] = t
	}
	return t, nil
}

// text returns b as a string, decoded as ISO-8859-1 when it is not valid
// UTF-8.
func text(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return datafile.Latin1(b)
}

// parseDate parses YYYY-MM-DD.
func parseDate(b []byte) (engine.Date, error) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return engine.NoDate, errors.New("want YYYY-MM-DD")
	}
	y, err1 := parseUint(b[0:4], 9999)
	m, err2 := parseUint(b[5:7], 12)
	d, err3 := parseUint(b[8:10], 31)
	if err1 != nil || err2 != nil || err3 != nil || y < 1900 || m < 1 || d < 1 {
		return engine.NoDate, errors.New("want YYYY-MM-DD")
	}
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if t.Day() != int(d) {
		return engine.NoDate, errors.New("no such day")
	}
	return engine.MakeDate(int(y), time.Month(m), int(d)), nil
}

// parseUint parses decimal digits into a value at most max.
func parseUint(b []byte, max int64) (int64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty")
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errors.New("want digits")
		}
		v = v*10 + int64(c-'0')
		if v > max {
			return 0, fmt.Errorf("above %d", max)
		}
	}
	return v, nil
}

// parseTime parses HHMMSSfff (leading zeros may be dropped) into
// milliseconds since midnight.
func parseTime(b []byte) (int64, error) {
	if len(b) > 9 {
		return 0, errors.New("want HHMMSSfff")
	}
	v, err := parseUint(b, 999_999_999)
	if err != nil {
		return 0, fmt.Errorf("want HHMMSSfff: %w", err)
	}
	hh, mm, ss, ms := v/10_000_000, v/100_000%100, v/1000%100, v%1000
	if hh > 23 || mm > 59 || ss > 59 {
		return 0, errors.New("want HHMMSSfff, a time of day")
	}
	return ((hh*60+mm)*60+ss)*1000 + ms, nil
}

// maxPrice bounds a price's absolute value in thousandths: one billion
// BRL a share.
const maxPrice = 1_000_000_000_000

// ParsePrice parses a price with a decimal comma (or point) and at most
// three decimals ("23,48", "23,480", "-0,035", "11") into thousandths of
// BRL. More decimals are accepted when they are zeros.
func ParsePrice(b []byte) (int64, error) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	ip, fp := b, []byte(nil)
	if i := bytes.IndexAny(b, ",."); i >= 0 {
		ip, fp = b[:i], b[i+1:]
		if len(fp) == 0 {
			return 0, errors.New("want digits after the decimal comma")
		}
	}
	v, err := parseUint(ip, maxPrice/PriceScale)
	if err != nil {
		return 0, fmt.Errorf("want a decimal number: %w", err)
	}
	v *= PriceScale
	for i, c := range fp {
		if c < '0' || c > '9' {
			return 0, errors.New("want a decimal number: want digits")
		}
		switch {
		case i == 0:
			v += int64(c-'0') * 100
		case i == 1:
			v += int64(c-'0') * 10
		case i == 2:
			v += int64(c - '0')
		case c != '0':
			return 0, errors.New("more than 3 decimals")
		}
	}
	if neg {
		v = -v
	}
	return v, nil
}
