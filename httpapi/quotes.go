package httpapi

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// Quote options.
const (
	dailyInterval   = 86400
	maxIntradayDays = 5 // the intraday window with start_date and end_date
	defaultDaysBack = 365
)

// quoteOpts is one validated quote request (batch or single).
type quoteOpts struct {
	typ      string
	interval int64
	start    engine.Date
	end      engine.Date
	adjusted bool
	v        view
	daily    *dailyCache // the Dataset's encoded daily datapoints (nil: none)
}

// quoteOptions validates a request's options against the plan and fills
// defaults. used* report which restricted options the client sent.
func (a *API) quoteOptions(c *call, typ string, interval int64, start, end engine.Date, adjusted bool) (quoteOpts, error) {
	o := quoteOpts{typ: typ, interval: interval, start: start, end: end, adjusted: adjusted, v: a.view(c), daily: a.info(c.ds).daily}
	if o.v.eod {
		var used []string
		if typ != "" {
			used = append(used, "type")
		}
		if interval != 0 {
			used = append(used, "interval")
		}
		if start.Valid() {
			used = append(used, "start_date")
		}
		if end.Valid() {
			used = append(used, "end_date")
		}
		if err := eodHistory(c, used); err != nil {
			return o, err
		}
		// eod: the previous session's quote.
		o.typ = TypeCurrent
		setCSVForm(c, csvQuotes, csvQuotesCurrent)
		return o, nil
	}
	if o.typ == "" {
		o.typ = TypeHistorical
	}
	if o.typ == TypeCurrent {
		setCSVForm(c, csvQuotes, csvQuotesCurrent)
	}
	if o.typ == TypeChart || o.typ == TypeCurrent {
		return o, nil
	}
	if o.interval == 0 {
		o.interval = dailyInterval
	}
	last := o.v.lastDate()
	if o.interval < dailyInterval {
		// Intraday: the window is at most 5 days.
		today := engine.Date(o.v.cutoff / 86400)
		if !o.end.Valid() {
			o.end = max(today, o.start) // a start_date ahead, end_date not sent: an empty series
		}
		if !o.start.Valid() {
			o.start = o.end
		}
		if o.start > o.end {
			return o, badRequest("start_date %s is after end_date %s", o.start, o.end)
		}
		if o.end-o.start > maxIntradayDays {
			return o, badRequest("intraday window too long: with an interval under 86400 seconds, start_date to end_date may span at most %d days (got %s to %s, %d days)", maxIntradayDays, o.start, o.end, o.end-o.start)
		}
		return o, nil
	}
	if !o.end.Valid() {
		o.end = max(last, o.start) // a start_date ahead, end_date not sent: an empty series
	}
	if !o.start.Valid() {
		o.start = o.end - defaultDaysBack
	}
	if o.start > o.end {
		return o, badRequest("start_date %s is after end_date %s", o.start, o.end)
	}
	return o, nil
}

func joinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := ""
	for i, x := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			out += " and "
		default:
			out += ", "
		}
		out += x
	}
	return out
}

// quotesBatch serves POST /quotes.
func (a *API) quotesBatch(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	q := &c.s.quotes
	if err := parseQuotesRequest(c.body, q, &quotesBody); err != nil {
		return nil, err
	}
	o, err := a.quoteOptions(c, q.Type, q.Interval, q.Start, q.End, q.Adjusted)
	if err != nil {
		return nil, err
	}
	return a.appendBatch(c, dst, q.Tickers, &o)
}

