package negocios

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
)

var d0 = day(2026, 11, 19)

// tr returns a regular-session trade of ticker on d0 at local hh:mm:ss.
func tr(ticker string, id int64, hh, mm, ss int, price, qty int64) Trade {
	return Trade{RefDate: d0, TradeDate: d0, Ticker: ticker, Session: SessionRegular, Price: price, Quantity: qty,
		Time: at(d0, hh, mm, ss, 0), ID: id}
}

func cancelOf(t Trade, hh, mm int) Trade {
	t.Action = ActionCancel
	t.Time = at(d0, hh, mm, 0, 0)
	return t
}

func minute(hh, mm int) int64 { return at(d0, hh, mm, 0, 0) / 1000 }

// TestAggregateBars: open and close by time then id, high, low, exact
// volume, and the daily fold.
func TestAggregateBars(t *testing.T) {
	a := NewAggregator(d0, Config{})
	ch := a.Apply([]Trade{
		tr("PLAE3", 30, 10, 0, 30, 23450, 300),
		tr("PLAE3", 10, 10, 0, 1, 23480, 100),
		tr("PLAE3", 20, 10, 0, 1, 23500, 200), // same ms as 10: later by id
		tr("PLAE3", 40, 10, 1, 0, 23470, 100),
		tr("LITA11", 10, 10, 1, 12, 101010, 5),
	})
	want := Changes{
		Bars: []MinuteBar{
			{Ticker: "LITA11", Time: minute(10, 1), Open: 101010, High: 101010, Low: 101010, Close: 101010, Volume: 505050, Quantity: 5, Trades: 1},
			{Ticker: "PLAE3", Time: minute(10, 0), Open: 23480, High: 23500, Low: 23450, Close: 23450,
				Volume: 23480*100 + 23500*200 + 23450*300, Quantity: 600, Trades: 3},
			{Ticker: "PLAE3", Time: minute(10, 1), Open: 23470, High: 23470, Low: 23470, Close: 23470, Volume: 2347000, Quantity: 100, Trades: 1},
		},
		Daily: []DailyBar{
			{Ticker: "LITA11", Date: d0, Open: 101010, High: 101010, Low: 101010, Close: 101010, Volume: 505050, Quantity: 5, Trades: 1},
			{Ticker: "PLAE3", Date: d0, Open: 23480, High: 23500, Low: 23450, Close: 23470,
				Volume: 23480*100 + 23500*200 + 23450*300 + 2347000, Quantity: 700, Trades: 4},
		},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Errorf("changes\n%+v\nwant\n%+v", ch, want)
	}
	if st := a.Stats(); st.Trades != 5 || st.OutOfOrder != 2 || st.Refused() != 0 {
		t.Errorf("stats %+v", st)
	}
	b := ch.Daily[1].Bar()
	if b.Volume != 16430.0 || b.Close != 23.47 || b.Quantity != 700 || b.Trades != 4 || b.Time != int64(d0)*86400 {
		t.Errorf("daily engine bar %+v", b)
	}
	if m := ch.Bars[0].Bar(); m.Volume != 505.05 || m.Open != 101.01 || m.Date != d0 || m.Time != minute(10, 1) {
		t.Errorf("minute engine bar %+v", m)
	}
	if got := a.Tickers(); !slices.Equal(got, []string{"LITA11", "PLAE3"}) {
		t.Errorf("tickers %v", got)
	}
}

