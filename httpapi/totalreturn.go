package httpapi

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// Total return (addition, issue 29): GET /quotes/{ticker}/total-return and
// POST /quotes/total-return. One item per session of the window,
// {date, close_price, total_return_index, cash_value}: the index is 1 on
// the first session and reinvests the cash of each ex-date at the
// theoretical ex price (engine.Dataset.AppendTotalReturn; docs/api.md,
// "Total return").

const (
	routeTotalReturn      = "/quotes/:ticker/total-return"
	routeTotalReturnBatch = "/quotes/total-return"
)

// Total-return methods.
const (
	methodGross = "gross"
	methodNet   = "net"
)

var trMethods = []string{methodGross, methodNet}

const (
	trStartDesc  = "first session of the window (its index is 1.0); default 365 days before end_date"
	trEndDesc    = "last session of the window; default the last complete session the plan sees"
	trMethodDesc = "gross: the cash events' value (declared_value + monetary_correction); net: their net_value (interest on equity less the income tax withheld at the rate in force on its prior_ex_date); default gross"
)

var trParams = []Param{
	{Name: "ticker", In: InPath, Type: TypeString, Required: true, Pattern: `^[A-Za-z0-9]{3,6}$`, Example: "ITAG3",
		Desc: "ticker (PETR4) of a share, unit, BDR or listed fund, matched ignoring case; a macro series (SELIC, IPCA, CDI, USD...) has no total return (404)"},
	{Name: "start_date", In: InQuery, Type: TypeDate, Desc: trStartDesc},
	{Name: "end_date", In: InQuery, Type: TypeDate, Desc: trEndDesc},
	{Name: "method", In: InQuery, Type: TypeEnum, Enum: trMethods, Default: methodGross, Desc: trMethodDesc},
	formatParam,
}

// totalReturnBody declares the body of POST /quotes/total-return.
var totalReturnBody = Param{Name: "TotalReturnRequest", Type: TypeObject, Fields: []Param{
	{Name: "tickers", Type: TypeArray, Required: true, Min: 1, Max: MaxTickers, Noun: "tickers",
		Items: &Param{Type: TypeString, Pattern: tickerPattern},
		Desc:  "tickers (upper case); a repeated ticker is answered once; an unknown one, or a macro series (SELIC, IPCA, CDI, USD...), answers its 404 error"},
	{Name: "start_date", Type: TypeDate, Desc: trStartDesc},
	{Name: "end_date", Type: TypeDate, Desc: trEndDesc},
	{Name: "method", Type: TypeEnum, Enum: trMethods, Default: methodGross, Desc: trMethodDesc},
}}

// trOpts is one validated total-return request.
type trOpts struct {
	start, end engine.Date
	net        bool
	v          view
}

// trOptions fills the window's defaults (the last session the plan sees,
// and 365 days before it) and checks it: daily series have no window
// limit (as the daily quote series). An eod key's window is its one
// session (eodHistory): start_date and end_date are refused.
func (a *API) trOptions(c *call, start, end engine.Date, method string) (trOpts, error) {
	o := trOpts{start: start, end: end, net: method == methodNet, v: a.view(c)}
	if o.v.eod {
		var sent []string
		if start.Valid() {
			sent = append(sent, "start_date")
		}
		if end.Valid() {
			sent = append(sent, "end_date")
		}
		return o, eodHistory(c, sent)
	}
	if !o.end.Valid() {
		o.end = max(o.v.lastDate(), o.start) // a start_date ahead, end_date not sent: an empty series
	}
	if !o.start.Valid() {
		o.start = o.end - defaultDaysBack
	}
	if o.start > o.end {
		return o, badRequest("start_date %s is after end_date %s", o.start, o.end)
	}
	return o, nil
}

// totalReturnSingle serves GET /quotes/{ticker}/total-return.
func (a *API) totalReturnSingle(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	t := strings.ToUpper(ps.ByName("ticker")) // path identifiers ignore case
	if !validTicker(t) {
		q.fail(badRequest("ticker %q: want 4 letters or digits and up to 2 digits (e.g. PETR4)", ps.ByName("ticker")))
	}
	start := q.date("start_date")
	end := q.date("end_date")
	method := q.enum("method")
	if err := q.err(); err != nil {
		return nil, err
	}
	o, err := a.trOptions(c, start, end, method)
	if err != nil {
		return nil, err
	}
	as, ok := trAsset(c.ds, t)
	if !ok {
		return nil, notFound("Ticker not found")
	}
	return a.appendTotalReturn(c, dst, as, &o), nil
}