// appendBatch appends the answer of a batch of tickers (POST /quotes, or
// GET /quotes/{t1},{t2}…): an object keyed by ticker, each ticker once.
// The blocks of every ticker are verified before the first byte (a bad
// one is the request's error).
func (a *API) appendBatch(c *call, dst []byte, tickers [][]byte, op *quoteOpts) ([]byte, error) {
	o := *op
	if c.s.seen == nil {
		c.s.seen = make(map[string]struct{}, MaxTickers)
	}
	defer clear(c.s.seen)
	items := c.s.items[:0]
	for _, b := range tickers {
		if _, dup := c.s.seen[string(b)]; dup {
			continue // each ticker answers once
		}
		as, _ := c.ds.Asset(string(b))
		if err := c.ds.CheckAsset(as); err != nil {
			return nil, a.badBlock(c, err)
		}
		t := tickerString(as, b)
		c.s.seen[t] = struct{}{}
		items = append(items, quoteItem{ticker: t, asset: as})
	}
	c.s.items = items
	dst = append(dst, '{')
	if o.typ != TypeCurrent && len(items) >= parallelMin && runtime.GOMAXPROCS(0) > 1 {
		dst = a.appendItemsParallel(c, dst, items, &o)
	} else {
		for i := range items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = a.appendItems(&c.s.bars, dst, items[i:i+1], &o)
			if dst = c.flush(dst); c.gone() {
				break
			}
		}
	}
	return append(dst, '}'), nil
}

// seriesGroup and maxSeriesGroup bound the number of series items each
// of the two encoding goroutines of a large batch takes in one round: the
// first round's, and the most after doubling.
const (
	seriesGroup    = 2
	maxSeriesGroup = 64
)

// roundBytes is the output after which each encoding goroutine of a batch
// stops taking items in a round (it finishes the item it is on).
const roundBytes = 1 << 20

// appendItemsParallel appends the items of a series batch, encoded by two
// goroutines. Each round, this goroutine encodes items [lo, mid) into dst
// and a second one items [mid, hi) into c.s.buf2; each stops early once it
// holds roundBytes, and this goroutine then finishes [lo, mid) one item at
// a time, flushing. The round is written out before the next starts, so a
// request holds at most about 2 × (roundBytes + one item) whatever the
// batch's size. Rounds start at seriesGroup items a side and double while
// they stay small, so that short series do not pay a hand-off each.
func (a *API) appendItemsParallel(c *call, dst []byte, items []quoteItem, o *quoteOpts) []byte {
	o2 := *o // only this path pays for the copy escaping
	done := make(chan int, 1)
	var helperFault any // a fault of the helper goroutine, sent as -1
	g := seriesGroup
	for lo := 0; lo < len(items) && !c.gone(); {
		mid := min(lo+g, len(items))
		hi := min(mid+g, len(items))
		if mid < hi {
			go func() {
				// A fault reading the snapshot's mapped file (cut in
				// place) goes back to the request's goroutine, whose
				// recovery answers it (wrap), as its own would.
				debug.SetPanicOnFault(true)
				defer func() {
					if p := recover(); p != nil {
						if mapfile.Fault(p) == nil {
							panic(p)
						}
						helperFault = p
						done <- -1
					}
				}()
				var k int
				c.s.buf2, k = a.appendItemsUpTo(&c.s.bars2, append(c.s.buf2[:0], ','), items[mid:hi], &o2, roundBytes)
				done <- k
			}()
		}
		if lo > 0 {
			dst = append(dst, ',')
		}
		start := len(dst)
		var j int
		dst, j = a.appendItemsUpTo(&c.s.bars, dst, items[lo:mid], o, start+roundBytes)
		full := lo+j < mid
		for i := lo + j; i < mid; i++ { // stopped early: the rest of [lo, mid), flushing
			dst = append(c.flush(dst), ',')
			dst = a.appendItems(&c.s.bars, dst, items[i:i+1], o)
		}
		next := mid
		if mid < hi {
			k := <-done
			if k < 0 {
				panic(helperFault) // the helper's fault, answered by wrap
			}
			full = full || k < hi-mid
			next = mid + k
			if len(dst)+len(c.s.buf2) >= streamChunk && c.out.streams() {
				c.out.emit(dst) // no copy of the second goroutine's output
				c.out.emit(c.s.buf2)
				dst = dst[:0]
			} else {
				dst = append(dst, c.s.buf2...)
			}
		}
		switch {
		case full:
			g = max(g/2, 1)
		case len(dst)-start < streamChunk/4 && g < maxSeriesGroup:
			g *= 2
		}
		dst = c.flush(dst)
		lo = next
	}
	return dst
}

