package httpapi

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
)

// The bodies of the push endpoints (admin.go) are batches of lines, in one
// of two forms, by Content-Type:
//
//   - NDJSON (application/x-ndjson, the default): one JSON object per
//     line, decoded strictly through the line's declaration (liveTradeLine,
//     liveBarLine) as bodies are: unknown fields and wrong types are
//     refused, null is absent. Blank lines are skipped.
//   - CSV (text/csv): a header row naming the declaration's fields, in any
//     order (a field left out is absent from every row), then one row per
//     line; an empty cell is absent.
//
// Both forms give each field as a cell (its text and, from JSON, its
// type), and one parser per kind of line reads the cells, so the rules
// are the same whatever the form. Every error names the line (counted
// from 1, the CSV header being line 1) and the field; the first one
// refuses the batch whole.

// maxQuantity bounds the quantities and trade counts of a line.
const maxQuantity = 1_000_000_000_000

// Bounds of a line's time, unix milliseconds: a time outside them is a
// mistake (unix seconds sent for milliseconds fall before minTimeMs).
const (
	minTimeMs = 946684800000  // 2000-01-01T00:00:00Z
	maxTimeMs = 4102444800000 // 2100-01-01T00:00:00Z
)

// tradeIDPattern is the form of a trade's id (documentation; validTradeID
// checks it).
const tradeIDPattern = `^[0-9A-Za-z._:-]{1,64}$`

// liveTickerPattern is the form of a ticker of the push feed, as B3
// writes it (engine.ValidTicker).
const liveTickerPattern = `^[A-Z0-9]{4}[0-9]{0,2}$`

const liveTimeDesc = "RFC 3339 with Z or an offset (2025-02-17T10:05:12.345-03:00), or unix milliseconds; from 2000 to 2100"

// liveTradeLine declares a line of POST /admin/live/trades.
var liveTradeLine = Param{Name: "LiveTradeLine", Type: TypeObject,
	Desc: "One trade of the live session, or its cancellation: a line of POST /admin/live/trades (NDJSON, or a CSV row under a header naming these fields).",
	Fields: []Param{
		{Name: "ticker", Type: TypeString, Required: true, Pattern: liveTickerPattern, Desc: "the ticker as B3 writes it, upper case (PETR4)"},
		{Name: "time", Type: TypeTime, Required: true, Desc: "when the trade was made: " + liveTimeDesc},
		{Name: "price", Type: TypeNumber, Required: true, Desc: "BRL per share, above 0"},
		{Name: "quantity", Type: TypeInteger, Required: true, Min: 1, Max: maxQuantity, Desc: "shares traded"},
		{Name: "id", Type: TypeString, Required: true, Pattern: tradeIDPattern, Desc: "the trade's id, unique per ticker and day (B3's trade number)"},
		{Name: "action", Type: TypeEnum, Enum: []string{"new", "cancel"}, Default: "new",
			Desc: "new: a trade; cancel: cancels the trade of this id (its other fields repeat the trade's, as B3's trade files carry them)"},
		{Name: "session", Type: TypeEnum, Enum: []string{"regular", "after"}, Default: "regular",
			Desc: "regular: the regular session (its opening and closing calls included); after: the after-market (B3 session 6)"},
	}}

// liveBarLine declares a line of POST /admin/live/bars.
var liveBarLine = Param{Name: "LiveBarLine", Type: TypeObject,
	Desc: "One ticker's whole 1-minute bar of the live session: a line of POST /admin/live/bars (NDJSON, or a CSV row under a header naming these fields). It replaces what the session holds for that ticker and minute.",
	Fields: []Param{
		{Name: "ticker", Type: TypeString, Required: true, Pattern: liveTickerPattern, Desc: "the ticker as B3 writes it, upper case (PETR4)"},
		{Name: "time", Type: TypeTime, Required: true, Desc: "the minute's start (seconds and milliseconds zero): " + liveTimeDesc},
		{Name: "open", Type: TypeNumber, Desc: "BRL per share, above 0 (required unless removed)"},
		{Name: "high", Type: TypeNumber, Desc: "BRL per share, at least open, close and low (required unless removed)"},
		{Name: "low", Type: TypeNumber, Desc: "BRL per share, above 0, at most open, close and high (required unless removed)"},
		{Name: "close", Type: TypeNumber, Desc: "BRL per share, above 0 (required unless removed)"},
		{Name: "volume", Type: TypeNumber, Desc: "BRL traded in the minute, 0 or more (required unless removed)"},
		{Name: "quantity", Type: TypeInteger, Min: 0, Max: maxQuantity, Desc: "shares traded in the minute (required unless removed)"},
		{Name: "trades", Type: TypeInteger, Min: 0, Max: maxQuantity, Desc: "trades in the minute (required unless removed)"},
		{Name: "removed", Type: TypeBoolean, Default: false,
			Desc: "true: the minute has no trade left (every one cancelled) and is taken out of the session; the other fields but ticker and time may then be left out"},
	}}

