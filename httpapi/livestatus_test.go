package httpapi

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestReadyzLive: with a live status set, /readyz carries a "live" object
// (session, seq, watermark, lag, complete, gaps) that validates against
// the Readiness schema; without one, or while it reports no session,
// none.
func TestReadyzLive(t *testing.T) {
	ts := newTestServer(t, true)
	plain := ts.do("GET", "/readyz", "", "").Body.String()
	st := engine.LiveStatus{Feed: "replay", Session: engine.MakeDate(2026, 11, 19), Seq: 42,
		Watermark: time.Date(2026, 11, 19, 14, 31, 0, 0, time.UTC), Lag: 90500 * time.Millisecond}
	running := true
	ts.api.SetLiveStatus(func() (engine.LiveStatus, bool) { return st, running })
	w := ts.do("GET", "/readyz", "", "")
	var got struct {
		Status string         `json:"status"`
		Live   map[string]any `json:"live"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != 200 {
		t.Fatalf("%d %s: %v", w.Code, w.Body, err)
	}
	want := map[string]any{"feed": "replay", "session": "2026-11-19", "seq": 42.0, "watermark": "2026-11-19T14:31:00Z", "lag_seconds": 90.5, "complete": false,
		"gaps": 0.0, "session_gaps": 0.0, "last_gap": nil, "degraded": nil}
	if len(got.Live) != len(want) {
		t.Errorf("live %v, want %v", got.Live, want)
	}
	for k, v := range want {
		if got.Live[k] != v {
			t.Errorf("live.%s = %v, want %v", k, got.Live[k], v)
		}
	}
	validateAnswer(t, "GET", "/readyz", "", w)
	// Before the first bar the watermark is null; a complete session has
	// no lag.
	st = engine.LiveStatus{Feed: "push", Session: engine.MakeDate(2026, 11, 19), Complete: true, Lag: -time.Second}
	w = ts.do("GET", "/readyz", "", "")
	if s := w.Body.String(); !strings.Contains(s, `"watermark":null,"lag_seconds":0,"complete":true,"gaps":0,"session_gaps":0,"last_gap":null,"degraded":null}`) {
		t.Errorf("readyz %s", s)
	}
	validateAnswer(t, "GET", "/readyz", "", w)
	// Damaged records of the session log: a gap of kind log.
	st = engine.LiveStatus{Feed: "push", Session: engine.MakeDate(2026, 11, 19), Seq: 40, Gaps: 2, SessionGaps: 2,
		LastGap: &engine.LiveGap{Kind: "log", Session: engine.MakeDate(2026, 11, 19), First: 21, Last: 37}}
	w = ts.do("GET", "/readyz", "", "")
	if s := w.Body.String(); !strings.Contains(s, `"gaps":2,"session_gaps":2,"last_gap":{"kind":"log","session":"2026-11-19","first":21,"last":37,"stream_sequence":0},"degraded":null}`) {
		t.Errorf("readyz %s", s)
	}
	validateAnswer(t, "GET", "/readyz", "", w)
	// A session log that cannot be written: degraded, still ready.
	st = engine.LiveStatus{Feed: "push", Session: engine.MakeDate(2026, 11, 19), Seq: 36, Degraded: "the session log cannot be written"}
	w = ts.do("GET", "/readyz", "", "")
	if s := w.Body.String(); w.Code != 200 || !strings.Contains(s, `"degraded":"the session log cannot be written"}`) {
		t.Errorf("readyz %d %s", w.Code, s)
	}
	validateAnswer(t, "GET", "/readyz", "", w)
	// A session read back from its log: not ready.
	st = engine.LiveStatus{Feed: "push", Session: engine.MakeDate(2026, 11, 19), Restoring: true}
	checkError(t, ts.do("GET", "/readyz", "", ""), 503, "not ready: restoring the live session 2026-11-19 from its log")
	running = false
	if s := ts.do("GET", "/readyz", "", "").Body.String(); s != plain {
		t.Errorf("no session running: %s, want %s", s, plain)
	}
	ts.api.SetLiveStatus(nil)
	if s := ts.do("GET", "/readyz", "", "").Body.String(); s != plain {
		t.Errorf("no live status: %s, want %s", s, plain)
	}
}

// TestReadyzStream: a replica applying the live stream answers /readyz
// 503 until it has caught the stream up, then 200 with a "stream"
// object that validates against the Readiness schema; once caught up it
// stays ready while the stream is unreachable, reporting the staleness.
func TestReadyzStream(t *testing.T) {
	ts := newTestServer(t, true)
	ss := engine.StreamStatus{Sequence: 40, Pending: 120, Lag: 3 * time.Second, Connected: true}
	st := engine.LiveStatus{Feed: "stream", Session: engine.MakeDate(2026, 11, 19), Seq: 17, Stream: &ss}
	ts.api.SetLiveStatus(func() (engine.LiveStatus, bool) { s := st; x := ss; s.Stream = &x; return s, true })
	for _, tc := range []struct {
		name string
		ss   engine.StreamStatus
		code int
		body string
	}{
		{"catching up", engine.StreamStatus{Sequence: 40, Pending: 120, Lag: 3 * time.Second, Connected: true}, 503, "120 messages behind, at sequence 40"},
		{"not connected yet", engine.StreamStatus{}, 503, "not connected"},
		{"caught up", engine.StreamStatus{Sequence: 160, Connected: true, CaughtUp: true, Redeliveries: 2, Start: 37},
			200, `"stream":{"sequence":160,"pending":0,"lag_seconds":0,"redeliveries":2,"connected":true,"stale_seconds":0,"caught_up":true,"start":37,"snapshot_position":null,"gaps":0,"session_gaps":0,"last_gap":null}}`},
		{"bus lost after catching up", engine.StreamStatus{Sequence: 160, Stale: 7500 * time.Millisecond, CaughtUp: true},
			200, `"connected":false,"stale_seconds":7.5,"caught_up":true,`},
		{"from the snapshot's position", engine.StreamStatus{Sequence: 160, Connected: true, CaughtUp: true, Start: 41,
			Position: engine.StreamPosition{Next: 41, Name: "PREGAO_LIVE", Session: engine.MakeDate(2026, 11, 18), Batch: 390}},
			200, `"caught_up":true,"start":41,"snapshot_position":{"next":41,"name":"PREGAO_LIVE","session":"2026-11-18","batch":390},"gaps":0,`},
		{"a batch gap", engine.StreamStatus{Sequence: 160, Connected: true, CaughtUp: true, Gaps: 3, SessionGaps: 1,
			LastGap: &engine.LiveGap{Kind: "batch", Session: engine.MakeDate(2026, 11, 19), First: 12, Last: 14, StreamSeq: 150}},
			200, `"gaps":3,"session_gaps":1,"last_gap":{"kind":"batch","session":"2026-11-19","first":12,"last":14,"stream_sequence":150}}}`},
		{"a stream gap before a message that is not a batch", engine.StreamStatus{Sequence: 160, Connected: true, CaughtUp: true, Gaps: 1,
			LastGap: &engine.LiveGap{Kind: "stream", Session: engine.NoDate, First: 100, Last: 159, StreamSeq: 160}},
			200, `"gaps":1,"session_gaps":0,"last_gap":{"kind":"stream","session":null,"first":100,"last":159,"stream_sequence":160}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss = tc.ss
			w := ts.do("GET", "/readyz", "", "")
			if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
				t.Fatalf("%d %s, want %d with %s", w.Code, w.Body, tc.code, tc.body)
			}
			if w.Code == 200 {
				validateAnswer(t, "GET", "/readyz", "", w)
			}
		})
	}
}