// appendItemsUpTo appends "ticker":answer pairs of items separated by
// commas until dst holds limit bytes, and returns dst and the number of
// items appended (at least one when items is not empty).
func (a *API) appendItemsUpTo(bars *[]engine.Bar, dst []byte, items []quoteItem, o *quoteOpts, limit int) ([]byte, int) {
	for i := range items {
		if i > 0 {
			if len(dst) >= limit {
				return dst, i
			}
			dst = append(dst, ',')
		}
		dst = a.appendItems(bars, dst, items[i:i+1], o)
	}
	return dst, len(items)
}

// tickerString returns the requested ticker b as a string: the asset's
// ticker or one of its former tickers when b spells it (no copy), else a
// copy of b (an unknown ticker).
func tickerString(as *engine.Asset, b []byte) string {
	if as != nil {
		if as.Ticker == string(b) {
			return as.Ticker
		}
		for _, f := range as.Former {
			if f == string(b) {
				return f
			}
		}
	}
	return string(b)
}

// parallelMin is the number of tickers from which series answers are
// encoded by two goroutines.
const parallelMin = 32

// quoteItem is one distinct requested ticker and its asset (nil: unknown).
type quoteItem struct {
	ticker string
	asset  *engine.Asset
}

// appendItems appends "ticker":answer pairs separated by commas.
func (a *API) appendItems(bars *[]engine.Bar, dst []byte, items []quoteItem, o *quoteOpts) []byte {
	for i, it := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, it.ticker)
		dst = append(dst, ':')
		if it.asset == nil {
			dst = append(dst, tickerNotFound...)
			continue
		}
		dst = a.appendTickerQuotes(bars, dst, it.asset, o)
	}
	return dst
}

const tickerNotFound = `{"error":{"status":404,"message":"Ticker not found"}}`

// quoteSingle serves GET /quotes/:ticker: the same options as one item of
// POST /quotes, as query parameters; the answer is the item's value.
func (a *API) quoteSingle(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	t := strings.ToUpper(ps.ByName("ticker")) // path identifiers ignore case
	var multi [][]byte
	if strings.Contains(t, ",") {
		// GET /quotes/PETR4,VALE3,…: the batch of POST /quotes.
		for _, s := range strings.Split(t, ",") {
			if !validTicker(s) {
				q.fail(badRequest("ticker %q: %s, comma-separated", s, tickerWant))
				break
			}
			multi = append(multi, []byte(s))
		}
		if len(multi) > MaxTickers {
			q.fail(badRequest("%d tickers: at most %d per request", len(multi), MaxTickers))
		}
	} else if !validTicker(t) {
		q.fail(badRequest("ticker %q: %s", ps.ByName("ticker"), tickerWant))
	}
	typ := q.enum("type")
	iv := q.integer("interval")
	start := q.date("start_date")
	end := q.date("end_date")
	adj := q.boolean("adjusted")
	if err := q.err(); err != nil {
		return nil, err
	}
	o, err := a.quoteOptions(c, typ, int64(iv), start, end, adj)
	if err != nil {
		return nil, err
	}
	if multi != nil {
		return a.appendBatch(c, dst, multi, &o)
	}
	as, ok := c.ds.Asset(t)
	if !ok {
		if ix, isIndex := indexLevelTicker(c.ds, t); isIndex { // indexlevels.go
			return indexQuotes(dst, ix, &o)
		}
		return nil, notFound("Ticker not found")
	}
	if err := c.ds.CheckAsset(as); err != nil {
		return nil, a.badBlock(c, err)
	}
	return a.appendTickerQuotes(&c.s.bars, dst, as, &o), nil
}

// quoteHandler is the type of Route.serve.
type quoteHandler = func(a *API, c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error)

