package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// sseMsg is one event as a client reads it.
type sseMsg struct{ id, event, data string }

// sseClient reads a stream into events until stopped.
type sseClient struct {
	mu     sync.Mutex
	events []sseMsg
	resp   *http.Response
	done   chan struct{}
	cancel context.CancelFunc
}

// openStream connects to url with key (and lastID as Last-Event-ID) and
// reads its events; it fails the test unless the answer is a 200 stream.
func openStream(t *testing.T, url, key, lastID string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		cancel()
		t.Fatalf("%s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	c := &sseClient{resp: resp, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var m sseMsg
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if m.event != "" {
					c.mu.Lock()
					c.events = append(c.events, m)
					c.mu.Unlock()
				}
				m = sseMsg{}
			case strings.HasPrefix(line, "id: "):
				m.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				m.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				m.data = line[6:]
			}
		}
	}()
	return c
}

func (c *sseClient) close() {
	c.cancel()
	c.resp.Body.Close()
	<-c.done
}

func (c *sseClient) got() []sseMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sseMsg(nil), c.events...)
}

// waitEvents waits until c has read at least n events.
func (c *sseClient) waitEvents(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); len(c.got()) < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d events after a minute, want %d", len(c.got()), n)
		}
	}
}

// sseMinute is what a client holds of one minute of a ticker: the bar's
// JSON (or "" when the minute was taken out) and how many bar events.
type sseMinute struct {
	bar  string
	bars int
}

// foldEvents applies events to a client's state: ticker → minute (the bar's
// date) → what it holds; session states in order.
func foldEvents(t *testing.T, events []sseMsg) (map[string]map[string]*sseMinute, []string) {
	t.Helper()
	state := map[string]map[string]*sseMinute{}
	var sessions []string
	for _, e := range events {
		var d struct {
			Ticker  string          `json:"ticker"`
			Date    string          `json:"date"`
			Bar     json.RawMessage `json:"bar"`
			Session *string         `json:"session"`
			State   string          `json:"state"`
		}
		if err := json.Unmarshal([]byte(e.data), &d); err != nil {
			t.Fatalf("event %s %q: %v", e.event, e.data, err)
		}
		switch e.event {
		case "session":
			sessions = append(sessions, d.State)
			continue
		case "quote":
			continue
		}
		date := d.Date
		if string(d.Bar) != "null" {
			var b struct {
				Date string `json:"date"`
			}
			json.Unmarshal(d.Bar, &b)
			date = b.Date
		}
		if state[d.Ticker] == nil {
			state[d.Ticker] = map[string]*sseMinute{}
		}
		m := state[d.Ticker][date]
		if m == nil {
			m = &sseMinute{}
			state[d.Ticker][date] = m
		}
		if e.event == "bar" {
			m.bars++
		}
		m.bar = string(d.Bar)
		if m.bar == "null" {
			m.bar = ""
		}
		// A bar is sent once the cut-off passed its minute's end.
		mk, err := parseID(e.id)
		if err != nil {
			t.Fatalf("event %s: id %q: %v", e.event, e.id, err)
		}
		if when, _ := time.Parse(time.RFC3339, date); mk.to.at > 0 && when.Unix()+60 > mk.to.at {
			t.Errorf("%s %s of %s sent at cut-off %s, before its minute's end", e.event, d.Ticker, date, time.Unix(mk.to.at, 0).UTC().Format("15:04"))
		}
	}
	return state, sessions
}

// sseFixture is a live session fed minute by minute to two replicas (two
// Stores, two APIs, each behind a server), and a third API over the full
// day for the expected answers.
type sseFixture struct {
	ld     *liveDemo
	clock  *movingClock
	stores [2]*engine.Store
	apis   [2]*API
	srvs   [2]*httptest.Server
	full   *testServer
	agg    *negocios.Aggregator
	seq    uint64
	next   int
	keys   *Keys
	open   time.Time
}

func newSSEFixture(t *testing.T) *sseFixture {
	ld := newLiveDemo(t)
	f := &sseFixture{ld: ld, clock: &movingClock{}, keys: testKeys(t), agg: negocios.NewAggregator(ld.day, negocios.Config{})}
	f.open = ld.day.Time().Add(12 * time.Hour)
	f.clock.set(f.open)
	cfg := DefaultConfig()
	cfg.StreamStep = 2 * time.Millisecond
	for i := range f.stores {
		f.stores[i] = &engine.Store{}
		f.stores[i].Publish(ld.base)
		f.stores[i].StartLive(ld.day)
		f.apis[i] = New(cfg, f.stores[i], f.keys, f.clock, prometheus.NewRegistry(), nil)
		f.srvs[i] = httptest.NewServer(f.apis[i])
		api, srv := f.apis[i], f.srvs[i]
		t.Cleanup(func() { api.EndStreams(); srv.Close() })
	}
	var fullStore engine.Store
	fullStore.Publish(ld.full)
	f.full = &testServer{api: New(DefaultConfig(), &fullStore, f.keys, f.clock, prometheus.NewRegistry(), nil), store: &fullStore}
	return f
}

// step feeds the trades before at to both replicas as one batch (the
// last one complete) and moves the clock to at, then waits for every hub
// of the replicas to make its step.
func (f *sseFixture) step(t *testing.T, at time.Time, complete bool) {
	t.Helper()
	j := f.next
	for j < len(f.ld.trades) && (complete || f.ld.trades[j].Time < at.UnixMilli()) {
		j++
	}
	bars := liveBars(f.agg.Apply(f.ld.trades[f.next:j]))
	f.next = j
	f.apply(t, at, complete, bars)
}

// apply applies bars to both replicas as the next batch at at (the
// clock moved there), then waits for every hub of the replicas to make
// its step.
func (f *sseFixture) apply(t *testing.T, at time.Time, complete bool, bars []engine.LiveBar) {
	t.Helper()
	f.seq++
	for _, s := range f.stores {
		if ok, err := s.ApplyLive(&engine.LiveBatch{Seq: f.seq, Session: f.ld.day, Bars: bars, Complete: complete, At: at.UnixMilli()}); !ok || err != nil {
			t.Fatalf("batch %d: %v %v", f.seq, ok, err)
		}
	}
	f.clock.set(at)
	for _, a := range f.apis {
		for _, hub := range a.streams.hubs {
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Microsecond) {
				hub.mu.Lock()
				idle, caught := hub.stop == nil, hub.last != nil && !hub.ran.Before(at) && hub.last.ev.Live == a.store.View().Live
				hub.mu.Unlock()
				if idle || caught {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the %s hub has not made the step of batch %d", hub.plan, f.seq)
				}
			}
		}
	}
}

