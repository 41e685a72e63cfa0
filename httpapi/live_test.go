package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// movingClock is a clock the test moves.
type movingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movingClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *movingClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// liveDemo is a small demo universe built twice: in full, and without its
// last session, whose trades are returned in file (time) order.
type liveDemo struct {
	full, base *engine.Dataset
	day        engine.Date
	trades     []negocios.Trade
	tickers    []string
}

var (
	liveDemoOnce sync.Once
	liveDemoVal  liveDemo
	liveDemoErr  error
)

// liveDemoSize is the size of the live demo's universe (seed 5).
var liveDemoSize = demo.Size{Companies: 40, SponsoredBDRs: 3, UnsponsoredBDRs: 3, FIIs: 12, ETFs: 4, IntradayTickers: 8, IntradaySessions: 3,
	ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2025, HistoryFrom: 2024}

func newLiveDemo(tb testing.TB) *liveDemo {
	tb.Helper()
	liveDemoOnce.Do(func() {
		u, sess := demo.GenerateSession(5, liveDemoSize, nil)
		build := func(u *engine.Universe) *engine.Dataset {
			if liveDemoErr != nil {
				return nil
			}
			d, err := ratios.Derive(u)
			if err != nil {
				liveDemoErr = err
				return nil
			}
			u.Derived = d
			ds, err := engine.Build(u)
			if err != nil {
				liveDemoErr = err
			}
			return ds
		}
		base := demo.HoldBack(u, sess)
		full := *u
		liveDemoVal.full, liveDemoVal.base = build(&full), build(base)
		liveDemoVal.day = sess.Day
		liveDemoVal.tickers = sess.Tickers()
		sess.Each(func(t *negocios.Trade) error {
			liveDemoVal.trades = append(liveDemoVal.trades, *t)
			return nil
		})
	})
	if liveDemoErr != nil {
		tb.Fatal(liveDemoErr)
	}
	return &liveDemoVal
}

// liveBars turns an Aggregator's changes into the engine's bars.
func liveBars(ch negocios.Changes) []engine.LiveBar {
	out := make([]engine.LiveBar, 0, len(ch.Bars))
	for i := range ch.Bars {
		m := &ch.Bars[i]
		b := m.Bar()
		out = append(out, engine.LiveBar{Ticker: m.Ticker, Time: m.Time, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close,
			Volume: b.Volume, Quantity: m.Quantity, Trades: m.Trades, Removed: m.Removed})
	}
	return out
}