// quoteTyped returns the handler of GET /quotes/:ticker/current,
// /historical or /chart (typ): the answer of GET /quotes/{ticker} with
// that type, for one ticker; the route declares only the options the
// type reads.
func quoteTyped(typ string) quoteHandler {
	return func(a *API, c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
		q := c.query(r)
		t := strings.ToUpper(ps.ByName("ticker")) // path identifiers ignore case
		if !validTicker(t) {
			q.fail(badRequest("ticker %q: %s", ps.ByName("ticker"), tickerWant))
		}
		var iv int
		start, end := engine.NoDate, engine.NoDate
		if typ == TypeHistorical {
			iv = q.integer("interval")
			start = q.date("start_date")
			end = q.date("end_date")
		}
		adj := q.boolean("adjusted")
		if err := q.err(); err != nil {
			return nil, err
		}
		o, err := a.typedQuoteOptions(c, typ, int64(iv), start, end, adj)
		if err != nil {
			return nil, err
		}
		as, ok := c.ds.Asset(t)
		if !ok {
			if ix, isIndex := indexLevelTicker(c.ds, t); isIndex { // indexlevels.go
				return indexQuotes(dst, ix, &o)
			}
			return nil, notFound("Ticker not found")
		}
		if err := c.ds.CheckAsset(as); err != nil {
			return nil, a.badBlock(c, err)
		}
		return a.appendTickerQuotes(&c.s.bars, dst, as, &o), nil
	}
}

// quotesTyped returns the handler of POST /quotes/current, /historical or
// /chart (typ, whose body decl declares): the answer of POST /quotes with
// that type.
func quotesTyped(typ string, decl *Param) quoteHandler {
	return func(a *API, c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
		if q := c.query(r); q.err() != nil {
			return nil, q.err()
		}
		q := &c.s.quotes
		if err := parseQuotesRequest(c.body, q, decl); err != nil {
			return nil, err
		}
		o, err := a.typedQuoteOptions(c, typ, q.Interval, q.Start, q.End, q.Adjusted)
		if err != nil {
			return nil, err
		}
		return a.appendBatch(c, dst, q.Tickers, &o)
	}
}

// typedQuoteOptions is quoteOptions for the routes of one type, which
// their path names: the eod plan's answer is the current type (the
// previous session's quote, as the untyped routes give it without
// options), and the other types are refused to it (403).
func (a *API) typedQuoteOptions(c *call, typ string, interval int64, start, end engine.Date, adjusted bool) (quoteOpts, error) {
	if c.key.Plan != PlanEOD {
		return a.quoteOptions(c, typ, interval, start, end, adjusted)
	}
	if typ != TypeCurrent {
		return quoteOpts{}, eodHistory(c, []string{typ + " quotes"})
	}
	return a.quoteOptions(c, "", interval, start, end, adjusted)
}

// appendTickerQuotes appends one ticker's answer for o.
func (a *API) appendTickerQuotes(bars *[]engine.Bar, dst []byte, as *engine.Asset, o *quoteOpts) []byte {
	switch o.typ {
	case TypeCurrent:
		if qv := o.v.qv; qv != nil {
			if o.adjusted {
				return append(dst, qv.adj[qv.index(as)]...)
			}
			return append(dst, qv.raw[qv.index(as)]...)
		}
		q := o.v.quote(as)
		if o.adjusted {
			q = q.Adjusted()
		}
		return appendQuote(dst, &q, as.Currency)
	case TypeChart:
		return a.appendChart(bars, dst, as, o)
	}
	return appendSeries(bars, dst, as, o)
}

// appendSeries appends the historical datapoints of o (a series request)
// as an array. Daily datapoints are the same in every answer, so those the
// Dataset's daily cache holds are copied from it.
func appendSeries(bars *[]engine.Bar, dst []byte, as *engine.Asset, o *quoteOpts) []byte {
	if _, live := o.v.liveDay(as, o.start, o.end, false); o.interval == dailyInterval && o.daily != nil && !live {
		lo, hi := as.DayRange(o.start, min(o.end, o.v.lastDate()))
		if r := o.daily.get(as, o.adjusted); r != nil {
			if out, ok := r.appendRange(append(dst, '['), lo, hi); ok {
				return append(out, ']')
			}
		}
	}
	*bars = seriesBars((*bars)[:0], as, o)
	return appendBars(dst, *bars, as, o)
}

