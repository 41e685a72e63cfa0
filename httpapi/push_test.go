package httpapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// fakeSink records the batches it applies; it refuses a seq other than
// next with engine.ErrLiveSeq, and returns fail (once) instead of applying.
type fakeSink struct {
	mu      sync.Mutex
	next    uint64
	trades  [][]engine.LiveTrade
	bars    [][]engine.LiveBar
	digests map[uint64]string
	fail    error
	closed  error // Closed's answer
}

func newFakeSink() *fakeSink { return &fakeSink{next: 1, digests: map[uint64]string{}} }

func (s *fakeSink) Applied(seq uint64) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.digests[seq]
	return d, ok
}

func (s *fakeSink) Closed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *fakeSink) NextSeq() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next
}

func (s *fakeSink) apply(seq uint64, add func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail; err != nil {
		s.fail = nil
		return err
	}
	if seq != s.next {
		return fmt.Errorf("batch %d: %w", seq, engine.ErrLiveSeq)
	}
	add()
	s.next++
	return nil
}

func (s *fakeSink) PushTrades(seq uint64, t []engine.LiveTrade) error {
	return s.apply(seq, func() { s.trades = append(s.trades, t); s.digests[seq] = engine.LiveDigest(nil, t) })
}

func (s *fakeSink) PushBars(seq uint64, b []engine.LiveBar) error {
	return s.apply(seq, func() { s.bars = append(s.bars, b); s.digests[seq] = engine.LiveDigest(b, nil) })
}

// received returns how many batches s applied.
func (s *fakeSink) received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.trades) + len(s.bars)
}

// Sample lines of the small bundle's ticker.
const (
	sampleTradeLine = `{"ticker":"ENHZ3","time":"2024-03-28T10:05:12.345-03:00","price":12.34,"quantity":100,"id":"10"}`
	sampleBarLine   = `{"ticker":"ENHZ3","time":"2024-03-28T13:05:00Z","open":12.3,"high":12.5,"low":12.2,"close":12.4,"volume":12400.5,"quantity":1000,"trades":12}`
)

// pushServer is a published test server with the admin keys, cfg and a
// fresh fakeSink.
func pushServer(tb testing.TB, cfg Config) (*testServer, *fakeSink) {
	tb.Helper()
	ts := newAdminTestServer(tb, cfg)
	sink := newFakeSink()
	ts.api.SetLiveSink(sink)
	return ts, sink
}

// push sends body to path with key and Content-Type ctype ("": none).
func (ts *testServer) push(path, key, ctype, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	w := httptest.NewRecorder()
	ts.api.ServeHTTP(w, r)
	return w
}

const (
	pushTradesPath = "/v2/admin/live/trades"
	pushBarsPath   = "/v2/admin/live/bars"
	ndjson         = "application/x-ndjson"
)

// Only keys with the admin scope push: no key is a 401, a plan key a 403
// (whatever its plan), an admin key with or without a plan is served;
// without a sink an admin key gets 503 and a plan key still 403.
func TestPushAuth(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	for _, path := range []string{pushTradesPath, pushBarsPath} {
		body := sampleTradeLine
		if path == pushBarsPath {
			body = sampleBarLine
		}
		w := ts.push(path+"?seq=1", "", ndjson, body)
		checkError(t, w, 401, "unauthorized")
		validateAnswer(t, "POST", path+"?seq=1", body, w)
		checkError(t, ts.push(path+"?seq=1", "pg_00000000000000000000000000000bad", ndjson, body), 401, "unknown API key")
		for _, key := range []string{testKeyDelayed, testKeyEOD} {
			w := ts.push(path+"?seq=1", key, ndjson, body)
			checkError(t, w, 403, "needs a key with the admin scope")
			validateAnswer(t, "POST", path+"?seq=1", body, w)
		}
		if sink.received() != 0 {
			t.Fatalf("%s: a refused key reached the sink", path)
		}
	}
	for i, key := range []string{testKeyAdmin, testKeyAdminPlan} {
		seq := fmt.Sprint(i + 1)
		w := ts.push(pushTradesPath+"?seq="+seq, key, ndjson, sampleTradeLine)
		if w.Code != 200 || w.Body.String() != `{"seq":`+seq+`,"lines":1,"next_seq":`+fmt.Sprint(i+2)+`}` {
			t.Errorf("admin key %d: %d %s", i, w.Code, w.Body)
		}
		validateAnswer(t, "POST", pushTradesPath+"?seq="+seq, sampleTradeLine, w)
	}
	ts.api.SetLiveSink(nil)
	w := ts.push(pushBarsPath+"?seq=3", testKeyAdmin, ndjson, sampleBarLine)
	checkError(t, w, 503, "no push feed: start serve with --feed push")
	validateAnswer(t, "POST", pushBarsPath+"?seq=3", sampleBarLine, w)
	checkError(t, ts.push(pushBarsPath+"?seq=3", testKeyDelayed, ndjson, sampleBarLine), 403, "admin scope")
	if sink.received() != 2 {
		t.Errorf("the sink received %d batches, want 2", sink.received())
	}
}

