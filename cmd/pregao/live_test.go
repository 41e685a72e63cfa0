package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// liveDemoSize is the small demo the live tests replay (as
// TestGenerateHoldBackSession shrinks it).
var liveDemoSize = demo.Size{Companies: 40, SponsoredBDRs: 3, UnsponsoredBDRs: 3, FIIs: 15, ETFs: 5, IntradayTickers: 6, IntradaySessions: 3,
	ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2024}

// liveFixture is the small demo generated in full and with its last
// session held back, and their snapshots.
type liveFixture struct {
	dir                    string
	fullBundle, baseBundle string
	full, base             string // snapshots
	session                string // the held-back session's trade file's folder
	day                    engine.Date
	keys, key              string
}

var liveDemo struct {
	sync.Once
	f   *liveFixture
	err error
}

// TestMain removes the fixtures the tests share (the live demo's, the
// real samples').
func TestMain(m *testing.M) {
	code := m.Run()
	if liveDemo.f != nil {
		os.RemoveAll(liveDemo.f.dir)
	}
	if realShared.f != nil {
		os.RemoveAll(realShared.f.dir)
	}
	os.Exit(code)
}

// liveFixtureOf generates the fixture once per test binary.
func liveFixtureOf(t *testing.T) *liveFixture {
	t.Helper()
	liveDemo.Do(func() {
		dir, err := os.MkdirTemp("", "pregao-live-")
		if err != nil {
			liveDemo.err = err
			return
		}
		f := &liveFixture{dir: dir, fullBundle: filepath.Join(dir, "full"), baseBundle: filepath.Join(dir, "base"),
			full: filepath.Join(dir, "full.snap"), base: filepath.Join(dir, "base.snap"), session: filepath.Join(dir, "session")}
		liveDemo.f = f
		u := demo.GenerateSize(3, liveDemoSize)
		if err := bundle.Write(f.fullBundle, u, bundle.WriteOptions{}); err != nil {
			liveDemo.err = err
			return
		}
		u, sess := demo.GenerateSession(3, liveDemoSize, nil)
		f.day = sess.Day
		if err := bundle.Write(f.baseBundle, demo.HoldBack(u, sess), bundle.WriteOptions{}); err != nil {
			liveDemo.err = err
			return
		}
		if _, _, err := negocios.WriteDay(f.session, sess.Day, sess.Each); err != nil {
			liveDemo.err = err
			return
		}
		for _, x := range [][2]string{{f.fullBundle, f.full}, {f.baseBundle, f.base}} {
			if _, err := snapshot.BuildFromBundle(x[0], x[1], snapshot.WriteOptions{}); err != nil {
				liveDemo.err = err
				return
			}
		}
		f.keys = filepath.Join(dir, "keys.json")
		var out, errb bytes.Buffer
		if err := runKeys(context.Background(), []string{"add", "--file", f.keys, "--name", "test", "--plan", "delayed"}, &out, &errb); err != nil {
			liveDemo.err = err
			return
		}
		f.key = strings.TrimSpace(out.String())
	})
	if liveDemo.err != nil {
		t.Fatal(liveDemo.err)
	}
	return liveDemo.f
}