// appendQuote appends a current quote datapoint.
func appendQuote(dst []byte, q *engine.Quote, currency string) []byte {
	dst = append(dst, `{"date":`...)
	if !q.Valid() {
		dst = append(dst, "null"...)
	} else {
		dst = appendUnix(dst, q.Time)
	}
	dst = append(dst, `,"open_price":`...)
	dst = appendNum(dst, q.Open)
	dst = append(dst, `,"close_price":`...)
	dst = appendNum(dst, q.Close)
	dst = append(dst, `,"highest_price":`...)
	dst = appendNum(dst, q.High)
	dst = append(dst, `,"lowest_price":`...)
	dst = appendNum(dst, q.Low)
	dst = append(dst, `,"volume":`...)
	dst = appendNum(dst, q.Volume)
	dst = append(dst, `,"currency":`...)
	dst = appendStringOrNull(dst, currency)
	dst = append(dst, `,"variation":`...)
	dst = appendNum(dst, q.Variation)
	dst = append(dst, `,"variation_value":`...)
	dst = appendNum(dst, q.VariationValue)
	return append(dst, '}')
}

// seriesBars appends the bars of a historical request to dst: daily rows
// (aggregated for intervals above a day) or 1-minute rows (aggregated to
// the interval), restricted to what the plan sees.
func seriesBars(dst []engine.Bar, as *engine.Asset, o *quoteOpts) []engine.Bar {
	if o.interval >= dailyInterval {
		end := min(o.end, o.v.lastDate())
		lo, hi := as.DayRange(o.start, end)
		dst = as.AppendDaily(dst, lo, hi, o.adjusted)
		if b, ok := o.v.liveDay(as, o.start, end, o.adjusted); ok {
			dst = append(dst, b)
		}
		if o.interval > dailyInterval {
			dst = aggregateDays(dst, o.interval)
		}
		return dst
	}
	from := int64(o.start) * 86400
	to := int64(o.end)*86400 + 86399
	to = min(to, o.v.cutoff-60)
	dst = o.v.ev.AppendMinutes(dst, as, from, to, o.adjusted)
	if o.interval > 60 {
		dst = engine.Aggregate(dst, o.interval)
	}
	return dst
}

// weekShift moves the unix epoch (a Thursday) to a Monday, so that buckets
// of whole weeks start on Mondays.
const weekShift = 3 * dailyInterval

// aggregateDays merges daily bars into buckets of width seconds; buckets of
// whole weeks start on Mondays, others on 1970-01-01.
func aggregateDays(bars []engine.Bar, width int64) []engine.Bar {
	if width%(7*dailyInterval) != 0 {
		return engine.Aggregate(bars, width)
	}
	for i := range bars {
		bars[i].Time += weekShift
	}
	bars = engine.Aggregate(bars, width)
	for i := range bars {
		bars[i].Time -= weekShift
	}
	return bars
}