// Trades in both forms give the sink the same LiveTrades: times in RFC
// 3339 (any offset) or unix milliseconds, action and session defaults,
// cancellations and the after-market.
func TestPushTrades(t *testing.T) {
	want := []engine.LiveTrade{
		{Ticker: "ENHZ3", Time: 1711631112345, Price: 12.34, Quantity: 100, ID: "10"},
		{Ticker: "ENHZ3", Time: 1711631112345, Price: 12.34, Quantity: 100, ID: "10", Cancel: true},
		{Ticker: "MSAZ3", Time: 1711656000000, Price: 7.5, Quantity: 3, ID: "b-2", AfterMarket: true},
	}
	nd := sampleTradeLine + "\n" +
		`{"ticker":"ENHZ3","time":1711631112345,"price":12.34,"quantity":100,"id":"10","action":"cancel","session":"regular"}` + "\r\n" +
		"\n   \n" + // blank lines are skipped
		`{"session":"after","action":"new","id":"b-2","quantity":3,"price":7.5e0,"time":"2024-03-28T20:00:00Z","ticker":"MSAZ3"}`
	csvBody := "\uFEFFid,ticker,time,price,quantity,action,session\r\n" +
		"10,ENHZ3,2024-03-28T10:05:12.345-03:00,12.34,100,,\r\n" +
		"10,ENHZ3,1711631112345,12.34,100,cancel,regular\r\n" +
		`"b-2",MSAZ3,2024-03-28T17:00:00-03:00,7.50,3,new,after` + "\n"
	for i, c := range []struct{ ctype, body string }{
		{ndjson, nd}, {"", nd}, {"application/x-ndjson; charset=utf-8", nd}, {"text/csv", csvBody}, {"text/csv; charset=UTF-8", csvBody},
	} {
		ts, sink := pushServer(t, DefaultConfig())
		w := ts.push(pushTradesPath+"?seq=1", testKeyAdmin, c.ctype, c.body)
		if w.Code != 200 || w.Body.String() != `{"seq":1,"lines":3,"next_seq":2}` || w.Header().Get(hdrNextSeq) != "2" {
			t.Errorf("%d (%s): %d %s %v", i, c.ctype, w.Code, w.Body, w.Header())
			continue
		}
		if len(sink.trades) != 1 || !reflect.DeepEqual(sink.trades[0], want) {
			t.Errorf("%d (%s): the sink received\n%+v\nwant\n%+v", i, c.ctype, sink.trades, want)
		}
	}
}