// liveBar returns the live bar of ticker at minute m in replica 0 (ok
// false: none).
func (f *sseFixture) liveBar(ticker string, m int64) (engine.LiveBar, bool) {
	v := f.stores[0].View()
	as, _ := v.Base.Asset(ticker)
	bs := v.AppendMinutes(nil, as, m, m, false)
	if len(bs) == 0 {
		return engine.LiveBar{}, false
	}
	b := bs[0]
	return engine.LiveBar{Ticker: ticker, Time: m, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume, Quantity: int64(b.Quantity), Trades: 1}, true
}

// TestStreamSession replays a session minute by minute while clients
// read the stream of 40 tickers: every 1-minute bar of the session
// arrives as a bar exactly once, after its plan's cut-off, and what a
// client holds at the end equals the full day's bars; a client that
// disconnects at a random event and reconnects with Last-Event-ID (to
// the same server, to another replica, to a new server over the same
// data) ends with the same bars, none twice; the session's states come
// in order.
func TestStreamSession(t *testing.T) {
	f := newSSEFixture(t)
	tickers := f.ld.tickers
	if len(tickers) > 40 {
		tickers = tickers[:40]
	}
	path := "/v2/stream/quotes?tickers=" + strings.Join(tickers, ",")
	a := openStream(t, f.srvs[0].URL+path, testKeyDelayed, "")
	a.waitEvents(t, 1) // the session's state: the client is in
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("PREGAO_TEST_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (PREGAO_TEST_SEED repeats a run)", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	b := openStream(t, f.srvs[0].URL+path, testKeyDelayed, "")
	b.waitEvents(t, 1)
	var bEvents []sseMsg
	hops := 0
	hopAt := 1 + rng.IntN(60)
	// Corrections of visible minutes, undone later (the day's bars stay
	// the full day's): a changed close, a minute taken out.
	var undo []engine.LiveBar
	for at := f.open.Add(time.Minute); at.Before(f.ld.day.Time().Add(21*time.Hour + 30*time.Minute)); at = at.Add(3 * time.Minute) {
		f.step(t, at, false)
		switch at.Sub(f.open) {
		case 151 * time.Minute: // 14:31 in São Paulo: cut-off 14:16
			for i, tk := range tickers[:6] {
				for m := int64(f.ld.day)*86400 + 13*3600; m < at.Add(-QuoteDelay).Unix()-60; m += 60 {
					lb, ok := f.liveBar(tk, m)
					if !ok {
						continue
					}
					undo = append(undo, lb)
					c := lb
					if i%2 == 0 {
						c.Close, c.High = lb.High, lb.High
					} else {
						c = engine.LiveBar{Ticker: tk, Time: m, Removed: true}
					}
					f.apply(t, at, false, []engine.LiveBar{c})
					break
				}
			}
		case 241 * time.Minute:
			f.apply(t, at, false, undo)
		}
		if got := b.got(); len(got) >= hopAt && hops < 3 {
			// Cut at a random event: keep what was read up to it, and
			// reconnect with its id, to the same server, the other
			// replica, then a new server over the first's store.
			b.close()
			got = b.got()
			k := 1 + rng.IntN(len(got))
			bEvents = append(bEvents, got[:k]...)
			srv := f.srvs[hops%2]
			if hops == 2 {
				api := New(f.apis[0].cfg, f.stores[0], f.keys, f.clock, prometheus.NewRegistry(), nil)
				s := httptest.NewServer(api)
				t.Cleanup(func() { api.EndStreams(); s.Close() })
				srv = s
				f.apis[0] = api // its hub is waited for from now on
			}
			if os.Getenv("PREGAO_TEST_DEBUG") != "" {
				t.Logf("hop %d after %s %s (event %d of %d)", hops, got[k-1].event, got[k-1].id, k, len(got))
			}
			b = openStream(t, srv.URL+path, testKeyDelayed, got[k-1].id)
			hops++
			hopAt = len(got) + rng.IntN(200)
		}
	}
	f.step(t, f.ld.day.Time().Add(21*time.Hour+45*time.Minute), true)
	f.step(t, f.ld.day.Time().Add(23*time.Hour), false)
	time.Sleep(20 * time.Millisecond) // the last step's writes
	a.close()
	b.close()
	bEvents = append(bEvents, b.got()...)
	if hops < 3 {
		t.Fatalf("%d reconnections, want 3", hops)
	}

	stateA, sessA := foldEvents(t, a.got())
	stateB, _ := foldEvents(t, bEvents)
	if want := []string{"open", "close"}; fmt.Sprint(sessA[len(sessA)-2:]) != fmt.Sprint(want) {
		t.Errorf("session states %v, want them to end with %v", sessA, want)
	}
	// The full day's bars, as the API answers them.
	bars := 0
	for _, tk := range tickers {
		w := f.full.do("GET", "/v2/quotes/"+tk+"?type=historical&interval=60&start_date="+f.ld.day.String()+"&end_date="+f.ld.day.String(), testKeyDelayed, "")
		var series []json.RawMessage
		if err := json.Unmarshal(w.Body.Bytes(), &series); err != nil {
			t.Fatalf("%s: %v %s", tk, err, w.Body)
		}
		want := map[string]string{}
		for _, raw := range series {
			var b struct {
				Date string `json:"date"`
			}
			json.Unmarshal(raw, &b)
			want[b.Date] = string(raw)
		}
		bars += len(want)
		for name, st := range map[string]map[string]map[string]*sseMinute{"a": stateA, "b": stateB} {
			got := st[tk]
			for date, w := range want {
				m := got[date]
				switch {
				case m == nil:
					t.Errorf("client %s: %s %s never sent", name, tk, date)
				case m.bars != 1:
					t.Errorf("client %s: %s %s sent as a bar %d times", name, tk, date, m.bars)
					if os.Getenv("PREGAO_TEST_DEBUG") != "" {
						for _, e := range bEvents {
							if strings.Contains(e.data, tk) && strings.Contains(e.data, date) {
								t.Logf("  %s %s", e.event, e.id)
							}
						}
					}
				case m.bar != w:
					t.Errorf("client %s: %s %s\n got %s\nwant %s", name, tk, date, m.bar, w)
				}
			}
			for date, m := range got {
				if _, ok := want[date]; !ok && m.bar != "" {
					t.Errorf("client %s: %s %s held (%s), the full day has no such bar", name, tk, date, m.bar)
				}
			}
		}
	}
	corrections := 0
	for _, e := range a.got() {
		if e.event == "correction" {
			corrections++
		}
	}
	t.Logf("%d bars of %d tickers checked; client a %d events (%d corrections), client b %d events over %d connections", bars, len(tickers), len(a.got()), corrections, len(bEvents), hops+1)
	if corrections == 0 {
		t.Error("no correction in the session: the fixture does not test them")
	}
	if bars < 1000 {
		t.Fatalf("%d bars checked: the fixture is too small", bars)
	}
}

// TestStreamIndexAndEOD: a stream of an index sends its members' bars
// and its level's, which end equal to GET /quotes/{index}'s levels of the
// full day; a stream of an eod key sends nothing of the session while it
// runs, then, once it is over and the next day has come, its close and
// each ticker's daily bar, equal to the full day's.
func TestStreamIndexAndEOD(t *testing.T) {
	f := newSSEFixture(t)
	ix := f.srvs[0].URL + "/v2/stream/quotes?index=IBOV"
	c := openStream(t, ix, testKeyDelayed, "")
	e := openStream(t, f.srvs[0].URL+"/v2/stream/quotes?tickers="+strings.Join(f.ld.tickers[:5], ","), testKeyEOD, "")
	c.waitEvents(t, 1)
	e.waitEvents(t, 1)
	for at := f.open.Add(time.Minute); at.Before(f.ld.day.Time().Add(21*time.Hour + 30*time.Minute)); at = at.Add(7 * time.Minute) {
		f.step(t, at, false)
	}
	f.step(t, f.ld.day.Time().Add(21*time.Hour+45*time.Minute), true)
	if got := e.got(); len(got) != 1 || got[0].event != "session" || !strings.Contains(got[0].data, `"state":"none"`) {
		t.Errorf("an eod stream during the session: %v", got)
	}
	f.step(t, f.ld.day.Time().Add(36*time.Hour), false) // the next day
	time.Sleep(20 * time.Millisecond)
	c.close()
	e.close()

	state, _ := foldEvents(t, c.got())
	w := f.full.do("GET", "/v2/quotes/IBOV?type=historical&interval=60&start_date="+f.ld.day.String()+"&end_date="+f.ld.day.String(), testKeyDelayed, "")
	var levels []json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &levels); err != nil || len(levels) < 100 {
		t.Fatalf("IBOV's levels: %d %v %.200s", len(levels), err, w.Body)
	}
	for _, raw := range levels {
		var b struct {
			Date string `json:"date"`
		}
		json.Unmarshal(raw, &b)
		m := state["IBOV"][b.Date]
		if m == nil || m.bars != 1 || m.bar != string(raw) {
			t.Fatalf("IBOV %s: %+v\nwant %s", b.Date, m, raw)
		}
	}
	ibov, _ := f.ld.full.Index("IBOV")
	if len(state) != len(ibov.Members)+1 {
		t.Errorf("the index stream sent the bars of %d tickers, want its %d members' and its own", len(state), len(ibov.Members))
	}
	eod, sessions := foldEvents(t, e.got())
	if fmt.Sprint(sessions) != "[none close]" { // never open: the eod plan sees the session once it is over
		t.Errorf("eod session states %v", sessions)
	}
	for _, tk := range f.ld.tickers[:5] {
		w := f.full.do("GET", "/v2/quotes/"+tk, testKeyEOD, "")
		var q struct {
			Close engine.Num `json:"close_price"`
			Date  string     `json:"date"`
		}
		json.Unmarshal(w.Body.Bytes(), &q)
		var got struct {
			Close engine.Num `json:"close_price"`
		}
		m := eod[tk][f.ld.day.Time().UTC().Format(time.RFC3339)]
		if m == nil || m.bars != 1 || json.Unmarshal([]byte(m.bar), &got) != nil || !got.Close.Valid() || got.Close != q.Close {
			t.Errorf("eod %s: %+v, want the close %v of %s", tk, m, q, w.Body)
		}
	}
}

