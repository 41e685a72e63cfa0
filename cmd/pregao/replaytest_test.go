package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// stopClock is a clock held at one instant.
type stopClock struct{ t time.Time }

func (c stopClock) Now() time.Time { return c.t }

// TestReplayUnderLoad (make replay-test; PREGAO_REPLAY_DIR holds the
// demo generated in full and with its last session held back: full/ and
// base/ bundles, full.snap, base.snap and session/, the trade file) is
// the live session's proof at demo scale:
//
//   - server R serves base.snap with --feed replay:session at
//     PREGAO_REPLAY_SPEED (default 300× real time) under an open-loop load
//     of PREGAO_REPLAY_RATE requests a second (default 500): no request
//     fails;
//   - each time R's feed clock passes a sampled instant T (every 30
//     minutes of the session, its close and the end of the recording),
//     R's View (the held-back snapshot and the live session) answers at T
//     exactly as the full snapshot does at T: current, adjusted, 1- and
//     15-minute, daily and chart quotes of sampled tickers, a batch of
//     every ticker, IBOV highs and lows, variations and three screener
//     queries (both answered by the same API code with a clock stopped at
//     T);
//   - the same load against a server without a feed (the full snapshot),
//     before and after, gives the reference p99; a second server replays
//     the session from 14:00 (--feed-from) at PREGAO_REPLAY_SLOW (default
//     60× real time) under that load for 30 s: its p99 against the
//     reference is the target's (within +10 %); R's, at its speed, is
//     reported beside it;
//   - after the roll (the next snapshot holds the session, built from R's
//     session log), every ticker's minutes of the session are the full
//     demo's count, none twice.
func TestReplayUnderLoad(t *testing.T) {
	dir := os.Getenv("PREGAO_REPLAY_DIR")
	if dir == "" {
		t.Skip("set PREGAO_REPLAY_DIR (make replay-test)")
	}
	speed, rate := "300", 500.0
	if v := os.Getenv("PREGAO_REPLAY_SPEED"); v != "" {
		speed = v
	}
	if v := os.Getenv("PREGAO_REPLAY_RATE"); v != "" {
		rate, _ = strconv.ParseFloat(v, 64)
	}
	f := &liveFixture{dir: dir, fullBundle: filepath.Join(dir, "full"), baseBundle: filepath.Join(dir, "base"),
		full: filepath.Join(dir, "full.snap"), base: filepath.Join(dir, "base.snap"), session: filepath.Join(dir, "session")}
	files, err := os.ReadDir(f.session)
	if err != nil || len(files) != 1 {
		t.Fatalf("%s: want one trade file: %v", f.session, err)
	}
	day, err := time.Parse("20060102", strings.TrimSuffix(files[0].Name(), "_NEGOCIOSAVISTA.zip"))
	if err != nil || files[0].Name() != negocios.ZipName(engine.DateOf(day)) {
		t.Fatalf("trade file %s", files[0].Name())
	}
	f.day = engine.DateOf(day)
	f.keys = filepath.Join(t.TempDir(), "keys.json")
	if err := httpapi.UpdateKeysFile(f.keys, func(kf *httpapi.KeysFile) (err error) {
		f.key, err = kf.AddKey("replay", httpapi.PlanDelayed, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	kf, err := httpapi.ReadKeysFile(f.keys)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := httpapi.NewKeys(kf)
	if err != nil {
		t.Fatal(err)
	}

	full, stopFull := serveLive(t, f, f.full, func(*ServeConfig) {})
	defer stopFull()
	fullDS := full.Store.Current()
	var tickers []string
	for i := range fullDS.Assets() {
		if a := &fullDS.Assets()[i]; a.StockType != engine.ClassMacro && a.Daily.Len() > 0 && a.Daily.Dates[a.Daily.Len()-1] == f.day {
			tickers = append(tickers, a.Ticker)
		}
	}
	var loadPaths []string
	for i, tk := range tickers {
		if i%9 == 0 && len(loadPaths) < 60 {
			loadPaths = append(loadPaths, "/quotes/"+tk+"?type=current", "/quotes/"+tk+"?type=historical&interval=300")
		}
	}
	loadPaths = append(loadPaths, "/indexes/IBOV/highs?limit=10", "/stocks/variations?limit=10")

	// The reference: the same load on a server without a feed.
	const refDur = 15 * time.Second
	ref1 := openLoad("http://"+full.Addr()+"/v2", loadPaths, f.key, rate, refDur, time.Now())

	liveDir := t.TempDir()
	served := filepath.Join(t.TempDir(), "served.snap")
	replaceFile(t, f.base, served)
	start := time.Now()
	r, stop := serveLive(t, f, served, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, speed, liveDir
	})
	defer stop()
	loadDone := make(chan []loadSample, 1)
	stopLoad := make(chan struct{})
	go func() { loadDone <- openLoadUntil("http://"+r.Addr()+"/v2", loadPaths, f.key, rate, start, stopLoad) }()

	// The comparisons, as the feed's clock passes each sampled instant.
	apiAt := func(s *engine.Store, at time.Time) *httpapi.API {
		return httpapi.New(httpapi.DefaultConfig(), s, keys, stopClock{at}, nil, nil)
	}
	var fullStore engine.Store
	fullStore.Publish(fullDS)
	var samples []time.Time
	open := f.day.Time().Add(13 * time.Hour) // 10:00 in São Paulo
	for at := open.Add(20 * time.Minute); at.Before(f.day.Time().Add(20 * time.Hour)); at = at.Add(30 * time.Minute) {
		samples = append(samples, at)
	}
	samples = append(samples, f.day.Time().Add(20*time.Hour+16*time.Minute))
	reqs := replayRequests(tickers)
	compared := 0
	// busy are the windows (from start) in which this process compared
	// answers: the load's samples then wait on that work, not the feed's.
	type window struct{ from, to time.Duration }
	var busy []window
	for _, at := range samples {
		for r.clock.Now().Before(at) {
			if r.Live.State().Complete {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		// R's Store goes on with the replay: the answers at a cut-off 15
		// minutes before the feed's clock depend only on bars that are
		// final by then.
		from := time.Since(start)
		compared += compareAPIs(t, apiAt(r.Store, at), apiAt(&fullStore, at), f.key, at, reqs)
		busy = append(busy, window{from, time.Since(start) + 100*time.Millisecond})
	}
	waitComplete(t, r)
	end := r.clock.Now()
	compared += compareAPIs(t, apiAt(r.Store, end), apiAt(&fullStore, end), f.key, end, reqs)
	close(stopLoad)
	during := <-loadDone
	replayed := time.Since(start)
	ref2 := openLoad("http://"+full.Addr()+"/v2", loadPaths, f.key, rate, refDur, time.Now())

	// The session from 14:00 at PREGAO_REPLAY_SLOW (default 60: a minute
	// of the session a second, sixty times a real session's work; 1 is
	// real time, a batch a minute), under the same load.
	slow := "60"
	if v := os.Getenv("PREGAO_REPLAY_SLOW"); v != "" {
		slow = v
	}
	r2, stop2 := serveLive(t, f, f.base, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.FeedFrom, c.Live.Dir = "replay:"+f.session, slow, "14:00", t.TempDir()
	})
	for st := r2.Live.State(); r2.clock.Now().Before(f.day.Time().Add(17 * time.Hour)); st = r2.Live.State() {
		if st.Complete {
			t.Fatal("the replay from 14:00 ended before 14:00")
		}
		time.Sleep(10 * time.Millisecond) // the morning, played as fast as applied
	}
	seq0 := r2.Live.State().Seq
	during2 := openLoad("http://"+r2.Addr()+"/v2", loadPaths, f.key, rate, 2*refDur, time.Now())
	seq2 := r2.Live.State().Seq - seq0
	stop2()

	// The roll.
	next := filepath.Join(t.TempDir(), "next.snap")
	want := rollSnapshot(t, f.fullBundle, f.day, liveDir, next)
	replaceFile(t, next, served)
	if err := r.Reload(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); !r.Live.State().Rolled; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no handover")
		}
	}
	cut := int64(f.day) * 86400
	after := r.Store.View()
	rolled, bad := 0, 0
	for _, x := range want {
		n := 0
		for _, tm := range x.Times {
			if tm >= cut {
				n++
			}
		}
		a, ok := after.Base.Asset(x.Ticker)
		if !ok {
			continue
		}
		got := after.AppendMinutes(nil, a, cut, cut+86399, false)
		for i := 1; i < len(got); i++ {
			if got[i].Time <= got[i-1].Time {
				bad++
			}
		}
		if len(got) != n {
			t.Errorf("%s: %d minutes of the session after the roll, the session had %d", x.Ticker, len(got), n)
		}
		rolled++
	}

	failed := 0
	lat := func(s []loadSample) []time.Duration {
		var d []time.Duration
		for _, x := range s {
			if !x.ok {
				failed++
			}
			d = append(d, x.lat)
		}
		return d
	}
	var quiet []loadSample // the samples of the 300× replay outside the comparisons
	for _, x := range during {
		in := false
		for _, w := range busy {
			in = in || x.at >= w.from && x.at < w.to
		}
		if !in {
			quiet = append(quiet, x)
		}
	}
	d, q, d2, l1, l2 := lat(during), lat(quiet), lat(during2), lat(ref1), lat(ref2)
	refP99 := (quantile(l1, .99) + quantile(l2, .99)) / 2
	ratio := func(x []time.Duration) float64 { return float64(quantile(x, .99)) / float64(max(refP99, 1)) }
	t.Logf("replayed %s at %s× in %v: %d comparisons at %d instants, every one equal", f.day, speed, replayed.Round(time.Millisecond), compared, len(samples)+1)
	t.Logf("load %.0f/s: %d requests during the replay, %d during the %s× one, %d before and after without a feed; %d failed", rate, len(d), len(d2), slow, len(l1)+len(l2), failed)
	t.Logf("p50/p99 without a feed %v/%v and %v/%v", quantile(l1, .5), quantile(l1, .99), quantile(l2, .5), quantile(l2, .99))
	t.Logf("p50/p99 during the %s× replay %v/%v (ratio %.2f); outside its comparisons %v/%v (ratio %.2f)", speed,
		quantile(d, .5), quantile(d, .99), ratio(d), quantile(q, .5), quantile(q, .99), ratio(q))
	t.Logf("p50/p99 during the %s× replay from 14:00 (%d batches in %v) %v/%v (ratio %.2f, target ≤ 1.10)", slow, seq2, 2*refDur,
		quantile(d2, .5), quantile(d2, .99), ratio(d2))
	t.Logf("after the roll: %d tickers' minutes checked, %d out of order", rolled, bad)
	if failed > 0 {
		t.Errorf("%d requests failed", failed)
	}
	if bad > 0 || rolled == 0 {
		t.Errorf("after the roll: %d minutes out of order or twice, %d tickers", bad, rolled)
	}
}

// replayRequests are the answers TestReplayUnderLoad compares.
func replayRequests(tickers []string) [][3]string {
	var reqs [][3]string
	add := func(method, path, body string) { reqs = append(reqs, [3]string{method, path, body}) }
	for i, tk := range tickers {
		if i%25 != 0 {
			continue
		}
		for _, q := range []string{"type=current", "type=current&adjusted=true", "type=historical&interval=60", "type=historical&interval=900",
			"type=historical", "type=chart"} {
			add("GET", "/v2/quotes/"+tk+"?"+q, "")
		}
	}
	for lo := 0; lo < len(tickers); lo += 500 {
		add("POST", "/v2/quotes", `{"type":"current","tickers":["`+strings.Join(tickers[lo:min(lo+500, len(tickers))], `","`)+`"]}`)
	}
	add("GET", "/v2/indexes/IBOV/highs?limit=50", "")
	add("GET", "/v2/indexes/IBOV/lows?limit=50", "")
	add("GET", "/v2/stocks/variations?limit=50", "")
	add("POST", "/v2/screener", `{"primaryOnly":false,"limit":500}`)
	add("POST", "/v2/screener", `{"sort":[{"by":"droplet:PRICE_TO_EARNINGS","order":"desc"}],"filters":[{"type":"droplet","id":"DIVIDEND_YIELD","op":">=","value":0}],"limit":200}`)
	add("POST", "/v2/screener", `{"sort":[{"by":"droplet:MARKET_CAP"}],"filters":[{"type":"close_price","op":">","value":10}],"limit":200}`)
	return reqs
}

// compareAPIs asks both APIs every request and fails on the first
// difference; it returns the number of answers compared.
func compareAPIs(t *testing.T, live, full *httpapi.API, key string, at time.Time, reqs [][3]string) int {
	t.Helper()
	for _, q := range reqs {
		var body [2]string
		var code [2]int
		for i, api := range []*httpapi.API{live, full} {
			req := httptest.NewRequest(q[0], q[1], strings.NewReader(q[2]))
			req.Header.Set("Authorization", "Bearer "+key)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, req)
			body[i], code[i] = w.Body.String(), w.Code
		}
		if code[1] != 200 || code[0] != code[1] || body[0] != body[1] {
			i := 0
			for i < len(body[0]) && i < len(body[1]) && body[0][i] == body[1][i] {
				i++
			}
			from := max(0, i-200)
			t.Fatalf("at %s: %s %s %.60s\nlive %d …%.400s\nfull %d …%.400s", at.UTC().Format(time.RFC3339), q[0], q[1], q[2],
				code[0], body[0][min(from, len(body[0])):], code[1], body[1][min(from, len(body[1])):])
		}
	}
	return len(reqs)
}

// openLoadUntil is openLoad until stop is closed; samples are timed from
// start.
func openLoadUntil(base string, paths []string, key string, rate float64, start time.Time, stop <-chan struct{}) []loadSample {
	var out []loadSample
	for {
		select {
		case <-stop:
			return out
		default:
		}
		t0 := time.Now()
		for _, x := range openLoad(base, paths, key, rate, 2*time.Second, t0) {
			x.at += t0.Sub(start) // from start, as the comparisons' windows
			out = append(out, x)
		}
	}
}
