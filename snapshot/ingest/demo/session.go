package demo

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// The last session is made of trades: every ticker that trades on it
// gets a list of trades (an opening call, continuous trading, a closing
// call, a few cancelled trades, after-market trades on the liquid ones),
// and its daily bar and 1-minute bars of that session are their
// aggregation (regular session, cancelled trades left out, as package
// negocios aggregates them). The simulated open, high, low, close and
// quantity are kept; the volume becomes the exact sum of price x
// quantity and the trade count the number of trades drawn.

// Trade counts of the last session: the simulated count n is kept up to
// tradeKnee and grows as its square root above, at most maxSessionTrades
// a ticker, so that a replayed day stays small (about 350,000 rows at
// scale 1 instead of 5.6 million).
const (
	tradeKnee        = 50
	maxSessionTrades = 2000
)

// Local times of the last session, in milliseconds since midnight
// (UTC−03:00): the opening call uncrosses at 10:00:00, continuous trading
// runs to the closing call, which uncrosses in the session's last second
// (16:59:59, so that the last 1-minute bar is 16:59, as in the earlier
// sessions); the after-market trades from 17:30 to 18:00.
const (
	msOpenCall   = 10 * 3600 * 1000
	msContinuous = msOpenCall + 1000
	msCloseCall  = 17*3600*1000 - 1000
	msAfterOpen  = 17*3600*1000 + 30*60*1000
	msAfterClose = 18 * 3600 * 1000
)

// participants are the broker codes the rows carry.
var participants = []uint16{3, 8, 13, 15, 16, 27, 39, 40, 45, 72, 77, 85, 90, 107, 114, 120, 122, 127, 147, 172, 190, 238, 262, 308, 386, 1099}

// srow is one row of the last session's trade file, compact.
type srow struct {
	qty           int64
	ms            int32 // milliseconds since local midnight
	price         int32 // cents
	id            int32
	tk            int32 // index into Session.tickers (ticker-local: the class)
	buyer, seller uint16
	after         bool // after-market (session 6)
	cancel        bool // a cancellation row
}

// lastSession is one ticker's last session: its 1-minute bars and, when
// the generation keeps them, its rows.
type lastSession struct {
	bars engine.Intraday // Ticker is set by the assembly
	rows []srow
}

// compressTrades returns the last session's trade count of a ticker whose
// simulated count is n.
func compressTrades(n int64) int64 {
	if n <= tradeKnee {
		return n
	}
	return min(maxSessionTrades, int64(math.Round(tradeKnee*math.Sqrt(float64(n)/tradeKnee))))
}

