package negocios

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/pregao/pregao/engine"
)

// Config tunes an Aggregator. The zero value is the default.
type Config struct {
	// AfterMarket puts after-market trades (session 6) into the 1-minute
	// bars and the daily bar. Default false: the bars hold the regular
	// session only, as COTAHIST's daily bar is taken to (see the package
	// documentation); after-market trades are still recorded, so that
	// their cancellations match, and counted in Stats.Excluded.
	AfterMarket bool
	// Accept, when set, is asked once per instrument code; trades of a
	// code it refuses are counted in Stats.Ignored and dropped (another
	// market's instruments in a whole-market file, tickers the consumer
	// does not know).
	Accept func(ticker string) bool
}

// Limits that keep every sum exact in int64: a trade's notional (price x
// quantity) is at most MaxNotional thousandths of BRL (8.8 billion BRL),
// and a ticker has at most MaxTradesPerTicker trades a day, so a day's
// volume stays below 2^63.
const (
	MaxNotional        = 1 << 43
	MaxTradesPerTicker = 1 << 20
)

// Stats counts what an Aggregator did with the rows it was given. Every
// row counts in exactly one of Trades, Cancels, UnknownCancels,
// Duplicates and the refusals (WrongDay to Ignored); OutOfOrder and
// Excluded count subsets of Trades.
type Stats struct {
	Trades     int64 // new trades recorded
	Cancels    int64 // cancellations of a recorded trade, applied
	Duplicates int64 // a trade id already recorded, or a cancellation repeated: ignored
	// OutOfOrder counts trades recorded although older (time, then id)
	// than the newest trade of their ticker recorded before: they are
	// put in their place (included in Trades).
	OutOfOrder int64
	// UnknownCancels counts cancellations of a trade not recorded when
	// they came: remembered, and applied if the trade comes later.
	UnknownCancels int64
	// Excluded counts after-market trades recorded outside the bars
	// (Config.AfterMarket false; included in Trades).
	Excluded int64

	WrongDay    int64 // refused: a trade date other than the Aggregator's day
	BadPrice    int64 // refused: a trade's price <= 0
	BadQuantity int64 // refused: a trade's quantity <= 0, or its notional above MaxNotional
	BadAction   int64 // refused: an action other than 0 (new) and 2 (cancellation)
	BadSession  int64 // refused: a session other than 1 (regular) and 6 (after-market)
	TooMany     int64 // refused: a trade beyond MaxTradesPerTicker
	Ignored     int64 // refused by Config.Accept
}

// Refused returns the number of rows refused.
func (s Stats) Refused() int64 {
	return s.WrongDay + s.BadPrice + s.BadQuantity + s.BadAction + s.BadSession + s.TooMany + s.Ignored
}

// MinuteBar is the 1-minute bar of one ticker: its trades in [Time, Time
// + 60 s), cancelled ones and excluded sessions left out. Prices are
// thousandths of BRL (PriceScale), Volume the exact sum of price x
// quantity in thousandths of BRL. A Removed bar had trades the consumer
// was shown and has none left (every one was cancelled): its values are
// zero.
type MinuteBar struct {
	Ticker   string
	Time     int64 // unix seconds, UTC: the minute's start
	Open     int64 // the first trade's price (earliest time, then lowest id)
	High     int64
	Low      int64
	Close    int64 // the last trade's price (latest time, then highest id)
	Volume   int64 // thousandths of BRL
	Quantity int64 // shares
	Trades   int64
	Removed  bool
}

// DailyBar is the provisional daily bar of one ticker: the fold of its
// 1-minute bars so far, in the same units. Removed: the ticker has no
// trade left.
type DailyBar struct {
	Ticker   string
	Date     engine.Date
	Open     int64
	High     int64
	Low      int64
	Close    int64
	Volume   int64
	Quantity int64
	Trades   int64
	Removed  bool
}