// Bars in both forms: the minute in unix seconds, removed minutes with
// only ticker and time.
func TestPushBars(t *testing.T) {
	want := []engine.LiveBar{
		{Ticker: "ENHZ3", Time: 1711631100, Open: 12.3, High: 12.5, Low: 12.2, Close: 12.4, Volume: 12400.5, Quantity: 1000, Trades: 12},
		{Ticker: "ENHZ3", Time: 1711631160, Removed: true},
		{Ticker: "GSUL11", Time: 1711631160, Open: 100, High: 100, Low: 100, Close: 100, Volume: 0, Quantity: 0, Trades: 0, Removed: false},
	}
	nd := sampleBarLine + "\n" +
		`{"ticker":"ENHZ3","time":1711631160000,"removed":true,"open":null}` + "\n" +
		`{"ticker":"GSUL11","time":"2024-03-28T10:06:00-03:00","open":100,"high":100,"low":100,"close":100,"volume":0,"quantity":0,"trades":0,"removed":false}` + "\n"
	csvBody := "ticker,time,open,high,low,close,volume,quantity,trades,removed\n" +
		"ENHZ3,2024-03-28T13:05:00Z,12.3,12.5,12.2,12.4,12400.5,1000,12,\n" +
		"ENHZ3,1711631160000,,,,,,,,true\n" +
		"GSUL11,2024-03-28T10:06:00-03:00,100,100,100,100,0,0,0,false\n"
	for _, c := range []struct{ ctype, body string }{{ndjson, nd}, {"text/csv", csvBody}} {
		ts, sink := pushServer(t, DefaultConfig())
		w := ts.push(pushBarsPath+"?seq=1", testKeyAdmin, c.ctype, c.body)
		if w.Code != 200 || w.Body.String() != `{"seq":1,"lines":3,"next_seq":2}` {
			t.Errorf("%s: %d %s", c.ctype, w.Code, w.Body)
			continue
		}
		if len(sink.bars) != 1 || !reflect.DeepEqual(sink.bars[0], want) {
			t.Errorf("%s: the sink received\n%+v\nwant\n%+v", c.ctype, sink.bars, want)
		}
	}
}

// A gap or an older seq is a 409 naming the expected one (message and
// X-Live-Next-Seq), and nothing reaches the sink; a retry of the batch
// just applied is such a 409 (not an answer sent again from the answer
// cache), and the next batch goes on.
func TestPushSequence(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	conflict := func(seq, want string, next string) {
		t.Helper()
		before := sink.received()
		w := ts.push(pushTradesPath+"?seq="+seq, testKeyAdmin, ndjson, sampleTradeLine)
		checkError(t, w, 409, want)
		if got := w.Header().Get(hdrNextSeq); got != next {
			t.Errorf("seq=%s: X-Live-Next-Seq %q, want %q", seq, got, next)
		}
		validateAnswer(t, "POST", pushTradesPath+"?seq="+seq, sampleTradeLine, w)
		if sink.received() != before {
			t.Errorf("seq=%s: a refused batch reached the sink", seq)
		}
	}
	conflict("2", "batch seq=2 is out of sequence: expected seq=1; batch 1 was never applied", "1")
	conflict("5", "expected seq=1; batches 1 to 4 were never applied", "1")
	if w := ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, sampleTradeLine); w.Code != 200 {
		t.Fatalf("seq=1: %d %s", w.Code, w.Body)
	}
	// The answer was lost: the client sends the same batch again.
	digest := engine.LiveDigest(nil, sink.trades[0])
	conflict("1", "batch seq=1 is out of sequence: expected seq=2; batch 1 was applied already with this body (digest "+digest+"): a retry of it is done", "2")
	conflict("1", "expected seq=2", "2")
	// A second pusher's different batch under the same number: a
	// conflict naming both digests, not "applied already".
	other := strings.Replace(sampleTradeLine, `"10"`, `"99"`, 1)
	w := ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, other)
	checkError(t, w, 409, "batch seq=1 conflicts: batch 1 was applied with another body (digest "+digest+"); this body (digest ")
	if !strings.Contains(w.Body.String(), "was not applied: send it as seq=2") || w.Header().Get(hdrDigest) != digest || w.Header().Get(hdrNextSeq) != "2" {
		t.Errorf("a different body under seq 1: %s, digest header %q", w.Body, w.Header().Get(hdrDigest))
	}
	validateAnswer(t, "POST", pushTradesPath+"?seq=1", other, w)
	if w := ts.push(pushTradesPath+"?seq=2", testKeyAdmin, ndjson, sampleTradeLine); w.Code != 200 || w.Header().Get(hdrNextSeq) != "3" {
		t.Fatalf("seq=2: %d %s", w.Code, w.Body)
	}
	if sink.received() != 2 {
		t.Errorf("the sink received %d batches, want 2", sink.received())
	}
	// Once the session is over, a batch under a number applied is still
	// a retry done when its body is the one applied; another body is
	// refused as closed, not invited under the next number.
	sink.mu.Lock()
	sink.closed = fmt.Errorf("%w: the live session 2026-11-27 is over (complete at batch 2)", engine.ErrLiveClosed)
	sink.mu.Unlock()
	conflict("1", "batch 1 was applied already with this body", "3")
	w = ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, other)
	checkError(t, w, 409, "batch seq=1 refused: live session closed: the live session 2026-11-27 is over (complete at batch 2)")
	sink.mu.Lock()
	sink.closed = nil
	sink.mu.Unlock()
	// seq is required, a positive integer.
	for _, q := range []string{"", "?seq=0", "?seq=-1", "?seq=x", "?seq=1&seq=2", "?sequence=3"} {
		w := ts.push(pushTradesPath+q, testKeyAdmin, ndjson, sampleTradeLine)
		checkError(t, w, 400, "seq")
	}
}

