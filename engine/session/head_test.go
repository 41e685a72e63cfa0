package session

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"weak"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// TestLogHandover: the handover log is a warning that counts the
// tickers whose 1-minute bars in the snapshot end before their last live
// minute and those the snapshot does not list; without either it is
// information.
func TestLogHandover(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 1, IntradaySessions: 1, ReportsFrom: 2025, FundReportsFrom: 2025, EventsFrom: 2025})
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	var with *engine.Asset
	for i := range ds.Assets() {
		if a := &ds.Assets()[i]; a.Intraday.Len() > 0 {
			with = a
			break
		}
	}
	if with == nil {
		t.Fatal("no ticker with 1-minute bars in the demo")
	}
	last := with.Intraday.Times[with.Intraday.Len()-1]
	day := engine.DateOf(ds.AsOf())
	for _, c := range []struct {
		name    string
		minutes map[string]int64
		want    []string
	}{
		{"covered", map[string]int64{with.Ticker: last}, []string{"level=INFO", "tickers=1", "tickers_with_fewer_minutes_in_the_snapshot=0", "tickers_not_in_the_snapshot=0"}},
		{"a gap and a stranger", map[string]int64{with.Ticker: last + 60, "ZZZZ3": last}, []string{"level=WARN", "tickers=2", "tickers_with_fewer_minutes_in_the_snapshot=1", "tickers_not_in_the_snapshot=1"}},
	} {
		var b bytes.Buffer
		logHandover(slog.New(slog.NewTextHandler(&b, nil)), ds, day, 42, c.minutes)
		for _, w := range append(c.want, "seq=42", "session="+day.String()) {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: %q lacks %q", c.name, b.String(), w)
			}
		}
	}
}

// The head keeps the counters of the session it last applied, not the
// session: a Dataset a publish replaced (the live session rebound to the
// new one) is not held through it (for a format 6 snapshot, with its
// mapped file), and the counters' deltas stay right.
func TestHeadHoldsNoReplacedDataset(t *testing.T) {
	u := demo.GenerateSize(5, demo.Size{Companies: 2, FIIs: 1, IntradayTickers: 1, IntradaySessions: 1})
	build := func() *engine.Dataset {
		ds, err := engine.Build(u)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	store := &engine.Store{}
	wp := func() weak.Pointer[engine.Dataset] {
		ds := build()
		store.Publish(ds)
		return weak.Make(ds)
	}()
	reg := prometheus.NewRegistry()
	h := newHead(store, testLog(io.Discard), newMetrics(reg, nil), nil)
	sd := engine.DateOf(store.Current().AsOf()) + 1
	h.mu.Lock()
	if err := h.start(sd); err != nil {
		t.Fatal(err)
	}
	tk := store.Current().Assets()[0].Ticker
	at := int64(sd)*86400 + 13*3600
	b := engine.LiveBar{Ticker: tk, Time: at, Open: 10, High: 10, Low: 10, Close: 10, Volume: 100, Quantity: 10, Trades: 1}
	if out, err := h.apply(&engine.LiveBatch{Seq: 1, Session: sd, Bars: []engine.LiveBar{b}}, false); out != applied || err != nil {
		t.Fatalf("batch 1: %v %v", out, err)
	}
	h.mu.Unlock()
	store.Publish(build())
	held := true
	for range 20 {
		runtime.GC()
		if wp.Value() == nil {
			held = false
			break
		}
	}
	if held {
		t.Error("the Dataset a publish replaced is still held")
	}
	h.mu.Lock()
	b.Close, b.High, b.Time = 11, 11, at+60
	if out, err := h.apply(&engine.LiveBatch{Seq: 2, Session: sd, Bars: []engine.LiveBar{b}}, false); out != applied || err != nil {
		t.Fatalf("batch 2: %v %v", out, err)
	}
	h.mu.Unlock()
	if n := testutil.ToFloat64(h.met.bars); n != 2 {
		t.Errorf("pregao_live_bars_total %v, want 2", n)
	}
}