// TestAggregateCancel: a cancellation re-emits its minute, a minute with
// no trade left is emitted as removed, the daily bar follows.
func TestAggregateCancel(t *testing.T) {
	a := NewAggregator(d0, Config{})
	t1 := tr("PLAE3", 10, 10, 0, 1, 23480, 100)
	t2 := tr("PLAE3", 20, 10, 0, 2, 25000, 200)
	t3 := tr("PLAE3", 30, 10, 5, 0, 23400, 100)
	a.Apply([]Trade{t1, t2, t3})
	ch := a.Apply([]Trade{cancelOf(t2, 11, 0)})
	want := []MinuteBar{{Ticker: "PLAE3", Time: minute(10, 0), Open: 23480, High: 23480, Low: 23480, Close: 23480, Volume: 2348000, Quantity: 100, Trades: 1}}
	if !reflect.DeepEqual(ch.Bars, want) {
		t.Errorf("bars %+v", ch.Bars)
	}
	if len(ch.Daily) != 1 || ch.Daily[0].High != 23480 || ch.Daily[0].Trades != 2 {
		t.Errorf("daily %+v", ch.Daily)
	}
	ch = a.Apply([]Trade{cancelOf(t3, 12, 0)})
	if !reflect.DeepEqual(ch.Bars, []MinuteBar{{Ticker: "PLAE3", Time: minute(10, 5), Removed: true}}) {
		t.Errorf("bars %+v", ch.Bars)
	}
	if d := ch.Daily[0]; d.Close != 23480 || d.Low != 23480 || d.Trades != 1 {
		t.Errorf("daily %+v", d)
	}
	ch = a.Apply([]Trade{cancelOf(t1, 12, 0)})
	if !reflect.DeepEqual(ch.Daily, []DailyBar{{Ticker: "PLAE3", Date: d0, Removed: true}}) || ch.Daily[0].Bar().Close.Valid() {
		t.Errorf("daily %+v", ch.Daily)
	}
	if _, ok := a.Daily("PLAE3"); ok {
		t.Error("a ticker without trades has a daily bar")
	}
	// A repeated cancellation changes nothing.
	if ch := a.Apply([]Trade{cancelOf(t1, 13, 0)}); ch.Bars != nil || ch.Daily != nil {
		t.Errorf("changes %+v", ch)
	}
	if st := a.Stats(); st.Trades != 3 || st.Cancels != 3 || st.Duplicates != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestAggregateCancelFirst: a cancellation of an unknown trade is
// counted; the trade, when it comes, is recorded as cancelled and never
// shown.
func TestAggregateCancelFirst(t *testing.T) {
	a := NewAggregator(d0, Config{})
	t1 := tr("PLAE3", 10, 10, 0, 1, 23480, 100)
	if ch := a.Apply([]Trade{cancelOf(t1, 11, 0)}); ch.Bars != nil {
		t.Errorf("changes %+v", ch)
	}
	if ch := a.Apply([]Trade{t1}); ch.Bars != nil || ch.Daily != nil {
		t.Errorf("changes %+v", ch)
	}
	// A trade and its cancellation in one batch show nothing either.
	t2 := tr("PLAE3", 20, 10, 2, 0, 23480, 100)
	if ch := a.Apply([]Trade{t2, cancelOf(t2, 11, 0)}); ch.Bars != nil {
		t.Errorf("changes %+v", ch)
	}
	if st := a.Stats(); st.UnknownCancels != 1 || st.Cancels != 1 || st.Trades != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestAggregateDuplicates: a trade id seen before is counted and ignored,
// whatever its content.
func TestAggregateDuplicates(t *testing.T) {
	a := NewAggregator(d0, Config{})
	t1 := tr("PLAE3", 10, 10, 0, 1, 23480, 100)
	a.Apply([]Trade{t1})
	t1b := t1
	t1b.Price = 99999
	if ch := a.Apply([]Trade{t1, t1b}); ch.Bars != nil || ch.Daily != nil {
		t.Errorf("changes %+v", ch)
	}
	// The same id on another ticker is another trade.
	if ch := a.Apply([]Trade{tr("LITA11", 10, 10, 0, 1, 100000, 1)}); len(ch.Bars) != 1 {
		t.Errorf("changes %+v", ch)
	}
	if st := a.Stats(); st.Duplicates != 2 || st.Trades != 2 {
		t.Errorf("stats %+v", st)
	}
}

// TestAggregateRefused: every refusal is counted and changes nothing.
func TestAggregateRefused(t *testing.T) {
	a := NewAggregator(d0, Config{Accept: func(t string) bool { return t != "DI1F27" }})
	ok := tr("PLAE3", 10, 10, 0, 1, 23480, 100)
	wrongDay := ok
	wrongDay.TradeDate, wrongDay.Time = d0+1, at(d0+1, 10, 0, 0, 0)
	zero, neg, noQty, huge, badAct, badSess, other := ok, ok, ok, ok, ok, ok, ok
	zero.Price = 0
	neg.Price = -35
	noQty.Quantity = 0
	huge.Quantity = MaxNotional/huge.Price + 1
	badAct.Action = 1
	badSess.Session = 2
	other.Ticker = "DI1F27"
	ch := a.Apply([]Trade{wrongDay, zero, neg, noQty, huge, badAct, badSess, other, other})
	if ch.Bars != nil {
		t.Errorf("changes %+v", ch)
	}
	want := Stats{WrongDay: 1, BadPrice: 2, BadQuantity: 2, BadAction: 1, BadSession: 1, Ignored: 2}
	if st := a.Stats(); st != want || st.Refused() != 9 {
		t.Errorf("stats %+v\nwant  %+v", st, want)
	}
	// A refused trade's id stays free.
	if ch := a.Apply([]Trade{ok}); len(ch.Bars) != 1 {
		t.Errorf("changes %+v", ch)
	}
}

// TestAggregateTooMany refuses trades beyond MaxTradesPerTicker.
func TestAggregateTooMany(t *testing.T) {
	a := NewAggregator(d0, Config{})
	batch := make([]Trade, MaxTradesPerTicker+2)
	for i := range batch {
		batch[i] = tr("PLAE3", int64(i+1), 10, 0, 0, 1000, 1)
	}
	a.Apply(batch)
	if st := a.Stats(); st.TooMany != 2 || st.Trades != MaxTradesPerTicker {
		t.Errorf("stats %+v", st)
	}
	if d, _ := a.Daily("PLAE3"); d.Volume != MaxTradesPerTicker*1000 {
		t.Errorf("daily %+v", d)
	}
}

// TestAggregateAfterMarket: after-market trades stay out of the bars by
// default (recorded, their cancellations matched) and enter them with
// Config.AfterMarket.
func TestAggregateAfterMarket(t *testing.T) {
	reg := tr("PLAE3", 10, 16, 59, 59, 23480, 100)
	after := tr("PLAE3", 20, 17, 30, 10, 23500, 100)
	after.Session = SessionAfterMarket
	a := NewAggregator(d0, Config{})
	ch := a.Apply([]Trade{reg, after})
	if len(ch.Bars) != 1 || ch.Daily[0].Close != 23480 || ch.Daily[0].Trades != 1 {
		t.Errorf("regular only: %+v", ch)
	}
	if ch := a.Apply([]Trade{cancelOf(after, 17, 50)}); ch.Bars != nil {
		t.Errorf("cancel of an excluded trade: %+v", ch)
	}
	if st := a.Stats(); st.Excluded != 1 || st.Cancels != 1 || st.UnknownCancels != 0 {
		t.Errorf("stats %+v", st)
	}
	a = NewAggregator(d0, Config{AfterMarket: true})
	ch = a.Apply([]Trade{reg, after})
	if len(ch.Bars) != 2 || ch.Daily[0].Close != 23500 || ch.Daily[0].Trades != 2 {
		t.Errorf("all sessions: %+v", ch)
	}
}

// reference computes the bars of rows from scratch: a trade counts when
// no cancellation of its (ticker, id) is among the rows; the first row of
// an id wins, as the Aggregator's first writer does.
func reference(rows []Trade, cfg Config) (map[string][]MinuteBar, map[string]DailyBar) {
	type key struct {
		t  string
		id int64
	}
	cancelled := map[key]bool{}
	for _, r := range rows {
		if r.Action == ActionCancel && r.TradeDate == d0 {
			cancelled[key{r.Ticker, r.ID}] = true
		}
	}
	first := map[key]Trade{}
	var order []key
	for _, r := range rows {
		k := key{r.Ticker, r.ID}
		if r.Action != ActionNew || r.TradeDate != d0 || r.Price <= 0 || r.Quantity <= 0 {
			continue
		}
		if _, ok := first[k]; !ok {
			first[k] = r
			order = append(order, k)
		}
	}
	var live []Trade
	for _, k := range order {
		r := first[k]
		if cancelled[k] || r.Session == SessionAfterMarket && !cfg.AfterMarket {
			continue
		}
		live = append(live, r)
	}
	sort.Slice(live, func(i, j int) bool {
		a, b := live[i], live[j]
		if a.Ticker != b.Ticker {
			return a.Ticker < b.Ticker
		}
		if a.Time != b.Time {
			return a.Time < b.Time
		}
		return a.ID < b.ID
	})
	bars := map[string][]MinuteBar{}
	daily := map[string]DailyBar{}
	for _, r := range live {
		bs := bars[r.Ticker]
		m := r.Minute()
		if n := len(bs); n == 0 || bs[n-1].Time != m {
			bs = append(bs, MinuteBar{Ticker: r.Ticker, Time: m, Open: r.Price, High: r.Price, Low: r.Price})
		}
		b := &bs[len(bs)-1]
		b.High, b.Low, b.Close = max(b.High, r.Price), min(b.Low, r.Price), r.Price
		b.Volume += r.Price * r.Quantity
		b.Quantity += r.Quantity
		b.Trades++
		bars[r.Ticker] = bs
		d, ok := daily[r.Ticker]
		if !ok {
			d = DailyBar{Ticker: r.Ticker, Date: d0, Open: r.Price, High: r.Price, Low: r.Price}
		}
		d.High, d.Low, d.Close = max(d.High, r.Price), min(d.Low, r.Price), r.Price
		d.Volume += r.Price * r.Quantity
		d.Quantity += r.Quantity
		d.Trades++
		daily[r.Ticker] = d
	}
	return bars, daily
}

// foldBars is the daily bar of bars (Removed when there is none).
func foldBars(bars []MinuteBar, ticker string) DailyBar {
	d := DailyBar{Ticker: ticker, Date: d0, Removed: true}
	for i, b := range bars {
		if i == 0 {
			d = DailyBar{Ticker: ticker, Date: d0, Open: b.Open, High: b.High, Low: b.Low}
		}
		d.High, d.Low, d.Close = max(d.High, b.High), min(d.Low, b.Low), b.Close
		d.Volume += b.Volume
		d.Quantity += b.Quantity
		d.Trades += b.Trades
	}
	return d
}

// randomRows draws a session's rows: trades in a few tickers, many in the
// same minute and the same millisecond, duplicates, cancellations (also
// of unknown trades and repeated), after-market trades and refusals.
func randomRows(r *rand.Rand) []Trade {
	tickers := []string{"AAAA3", "BBBB4", "CCCC11"}
	var rows []Trade
	for _, tk := range tickers {
		n := 1 + r.IntN(60)
		for i := 0; i < n; i++ {
			x := tr(tk, int64(10*(i+1)), 10, r.IntN(4), r.IntN(3)*20, 1000+r.Int64N(50)*10, 100*(1+r.Int64N(5)))
			if r.IntN(10) == 0 {
				x.Session = SessionAfterMarket
				x.Time = at(d0, 17, 30+r.IntN(2), 0, 0)
			}
			rows = append(rows, x)
			switch r.IntN(12) {
			case 0:
				rows = append(rows, cancelOf(x, 11, 0))
			case 1:
				rows = append(rows, x) // duplicate
			case 2:
				rows = append(rows, cancelOf(x, 11, 0), cancelOf(x, 12, 0))
			case 3:
				y := x
				y.Price = 0
				rows = append(rows, y)
			}
		}
		rows = append(rows, cancelOf(tr(tk, 999999, 10, 0, 0, 1000, 100), 11, 0)) // unknown
	}
	return rows
}

// TestAggregateAnyOrder: whatever the order of the rows and their
// batches, a consumer applying the changes "last writer wins per ticker
// and minute" ends with the bars computed from scratch, the Aggregator's
// Bars and Daily agree, and every row is counted once.
func TestAggregateAnyOrder(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		rows := randomRows(r)
		cfg := Config{AfterMarket: seed%2 == 1}
		wantBars, wantDaily := reference(rows, cfg)
		r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		a := NewAggregator(d0, cfg)
		held := map[string]map[int64]MinuteBar{}
		daily := map[string]DailyBar{}
		for i := 0; i < len(rows); {
			n := 1 + r.IntN(len(rows)-i)
			ch := a.Apply(rows[i : i+n])
			i += n
			if !sort.SliceIsSorted(ch.Bars, func(x, y int) bool {
				a, b := ch.Bars[x], ch.Bars[y]
				return a.Ticker < b.Ticker || a.Ticker == b.Ticker && a.Time < b.Time
			}) {
				t.Fatalf("seed %d: bars not ordered: %+v", seed, ch.Bars)
			}
			for _, b := range ch.Bars {
				if held[b.Ticker] == nil {
					held[b.Ticker] = map[int64]MinuteBar{}
				}
				if b.Removed {
					delete(held[b.Ticker], b.Time)
				} else {
					held[b.Ticker][b.Time] = b
				}
			}
			for _, d := range ch.Daily {
				daily[d.Ticker] = d
				if want := foldBars(a.Bars(nil, d.Ticker), d.Ticker); d != want {
					t.Fatalf("seed %d: reported daily %+v, the fold of the bars is %+v", seed, d, want)
				}
			}
		}
		for tk, want := range wantBars {
			var got []MinuteBar
			for _, b := range held[tk] {
				got = append(got, b)
			}
			sort.Slice(got, func(i, j int) bool { return got[i].Time < got[j].Time })
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d %s: consumer holds\n%+v\nwant\n%+v", seed, tk, got, want)
			}
			if own := a.Bars(nil, tk); !reflect.DeepEqual(own, want) {
				t.Fatalf("seed %d %s: Bars\n%+v\nwant\n%+v", seed, tk, own, want)
			}
			if d, ok := a.Daily(tk); !ok || d != wantDaily[tk] || daily[tk] != d {
				t.Fatalf("seed %d %s: daily %+v (reported %+v), want %+v", seed, tk, d, daily[tk], wantDaily[tk])
			}
		}
		for tk, bs := range held {
			if len(bs) > 0 && wantBars[tk] == nil {
				t.Fatalf("seed %d: consumer holds bars of %s", seed, tk)
			}
			if wantBars[tk] == nil && !daily[tk].Removed && daily[tk].Ticker != "" {
				t.Fatalf("seed %d: daily of %s not removed: %+v", seed, tk, daily[tk])
			}
		}
		st := a.Stats()
		if n := st.Trades + st.Cancels + st.UnknownCancels + st.Duplicates + st.Refused(); n != int64(len(rows)) {
			t.Fatalf("seed %d: %d rows counted of %d: %+v", seed, n, len(rows), st)
		}
	}
}