// The sink's refusals: a batch it finds invalid (engine.ErrLiveBatch) is a
// 400 with its reason, one out of sequence (engine.ErrLiveSeq, another push won
// the race) a 409 naming its next seq, one the sink cannot take for now
// (engine.ErrLiveUnavailable) a 503, anything else a logged 500.
func TestPushSinkErrors(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	sink.fail = fmt.Errorf("sink: %w: batch 1 is for session 2024-03-27, the live session is 2024-03-28", engine.ErrLiveBatch)
	w := ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
	checkError(t, w, 400, "batch seq=1 refused: sink: live batch refused: batch 1 is for session 2024-03-27")
	validateAnswer(t, "POST", pushBarsPath+"?seq=1", sampleBarLine, w)

	sink.fail = engine.ErrLiveSeq
	w = ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
	checkError(t, w, 409, "expected seq=1")

	sink.fail = fmt.Errorf("live stream unreachable: %w", engine.ErrLiveUnavailable)
	w = ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
	checkError(t, w, 503, "batch seq=1 not taken (live stream unreachable: live feed unavailable for now): send it again")
	validateAnswer(t, "POST", pushBarsPath+"?seq=1", sampleBarLine, w)

	var logs strings.Builder
	ts.api.log = slog.New(slog.NewTextHandler(&logs, nil))
	sink.fail = errors.New("session log: no space left on device")
	w = ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
	checkError(t, w, 500, "internal server error")
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the sink's failure is not logged: %q", logs.String())
	}
	if sink.received() != 0 {
		t.Error("the sink applied a refused batch")
	}
	if w := ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine); w.Code != 200 {
		t.Errorf("after the failures: %d %s", w.Code, w.Body)
	}
}