// totalReturnBatch serves POST /quotes/total-return: an object keyed by
// ticker, each ticker once, an unknown one answering its 404 object, as
// POST /quotes.
func (a *API) totalReturnBatch(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	q := &c.s.quotes
	method, err := parseTotalReturnRequest(c.body, q)
	if err != nil {
		return nil, err
	}
	o, err := a.trOptions(c, q.Start, q.End, method)
	if err != nil {
		return nil, err
	}
	if c.s.seen == nil {
		c.s.seen = make(map[string]struct{}, MaxTickers)
	}
	defer clear(c.s.seen)
	dst = append(dst, '{')
	n := 0
	for _, b := range q.Tickers {
		as, ok := trAsset(c.ds, string(b))
		t := tickerString(as, b)
		if _, dup := c.s.seen[t]; dup {
			continue // each ticker answers once
		}
		c.s.seen[t] = struct{}{}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendString(dst, t)
		dst = append(dst, ':')
		if !ok {
			dst = append(dst, tickerNotFound...)
			continue
		}
		dst = a.appendTotalReturn(c, dst, as, &o)
		if dst = c.flush(dst); c.gone() {
			break
		}
	}
	return append(dst, '}'), nil
}

// trAsset returns the asset of a ticker that has a total return: a
// security's (a macro series has none).
func trAsset(ds *engine.Dataset, t string) (*engine.Asset, bool) {
	as, ok := ds.Asset(t)
	if !ok || as.StockType == engine.ClassMacro {
		return nil, false
	}
	return as, true
}

// appendTotalReturn appends one ticker's total-return series for o as a
// JSON array: the sessions of the window the plan sees (the live
// session's once it is over, as the daily quote series shows it); for an
// eod key, its one session (eodSession).
//
// The series comes from the total-return index the Dataset keeps
// (engine.Dataset.AppendTotalReturnRows: each row's cash and base step,
// gross and net, built once at load), the live session's bar computed on
// top: the rows seriesBars would give, without making the bars.
func (a *API) appendTotalReturn(c *call, dst []byte, as *engine.Asset, o *trOpts) []byte {
	start, end := o.start, o.end
	if o.v.eod {
		d := o.v.eodSession(as)
		if !d.Valid() {
			return append(dst, "[]"...)
		}
		start, end = d, d
	}
	end = min(end, o.v.lastDate())
	lo, hi := as.DayRange(start, end)
	var live *engine.Bar
	if b, ok := o.v.liveDay(as, start, end, false); ok {
		live = &b
	}
	c.s.tr = c.ds.AppendTotalReturnRows(c.s.tr[:0], as, lo, hi, live, o.net)
	return appendTotalReturnPoints(dst, c.s.tr)
}

// appendTotalReturnPoints appends points as a JSON array.
func appendTotalReturnPoints(dst []byte, points []engine.TRPoint) []byte {
	dst = append(dst, '[')
	for i := range points {
		p := &points[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"date":`...)
		dst = appendDay(dst, p.Date)
		dst = append(dst, `,"close_price":`...)
		dst = appendNum(dst, p.Close)
		dst = append(dst, `,"total_return_index":`...)
		dst = engine.AppendNum(dst, p.Index) // the same text as appendNum, without its test for cents (an index never is)
		if p.Cash == 0 {
			dst = append(dst, `,"cash_value":0}`...) // most sessions
			continue
		}
		dst = append(dst, `,"cash_value":`...)
		dst = appendNum(dst, p.Cash)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// parseTotalReturnRequest decodes body strictly into q (its Tickers, Start
// and End; reset first, the Tickers array reused) through
// totalReturnBody, and returns the method.
func parseTotalReturnRequest(body []byte, q *quotesRequest) (string, error) {
	q.reset()
	method := methodGross
	tickers := q.Tickers
	d := bodyDecoder{s: jsonScanner{b: body}}
	d.begin(&totalReturnBody)
	for d.next() {
		switch d.name() {
		case "tickers":
			tickers = q.decodeTickers(&d, tickers)
		case "start_date":
			q.Start = engine.NoDate
			if !d.null() {
				q.Start = d.date()
			}
		case "end_date":
			q.End = engine.NoDate
			if !d.null() {
				q.End = d.date()
			}
		case "method":
			method = methodGross
			if d.null() {
				continue
			}
			switch v := d.str(); string(v) {
			case methodGross:
				method = methodGross
			case methodNet:
				method = methodNet
			default:
				d.invalid("%q: want gross or net", v)
			}
		default:
			d.unhandled()
		}
	}
	q.Tickers = tickers
	if err := d.end(); err != nil {
		return "", err
	}
	if !q.hasTickers || len(tickers) == 0 {
		return "", fieldErr("tickers", "required: 1 to %d tickers", MaxTickers)
	}
	for _, t := range tickers {
		if !validTicker(string(t)) {
			return "", fieldErr("tickers", "%q: want 4 letters or digits and up to 2 digits (e.g. PETR4)", t)
		}
	}
	return method, nil
}