// TestStreamBounds: bad requests are refused before the stream starts
// (400, 404); a key past its streams gets
// 429 with Retry-After; an idle stream gets keep-alive comments; a
// subscriber that cannot take the steps is cut (slow), and draining ends
// every stream (drain) and refuses new ones; the gauge and counters say
// so.
func TestStreamBounds(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ld, store, clock := ls.ld, ls.store, ls.clock
	ls.cfg.StreamConnsPerKey, ls.cfg.StreamHeartbeat = 2, 20*time.Millisecond
	ls.cfg.MaxStreams = 3
	reg := prometheus.NewRegistry()
	api := ls.api(testKeys(t), reg)
	srv := httptest.NewServer(api)
	defer srv.Close()
	tk := ld.tickers[0]
	for _, c := range []struct {
		path, key, lastID string
		code              int
		want              string
	}{
		{"/v2/stream/quotes", testKeyDelayed, "", 400, "query parameter tickers or index is required"},
		{"/v2/stream/quotes?tickers=" + tk + "&index=IBOV", testKeyDelayed, "", 400, "send one of them"},
		{"/v2/stream/quotes?tickers=ZZZZ3", testKeyDelayed, "", 404, `ticker "ZZZZ3" not found`},
		{"/v2/stream/quotes?index=NOPE", testKeyDelayed, "", 404, `index "NOPE" not found`},
		{"/v2/stream/quotes?tickers=" + strings.TrimSuffix(strings.Repeat(tk+",", 501), ","), testKeyDelayed, "", 400, "at most 500"},
		{"/v2/stream/quotes?tickers=" + tk, testKeyDelayed, "yesterday", 400, `Last-Event-ID "yesterday": not an event id`},
		{"/v2/stream/quotes?tickers=" + tk, testKeyDelayed, "20261119.9.0.0/20261119.1.0.0/X/q", 400, "not an event id"},
		{"/v2/stream/quotes?tickers=" + tk + "&nope=1", testKeyDelayed, "", 400, "unknown query parameter"},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		r.Header.Set("Authorization", "Bearer "+c.key)
		if c.lastID != "" {
			r.Header.Set("Last-Event-ID", c.lastID)
		}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		checkError(t, w, c.code, c.want)
	}

	// HEAD: the head a GET gets, and the end (no stream held).
	head := make(chan *httptest.ResponseRecorder)
	go func() {
		r := httptest.NewRequest("HEAD", "/v2/stream/quotes?tickers="+tk, nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		head <- w
	}()
	select {
	case w := <-head:
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") || w.Body.Len() != 0 {
			t.Errorf("HEAD: %d %q %d bytes", w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
	case <-time.After(time.Minute):
		t.Fatal("HEAD of a stream did not end")
	}
	if api.streams.total != 0 {
		t.Errorf("after a HEAD, %d streams counted", api.streams.total)
	}
	// Two streams for the key, a third refused.
	path := srv.URL + "/v2/stream/quotes?tickers=" + tk
	s1, s2 := openStream(t, path, testKeyDelayed, ""), openStream(t, path, testKeyDelayed, "")
	r := httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+tk, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	checkError(t, w, 429, "too many streams for this key: 2 are open")
	if w.Header().Get("Retry-After") == "" {
		t.Error("a 429 without Retry-After")
	}
	// The server's bound, every key together: 503.
	e1 := openStream(t, path, testKeyEOD, "")
	r = httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+tk, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyEOD)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, r)
	checkError(t, w, 503, "too many streams on this server")
	if w.Header().Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	e1.close()
	for deadline := time.Now().Add(time.Minute); labelled(t, reg, "pregao_stream_subscribers", "plan", PlanEOD) != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream still counted")
		}
	}
	if g := labelled(t, reg, "pregao_stream_subscribers", "plan", PlanDelayed); g != 2 {
		t.Errorf("subscribers %v, want 2", g)
	}
	s2.close()
	for deadline := time.Now().Add(time.Minute); labelled(t, reg, "pregao_stream_subscribers", "plan", PlanDelayed) != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream still counted")
		}
	}
	// Keep-alive comments on an idle stream.
	raw := rawStream(t, path, testKeyDelayed)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(raw.text(), ": keep-alive\n\n"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no keep-alive in %q", raw.text())
		}
	}
	if !strings.HasPrefix(raw.text(), "retry: 3000\n\n") {
		t.Errorf("the stream starts %.60q, want retry: 3000", raw.text())
	}
	raw.close()
	for deadline := time.Now().Add(time.Minute); labelled(t, reg, "pregao_stream_subscribers", "plan", PlanDelayed) != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a closed stream still counted")
		}
	}
	// A subscriber whose steps pile up is cut.
	hub := api.streams.hubs[PlanDelayed]
	slow := &sseSub{steps: make(chan *sseStep, 1), cut: make(chan struct{})}
	running := subscribeLoop(hub, slow)
	store.StartLive(ld.day)
	for i := 1; i <= 3; i++ {
		store.ApplyLive(&engine.LiveBatch{Seq: uint64(i), Session: ld.day, Bars: []engine.LiveBar{}})
		clock.set(clock.Now().Add(time.Minute))
		hub.step(running)
	}
	select {
	case <-slow.cut:
		if *slow.why.Load() != "slow" {
			t.Errorf("cut for %q, want slow", *slow.why.Load())
		}
	default:
		t.Error("a subscriber 2 steps behind a queue of 1 is not cut")
	}
	hub.unsubscribe(slow, "")
	// Draining (readyz 503 until the load balancer notices) keeps the
	// streams and serves new ones: one ended now would reconnect here,
	// which the load balancer has not left yet.
	api.SetDraining(true)
	during := openStream(t, path, testKeyEOD, "")
	select {
	case <-s1.done:
		t.Fatal("a stream ended by the drain's start")
	case <-time.After(50 * time.Millisecond):
	}
	// The shutdown, after the drain, ends the streams and refuses new ones.
	api.EndStreams()
	<-s1.done // the server ended it
	<-during.done
	r = httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+tk, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, r)
	checkError(t, w, 503, "shutting down")
	if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "drain"); n != 2 {
		t.Errorf("streams cut by the drain: %v, want 2", n)
	}
	if n := labelled(t, reg, "pregao_stream_events_total", "event", "session"); n < 3 {
		t.Errorf("session events counted: %v", n)
	}
}

