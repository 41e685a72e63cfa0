package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/live/bus"
)

// TestStreamGapPolicy: a gap (batch sequence numbers skipped, stream
// messages gone) never holds the stream: the batch after it is applied;
// the gap is counted (gap errors, /readyz's gaps, session_gaps and
// last_gap, pregao_live_stream_session_gaps) and logged. The session's
// gaps go back to 0 when the next session starts, and when the
// session's snapshot takes it over.
func TestStreamGapPolicy(t *testing.T) {
	f := liveFixtureOf(t)
	store := &engine.Store{}
	store.Publish(loadDataset(t, f.base))
	reg := prometheus.NewRegistry()
	met := registerLiveMetrics(reg, func() *liveState { return nil }, func() time.Duration { return 0 })
	var logs syncBuffer
	a := newStreamApplier(store, slog.New(slog.NewTextHandler(&logs, nil)), met, "", &streamClock{})
	registerStreamMetrics(reg, func() *streamApplier { return a })
	tk := sessionTicker(t, f)
	deliver := func(streamSeq, gap uint64, sd engine.Date, seq uint64, minute int64, complete bool) {
		t.Helper()
		c, t0 := engine.Num(10+minute), int64(sd)*86400+14*3600
		rec := &live.Record{Seq: seq, Complete: complete, Bars: []engine.LiveBar{{Ticker: tk, Time: t0 + 60*minute, Open: c, High: c, Low: c, Close: c, Volume: c * 100, Quantity: 100, Trades: 1}}}
		a.deliver(&bus.Delivery{Batch: &bus.Batch{Session: sd, Record: rec}, StreamSeq: streamSeq, Gap: gap, Stored: time.Now()})
	}
	check := func(gaps, sessionGaps int64, last *httpapi.StreamGap, liveSeq uint64) {
		t.Helper()
		s := a.streamStatus()
		if s.Gaps != gaps || s.SessionGaps != sessionGaps || (last == nil) != (s.LastGap == nil) || last != nil && *last != *s.LastGap {
			t.Errorf("gaps %d, session gaps %d, last %+v; want %d, %d, %+v", s.Gaps, s.SessionGaps, s.LastGap, gaps, sessionGaps, last)
		}
		if n := testutil.ToFloat64(met.feedErrors.WithLabelValues(reasonGap)); n != float64(gaps) {
			t.Errorf("gap errors %v, want %d", n, gaps)
		}
		if v := store.View(); liveSeq > 0 && (v.Live == nil || v.Live.Seq != liveSeq) {
			t.Errorf("live seq %+v, want %d applied", v.Live, liveSeq)
		}
	}
	deliver(1, 0, f.day, 1, 0, false)
	deliver(2, 0, f.day, 2, 1, false)
	check(0, 0, nil, 2)
	// Batches 3 and 4 never came: 5 is applied.
	deliver(3, 0, f.day, 5, 4, false)
	batchGap := &httpapi.StreamGap{Kind: "batch", Session: f.day, First: 3, Last: 4, StreamSeq: 3}
	check(1, 1, batchGap, 5)
	// Stream sequences 4 to 6 are gone from the stream: 7 is applied.
	deliver(7, 3, f.day, 6, 5, false)
	streamGap := &httpapi.StreamGap{Kind: "stream", Session: f.day, First: 4, Last: 6, StreamSeq: 7}
	check(2, 1+1, streamGap, 6)
	if got := gaugeValue(t, reg, "pregao_live_stream_session_gaps"); got != 2 {
		t.Errorf("pregao_live_stream_session_gaps %v, want 2", got)
	}
	for _, want := range []string{"batches missing before this one; applying on", "messages missing before this one (gone from the stream); applying on"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log line %q:\n%s", want, logs.String())
		}
	}
	// A message gone, then one that is not a batch: counted, no session.
	a.deliver(&bus.Delivery{Err: bus.ErrMessage, StreamSeq: 9, Gap: 1})
	check(3, 3, &httpapi.StreamGap{Kind: "stream", Session: engine.NoDate, First: 8, Last: 8, StreamSeq: 9}, 6)
	// The next session: its gaps start from 0; the total stays.
	deliver(10, 0, f.day+1, 1, 0, false)
	check(3, 0, &httpapi.StreamGap{Kind: "stream", Session: engine.NoDate, First: 8, Last: 8, StreamSeq: 9}, 1)
	deliver(11, 0, f.day+1, 3, 1, true)
	check(4, 1, &httpapi.StreamGap{Kind: "batch", Session: f.day + 1, First: 2, Last: 2, StreamSeq: 11}, 3)
	// The snapshot of the session takes it over: its gaps go.
	store.Publish(loadDataset(t, f.base))
	a = newStreamApplier(store, slog.New(slog.DiscardHandler), met, "", &streamClock{})
	deliver(1, 0, f.day, 1, 0, false)
	deliver(2, 0, f.day, 3, 1, true)
	if s := a.streamStatus(); s.SessionGaps != 1 {
		t.Fatalf("session gaps %d before the roll", s.SessionGaps)
	}
	store.Publish(loadDataset(t, f.full))
	a.mu.Lock()
	a.checkRolled()
	a.mu.Unlock()
	if s := a.streamStatus(); !a.rolled || s.SessionGaps != 0 || s.Gaps != 1 || s.LastGap == nil {
		t.Errorf("after the roll (rolled %t): %+v", a.rolled, *s)
	}
}

// gaugeValue returns the value of the gauge name gathered from reg.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
