package live

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// Trades aggregates pushed trades into 1-minute bars, as the other feeds
// aggregate B3's rows (negocios.Aggregator: cancellations, repeated and
// out-of-order trades, the regular session only unless after-market is
// asked). Trade ids are strings: a decimal id is its number (so that
// ties of time are broken by id as B3's files are), any other is given a
// number above every decimal one, in the order first seen. It is not
// safe for concurrent use.
type Trades struct {
	day  engine.Date
	agg  *negocios.Aggregator
	ids  map[string]map[string]int64 // ticker -> textual id -> number
	next int64
	buf  []negocios.Trade
}

// firstTextID is the number of the first id that is not decimal.
const firstTextID = 1 << 62

// MaxIDLen bounds a pushed trade's id.
const MaxIDLen = 64

// NewTrades returns an empty aggregation of session sd.
func NewTrades(sd engine.Date, afterMarket bool) *Trades {
	return &Trades{day: sd, agg: negocios.NewAggregator(sd, negocios.Config{AfterMarket: afterMarket}), ids: map[string]map[string]int64{}, next: firstTextID}
}

// Aggregator returns the aggregation (its Stats, bars and daily bars);
// the caller must not Apply to it.
func (t *Trades) Aggregator() *negocios.Aggregator { return t.agg }

// Check returns an error (wrapping engine.ErrLiveBatch) naming the first
// trade of ts a bar cannot come from: a code that is not a ticker, a time
// outside the session's day (B3's local day), a price that is not a
// positive amount of whole thousandths of BRL, a quantity that is not
// positive or a notional beyond negocios.MaxNotional, an id that is
// empty or longer than MaxIDLen. A batch that fails is refused whole.
// Repeated trades and cancellations of unknown trades are not errors:
// they are counted (Errors).
func (t *Trades) Check(ts []Trade) error {
	for i := range ts {
		if err := t.check(&ts[i]); err != nil {
			return fmt.Errorf("%w: trade %d (%s %s): %v", engine.ErrLiveBatch, i+1, ts[i].Ticker, ts[i].ID, err)
		}
	}
	return nil
}

func (t *Trades) check(x *Trade) error {
	switch {
	case !engine.ValidTicker(x.Ticker):
		return fmt.Errorf("ticker %q is not a ticker", x.Ticker)
	case x.ID == "" || len(x.ID) > MaxIDLen:
		return fmt.Errorf("id must have 1 to %d characters", MaxIDLen)
	case x.Time < -1<<53 || x.Time > 1<<53 || localDay(x.Time) != t.day:
		return fmt.Errorf("time %d is not in session %s (B3's local day)", x.Time, t.day)
	}
	p, ok := thousandths(x.Price)
	switch {
	case !ok || p <= 0:
		return fmt.Errorf("price %v is not a positive amount with at most 3 decimals", float64(x.Price))
	case x.Quantity <= 0:
		return fmt.Errorf("quantity %d is not positive", x.Quantity)
	case x.Quantity > negocios.MaxNotional/p:
		return fmt.Errorf("notional %v x %d is beyond %d BRL", float64(x.Price), x.Quantity, negocios.MaxNotional/negocios.PriceScale)
	}
	return nil
}

// localDay returns B3's local day of unix milliseconds ms.
func localDay(ms int64) engine.Date {
	l := ms + int64(negocios.LocalOffset.Milliseconds())
	return engine.Date(floorTo(l, 86400000) / 86400000)
}

// thousandths returns p in thousandths of BRL when it has at most three
// decimals (within the float's precision).
func thousandths(p engine.Num) (int64, bool) {
	f := float64(p) * negocios.PriceScale
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1<<50 {
		return 0, false
	}
	r := math.Round(f)
	if math.Abs(f-r) > 1e-6*math.Max(1, math.Abs(f)) {
		return 0, false
	}
	return int64(r), true
}

// Apply aggregates ts (checked: see Check) and returns the bars that
// changed, ordered by ticker and minute.
func (t *Trades) Apply(ts []Trade) []engine.LiveBar {
	t.buf = t.buf[:0]
	for i := range ts {
		x := &ts[i]
		p, _ := thousandths(x.Price)
		r := negocios.Trade{RefDate: t.day, TradeDate: t.day, Ticker: x.Ticker, Action: negocios.ActionNew,
			Session: negocios.SessionRegular, Price: p, Quantity: x.Quantity, Time: x.Time, ID: t.id(x.Ticker, x.ID)}
		if x.Cancel {
			r.Action = negocios.ActionCancel
		}
		if x.AfterMarket {
			r.Session = negocios.SessionAfterMarket
		}
		t.buf = append(t.buf, r)
	}
	ch := t.agg.Apply(t.buf)
	bars := make([]engine.LiveBar, len(ch.Bars))
	for i := range ch.Bars {
		bars[i] = LiveBar(&ch.Bars[i])
	}
	return bars
}

// id returns the number of ticker's trade id s.
func (t *Trades) id(ticker, s string) int64 {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 && n < firstTextID && strconv.FormatInt(n, 10) == s {
		return n
	}
	m := t.ids[ticker]
	if m == nil {
		m = map[string]int64{}
		t.ids[ticker] = m
	}
	n, ok := m[s]
	if !ok {
		n = t.next
		t.next++
		m[s] = n
	}
	return n
}

// Errors returns the trades counted so far by reason (repeated trades and
// cancellations, cancellations of unknown trades, out-of-order trades).
func (t *Trades) Errors() map[string]int64 {
	m := map[string]int64{}
	st := t.agg.Stats()
	addAggStats(m, st)
	m[ReasonOutOfOrder] += st.OutOfOrder
	return m
}