func loadDataset(t *testing.T, path string) *engine.Dataset {
	t.Helper()
	ds, _, err := snapshot.Load(path, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// compareView checks that view v (base + live) answers at unix time at
// as the full snapshot does, for every asset but those of skip: the
// quote and the 1-minute bars of the session day up to at. It returns
// the number of differences reported.
func compareView(t *testing.T, v *engine.View, full *engine.Dataset, day engine.Date, at int64, skip map[string]bool) int {
	t.Helper()
	bad := 0
	dayStart := int64(day) * 86400
	for i := range v.Base.Assets() {
		a := &v.Base.Assets()[i]
		if skip[a.Ticker] {
			continue
		}
		fa, ok := full.Asset(a.Ticker)
		if !ok {
			t.Errorf("%s: not in the full snapshot", a.Ticker)
			bad++
			continue
		}
		got, want := v.QuoteAt(a, at), fa.QuoteAt(time.Unix(at, 0))
		if !sameJSON(t, got, want) {
			if bad++; bad <= 5 {
				t.Errorf("%s at %v: quote\n%+v\nfull snapshot\n%+v", a.Ticker, time.Unix(at, 0).UTC(), got, want)
			}
			continue
		}
		gm := v.AppendMinutes(nil, a, dayStart, at-60, false)
		lo, hi := fa.MinuteRange(dayStart, at-60)
		wm := fa.AppendIntraday(nil, lo, hi, false)
		if !sameJSON(t, gm, wm) {
			if bad++; bad <= 5 {
				t.Errorf("%s at %v: %d minutes of the session, the full snapshot %d", a.Ticker, time.Unix(at, 0).UTC(), len(gm), len(wm))
			}
		}
	}
	return bad
}

// cancellations returns the recording's cancellations: for each, the
// ticker, the time of the trade cancelled and of its cancellation (unix
// ms).
func cancellations(t *testing.T, dir string) (out []struct {
	ticker      string
	trade, when int64
}) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		f, err := negocios.Open(filepath.Join(dir, e.Name()), negocios.Options{})
		if err != nil {
			t.Fatal(err)
		}
		trades := map[string]int64{}
		for f.Next() {
			r := f.Trade()
			key := r.Ticker + "/" + strconv.FormatInt(r.ID, 10)
			if r.Action == negocios.ActionCancel {
				out = append(out, struct {
					ticker      string
					trade, when int64
				}{r.Ticker, trades[key], r.Time})
			} else {
				trades[key] = r.Time
			}
		}
		f.Close()
	}
	return out
}

// pending returns the tickers whose view at cut-off cut, with the feed's
// clock at now (unix seconds), misses a cancellation still to come (the
// full snapshot, made after the session, has it already).
func pending(cs []struct {
	ticker      string
	trade, when int64
}, now, cut int64) map[string]bool {
	m := map[string]bool{}
	for _, c := range cs {
		if c.when >= now*1000 && c.trade < cut*1000 {
			m[c.ticker] = true
		}
	}
	return m
}

// TestLiveReplayMatchesFullSnapshot is the replay's oracle at the engine:
// the held-back demo snapshot plus the replayed session answers as the
// full demo snapshot does at every sampled cut-off of the session (the
// feed's clock and 15 minutes before it), every quote and every 1-minute
// bar, but for the few tickers a cancellation still to come will change
// (the full snapshot, made after the session, has it); at the end of the
// day, for every ticker. Cut-offs after the close are sampled too: the
// session shows its daily form from the close, complete or not.
func TestLiveReplayMatchesFullSnapshot(t *testing.T) {
	f := liveFixtureOf(t)
	full := loadDataset(t, f.full)
	store := &engine.Store{}
	store.Publish(loadDataset(t, f.base))
	rp, err := live.NewReplay(live.ReplayConfig{Dir: f.session})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.StartLive(rp.Session()); err != nil {
		t.Fatal(err)
	}
	cs := cancellations(t, f.session)
	steps, checked, skipped := 0, 0, 0
	for {
		st, err := rp.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if st.Batch != nil {
			if ok, err := store.ApplyLive(st.Batch); !ok || err != nil {
				t.Fatalf("batch %d: %v %v", st.Batch.Seq, ok, err)
			}
		}
		// Every 37 minutes of the session (a prime: minutes of every
		// kind), and at the end.
		final := st.Batch != nil && st.Batch.Complete
		if steps++; steps%(37*12) == 0 || final {
			now := st.At.Unix()
			for _, cut := range []int64{now, now - 15*60} {
				skip := pending(cs, now, cut)
				if final && len(skip) > 0 {
					t.Fatalf("cancellations still to come at the end: %v", skip)
				}
				if compareView(t, store.View(), full, f.day, cut, skip) > 0 {
					t.FailNow()
				}
				checked++
				skipped += len(skip)
			}
		}
	}
	if checked < 20 || len(cs) == 0 || skipped > checked*len(store.View().Base.Assets())/20 {
		t.Errorf("%d cut-offs checked, %d tickers skipped for %d cancellations still to come", checked, skipped, len(cs))
	}
	l := store.View().Live
	if !l.Complete || l.Aside != 0 || l.Covered != 0 {
		t.Errorf("live %+v", *l)
	}
	// The session's daily bars once complete are the full snapshot's.
	for i := range store.View().Base.Assets() {
		a := &store.View().Base.Assets()[i]
		if b, ok := store.View().LiveDaily(a, false); ok {
			fa, _ := full.Asset(a.Ticker)
			if q := fa.QuoteAt(time.Unix(1<<40, 0)); q.Date != f.day || b.Close != q.Close || b.Volume != q.Volume {
				t.Errorf("%s: live daily %+v, full %+v", a.Ticker, b, q)
			}
		}
	}
}

