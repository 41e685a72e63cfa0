package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// esAnswer is what a browser's EventSource makes of one answer,
// following the HTML standard's processing model (9.2 "Server-sent
// events"): fatal when it "fails the connection" (any answer that is
// not a 200 of text/event-stream: readyState CLOSED, no reconnection);
// otherwise the events it dispatched, and, once the body ends, the
// reconnection it makes after retry milliseconds with lastID as
// Last-Event-ID.
type esAnswer struct {
	fatal  bool
	events []sseMsg // event type, data, lastEventId
	retry  int      // the reconnection time after the answer, ms
	lastID string   // the event source's last event ID string
}

// eventSourceRead reads resp as an EventSource whose reconnection time
// was retry and last event ID string lastID, as the standard says:
// lines ended by CRLF, LF or CR; a comment (":") ignored; field and
// value split at the first colon, one space after it dropped; retry set
// only by ASCII digits; an event dispatched at an empty line, unless
// its data is empty; the last event ID buffer kept across events.
func eventSourceRead(resp *http.Response, retry int, lastID string) esAnswer {
	out := esAnswer{retry: retry, lastID: lastID}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		out.fatal = true
		return out
	}
	body, _ := io.ReadAll(resp.Body)
	body = bytes.TrimPrefix(body, []byte("\ufeff"))
	idBuf, event, data := lastID, "", ""
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Split(func(b []byte, atEOF bool) (int, []byte, error) {
		for i, c := range b {
			switch {
			case c == '\n':
				return i + 1, b[:i], nil
			case c == '\r' && i+1 < len(b):
				if b[i+1] == '\n' {
					return i + 2, b[:i], nil
				}
				return i + 1, b[:i], nil
			case c == '\r' && atEOF:
				return i + 1, b[:i], nil
			case c == '\r':
				return 0, nil, nil // a CRLF may be cut here: read more
			}
		}
		return 0, nil, nil // an incomplete line at the end is not a line
	})
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			out.lastID = idBuf
			if data != "" {
				typ := event
				if typ == "" {
					typ = "message"
				}
				out.events = append(out.events, sseMsg{id: out.lastID, event: typ, data: strings.TrimSuffix(data, "\n")})
			}
			event, data = "", ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data += value + "\n"
		case "id":
			if !strings.ContainsRune(value, 0) {
				idBuf = value
			}
		case "retry":
			if n, err := strconv.Atoi(value); err == nil && value != "" && strings.Trim(value, "0123456789") == "" {
				out.retry = n
			}
		}
	}
	return out
}