// The delayed and eod answers of a server holding the day before and the
// live session, fed the session's trades in batches, equal at every
// sampled cut-off those of a server holding the whole day: current,
// intraday and chart quotes, batch quotes, total returns, index highs and lows and the
// variations, and the screener (prices and price-derived columns),
// during the session, at its close and the day after.
func TestLiveAnswersEqualFullSnapshot(t *testing.T) {
	ld := newLiveDemo(t)
	keys := testKeys(t)
	clock := &movingClock{}
	var fullStore, liveStore engine.Store
	fullStore.Publish(ld.full)
	liveStore.Publish(ld.base)
	if err := liveStore.StartLive(ld.day); err != nil {
		t.Fatal(err)
	}
	full := &testServer{api: New(DefaultConfig(), &fullStore, keys, clock, prometheus.NewRegistry(), nil), store: &fullStore}
	live := &testServer{api: New(DefaultConfig(), &liveStore, keys, clock, prometheus.NewRegistry(), nil), store: &liveStore}

	sample := ld.tickers
	if len(sample) > 12 {
		sample = sample[:12]
	}
	var reqs []struct{ method, path, body string }
	add := func(method, path, body string) {
		reqs = append(reqs, struct{ method, path, body string }{method, path, body})
	}
	for _, tk := range sample {
		add("GET", "/v2/quotes/"+tk+"?type=current", "")
		add("GET", "/v2/quotes/"+tk+"?type=current&adjusted=true", "")
		add("GET", "/v2/quotes/"+tk+"?type=historical&interval=60", "")
		add("GET", "/v2/quotes/"+tk+"?type=historical&interval=900&adjusted=true", "")
		add("GET", "/v2/quotes/"+tk+"?type=chart", "")
		add("GET", "/v2/quotes/"+tk+"?type=historical", "")
		add("GET", "/v2/quotes/"+tk+"/total-return?start_date=2024-01-01", "")
		add("GET", "/v2/quotes/"+tk+"/total-return?method=net", "")
	}
	add("POST", "/v2/quotes/total-return", `{"tickers":["`+strings.Join(ld.tickers, `","`)+`"],"start_date":"2024-01-01","method":"net"}`)
	add("POST", "/v2/quotes", `{"tickers":["`+strings.Join(ld.tickers, `","`)+`"],"type":"current"}`)
	add("POST", "/v2/quotes", `{"tickers":["`+strings.Join(ld.tickers, `","`)+`"],"adjusted":true}`)
	add("GET", "/v2/quotes/"+sample[0]+"?adjusted=true", "")
	add("GET", "/v2/indexes/IBOV/highs?limit=20", "")
	add("GET", "/v2/indexes/IBOV/lows?limit=20", "")
	add("GET", "/v2/stocks/variations?limit=20", "")
	add("POST", "/v2/screener", `{"primaryOnly":false,"limit":500}`)
	add("POST", "/v2/screener", `{"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"},{"by":"close_price"}],"filters":[{"type":"droplet","id":"DIVIDEND_YIELD","op":">=","value":0}],"limit":100}`)
	add("POST", "/v2/screener", `{"sort":[{"by":"droplet:MARKET_CAP"}],"filters":[{"type":"close_price","op":">","value":10}],"limit":100}`)

	check := func(at time.Time, keyName, key string) {
		t.Helper()
		clock.set(at)
		for _, r := range reqs {
			if key == testKeyEOD && (strings.Contains(r.path+r.body, "type") || strings.Contains(r.path+r.body, "start_date")) {
				continue // eod plans may not send type or a window (403 on both)
			}
			want := full.do(r.method, r.path, key, r.body)
			got := live.do(r.method, r.path, key, r.body)
			if want.Code != 200 {
				t.Fatalf("%s %s %.80s: %d %s (every request of the test answers 200)", r.method, r.path, r.body, want.Code, want.Body)
			}
			if g, w := got.Body.String(), want.Body.String(); got.Code != want.Code || g != w {
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				from := max(0, i-300)
				t.Fatalf("%s plan at %s (cut-off %s): %s %s %.80s\nlive     %d …%.500s\nsnapshot %d …%.500s", keyName, at.UTC().Format(time.RFC3339),
					at.Add(-QuoteDelay).UTC().Format("15:04"), r.method, r.path, r.body, got.Code, g[min(from, len(g)):], want.Code, w[min(from, len(w)):])
			}
		}
	}
	agg := negocios.NewAggregator(ld.day, negocios.Config{})
	seq := uint64(0)
	next := 0
	push := func(until int64, complete bool) {
		j := next
		for j < len(ld.trades) && ld.trades[j].Time < until {
			j++
		}
		seq++
		b := &engine.LiveBatch{Seq: seq, Session: ld.day, Bars: liveBars(agg.Apply(ld.trades[next:j])), Complete: complete}
		next = j
		if ok, err := liveStore.ApplyLive(b); !ok || err != nil {
			t.Fatalf("batch %d: %v %v", seq, ok, err)
		}
	}
	open := ld.day.Time().Add(12 * time.Hour) // 09:00 in São Paulo, before the opening call
	for at := open; at.Before(ld.day.Time().Add(21 * time.Hour)); at = at.Add(37 * time.Minute) {
		push(at.UnixMilli(), false)
		check(at, "delayed", testKeyDelayed)
	}
	push(1<<62, true) // the recording ends: the session is complete
	for _, at := range []time.Time{ld.day.Time().Add(20*time.Hour + 20*time.Minute), ld.day.Time().Add(23 * time.Hour)} {
		check(at, "delayed", testKeyDelayed)
	}
	check(ld.day.Time().Add(36*time.Hour), "eod", testKeyEOD)
	check(ld.day.Time().Add(36*time.Hour), "delayed", testKeyDelayed)
}