// cell is one field's value in a line: its text and, from JSON, its type.
type cell struct {
	text []byte // aliases the body (a JSON string with escapes: a copy)
	kind byte   // from JSON: 's' string, 'n' number, 'b' boolean; 0 from CSV (any)
}

// lineError is the 400 of a bad line.
func lineError(line int, field, format string, args ...any) error {
	msg := fmt.Sprintf(format, truncateEchoes(format, args)...)
	if field == "" {
		return badRequest("request body, line %d: %s", line, msg)
	}
	return badRequest("request body, line %d: field %q: %s", line, field, msg)
}

// fieldError is a bad field of a line, before the line is known.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %s", e.field, e.msg) }

func badField(p *Param, format string, args ...any) error {
	return &fieldError{p.Name, fmt.Sprintf(format, truncateEchoes(format, args)...)}
}

// lineParser reads one line's cells, field by field (set, the field's
// index in decl.Fields), then checks the line (done) and appends it.
type lineParser interface {
	decl() *Param
	// reset starts a line.
	reset()
	// set reads field i from v.
	set(i int, v cell) error
	// done checks the line read (has: bit i for each field set) and
	// appends it to the batch.
	done(has uint32) error
}

// parseLines parses body, NDJSON or CSV, through p: nil, or the first
// bad line's 400.
func parseLines(body []byte, csvForm bool, p lineParser) error {
	if csvForm {
		return parseCSVLines(body, p)
	}
	return parseNDJSON(body, p)
}

// parseNDJSON reads one JSON object per line. A field given twice in a
// line is refused, as in any JSON body.
func parseNDJSON(body []byte, p lineParser) error {
	decl := p.decl()
	for line := 1; len(body) > 0; line++ {
		var b []byte
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			b, body = body[:i], body[i+1:]
		} else {
			b, body = body, nil
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		p.reset()
		var has uint32
		d := bodyDecoder{s: jsonScanner{b: b}}
		d.begin(decl)
		for d.next() {
			i := fieldIndex(decl, d.stack[0].field)
			v, ok := scalar(&d)
			if !ok || v.text == nil { // an error, or null: absent
				continue
			}
			if err := p.set(i, v); err != nil {
				return fieldLineError(line, err)
			}
			has |= 1 << i
		}
		if err := d.end(); err != nil {
			msg := err.Error()
			var e *Error
			if errors.As(err, &e) {
				msg = e.Message
			}
			return badRequest("request body, line %d: %s", line, strings.TrimPrefix(msg, "request body: "))
		}
		if err := p.done(has); err != nil {
			return fieldLineError(line, err)
		}
	}
	return nil
}

// fieldLineError names line in err, a *fieldError or a message.
func fieldLineError(line int, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return lineError(line, fe.field, "%s", fe.msg)
	}
	return lineError(line, "", "%s", err.Error())
}

// fieldIndex returns the index of f in decl.Fields.
func fieldIndex(decl *Param, f *Param) int {
	for i := range decl.Fields {
		if &decl.Fields[i] == f {
			return i
		}
	}
	panic("BUG: a field outside its declaration")
}