// VolumeNum returns a volume in thousandths of BRL as an engine.Num in
// BRL: the float nearest to the decimal, so a volume of whole cents is
// the float engine.Cents recognizes.
func VolumeNum(v int64) engine.Num { return engine.Num(float64(v) / PriceScale) }

// Bar returns b in engine units (BRL floats; Trades is dropped, as
// engine.Intraday has no such column). Factor is Null: the consumer knows
// the ticker's adjustment.
func (b *MinuteBar) Bar() engine.Bar {
	if b.Removed {
		return engine.Bar{Time: b.Time, Date: engine.Date(floorDiv(b.Time, 86400)), Open: engine.Null, High: engine.Null,
			Low: engine.Null, Close: engine.Null, Volume: engine.Null, Quantity: engine.Null, Factor: engine.Null}
	}
	return engine.Bar{Time: b.Time, Date: engine.Date(floorDiv(b.Time, 86400)), Open: PriceNum(b.Open), High: PriceNum(b.High),
		Low: PriceNum(b.Low), Close: PriceNum(b.Close), Volume: VolumeNum(b.Volume), Quantity: engine.Num(b.Quantity),
		Trades: b.Trades, Factor: engine.Null}
}

// Bar returns b in engine units, as MinuteBar.Bar does.
func (b *DailyBar) Bar() engine.Bar {
	if b.Removed {
		return engine.Bar{Time: int64(b.Date) * 86400, Date: b.Date, Open: engine.Null, High: engine.Null,
			Low: engine.Null, Close: engine.Null, Volume: engine.Null, Quantity: engine.Null, Factor: engine.Null}
	}
	return engine.Bar{Time: int64(b.Date) * 86400, Date: b.Date, Open: PriceNum(b.Open), High: PriceNum(b.High),
		Low: PriceNum(b.Low), Close: PriceNum(b.Close), Volume: VolumeNum(b.Volume), Quantity: engine.Num(b.Quantity),
		Trades: b.Trades, Factor: engine.Null}
}

// Changes is what one Apply changed: every (ticker, minute) bar whose
// value differs from the one reported before (or is new), with its full
// new value, ordered by ticker then time; and the provisional daily bar
// of every ticker that changed, ordered by ticker. A consumer applying
// them "last writer wins per ticker and minute" holds the Aggregator's
// bars.
type Changes struct {
	Bars  []MinuteBar
	Daily []DailyBar
}

// Aggregator turns the trades and cancellations of one session into
// 1-minute bars and a provisional daily bar per ticker, incrementally. The
// result depends only on the set of rows applied, not on their order or
// on how they are split in batches. It keeps every trade of the day
// (about 60 bytes each). It is not safe for concurrent use.
type Aggregator struct {
	day     engine.Date
	cfg     Config
	tickers map[string]*tickerState
	decided map[string]bool // Accept's answers
	dirty   []*tickerState
	touched int // minutes in the dirty tickers' lists
	stats   Stats
}

// NewAggregator returns an empty Aggregator of the session on day (trades
// whose TradeDate differs are refused).
func NewAggregator(day engine.Date, cfg Config) *Aggregator {
	return &Aggregator{day: day, cfg: cfg, tickers: map[string]*tickerState{}, decided: map[string]bool{}}
}

// Day returns the Aggregator's session.
func (a *Aggregator) Day() engine.Date { return a.day }

// Stats returns the counts so far.
func (a *Aggregator) Stats() Stats { return a.stats }

type rec struct {
	ms, id, price, qty int64
	cancelled          bool
	excluded           bool // outside the bars (after-market without Config.AfterMarket)
}

type minuteState struct {
	key     int64   // the minute's start, unix seconds
	recs    []int32 // indexes into tickerState.recs
	out     MinuteBar
	emitted bool
	dirty   bool
}