// Every bad line is a 400 naming its line and field, and refuses the batch
// whole: nothing reaches the sink.
func TestPushBadLines(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	tr := sampleTradeLine + "\n"
	bar := sampleBarLine + "\n"
	with := func(line, old, new string) string {
		if !strings.Contains(line, old) {
			t.Fatalf("%q not in %s", old, line)
		}
		return strings.Replace(line, old, new, 1)
	}
	for _, c := range []struct{ path, ctype, body, want string }{
		{pushTradesPath, ndjson, tr + with(tr, `"price":12.34`, `"price":"12.34"`), `line 2: field "price": want a number, got a string`},
		{pushTradesPath, ndjson, tr + tr + with(tr, `"price":12.34`, `"price":0`), `line 3: field "price": 0: want a price above 0`},
		{pushTradesPath, ndjson, with(tr, `"price":12.34`, `"price":-1`), `line 1: field "price": -1: want a price above 0`},
		{pushTradesPath, ndjson, with(tr, `"price":12.34,`, ``), `line 1: field "price": required`},
		{pushTradesPath, ndjson, with(tr, `"quantity":100`, `"quantity":1.5`), `line 1: field "quantity": "1.5": want a whole number from 1 to`},
		{pushTradesPath, ndjson, with(tr, `"quantity":100`, `"quantity":0`), `line 1: field "quantity": "0": want a whole number from 1 to`},
		{pushTradesPath, ndjson, with(tr, `"ENHZ3"`, `"enhz3"`), `line 1: field "ticker": "enhz3": want a ticker as B3 writes it`},
		{pushTradesPath, ndjson, with(tr, `"time":"2024-03-28T10:05:12.345-03:00"`, `"time":1711631112`), `line 1: field "time": 1711631112: want a time from 2000 to 2100 (unix milliseconds, not seconds)`},
		{pushTradesPath, ndjson, with(tr, `-03:00"`, `"`), `line 1: field "time": "2024-03-28T10:05:12.345": want RFC 3339 with Z or an offset`},
		{pushTradesPath, ndjson, with(tr, `"time":"2024-03-28T10:05:12.345-03:00"`, `"time":true`), `line 1: field "time": want an RFC 3339 time or unix milliseconds, got a boolean`},
		{pushTradesPath, ndjson, with(tr, `"time":"2024-03-28T10:05:12.345-03:00"`, `"time":1.7e12`), `line 1: field "time": 1.7e12: want whole unix milliseconds`},
		{pushTradesPath, ndjson, with(tr, `"id":"10"`, `"id":10`), `line 1: field "id": want a string, got a number`},
		{pushTradesPath, ndjson, with(tr, `"id":"10"`, `"id":"a b"`), `line 1: field "id": "a b": want 1 to 64 letters, digits or . _ : -`},
		{pushTradesPath, ndjson, with(tr, `}`, `,"action":"delete"}`), `line 1: field "action": "delete": want new or cancel`},
		{pushTradesPath, ndjson, with(tr, `}`, `,"session":"AFTER"}`), `line 1: field "session": "AFTER": want regular or after`},
		{pushTradesPath, ndjson, with(tr, `}`, `,"side":"buy"}`), `line 1: unknown field "side" (accepted: ticker, time, price, quantity, id, action, session)`},
		{pushTradesPath, ndjson, with(tr, `}`, `,"price":1}`), `line 1: field "price" is given more than once`},
		{pushTradesPath, ndjson, with(tr, `"quantity":100`, `"quantity":[100]`), `line 1: field "quantity": want a number, got an array`},
		{pushTradesPath, ndjson, tr + `{"ticker":"ENHZ3",` + "\n", `line 2: want a field name`},
		{pushTradesPath, ndjson, tr + "[" + tr, `line 2: want a JSON object`},
		{pushTradesPath, ndjson, tr + with(tr, `}`, `} {}`), `line 2: unexpected data after the JSON object`},
		{pushTradesPath, ndjson, "\n\n", `no line`},
		{pushTradesPath, ndjson, "", `no line`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id\nENHZ3,1711631112345,12,34,100,10\n", `line 2: malformed CSV: wrong number of fields`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id,side\n", `line 1: unknown column "side" (accepted: ticker, time, price, quantity, id, action, session)`},
		{pushTradesPath, "text/csv", "ticker,time,price,price,id\n", `line 1: column "price" is given more than once`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id\nENHZ3,1711631112345,\"12,34\",100,10\n", `line 2: field "price": "12,34": want a number such as 12.34`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity\nENHZ3,1711631112345,12.34,100\n", `line 2: field "id": required`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id\n\nENHZ3,1711631112345,12.34,100,10\nENHZ3,x,12.34,100,11\n", `line 4: field "time": "x": want RFC 3339`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id\nENHZ3,1711631112345,12.34,100,\"10\n", `line 2: malformed CSV`},
		{pushTradesPath, "text/csv", "ticker,time,price,quantity,id\n", `no line`},
		{pushTradesPath, "text/csv", "", `empty; want a CSV header row naming the fields (ticker, time, price, quantity, id, action, session)`},
		{pushBarsPath, ndjson, with(bar, `13:05:00Z`, `13:05:30Z`), `line 1: field "time": 2024-03-28T13:05:30Z: want the start of a minute`},
		{pushBarsPath, ndjson, with(bar, `"high":12.5`, `"high":12.35`), `line 1: field "high": 12.35 is below open, low or close`},
		{pushBarsPath, ndjson, with(bar, `"low":12.2`, `"low":12.35`), `line 1: field "low": 12.35 is above open or close`},
		{pushBarsPath, ndjson, with(bar, `"volume":12400.5`, `"volume":-1`), `line 1: field "volume": -1: want 0 or more BRL`},
		{pushBarsPath, ndjson, with(bar, `,"trades":12`, ``), `line 1: field "trades": required`},
		{pushBarsPath, ndjson, with(bar, `}`, `,"removed":"yes"}`), `line 1: field "removed": want true or false, got a string`},
		{pushBarsPath, ndjson, `{"ticker":"ENHZ3","removed":true}`, `line 1: field "time": required`},
		{pushBarsPath, "text/csv", "ticker,time,removed\nENHZ3,1711631160000,yes\n", `line 2: field "removed": "yes": want true or false`},
		{pushBarsPath, "text/csv", "ticker,time,open\nENHZ3,1711631160000,1\n", `line 2: field "high": required`},
	} {
		w := ts.push(c.path+"?seq=1", testKeyAdmin, c.ctype, c.body)
		checkError(t, w, 400, c.want)
		if w.Code == 400 {
			validateAnswer(t, "POST", c.path+"?seq=1", c.body, w)
		}
	}
	if sink.received() != 0 || sink.NextSeq() != 1 {
		t.Errorf("refused batches reached the sink: %d", sink.received())
	}
}