// lastSession draws the trades of row j (the universe's last session) of
// s, class k of entity e, replaces the row's volume and trade count by
// their aggregation (narrowing its high and low when the quantity is too
// small to trade them), stores the bars (and the rows when g.keepRows)
// in o.last[k] and returns the new volume in BRL.
func (g *gen) lastSession(e *entity, o *output, k int, s *engine.Series, j int) float64 {
	r := g.rng(e.idx, 40+k)
	cents := func(v engine.Num) int64 { return int64(math.Round(float64(v) * 100)) }
	op, hi, lo, cl := cents(s.Open[j]), cents(s.High[j]), cents(s.Low[j]), cents(s.Close[j])
	q := s.Quantity[j]
	unit := int64(1)
	if e.c.Kind == engine.KindCompany && q%100 == 0 {
		unit = 100
	}
	needed := func() int64 {
		if op == hi && op == lo && op == cl {
			return 1
		}
		n := int64(2)
		if hi != op && hi != cl {
			n++
		}
		if lo != op && lo != cl {
			n++
		}
		return n
	}
	if q/unit < needed() {
		unit = 1
	}
	if q < needed() {
		// Too few shares to print every price of the bar: keep open and
		// close (or the close alone).
		hi, lo = max(op, cl), min(op, cl)
		if q < 2 {
			op, hi, lo = cl, cl, cl
		}
		s.Open[j], s.High[j], s.Low[j] = engine.Num(float64(op)/100), engine.Num(float64(hi)/100), engine.Num(float64(lo)/100)
	}
	units := q / unit
	n := min(max(compressTrades(s.Trades[j]), needed()), units)

	// Times, ascending: the calls' trades share their uncross time.
	ms := make([]int32, n)
	na, nc := int64(1), int64(1)
	if n >= 6 {
		na, nc = 1+min(n/25, 39), 1+min(n/30, 39)
		tOpen, tClose := int32(msOpenCall+r.IntN(900)), int32(msCloseCall+r.IntN(1000))
		for i := int64(0); i < na; i++ {
			ms[i] = tOpen
		}
		for i := n - nc; i < n; i++ {
			ms[i] = tClose
		}
		for i := na; i < n-nc; i++ {
			ms[i] = continuousTime(r)
		}
		slices.Sort(ms[na : n-nc])
	} else {
		for i := range ms {
			ms[i] = continuousTime(r)
		}
		slices.Sort(ms)
	}

	// Prices by position: the opening call at the open, the closing call
	// at the close, the high and the low once each in between, bridges
	// between them kept within [low, high].
	price := make([]int64, n)
	for i := int64(0); i < na; i++ {
		price[i] = op
	}
	if n > 1 {
		for i := n - nc; i < n; i++ {
			price[i] = cl
		}
		type anchor struct{ at, p int64 }
		anchors := []anchor{{na - 1, op}}
		free := r.Perm(int(n - nc - na)) // positions [na, n-nc)
		if hi != op && hi != cl {
			anchors = append(anchors, anchor{na + int64(free[0]), hi})
			free = free[1:]
		}
		if lo != op && lo != cl {
			anchors = append(anchors, anchor{na + int64(free[0]), lo})
		}
		anchors = append(anchors, anchor{n - nc, cl})
		sort.Slice(anchors, func(a, b int) bool { return anchors[a].at < anchors[b].at })
		sd := float64(hi-lo) * 0.8 / math.Sqrt(float64(n))
		for a := 0; a+1 < len(anchors); a++ {
			x, y := anchors[a], anchors[a+1]
			price[x.at], price[y.at] = x.p, y.p
			walk := make([]float64, y.at-x.at+1)
			for i := 1; i < len(walk); i++ {
				walk[i] = walk[i-1] + r.NormFloat64()
			}
			end := walk[len(walk)-1]
			for i := x.at + 1; i < y.at; i++ {
				f := float64(i-x.at) / float64(y.at-x.at)
				v := float64(x.p) + float64(y.p-x.p)*f + sd*(walk[i-x.at]-f*end)
				price[i] = min(hi, max(lo, int64(math.Round(v))))
			}
		}
	}

	// Quantities: units of 100 shares for companies' round lots, every
	// trade at least one, lognormal sizes, summing to q.
	qty := make([]int64, n)
	var sw float64
	w := make([]float64, n)
	for i := range w {
		w[i] = math.Exp(0.8 * r.NormFloat64())
		sw += w[i]
	}
	left := units - n
	var given int64
	for i := range qty {
		x := int64(float64(left) * w[i] / sw)
		qty[i] = 1 + x
		given += x
	}
	for rest := left - given; rest > 0; rest-- {
		qty[r.IntN(int(n))]++
	}
	for i := range qty {
		qty[i] *= unit
	}

	// Bars and the daily volume from the trades (volumes in exact cents).
	ls := &o.last[k]
	b := &ls.bars
	day := s.Dates[j]
	var vol int64
	var mvol []int64
	for i := int64(0); i < n; i++ {
		v := price[i] * qty[i]
		vol += v
		t := negocios.UnixMilli(day, int64(ms[i])) / 60000 * 60
		p := engine.Num(float64(price[i]) / 100)
		if m := len(b.Times); m == 0 || b.Times[m-1] != t {
			b.Times = append(b.Times, t)
			b.Open, b.High, b.Low, b.Close = append(b.Open, p), append(b.High, p), append(b.Low, p), append(b.Close, p)
			b.Quantity = append(b.Quantity, 0)
			mvol = append(mvol, 0)
		}
		m := len(b.Times) - 1
		b.High[m], b.Low[m], b.Close[m] = max(b.High[m], p), min(b.Low[m], p), p
		b.Quantity[m] += qty[i]
		mvol[m] += v
	}
	b.Volume = make([]engine.Num, len(mvol))
	for m, v := range mvol {
		b.Volume[m] = engine.Num(float64(v) / 100)
	}
	s.Volume[j] = engine.Num(float64(vol) / 100)
	s.Trades[j] = n
	if g.keepRows {
		ls.rows = sessionRows(r, ms, price, qty, unit, hi, lo, cl)
	}
	return float64(s.Volume[j])
}