// TestEventSourceRead: the test's EventSource reads as the standard's
// examples say it does.
func TestEventSourceRead(t *testing.T) {
	answer := func(status int, ct, body string) *http.Response {
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {ct}}, Body: io.NopCloser(strings.NewReader(body))}
	}
	got := eventSourceRead(answer(200, "text/event-stream; charset=utf-8",
		"retry: 7\r\n\r\n: comment\nid: 1\nevent: bar\ndata: a\ndata:b\n\ndata: c\rretry: x\r\rid\ndata\n\nevent: quote\n\nevent: x\ndata: cut"), 3000, "0")
	want := []sseMsg{{"1", "bar", "a\nb"}, {"1", "message", "c"}, {"", "message", ""}}
	if got.fatal || got.retry != 7 || got.lastID != "" || len(got.events) != 3 || got.events[0] != want[0] || got.events[1] != want[1] || got.events[2] != want[2] {
		t.Errorf("got %+v", got)
	}
	for _, r := range []*http.Response{answer(429, "application/json", `{}`), answer(503, "text/event-stream", ""), answer(200, "application/json", "")} {
		if got := eventSourceRead(r, 3000, "0"); !got.fatal {
			t.Errorf("%d %s: not fatal", r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
}

func TestAcceptsEventStream(t *testing.T) {
	for _, c := range []struct {
		accept []string
		want   bool
	}{
		{nil, false},
		{[]string{"text/event-stream"}, true},
		{[]string{"TEXT/Event-Stream"}, true},
		{[]string{"application/json, text/event-stream;q=0.5"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"text/event-stream; q=0"}, false},
		{[]string{"text/event-stream;q=0.0, */*"}, false},
		{[]string{"*/*"}, false}, // curl, fetch
		{[]string{"text/*"}, false},
		{[]string{"text/event-streams"}, false},
		{[]string{"application/json"}, false},
	} {
		r := httptest.NewRequest("GET", "/v2/stream/quotes", nil)
		r.Header["Accept"] = c.accept
		if got := acceptsEventStream(r); got != c.want {
			t.Errorf("Accept %q: %v, want %v", c.accept, got, c.want)
		}
	}
}

// refusalCase is a server that refuses the stream of path for a while
// (status, Retry-After ra, a message containing msg).
type refusalCase struct {
	name   string
	status int
	ra     string
	msg    string
}

// TestStreamRefusedToEventSource: every temporary refusal that can reach
// the stream route (the key's rate limit, the first snapshot loading,
// its deferred kinds loading or failed, the key's or the server's count
// of streams, the shutdown) is, to a client that accepts
// text/event-stream, a 200 event stream with the refusal's Retry-After,
// the retry it asks in milliseconds and one event error with the plain
// answer's JSON, after which an EventSource reconnects (and keeps its
// Last-Event-ID); the connection is kept; the access log and the
// metrics count the refusal's status, not a 200. Without that Accept
// the plain refusal is unchanged.
func TestStreamRefusedToEventSource(t *testing.T) {
	small := mustSmall(t)
	ticker := streamTicker(small)
	stream := "/v2/stream/quotes?tickers=" + ticker
	for _, c := range []struct {
		refusalCase
		path string
		// setup makes the API (cfg: an access log; reg: its metrics) and
		// puts it in the refusing state; undo (may be nil) ends it.
		setup func(t *testing.T, cfg Config, reg prometheus.Registerer) (api *API, undo func())
	}{
		{refusalCase{"snapshot loading", 503, "5", "no snapshot"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				return New(cfg, &engine.Store{}, testKeys(t), nil, reg, nil), nil
			}},
		{refusalCase{"rate limit", 429, "1000", "this key may send"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				store := &engine.Store{}
				store.Publish(small)
				api := New(cfg, store, limitedKeys(t, nil), nil, reg, nil)
				for range 2 { // the burst, taken by refused streams
					r := httptest.NewRequest("GET", "/v2/stream/quotes", nil)
					r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
					w := httptest.NewRecorder()
					api.ServeHTTP(w, r)
					checkError(t, w, 400, "tickers or index is required")
				}
				return api, nil
			}},
		{refusalCase{"key's streams", 429, "10", "too many streams for this key: 1 are open"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				cfg.StreamConnsPerKey = 1
				api, srv := streamServer(t, cfg, reg, small)
				open := openStream(t, srv.URL+stream, testKeyDelayed, "")
				return api, open.close
			}},
		{refusalCase{"server's streams", 503, "10", "too many streams on this server"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				cfg.MaxStreams = 1
				api, srv := streamServer(t, cfg, reg, small)
				open := openStream(t, srv.URL+stream, testKeyEOD, "")
				return api, open.close
			}},
		{refusalCase{"shutting down", 503, "1", "the server is shutting down"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				api, _ := streamServer(t, cfg, reg, small)
				api.EndStreams()
				return api, nil
			}},
		// A query percent-encoded (URLSearchParams writes a comma so)
		// waits for the deferred kinds: it may name as_of.
		{refusalCase{"deferred kinds loading", 503, "5", "still loading"}, stream + "%2C" + ticker,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				ds, _ := smallDeferred(t)
				api := deferredAPI(t, cfg, reg, ds)
				old := deferredWaitMax
				deferredWaitMax = time.Millisecond
				return api, func() { deferredWaitMax = old }
			}},
		{refusalCase{"deferred kinds failed", 503, "5", "could not be loaded whole"}, stream,
			func(t *testing.T, cfg Config, reg prometheus.Registerer) (*API, func()) {
				ds, _ := smallDeferred(t)
				api := deferredAPI(t, cfg, reg, ds)
				ds.FinishDeferred(nil, errors.New("cash_actions: bad part"))
				return api, nil
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log lockedBuffer
			cfg := DefaultConfig()
			al := NewAccessLog(&log, false, 1)
			cfg.AccessLog = al
			reg := prometheus.NewRegistry()
			api, undo := c.setup(t, cfg, reg)
			if undo != nil {
				defer undo()
			}
			srv := httptest.NewServer(api)
			defer srv.Close()
			checkRefusedToEventSource(t, srv, c.path, c.refusalCase)
			al.Close()
			if got := requestsWith(t, reg, routeStreamQuotes, strconv.Itoa(c.status)); got != 2 {
				t.Errorf("requests{code=%d} %v, want 2 (the plain refusal and the events)", c.status, got)
			}
			if got := requestsWith(t, reg, routeStreamQuotes, "200"); got != 0 {
				t.Errorf("requests{code=200} %v, want 0: a refusal counted as a stream served", got)
			}
			// Logged with the refusal's status (the setup's requests are
			// 400s, its open stream is logged once it ends).
			if n := strings.Count(log.String(), " path=/v2/stream/quotes status="+strconv.Itoa(c.status)+" "); n != 2 ||
				strings.Contains(log.String(), " status=200 ") {
				t.Errorf("access log: %d lines of status %d, want 2 and no 200:\n%s", n, c.status, log.String())
			}
		})
	}
}

// checkRefusedToEventSource asks srv for path twice on one connection:
// plainly, then as an EventSource; see TestStreamRefusedToEventSource.
func checkRefusedToEventSource(t *testing.T, srv *httptest.Server, path string, c refusalCase) {
	t.Helper()
	client := srv.Client()
	ask := func(accept string) (*http.Response, []byte, bool) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		reused := false
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return resp, body, reused
	}
	plain, plainBody, _ := ask("*/*")
	if plain.StatusCode != c.status || plain.Header.Get("Content-Type") != "application/json" ||
		plain.Header.Get("Retry-After") != c.ra || !strings.Contains(string(plainBody), c.msg) {
		t.Fatalf("plain: %d %v %s; want %d, Retry-After %s, %q", plain.StatusCode, plain.Header, plainBody, c.status, c.ra, c.msg)
	}
	resp, body, reused := ask("text/event-stream")
	if !reused {
		t.Error("the events' answer came on a new connection: the plain refusal's was not kept")
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" ||
		resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("Retry-After") != c.ra {
		t.Fatalf("events: %d %v, want 200 text/event-stream, no-cache, Retry-After %s", resp.StatusCode, resp.Header, c.ra)
	}
	ra, _ := strconv.Atoi(c.ra)
	want := "retry: " + strconv.Itoa(ra*1000) + "\n\nevent: error\ndata: " + string(plainBody) + "\n\n"
	if string(body) != want {
		t.Errorf("events: body %q, want %q", body, want)
	}
	for _, r := range []*http.Response{plain, resp} {
		if !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Accept") {
			t.Errorf("%d: Vary %q, want Accept", r.StatusCode, r.Header.Values("Vary"))
		}
	}
	// As a browser reads it: not the end, the retry asked, the error
	// event, and the client's place kept.
	resp.Body = io.NopCloser(bytes.NewReader(body))
	es := eventSourceRead(resp, sseRetry, "20261119.2.0.0/20261119.2.0.0")
	if es.fatal || es.retry != ra*1000 || es.lastID != "20261119.2.0.0/20261119.2.0.0" ||
		len(es.events) != 1 || es.events[0].event != "error" || es.events[0].data != string(plainBody) {
		t.Errorf("as an EventSource reads the events: %+v", es)
	}
	plain.Body = io.NopCloser(bytes.NewReader(plainBody))
	if !eventSourceRead(plain, sseRetry, "").fatal {
		t.Error("the plain refusal does not stop an EventSource: the test's EventSource is wrong")
	}
}