// scalar reads the value of the field d moved to: a string, a number or a
// boolean (its text, as written), or null (text nil); false after an
// error (an object or an array is one).
func scalar(d *bodyDecoder) (cell, bool) {
	if d.err != nil {
		return cell{}, false
	}
	s := &d.s
	switch c := s.peek(); {
	case c == '"':
		b := d.str()
		if d.err != nil {
			return cell{}, false
		}
		if b == nil {
			b = []byte{}
		}
		return cell{text: b, kind: 's'}, true
	case c == '-' || '0' <= c && c <= '9':
		start := s.i
		if d.number(); d.err != nil {
			return cell{}, false
		}
		return cell{text: s.b[start:s.i], kind: 'n'}, true
	case c == 't' || c == 'f':
		start := s.i
		if _, err := s.boolean(); err == nil {
			return cell{text: s.b[start:s.i], kind: 'b'}, true
		}
	case c == 'n':
		if s.null() {
			return cell{}, true
		}
	}
	d.typeErr()
	return cell{}, false
}

// parseCSVLines reads a header row naming the declaration's fields, then
// one row per line.
func parseCSVLines(body []byte, p lineParser) error {
	decl := p.decl()
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	r := csv.NewReader(bytes.NewReader(body))
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return badRequest("request body: empty; want a CSV header row naming the fields (%s)", fieldNames(decl))
	}
	if err != nil {
		return csvError(err)
	}
	hline, _ := r.FieldPos(0)
	cols := make([]int, len(header)) // field index of each column
	var named uint32
	for c, name := range header {
		i := -1
		for j := range decl.Fields {
			if decl.Fields[j].Name == name {
				i = j
			}
		}
		switch {
		case i < 0:
			return lineError(hline, "", "unknown column %q (accepted: %s)", name, fieldNames(decl))
		case named&(1<<i) != 0:
			return lineError(hline, "", "column %q is given more than once", name)
		}
		named |= 1 << i
		cols[c] = i
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(err)
		}
		line, _ := r.FieldPos(0)
		p.reset()
		var has uint32
		for c, v := range rec {
			if v == "" {
				continue
			}
			if err := p.set(cols[c], cell{text: []byte(v)}); err != nil {
				return fieldLineError(line, err)
			}
			has |= 1 << cols[c]
		}
		if err := p.done(has); err != nil {
			return fieldLineError(line, err)
		}
	}
}

// csvError is the 400 of a malformed CSV body.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return badRequest("request body, line %d: malformed CSV: %v (at column %d)", pe.Line, pe.Err, pe.Column)
	}
	return badRequest("request body: malformed CSV: %v", err)
}

// The readers of cells, shared by the kinds of lines: each checks the
// cell's JSON type (a CSV cell may be any) and parses its text.

func cellText(p *Param, v cell) (string, error) {
	if v.kind != 0 && v.kind != 's' {
		return "", badField(p, "want a string, got %s", kindName(v.kind))
	}
	if !utf8.Valid(v.text) {
		return "", badField(p, "not UTF-8")
	}
	return string(v.text), nil
}

