package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// BenchmarkStreamSubscribers measures what open streams cost the live
// session: batches of one minute of every ticker of a demo market
// (1,000 companies) applied through Store.ApplyLive while the delayed
// plan's hub makes its steps, with no stream and with 1,000 streams of
// one ticker each (mostly idle: a bar and a quote a minute). It reports
// the apply's p50 and p99 (µs; the next batch applied once the streams
// took the last one, see settle) and, with the streams, the memory they
// add to the server (MiB of Go heap and stacks after a collection): the
// clients hold their connections without a goroutine and do not read,
// the kernel's socket buffers taking the few events a minute, so the
// figure is the server's connections, subscribers and writers.
//
//	go test ./httpapi -run '^$' -bench StreamSubscribers -benchtime 200x
func BenchmarkStreamSubscribers(b *testing.B) {
	u, sess := demo.GenerateSession(1, demo.Size{Companies: 1000, SponsoredBDRs: 20, UnsponsoredBDRs: 20, FIIs: 100, ETFs: 20,
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
	for _, subs := range []int{0, 1, 1000} {
		b.Run(fmt.Sprintf("streams=%d", subs), func(b *testing.B) {
			store := &engine.Store{}
			store.Publish(ds)
			if err := store.StartLive(sess.Day); err != nil {
				b.Fatal(err)
			}
			clock := &movingClock{}
			first := int64(sess.Day)*86400 + 13*3600
			clock.set(time.Unix(first+15*60, 0)) // no minute seen yet
			keys := make([]string, 0, subs/DefaultStreamConnsPerKey+1)
			var f KeysFile
			for i := 0; i <= subs/DefaultStreamConnsPerKey; i++ {
				k := "pg_" + strconv.Itoa(1e9+i) + strings.Repeat("k", 24)
				keys = append(keys, k)
				_, e, err := NewKey("k"+strconv.Itoa(i), PlanDelayed, time.Unix(0, 0))
				if err != nil {
					b.Fatal(err)
				}
				e.SHA256 = sha256Hex(k)
				f.Keys = append(f.Keys, e)
			}
			ks, err := NewKeys(f)
			if err != nil {
				b.Fatal(err)
			}
			api := New(DefaultConfig(), store, ks, clock, prometheus.NewRegistry(), nil)
			srv := httptest.NewServer(api)
			defer srv.Close()
			defer api.EndStreams()
			mem0 := inUse()
			for i := range subs {
				c, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				fmt.Fprintf(c, "GET /v2/stream/quotes?tickers=%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", tickers[i%len(tickers)], keys[i/DefaultStreamConnsPerKey])
			}
			for deadline := time.Now().Add(time.Minute); api.streams.total < subs; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%d streams open, want %d", api.streams.total, subs)
				}
			}
			mem1 := inUse()
			bars := make([]engine.LiveBar, len(tickers))
			took := make([]time.Duration, 0, b.N)
			minute := first
			b.ResetTimer()
			for i := range b.N {
				for k, t := range tickers {
					p := engine.Num(10 + float64((k+i)%500)/100)
					bars[k] = engine.LiveBar{Ticker: t, Time: minute, Open: p, High: p + 0.02, Low: p - 0.01, Close: p + 0.01, Volume: p * 1000, Quantity: 1000, Trades: 7}
				}
				t0 := time.Now()
				if ok, err := store.ApplyLive(&engine.LiveBatch{Seq: uint64(i + 1), Session: sess.Day, Bars: bars, At: (minute + 61) * 1000}); !ok || err != nil {
					b.Fatal(ok, err)
				}
				took = append(took, time.Since(t0))
				minute += 60
				clock.set(time.Unix(minute+16*60, 0)) // the delayed plan sees the minute applied
				settle(b, api.streams.hubs[PlanDelayed], uint64(i+1))
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			if subs > 0 {
				b.ReportMetric(float64(mem1-mem0)/(1<<20), "streams-MiB")
			}
		})
	}
}

// settle waits until hub has made the step of batch seq and every
// subscriber has taken it from its queue, then lets the writes go out: a
// session's batches come a minute apart and the streams' writes of one
// are done long before the next, so the next apply is timed as in a
// session, not sharing the 2 cores with the writes of the one before.
// Without streams it waits a step's time, so that every case applies at
// the same pace (caches and collections alike).
func settle(b *testing.B, hub *sseHub, seq uint64) {
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Microsecond) {
		hub.mu.Lock()
		done := len(hub.subs) == 0 || hub.last != nil && hub.last.cur.seq >= seq
		for s := range hub.subs {
			done = done && len(s.steps) == 0
		}
		hub.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the step of batch %d not taken in a minute", seq)
		}
	}
	if len(hub.subs) == 0 {
		time.Sleep(hub.a.cfg.StreamStep) // no streams: the same pace
		return
	}
	time.Sleep(2 * time.Millisecond)
}

// inUse returns the Go memory in use after a collection, in bytes: the
// heap's spans and the goroutines' stacks (what a stream holds: its
// goroutines, buffers, connection state).
func inUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse + ms.StackInuse)
}

// discardWriter is a ResponseWriter that drops what it is sent.
type discardWriter struct{ *httptest.ResponseRecorder }

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkStreamCatchUp writes a whole session's catch-up of 200,000
// events (bars and quotes of 1,000 tickers, a correction in ten) to one
// stream that takes them at once: the server's cost of the events
// beyond their bytes (framing into writes, counting them by kind).
//
//	go test ./httpapi -run '^$' -bench StreamCatchUp
func BenchmarkStreamCatchUp(b *testing.B) {
	a := New(DefaultConfig(), &engine.Store{}, nil, nil, prometheus.NewRegistry(), nil)
	kinds := []eventKind{kindBar, kindQuote, kindBar, kindQuote, kindBar, kindQuote, kindBar, kindQuote, kindBar, kindCorrection}
	evs := make([]sseEvent, 0, 200_000)
	for i := range cap(evs) {
		k := kinds[i%len(kinds)]
		evs = append(evs, sseEvent{ticker: fmt.Sprintf("T%04d3", i%1000), kind: k, msg: []byte("event: " + k.String() + "\ndata: {}\n\n")})
	}
	slices.SortStableFunc(evs, func(x, y sseEvent) int { return strings.Compare(x.ticker, y.ticker) })
	w := discardWriter{httptest.NewRecorder()}
	out := &sseOut{a: a, w: w, rc: http.NewResponseController(w)}
	b.ReportAllocs()
	for b.Loop() {
		out.events(evs, nil)
	}
}