// streamTicker returns a ticker of ds that can be streamed.
func streamTicker(ds *engine.Dataset) string {
	for _, as := range ds.Assets() {
		if as.StockType != engine.ClassMacro {
			return as.Ticker
		}
	}
	return ""
}

// streamServer serves ds (no live session) with cfg, behind a server.
func streamServer(t *testing.T, cfg Config, reg prometheus.Registerer, ds *engine.Dataset) (*API, *httptest.Server) {
	store := &engine.Store{}
	store.Publish(ds)
	api := New(cfg, store, testKeys(t), nil, reg, nil)
	srv := httptest.NewServer(api)
	t.Cleanup(func() { api.EndStreams(); srv.Close() })
	return api, srv
}

// deferredAPI serves ds, whose deferred kinds are not in, as serve
// serves its first snapshot (deferredServer), with cfg.
func deferredAPI(t *testing.T, cfg Config, reg prometheus.Registerer, ds *engine.Dataset) *API {
	store := &engine.Store{}
	api := New(cfg, store, testKeys(t), nil, reg, nil)
	api.PrepareLater(ds, "", time.Time{})
	store.Publish(ds)
	api.Published()
	return api
}

// TestStreamPermanentRefusalToEventSource: a refusal that retrying does
// not mend keeps its status and JSON, even to an EventSource, which
// stops on it.
func TestStreamPermanentRefusalToEventSource(t *testing.T) {
	ts := newTestServer(t, true)
	ticker := streamTicker(mustSmall(t))
	for _, c := range []struct {
		path, key, lastID string
		status            int
		msg               string
	}{
		{"/v2/stream/quotes?tickers=ZZZZ3", testKeyDelayed, "", 404, `ticker "ZZZZ3" not found`},
		{"/v2/stream/quotes?index=NOPE", testKeyDelayed, "", 404, `index "NOPE" not found`},
		{"/v2/stream/quotes", testKeyDelayed, "", 400, "tickers or index is required"},
		{"/v2/stream/quotes?tickers=ZZZZ3&nope=1", testKeyDelayed, "", 400, "unknown query parameter"},
		{"/v2/stream/quotes?tickers=" + ticker, testKeyDelayed, "yesterday", 400, "not an event id"},
		{"/v2/stream/quotes?tickers=ZZZZ3", "pg_nope", "", 401, "unknown API key"},
		{"/v2/stream/quotes?tickers=ZZZZ3", "", "", 401, "send the header Authorization"},
	} {
		r := httptest.NewRequest("GET", c.path, nil)
		if c.key != "" {
			r.Header.Set("Authorization", "Bearer "+c.key)
		}
		if c.lastID != "" {
			r.Header.Set("Last-Event-ID", c.lastID)
		}
		r.Header.Set("Accept", "text/event-stream")
		w := httptest.NewRecorder()
		ts.api.ServeHTTP(w, r)
		checkError(t, w, c.status, c.msg)
		if eventSourceRead(w.Result(), sseRetry, "").fatal != true {
			t.Errorf("%s: an EventSource goes on after a %d", c.path, w.Code)
		}
	}
}