// rawStreamReader holds a stream's bytes as read.
type rawStreamReader struct {
	mu   sync.Mutex
	b    strings.Builder
	c    *sseClient
	done chan struct{}
}

func (r *rawStreamReader) text() string { r.mu.Lock(); defer r.mu.Unlock(); return r.b.String() }
func (r *rawStreamReader) close()       { r.c.cancel(); r.c.resp.Body.Close(); <-r.done }

// rawStream reads a stream's bytes, comments included.
func rawStream(t *testing.T, url, key string) *rawStreamReader {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("%s: %v %v", url, resp, err)
	}
	r := &rawStreamReader{c: &sseClient{resp: resp, cancel: cancel}, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			r.mu.Lock()
			r.b.Write(buf[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return r
}

// labelled returns the value of the counter or gauge name{label=value}.
func labelled(tb testing.TB, reg *prometheus.Registry, name, label, value string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			for _, p := range m.Label {
				if p.GetName() == label && p.GetValue() == value {
					if g := m.GetGauge(); g != nil {
						return g.GetValue()
					}
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	tb.Fatalf("no series %s{%s=%q}", name, label, value)
	return 0
}

// A step of a hub's loop that waited for the lock while the last
// subscriber left leaves the stopped hub as unsubscribe left it: its
// cursor, no view (a view would hold its Dataset and live session past
// the next publish).
func TestStreamHubStoppedKeepsCursor(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ld, store, clock := ls.ld, ls.store, ls.clock
	ls.cfg.StreamStep = time.Hour // the loop makes no step of its own
	api := ls.api(testKeys(t), nil)
	store.StartLive(ld.day)
	store.ApplyLive(&engine.LiveBatch{Seq: 1, Session: ld.day, Bars: []engine.LiveBar{}})
	hub := api.streams.hubs[PlanDelayed]
	sub := &sseSub{steps: make(chan *sseStep, 8), cut: make(chan struct{})}
	running := subscribeLoop(hub, sub)
	hub.unsubscribe(sub, "")
	store.ApplyLive(&engine.LiveBatch{Seq: 2, Session: ld.day, Bars: []engine.LiveBar{}})
	clock.set(clock.Now().Add(time.Minute))
	hub.step(running) // the stopped loop's step, late
	hub.mu.Lock()
	last, stopped := hub.last, hub.stop == nil
	hub.mu.Unlock()
	if !stopped || last.ev.Base != nil || last.ev.Live != nil || !last.cur.session.Valid() {
		t.Errorf("stopped %v, the hub keeps %+v (cursor %+v), want only its cursor", stopped, last.ev, last.cur)
	}
}

// TestStreamKeysReload: a keys reload that revokes a key ends its
// streams (a reconnection gets the 401), one that changes a key's plan
// ends its streams (the reconnection gets the new plan's), with a
// comment saying why; a key the reload keeps as it was keeps its stream.
func TestStreamKeysReload(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ld := ls.ld
	reg := prometheus.NewRegistry()
	const kept = "pg_00000000000000000000000000000003"
	keysWith := func(plans map[string]string) *Keys {
		var f KeysFile
		for _, k := range []struct{ key, name string }{{testKeyDelayed, "delayed"}, {testKeyEOD, "eod"}, {kept, "kept"}} {
			if plans[k.name] == "" {
				continue // revoked
			}
			_, e, err := NewKey(k.name, plans[k.name], time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			e.SHA256 = sha256Hex(k.key)
			f.Keys = append(f.Keys, e)
		}
		keys, err := NewKeys(f)
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	api := ls.api(keysWith(map[string]string{"delayed": PlanDelayed, "eod": PlanEOD, "kept": PlanDelayed}), reg)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.EndStreams()
	path := srv.URL + "/v2/stream/quotes?tickers=" + ld.tickers[0]
	revoked, moved, same := rawStream(t, path, testKeyDelayed), rawStream(t, path, testKeyEOD), rawStream(t, path, kept)
	defer same.close()
	for deadline := time.Now().Add(time.Minute); api.streams.total < 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the streams did not start")
		}
	}
	// The same keys again: nothing ends.
	api.SetKeys(keysWith(map[string]string{"delayed": PlanDelayed, "eod": PlanEOD, "kept": PlanDelayed}))
	// The delayed key revoked, the eod key moved to the delayed plan.
	api.SetKeys(keysWith(map[string]string{"eod": PlanDelayed, "kept": PlanDelayed}))
	for _, c := range []struct {
		name string
		r    *rawStreamReader
	}{{"revoked", revoked}, {"moved", moved}} {
		select {
		case <-c.r.done:
		case <-time.After(time.Minute):
			t.Fatalf("the %s key's stream still open after the keys reload", c.name)
		}
		if txt := c.r.text(); !strings.HasSuffix(txt, ": the API key was revoked or its plan changed\n\n") {
			t.Errorf("the %s key's stream ends %q", c.name, txt[max(0, len(txt)-80):])
		}
	}
	select {
	case <-same.done:
		t.Fatal("a stream of a key the reload kept as it was ended")
	case <-time.After(50 * time.Millisecond):
	}
	if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "key"); n != 2 {
		t.Errorf("streams cut by the keys reload: %v, want 2", n)
	}
	// Reconnecting: the revoked key is refused, the moved one streams its
	// new plan.
	r := httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+ld.tickers[0], nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	checkError(t, w, 401, "unknown API key")
	again := rawStream(t, path, testKeyEOD)
	defer again.close()
	for deadline := time.Now().Add(time.Minute); labelled(t, reg, "pregao_stream_subscribers", "plan", PlanDelayed) != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("delayed subscribers %v, want 2 (the kept key's and the moved key's)", labelled(t, reg, "pregao_stream_subscribers", "plan", PlanDelayed))
		}
	}
}

// A keys reload that comes between a stream's key check and its
// subscription ends that stream too: the recheck of the hubs did not
// see it yet, the stream reads the keys once subscribed.
func TestStreamKeysReloadWhileSubscribing(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ld := ls.ld
	api := ls.api(testKeys(t), nil)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.EndStreams()
	var f KeysFile // every key revoked
	none, err := NewKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	defer func(h func()) { beforeStreamSubscribe = h }(beforeStreamSubscribe)
	beforeStreamSubscribe = func() { api.SetKeys(none) }
	r := rawStream(t, srv.URL+"/v2/stream/quotes?tickers="+ld.tickers[0], testKeyDelayed)
	defer r.close()
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		t.Fatal("the stream of a key revoked as it subscribed is still open")
	}
	if txt := r.text(); !strings.HasSuffix(txt, ": the API key was revoked or its plan changed\n\n") {
		t.Errorf("the stream ends %q", txt[max(0, len(txt)-80):])
	}
}