type tickerState struct {
	name     string
	ids      map[int64]int32
	recs     []rec
	mins     map[int64]*minuteState
	sorted   []*minuteState // mins by key, ascending
	last     *minuteState   // the minute of the last trade recorded
	pending  map[int64]bool
	newestMs int64
	newestID int64
	dirty    []*minuteState // minutes touched in this batch
	isDirty  bool
	daily    DailyBar // as last reported (Trades 0: none)
	first    int64    // the first and last minutes with trades in daily
	lastKey  int64
}

// Apply applies a batch of rows (trades and cancellations, any order)
// and returns what changed. Rows refused or ignored are counted in Stats.
func (a *Aggregator) Apply(batch []Trade) Changes {
	for i := range batch {
		a.apply(&batch[i])
	}
	return a.flush()
}

func (a *Aggregator) apply(t *Trade) {
	switch {
	case t.TradeDate != a.day:
		a.stats.WrongDay++
		return
	case t.Action != ActionNew && t.Action != ActionCancel:
		a.stats.BadAction++
		return
	case t.Session != SessionRegular && t.Session != SessionAfterMarket:
		a.stats.BadSession++
		return
	}
	tk := a.tickers[t.Ticker]
	if tk == nil {
		if !a.accepts(t.Ticker) {
			a.stats.Ignored++
			return
		}
		tk = &tickerState{name: t.Ticker, ids: map[int64]int32{}, mins: map[int64]*minuteState{}, newestMs: -1 << 63,
			daily: DailyBar{Ticker: t.Ticker, Date: a.day}}
		a.tickers[t.Ticker] = tk
	}
	if t.Action == ActionCancel {
		a.cancel(tk, t)
		return
	}
	switch hi, lo := bits.Mul64(uint64(max(t.Price, 0)), uint64(max(t.Quantity, 0))); {
	case t.Price <= 0:
		a.stats.BadPrice++
		return
	case t.Quantity <= 0 || hi != 0 || lo > MaxNotional:
		a.stats.BadQuantity++
		return
	}
	if _, seen := tk.ids[t.ID]; seen {
		a.stats.Duplicates++
		return
	}
	if len(tk.recs) >= MaxTradesPerTicker {
		a.stats.TooMany++
		return
	}
	if t.Time < tk.newestMs || t.Time == tk.newestMs && t.ID < tk.newestID {
		a.stats.OutOfOrder++
	} else {
		tk.newestMs, tk.newestID = t.Time, t.ID
	}
	a.stats.Trades++
	r := rec{ms: t.Time, id: t.ID, price: t.Price, qty: t.Quantity}
	if tk.pending[t.ID] {
		delete(tk.pending, t.ID)
		r.cancelled = true
	}
	if t.Session == SessionAfterMarket && !a.cfg.AfterMarket {
		r.excluded = true
		a.stats.Excluded++
	}
	idx := int32(len(tk.recs))
	tk.recs = append(tk.recs, r)
	tk.ids[t.ID] = idx
	if r.excluded || r.cancelled {
		return
	}
	key := t.Minute()
	m := tk.last
	if m == nil || m.key != key {
		m = tk.mins[key]
		if m == nil {
			m = &minuteState{key: key}
			tk.mins[key] = m
			if n := len(tk.sorted); n == 0 || tk.sorted[n-1].key < key {
				tk.sorted = append(tk.sorted, m) // the usual case: trades come in time order
			} else {
				i, _ := slices.BinarySearchFunc(tk.sorted, key, func(m *minuteState, k int64) int { return cmp.Compare(m.key, k) })
				tk.sorted = slices.Insert(tk.sorted, i, m)
			}
		}
		tk.last = m
	}
	m.recs = append(m.recs, idx)
	a.touch(tk, m)
}

// accepts reports whether Config.Accept takes ticker, asking it once.
func (a *Aggregator) accepts(ticker string) bool {
	if a.cfg.Accept == nil || a.tickers[ticker] != nil {
		return true
	}
	ok, asked := a.decided[ticker]
	if !asked {
		ok = a.cfg.Accept(ticker)
		a.decided[ticker] = ok
	}
	return ok
}