// serveLive starts serve on snapshot snap with the live flags of set and
// returns it running; stop shuts it down.
func serveLive(t *testing.T, f *liveFixture, snap string, set func(*ServeConfig)) (m *Main, stop func()) {
	t.Helper()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.AccessLog = snap, f.keys, "127.0.0.1:0", "off"
	cfg.Live.Retry = 10 * time.Millisecond
	set(&cfg)
	var logw io.Writer = io.Discard
	if os.Getenv("PREGAO_TEST_LOG") != "" {
		// PREGAO_TEST_LOG=1: the servers' logs on stderr, to debug a test.
		logw = os.Stderr
	}
	m, err := NewMain(cfg, logw)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	return m, func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("no shutdown")
		}
	}
}

// readyzLive returns /readyz's live object.
func readyzLive(t *testing.T, m *Main) map[string]any {
	t.Helper()
	code, body := get(t, "http://"+m.Addr()+"/readyz", "")
	var r struct {
		Live map[string]any `json:"live"`
	}
	if err := json.Unmarshal([]byte(body), &r); code != 200 || err != nil {
		t.Fatalf("readyz %d %s %v", code, body, err)
	}
	return r.Live
}

// waitComplete waits for the live session of m to be complete.
func waitComplete(t *testing.T, m *Main) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if st := m.Live.State(); st.Complete {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the live session is not complete after 60 s: %+v", *m.Live.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestServeReplay: serve --feed replay:DIR --feed-speed max plays the
// held-back session over the held-back snapshot: the API's clock is the
// replay's (its end: 18:30 local), /readyz's live object says the session
// is complete, the session log holds every batch, the view equals the
// full snapshot, and the metrics count the batches and bars.
func TestServeReplay(t *testing.T) {
	f := liveFixtureOf(t)
	liveDir := t.TempDir()
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", liveDir
	})
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitComplete(t, m)
	lv := readyzLive(t, m)
	st := m.Live.State()
	if lv["feed"] != "replay" || lv["session"] != f.day.String() || lv["complete"] != true || lv["lag_seconds"] != 0.0 || lv["seq"] != float64(st.Seq) || st.Seq < 50 {
		t.Errorf("readyz live %v", lv)
	}
	now := m.clock.Now()
	if m.clock != httpapi.Clock(m.Live.Clock()) || now.Before(live.SessionEnd(f.day)) || now.After(live.SessionEnd(f.day).Add(time.Hour)) {
		t.Errorf("the API's clock %v, want the replay's end", now)
	}
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, now.Unix(), nil) > 0 {
		t.Error("the served view differs from the full snapshot")
	}
	info, err := readLog(filepath.Join(liveDir, live.LogName(f.day)))
	if err != nil || info.Records != int(st.Seq) || info.Last != st.Seq || info.Cut != 0 {
		t.Errorf("session log %+v, %v; want %d records", info, err, st.Seq)
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	for _, want := range []string{
		`pregao_live_batches_total{result="applied"} ` + jsonNum(st.Seq), "pregao_live_complete 1", "pregao_live_running 1",
		"pregao_live_seq " + jsonNum(st.Seq), "pregao_live_publish_duration_seconds_count " + jsonNum(st.Seq),
		`pregao_live_feed_errors_total{reason="malformed"} 0`, "pregao_live_lag_seconds 0",
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
	// Served again over the same session log (a restart): the session
	// restored complete, the clock is the replay's as it was, not back at
	// the recording's start, where the delayed plan saw none of the
	// session while the session's stream had it all.
	stop()
	stopped = true
	m2, stop2 := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", liveDir
	})
	defer stop2()
	waitComplete(t, m2)
	if again := m2.clock.Now(); !again.Equal(now) {
		t.Errorf("after a restart the API's clock is %v, was %v", again, now)
	}
}