// The shutdown (EndStreams) that comes between a stream's admission and
// its subscription ends that stream too, with its comment: it found no
// such stream to end, and before the fix the stream went on until the
// shutdown's timeout cut its connection.
func TestStreamEndWhileSubscribing(t *testing.T) {
	ls := newLiveStreamSetup(t)
	reg := prometheus.NewRegistry()
	api := ls.api(testKeys(t), reg)
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer func(h func()) { beforeStreamSubscribe = h }(beforeStreamSubscribe)
	beforeStreamSubscribe = func() { api.EndStreams() }
	r := rawStream(t, srv.URL+"/v2/stream/quotes?tickers="+ls.ld.tickers[0], testKeyDelayed)
	defer r.close()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("a stream subscribed as the server shut down is still open")
	}
	if txt := r.text(); !strings.HasSuffix(txt, ": the server is shutting down: reconnect with Last-Event-ID\n\n") {
		t.Errorf("the stream ends %q", txt[max(0, len(txt)-80):])
	}
	if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "drain"); n != 1 {
		t.Errorf("streams cut by the shutdown: %v, want 1", n)
	}
}

// FuzzParseEventID: a Last-Event-ID is read without a panic; one that is
// accepted names a step whose start is not after its end, and reads back
// as itself once written (the id the stream would send for it).
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{
		"0.0.0.0/0.0.0.0//s0",
		"20261119.1.1795096680.94/20261119.1.1795096740.95/MERI3/1795096680",
		"20261119.1.1795096680.94/20261119.1.1795096740.95/MERI3/q",
		"20261119.1.1795096680.94/20261119.2.1795118400.487//s2",
		"20261118.3.1795000020.4/20261119.1.1795114620.415/IBOV/q",
		"20260231.1.60.1/20260231.1.120.2/ABCD3/60",
		"yesterday", "", "////", "0.0.0.0/0.0.0.0/X/-60",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseID(s)
		if err != nil {
			return
		}
		if m.from.after(m.to) {
			t.Fatalf("%q: a step from %+v to %+v", s, m.from, m.to)
		}
		id := string(appendID(nil, &m))
		again, err := parseID(id)
		if err != nil {
			t.Fatalf("%q read as %+v, written %q: %v", s, m, id, err)
		}
		if again != m {
			t.Fatalf("%q read as %+v, written %q, read back as %+v", s, m, id, again)
		}
	})
}

