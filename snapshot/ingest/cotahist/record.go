package cotahist

import (
	"encoding/binary"
	"fmt"

	"github.com/pregao/pregao/engine"
)

// RecordLen is the length of every COTAHIST record, line end excluded.
const RecordLen = 245

// Record types (TIPREG).
const (
	TypeHeader  = 0
	TypeQuote   = 1
	TypeTrailer = 99
)

// Market types (TPMERC) used by the filters.
const (
	MarketCash   = 10 // mercado à vista
	MarketOddLot = 20 // mercado fracionário
)

// Boards (CODBDI) used by the filters.
const (
	BoardStandardLot = 2  // lote padrão
	BoardOddLot      = 96 // mercado fracionário
)

// Record is one quote record (type 01). Byte slices point into the line
// being parsed and are valid until the next record is read. Prices are in
// hundredths of the currency (MODREF, BRL) per Factor securities.
type Record struct {
	Date         engine.Date // DATPRE, trading session
	BDI          int         // CODBDI, board
	Ticker       []byte      // CODNEG, trailing spaces removed
	Market       int         // TPMERC
	Name         []byte      // NOMRES, company short name (ISO-8859-1), trimmed
	Spec         []byte      // ESPECI, share specification ("PN      N2"), trimmed
	Term         []byte      // PRAZOT, forward-market term in days, trimmed
	Currency     []byte      // MODREF, trimmed
	Open         int64       // PREABE, hundredths
	High         int64       // PREMAX, hundredths
	Low          int64       // PREMIN, hundredths
	Avg          int64       // PREMED, hundredths
	Close        int64       // PREULT, hundredths
	BestBid      int64       // PREOFC, hundredths
	BestAsk      int64       // PREOFV, hundredths
	Trades       int64       // TOTNEG, number of trades
	Quantity     int64       // QUATOT, securities traded
	Volume       int64       // VOLTOT, hundredths of the currency
	Strike       int64       // PREEXE, hundredths (options, forwards)
	StrikeAdjust byte        // INDOPC
	Expiry       engine.Date // DATVEN; NoDate when zero
	Factor       int64       // FATCOT, quotation factor (1 or 1000), >= 1
	StrikePoints int64       // PTOEXE, 1e-6 points
	ISIN         []byte      // CODISI
	Distribution int         // DISMES
}

// Header is the header record (type 00).
type Header struct {
	File      string      // NOME-DO-ARQUIVO, "COTAHIST.2021"
	Origin    string      // CODIGO-DA-ORIGEM, "BOVESPA"
	Generated engine.Date // DATA-DA-GERACAO-DO-ARQUIVO
}

// FieldError is a malformed field: Column is 1-based, as in the layout.
type FieldError struct {
	Column int
	Field  string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("column %d (%s): %s %q", e.Column, e.Field, e.Reason, e.Value)
}

func fieldErr(line []byte, from, to int, field, reason string) *FieldError {
	v := ""
	if to <= len(line) {
		v = string(line[from-1 : to])
	}
	return &FieldError{Column: from, Field: field, Value: v, Reason: reason}
}

// num parses the unsigned zero-padded decimal at 1-based columns from..to.
// Whole groups of eight digits are converted eight at a time; anything
// unusual (leading blanks, a bad byte) takes the byte-by-byte path, which
// also names the offending column.
func num(line []byte, from, to int, field string) (int64, error) {
	b := line[from-1 : to]
	head := len(b) % 8
	var v uint64
	for i := 0; i < head; i++ {
		c := b[i] - '0'
		if c > 9 {
			return numSlow(line, from, to, field)
		}
		v = v*10 + uint64(c)
	}
	for i := head; i < len(b); i += 8 {
		x, ok := digits8(b[i : i+8])
		if !ok {
			return numSlow(line, from, to, field)
		}
		v = v*100000000 + x
	}
	return int64(v), nil
}

// digits8 converts eight ASCII digits (SWAR), reporting false when one of
// them is not a digit.
func digits8(b []byte) (uint64, bool) {
	x := binary.LittleEndian.Uint64(b)
	// Every byte in '0'..'9': high nibble 3 and low nibble + 6 without carry.
	if x&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 || (x+0x0606060606060606)&0xF0F0F0F0F0F0F0F0 != 0x3030303030303030 {
		return 0, false
	}
	x -= 0x3030303030303030
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	x = (x*10000 + x>>32) & 0x00000000FFFFFFFF
	return x, true
}

func numSlow(line []byte, from, to int, field string) (int64, error) {
	var v int64
	for i := from - 1; i < to; i++ {
		c := line[i]
		if c < '0' || c > '9' {
			if c == ' ' && v == 0 {
				continue // leading blanks are tolerated
			}
			return 0, &FieldError{Column: i + 1, Field: field, Value: string(line[from-1 : to]), Reason: "not a number"}
		}
		v = v*10 + int64(c-'0')
	}
	return v, nil
}

// date parses YYYYMMDD at columns from..to (8 wide). All zeros is NoDate
// when allowZero.
func date(line []byte, from int, field string, allowZero bool) (engine.Date, error) {
	b := line[from-1 : from+7]
	var y, m, d int
	for i, c := range b {
		if c < '0' || c > '9' {
			return engine.NoDate, &FieldError{Column: from + i, Field: field, Value: string(b), Reason: "not a date"}
		}
		v := int(c - '0')
		switch {
		case i < 4:
			y = y*10 + v
		case i < 6:
			m = m*10 + v
		default:
			d = d*10 + v
		}
	}
	if allowZero && y == 0 && m == 0 && d == 0 {
		return engine.NoDate, nil
	}
	if y < 1900 || m < 1 || m > 12 || d < 1 || d > engine.DaysIn(y, m) {
		return engine.NoDate, &FieldError{Column: from, Field: field, Value: string(b), Reason: "not a date"}
	}
	return engine.CivilDate(y, m, d), nil
}

