package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// streamOf returns the state of the stream m applies.
func streamOf(m *Main) *engine.StreamStatus {
	st, _ := m.Live.Status()
	return st.Stream
}

// waitStream waits until the stream applier of m has caught up and
// applied stream sequence seq (0: any), its session complete when
// complete is set.
func waitStream(t *testing.T, m *Main, seq uint64, complete bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ss := streamOf(m)
		st := m.Live.State()
		if ss.CaughtUp && ss.Sequence >= seq && (!complete || st.Complete) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica has not caught up: %+v, session %+v", *ss, *st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// answer asks m and returns the status, the ETag and the body.
func answer(t *testing.T, m *Main, key, method, path, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+m.Addr()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), string(b)
}

// readyzBody returns /readyz's status and body.
func readyzBody(t *testing.T, m *Main) (int, string) {
	t.Helper()
	return get(t, "http://"+m.Addr()+"/readyz", "")
}

// TestServeLiveEmbedded: serve --live embedded --feed replay plays the
// held-back session through the embedded stream and applies it from
// there: the view equals the full snapshot at the replay's end; a second
// replica (--live nats:// to the first's --live-listen) applies the same
// stream and answers byte-identically, ETags included; the feed side
// restarted publishes nothing again and its replica rebuilds the same
// state from the stream.
func TestServeLiveEmbedded(t *testing.T) {
	f := liveFixtureOf(t)
	liveDir, listen := t.TempDir(), freeAddr(t)
	feedSide := func() (*Main, func()) {
		return serveLive(t, f, f.base, func(c *ServeConfig) {
			c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir, c.Live.Stream, c.Live.Listen = "replay:"+f.session, "max", liveDir, "embedded", listen
		})
	}
	m, stop := feedSide()
	waitStream(t, m, 0, true)
	st := m.Live.State()
	head := streamOf(m).Sequence
	// The feed records a batch as published once the stream acknowledged
	// it, which may come after the replica beside it applied the batch.
	for deadline := time.Now().Add(10 * time.Second); m.Live.FeedState().Seq < st.Seq && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if st.Seq < 50 || head != st.Seq || m.Live.FeedState().Seq != st.Seq {
		t.Fatalf("applied batch %d at stream sequence %d; the feed published %d", st.Seq, head, m.Live.FeedState().Seq)
	}
	now := m.clock.Now()
	if m.clock != httpapi.Clock(m.Live.Clock()) || m.cfg.Clock != "stream" || now.Before(live.SessionEnd(f.day)) || now.After(live.SessionEnd(f.day).Add(time.Hour)) {
		t.Errorf("the API's clock %v (%s), want the stream's: the replay's end", now, m.cfg.Clock)
	}
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, now.Unix(), nil) > 0 {
		t.Error("the view applied from the stream differs from the full snapshot")
	}
	// The copy of the session log (for pregao update --session-log)
	// holds every batch, each with its stream sequence.
	logPath := liveDir + "/" + live.LogName(f.day)
	if info, err := readLog(logPath); err != nil || info.Records != int(st.Seq) || info.Last != st.Seq || info.LastStream != head || !info.LastComplete {
		t.Errorf("session log copy %+v, %v; want %d records, the last at stream sequence %d", info, err, st.Seq, head)
	}
	code, rz := readyzBody(t, m)
	var r struct {
		Live struct {
			Feed   string         `json:"feed"`
			Seq    uint64         `json:"seq"`
			Stream map[string]any `json:"stream"`
		} `json:"live"`
	}
	if err := json.Unmarshal([]byte(rz), &r); code != 200 || err != nil || r.Live.Feed != "replay" || r.Live.Seq != st.Seq ||
		r.Live.Stream["sequence"] != float64(head) || r.Live.Stream["pending"] != 0.0 || r.Live.Stream["caught_up"] != true || r.Live.Stream["connected"] != true {
		t.Errorf("readyz %d %s", code, rz)
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	for _, want := range []string{
		"pregao_live_stream_published_total " + jsonNum(st.Seq), `pregao_live_batches_total{result="applied"} ` + jsonNum(st.Seq),
		"pregao_live_stream_sequence " + jsonNum(head), "pregao_live_stream_lag_messages 0", "pregao_live_stream_caught_up 1",
		"pregao_live_stream_connected 1", "pregao_live_stream_redeliveries_total 0", "pregao_live_stream_apply_delay_seconds_count " + jsonNum(st.Seq),
		`pregao_live_feed_errors_total{reason="gap"} 0`, `pregao_live_feed_errors_total{reason="message"} 0`,
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}

	// A replica of the stream on another process's server.
	rep, stopRep := serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream = "nats://" + listen })
	waitStream(t, rep, head, true)
	if lv := readyzLive(t, rep); lv["feed"] != "stream" || lv["seq"] != float64(st.Seq) || lv["complete"] != true {
		t.Errorf("replica readyz live %v", lv)
	}
	if a, b := m.clock.Now(), rep.clock.Now(); !a.Equal(b) {
		t.Errorf("clocks differ: feed side %v, replica %v", a, b)
	}
	paths := identicalPaths(t, m)
	for _, p := range paths {
		c1, e1, b1 := answer(t, m, f.key, p[0], p[1], p[2])
		c2, e2, b2 := answer(t, rep, f.key, p[0], p[1], p[2])
		if c1 != 200 || c1 != c2 || e1 != e2 || b1 != b2 {
			t.Errorf("%s %s differs: %d %s %.200s / %d %s %.200s", p[0], p[1], c1, e1, b1, c2, e2, b2)
		}
	}
	stopRep()

	// The feed side restarted, its copy of the session log cut short: it
	// reads the session back from the stream, completes the copy,
	// publishes nothing again, and its replica applies the same.
	stop()
	if err := os.Truncate(logPath, 4000); err != nil {
		t.Fatal(err)
	}
	m, stop = feedSide()
	defer stop()
	waitStream(t, m, head, true)
	// The feed side has read its session back.
	for end := time.Now().Add(30 * time.Second); m.Live.FeedState().Seq != st.Seq && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the feed goes through its resumed batches
	if st2 := m.Live.State(); st2.Seq != st.Seq || streamOf(m).Sequence != head {
		t.Errorf("after a restart: batch %d at stream sequence %d, want %d at %d", st2.Seq, streamOf(m).Sequence, st.Seq, head)
	}
	_, metrics = get(t, "http://"+m.Addr()+"/metrics", "")
	if !strings.Contains(metrics, "pregao_live_stream_published_total 0\n") {
		t.Error("the restarted feed published batches again")
	}
	if info, err := readLog(logPath); err != nil || info.Records != int(st.Seq) || info.Last != st.Seq || info.LastStream != head {
		t.Errorf("session log copy after a restart %+v, %v; want %d records, the last at stream sequence %d", info, err, st.Seq, head)
	}
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, m.clock.Now().Unix(), nil) > 0 {
		t.Error("after a restart the view differs from the full snapshot")
	}
}