func (a *Aggregator) cancel(tk *tickerState, t *Trade) {
	idx, ok := tk.ids[t.ID]
	if !ok {
		if tk.pending[t.ID] {
			a.stats.Duplicates++
			return
		}
		if tk.pending == nil {
			tk.pending = map[int64]bool{}
		}
		tk.pending[t.ID] = true
		a.stats.UnknownCancels++
		return
	}
	r := &tk.recs[idx]
	if r.cancelled {
		a.stats.Duplicates++
		return
	}
	r.cancelled = true
	a.stats.Cancels++
	if r.excluded {
		return
	}
	a.touch(tk, tk.mins[floorDiv(r.ms, 60000)*60])
}

// touch marks minute m of tk changed in this batch.
func (a *Aggregator) touch(tk *tickerState, m *minuteState) {
	if !m.dirty {
		m.dirty = true
		tk.dirty = append(tk.dirty, m)
		a.touched++
	}
	if !tk.isDirty {
		tk.isDirty = true
		a.dirty = append(a.dirty, tk)
	}
}

// flush recomputes the bars touched since the last flush and returns
// those whose value changed.
func (a *Aggregator) flush() Changes {
	if len(a.dirty) == 0 {
		return Changes{}
	}
	ch := Changes{Bars: make([]MinuteBar, 0, a.touched), Daily: make([]DailyBar, 0, len(a.dirty))}
	a.touched = 0
	slices.SortFunc(a.dirty, func(x, y *tickerState) int { return strings.Compare(x.name, y.name) })
	for _, tk := range a.dirty {
		tk.isDirty = false
		if tk.settle(a.day, &ch.Bars) {
			ch.Daily = append(ch.Daily, tk.daily)
		}
	}
	a.dirty = a.dirty[:0]
	if len(ch.Bars) == 0 {
		return Changes{}
	}
	return ch
}

// settle recomputes the minutes of tk touched since it last settled and
// its daily bar, appends the bars that changed to bars (when not nil) and
// reports whether any did.
func (tk *tickerState) settle(day engine.Date, bars *[]MinuteBar) bool {
	if len(tk.dirty) > 1 {
		slices.SortFunc(tk.dirty, func(x, y *minuteState) int { return cmp.Compare(x.key, y.key) })
	}
	changed, full := false, false
	for _, m := range tk.dirty {
		m.dirty = false
		b := tk.minuteBar(m)
		if b == m.out || !m.emitted && b.Removed {
			continue
		}
		old := m.out
		m.out, m.emitted = b, true
		if bars != nil {
			*bars = append(*bars, b)
		}
		changed = true
		if !full {
			full = !tk.fold(&old, &b)
		}
	}
	tk.dirty = tk.dirty[:0]
	if full {
		tk.refold(day)
	}
	if tk.daily.Trades == 0 {
		tk.daily = DailyBar{Ticker: tk.name, Date: day, Removed: true}
	}
	return changed
}

// settleSilently brings ticker's bars up to date with the rows applied so
// far without reporting them: the consumer holds them already (a
// restarted Poller rebuilding from files it had applied).
func (a *Aggregator) settleSilently(ticker string) {
	tk := a.tickers[ticker]
	if tk == nil {
		return
	}
	a.touched -= len(tk.dirty)
	tk.settle(a.day, nil)
}