// TestStreamResumeBeforeSession: the id of the state "none" (a stream
// opened before any session, or by the eod plan before it sees the
// session) is one the stream takes back as Last-Event-ID: a client that
// reconnects with it is served, not refused with a 400 (on which a
// browser's EventSource stops for good).
func TestStreamResumeBeforeSession(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ld := ls.ld
	api := ls.api(testKeys(t), prometheus.NewRegistry())
	srv := httptest.NewServer(api)
	defer srv.Close()
	defer api.EndStreams()
	path := srv.URL + "/v2/stream/quotes?tickers=" + ld.tickers[0]
	for _, key := range []string{testKeyDelayed, testKeyEOD} {
		c := openStream(t, path, key, "")
		c.waitEvents(t, 1)
		c.close()
		first := c.got()[0]
		if first.event != "session" || first.data != `{"session":null,"state":"none"}` {
			t.Fatalf("first event %+v, want the state none", first)
		}
		again := openStream(t, path, key, first.id) // fails the test unless a 200 stream
		again.close()
	}
}

// failingWriter is a stream's connection whose writes fail with err;
// with block set, each write first sends on blocked and waits for block.
type failingWriter struct {
	hd             http.Header
	err            error
	blocked, block chan struct{}
}

func (w *failingWriter) Header() http.Header { return w.hd }
func (w *failingWriter) WriteHeader(int)     {}
func (w *failingWriter) Flush()              {}
func (w *failingWriter) Write(b []byte) (int, error) {
	if w.block != nil {
		w.blocked <- struct{}{}
		<-w.block
	}
	return 0, w.err
}

// TestStreamWriteCut: a stream whose write times out is cut and counted
// (pregao_stream_cut_total{reason="write"}); one whose client left (the
// connection closed or reset) ends without counting a cut.
func TestStreamWriteCut(t *testing.T) {
	ld := newLiveDemo(t)
	store := &engine.Store{}
	store.Publish(ld.base)
	clock := &movingClock{}
	clock.set(ld.day.Time().Add(14 * time.Hour))
	reg := prometheus.NewRegistry()
	api := New(DefaultConfig(), store, testKeys(t), clock, reg, nil)
	defer api.EndStreams()
	for _, c := range []struct {
		err  error
		cuts float64
	}{
		{syscall.EPIPE, 0},
		{syscall.ECONNRESET, 0},
		{&net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded}, 1},
		{syscall.EPIPE, 1},
		// The listener's TCP user timeout gives up before the deadline.
		{&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ETIMEDOUT)}, 2},
	} {
		r := httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+ld.tickers[0], nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			api.ServeHTTP(&failingWriter{hd: http.Header{}, err: c.err}, r)
		}()
		select {
		case <-ended:
		case <-time.After(time.Minute):
			t.Fatalf("%v: the stream did not end", c.err)
		}
		if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "write"); n != c.cuts {
			t.Errorf("after a write failing with %v: write cuts %v, want %v", c.err, n, c.cuts)
		}
	}
	// A stream the hub cuts as slow while its write is blocked ends when
	// that write times out: counted as slow, not as write. One whose
	// client reset the connection meanwhile left first: no cut counted.
	for _, err := range []error{os.ErrDeadlineExceeded, syscall.ECONNRESET} {
		r := httptest.NewRequest("GET", "/v2/stream/quotes?tickers="+ld.tickers[0], nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		fw := &failingWriter{hd: http.Header{}, err: err, blocked: make(chan struct{}), block: make(chan struct{})}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			api.ServeHTTP(fw, r)
		}()
		<-fw.blocked
		hub := api.streams.hubs[PlanDelayed]
		hub.mu.Lock()
		for sub := range hub.subs {
			sub.close("slow")
		}
		hub.mu.Unlock()
		close(fw.block)
		<-ended
		if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "slow"); n != 1 {
			t.Errorf("a write failing with %v after a slow cut: slow cuts %v, want 1", err, n)
		}
		if n := labelled(t, reg, "pregao_stream_cut_total", "reason", "write"); n != 2 {
			t.Errorf("a write failing with %v after a slow cut: write cuts %v, want still 2", err, n)
		}
	}
}