func trim(b []byte) []byte {
	n := len(b)
	for n > 0 && b[n-1] == ' ' {
		n--
	}
	return b[:n]
}

// RecordType returns TIPREG of line, or -1 when it is not two digits.
func RecordType(line []byte) int {
	if len(line) < 2 || line[0] < '0' || line[0] > '9' || line[1] < '0' || line[1] > '9' {
		return -1
	}
	return int(line[0]-'0')*10 + int(line[1]-'0')
}

// ParseRecord parses a quote record (type 01) of exactly RecordLen bytes,
// line end removed, into r. It checks every field; errors are *FieldError.
// r's byte slices alias line.
func ParseRecord(line []byte, r *Record) error {
	if len(line) != RecordLen {
		return &FieldError{Column: min(len(line), RecordLen) + 1, Field: "record", Value: "", Reason: fmt.Sprintf("record is %d characters long, want %d:", len(line), RecordLen)}
	}
	if RecordType(line) != TypeQuote {
		return fieldErr(line, 1, 2, "TIPREG", "not a quote record")
	}
	var err error
	if r.Date, err = date(line, 3, "DATPRE", false); err != nil {
		return err
	}
	bdi, err := num(line, 11, 12, "CODBDI")
	if err != nil {
		return err
	}
	r.BDI = int(bdi)
	r.Ticker = trim(line[12:24])
	if len(r.Ticker) == 0 {
		return fieldErr(line, 13, 24, "CODNEG", "empty ticker")
	}
	for i, c := range r.Ticker {
		if c <= ' ' || c >= 0x7f {
			return &FieldError{Column: 13 + i, Field: "CODNEG", Value: string(line[12:24]), Reason: "invalid ticker"}
		}
	}
	mk, err := num(line, 25, 27, "TPMERC")
	if err != nil {
		return err
	}
	r.Market = int(mk)
	r.Name = trim(line[27:39])
	r.Spec = trim(line[39:49])
	r.Term = trim(line[49:52])
	r.Currency = trim(line[52:56])
	p := [...]*int64{&r.Open, &r.High, &r.Low, &r.Avg, &r.Close, &r.BestBid, &r.BestAsk}
	names := [...]string{"PREABE", "PREMAX", "PREMIN", "PREMED", "PREULT", "PREOFC", "PREOFV"}
	for i := range p {
		from := 57 + 13*i
		if *p[i], err = num(line, from, from+12, names[i]); err != nil {
			return err
		}
	}
	if r.Trades, err = num(line, 148, 152, "TOTNEG"); err != nil {
		return err
	}
	if r.Quantity, err = num(line, 153, 170, "QUATOT"); err != nil {
		return err
	}
	if r.Volume, err = num(line, 171, 188, "VOLTOT"); err != nil {
		return err
	}
	if r.Strike, err = num(line, 189, 201, "PREEXE"); err != nil {
		return err
	}
	r.StrikeAdjust = line[201]
	if r.Expiry, err = date(line, 203, "DATVEN", true); err != nil {
		return err
	}
	if r.Factor, err = num(line, 211, 217, "FATCOT"); err != nil {
		return err
	}
	if r.Factor < 1 {
		return fieldErr(line, 211, 217, "FATCOT", "quotation factor below 1")
	}
	if r.StrikePoints, err = num(line, 218, 230, "PTOEXE"); err != nil {
		return err
	}
	r.ISIN = trim(line[230:242])
	dm, err := num(line, 243, 245, "DISMES")
	if err != nil {
		return err
	}
	r.Distribution = int(dm)
	return nil
}

// ParseHeader parses a header record (type 00).
func ParseHeader(line []byte) (Header, error) {
	if len(line) != RecordLen {
		return Header{}, &FieldError{Column: 1, Field: "header", Reason: fmt.Sprintf("header is %d characters long, want %d:", len(line), RecordLen)}
	}
	if RecordType(line) != TypeHeader {
		return Header{}, fieldErr(line, 1, 2, "TIPREG", "first record is not a header (00)")
	}
	name := string(trim(line[2:15]))
	if len(name) != 13 || name[:9] != "COTAHIST." {
		return Header{}, fieldErr(line, 3, 15, "NOME-DO-ARQUIVO", "want COTAHIST.YYYY")
	}
	if _, err := num(line, 12, 15, "NOME-DO-ARQUIVO"); err != nil {
		return Header{}, err
	}
	origin := string(trim(line[15:23]))
	if origin != "BOVESPA" {
		return Header{}, fieldErr(line, 16, 23, "CODIGO-DA-ORIGEM", "want BOVESPA")
	}
	gen, err := date(line, 24, "DATA-DA-GERACAO-DO-ARQUIVO", false)
	if err != nil {
		return Header{}, err
	}
	return Header{File: name, Origin: origin, Generated: gen}, nil
}

// ParseTrailer parses a trailer record (type 99) and returns its record
// count (TOTAL-DE-REGISTROS, header and trailer included).
func ParseTrailer(line []byte) (int64, error) {
	if len(line) != RecordLen {
		return 0, &FieldError{Column: 1, Field: "trailer", Reason: fmt.Sprintf("trailer is %d characters long, want %d:", len(line), RecordLen)}
	}
	if RecordType(line) != TypeTrailer {
		return 0, fieldErr(line, 1, 2, "TIPREG", "not a trailer (99)")
	}
	if string(line[2:11]) != "COTAHIST." {
		return 0, fieldErr(line, 3, 15, "NOME-DO-ARQUIVO", "want COTAHIST.YYYY")
	}
	return num(line, 32, 42, "TOTAL-DE-REGISTROS")
}
