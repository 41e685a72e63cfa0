package main

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/live/bus"
)

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
//     go test -run '^$' -bench Stream -benchtime 300x ./cmd/pregao
func BenchmarkStream(b *testing.B) {
	const n = 1000
	b.Run("delay", func(b *testing.B) {
		bs, store, a, day, tickers := streamBench(b, n)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go a.run(ctx, bs)
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
		bs, store, a, day, tickers := streamBench(b, n)
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
		go a.run(ctx, bs)
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
// last session held back, an applier of the stream to it (not running),
// the session and n tickers.
func streamBench(b *testing.B, n int) (*bus.Bus, *engine.Store, *streamApplier, engine.Date, []string) {
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
	met := registerLiveMetrics(prometheus.NewRegistry(), func() *liveState { return nil }, func() time.Duration { return 0 })
	a := newStreamApplier(store, slog.New(slog.NewTextHandler(io.Discard, nil)), met, "", &streamClock{})
	return bs, store, a, day, slices.Clone(tickers)
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