// TestStreamResumeAhead: a Last-Event-ID ahead of the server's view of
// the plan (made up, or from a replica further on) is served once the
// view reaches it: a delayed-plan client naming a cut-off an hour ahead
// gets no bar past the plan's 15-minute cut-off; a client that read part
// of a step on one replica and resumes on a replica that has not applied
// that step's batch yet gets the step's minutes once it has, none lost.
func TestStreamResumeAhead(t *testing.T) {
	f := newSSEFixture(t)
	tickers := f.ld.tickers[:20]
	path := "/v2/stream/quotes?tickers=" + strings.Join(tickers, ",")
	at := f.stepTwoHours(t)
	day := sessionStart(f.ld.day)
	cut := at.Add(-QuoteDelay).Unix() / 60 * 60 // minutes before it are visible
	forged := sseMark{
		from: sseCursor{session: f.ld.day, state: sseOpen, at: day + 13*3600, seq: 1},
		to:   sseCursor{session: f.ld.day, state: sseOpen, at: cut + 3600, seq: f.seq},
		part: -sseOpen,
	}
	c := openStream(t, f.srvs[0].URL+path, testKeyDelayed, string(appendID(nil, &forged)))
	f.step(t, at.Add(time.Minute), false) // the hub's next step
	// How long a leak is looked for: with none, nothing comes to wait for.
	time.Sleep(200 * time.Millisecond)
	c.close()
	for _, e := range c.got() {
		var d struct {
			Bar struct {
				Date time.Time `json:"date"`
			} `json:"bar"`
		}
		json.Unmarshal([]byte(e.data), &d)
		if e.event == "bar" && d.Bar.Date.Unix() >= cut+60 {
			t.Fatalf("a made-up id ahead of the cut-off got the bar %s (cut-off %s)", e.data, time.Unix(cut+60, 0).UTC())
		}
	}

	// A replica behind: replica 0 applies the next batch, replica 1 not yet.
	var bars []engine.LiveBar
	next := at.Add(10 * time.Minute)
	j := f.next
	for j < len(f.ld.trades) && f.ld.trades[j].Time < next.UnixMilli() {
		j++
	}
	bars = liveBars(f.agg.Apply(f.ld.trades[f.next:j]))
	f.next = j
	a := openStream(t, f.srvs[0].URL+path, testKeyDelayed, "")
	a.waitEvents(t, 1)
	f.seq++
	if ok, err := f.stores[0].ApplyLive(&engine.LiveBatch{Seq: f.seq, Session: f.ld.day, Bars: bars, At: next.UnixMilli()}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	f.clock.set(next.Add(QuoteDelay)) // the batch's minutes visible in this step
	var got []sseMsg
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		got = a.got()
		if n := len(got); n > 2 && got[n-1].event == "quote" && strings.Contains(got[n-1].data, tickers[len(tickers)-1]) || time.Now().After(deadline) {
			break
		}
	}
	a.close()
	got = a.got()
	k := 1
	for k < len(got) && got[k].event != "bar" {
		k++
	}
	if k >= len(got) {
		t.Fatalf("no bar in the step of replica 0: %d events", len(got))
	}
	// Cut after the step's first bar, resume on replica 1, which then
	// applies the batch.
	b := openStream(t, f.srvs[1].URL+path, testKeyDelayed, got[k].id)
	if ok, err := f.stores[1].ApplyLive(&engine.LiveBatch{Seq: f.seq, Session: f.ld.day, Bars: bars, At: next.UnixMilli()}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	last := `"ticker":"` + tickers[len(tickers)-1] + `"`
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if slices.ContainsFunc(b.got(), func(e sseMsg) bool { return e.event == "quote" && strings.Contains(e.data, last) }) {
			break // the step's last ticker's quote: the step is read
		}
		if time.Now().After(deadline) {
			t.Fatal("the replica behind did not send the step's rest")
		}
	}
	b.close()
	held := map[string]bool{}
	for _, e := range append(got[:k+1:k+1], b.got()...) {
		var d struct {
			Ticker string `json:"ticker"`
			Bar    struct {
				Date time.Time `json:"date"`
			} `json:"bar"`
		}
		json.Unmarshal([]byte(e.data), &d)
		if e.event == "bar" {
			held[d.Ticker+" "+d.Bar.Date.UTC().Format(time.RFC3339)] = true
		}
	}
	// Every minute of the step (visible at the clock of `next`) is held.
	v := f.stores[0].View()
	lost := 0
	first := at.Add(time.Minute).Add(-QuoteDelay).Unix() / 60 * 60 // the step's first minute
	for _, tk := range tickers {
		as, _ := v.Base.Asset(tk)
		for _, bar := range v.AppendMinutes(nil, as, first, next.Unix()/60*60-60, false) {
			if k := tk + " " + time.Unix(bar.Time, 0).UTC().Format(time.RFC3339); !held[k] {
				if lost++; lost <= 3 {
					t.Errorf("%s: never sent across the resume on the replica behind", k)
				}
			}
		}
	}
}

// A stream resumed with an id no step of this server reaches within
// streamAheadWait (another timeline: a made-up id, a deployment whose
// stream was reset) starts at the present, as a new stream: the
// session's state, then the steps that come. It does not wait forever
// with nothing but keep-alives.
func TestStreamResumeFarAhead(t *testing.T) {
	defer func(d time.Duration) { streamAheadWait = d }(streamAheadWait)
	streamAheadWait = 100 * time.Millisecond
	f := newSSEFixture(t)
	tickers := f.ld.tickers[:20]
	path := "/v2/stream/quotes?tickers=" + strings.Join(tickers, ",")
	at := f.stepTwoHours(t)
	tomorrow := f.ld.day + 1
	forged := sseMark{
		from: sseCursor{session: tomorrow, state: sseOpen, at: sessionStart(tomorrow) + 13*3600, seq: 1},
		to:   sseCursor{session: tomorrow, state: sseOpen, at: sessionStart(tomorrow) + 14*3600, seq: 9},
		part: -sseOpen,
	}
	c := openStream(t, f.srvs[0].URL+path, testKeyDelayed, string(appendID(nil, &forged)))
	defer c.close()
	c.waitEvents(t, 1)
	first := c.got()[0]
	if m, err := parseID(first.id); first.event != "session" || err != nil || m.to.session != f.ld.day {
		t.Fatalf("first event %+v (%v), want the state of the present session, %s", first, err, f.ld.day)
	}
	f.step(t, at.Add(10*time.Minute), false) // the next step reaches the stream
	for deadline := time.Now().Add(time.Minute); !slices.ContainsFunc(c.got(), func(e sseMsg) bool { return e.event == "bar" }); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no bar after the present: %d events", len(c.got()))
		}
	}
}