func jsonNum(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func readLog(path string) (live.LogInfo, error) {
	fh, err := os.Open(path)
	if err != nil {
		return live.LogInfo{}, err
	}
	defer fh.Close()
	return live.ReadLog(fh, nil)
}

// TestServeLiveFlags: serve's live flags (declared by the session
// package, checked there) reach ServeConfig.Live from the command line
// and the environment, and a bad one stops serve before anything is
// served, naming it.
func TestServeLiveFlags(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	for _, tc := range []struct {
		set  func(*ServeConfig)
		want string
	}{
		{func(c *ServeConfig) { c.Live.Feed = "kafka" }, "serve: --feed \"kafka\": want replay:DIR, b3 or push"},
		{func(c *ServeConfig) { c.Live.Stream = "kafka://x" }, "serve: --live \"kafka://x\": want embedded, or nats://"},
	} {
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
		tc.set(&cfg)
		if _, err := newMain(cfg, io.Discard); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", cfg.Live, err, tc.want)
		}
	}
	cfg, err := parseServe([]string{"--feed", "replay:/x", "--feed-speed", "max", "--live-dir", "/d", "--live-session", "2026-11-19", "--b3-tickers", "PETR4",
		"--live", "nats://a:4222,nats://b:4222", "--live-replicas", "3", "--live-retention", "48h"},
		func(k string) (string, bool) {
			return map[string]string{"PREGAO_LIVE_KEEP": "3", "PREGAO_B3_URL": "http://mirror"}[k], k == "PREGAO_LIVE_KEEP" || k == "PREGAO_B3_URL"
		}, io.Discard)
	l := cfg.Live
	if err != nil || l.Feed != "replay:/x" || l.FeedSpeed != "max" || l.Dir != "/d" || l.Day != "2026-11-19" || l.Keep != 3 || l.B3URL != "http://mirror" || l.B3Tickers != "PETR4" ||
		l.Stream != "nats://a:4222,nats://b:4222" || l.Replicas != 3 || l.Retention != 48*time.Hour {
		t.Errorf("parsed %+v, %v", cfg.Live, err)
	}
}

// sessionTicker returns a ticker that trades in the held-back session.
func sessionTicker(t *testing.T, f *liveFixture) string {
	t.Helper()
	rp, err := live.NewReplay(live.ReplayConfig{Dir: f.session})
	if err != nil {
		t.Fatal(err)
	}
	for {
		st, err := rp.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Batch != nil && len(st.Batch.Bars) > 0 {
			return st.Batch.Bars[0].Ticker
		}
	}
}

// replaceFile replaces dst with a copy of src (a rename).
func replaceFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst+".tmp", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dst+".tmp", dst); err != nil {
		t.Fatal(err)
	}
}