// minuteBar computes the bar of minute m from its trades.
func (tk *tickerState) minuteBar(m *minuteState) MinuteBar {
	b := MinuteBar{Ticker: tk.name, Time: m.key}
	var first, last *rec
	for _, i := range m.recs {
		r := &tk.recs[i]
		if r.cancelled {
			continue
		}
		if first == nil {
			first, last = r, r
			b.High, b.Low = r.price, r.price
		}
		if r.ms < first.ms || r.ms == first.ms && r.id < first.id {
			first = r
		}
		if r.ms > last.ms || r.ms == last.ms && r.id > last.id {
			last = r
		}
		b.High = max(b.High, r.price)
		b.Low = min(b.Low, r.price)
		b.Volume += r.price * r.qty
		b.Quantity += r.qty
		b.Trades++
	}
	if first == nil {
		return MinuteBar{Ticker: tk.name, Time: m.key, Removed: true}
	}
	b.Open, b.Close = first.price, last.price
	return b
}

// fold updates tk's daily bar for a minute bar that changed from o to n
// (either may be Removed, or zero when never reported) and reports
// whether it could: a lower high, a higher low, or the first or last
// minute emptied need the whole fold (refold).
func (tk *tickerState) fold(o, n *MinuteBar) bool {
	d := &tk.daily
	had, has := o.Trades > 0, n.Trades > 0
	if d.Trades == 0 || d.Removed {
		if !has {
			return true
		}
		*d = DailyBar{Ticker: tk.name, Date: d.Date, Open: n.Open, High: n.High, Low: n.Low, Close: n.Close,
			Volume: n.Volume, Quantity: n.Quantity, Trades: n.Trades}
		tk.first, tk.lastKey = n.Time, n.Time
		return true
	}
	d.Volume += n.Volume - o.Volume
	d.Quantity += n.Quantity - o.Quantity
	d.Trades += n.Trades - o.Trades
	if had && (o.High == d.High && (!has || n.High < o.High) || o.Low == d.Low && (!has || n.Low > o.Low)) {
		return false
	}
	if has {
		d.High, d.Low = max(d.High, n.High), min(d.Low, n.Low)
	}
	switch k := n.Time; {
	case !has && (k == tk.first || k == tk.lastKey):
		return false
	case !has:
	case k <= tk.first:
		tk.first, d.Open = k, n.Open
		if k >= tk.lastKey {
			tk.lastKey, d.Close = k, n.Close
		}
	case k >= tk.lastKey:
		tk.lastKey, d.Close = k, n.Close
	}
	return true
}

// refold computes tk's daily bar from its reported minute bars.
func (tk *tickerState) refold(day engine.Date) {
	d := DailyBar{Ticker: tk.name, Date: day}
	for _, m := range tk.sorted {
		if !m.emitted || m.out.Removed {
			continue
		}
		b := &m.out
		if d.Trades == 0 {
			d.Open, d.High, d.Low = b.Open, b.High, b.Low
			tk.first = b.Time
		}
		d.High = max(d.High, b.High)
		d.Low = min(d.Low, b.Low)
		d.Close = b.Close
		tk.lastKey = b.Time
		d.Volume += b.Volume
		d.Quantity += b.Quantity
		d.Trades += b.Trades
	}
	tk.daily = d
}

// Tickers returns the tickers with at least one trade recorded, sorted.
func (a *Aggregator) Tickers() []string {
	out := make([]string, 0, len(a.tickers))
	for t, tk := range a.tickers {
		if len(tk.recs) > 0 {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// Bars appends the current 1-minute bars of ticker (none removed),
// ascending, to dst and returns the result. Bars touched by rows not yet
// flushed by Apply are as last reported.
func (a *Aggregator) Bars(dst []MinuteBar, ticker string) []MinuteBar {
	tk := a.tickers[ticker]
	if tk == nil {
		return dst
	}
	for _, m := range tk.sorted {
		if m.emitted && !m.out.Removed {
			dst = append(dst, m.out)
		}
	}
	return dst
}

// Daily returns the provisional daily bar of ticker and whether it has
// one (a trade not cancelled, in the sessions the bars hold).
func (a *Aggregator) Daily(ticker string) (DailyBar, bool) {
	tk := a.tickers[ticker]
	if tk == nil || tk.daily.Trades == 0 {
		return DailyBar{}, false
	}
	return tk.daily, true
}