// TestChangesOnlyWhatChanged: a batch that changes no value reports
// nothing.
func TestChangesOnlyWhatChanged(t *testing.T) {
	a := NewAggregator(d0, Config{})
	a.Apply([]Trade{tr("PLAE3", 10, 10, 0, 1, 23480, 100), tr("PLAE3", 20, 10, 1, 1, 23480, 100)})
	if ch := a.Apply(nil); ch.Bars != nil || ch.Daily != nil {
		t.Errorf("empty batch: %+v", ch)
	}
	// A new trade in the second minute changes that minute and the daily.
	ch := a.Apply([]Trade{tr("PLAE3", 30, 10, 1, 2, 23480, 100)})
	if len(ch.Bars) != 1 || ch.Bars[0].Time != minute(10, 1) || len(ch.Daily) != 1 {
		t.Errorf("changes %+v", ch)
	}
}

// BenchmarkAggregate measures Apply over a day of 2,000 tickers in
// batches of 2,000 trades (one per ticker), in trades per second.
func BenchmarkAggregate(b *testing.B) {
	const tickers, perTicker = 2000, 200
	names := make([]string, tickers)
	for i := range names {
		names[i] = fmt.Sprintf("T%04d3", i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	batches := make([][]Trade, perTicker)
	for j := range batches {
		batch := make([]Trade, tickers)
		for i := range batch {
			ms := int64(j)*(7*3600*1000/perTicker) + r.Int64N(1000)
			batch[i] = Trade{RefDate: d0, TradeDate: d0, Ticker: names[i], Session: SessionRegular, Price: 10000 + r.Int64N(1000),
				Quantity: 100 * (1 + r.Int64N(10)), Time: UnixMilli(d0, 10*3600*1000+ms), ID: int64(10 * (j + 1))}
		}
		batches[j] = batch
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		a := NewAggregator(d0, Config{})
		for _, batch := range batches {
			a.Apply(batch)
		}
	}
	b.ReportMetric(float64(b.N*tickers*perTicker)/b.Elapsed().Seconds(), "trades/s")
}