// TestPricedWhileRestoring: while the live session is read back from its
// log, the priced routes and the stream answer 503 with Retry-After
// (an event stream its refusal as events), not the session half
// restored; the other routes answer, a request without a key is still a
// 401, and once restored the priced routes answer again.
func TestPricedWhileRestoring(t *testing.T) {
	ts := newTestServer(t, true)
	var restoring atomic.Bool
	restoring.Store(true)
	ts.api.SetLiveRestoring(restoring.Load)
	for _, path := range []string{"/v2/quotes/ENHZ3?type=current", "/v2/indexes/IBOV/highs", "/v2/stocks/variations"} {
		w := ts.do("GET", path, testKeyDelayed, "")
		checkError(t, w, 503, "restoring the live session")
		if w.Header().Get("Retry-After") != "2" || w.Header().Get("ETag") != "" {
			t.Errorf("%s: Retry-After %q, ETag %q", path, w.Header().Get("Retry-After"), w.Header().Get("ETag"))
		}
	}
	checkError(t, ts.do("POST", "/v2/screener", testKeyDelayed, `{}`), 503, "restoring")
	checkError(t, ts.do("GET", "/v2/stream/quotes?tickers=ENHZ3", testKeyDelayed, ""), 503, "restoring")
	checkError(t, ts.do("GET", "/v2/quotes/ENHZ3", "", ""), 401, "")
	if w := ts.do("GET", "/v2/companies/ENHZ", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("a route without prices while restoring: %d %s", w.Code, w.Body)
	}
	restoring.Store(false)
	if w := ts.do("GET", "/v2/quotes/ENHZ3?type=current", testKeyDelayed, ""); w.Code != 200 {
		t.Errorf("restored: %d %s", w.Code, w.Body)
	}
}