// TestLiveHandover is the roll: after the replayed session is complete,
// the next snapshot is built with the session log as the session's
// 1-minute history (it gives the full demo's exactly) and the full demo's
// daily bars (what COTAHIST brings the next morning). The server reloads
// it; in the same publish the live tickers are dropped (the snapshot
// covers them), then the session ends. Every quote and every minute of
// the session is the same before and after, each ticker's minutes are
// the session's count, none twice.
func TestLiveHandover(t *testing.T) {
	f := liveFixtureOf(t)
	dir, liveDir := t.TempDir(), t.TempDir()
	served := filepath.Join(dir, "served.snap")
	replaceFile(t, f.base, served)
	m, stop := serveLive(t, f, served, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", liveDir
	})
	defer stop()
	waitComplete(t, m)

	want := rollSnapshot(t, f.fullBundle, f.day, liveDir, filepath.Join(dir, "next.snap"))
	cut := int64(f.day) * 86400

	now := m.clock.Now().Unix()
	before := m.Store.View()
	type answer struct {
		Q       engine.Quote
		Minutes []engine.Bar
	}
	answers := func(v *engine.View) map[string]answer {
		out := map[string]answer{}
		for i := range v.Base.Assets() {
			a := &v.Base.Assets()[i]
			out[a.Ticker] = answer{v.QuoteAt(a, now), v.AppendMinutes(nil, a, cut, cut+86399, false)}
		}
		return out
	}
	was := answers(before)
	replaceFile(t, filepath.Join(dir, "next.snap"), served)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !m.Live.State().Rolled; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no handover")
		}
	}
	after := m.Store.View()
	if after.Live != nil || after.Base == before.Base {
		t.Fatalf("after the handover: live %v", after.Live)
	}
	is := answers(after)
	counts := map[string]int{}
	for _, x := range want {
		n, _ := slices.BinarySearch(x.Times, cut)
		counts[x.Ticker] = len(x.Times) - n
	}
	withMinutes := 0
	for tk, a := range was {
		b := is[tk]
		if !sameJSON(t, a, b) {
			t.Errorf("%s: before the handover %+v, after %+v", tk, a, b)
			continue
		}
		if len(b.Minutes) != counts[tk] {
			t.Errorf("%s: %d minutes of the session, the session had %d", tk, len(b.Minutes), counts[tk])
		}
		for i := 1; i < len(b.Minutes); i++ {
			if b.Minutes[i].Time <= b.Minutes[i-1].Time {
				t.Errorf("%s: minute %d twice or out of order", tk, b.Minutes[i].Time)
			}
		}
		if len(b.Minutes) > 0 {
			withMinutes++
		}
	}
	if withMinutes < 20 {
		t.Errorf("%d tickers with minutes of the session", withMinutes)
	}
	lv := readyzLive(t, m)
	if lv["complete"] != true || lv["seq"] != float64(m.Live.State().Seq) {
		t.Errorf("readyz after the handover: %v", lv)
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	if !strings.Contains(metrics, "pregao_live_handovers_total 1\n") {
		t.Error("the handover is not counted")
	}
}

// TestServeB3: serve --feed b3 polls a stand-in for B3's trade-file
// endpoint (--b3-url) for the tickers of --b3-tickers: the bars reach the
// live session (tickers the snapshot does not know are held aside and
// counted), a malformed row and failing files are counted by reason,
// the poller's state is kept in --live-dir, and a session whose end has
// passed is complete after one poll.
func TestServeB3(t *testing.T) {
	f := liveFixtureOf(t)
	files := map[string]string{
		"/rapinegocios/tickercsv/PLAE3/2026-11-19":  "PLAE3_1130.zip",
		"/rapinegocios/tickercsv/LITA11/2026-11-19": "LITA11.zip",
		"/rapinegocios/tickercsv/ABEV3/2026-11-19":  "malformed.txt",
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/rapinegocios/tickercsv/VALE3/2026-11-19" {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		name, ok := files[r.URL.Path]
		if !ok || r.URL.Query().Get("type") != "2" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join("../../snapshot/ingest/negocios/testdata/poll", name))
	}))
	defer ts.Close()
	liveDir := t.TempDir()
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.Dir, c.Live.Day = "b3", liveDir, "2026-11-19"
		c.Live.B3URL, c.Live.B3Tickers, c.Live.B3Pace = ts.URL+"/rapinegocios/tickercsv", "PLAE3,LITA11,ABEV3,VALE3", time.Millisecond
	})
	defer stop()
	waitComplete(t, m)
	l := m.Store.View().Live
	// PLAE3 and LITA11 are no tickers of the demo: held aside.
	if l.Seq != 1 || l.Bars != 5 || l.Aside != l.Bars {
		t.Errorf("live: seq %d, bars %d, aside %d", l.Seq, l.Bars, l.Aside)
	}
	lv := readyzLive(t, m)
	if lv["feed"] != "b3" || lv["complete"] != true || lv["seq"] != 1.0 {
		t.Errorf("readyz live %v", lv)
	}
	// The poller's state is saved once the server asks past the last
	// batch (it is logged by then).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(liveDir, "b3-2026-11-19.json")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
	}
	_, metrics := get(t, "http://"+m.Addr()+"/metrics", "")
	// ABEV3's file is malformed, and holds rows of another ticker; VALE3's
	// answers 502.
	for _, want := range []string{`pregao_live_feed_errors_total{reason="malformed"} 1`, `pregao_live_feed_errors_total{reason="fetch"} 2`,
		`pregao_live_batches_total{result="applied"} 1`, "pregao_live_bars_total 5", "pregao_live_bars_aside_total 5"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestLivePrune: starting a session keeps the logs (and b3 states) of the
// newest --live-keep sessions, the current one included, and nothing
// else is touched.
func TestLivePrune(t *testing.T) {
	f := liveFixtureOf(t)
	liveDir := t.TempDir()
	var names []string
	for d := f.day - 20; d < f.day; d++ {
		names = append(names, live.LogName(d), "b3-"+d.String()+".json")
	}
	names = append(names, "2026-01-02.json", "notes.txt", "session-2026-01-02.log.bad-1")
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(liveDir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.Dir, c.Live.Day, c.Live.Keep = "push", liveDir, f.day.String(), 3
	})
	defer stop()
	for deadline := time.Now().Add(10 * time.Second); !m.Live.State().Running; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no session")
		}
	}
	ents, _ := os.ReadDir(liveDir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{"2026-01-02.json", "b3-" + (f.day - 2).String() + ".json", "b3-" + (f.day - 1).String() + ".json", "notes.txt",
		live.LogName(f.day - 2), live.LogName(f.day - 1), live.LogName(f.day), "session-2026-01-02.log.bad-1"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("left %v\nwant %v", left, want)
	}
}