// continuousTime draws a time of continuous trading, busier near the
// open and the close (a U-shaped density).
func continuousTime(r *rand.Rand) int32 {
	for {
		x := r.Float64()
		if r.Float64()*4 < 1+3*(2*x-1)*(2*x-1) {
			return int32(msContinuous + int(x*float64(msCloseCall-msContinuous)))
		}
	}
}

// sessionRows returns the rows of a ticker's file: its trades, a few
// trades cancelled later (with their cancellation rows) and, on the
// liquid tickers, after-market trades; ids 10, 20, ... in time order.
func sessionRows(r *rand.Rand, ms []int32, price, qty []int64, unit, hi, lo, cl int64) []srow {
	n := len(ms)
	rows := make([]srow, 0, n+16)
	party := func() uint16 { return participants[r.IntN(len(participants))] }
	for i := range ms {
		rows = append(rows, srow{ms: ms[i], price: int32(price[i]), qty: qty[i], buyer: party(), seller: party()})
	}
	var cancelled []int
	extra := func(t int32, p int64, after bool) {
		rows = append(rows, srow{ms: t, price: int32(p), qty: unit * (1 + r.Int64N(5)), buyer: party(), seller: party(), after: after})
	}
	// A cancelled trade on about one ticker in twenty, at a price within
	// the day's range or a little outside it (an erroneous trade).
	if r.IntN(20) == 0 {
		for c := 1 + r.IntN(2); c > 0; c-- {
			p := lo + r.Int64N(hi-lo+1)
			if r.IntN(2) == 0 {
				p = int64(math.Round(float64(hi) * (1.01 + 0.02*r.Float64())))
			}
			cancelled = append(cancelled, len(rows))
			extra(continuousTime(r), p, false)
		}
	}
	// After-market trades on liquid tickers, within 2 % of the close.
	if n >= 100 && r.IntN(5) < 3 {
		for c := 1 + r.IntN(12); c > 0; c-- {
			p := max(1, int64(math.Round(float64(cl)*(0.98+0.04*r.Float64()))))
			extra(int32(msAfterOpen+r.IntN(msAfterClose-msAfterOpen)), p, true)
		}
		if r.IntN(10) == 0 {
			cancelled = append(cancelled, len(rows)-1)
		}
	}
	// Ids in time order (the calls' trades keep their order).
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rows[order[a]].ms < rows[order[b]].ms })
	for k, i := range order {
		rows[i].id = int32(10 * (k + 1))
	}
	// Cancellations come one to ten minutes after their trade: within the
	// delayed plan's 15 minutes, so that a replayed session equals the
	// full demo at every cut-off (real ones can come hours later: the live
	// session then corrects bars already shown).
	for _, i := range cancelled {
		c := rows[i]
		c.cancel = true
		c.ms = min(c.ms+int32(60000+r.IntN(9*60000)), msAfterClose+30*60*1000)
		rows = append(rows, c)
	}
	return rows
}

// Session is the universe's last session as B3's trade file carries it
// (see GenerateSession). It is immutable.
type Session struct {
	Day     engine.Date
	prev    engine.Date // the session before Day
	tickers []string
	rows    []srow // sorted: time, ticker, id, trades before cancellations
}

// Rows returns the number of rows of the session's file.
func (s *Session) Rows() int { return len(s.rows) }

// Tickers returns the tickers that trade on the session, sorted. The
// caller must not modify the result.
func (s *Session) Tickers() []string { return s.tickers }