func kindName(k byte) string {
	switch k {
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "a value"
}

// cellNumber reads a number, written as JSON writes one (a decimal point,
// no thousands separator, an optional exponent).
func cellNumber(p *Param, v cell) (float64, error) {
	if v.kind != 0 && v.kind != 'n' {
		return 0, badField(p, "want a number, got %s", kindName(v.kind))
	}
	s := jsonScanner{b: v.text}
	f, err := s.number()
	if err != nil || s.i != len(v.text) {
		return 0, badField(p, "%q: want a number such as 12.34", v.text)
	}
	return f, nil
}

// cellInteger reads a whole number in p's [Min, Max].
func cellInteger(p *Param, v cell) (int64, error) {
	if v.kind != 0 && v.kind != 'n' {
		return 0, badField(p, "want a number, got %s", kindName(v.kind))
	}
	n, err := strconv.ParseInt(string(v.text), 10, 64)
	if err != nil || n < int64(p.Min) || n > int64(p.Max) {
		return 0, badField(p, "%q: want a whole number from %d to %d", v.text, p.Min, p.Max)
	}
	return n, nil
}

// cellPrice reads a price: a number above 0.
func cellPrice(p *Param, v cell) (engine.Num, error) {
	f, err := cellNumber(p, v)
	if err != nil {
		return 0, err
	}
	if !(f > 0) || math.IsInf(f, 0) {
		return 0, badField(p, "%s: want a price above 0", v.text)
	}
	return engine.Num(f), nil
}

// cellEnum reads one of p.Enum, matched exactly.
func cellEnum(p *Param, v cell) (int, error) {
	s, err := cellText(p, v)
	if err != nil {
		return 0, err
	}
	for i, e := range p.Enum {
		if s == e {
			return i, nil
		}
	}
	return 0, badField(p, "%q: want %s", s, strings.Join(p.Enum, " or "))
}

// cellBool reads true or false.
func cellBool(p *Param, v cell) (bool, error) {
	if v.kind != 0 && v.kind != 'b' {
		return false, badField(p, "want true or false, got %s", kindName(v.kind))
	}
	switch string(v.text) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badField(p, "%q: want true or false", v.text)
}

// cellTicker reads a ticker as B3 writes it.
func cellTicker(p *Param, v cell) (string, error) {
	s, err := cellText(p, v)
	if err != nil {
		return "", err
	}
	if !engine.ValidTicker(s) {
		return "", badField(p, "%q: want a ticker as B3 writes it: 4 letters or digits and up to 2 digits, upper case (PETR4)", s)
	}
	return s, nil
}

// cellTime reads an instant: RFC 3339 with Z or an offset, or unix
// milliseconds (a JSON number, or digits in CSV). It returns unix
// milliseconds.
func cellTime(p *Param, v cell) (int64, error) {
	var ms int64
	switch {
	case v.kind == 'n' || v.kind == 0 && len(v.text) > 0 && allDigits(v.text):
		n, err := strconv.ParseInt(string(v.text), 10, 64)
		if err != nil {
			return 0, badField(p, "%s: want whole unix milliseconds", v.text)
		}
		ms = n
	case v.kind == 0 || v.kind == 's':
		t, err := time.Parse(time.RFC3339Nano, string(v.text))
		if err != nil {
			return 0, badField(p, "%q: want RFC 3339 with Z or an offset (2025-02-17T10:05:12.345-03:00), or unix milliseconds", v.text)
		}
		ms = t.UnixMilli()
	default:
		return 0, badField(p, "want an RFC 3339 time or unix milliseconds, got %s", kindName(v.kind))
	}
	if ms < minTimeMs || ms >= maxTimeMs {
		return 0, badField(p, "%s: want a time from 2000 to 2100 (unix milliseconds, not seconds)", v.text)
	}
	return ms, nil
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validTradeID reports whether s has the form of tradeIDPattern.
func validTradeID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '_' || c == ':' || c == '-' {
			continue
		}
		return false
	}
	return true
}

// missing returns the first field of decl among req (bits) not in has.
func missing(decl *Param, req, has uint32) error {
	for i := range decl.Fields {
		if req&(1<<i) != 0 && has&(1<<i) == 0 {
			return &fieldError{decl.Fields[i].Name, "required"}
		}
	}
	return nil
}

// requiredFields returns the bits of decl's required fields.
func requiredFields(decl *Param) uint32 {
	var req uint32
	for i := range decl.Fields {
		if decl.Fields[i].Required {
			req |= 1 << i
		}
	}
	return req
}

// The fields of a trade line, by index in liveTradeLine.Fields.
const (
	tradeTicker = iota
	tradeTime
	tradePrice
	tradeQuantity
	tradeID
	tradeAction
	tradeSession
)

// tradeParser reads trade lines into trades.
type tradeParser struct {
	trades []engine.LiveTrade
	cur    engine.LiveTrade
}

var tradeRequired = requiredFields(&liveTradeLine)

func (t *tradeParser) decl() *Param { return &liveTradeLine }
func (t *tradeParser) reset()       { t.cur = engine.LiveTrade{} }