// TestLiveBadLogMovedAside: a session log that is not one (or is another
// session's) is moved aside, counted and logged, and the session starts
// empty: a damaged file never stops the server.
func TestLiveBadLogMovedAside(t *testing.T) {
	f := liveFixtureOf(t)
	for _, content := range []string{"not a log\n", "pregao-session-log 1 2020-01-02\n"} {
		liveDir := t.TempDir()
		path := filepath.Join(liveDir, live.LogName(f.day))
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
			c.Live.Feed, c.Live.Dir, c.Live.Day = "push", liveDir, f.day.String()
		})
		for deadline := time.Now().Add(10 * time.Second); !m.Live.State().Running; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%q: no session", content)
			}
		}
		aside, _ := filepath.Glob(path + ".bad-*")
		if len(aside) != 1 {
			t.Errorf("%q: moved aside %v", content, aside)
		} else if b, _ := os.ReadFile(aside[0]); string(b) != content {
			t.Errorf("%q: the file moved aside holds %q", content, b)
		}
		// (The push session's end is past: the server has completed it, a
		// record without bars.)
		if info, err := readLog(path); err != nil || info.Session != f.day || info.Records > 1 {
			t.Errorf("%q: new log %+v, %v", content, info, err)
		}
		if _, metrics := get(t, "http://"+m.Addr()+"/metrics", ""); !strings.Contains(metrics, `pregao_live_feed_errors_total{reason="log"} 1`+"\n") {
			t.Errorf("%q: not counted", content)
		}
		stop()
	}
}