// Each calls yield with every row of the session's file in file order
// (time, then ticker, then id; a cancellation after its trade), reusing
// one Trade. It stops at yield's first error and returns it.
func (s *Session) Each(yield func(*negocios.Trade) error) error {
	t := negocios.Trade{RefDate: s.Day, TradeDate: s.Day}
	for _, x := range s.rows {
		t.Ticker = s.tickers[x.tk]
		t.Action = negocios.ActionNew
		if x.cancel {
			t.Action = negocios.ActionCancel
		}
		t.Session = negocios.SessionRegular
		if x.after {
			t.Session = negocios.SessionAfterMarket
		}
		t.Price = int64(x.price) * (negocios.PriceScale / 100)
		t.Quantity = x.qty
		t.Time = negocios.UnixMilli(s.Day, int64(x.ms))
		t.ID = int64(x.id)
		t.Buyer, t.Seller = int32(x.buyer), int32(x.seller)
		if err := yield(&t); err != nil {
			return err
		}
	}
	return nil
}

// lastSessionFile gathers the rows of every ticker's last session.
func (g *gen) lastSessionFile(liq []liquid) *Session {
	s := &Session{Day: g.cal[len(g.cal)-1], prev: g.cal[len(g.cal)-2]}
	byName := append([]liquid(nil), liq...)
	sort.Slice(byName, func(a, b int) bool { return byName[a].ticker < byName[b].ticker })
	n := 0
	for _, l := range byName {
		n += len(g.outs[l.ent].last[l.class].rows)
	}
	s.rows = make([]srow, 0, n)
	for _, l := range byName {
		ls := &g.outs[l.ent].last[l.class]
		if len(ls.rows) == 0 {
			continue
		}
		tk := int32(len(s.tickers))
		s.tickers = append(s.tickers, l.ticker)
		for _, x := range ls.rows {
			x.tk = tk
			s.rows = append(s.rows, x)
		}
		ls.rows = nil
	}
	slices.SortFunc(s.rows, func(a, b srow) int { // a total order: (ticker, id, cancel) is unique
		switch {
		case a.ms != b.ms:
			return int(a.ms - b.ms)
		case a.tk != b.tk:
			return int(a.tk - b.tk)
		case a.id != b.id:
			return int(a.id - b.id)
		case a.cancel != b.cancel:
			if a.cancel {
				return 1
			}
			return -1
		}
		return 0
	})
	return s
}

// HoldBack returns u without its last session s: the daily rows of s.Day
// of every ticker that trades on it and every 1-minute bar of that day go
// (a series left empty goes too); as_of becomes the previous session's
// 18:30 (UTC−03:00) close. Everything else is u's: shares, indexes (whose
// portfolio is the session's, published before it opens), macro series
// (not traded on B3: their point of s.Day stays), reports and events.
// u's slices are shared, not modified.
func HoldBack(u *engine.Universe, s *Session) *engine.Universe {
	traded := make(map[string]bool, len(s.tickers))
	for _, t := range s.tickers {
		traded[t] = true
	}
	out := *u
	out.Daily = make([]engine.Series, 0, len(u.Daily))
	for _, x := range u.Daily {
		n := x.Len()
		if n > 0 && x.Dates[n-1] == s.Day && traded[x.Ticker] {
			if n == 1 {
				continue
			}
			x = sliceSeries(x, x.Ticker, 0, n-1)
		}
		out.Daily = append(out.Daily, x)
	}
	out.Intraday = make([]engine.Intraday, 0, len(u.Intraday))
	cut := int64(s.Day) * 86400
	for _, x := range u.Intraday {
		n, _ := slices.BinarySearch(x.Times, cut)
		if n == 0 {
			continue
		}
		out.Intraday = append(out.Intraday, engine.Intraday{Ticker: x.Ticker, Times: x.Times[:n:n], Open: x.Open[:n:n],
			High: x.High[:n:n], Low: x.Low[:n:n], Close: x.Close[:n:n], Volume: x.Volume[:n:n], Quantity: x.Quantity[:n:n]})
	}
	out.Meta.AsOf = localTime(s.prev, 18, 30)
	return &out
}