func (t *tradeParser) set(i int, v cell) (err error) {
	p := &liveTradeLine.Fields[i]
	c := &t.cur
	switch i {
	case tradeTicker:
		c.Ticker, err = cellTicker(p, v)
	case tradeTime:
		c.Time, err = cellTime(p, v)
	case tradePrice:
		c.Price, err = cellPrice(p, v)
	case tradeQuantity:
		c.Quantity, err = cellInteger(p, v)
	case tradeID:
		if c.ID, err = cellText(p, v); err == nil && !validTradeID(c.ID) {
			err = badField(p, "%q: want 1 to 64 letters, digits or . _ : -", c.ID)
		}
	case tradeAction:
		var k int
		k, err = cellEnum(p, v)
		c.Cancel = k == 1
	case tradeSession:
		var k int
		k, err = cellEnum(p, v)
		c.AfterMarket = k == 1
	default:
		panic(fmt.Sprintf("BUG: trade line field %q is declared but not read", p.Name))
	}
	return err
}

func (t *tradeParser) done(has uint32) error {
	if err := missing(&liveTradeLine, tradeRequired, has); err != nil {
		return err
	}
	t.trades = append(t.trades, t.cur)
	return nil
}

// parseTrades parses a body of trade lines (CSV when csvForm).
func parseTrades(body []byte, csvForm bool) ([]engine.LiveTrade, error) {
	var p tradeParser
	err := parseLines(body, csvForm, &p)
	return p.trades, err
}

// The fields of a bar line, by index in liveBarLine.Fields.
const (
	barTicker = iota
	barTime
	barOpen
	barHigh
	barLow
	barClose
	barVolume
	barQuantity
	barTrades
	barRemoved
)

// barParser reads bar lines into bars.
type barParser struct {
	bars []engine.LiveBar
	cur  engine.LiveBar
}

var (
	barRequired = requiredFields(&liveBarLine)
	// barValues are the fields a bar needs unless removed.
	barValues uint32 = 1<<barOpen | 1<<barHigh | 1<<barLow | 1<<barClose | 1<<barVolume | 1<<barQuantity | 1<<barTrades
)

func (b *barParser) decl() *Param { return &liveBarLine }
func (b *barParser) reset()       { b.cur = engine.LiveBar{} }

func (b *barParser) set(i int, v cell) (err error) {
	p := &liveBarLine.Fields[i]
	c := &b.cur
	switch i {
	case barTicker:
		c.Ticker, err = cellTicker(p, v)
	case barTime:
		var ms int64
		if ms, err = cellTime(p, v); err == nil {
			if ms%60000 != 0 {
				err = badField(p, "%s: want the start of a minute (seconds and milliseconds zero)", v.text)
			}
			c.Time = ms / 1000
		}
	case barOpen:
		c.Open, err = cellPrice(p, v)
	case barHigh:
		c.High, err = cellPrice(p, v)
	case barLow:
		c.Low, err = cellPrice(p, v)
	case barClose:
		c.Close, err = cellPrice(p, v)
	case barVolume:
		var f float64
		if f, err = cellNumber(p, v); err == nil {
			if !(f >= 0) || math.IsInf(f, 0) {
				err = badField(p, "%s: want 0 or more BRL", v.text)
			}
			c.Volume = engine.Num(f)
		}
	case barQuantity:
		c.Quantity, err = cellInteger(p, v)
	case barTrades:
		c.Trades, err = cellInteger(p, v)
	case barRemoved:
		c.Removed, err = cellBool(p, v)
	default:
		panic(fmt.Sprintf("BUG: bar line field %q is declared but not read", p.Name))
	}
	return err
}

func (b *barParser) done(has uint32) error {
	if err := missing(&liveBarLine, barRequired, has); err != nil {
		return err
	}
	c := &b.cur
	if c.Removed {
		*c = engine.LiveBar{Ticker: c.Ticker, Time: c.Time, Removed: true}
	} else {
		if err := missing(&liveBarLine, barValues, has); err != nil {
			return err
		}
		switch {
		case c.High < c.Open || c.High < c.Close || c.High < c.Low:
			return &fieldError{"high", fmt.Sprintf("%v is below open, low or close", float64(c.High))}
		case c.Low > c.Open || c.Low > c.Close:
			return &fieldError{"low", fmt.Sprintf("%v is above open or close", float64(c.Low))}
		}
	}
	b.bars = append(b.bars, *c)
	return nil
}

// parseBars parses a body of bar lines (CSV when csvForm).
func parseBars(body []byte, csvForm bool) ([]engine.LiveBar, error) {
	var p barParser
	err := parseLines(body, csvForm, &p)
	return p.bars, err
}