// A priced answer's ETag follows the live session: a bar ahead of the
// cut-off leaves it alone, a correction of a visible bar changes it;
// an answer that does not depend on prices keeps its ETag whatever the
// feed or the clock do.
func TestLiveValidators(t *testing.T) {
	ld := newLiveDemo(t)
	clock := &movingClock{}
	var store engine.Store
	store.Publish(ld.base)
	store.StartLive(ld.day)
	ts := &testServer{api: New(DefaultConfig(), &store, testKeys(t), clock, prometheus.NewRegistry(), nil), store: &store}
	tk := ld.tickers[0]
	m := func(hh, mm int) int64 {
		return ld.day.Time().Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute).Unix()
	}
	bar := func(at int64, c float64) engine.LiveBar {
		return engine.LiveBar{Ticker: tk, Time: at, Open: engine.Num(c), High: engine.Num(c), Low: engine.Num(c), Close: engine.Num(c), Volume: engine.Num(c * 100), Quantity: 100, Trades: 1}
	}
	store.ApplyLive(&engine.LiveBatch{Seq: 1, Session: ld.day, Bars: []engine.LiveBar{bar(m(14, 0), 10), bar(m(14, 1), 11)}})
	clock.set(time.Unix(m(14, 17), 0)) // cut-off 14:02: both bars visible
	etag := func(path string) string {
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w.Header().Get("ETag")
	}
	quote, company := "/v2/quotes/"+tk+"?type=current", "/v2/companies/"+tk
	q0, c0 := etag(quote), etag(company)
	store.ApplyLive(&engine.LiveBatch{Seq: 2, Session: ld.day, Bars: []engine.LiveBar{bar(m(14, 5), 12)}}) // ahead of the cut-off
	if etag(quote) != q0 {
		t.Error("a bar ahead of the cut-off changed the quote's ETag")
	}
	store.ApplyLive(&engine.LiveBatch{Seq: 3, Session: ld.day, Bars: []engine.LiveBar{bar(m(14, 1), 9)}}) // a visible correction
	q1 := etag(quote)
	if q1 == q0 {
		t.Error("a correction of a visible bar kept the quote's ETag")
	}
	w := ts.do("GET", quote, testKeyDelayed, "")
	if !strings.Contains(w.Body.String(), `"close_price":9`) {
		t.Errorf("the corrected bar is not served: %s", w.Body)
	}
	if cc := w.Header().Get("Cache-Control"); !strings.HasPrefix(cc, "private, max-age=") || cc == "private, max-age=300" {
		t.Errorf("a live answer's Cache-Control %q", cc)
	}
	clock.set(time.Unix(m(15, 40), 0))
	if etag(company) != c0 {
		t.Error("the feed or the clock changed a company's ETag")
	}
	// A conditional request with the current ETag is a 304.
	r := httptest.NewRequest("GET", quote, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	r.Header.Set("If-None-Match", etag(quote))
	rec := httptest.NewRecorder()
	ts.api.ServeHTTP(rec, r)
	if rec.Code != 304 {
		t.Errorf("If-None-Match with the live ETag: %d", rec.Code)
	}
}

// BenchmarkLiveQuoteView is the per-minute cost of a live session: the
// quote view of the next cut-off (every asset's quote through the live
// session, encoded twice, the index rankings and the movers), at demo
// scale 1 with the whole session applied.
//
//	go test ./httpapi -run '^$' -bench LiveQuoteView -benchtime 20x
func BenchmarkLiveQuoteView(b *testing.B) {
	u, sess := demo.GenerateSession(1, demo.ScaleSize(1), nil)
	d, err := ratios.Derive(u)
	if err != nil {
		b.Fatal(err)
	}
	base := demo.HoldBack(u, sess)
	base.Derived = d
	ds, err := engine.Build(base)
	if err != nil {
		b.Fatal(err)
	}
	var store engine.Store
	store.Publish(ds)
	store.StartLive(sess.Day)
	agg := negocios.NewAggregator(sess.Day, negocios.Config{})
	var trades []negocios.Trade
	sess.Each(func(t *negocios.Trade) error { trades = append(trades, *t); return nil })
	if _, err := store.ApplyLive(&engine.LiveBatch{Seq: 1, Session: sess.Day, Bars: liveBars(agg.Apply(trades))}); err != nil {
		b.Fatal(err)
	}
	v := store.View()
	in := newDSInfo(ds)
	ev := engine.View{Base: v.Base, Live: v.Live}
	t0 := sess.Day.Time().Add(14 * time.Hour).Unix()
	b.ReportMetric(float64(len(ds.Assets())), "assets")
	b.ResetTimer()
	for i := range b.N {
		at := t0 + int64(i%300)*60
		k := viewKey{at: at, session: v.Live.Session, rev: v.Live.RevAt(at)}
		qv := newQuoteView(in.ds, k, func(as *engine.Asset) (engine.Quote, bool) { return ev.QuoteAt(as, at), false })
		if len(qv.quotes) == 0 {
			b.Fatal("empty view")
		}
	}
}