// appendBars appends bars as an array of datapoints. Each datapoint's
// variation is against the previous datapoint's close (for the first one,
// the close of the session before it), expressed in the same share base.
func appendBars(dst []byte, bars []engine.Bar, as *engine.Asset, o *quoteOpts) []byte {
	var curBuf [64]byte
	cur := appendStringOrNull(curBuf[:0], as.Currency) // encoded once per ticker
	prev, prevF := engine.Null, engine.Null
	if len(bars) > 0 {
		// The session before the first datapoint: a daily series' last
		// session dated before its bucket's start (a bucket of a width
		// other than whole days may start within a day, after that day's
		// session), an intraday series' last session before its day.
		before := engine.DateOfUnix(bars[0].Time) - 1
		if o.interval >= dailyInterval {
			before = engine.DateOfUnix(bars[0].Time - 1)
		}
		if k := as.DayIndex(before); k >= 0 {
			b := as.DailyBar(k, o.adjusted)
			prev, prevF = b.Close, b.Factor
		}
	}
	dst = append(dst, '[')
	for i := range bars {
		b := &bars[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		ref := prev
		if !o.adjusted && ref.Valid() && prevF.Valid() && prevF != 0 {
			ref = ref * b.Factor / prevF
		}
		dst = appendBar(dst, b, ref, cur, o.adjusted)
		if o.interval >= dailyInterval || (i+1 < len(bars) && bars[i+1].Date != b.Date) {
			// Daily series compare with the previous datapoint; intraday
			// series with the previous session's close.
			if o.interval >= dailyInterval || b.Close.Valid() {
				prev, prevF = b.Close, b.Factor
			}
		}
	}
	return append(dst, ']')
}

// appendBar appends one historical datapoint; ref is the reference close
// of its variation, currency the encoded currency (a JSON string or null).
// Adjusted bars' variation_value subtracts the prices before adjustment
// (engine.AdjustedDiff): no binary noise from the division.
func appendBar(dst []byte, b *engine.Bar, ref engine.Num, currency []byte, adjusted bool) []byte {
	dst = append(dst, `{"date":`...)
	dst = appendUnix(dst, b.Time)
	dst = append(dst, `,"open_price":`...)
	dst = appendNum(dst, b.Open)
	dst = append(dst, `,"close_price":`...)
	dst = appendNum(dst, b.Close)
	dst = append(dst, `,"highest_price":`...)
	dst = appendNum(dst, b.High)
	dst = append(dst, `,"lowest_price":`...)
	dst = appendNum(dst, b.Low)
	dst = append(dst, `,"volume":`...)
	dst = appendNum(dst, b.Volume)
	dst = append(dst, `,"currency":`...)
	dst = append(dst, currency...)
	v, vv := engine.Null, engine.Null
	if b.Close.Valid() && ref.Valid() && ref != 0 {
		v, vv = b.Close/ref-1, engine.Diff(b.Close, ref)
		if adjusted {
			vv = engine.AdjustedDiff(b.Close, ref, b.Factor)
		}
	}
	dst = append(dst, `,"variation":`...)
	dst = appendNum(dst, v)
	dst = append(dst, `,"variation_value":`...)
	dst = appendNum(dst, vv)
	dst = append(dst, `,"adjustment_factor":`...)
	dst = appendNum(dst, b.Factor)
	return append(dst, '}')
}

// chartPreset is one key of a chart answer.
type chartPreset struct {
	key      string
	intraday bool
	days     engine.Date // calendar days back from the last session (intraday: sessions)
	interval int64       // bucket width in seconds
}

// chartPresets: 1d and 5d are intraday (5- and 30-minute buckets of the
// last 1 and 5 sessions with 1-minute data); 1M, 6M and 1Y are daily
// sessions of the last 31, 183 and 365 days; 5Y is weekly buckets of the
// last 5 years. Elements are historical quote datapoints.
var chartPresets = []chartPreset{
	{"1d", true, 1, 300},
	{"5d", true, 5, 1800},
	{"1M", false, 31, dailyInterval},
	{"6M", false, 183, dailyInterval},
	{"1Y", false, 365, dailyInterval},
	{"5Y", false, 5*365 + 1, 7 * dailyInterval}, // weeks from Monday
}

func (a *API) appendChart(bars *[]engine.Bar, dst []byte, as *engine.Asset, o *quoteOpts) []byte {
	dst = append(dst, `{"chart":{`...)
	for i, p := range chartPresets {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendKey(dst, p.key)
		po := *o
		po.interval = p.interval
		if p.intraday {
			// The last p.days sessions with 1-minute data, up to the cut-off
			// (the live session's bars included).
			last, ok := o.v.ev.LastMinute(as, o.v.cutoff-60)
			if !ok {
				dst = append(dst, "[]"...)
				continue
			}
			lastDay := engine.Date(last / 86400)
			first := lastDay
			for n := engine.Date(1); n < p.days; n++ {
				t, ok := o.v.ev.LastMinute(as, int64(first)*86400-1)
				if !ok {
					break
				}
				first = engine.Date(t / 86400)
			}
			po.start, po.end = first, lastDay
		} else {
			po.end = o.v.lastDate()
			po.start = po.end - p.days + 1
		}
		dst = appendSeries(bars, dst, as, &po)
	}
	return append(dst, "}}"...)
}