// TestServeReplayAnswers: at the end of the replayed day, the server
// holding the held-back snapshot and the replayed session answers the
// current quotes of every ticker (POST /quotes), the variations and the
// IBOV highs as the server holding the full demo snapshot does.
func TestServeReplayAnswers(t *testing.T) {
	f := liveFixtureOf(t)
	m, stop := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", t.TempDir()
	})
	defer stop()
	waitComplete(t, m)
	full, stopFull := serveLive(t, f, f.full, func(*ServeConfig) {})
	defer stopFull()
	if a, b := m.clock.Now(), full.clock.Now(); !a.Equal(b) {
		t.Fatalf("clocks: replay %v, full snapshot %v", a, b)
	}
	var tickers []string
	for i := range m.Store.Current().Assets() {
		if a := &m.Store.Current().Assets()[i]; a.StockType != engine.ClassMacro {
			tickers = append(tickers, `"`+a.Ticker+`"`)
		}
	}
	ask := func(m *Main, method, path, body string) string {
		req, _ := http.NewRequest(method, "http://"+m.Addr()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
		return string(b)
	}
	compared := 0
	for lo := 0; lo < len(tickers); lo += 500 {
		body := `{"type":"current","tickers":[` + strings.Join(tickers[lo:min(lo+500, len(tickers))], ",") + `]}`
		a, b := ask(m, "POST", "/v2/quotes", body), ask(full, "POST", "/v2/quotes", body)
		if a != b {
			t.Errorf("POST /quotes differs:\nreplay %.400s\nfull   %.400s", a, b)
		}
		if !strings.Contains(a, f.day.String()) {
			t.Errorf("the quotes are not of the replayed session %s: %.400s", f.day, a)
		}
		compared++
	}
	for _, path := range []string{"/v2/stocks/variations", "/v2/indexes/IBOV/highs?limit=10"} {
		if a, b := ask(m, "GET", path, ""), ask(full, "GET", path, ""); a != b {
			t.Errorf("%s differs:\nreplay %.400s\nfull   %.400s", path, a, b)
		}
	}
	if compared == 0 {
		t.Error("no ticker")
	}
}

// rollSnapshot builds into out the snapshot the roll publishes: the full
// demo bundle without its last session's minutes (day), which the session
// logs of liveDir give back (live.AddIntraday), and with the full demo's
// daily bars (what COTAHIST brings the next morning). It checks that the
// logs' minutes are the full demo's and returns the full demo's intraday
// series.
func rollSnapshot(t *testing.T, fullBundle string, day engine.Date, liveDir, out string) []engine.Intraday {
	t.Helper()
	u, err := bundle.Read(fullBundle)
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(u.Intraday)
	cut := int64(day) * 86400
	kept := u.Intraday[:0:0]
	for _, x := range u.Intraday {
		n, _ := slices.BinarySearch(x.Times, cut)
		if n > 0 {
			kept = append(kept, engine.Intraday{Ticker: x.Ticker, Times: x.Times[:n:n], Open: x.Open[:n:n], High: x.High[:n:n],
				Low: x.Low[:n:n], Close: x.Close[:n:n], Volume: x.Volume[:n:n], Quantity: x.Quantity[:n:n]})
		}
	}
	u.Intraday = kept
	rep, err := live.AddIntraday(u, []string{liveDir}, day)
	if err != nil || len(rep.Sessions) != 1 || rep.Unknown != 0 || rep.Cut != 0 {
		t.Fatalf("%+v, %v", rep, err)
	}
	if !sameJSON(t, u.Intraday, want) {
		t.Fatal("the session log's minutes are not the full demo's")
	}
	next := out + ".bundle"
	if err := bundle.Write(next, u, bundle.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshot.BuildFromBundle(next, out, snapshot.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestServeRestoringWired: serve hands its live session's restore to the
// API. Opened but not run yet, the session is still to be read back from
// its log: serve's own handler answers a priced route 503 and a route
// without prices 200; once run and restored, the priced route answers.
func TestServeRestoringWired(t *testing.T) {
	f := liveFixtureOf(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.AccessLog = f.base, f.keys, "127.0.0.1:0", "off"
	cfg.Live.Feed, cfg.Live.Dir, cfg.Live.Day = "push", t.TempDir(), f.day.String()
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	do := func(path string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		w := httptest.NewRecorder()
		m.API.ServeHTTP(w, req)
		return w
	}
	if !m.Live.Restoring() {
		t.Fatal("the session is not restoring before it runs")
	}
	if w := do("/v2/indexes/IBOV/highs"); w.Code != 503 || w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), "restoring the live session") {
		t.Errorf("a priced route while restoring: %d %s", w.Code, w.Body)
	}
	if w := do("/v2/sectors"); w.Code != 200 {
		t.Errorf("a route without prices while restoring: %d %.200s", w.Code, w.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for deadline := time.Now().Add(10 * time.Second); m.Live.Restoring(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("still restoring")
		}
	}
	if w := do("/v2/indexes/IBOV/highs"); w.Code != 200 {
		t.Errorf("a priced route once restored: %d %.200s", w.Code, w.Body)
	}
}
