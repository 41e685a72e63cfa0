package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentRequestsAreIsolated serves the golden requests from many
// goroutines at once (pooled buffers, scratch slices and the per-dataset
// caches are shared) and checks every answer equals the sequential one.
func TestConcurrentRequestsAreIsolated(t *testing.T) {
	ts := newTestServer(t, true)
	want := make([]string, len(goldenCases))
	for i, tc := range goldenCases {
		want[i] = ts.do(tc.method, tc.path, tc.key, tc.body).Body.String()
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 5; n++ {
				for i := range goldenCases {
					tc := goldenCases[(i+g)%len(goldenCases)]
					got := ts.do(tc.method, tc.path, tc.key, tc.body).Body.String()
					if got != want[(i+g)%len(goldenCases)] {
						t.Errorf("%s: concurrent answer differs", tc.name)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
}

// discard is a reusable http.ResponseWriter.
type discard struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(s int)           { d.status = s }
func (d *discard) Write(p []byte) (int, error) { return d.body.Write(p) }

type bodyReader struct{ strings.Reader }

func (*bodyReader) Close() error { return nil }

// TestBatchCurrentAllocations bounds the allocations of POST /quotes
// type=current through the router, authentication and metrics.
func TestBatchCurrentAllocations(t *testing.T) {
	ts := newTestServer(t, true)
	body := `{"tickers":["ENHZ3","ENHZ4","MSAZ3","SELIC","NOPE3","ENHZ11"],"type":"current"}`
	req, _ := http.NewRequest("POST", "/v2/quotes", nil)
	req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	rb := &bodyReader{}
	w := &discard{h: http.Header{}}
	serve := func() {
		rb.Reset(body)
		req.Body, req.ContentLength = rb, int64(len(body))
		w.body.Reset()
		clear(w.h)
		ts.api.ServeHTTP(w, req)
	}
	serve()
	if w.status != 200 {
		t.Fatalf("%d %s", w.status, w.body.String())
	}
	if n := testing.AllocsPerRun(200, serve); n > 10 {
		t.Errorf("POST /quotes current: %v allocations per request, want at most 10", n)
	}
}

// TestBatchAllocationsPerTicker: the tickers of a POST /quotes body are
// not copied (the answer's keys are the dataset's own ticker strings), so
// the allocations of a request do not grow with its known tickers, current
// or former.
func TestBatchAllocationsPerTicker(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts need a build without -race (make test runs it in its second pass)")
	}
	ts := newTestServer(t, true)
	var all []string
	for _, a := range mustSmall(t).Assets() {
		all = append(all, a.Ticker)
		all = append(all, a.Former...)
	}
	if len(all) < 5 {
		t.Fatalf("%d tickers, want more", len(all))
	}
	allocs := func(tickers []string) float64 {
		body := `{"tickers":["` + strings.Join(tickers, `","`) + `"],"type":"current"}`
		req, _ := http.NewRequest("POST", "/v2/quotes", nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		rb := &bodyReader{}
		w := &discard{h: http.Header{}}
		serve := func() {
			rb.Reset(body)
			req.Body, req.ContentLength = rb, int64(len(body))
			w.body.Reset()
			clear(w.h)
			ts.api.ServeHTTP(w, req)
		}
		serve()
		if w.status != 200 {
			t.Fatalf("%d %s", w.status, w.body.String())
		}
		return testing.AllocsPerRun(100, serve)
	}
	if one, many := allocs(all[:1]), allocs(all); many > one {
		t.Errorf("POST /quotes current: %v allocations with 1 ticker, %v with %d", one, many, len(all))
	}
}

// TestBatchSeriesSplitEncoding covers the two-goroutine encoding of large
// series answers: the batch equals the single-ticker answers, in order.
func TestBatchSeriesSplitEncoding(t *testing.T) {
	ts := newTestServer(t, true)
	tickers := []string{"ENHZ3", "ENHZ4", "MSAZ3", "ENHZ11", "ORBT34", "GSUL11", "SELIC", "EHZN3"}
	for i := 0; len(tickers) < 2*parallelMin; i++ {
		tickers = append(tickers, fmt.Sprintf("ZZZZ%02d", i))
	}
	body := `{"tickers":["` + strings.Join(tickers, `","`) + `"],"start_date":"2023-12-01","adjusted":true}`
	w := ts.do("POST", "/v2/quotes", testKeyDelayed, body)
	if w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	var want bytes.Buffer
	want.WriteByte('{')
	for i, tk := range tickers {
		if i > 0 {
			want.WriteByte(',')
		}
		fmt.Fprintf(&want, "%q:", tk)
		one := ts.do("GET", "/v2/quotes/"+tk+"?start_date=2023-12-01&adjusted=true", testKeyDelayed, "")
		if one.Code == 404 {
			want.WriteString(tickerNotFound)
			continue
		}
		want.Write(one.Body.Bytes())
	}
	want.WriteByte('}')
	if w.Body.String() != want.String() {
		t.Errorf("batch:\n%s\nsingles:\n%s", w.Body, want.String())
	}
}
