package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// TestStreamGapPolicy: a gap in the stream (messages gone by its
// limits) or in a session's batch sequence numbers never holds the
// replica: the batch after it is applied, and the minutes it carries
// are served; the gap is counted (gap errors, /readyz's gaps,
// session_gaps and last_gap, pregao_live_stream_session_gaps) and
// logged. The session's gaps go back to 0 when the next session starts,
// and when the session's snapshot takes it over.
func TestStreamGapPolicy(t *testing.T) {
	f := fixtureOf(t)
	store := storeOf(f.base)
	reg := prometheus.NewRegistry()
	var logs lockedBuilder
	s := replicaOf(t, store, &Options{Log: testLog(&logs), Registerer: reg})
	deliver := func(streamSeq, gap uint64, sd engine.Date, seq uint64, minute int64, complete bool) {
		t.Helper()
		c, t0 := engine.Num(10+minute), int64(sd)*86400+14*3600
		rec := &live.Record{Seq: seq, Complete: complete, Bars: []engine.LiveBar{{Ticker: f.ticker, Time: t0 + 60*minute, Open: c, High: c, Low: c, Close: c, Volume: c * 100, Quantity: 100, Trades: 1}}}
		s.stream.deliver(&bus.Delivery{Batch: &bus.Batch{Session: sd, Record: rec}, StreamSeq: streamSeq, Gap: gap, Stored: time.Now()})
	}
	check := func(gaps, sessionGaps int64, last *engine.LiveGap, liveSeq uint64) {
		t.Helper()
		st := s.stream.status()
		if st.Gaps != gaps || st.SessionGaps != sessionGaps || (last == nil) != (st.LastGap == nil) || last != nil && *last != *st.LastGap {
			t.Errorf("gaps %d, session gaps %d, last %+v; want %d, %d, %+v", st.Gaps, st.SessionGaps, st.LastGap, gaps, sessionGaps, last)
		}
		if n := counterValue(t, reg, "pregao_live_feed_errors_total", "reason", reasonGap); n != float64(gaps) {
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
	batchGap := &engine.LiveGap{Kind: "batch", Session: f.day, First: 3, Last: 4, StreamSeq: 3}
	check(1, 1, batchGap, 5)
	// Stream sequences 4 to 6 are gone from the stream: 7 is applied.
	deliver(7, 3, f.day, 6, 5, false)
	streamGap := &engine.LiveGap{Kind: "stream", Session: f.day, First: 4, Last: 6, StreamSeq: 7}
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
	s.stream.deliver(&bus.Delivery{Err: bus.ErrMessage, StreamSeq: 9, Gap: 1})
	check(3, 3, &engine.LiveGap{Kind: "stream", Session: engine.NoDate, First: 8, Last: 8, StreamSeq: 9}, 6)
	// The next session: its gaps start from 0; the total stays.
	deliver(10, 0, f.day+1, 1, 0, false)
	check(3, 0, &engine.LiveGap{Kind: "stream", Session: engine.NoDate, First: 8, Last: 8, StreamSeq: 9}, 1)
	deliver(11, 0, f.day+1, 3, 1, true)
	check(4, 1, &engine.LiveGap{Kind: "batch", Session: f.day + 1, First: 2, Last: 2, StreamSeq: 11}, 3)
	// The snapshot of the session takes it over: its gaps go.
	store.Publish(f.base)
	s = replicaOf(t, store, nil)
	deliver(1, 0, f.day, 1, 0, false)
	deliver(2, 0, f.day, 3, 1, true)
	if st := s.stream.status(); st.SessionGaps != 1 {
		t.Fatalf("session gaps %d before the roll", st.SessionGaps)
	}
	store.Publish(f.full)
	s.head.mu.Lock()
	s.head.checkRolled()
	s.head.mu.Unlock()
	if st := s.stream.status(); !s.head.rolled || st.SessionGaps != 0 || st.Gaps != 1 || st.LastGap == nil {
		t.Errorf("after the roll (rolled %t): %+v", s.head.rolled, *st)
	}
}

// A batch the stream cannot take for now is refused with
// engine.ErrLiveUnavailable (the push endpoints' 503: send it again),
// and the feed's loop takes it as a batch to publish again (errBus).
func TestStreamLogUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	b, err := bus.Open(bus.Config{URL: "nats://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var dups atomic.Int64
	s := &streamLog{bus: b, session: engine.CivilDate(2026, 11, 19), timeout: 300 * time.Millisecond, dups: &dups}
	err = s.Append(&live.Record{Seq: 1, Bars: []engine.LiveBar{}})
	if !errors.Is(err, engine.ErrLiveUnavailable) || !errors.Is(err, errBus) || s.Last() != 0 {
		t.Fatalf("Append to an unreachable stream: %v (last %d)", err, s.Last())
	}
}

// TestStreamPushTooLarge: a pushed batch larger than a message of the
// live stream may be (bus.MaxMessage) is refused whole as a bad batch
// (engine.ErrLiveBatch: the push endpoints' 400, never a 500), and the
// session takes the next batch under the same seq.
func TestStreamPushTooLarge(t *testing.T) {
	f := fixtureOf(t)
	t0 := int64(f.day)*86400 + 13*3600
	cfg := DefaultConfig()
	cfg.Feed, cfg.Stream, cfg.Dir, cfg.Day = "push", bus.Embedded, t.TempDir(), f.day.String()
	s, err := New(cfg, storeOf(f.base), Options{Log: testLog(nil), Now: func() time.Time { return time.Unix(t0+3600, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	r := s.local
	waitFor(t, "the push session", func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.slog != nil })
	trades := make([]engine.LiveTrade, bus.MaxMessage/90)
	for i := range trades {
		trades[i] = engine.LiveTrade{Ticker: f.ticker, Time: (t0 + int64(i%3600)) * 1000, Price: 20, Quantity: 10, ID: fmt.Sprintf("%060d", i)}
	}
	if err := r.PushTrades(1, trades); !errors.Is(err, engine.ErrLiveBatch) {
		t.Fatalf("a batch of %d trades: %v, want ErrLiveBatch", len(trades), err)
	}
	if err := r.PushTrades(1, trades[:10]); err != nil {
		t.Fatal(err)
	}
	if next := r.NextSeq(); next != 2 {
		t.Errorf("next %d, want 2", next)
	}
}
