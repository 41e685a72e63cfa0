package bundle

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// CSV headers of the columnar files. The header row must be exactly this.
const (
	DailyHeader    = "ticker,date,open,high,low,close,volume,quantity,trades"
	IntradayHeader = "ticker,time,open,high,low,close,volume,quantity"
)

var dailyCols = []string{"ticker", "date", "open", "high", "low", "close", "volume", "quantity", "trades"}

// column indexes shared by both layouts
const (
	colTicker = iota
	colKey
	colOpen
	colHigh
	colLow
	colClose
	colVolume
	colQuantity
	colTrades
)

// splitCSV splits line at commas into fields (at most len(fields)),
// returning the number of fields found (which may exceed len(fields):
// then only the first len(fields) are stored), or -1 when the line holds
// a double quote. It does not allocate.
func splitCSV(line []byte, fields [][]byte) int {
	n, start := 0, 0
	for i, ch := range line {
		switch ch {
		case ',':
			if n < len(fields) {
				fields[n] = line[start:i]
			}
			n++
			start = i + 1
		case '"':
			return -1
		}
	}
	if n < len(fields) {
		fields[n] = line[start:]
	}
	return n + 1
}

// pow10 holds the powers of ten that are exact float64 values.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseNum parses a decimal number; an empty cell is Null. Plain decimals
// of up to 15 digits take an exact fast path (an integer mantissa below
// 2^53 divided by an exact power of ten is correctly rounded); anything
// else goes through strconv.ParseFloat.
func parseNum(b []byte) (engine.Num, bool) {
	if len(b) == 0 {
		return engine.Null, true
	}
	i, neg := 0, false
	if b[0] == '-' {
		neg, i = true, 1
	}
	var mant uint64
	nd, frac, dot := 0, 0, false
	for ; i < len(b); i++ {
		ch := b[i]
		if ch >= '0' && ch <= '9' {
			mant = mant*10 + uint64(ch-'0')
			nd++
			if dot {
				frac++
			}
			continue
		}
		if ch == '.' && !dot {
			dot = true
			continue
		}
		break
	}
	if i == len(b) && nd > 0 && nd <= 15 && (!dot || frac > 0) {
		f := float64(mant) / pow10[frac]
		if neg {
			f = -f
		}
		return engine.Num(f), true
	}
	for _, ch := range b {
		if !(ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '+' || ch == 'e' || ch == 'E') {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(&b[0], len(b)), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return engine.Num(f), true
}

// parseInt parses a non-negative decimal integer; an empty cell is 0.
func parseInt(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, true
	}
	if len(b) > 18 {
		v, err := strconv.ParseInt(string(b), 10, 64)
		return v, err == nil && v >= 0 && b[0] != '+'
	}
	var v int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int64(ch-'0')
	}
	return v, true
}

func digits(b []byte) (int, bool) {
	v := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int(ch-'0')
	}
	return v, true
}