// The screener shows the plan's prices: an eod key's rows carry the
// previous session's closes, as its quotes do, and the delayed key's the
// latest.
func TestScreenerFollowsThePlan(t *testing.T) {
	ld := newLiveDemo(t)
	var store engine.Store
	store.Publish(ld.full)
	ts := &testServer{api: New(DefaultConfig(), &store, testKeys(t), nil, prometheus.NewRegistry(), nil), store: &store}
	for _, c := range []struct{ name, key string }{{"eod", testKeyEOD}, {"delayed", testKeyDelayed}} {
		w := ts.do("POST", "/v2/screener", c.key, `{"primaryOnly":false,"limit":5}`)
		var ans struct {
			Data []struct {
				Ticker string   `json:"ticker"`
				Price  *float64 `json:"current_price"`
			} `json:"data"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil || len(ans.Data) == 0 {
			t.Fatalf("%s: %v %s", c.name, err, w.Body)
		}
		for _, row := range ans.Data {
			var q struct {
				Close *float64 `json:"close_price"`
			}
			qw := ts.do("GET", "/v2/quotes/"+row.Ticker+"?adjusted=false", c.key, "")
			if c.key == testKeyDelayed {
				qw = ts.do("GET", "/v2/quotes/"+row.Ticker+"?type=current", c.key, "")
			}
			json.Unmarshal(qw.Body.Bytes(), &q)
			if row.Price == nil || q.Close == nil || *row.Price != *q.Close {
				t.Errorf("%s %s: screener price %v, quote close %v (%s)", c.name, row.Ticker, row.Price, q.Close, qw.Body)
			}
		}
	}
}

// With a writer applying a batch every millisecond, every answer a reader
// gets names one batch (X-Live-Seq) and is that batch's view: batch k
// sets every ticker's close to k (run with -race).
func TestLiveAnswersNameOneSequence(t *testing.T) {
	ld := newLiveDemo(t)
	var store engine.Store
	store.Publish(ld.base)
	store.StartLive(ld.day)
	clock := &movingClock{}
	clock.set(ld.day.Time().Add(23 * time.Hour)) // every minute of the session visible
	ts := &testServer{api: New(DefaultConfig(), &store, testKeys(t), clock, prometheus.NewRegistry(), nil), store: &store}
	tickers := ld.tickers[:8]
	t0 := ld.day.Time().Add(13 * time.Hour).Unix()
	apply := func(k uint64) {
		b := engine.LiveBatch{Seq: k, Session: ld.day}
		for _, tk := range tickers {
			c := engine.Num(k)
			b.Bars = append(b.Bars, engine.LiveBar{Ticker: tk, Time: t0 + int64(k-1)*60, Open: c, High: c, Low: c, Close: c, Volume: c, Quantity: 1})
		}
		if _, err := store.ApplyLive(&b); err != nil {
			t.Error(err)
		}
	}
	apply(1)
	body := `{"tickers":["` + strings.Join(tickers, `","`) + `"],"type":"current"}`
	var done atomic.Bool
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !done.Load(); n++ {
				var w *httptest.ResponseRecorder
				if (n+g)%2 == 0 {
					w = ts.do("GET", "/v2/quotes/"+tickers[n%len(tickers)]+"?type=current", testKeyDelayed, "")
				} else {
					w = ts.do("POST", "/v2/quotes", testKeyDelayed, body)
				}
				seq := w.Header().Get("X-Live-Seq")
				if w.Code != 200 || seq == "" {
					t.Errorf("status %d, X-Live-Seq %q", w.Code, seq)
					return
				}
				want := `"close_price":` + seq + `,`
				if got := strings.Count(w.Body.String(), `"close_price":`); got == 0 || strings.Count(w.Body.String(), want) != got {
					t.Errorf("an answer naming batch %s holds other closes: %.300s", seq, w.Body)
					return
				}
			}
		}()
	}
	for k := uint64(2); k <= 300; k++ {
		apply(k)
		time.Sleep(time.Millisecond)
	}
	done.Store(true)
	wg.Wait()
}

// The document declares X-Live-Seq on the priced operations, and only
// there.
func TestOpenAPILiveSeq(t *testing.T) {
	b, err := OpenAPI("/v2", "x")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Headers map[string]any `json:"headers"`
			} `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, method string
		want         bool
	}{{"/v2/quotes/{ticker}/historical", "get", true}, {"/v2/quotes/current", "post", true}, {"/v2/screener", "post", true}, {"/v2/stocks/variations", "get", true},
		{"/v2/companies/{id}", "get", false}} {
		_, has := doc.Paths[c.path][c.method].Responses["200"].Headers["X-Live-Seq"]
		if has != c.want {
			t.Errorf("%s %s: X-Live-Seq declared %v, want %v", c.method, c.path, has, c.want)
		}
	}
}

// TestLiveLastModified: the Last-Modified of a priced answer never moves
// back while the answer changes: a correction within the cut-off's
// minute moves it on (the correcting batch's time), so does the session
// completing (before, it went back to the snapshot's build time and an
// If-Modified-Since revalidation got a 304 for a stale quote); the eod
// plan's answer follows the complete session's last batch. A company's
// answer keeps the snapshot's.
func TestLiveLastModified(t *testing.T) {
	ld := newLiveDemo(t)
	clock := &movingClock{}
	var store engine.Store
	store.Publish(ld.base)
	store.StartLive(ld.day)
	api := New(DefaultConfig(), &store, testKeys(t), clock, prometheus.NewRegistry(), nil)
	tk := ld.tickers[0]
	m := func(hh, mm int) int64 {
		return ld.day.Time().Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute).Unix()
	}
	bar := func(at int64, c float64) engine.LiveBar {
		return engine.LiveBar{Ticker: tk, Time: at, Open: engine.Num(c), High: engine.Num(c), Low: engine.Num(c), Close: engine.Num(c), Volume: engine.Num(c * 100), Quantity: 100, Trades: 1}
	}
	apply := func(seq uint64, at int64, complete bool, bars ...engine.LiveBar) {
		t.Helper()
		if ok, err := store.ApplyLive(&engine.LiveBatch{Seq: seq, Session: ld.day, Bars: bars, Complete: complete, At: at * 1000}); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	quote := "/v2/quotes/" + tk + "?type=current"
	get := func(path, key, ims string) (int, time.Time, string) {
		t.Helper()
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		if ims != "" {
			r.Header.Set("If-Modified-Since", ims)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		lm, err := http.ParseTime(w.Header().Get("Last-Modified"))
		if err != nil {
			t.Fatalf("%s: %d %s, Last-Modified %q", path, w.Code, w.Body, w.Header().Get("Last-Modified"))
		}
		return w.Code, lm, w.Body.String()
	}
	build, _ := http.ParseTime(api.info(ld.base).lastModified[0])
	apply(1, m(14, 1)+5, false, bar(m(14, 0), 10), bar(m(14, 1), 11))
	clock.set(time.Unix(m(14, 17)+30, 0)) // cut-off 14:02:30: both bars visible
	_, lm1, body1 := get(quote, testKeyDelayed, "")
	if lm1.Before(build) || lm1.Unix() != max(build.Unix(), m(14, 2)) {
		t.Errorf("Last-Modified %v, want the cut-off's minute %v (or the build %v)", lm1, time.Unix(m(14, 2), 0).UTC(), build)
	}
	// A correction of a visible bar, within the same cut-off minute.
	apply(2, m(14, 2)+20, false, bar(m(14, 1), 9))
	code, lm2, body2 := get(quote, testKeyDelayed, lm1.Format(http.TimeFormat))
	if code != 200 || body2 == body1 || !lm2.After(lm1) {
		t.Errorf("after a correction: %d, Last-Modified %v (was %v)", code, lm2, lm1)
	}
	// The session completes, the clock goes past the data: the answer
	// changes (the day's bar is whole) and Last-Modified stays ahead.
	apply(3, m(21, 30), true)
	clock.set(time.Unix(m(22, 0), 0))
	code, lm3, _ := get(quote, testKeyDelayed, lm2.Format(http.TimeFormat))
	if code != 200 || lm3.Before(lm2) {
		t.Errorf("the session complete: %d, Last-Modified %v, before %v", code, lm3, lm2)
	}
	if code, _, _ := get(quote, testKeyDelayed, lm3.Format(http.TimeFormat)); code != http.StatusNotModified {
		t.Errorf("unchanged since: %d, want 304", code)
	}
	// The eod plan, the next day: the complete session's last batch.
	clock.set(time.Unix(m(22, 0)+86400*3, 0))
	if _, lm, _ := get("/v2/quotes/"+tk, testKeyEOD, ""); lm.Unix() != max(build.Unix(), m(21, 30)) {
		t.Errorf("eod: Last-Modified %v, want the last batch's %v", lm, time.Unix(m(21, 30), 0).UTC())
	}
	if _, lm, _ := get("/v2/companies/"+tk, testKeyDelayed, ""); !lm.Equal(build) {
		t.Errorf("a company's Last-Modified %v, want the build's %v", lm, build)
	}
}
