package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var (
	longOnce sync.Once
	longDS   *engine.Dataset
	longErr  error
)

// mustLong returns a demo Dataset with full daily histories since 2000:
// its batch answers are tens of megabytes.
func mustLong(tb testing.TB) *engine.Dataset {
	tb.Helper()
	longOnce.Do(func() {
		u := demo.GenerateSize(7, demo.Size{Companies: 40, ETFs: 10, ReportsFrom: 2024, FundReportsFrom: 2024, EventsFrom: 2025})
		longDS, longErr = engine.Build(u)
	})
	if longErr != nil {
		tb.Fatal(longErr)
	}
	return longDS
}

// countingWriter is a ResponseWriter that keeps only the byte count.
type countingWriter struct {
	keep     *bytes.Buffer // when set, receives the answer
	h        http.Header
	status   int
	n        int64
	writes   int
	maxWrite int
}

func (w *countingWriter) Header() http.Header { return w.h }
func (w *countingWriter) WriteHeader(s int)   { w.status = s }
func (w *countingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	w.n += int64(len(b))
	w.writes++
	w.maxWrite = max(w.maxWrite, len(b))
	if w.keep != nil {
		w.keep.Write(b)
	}
	return len(b), nil
}

// longAPI returns an API serving the long-history dataset with cfg (the
// snapshot clock, the test keys, no access log), and the dataset.
func longAPI(t *testing.T, cfg Config) (*API, *engine.Dataset) {
	t.Helper()
	ds := mustLong(t)
	store := &engine.Store{}
	store.Publish(ds)
	return New(cfg, store, testKeys(t), SnapshotClock{store}, prometheus.NewRegistry(), nil), ds
}

// TestStreamedAnswerMemory: a batch of full histories is tens of MB of
// JSON, yet one request allocates a small, fixed budget: the answer goes
// out in chunks instead of being built whole.
func TestStreamedAnswerMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a long-history dataset")
	}
	// The answer cache off: the same request is served again and again,
	// and a large answer asked twice is kept (TestAnswerCacheLarge).
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = -1
	api, ds := longAPI(t, cfg)
	var tickers []string
	for _, as := range ds.Assets() {
		if len(tickers) < MaxTickers {
			tickers = append(tickers, as.Ticker)
		}
	}
	for _, c := range []struct {
		name, body string
		minBytes   int64
	}{
		{"historical adjusted", `{"tickers":["` + strings.Join(tickers, `","`) + `"],"type":"historical","start_date":"2000-01-01","adjusted":true}`, 20 << 20},
		{"historical raw", `{"tickers":["` + strings.Join(tickers, `","`) + `"],"type":"historical","start_date":"2000-01-01"}`, 20 << 20},
		{"one ticker", `{"tickers":["` + tickers[0] + `"],"type":"historical","start_date":"2000-01-01"}`, 0},
	} {
		serve := func() *countingWriter {
			r, _ := http.NewRequest("POST", "/v2/quotes", strings.NewReader(c.body))
			r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			w := &countingWriter{h: http.Header{}}
			api.ServeHTTP(w, r)
			return w
		}
		// Steady state: pooled buffers warmed (the pool is per P, so a
		// few times), then the least allocating of three requests.
		for range 4 {
			serve()
		}
		var w *countingWriter
		alloc := uint64(1 << 62)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			w = serve()
			runtime.ReadMemStats(&after)
			alloc = min(alloc, after.TotalAlloc-before.TotalAlloc)
		}
		if w.status != 200 {
			t.Fatalf("%s: status %d", c.name, w.status)
		}
		t.Logf("%s: %d tickers, %.1f MB answer in %d writes (largest %.2f MB), %.2f MB allocated", c.name, len(tickers), float64(w.n)/1e6, w.writes, float64(w.maxWrite)/1e6, float64(alloc)/1e6)
		if w.n < c.minBytes {
			t.Fatalf("%s: answer of %d bytes, want ≥ %d for the test to mean something", c.name, w.n, c.minBytes)
		}
		// The budget: what is encoded between two writes (chunks of
		// streamChunk, or one round of two series groups), far below the
		// answer's size; and nothing per request beyond pooled buffers.
		const budget = 4 << 20
		if w.maxWrite > budget {
			t.Errorf("%s: a write of %d bytes: the answer (%d bytes) was held whole or in pieces above the %d-byte budget", c.name, w.maxWrite, w.n, budget)
		}
		if alloc > budget && !raceEnabled { // the race detector drops pooled buffers: make test checks this in its pass without it
			t.Errorf("%s: %d bytes allocated for a %d-byte answer, budget %d", c.name, alloc, w.n, budget)
		}
	}
}

// TestStreamedAnswerEqualsItems: a streamed batch, encoded in rounds by two
// goroutines, is byte for byte the object of the single-ticker answers.
func TestStreamedAnswerEqualsItems(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a long-history dataset")
	}
	api, ds := longAPI(t, DefaultConfig())
	var tickers []string
	for _, as := range ds.Assets() {
		tickers = append(tickers, as.Ticker)
	}
	tickers = append(tickers, "NOPE3") // an unknown ticker among them
	for _, q := range []string{`"type":"historical","start_date":"2000-01-01"`, `"type":"historical","start_date":"2024-01-01","adjusted":true`, `"type":"historical","interval":604800,"start_date":"2010-01-01"`} {
		w := &countingWriter{h: http.Header{}, keep: &bytes.Buffer{}}
		r, _ := http.NewRequest("POST", "/v2/quotes", strings.NewReader(`{"tickers":["`+strings.Join(tickers, `","`)+`"],`+q+`}`))
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		api.ServeHTTP(w, r)
		want := []byte{'{'}
		for i, tk := range tickers {
			if i > 0 {
				want = append(want, ',')
			}
			want = append(want, '"')
			want = append(want, tk...)
			want = append(want, '"', ':')
			one := &countingWriter{h: http.Header{}, keep: &bytes.Buffer{}}
			r, _ := http.NewRequest("POST", "/v2/quotes", strings.NewReader(`{"tickers":["`+tk+`"],`+q+`}`))
			r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			api.ServeHTTP(one, r)
			b := one.keep.Bytes()
			want = append(want, b[len(tk)+4:len(b)-1]...) // {"TK": … }
		}
		want = append(want, '}')
		if w.status != 200 || !bytes.Equal(w.keep.Bytes(), want) {
			t.Errorf("%s: status %d, %d bytes in %d writes; want the %d bytes of the single answers", q, w.status, w.keep.Len(), w.writes, len(want))
		}
	}
}

// TestStreamedCashActions: the all-companies cash list goes out in chunks
// of about streamChunk, never whole.
func TestStreamedCashActions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a long-history dataset")
	}
	api, _ := longAPI(t, DefaultConfig())
	w := &countingWriter{h: http.Header{}, keep: &bytes.Buffer{}}
	r, _ := http.NewRequest("GET", "/v2/companies/cash-corporate-actions?current=false", nil) // the default list is a cached answer, sent without a copy
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	api.ServeHTTP(w, r)
	t.Logf("%.2f MB in %d writes (largest %d bytes)", float64(w.n)/1e6, w.writes, w.maxWrite)
	if w.status != 200 || w.n < 4*streamChunk || w.maxWrite > streamChunk+4<<10 {
		t.Errorf("status %d, %d bytes, largest write %d: want ≥ %d bytes in writes of about %d", w.status, w.n, w.maxWrite, 4*streamChunk, streamChunk)
	}
	if !json.Valid(w.keep.Bytes()) {
		t.Error("the streamed list is not valid JSON")
	}
}
