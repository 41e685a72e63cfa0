package live

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

func ms(h, m, s int) int64 { return minute(h, m)*1000 + int64(s)*1000 }

// TestTradesCheck: a pushed trade a bar cannot come from refuses its
// batch whole (engine.ErrLiveBatch, naming the trade and the field).
func TestTradesCheck(t *testing.T) {
	good := Trade{Ticker: "PETR4", Time: ms(13, 0, 1), Price: 23.48, Quantity: 100, ID: "1"}
	for _, tc := range []struct {
		edit func(*Trade)
		want string
	}{
		{func(x *Trade) { x.Ticker = "petr4!" }, "is not a ticker"},
		{func(x *Trade) { x.ID = "" }, "id must have"},
		{func(x *Trade) { x.ID = strings.Repeat("9", 65) }, "id must have"},
		{func(x *Trade) { x.Time = ms(13, 0, 0) - 86400*1000 }, "not in session"},
		{func(x *Trade) { x.Time = int64(sd)*86400*1000 + 2*3600*1000 }, "not in session"}, // 23:00 local the day before
		{func(x *Trade) { x.Price = 0 }, "price"},
		{func(x *Trade) { x.Price = -1 }, "price"},
		{func(x *Trade) { x.Price = engine.Null }, "price"},
		{func(x *Trade) { x.Price = engine.Num(math.Inf(1)) }, "price"},
		{func(x *Trade) { x.Price = 23.4805 }, "price"},
		{func(x *Trade) { x.Quantity = 0 }, "quantity"},
		{func(x *Trade) { x.Quantity = 1 << 40 }, "notional"},
	} {
		x := good
		tc.edit(&x)
		tr := NewTrades(sd, false)
		err := tr.Check([]Trade{good, x})
		if !errors.Is(err, engine.ErrLiveBatch) || !strings.Contains(err.Error(), "trade 2 ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", x, err, tc.want)
		}
	}
	if err := NewTrades(sd, false).Check([]Trade{good}); err != nil {
		t.Error(err)
	}
	// 21:00 local is still the session's day (00:00 UTC the next day).
	late := good
	late.Time = (int64(sd)+1)*86400*1000 + 3600*1000
	if err := NewTrades(sd, false).Check([]Trade{late}); err != nil {
		t.Errorf("a trade at 22:00 local: %v", err)
	}
}

// TestTradesApply: pushed trades become the bars B3's rows would give:
// ties of time broken by id (decimal ids by number, others after, in the
// order seen), a cancellation takes its trade out, repeats and unknown
// cancellations are counted, the after-market is left out of the bars.
func TestTradesApply(t *testing.T) {
	tr := NewTrades(sd, false)
	a := []Trade{
		{Ticker: "PETR4", Time: ms(13, 0, 5), Price: 10, Quantity: 100, ID: "20"},
		{Ticker: "PETR4", Time: ms(13, 0, 5), Price: 11, Quantity: 100, ID: "3"},
		{Ticker: "PETR4", Time: ms(13, 0, 5), Price: 12, Quantity: 100, ID: "x-1"},
		{Ticker: "PETR4", Time: ms(20, 40, 0), Price: 13, Quantity: 100, ID: "am", AfterMarket: true},
		{Ticker: "PETR4", Time: ms(13, 0, 5), Price: 10, Quantity: 100, ID: "20"}, // repeated
		{Ticker: "PETR4", Time: ms(13, 1, 0), Price: 9, Quantity: 10, ID: "zz", Cancel: true},
	}
	bars := tr.Apply(a)
	want := []engine.LiveBar{{Ticker: "PETR4", Time: minute(13, 0), Open: 11, High: 12, Low: 10, Close: 12, Volume: 3300, Quantity: 300, Trades: 3}}
	if !reflect.DeepEqual(bars, want) {
		t.Fatalf("bars %+v\nwant %+v", bars, want)
	}
	b := []Trade{
		{Ticker: "PETR4", Time: ms(13, 0, 5), Price: 12, Quantity: 100, ID: "x-1", Cancel: true},
		{Ticker: "PETR4", Time: ms(12, 59, 0), Price: 8, Quantity: 1, ID: "1"}, // before the others: out of order
	}
	bars = tr.Apply(b)
	want = []engine.LiveBar{
		{Ticker: "PETR4", Time: minute(12, 59), Open: 8, High: 8, Low: 8, Close: 8, Volume: 8, Quantity: 1, Trades: 1},
		{Ticker: "PETR4", Time: minute(13, 0), Open: 11, High: 11, Low: 10, Close: 10, Volume: 2100, Quantity: 200, Trades: 2},
	}
	if !reflect.DeepEqual(bars, want) {
		t.Fatalf("after the cancellation: %+v\nwant %+v", bars, want)
	}
	e := tr.Errors()
	if e[ReasonDuplicate] != 1 || e[ReasonUnknownCancel] != 1 || e[ReasonOutOfOrder] != 2 { // id 3 after id 20 at the same time, and the 12:59 trade
		t.Errorf("errors %v", e)
	}
	// Applying the same batches again in order rebuilds the same state
	// (a restart from the session log): a later cancellation of a
	// textual id matches.
	re := NewTrades(sd, false)
	re.Apply(a)
	re.Apply(b)
	c := []Trade{{Ticker: "PETR4", Time: ms(20, 40, 0), Price: 13, Quantity: 100, ID: "am", Cancel: true}, {Ticker: "PETR4", Time: ms(13, 0, 5), Price: 11, Quantity: 100, ID: "3", Cancel: true}}
	if x, y := tr.Apply(c), re.Apply(c); !reflect.DeepEqual(x, y) || len(x) != 1 || x[0].Trades != 1 {
		t.Errorf("rebuilt: %+v, original %+v", y, x)
	}
}