// parseDateBytes parses YYYY-MM-DD without allocating.
func parseDateBytes(b []byte) (engine.Date, bool) {
	if len(b) != 10 || b[4] != '-' || b[7] != '-' {
		return engine.NoDate, false
	}
	y, ok1 := digits(b[0:4])
	m, ok2 := digits(b[5:7])
	d, ok3 := digits(b[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > engine.DaysIn(y, m) {
		return engine.NoDate, false
	}
	return engine.CivilDate(y, m, d), true
}

// parseTimeBytes parses an RFC 3339 timestamp to unix seconds. The form
// YYYY-MM-DDTHH:MM:SSZ is parsed without allocating; other RFC 3339 forms
// (offsets, fractions of zero) go through time.Parse.
func parseTimeBytes(b []byte) (int64, bool) {
	if len(b) == 20 && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == 'Z' {
		d, ok := parseDateBytes(b[:10])
		hh, ok1 := digits(b[11:13])
		mm, ok2 := digits(b[14:16])
		ss, ok3 := digits(b[17:19])
		if ok && ok1 && ok2 && ok3 && hh < 24 && mm < 60 && ss < 60 {
			return int64(d)*86400 + int64(hh*3600+mm*60+ss), true
		}
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if y := t.UTC().Year(); err != nil || t.Nanosecond() != 0 || y < 0 || y > 9999 {
		return 0, false
	}
	return t.Unix(), true
}

// appendNum appends v in its shortest form that parses back to the same
// float64: plain decimal for 1e-6 <= |v| < 1e21 (and 0), exponent form
// otherwise. Null appends nothing (an empty CSV cell).
func appendNum(dst []byte, v engine.Num) []byte {
	if !v.Valid() {
		return dst
	}
	f := float64(v)
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendTime appends unix seconds t as YYYY-MM-DDTHH:MM:SSZ.
func appendTime(dst []byte, t int64) []byte {
	days := t / 86400
	secs := t % 86400
	if secs < 0 {
		secs += 86400
		days--
	}
	dst = engine.Date(days).AppendFormat(dst)
	dst = append(dst, 'T')
	dst = append2(dst, int(secs/3600))
	dst = append(dst, ':')
	dst = append2(dst, int(secs%3600/60))
	dst = append(dst, ':')
	dst = append2(dst, int(secs%60))
	return append(dst, 'Z')
}

func append2(dst []byte, v int) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

// block is the run of rows of one ticker in a columnar file.
type block struct {
	ticker      string
	line        int   // first line
	start       int   // first row index
	end         int   // row index after the last
	first, last int64 // keys of the first and last row kept (last: math.MinInt64 when none)
	negLine     int   // first line with a negative price (0: none); legal for MACRO series only
	negField    string
}

// row is one parsed row of a columnar file.
type row struct {
	key                            int64 // Date or unix seconds
	open, high, low, close, volume engine.Num
	quantity, trades               int64
}

// columns holds the rows of a daily or intraday file, in file order, in
// the chunks they were parsed in; the column arrays are built once at the
// end.
type columns struct {
	intraday bool
	chunks   [][]row
	n        int
	blocks   []block // row indexes are global
	// handed, when the series were handed to a sink as parsed
	// (parseColumnsSink), holds each block's ticker, dates and closes;
	// chunks is then empty.
	handed  []engine.Series
	sinkErr error // the sink's error, which ended the handing over
}

func (c *columns) rows() int { return c.n }

// csvChunk is a run of lines of a columnar file parsed on its own.
type csvChunk struct {
	buf    []byte
	ends   []int // end offset in buf of each line
	lines  []int // line numbers
	rows   []row
	blocks []block       // row indexes local to the chunk
	done   chan struct{} // closed once parsed (parseColumnsSink)
}

// parseColumns reads a daily (intraday=false) or intraday CSV file.
// Chunks of lines are parsed by up to GOMAXPROCS goroutines and merged in
// order, checking the grouping and order of rows across chunk boundaries.
// Problems go to col; the error is an I/O error.
func parseColumns(r io.Reader, file string, intraday bool, col *collector) (*columns, error) {
	return parseColumnsChunked(r, file, intraday, col, 1<<20)
}

// parseColumnsChunked is parseColumns with chunks of about chunkBytes
// bytes of lines.
func parseColumnsChunked(r io.Reader, file string, intraday bool, col *collector, chunkBytes int) (*columns, error) {
	return parseColumnsSink(r, file, intraday, col, chunkBytes, nil)
}

// parseColumnsSink is parseColumnsChunked that, when sink is not nil
// (daily files), hands each series to sink as soon as the chunks that
// hold its rows are parsed and merged, in file order, and releases those
// rows: at most a window of chunks is parsed ahead of the merge, so the
// file's rows are never all in memory. The columns returned then hold
// the blocks and, in handed, each series' ticker, dates and closes. A
// file with problems may have handed some series over before they were
// found.
func parseColumnsSink(r io.Reader, file string, intraday bool, col *collector, chunkBytes int, sink func(*engine.Series) error) (*columns, error) {
	header := DailyHeader
	if intraday {
		header = IntradayHeader
	}
	var chunks []*csvChunk
	work := make(chan *csvChunk)
	var wg sync.WaitGroup
	procs := max(1, runtime.GOMAXPROCS(0))
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ch := range work {
				parseChunk(ch, file, intraday, col)
				if ch.done != nil {
					close(ch.done)
				}
			}
		}()
	}
	m := newMerger(file, intraday, col, sink)
	lr := newLineReader(r)
	cur := &csvChunk{}
	flush := func() {
		if len(cur.ends) > 0 {
			if sink != nil {
				cur.done = make(chan struct{})
				// Merge (and hand over) the oldest chunks once a window
				// of them is parsed ahead.
				for len(chunks) >= 2*procs+1 {
					<-chunks[0].done
					m.add(chunks[0])
					chunks[0] = nil
					chunks = chunks[1:]
				}
			}
			chunks = append(chunks, cur)
			work <- cur
			cur = &csvChunk{}
		}
	}
	headerDone, badHeader := false, false
	for {
		line, n, ok := lr.next()
		if !ok || col.stop() {
			break
		}
		if len(line) == 0 {
			continue
		}
		if !headerDone {
			headerDone = true
			if string(line) != header {
				col.addf(file, n, "", "bad header %q (want %q)", clip(line), header)
				badHeader = true
				break
			}
			continue
		}
		if cur.buf == nil {
			cur.buf = make([]byte, 0, max(min(chunkBytes, 1<<20)+64<<10, len(line)))
		}
		cur.buf = append(cur.buf, line...)
		cur.ends = append(cur.ends, len(cur.buf))
		cur.lines = append(cur.lines, n)
		if len(cur.buf) >= chunkBytes {
			flush()
		}
	}
	flush()
	close(work)
	wg.Wait()
	if err := lr.err(); err != nil {
		return nil, err
	}
	if badHeader || col.stop() {
		return nil, nil
	}
	if !headerDone {
		col.addf(file, 1, "", "missing header (want %q)", header)
		return nil, nil
	}
	for _, ch := range chunks {
		m.add(ch)
	}
	return m.finish(), nil
}

// merger joins parsed chunks in order: a ticker's run may continue from
// one chunk into the next, but a ticker may not come back after another.
// It hands the series whose rows are all merged to sink when it is not
// nil.
type merger struct {
	file     string
	intraday bool
	col      *collector
	cs       *columns
	seen     map[string]int // ticker -> first line
	all      []block
	sink     func(*engine.Series) error
	emitted  int // blocks of all handed over (sink)
	base     int // the global index of cs.chunks[0]'s first row (sink)
	nums     []engine.Num
	ints     []int64
}

func newMerger(file string, intraday bool, col *collector, sink func(*engine.Series) error) *merger {
	return &merger{file: file, intraday: intraday, col: col, cs: &columns{intraday: intraday}, seen: map[string]int{}, sink: sink}
}

// add merges the next chunk.
func (m *merger) add(ch *csvChunk) {
	keyName := "date"
	if m.intraday {
		keyName = "time"
	}
	cs, col, file := m.cs, m.col, m.file
	off := cs.n
	for _, b := range ch.blocks {
		b.start += off
		b.end += off
		if k := len(m.all) - 1; k >= 0 && m.all[k].ticker == b.ticker {
			last := &m.all[k]
			if b.end > b.start && last.end > last.start && b.first <= last.last {
				col.addf(file, b.line, keyName, "%s not after the previous row of %s: rows must be in strictly increasing order per ticker", fmtKey(b.first, m.intraday), b.ticker)
			}
			if last.end == last.start {
				last.start, last.first = b.start, b.first
			}
			if b.end > b.start {
				last.end, last.last = b.end, b.last
			}
			if last.negLine == 0 {
				last.negLine, last.negField = b.negLine, b.negField
			}
			continue
		}
		if first, dup := m.seen[b.ticker]; dup {
			col.addf(file, b.line, "ticker", "rows of %s are not contiguous (its first run starts at line %d): group rows by ticker", b.ticker, first)
			continue
		}
		m.seen[b.ticker] = b.line
		m.all = append(m.all, b)
	}
	cs.chunks = append(cs.chunks, ch.rows)
	cs.n += len(ch.rows)
	ch.rows = nil
	if m.sink != nil {
		// The last block may go on in the next chunk.
		m.hand(len(m.all) - 1)
	}
}

// finish returns the merged columns.
func (m *merger) finish() *columns {
	cs := m.cs
	if m.sink != nil {
		m.hand(len(m.all))
	}
	for _, b := range m.all {
		if b.end > b.start {
			cs.blocks = append(cs.blocks, b)
		}
	}
	return cs
}

// hand hands the blocks of m.all before upto over to the sink (those
// with rows), then releases the chunks whose rows are all handed over.
func (m *merger) hand(upto int) {
	cs := m.cs
	for ; m.emitted < upto; m.emitted++ {
		b := &m.all[m.emitted]
		if b.end <= b.start {
			continue
		}
		n := b.end - b.start
		dates := make([]engine.Date, n)
		clo := make([]engine.Num, n)
		if cap(m.nums) < 4*n {
			m.nums, m.ints = make([]engine.Num, 4*n), make([]int64, 2*n)
		}
		nums, ints := m.nums[:4*n], m.ints[:2*n]
		open, high, low, vol := nums[:n:n], nums[n:2*n:2*n], nums[2*n:3*n:3*n], nums[3*n:]
		qty, trades := ints[:n:n], ints[n:]
		i, at := 0, m.base
		for _, ch := range cs.chunks {
			lo, hi := max(b.start-at, 0), min(b.end-at, len(ch))
			for j := lo; j < hi; j++ {
				r := &ch[j]
				dates[i] = engine.Date(r.key)
				open[i], high[i], low[i], clo[i], vol[i] = r.open, r.high, r.low, r.close, r.volume
				qty[i], trades[i] = r.quantity, r.trades
				i++
			}
			at += len(ch)
			if at >= b.end {
				break
			}
		}
		cs.handed = append(cs.handed, engine.Series{Ticker: b.ticker, Dates: dates, Close: clo})
		if cs.sinkErr == nil {
			s := engine.Series{
				Ticker: b.ticker, Dates: dates, Open: open, High: high, Low: low,
				Close: clo, Volume: vol, Quantity: qty, Trades: trades,
			}
			cs.sinkErr = m.sink(&s)
		}
	}
	next := math.MaxInt
	if m.emitted < len(m.all) {
		next = m.all[m.emitted].start
	}
	for len(cs.chunks) > 0 && m.base+len(cs.chunks[0]) <= next {
		m.base += len(cs.chunks[0])
		cs.chunks[0] = nil
		cs.chunks = cs.chunks[1:]
	}
}

func fmtKey(k int64, intraday bool) string {
	if intraday {
		return string(appendTime(nil, k))
	}
	return engine.Date(k).String()
}

// parseChunk parses the lines of ch into ch.rows and ch.blocks.
func parseChunk(ch *csvChunk, file string, intraday bool, col *collector) {
	ncols := 9
	keyName := "date"
	if intraday {
		ncols, keyName = 8, "time"
	}
	var fields [9][]byte
	seen := make(map[string]int) // ticker -> index in ch.blocks
	var cur *block
	skip := "" // ticker whose rows are skipped after a problem reported once
	start := 0
	ch.rows = make([]row, 0, len(ch.ends))
	for i, end := range ch.ends {
		line := ch.buf[start:end]
		start = end
		n := ch.lines[i]
		if col.stop() {
			break
		}
		if got := splitCSV(line, fields[:ncols]); got != ncols {
			if got < 0 {
				col.addf(file, n, "", "quoted CSV fields are not supported")
			} else {
				col.addf(file, n, "", "want %d columns (%s), got %d", ncols, strings.Join(dailyCols[:ncols], ","), got)
			}
			continue
		}
		tk := fields[colTicker]
		if cur == nil || string(tk) != cur.ticker {
			if string(tk) == skip {
				continue
			}
			ticker := string(tk)
			if !reTicker.MatchString(ticker) && !reMacro.MatchString(ticker) {
				col.addf(file, n, "ticker", "bad ticker %q", clip(tk))
				cur, skip = nil, ticker
				continue
			}
			if bi, dup := seen[ticker]; dup {
				col.addf(file, n, "ticker", "rows of %s are not contiguous (its first run starts at line %d): group rows by ticker", ticker, ch.blocks[bi].line)
				cur, skip = nil, ticker
				continue
			}
			if cur != nil {
				cur.end = len(ch.rows)
			}
			seen[ticker] = len(ch.blocks)
			ch.blocks = append(ch.blocks, block{ticker: ticker, line: n, start: len(ch.rows), end: len(ch.rows), last: math.MinInt64})
			cur = &ch.blocks[len(ch.blocks)-1]
			skip = ""
		}
		var key int64
		if intraday {
			t, ok := parseTimeBytes(fields[colKey])
			if !ok {
				col.addf(file, n, "time", "bad timestamp %q (want RFC 3339 UTC, e.g. 2024-03-28T13:05:00Z)", clip(fields[colKey]))
				continue
			}
			key = t
		} else {
			d, ok := parseDateBytes(fields[colKey])
			if !ok {
				col.addf(file, n, "date", "bad date %q (want YYYY-MM-DD)", clip(fields[colKey]))
				continue
			}
			key = int64(d)
		}
		if key <= cur.last {
			col.addf(file, n, keyName, "%s not after the previous row of %s: rows must be in strictly increasing order per ticker", fields[colKey], cur.ticker)
			continue
		}
		var r row
		r.key = key
		bad := false
		for j, dst := range [5]*engine.Num{&r.open, &r.high, &r.low, &r.close, &r.volume} {
			v, ok := parseNum(fields[colOpen+j])
			if !ok {
				col.addf(file, n, dailyCols[colOpen+j], "bad number %q", clip(fields[colOpen+j]))
				bad = true
				continue
			}
			*dst = v
		}
		var ok bool
		if r.quantity, ok = parseInt(fields[colQuantity]); !ok {
			col.addf(file, n, "quantity", "bad quantity %q (want an integer >= 0)", clip(fields[colQuantity]))
			bad = true
		}
		if !intraday {
			if r.trades, ok = parseInt(fields[colTrades]); !ok {
				col.addf(file, n, "trades", "bad trades %q (want an integer >= 0)", clip(fields[colTrades]))
				bad = true
			}
		}
		if bad {
			continue
		}
		if r.volume.Valid() && r.volume < 0 {
			col.addf(file, n, "volume", "want >= 0, got %s", fields[colVolume])
			continue
		}
		if r.high.Valid() && r.low.Valid() && r.high < r.low {
			col.addf(file, n, "high", "high %s below low %s", fields[colHigh], fields[colLow])
			continue
		}
		if cur.negLine == 0 {
			for j, v := range [4]engine.Num{r.open, r.high, r.low, r.close} {
				if v.Valid() && v < 0 {
					cur.negLine, cur.negField = n, dailyCols[colOpen+j]
					break
				}
			}
		}
		if cur.end == cur.start {
			cur.first = key
		}
		cur.last = key
		ch.rows = append(ch.rows, r)
		cur.end = len(ch.rows)
	}
	ch.buf, ch.ends, ch.lines = nil, nil, nil
}

// eachBlock calls f for every block in order with the block's rows,
// which may span chunks. With drop, each chunk is released once the
// blocks have moved past it, so that the parsed rows and the columns
// built from them are never all held at once (at scale 10 each is
// several GiB); c has no rows left afterwards.
func (c *columns) eachBlock(drop bool, f func(i int, b *block, segs [][]row)) {
	ci, base := 0, 0 // current chunk and the global index of its first row
	var segs [][]row
	for bi := range c.blocks {
		b := &c.blocks[bi]
		for ci < len(c.chunks) && base+len(c.chunks[ci]) <= b.start {
			base += len(c.chunks[ci])
			if drop {
				c.chunks[ci] = nil
			}
			ci++
		}
		segs = segs[:0]
		for i, cj, cb := b.start, ci, base; i < b.end && cj < len(c.chunks); {
			ch := c.chunks[cj]
			hi := min(len(ch), b.end-cb)
			if lo := i - cb; lo < hi {
				segs = append(segs, ch[lo:hi])
			}
			i = cb + hi
			if hi == len(ch) {
				cb += len(ch)
				cj++
			}
		}
		f(bi, b, segs)
	}
	if drop {
		c.chunks, c.n = nil, 0
	}
}

// daily returns the columns as Series, one per block, each with its own
// arrays of exactly its row count (capacity == length). With drop, the
// parsed rows are released as they are copied.
func (c *columns) daily(drop bool) []engine.Series {
	out := make([]engine.Series, len(c.blocks))
	c.eachBlock(drop, func(bi int, b *block, segs [][]row) {
		n := b.end - b.start
		// Dates and closes, which the ratios read, have arrays of their
		// own, so that the other columns can be released without them.
		dates := make([]engine.Date, n)
		clo := make([]engine.Num, n)
		nums := make([]engine.Num, 4*n)
		ints := make([]int64, 2*n)
		open, high, low, vol := nums[:n:n], nums[n:2*n:2*n], nums[2*n:3*n:3*n], nums[3*n:]
		qty, trades := ints[:n:n], ints[n:]
		i := 0
		for _, seg := range segs {
			for j := range seg {
				r := &seg[j]
				dates[i] = engine.Date(r.key)
				open[i], high[i], low[i], clo[i], vol[i] = r.open, r.high, r.low, r.close, r.volume
				qty[i], trades[i] = r.quantity, r.trades
				i++
			}
		}
		out[bi] = engine.Series{
			Ticker: b.ticker, Dates: dates, Open: open, High: high, Low: low,
			Close: clo, Volume: vol, Quantity: qty, Trades: trades,
		}
	})
	return out
}

// intradayBars returns the columns as Intraday histories, one per block,
// like daily.
func (c *columns) intradayBars(drop bool) []engine.Intraday {
	out := make([]engine.Intraday, len(c.blocks))
	c.eachBlock(drop, func(bi int, b *block, segs [][]row) {
		n := b.end - b.start
		times := make([]int64, n)
		nums := make([]engine.Num, 5*n)
		qty := make([]int64, n)
		open, high, low, clo, vol := nums[:n:n], nums[n:2*n:2*n], nums[2*n:3*n:3*n], nums[3*n:4*n:4*n], nums[4*n:]
		i := 0
		for _, seg := range segs {
			for j := range seg {
				r := &seg[j]
				times[i] = r.key
				open[i], high[i], low[i], clo[i], vol[i] = r.open, r.high, r.low, r.close, r.volume
				qty[i] = r.quantity
				i++
			}
		}
		out[bi] = engine.Intraday{
			Ticker: b.ticker, Times: times, Open: open, High: high, Low: low,
			Close: clo, Volume: vol, Quantity: qty,
		}
	})
	return out
}

// lines buffers the lines of a bundle file (JSON Lines or CSV rows) and
// writes them in blocks of about 60 KiB.
type lines struct {
	w   io.Writer
	buf []byte
	err error
}

// newLines returns lines writing to w, starting with header (if any).
func newLines(w io.Writer, header string) lines {
	l := lines{w: w, buf: make([]byte, 0, 64<<10)}
	if header != "" {
		l.buf = append(l.buf, header...)
		l.buf = append(l.buf, '\n')
	}
	return l
}

// Flush writes buffered lines to the underlying writer.
func (l *lines) Flush() error {
	if l.err != nil {
		return l.err
	}
	if len(l.buf) > 0 {
		if _, err := l.w.Write(l.buf); err != nil {
			l.err = err
			return err
		}
		l.buf = l.buf[:0]
	}
	return nil
}

// end ends a line appended to l.buf, flushing a full buffer.
func (l *lines) end() error {
	l.buf = append(l.buf, '\n')
	if len(l.buf) >= 60<<10 {
		return l.Flush()
	}
	return nil
}

// rows are the lines behind DailyWriter and IntradayWriter, with the
// tickers written so far (each may be written once).
type rows struct {
	lines
	seen map[string]bool
}

func newRows(w io.Writer, header string) rows {
	return rows{newLines(w, header), map[string]bool{}}
}

// appendBar appends ",open,high,low,close,volume,quantity" of row i.
func appendBar(b []byte, open, high, low, close, volume []engine.Num, quantity []int64, i int) []byte {
	for _, col := range [...][]engine.Num{open, high, low, close, volume} {
		b = append(b, ',')
		b = appendNum(b, col[i])
	}
	b = append(b, ',')
	return strconv.AppendInt(b, quantity[i], 10)
}

// DailyWriter writes daily.csv rows. Series must be written grouped by
// ticker with dates ascending; WriteSeries checks it. It is not safe for
// concurrent use. Call Flush (or Close of the file) when done.
type DailyWriter struct{ rows }

// NewDailyWriter writes the header to w and returns a writer of rows.
func NewDailyWriter(w io.Writer) *DailyWriter {
	return &DailyWriter{newRows(w, DailyHeader)}
}

// WriteSeries appends every row of s. A ticker may be written once.
func (d *DailyWriter) WriteSeries(s *engine.Series) error {
	if d.err != nil {
		return d.err
	}
	if err := checkSeries(s.Ticker, d.seen, len(s.Dates), len(s.Open), len(s.High), len(s.Low), len(s.Close), len(s.Volume), len(s.Quantity), len(s.Trades)); err != nil {
		return err
	}
	for i, dt := range s.Dates {
		if i > 0 && dt <= s.Dates[i-1] {
			return fmt.Errorf("bundle: daily %s: date %s not after %s", s.Ticker, dt, s.Dates[i-1])
		}
		b := append(d.buf, s.Ticker...)
		b = append(b, ',')
		b = dt.AppendFormat(b)
		b = appendBar(b, s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity, i)
		b = append(b, ',')
		d.buf = strconv.AppendInt(b, s.Trades[i], 10)
		if err := d.end(); err != nil {
			return err
		}
	}
	return nil
}

func checkSeries(ticker string, seen map[string]bool, n int, others ...int) error {
	if seen[ticker] {
		return fmt.Errorf("bundle: ticker %s written twice", ticker)
	}
	seen[ticker] = true
	for _, o := range others {
		if o != n {
			return fmt.Errorf("bundle: ticker %s: columns of unequal length", ticker)
		}
	}
	return nil
}

// IntradayWriter writes intraday.csv rows, like DailyWriter.
type IntradayWriter struct{ rows }

// NewIntradayWriter writes the header to w and returns a writer of rows.
func NewIntradayWriter(w io.Writer) *IntradayWriter {
	return &IntradayWriter{newRows(w, IntradayHeader)}
}

// WriteIntraday appends every bar of s. A ticker may be written once.
func (d *IntradayWriter) WriteIntraday(s *engine.Intraday) error {
	if d.err != nil {
		return d.err
	}
	s = s.Expanded() // a loaded series may hold only its compact form
	if err := checkSeries(s.Ticker, d.seen, len(s.Times), len(s.Open), len(s.High), len(s.Low), len(s.Close), len(s.Volume), len(s.Quantity)); err != nil {
		return err
	}
	for i, t := range s.Times {
		if i > 0 && t <= s.Times[i-1] {
			return fmt.Errorf("bundle: intraday %s: time %d not after %d", s.Ticker, t, s.Times[i-1])
		}
		b := append(d.buf, s.Ticker...)
		b = append(b, ',')
		b = appendTime(b, t)
		d.buf = appendBar(b, s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity, i)
		if err := d.end(); err != nil {
			return err
		}
	}
	return nil
}
