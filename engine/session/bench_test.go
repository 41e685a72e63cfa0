package session

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// applyBenchStore returns a Store with a demo market of at least n
// tickers whose last session is held back (so that the live session may
// hold it), the session and n of its tickers.
func applyBenchStore(b *testing.B, n int) (*engine.Store, engine.Date, []string) {
	b.Helper()
	u, sess := demo.GenerateSession(1, demo.Size{Companies: 1500, SponsoredBDRs: 60, UnsponsoredBDRs: 60, FIIs: 350, ETFs: 120,
		IntradayTickers: 10, IntradaySessions: 1, ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2026}, nil)
	ds, err := engine.Build(demo.HoldBack(u, sess))
	if err != nil {
		b.Fatal(err)
	}
	var tickers []string
	for i := range ds.Assets() {
		if a := &ds.Assets()[i]; a.StockType != engine.ClassMacro {
			tickers = append(tickers, a.Ticker)
		}
	}
	if len(tickers) < n {
		b.Fatalf("%d tickers, want %d", len(tickers), n)
	}
	return storeOf(ds), sess.Day, tickers[:n]
}

// BenchmarkApplyLive applies a batch of one new minute of 2,000 tickers
// through Store.ApplyLive (checks, copy-on-write of the tails' pointer
// slice, appends, the running aggregates, the publish), the session's
// tails growing through the day; with 1% of the bars correcting an
// earlier minute (a cancelled trade: that ticker's tail is copied). The
// p50 and p99 of single applies are reported. Target: 1 ms.
//
//	go test -run '^$' -bench ApplyLive -benchtime 400x ./engine/session
func BenchmarkApplyLive(b *testing.B) {
	const n = 2000
	store, day, tickers := applyBenchStore(b, n)
	for _, corr := range []int{0, n / 100} {
		b.Run(fmt.Sprintf("tickers=%d/corrections=%d", n, corr), func(b *testing.B) {
			first := int64(day)*86400 + 13*3600 // 10:00 local
			minute, seq := first, uint64(0)
			start := func() {
				if err := store.StartLive(day); err != nil {
					b.Fatal(err)
				}
				minute, seq = first, 0
			}
			start()
			bars := make([]engine.LiveBar, n)
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if minute >= first+420*60 { // the session's 420 minutes: start again
					b.StopTimer()
					start()
					b.StartTimer()
				}
				for k, t := range tickers {
					p := engine.Num(10 + float64((k+i)%500)/100)
					bars[k] = engine.LiveBar{Ticker: t, Time: minute, Open: p, High: p + 0.02, Low: p - 0.01, Close: p + 0.01, Volume: p * 1000, Quantity: 1000, Trades: 7}
					if k < corr && minute > first {
						bars[k].Time = minute - 60 // a correction of the minute before
						bars[k].Quantity = 900
					}
				}
				seq++
				t0 := time.Now()
				ok, err := store.ApplyLive(&engine.LiveBatch{Seq: seq, Session: day, Bars: bars})
				took = append(took, time.Since(t0))
				if !ok || err != nil {
					b.Fatal(ok, err)
				}
				minute += 60
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// BenchmarkStream measures the live stream on the embedded server, with
// batches of one new minute of 1,000 tickers (about the demo session's
// busiest minutes):
//
//   - delay: each batch published (acknowledged by the stream) and
//     waited for until a replica's Store shows it: the end-to-end delay
//     from publish to visible, p50 and p99;
//
//   - catchup: b.N batches in the stream, then a replica started: its
//     apply throughput (batches a second) from the stream, and the heap
//     the embedded server takes with them (server-heap-MiB, the Go heap
//     of the process beside the dataset: the server, its store's caches,
//     the client).
//
//     go test -run '^$' -bench Stream -benchtime 300x ./engine/session
func BenchmarkStream(b *testing.B) {
	const n = 1000
	b.Run("delay", func(b *testing.B) {
		bs, store, s, day, tickers := streamBench(b, n)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go s.stream.run(ctx, bs)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			rec := minuteRecord(day, tickers, i)
			t0 := time.Now()
			if _, _, err := bs.Publish(ctx, day, rec, false); err != nil {
				b.Fatal(err)
			}
			for v := store.View(); v.Live == nil || v.Live.Seq < rec.Seq; v = store.View() {
				runtime.Gosched()
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		b.ReportMetric(float64(quantile(lat, .5).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(quantile(lat, .99).Microseconds())/1000, "p99-ms")
	})
	b.Run("catchup", func(b *testing.B) {
		bs, store, s, day, tickers := streamBench(b, n)
		before := heapBeforeBus
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range b.N {
			if _, _, err := bs.Publish(ctx, day, minuteRecord(day, tickers, i), false); err != nil {
				b.Fatal(err)
			}
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ResetTimer()
		t0 := time.Now()
		go s.stream.run(ctx, bs)
		for v := store.View(); v.Live == nil || v.Live.Seq < uint64(b.N); v = store.View() {
			time.Sleep(100 * time.Microsecond)
		}
		el := time.Since(t0)
		b.StopTimer()
		b.ReportMetric(float64(b.N)/el.Seconds(), "batches/s")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before))/(1<<20), "server-heap-MiB")
	})
}

// heapBeforeBus is the heap in use when streamBench opens the bus.
var heapBeforeBus uint64

// streamBench returns an embedded bus, a Store of a demo market with its
// last session held back, a replica's session applying the stream to it
// (not running), the session's day and n tickers.
func streamBench(b *testing.B, n int) (*bus.Bus, *engine.Store, *Session, engine.Date, []string) {
	b.Helper()
	store, day, tickers := applyBenchStore(b, n)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBeforeBus = ms.HeapInuse
	bs, err := bus.Open(bus.Config{URL: bus.Embedded, Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(bs.Close)
	if _, err := bs.EnsureStream(context.Background()); err != nil {
		b.Fatal(err)
	}
	return bs, store, replicaOf(b, store, nil), day, slices.Clone(tickers)
}

// replicaOf returns the session of a replica of the embedded stream over
// store, built with opts (nil: a discarded log, a registry of its own);
// nothing runs.
func replicaOf(tb testing.TB, store *engine.Store, opts *Options) *Session {
	tb.Helper()
	cfg := DefaultConfig()
	cfg.Stream, cfg.Dir = bus.Embedded, tb.TempDir()
	o := Options{Log: testLog(nil)}
	if opts != nil {
		o = *opts
	}
	s, err := New(cfg, store, o)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// minuteRecord is batch i+1: minute i of the session for every ticker.
func minuteRecord(day engine.Date, tickers []string, i int) *live.Record {
	m := int64(day)*86400 + 13*3600 + int64(i%600)*60 // 10:00 to 20:00 local, then corrections
	bars := make([]engine.LiveBar, len(tickers))
	for k, tk := range tickers {
		p := engine.Num(10 + k%50 + i%7)
		bars[k] = engine.LiveBar{Ticker: tk, Time: m, Open: p, High: p + 0.5, Low: p - 0.5, Close: p + 0.25, Volume: p * 1000, Quantity: 1000, Trades: 7}
	}
	return &live.Record{Seq: uint64(i + 1), At: (m + 65) * 1000, Bars: bars}
}

// quantile returns the q quantile of d (sorted in place).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}