// identicalPaths returns requests whose answers replicas must agree on.
func identicalPaths(t *testing.T, m *Main) [][3]string {
	var tickers []string
	for i := range m.Store.Current().Assets() {
		if a := &m.Store.Current().Assets()[i]; a.StockType != engine.ClassMacro && len(tickers) < 300 {
			tickers = append(tickers, `"`+a.Ticker+`"`)
		}
	}
	out := [][3]string{
		{"POST", "/v2/quotes", `{"type":"current","tickers":[` + strings.Join(tickers, ",") + `]}`},
		{"GET", "/v2/stocks/variations", ""},
		{"GET", "/v2/indexes/IBOV/highs?limit=10", ""},
	}
	for _, tk := range tickers[:20] {
		tk = strings.Trim(tk, `"`)
		out = append(out, [3]string{"GET", "/v2/quotes/" + tk + "?type=current", ""})
	}
	return out
}

// TestServeLiveBadInput: a replica counts and logs what it cannot apply
// from the stream, and goes on: a message that does not decode, a batch
// sequence gap, a batch delivered again, a batch the engine refuses, a
// batch of an earlier session than the live one. Nothing is applied in
// part and nothing crashes.
func TestServeLiveBadInput(t *testing.T) {
	f := liveFixtureOf(t)
	listen := freeAddr(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream, c.Live.Dir, c.Live.Listen = "embedded", t.TempDir(), listen })
	defer stop()
	waitStream(t, m, 0, false) // an empty stream: caught up at once
	if code, body := readyzBody(t, m); code != 200 || !strings.Contains(body, `"session":null`) {
		t.Fatalf("readyz of an empty stream %d %s", code, body)
	}
	b, err := bus.Open(bus.Config{URL: "nats://" + listen, Replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk := sessionTicker(t, f)
	t0 := int64(f.day)*86400 + 14*3600
	good := func(mm int64, c engine.Num) engine.LiveBar {
		return engine.LiveBar{Ticker: tk, Time: t0 + 60*mm, Open: c, High: c, Low: c, Close: c, Volume: c * 100, Quantity: 100, Trades: 1}
	}
	var streamSeq uint64
	pub := func(sd engine.Date, rec *live.Record) {
		t.Helper()
		s, dup, err := b.Publish(ctx, sd, rec, false)
		if err != nil || dup {
			t.Fatalf("publish %d: %v %v", rec.Seq, dup, err)
		}
		streamSeq = s
	}
	pub(f.day, &live.Record{Seq: 1, Bars: []engine.LiveBar{good(0, 10)}})
	waitStream(t, m, streamSeq, false)
	v1 := m.Store.View()
	// Not a batch.
	natsPublish(t, listen, bus.Subject(f.day), []byte("not a batch"))
	// A bar no minute can hold: refused whole, the good bar beside it too.
	pub(f.day, &live.Record{Seq: 2, Bars: []engine.LiveBar{good(1, 11), {Ticker: tk, Time: t0 + 7, Open: 1, High: 1, Low: 1, Close: 1}}})
	// Batch 2 again, another one: it applies (2 was refused).
	pub(f.day, &live.Record{Seq: 2, Bars: []engine.LiveBar{good(1, 12)}})
	// Batch 2 delivered again with other bars: a redelivery, nothing changes.
	pub(f.day, &live.Record{Seq: 2, Bars: []engine.LiveBar{good(1, 99)}})
	// A gap: batch 5 after 2, applied, counted.
	pub(f.day, &live.Record{Seq: 5, Bars: []engine.LiveBar{good(2, 13)}})
	// The next session starts; then a batch of the earlier one is refused.
	pub(f.day+1, &live.Record{Seq: 1, Bars: []engine.LiveBar{}})
	before := streamSeq
	waitStream(t, m, before, false)
	vNext := m.Store.View()
	pub(f.day, &live.Record{Seq: 6, Bars: []engine.LiveBar{good(3, 14)}})
	waitStream(t, m, streamSeq, false)
	if m.Store.View() != vNext {
		t.Error("a batch of an earlier session changed the view")
	}
	if v1 == vNext || vNext.Live == nil || vNext.Live.Session != f.day+1 {
		t.Errorf("the next session did not start: %+v", vNext.Live)
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	for _, want := range []string{
		`pregao_live_feed_errors_total{reason="message"} 1`, `pregao_live_feed_errors_total{reason="refused"} 1`,
		`pregao_live_feed_errors_total{reason="gap"} 1`, `pregao_live_feed_errors_total{reason="session"} 1`,
		"pregao_live_stream_redeliveries_total 1", `pregao_live_batches_total{result="applied"} 4`,
		"pregao_live_stream_sequence " + strconv.FormatUint(streamSeq, 10),
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	if code, _ := readyzBody(t, m); code != 200 {
		t.Errorf("readyz %d after bad input", code)
	}
}

// TestServeLiveUnreachable: a replica whose stream cannot be reached
// serves its snapshot but is not ready (/readyz 503) until it has caught
// the stream up.
func TestServeLiveUnreachable(t *testing.T) {
	f := liveFixtureOf(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream = "nats://" + freeAddr(t) })
	defer stop()
	time.Sleep(200 * time.Millisecond)
	code, body := readyzBody(t, m)
	if code != 503 || !strings.Contains(body, "catching up the live stream: not connected") {
		t.Errorf("readyz %d %s", code, body)
	}
	if c, _, _ := answer(t, m, f.key, "GET", "/v2/indexes/IBOV/highs?limit=3", ""); c != 200 {
		t.Errorf("the API answers %d while the stream is unreachable", c)
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	if !strings.Contains(metrics, "pregao_live_stream_connected 0\n") || !strings.Contains(metrics, "pregao_live_stream_caught_up 0\n") {
		t.Error("metrics do not say the stream is unreachable")
	}
}

// TestFeedCommand: pregao feed publishes a replay to a serve's embedded
// stream (--live-listen); the serve applies it, its view equals the full
// snapshot; the feed run again publishes nothing new.
func TestFeedCommand(t *testing.T) {
	f := liveFixtureOf(t)
	listen := freeAddr(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream, c.Live.Dir, c.Live.Listen = "embedded", t.TempDir(), listen })
	defer stop()
	var published []string
	runFeed := func() {
		ctx, cancel := context.WithCancel(context.Background())
		var out, errb bytes.Buffer
		done := make(chan error, 1)
		maddr := freeAddr(t)
		go func() {
			done <- runFeedCmd(ctx, []string{"--feed", "replay:" + f.session, "--feed-speed", "max", "--live", "nats://" + listen, "--live-replicas", "1",
				"--live-dir", t.TempDir(), "--metrics-addr", maddr}, &out, &errb)
		}()
		waitStream(t, m, 1, true)
		time.Sleep(100 * time.Millisecond)
		// The feed's own endpoints: ready once its session is open (read
		// back from the stream), through the replay.
		var code int
		var body string
		for end := time.Now().Add(30 * time.Second); (code != 200 || !strings.Contains(body, `"complete":true`)) && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if resp, err := http.Get("http://" + maddr + "/readyz"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				code, body = resp.StatusCode, string(b)
			}
		}
		if code != 200 || !strings.Contains(body, `"session":"`+f.day.String()+`"`) {
			t.Errorf("feed readyz %d %s", code, body)
		}
		if code, _ := get(t, "http://"+maddr+"/healthz", ""); code != 200 {
			t.Errorf("feed healthz %d", code)
		}
		_, metrics := get(t, "http://"+maddr+"/metrics", "")
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, "pregao_live_stream_published_total ") {
				published = append(published, strings.TrimPrefix(line, "pregao_live_stream_published_total "))
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("feed: %v\n%s", err, errb.String())
		}
	}
	runFeed()
	head := streamOf(m).Sequence
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, m.clock.Now().Unix(), nil) > 0 {
		t.Error("the view differs from the full snapshot")
	}
	runFeed()
	if h := streamOf(m).Sequence; h != head {
		t.Errorf("the feed run again moved the stream from %d to %d", head, h)
	}
	if len(published) != 2 || published[0] != strconv.FormatUint(head, 10) || published[1] != "0" {
		t.Errorf("the feed's pregao_live_stream_published_total: %v, want %d then 0", published, head)
	}
	var errb bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--live", "nats://x:1"}, "--feed replay:DIR or b3 is required"},
		{[]string{"--feed", "push", "--live", "nats://x:1"}, "--feed replay:DIR or b3 is required"},
		{[]string{"--feed", "b3", "--live-dir", t.TempDir()}, "--live nats://HOST:PORT is required"},
		{[]string{"--feed", "b3", "--live", "embedded", "--live-dir", t.TempDir()}, "--live nats://HOST:PORT is required"},
		{[]string{"--feed", "b3", "--live", "http://x", "--live-dir", t.TempDir()}, "want embedded, or nats://"},
	} {
		if err := runFeedCmd(context.Background(), tc.args, io.Discard, &errb); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

// natsPublish publishes a raw message to the server at addr (what no
// feed of pregao publishes).
func natsPublish(t *testing.T, addr, subject string, data []byte) error {
	t.Helper()
	nc, err := nats.Connect("nats://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(context.Background(), subject, data); err != nil {
		t.Fatal(err)
	}
	return nil
}

// TestServeLiveBusLost: a replica whose stream goes away keeps serving
// its last state, /readyz stays 200 and reports the staleness; when the
// stream is back the replica goes on after the last message it applied,
// without a gap.
func TestServeLiveBusLost(t *testing.T) {
	f := liveFixtureOf(t)
	listen, store := freeAddr(t), t.TempDir()
	owner := func() (*Main, func()) {
		return serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream, c.Live.Dir, c.Live.Listen = "embedded", store, listen })
	}
	srv, stopSrv := owner()
	waitStream(t, srv, 0, false)
	rep, stopRep := serveLive(t, f, f.base, func(c *ServeConfig) { c.Live.Stream = "nats://" + listen })
	defer stopRep()
	tk := sessionTicker(t, f)
	t0 := int64(f.day)*86400 + 14*3600
	publish := func(seqs ...uint64) uint64 {
		t.Helper()
		b, err := bus.Open(bus.Config{URL: "nats://" + listen})
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var last uint64
		for _, seq := range seqs {
			c := engine.Num(10 + seq)
			bar := engine.LiveBar{Ticker: tk, Time: t0 + 60*int64(seq), Open: c, High: c, Low: c, Close: c, Volume: c * 10, Quantity: 10, Trades: 1}
			if last, _, err = b.Publish(ctx, f.day, &live.Record{Seq: seq, Bars: []engine.LiveBar{bar}}, false); err != nil {
				t.Fatal(err)
			}
		}
		return last
	}
	waitStream(t, rep, publish(1, 2, 3), false)
	v3 := rep.Store.View()
	stopSrv() // the stream's only server goes away
	deadline := time.Now().Add(20 * time.Second)
	for ss := streamOf(rep); ss.Connected || ss.Stale < 500*time.Millisecond; ss = streamOf(rep) {
		if time.Now().After(deadline) {
			t.Fatalf("the replica does not see the stream gone: %+v", *ss)
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, body := readyzBody(t, rep)
	if code != 200 || !strings.Contains(body, `"connected":false`) || !strings.Contains(body, `"caught_up":true`) || rep.Store.View() != v3 {
		t.Errorf("without its stream: readyz %d %s", code, body)
	}
	if c, _, _ := answer(t, rep, f.key, "GET", "/v2/quotes/"+tk+"?type=current", ""); c != 200 {
		t.Errorf("the API answers %d without the stream", c)
	}
	_, stopSrv = owner() // back, with the same store
	defer stopSrv()
	waitStream(t, rep, publish(4, 5), false)
	if st := rep.Live.State(); st.Seq != 5 {
		t.Errorf("after the stream's return: batch %d applied, want 5", st.Seq)
	}
	_, metrics := get(t, "http://"+rep.Addr()+"/metrics", "")
	for _, want := range []string{`pregao_live_feed_errors_total{reason="gap"} 0`, `pregao_live_batches_total{result="applied"} 5`, "pregao_live_stream_connected 1"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}