// A client whose key moved from the delayed plan to eod reconnects with
// the delayed stream's last id, a cut-off minute the eod plan never has:
// it starts at the eod plan's present at once, not after streamAheadWait.
func TestStreamResumeOtherPlan(t *testing.T) {
	f := newSSEFixture(t)
	tickers := f.ld.tickers[:5]
	path := "/v2/stream/quotes?tickers=" + strings.Join(tickers, ",")
	f.stepTwoHours(t)
	c := openStream(t, f.srvs[0].URL+path, testKeyDelayed, "")
	c.waitEvents(t, 1)
	c.close()
	last := c.got()[len(c.got())-1]
	if m, err := parseID(last.id); err != nil || m.to.at == 0 {
		t.Fatalf("delayed id %q (%v): want a cut-off minute", last.id, err)
	}
	start := time.Now()
	e := openStream(t, f.srvs[0].URL+path, testKeyEOD, last.id)
	defer e.close()
	e.waitEvents(t, 1)
	if d := time.Since(start); d > streamAheadWait/2 {
		t.Errorf("first event after %v: the eod stream waited for the delayed id", d)
	}
	first := e.got()[0]
	if m, err := parseID(first.id); first.event != "session" || err != nil || m.to.at != 0 {
		t.Errorf("first event %+v (%v), want the eod plan's session state", first, err)
	}
}

// liveStreamSetup is what the stream tests serve: a live demo's base
// snapshot in a Store, a clock at 14:00 of the demo's session day, and a
// Config stepping the streams every 2 ms (a test may change it before
// api).
type liveStreamSetup struct {
	ld    *liveDemo
	store *engine.Store
	clock *movingClock
	cfg   Config
}

func newLiveStreamSetup(t *testing.T) *liveStreamSetup {
	ls := &liveStreamSetup{ld: newLiveDemo(t), store: &engine.Store{}, clock: &movingClock{}, cfg: DefaultConfig()}
	ls.store.Publish(ls.ld.base)
	ls.clock.set(ls.ld.day.Time().Add(14 * time.Hour))
	ls.cfg.StreamStep = 2 * time.Millisecond
	return ls
}

// api returns an API over the setup with keys, its metrics on reg (nil:
// none).
func (ls *liveStreamSetup) api(keys *Keys, reg prometheus.Registerer) *API {
	return New(ls.cfg, ls.store, keys, ls.clock, reg, nil)
}

// subscribeLoop subscribes s to hub (every ticker, no index) and returns
// the stop channel of the hub's running loop, which a test passes to the
// steps it makes by hand.
func subscribeLoop(hub *sseHub, s *sseSub) chan struct{} {
	hub.subscribe(s, "")
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return hub.stop
}

// stepTwoHours applies the session's first two hours to f, a step every
// 5 minutes from the open, and returns the last step's time.
func (f *sseFixture) stepTwoHours(t *testing.T) time.Time {
	at := f.open.Add(2 * time.Hour)
	for t0 := f.open.Add(time.Minute); !t0.After(at); t0 = t0.Add(5 * time.Minute) {
		f.step(t, t0, false)
	}
	return at
}

// TestStreamDiffSink: a catch-up's events go to the sink as they are
// made, in batches of at most sinkEvents (what a stream holds at once,
// however long the catch-up), and in order they are the events made
// whole.
func TestStreamDiffSink(t *testing.T) {
	f := newSSEFixture(t)
	f.stepTwoHours(t)
	a := f.apis[0]
	sv := a.sseViewOf(PlanDelayed, *f.stores[0].View(), f.clock.Now(), sseCursor{session: engine.NoDate})
	from, err := parseID("0.0.0.0/0.0.0.0//s0")
	if err != nil {
		t.Fatal(err)
	}
	m := from
	whole := a.diff(nil, &m, sv, nil, nil, nil)
	if len(whole) <= 2*sinkEvents {
		t.Fatalf("%d events: the fixture's catch-up does not reach the sink", len(whole))
	}
	var got []sseEvent
	batches, most := 0, 0
	m = from
	rest := a.diff(nil, &m, sv, nil, nil, func(evs []sseEvent) bool {
		batches++
		most = max(most, len(evs))
		got = append(got, evs...)
		return true
	})
	got = append(got, rest...)
	if batches < len(whole)/sinkEvents || most > sinkEvents {
		t.Errorf("%d events in %d batches of at most %d, want batches of at most %d", len(whole), batches, most, sinkEvents)
	}
	if len(got) != len(whole) {
		t.Fatalf("%d events through the sink, %d made whole", len(got), len(whole))
	}
	for i := range got {
		if got[i].ticker != whole[i].ticker || got[i].kind != whole[i].kind || !bytes.Equal(got[i].msg, whole[i].msg) {
			t.Fatalf("event %d: %s %s %q, made whole %s %s %q", i, got[i].ticker, got[i].kind, got[i].msg, whole[i].ticker, whole[i].kind, whole[i].msg)
		}
	}
}

// TestStreamDiffSinkGone: once the sink wants no more (the client left),
// the catch-up stops at the ticker it is making: it is never handed
// another batch, and what it returns is the rest of that ticker.
func TestStreamDiffSinkGone(t *testing.T) {
	f := newSSEFixture(t)
	f.stepTwoHours(t)
	a := f.apis[0]
	sv := a.sseViewOf(PlanDelayed, *f.stores[0].View(), f.clock.Now(), sseCursor{session: engine.NoDate})
	m, err := parseID("0.0.0.0/0.0.0.0//s0")
	if err != nil {
		t.Fatal(err)
	}
	if whole := a.diff(nil, &m, sv, nil, nil, nil); len(whole) <= 3*sinkEvents {
		t.Fatalf("%d events: the fixture's catch-up is too short", len(whole))
	}
	m, _ = parseID("0.0.0.0/0.0.0.0//s0")
	batches := 0
	var last string
	rest := a.diff(nil, &m, sv, nil, nil, func(evs []sseEvent) bool {
		batches++
		last = evs[len(evs)-1].ticker
		return false
	})
	if batches != 1 {
		t.Errorf("the sink was handed %d batches after it said it wanted none", batches)
	}
	for _, e := range rest {
		if e.ticker != last {
			t.Fatalf("after the sink left at %s, events of %s were made (%d in all)", last, e.ticker, len(rest))
		}
	}
}