// The body is NDJSON (the default) or CSV by Content-Type: anything else
// is a 415.
func TestPushContentType(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	for _, ct := range []string{"application/json", "text/plain", "application/x-www-form-urlencoded", "text/csv; charset=latin1", "text/csv; =;"} {
		w := ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ct, sampleTradeLine)
		checkError(t, w, 415, "want")
		validateAnswer(t, "POST", pushTradesPath+"?seq=1", sampleTradeLine, w)
	}
	if sink.received() != 0 {
		t.Error("a refused batch reached the sink")
	}
}

// Push bodies have their own cap (Config.MaxPushBytes), over the API's:
// a body over it is a 413, by Content-Length or as it is read, and the
// other routes keep theirs.
func TestPushTooLarge(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxBodyBytes, cfg.MaxPushBytes = 1<<10, 64<<10
	ts, sink := pushServer(t, cfg)
	big := strings.Repeat(sampleTradeLine+"\n", 40) // 4 KiB: over the API's cap, under the push cap
	if w := ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, big); w.Code != 200 {
		t.Fatalf("a 4 KiB push: %d %s", w.Code, w.Body)
	}
	huge := strings.Repeat(sampleTradeLine+"\n", 1000) // 100 KiB
	w := ts.push(pushTradesPath+"?seq=2", testKeyAdmin, ndjson, huge)
	checkError(t, w, 413, "request body larger than 65536 bytes")
	validateAnswer(t, "POST", pushTradesPath+"?seq=2", huge, w)
	// Chunked: no Content-Length, refused as it is read.
	r := httptest.NewRequest("POST", pushTradesPath+"?seq=2", io.MultiReader(strings.NewReader(huge)))
	r.ContentLength = -1
	r.Header.Set("Authorization", "Bearer "+testKeyAdmin)
	rec := httptest.NewRecorder()
	ts.api.ServeHTTP(rec, r)
	checkError(t, rec, 413, "request body larger than 65536 bytes")
	if sink.received() != 1 {
		t.Errorf("the sink received %d batches, want 1", sink.received())
	}
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{"limit":5`+strings.Repeat(" ", 2<<10)+`}`), 413, "larger than 1024 bytes")
}

// Pushes are counted by kind and result (batches, and the lines of those
// read whole), and logged like any request: route, status, key name,
// never the body.
func TestPushMetricsAndLog(t *testing.T) {
	var buf lockedBuffer
	al := NewAccessLog(&buf, false, 1)
	cfg := DefaultConfig()
	cfg.AccessLog = al
	ts, sink := pushServer(t, cfg)
	two := sampleTradeLine + "\n" + strings.Replace(sampleTradeLine, `"10"`, `"11"`, 1)
	ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, two)                     // applied, 2 lines
	ts.push(pushTradesPath+"?seq=1", testKeyAdmin, ndjson, two)                     // sequence (retry)
	ts.push(pushTradesPath+"?seq=2", testKeyAdmin, ndjson, `{"ticker":"x"}`)        // invalid
	sink.fail = fmt.Errorf("%w: late", engine.ErrLiveBatch)                         //
	ts.push(pushBarsPath+"?seq=2", testKeyAdmin, ndjson, sampleBarLine)             // invalid, 1 line
	ts.push(pushBarsPath+"?seq=2", testKeyAdmin, ndjson, sampleBarLine)             // applied, 1 line
	ts.push(pushBarsPath+"?seq=3", testKeyAdmin, "application/json", sampleBarLine) // invalid (415)
	al.Close()
	for _, c := range []struct {
		name, kind, result string
		want               float64
	}{
		{"pregao_live_push_batches_total", "trades", "applied", 1},
		{"pregao_live_push_lines_total", "trades", "applied", 2},
		{"pregao_live_push_batches_total", "trades", "sequence", 1},
		{"pregao_live_push_lines_total", "trades", "sequence", 2},
		{"pregao_live_push_batches_total", "trades", "invalid", 1},
		{"pregao_live_push_batches_total", "bars", "invalid", 2},
		{"pregao_live_push_lines_total", "bars", "invalid", 1},
		{"pregao_live_push_batches_total", "bars", "applied", 1},
		{"pregao_live_push_lines_total", "bars", "applied", 1},
		{"pregao_live_push_batches_total", "bars", "failed", 0},
	} {
		if got := counterOf(t, ts.reg, c.name, c.kind, c.result); got != c.want {
			t.Errorf("%s{kind=%q,result=%q} = %v, want %v", c.name, c.kind, c.result, got, c.want)
		}
	}
	log := buf.String()
	if n := strings.Count(log, "route="+routeLiveTrades); n != 3 {
		t.Errorf("%d access-log lines of %s, want 3:\n%s", n, routeLiveTrades, log)
	}
	if !strings.Contains(log, "key=feed") || !strings.Contains(log, "status=409") {
		t.Errorf("access log without the key's name or a status:\n%s", log)
	}
	if strings.Contains(log, "ENHZ3") || strings.Contains(log, "12.34") {
		t.Errorf("the access log holds a body:\n%s", log)
	}
}

// counterOf returns the counter name{kind, result}.
func counterOf(tb testing.TB, reg *prometheus.Registry, name, kind, result string) float64 {
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
			l := map[string]string{}
			for _, p := range m.Label {
				l[p.GetName()] = p.GetValue()
			}
			if l["kind"] == kind && l["result"] == result {
				return m.GetCounter().GetValue()
			}
		}
	}
	tb.Fatalf("no series %s{kind=%q,result=%q}", name, kind, result)
	return 0
}

// Every field a line declares is read, in both forms (null, or an empty
// cell, is absent), and an undeclared one is refused naming the declared
// ones: the parsers read exactly what the declarations (and so the
// OpenAPI document) say.
func TestPushLineDeclarations(t *testing.T) {
	ts, _ := pushServer(t, DefaultConfig())
	for _, c := range []struct {
		path, line string
		decl       *Param
	}{{pushTradesPath, sampleTradeLine, &liveTradeLine}, {pushBarsPath, sampleBarLine, &liveBarLine}} {
		for i := range c.decl.Fields {
			f := &c.decl.Fields[i]
			line := strings.TrimSuffix(c.line, "}") + "," + fmt.Sprintf("%q:null", f.Name) + "}"
			if strings.Contains(c.line, fmt.Sprintf("%q:", f.Name)) {
				line = c.line // a null given twice would be refused: check the field is read instead
			}
			w := ts.push(c.path+"?seq="+fmt.Sprint(ts.api.sinkNext()), testKeyAdmin, ndjson, line)
			if w.Code != 200 {
				t.Errorf("%s with %s: %d %s", c.path, f.Name, w.Code, w.Body)
			}
		}
		var header []string
		for i := range c.decl.Fields {
			header = append(header, c.decl.Fields[i].Name)
		}
		seq := c.path + "?seq=" + fmt.Sprint(ts.api.sinkNext())
		w := ts.push(seq, testKeyAdmin, "text/csv", strings.Join(header, ",")+"\n")
		checkError(t, w, 400, "no line") // every column known
		w = ts.push(seq, testKeyAdmin, ndjson, `{"undeclared":1}`)
		checkError(t, w, 400, fmt.Sprintf(`unknown field "undeclared" (accepted: %s)`, fieldNames(c.decl)))
	}
}

// sinkNext is the sink's NextSeq (test helper).
func (a *API) sinkNext() uint64 { return (*a.sink.Load()).NextSeq() }

// The push routes are answered by their handler, never by the answer
// cache or with validators: two identical pushes are two pushes.
func TestPushNotCached(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	for i, want := range []int{200, 409} {
		w := ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
		if w.Code != want || w.Header().Get("ETag") != "" || w.Header().Get("Cache-Control") != "" {
			t.Errorf("push %d: %d %v, want %d without validators", i, w.Code, w.Header(), want)
		}
	}
	if sink.received() != 1 || sink.NextSeq() != 2 {
		t.Errorf("the sink received %d batches", sink.received())
	}
}

// The bodies docs/api.md shows for the push feed are accepted: each code
// block of its section that holds lines (NDJSON or CSV) is pushed to the
// endpoint of its kind.
func TestPushDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## POST /admin/live/trades and POST /admin/live/bars")
	if !ok {
		t.Fatal("docs/api.md has no section on the push feed")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	ts, sink := pushServer(t, DefaultConfig())
	blocks := strings.Split(sec, "```")
	n := 0
	for i := 1; i < len(blocks); i += 2 {
		b := strings.TrimPrefix(blocks[i], "\n")
		ctype := ndjson
		switch {
		case strings.HasPrefix(b, "ticker,"):
			ctype = "text/csv"
		case !strings.HasPrefix(b, `{"ticker"`):
			continue
		}
		path := pushTradesPath
		if !strings.Contains(strings.SplitN(b, "\n", 2)[0], "price") {
			path = pushBarsPath
		}
		w := ts.push(path+"?seq="+fmt.Sprint(sink.NextSeq()), testKeyAdmin, ctype, b)
		if w.Code != 200 {
			t.Errorf("docs/api.md example %q: %d %s", b, w.Code, w.Body)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d examples of lines found in docs/api.md, want 3", n)
	}
}

// Concurrent pushes of one seq: the sink applies one, every other is a 409
// naming the next seq (run with -race).
func TestPushConcurrentSameSeq(t *testing.T) {
	ts, sink := pushServer(t, DefaultConfig())
	const n = 8
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := ts.push(pushBarsPath+"?seq=1", testKeyAdmin, ndjson, sampleBarLine)
			if w.Code == 409 && w.Header().Get(hdrNextSeq) != "2" {
				t.Errorf("409 with X-Live-Next-Seq %q", w.Header().Get(hdrNextSeq))
			}
			codes <- w.Code
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[200] != 1 || count[409] != n-1 || sink.received() != 1 {
		t.Errorf("answers %v, %d batches applied; want one 200 and %d 409s", count, sink.received(), n-1)
	}
}