// TestEventSourceWaitsOutStreamCap: a page's EventSource refused for its
// key's streams reconnects by itself once one of them closes, and gets
// its stream: the browser's loop (connect, read, wait the retry,
// connect again with Last-Event-ID) played against a server.
func TestEventSourceWaitsOutStreamCap(t *testing.T) {
	ls := newLiveStreamSetup(t)
	ls.cfg.StreamConnsPerKey = 1
	api := ls.api(testKeys(t), nil)
	srv := httptest.NewServer(api)
	defer func() { api.EndStreams(); srv.Close() }()
	path := srv.URL + "/v2/stream/quotes?tickers=" + ls.ld.tickers[0]
	// connect is one connection of the EventSource; the reading of a
	// stream that does not end stops at its first event.
	connect := func(retry int, lastID string) esAnswer {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Cache-Control", "no-cache")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Retry-After") == "" { // a stream: up to its first event
			var head bytes.Buffer
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				head.WriteString(sc.Text() + "\n")
				if strings.HasPrefix(sc.Text(), "data:") {
					break
				}
			}
			head.WriteString("\n")
			resp.Body = io.NopCloser(&head)
		}
		return eventSourceRead(resp, retry, lastID)
	}
	first := openStream(t, path, testKeyDelayed, "")
	first.waitEvents(t, 1)
	lastID := first.got()[0].id
	es := connect(sseRetry, lastID)
	if es.fatal || es.retry != 10000 || len(es.events) != 1 || es.events[0].event != "error" || es.lastID != lastID {
		t.Fatalf("refused for the key's streams: %+v", es)
	}
	first.close()
	// The browser waits es.retry (10 s); the test does not.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		api.streams.mu.Lock()
		n := api.streams.total
		api.streams.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first stream still counted")
		}
	}
	// Meanwhile the session opened: the client resumed from its place
	// is told.
	ls.store.StartLive(ls.ld.day)
	ls.store.ApplyLive(&engine.LiveBatch{Seq: 1, Session: ls.ld.day, Bars: []engine.LiveBar{}})
	es = connect(es.retry, es.lastID)
	if es.fatal || es.retry != sseRetry || len(es.events) != 1 || es.events[0].event != "session" ||
		!strings.Contains(es.events[0].data, `"state":"open"`) || es.lastID == lastID {
		t.Fatalf("reconnected: %+v", es)
	}
}
