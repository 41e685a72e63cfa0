package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/httpapi"
)

// TestLiveReplicas (make live-replica-test; PREGAO_REPLICA_BIN the
// pregao binary, PREGAO_NATS_BIN a nats-server binary, PREGAO_REPLAY_DIR
// make replay-data's folder, nginx on PATH) is issue 28's proof: 3 NATS
// JetStream nodes and 3 `pregao serve --live nats://…` replicas of the
// held-back demo snapshot on loopback behind nginx; `pregao feed` replays
// the held-back session through the stream (3 copies) at
// PREGAO_LIVE_SPEED under an open-loop load of PREGAO_LIVE_RATE requests
// a second through nginx, while the test publishes every batch a second
// time (the same message: the stream drops it) and a third time without
// its deduplication id (stored: the replicas skip it). Mid-session one
// NATS node and one replica are killed (SIGKILL) and the replica is
// restarted. It passes when no request through nginx fails, the
// restarted replica is ready within 10 s of the stream answering again
// (NATS's election of another leader, when the killed node led the
// stream, is the cluster's time, not the replica's) and at the head of
// the stream,
// and after the session the 3 replicas answer 200 fixed requests
// byte-identically (bodies and ETags) and as a server of the full demo
// snapshot does (bodies). A fourth replica started after the session
// measures the catch-up of a whole session. The summary line goes to
// PREGAO_LIVE_SUMMARY when set; PREGAO_LIVE_WORK keeps the processes'
// logs and stores in that folder.
func TestLiveReplicas(t *testing.T) {
	bin, natsBin, dir := os.Getenv("PREGAO_REPLICA_BIN"), os.Getenv("PREGAO_NATS_BIN"), os.Getenv("PREGAO_REPLAY_DIR")
	if bin == "" || natsBin == "" || dir == "" {
		t.Skip("set PREGAO_REPLICA_BIN, PREGAO_NATS_BIN and PREGAO_REPLAY_DIR (make live-replica-test)")
	}
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install nginx)")
	}
	speed, rate := "600", 300.0
	if v := os.Getenv("PREGAO_LIVE_SPEED"); v != "" {
		speed = v
	}
	if v := os.Getenv("PREGAO_LIVE_RATE"); v != "" {
		rate, _ = strconv.ParseFloat(v, 64)
	}
	base, full, session := filepath.Join(dir, "base.snap"), filepath.Join(dir, "full.snap"), filepath.Join(dir, "session")
	work := t.TempDir()
	if w := os.Getenv("PREGAO_LIVE_WORK"); w != "" {
		// The processes' logs and the NATS stores kept for a look.
		work = w
		os.RemoveAll(work)
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keys := filepath.Join(work, "keys.json")
	var key string
	if err := httpapi.UpdateKeysFile(keys, func(f *httpapi.KeysFile) (err error) {
		key, err = f.AddKey("live-replicas", httpapi.PlanDelayed, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	start := func(name string, args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		log, _ := os.Create(filepath.Join(work, name+".log"))
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			p.Process.Signal(os.Interrupt)
		}
		for _, p := range procs {
			done := make(chan struct{})
			go func() { p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				p.Process.Kill()
			}
		}
	}()

	// 3 NATS nodes, one cluster.
	var clients, routes []string
	for range 3 {
		clients, routes = append(clients, freeAddr(t)), append(routes, "nats://"+freeAddr(t))
	}
	natsURL := "nats://" + strings.Join(clients, ",nats://")
	nodes := make([]*exec.Cmd, 3)
	for i := range 3 {
		conf := fmt.Sprintf("server_name: n%d\nlisten: %q\njetstream { store_dir: %q }\ncluster { name: pregao, listen: %q, routes: [%s] }\n",
			i, clients[i], filepath.Join(work, "nats"+strconv.Itoa(i)), strings.TrimPrefix(routes[i], "nats://"), `"`+strings.Join(routes, `", "`)+`"`)
		path := filepath.Join(work, "nats"+strconv.Itoa(i)+".conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		nodes[i] = start("nats"+strconv.Itoa(i), natsBin, "-c", path)
		procs = append(procs, nodes[i])
	}
	b, err := bus.Open(bus.Config{URL: natsURL, Replicas: 3, Name: "live-replica-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		sctx, c := context.WithTimeout(ctx, 5*time.Second)
		_, err := b.EnsureStream(sctx)
		c()
		if err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the NATS cluster has no JetStream after 60 s: %v", err)
		}
	}

	// 3 replicas behind nginx.
	addrs := make([]string, 3)
	replicas := make([]*exec.Cmd, 3)
	serve := func(i int, snap string) *exec.Cmd {
		cmd := start("replica"+strconv.Itoa(i)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), bin, "serve", "--snapshot", snap, "--keys", keys,
			"--addr", addrs[i], "--live", natsURL, "--access-log", "off")
		procs = append(procs, cmd)
		return cmd
	}
	for i := range 3 {
		addrs[i] = freeAddr(t)
		replicas[i] = serve(i, base)
	}
	for _, a := range addrs {
		waitReady(t, "http://"+a+"/readyz", waitBound)
	}
	lb := freeAddr(t)
	conf := fmt.Sprintf(`pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
worker_processes 1;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path %[1]s/body; proxy_temp_path %[1]s/proxy; fastcgi_temp_path %[1]s/fcgi; uwsgi_temp_path %[1]s/uwsgi; scgi_temp_path %[1]s/scgi;
  upstream pregao { server %[2]s max_fails=0; server %[3]s max_fails=0; server %[4]s max_fails=0; keepalive 64; }
  server {
    listen %[5]s;
    location / {
      proxy_pass http://pregao;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_next_upstream error timeout http_502 http_503;
    }
  }
}
`, work, addrs[0], addrs[1], addrs[2], lb)
	if err := os.WriteFile(filepath.Join(work, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ng := start("nginx", nginx, "-p", work, "-c", filepath.Join(work, "nginx.conf"), "-g", "daemon off;")
	procs = append(procs, ng)
	waitReady(t, "http://"+lb+"/readyz", waitBound)

	// Every batch published again: the same message (dropped by the
	// stream) and one without its deduplication id (stored; the replicas
	// skip it).
	var dropped, again, notDropped atomic.Int64
	var republished atomic.Uint64 // the last stream sequence the republisher has read
	var repWG sync.WaitGroup
	repCtx, stopRepublish := context.WithCancel(ctx)
	repWG.Go(func() { republish(t, repCtx, natsURL, &dropped, &again, &notDropped, &republished) })

	// The load, the feed, the kills.
	paths := []string{"/v2/indexes/IBOV/highs?limit=10", "/v2/stocks/variations"}
	ds := loadDataset(t, base)
	var tickers []string
	for i := range ds.Assets() {
		if a := &ds.Assets()[i]; a.StockType != engine.ClassMacro {
			tickers = append(tickers, a.Ticker)
		}
	}
	ds = nil
	for i := 0; i < len(tickers) && len(paths) < 40; i += max(1, len(tickers)/38) {
		paths = append(paths, "/v2/quotes/"+tickers[i]+"?type=current")
	}
	t0 := time.Now()
	stopLoad := make(chan struct{})
	loadDone := make(chan []loadSample)
	go func() { loadDone <- openLoadUntil("http://"+lb, paths, key, rate, t0, stopLoad) }()
	feed := start("feed", bin, "feed", "--feed", "replay:"+session, "--feed-speed", speed, "--live", natsURL, "--live-replicas", "3", "--live-dir", filepath.Join(work, "feed"))
	procs = append(procs, feed)

	// Mid-session: a NATS node and a replica killed, the replica restarted.
	waitSeq(t, "http://"+addrs[0], 150, 5*time.Minute)
	nodes[2].Process.Signal(syscall.SIGKILL)
	replicas[2].Process.Signal(syscall.SIGKILL)
	nodes[2].Wait()
	replicas[2].Wait()
	killedAt := time.Since(t0)
	restart := time.Now()
	// The stream answers again once it has a leader: at once, or after
	// NATS's election of another when the killed node led it. That wait
	// is the cluster's; the replica's own time to be ready (its start,
	// the snapshot's load, the catch-up) is counted from when it was
	// restarted and the stream answered.
	streamBack := make(chan time.Time, 1)
	go func() {
		for !streamAnswers(ctx, natsURL) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		streamBack <- time.Now()
	}()
	replicas[2] = serve(2, base)
	waitReady(t, "http://"+addrs[2]+"/readyz", waitBound)
	ready := time.Now()
	var back time.Time
	select {
	case back = <-streamBack:
	case <-time.After(waitBound):
		t.Fatalf("the stream does not answer %v after node n2 was killed", waitBound)
	}
	readyIn, ownReadyIn := ready.Sub(restart), ready.Sub(restart)
	if back.After(restart) {
		ownReadyIn = ready.Sub(back)
	}
	hctx, hc := context.WithTimeout(ctx, waitBound)
	head, _, herr := b.Head(hctx)
	hc()
	rz := readyzStream(t, "http://"+addrs[2])
	t.Logf("at %.1fs: NATS node n2 and replica 2 killed (SIGKILL); replica 2 restarted, ready in %.2fs (%.2fs after the stream answered again, %.2fs after the kill) at stream sequence %v (head %d, %v), pending %v",
		killedAt.Seconds(), readyIn.Seconds(), ownReadyIn.Seconds(), back.Sub(restart).Seconds(), rz["sequence"], head, herr, rz["pending"])
	if ownReadyIn > 10*time.Second {
		t.Errorf("the restarted replica took %v to be ready once the stream answered again, want under 10 s", ownReadyIn)
	}
	// At the head: the head read once the replica said ready is reached
	// within a few seconds. The stream moves on meanwhile (at 600× a
	// second of the machine is 10 minutes of session, several batches,
	// each and its copy without an id 2 messages), and the replica's
	// pending is the one its last delivery carried, so a replica that
	// follows may be a few messages behind when it is asked; one that
	// stays behind does not follow.
	followed := func() bool {
		rz = readyzStream(t, "http://"+addrs[2])
		seq, _ := rz["sequence"].(float64)
		return uint64(seq)+2 >= head
	}
	for end := time.Now().Add(5 * time.Second); herr == nil && !followed() && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if herr != nil || !followed() {
		t.Errorf("the restarted replica does not reach the stream's head of when it said ready within 5 s: %v, head %d (%v)", rz, head, herr)
	}

	// The end of the session: every replica complete, at the same
	// sequence once the republishing stops.
	for i := range 3 {
		waitComplete2(t, "http://"+addrs[i], 20*time.Minute)
	}
	waitUntil(t, "the republisher at the head of the stream", func() bool {
		hctx, hc := context.WithTimeout(ctx, waitBound)
		defer hc()
		head, _, err := b.Head(hctx)
		return err == nil && republished.Load() == head
	})
	stopRepublish()
	repWG.Wait()
	hctx, hc = context.WithTimeout(ctx, waitBound)
	head, _, herr = b.Head(hctx)
	hc()
	if herr != nil {
		t.Fatal(herr)
	}
	for i := range 3 {
		waitSeq(t, "http://"+addrs[i], -int64(head), time.Minute)
	}
	close(stopLoad)
	samples := <-loadDone
	failed := 0
	var lat []time.Duration
	for _, s := range samples {
		if !s.ok {
			failed++
		}
		lat = append(lat, s.lat)
	}
	t.Logf("%d requests at %.0f/s through nginx to 3 replicas, %d failed; p50 %v, p99 %v", len(samples), rate, failed, quantile(lat, .5), quantile(lat, .99))
	t.Logf("republished: %d dropped by the stream as duplicates (%d not dropped), %d stored again without their id (skipped by the replicas)", dropped.Load(), notDropped.Load(), again.Load())
	if failed > 0 {
		t.Errorf("%d requests failed", failed)
	}
	if dropped.Load() == 0 || notDropped.Load() > 0 || again.Load() == 0 {
		t.Errorf("republishing: %d dropped, %d not dropped, %d stored again", dropped.Load(), notDropped.Load(), again.Load())
	}

	// 200 fixed requests: the replicas byte-identical, and as the full
	// snapshot answers.
	fullAddr := freeAddr(t)
	procs = append(procs, start("full", bin, "serve", "--snapshot", full, "--keys", keys, "--addr", fullAddr, "--access-log", "off"))
	waitReady(t, "http://"+fullAddr+"/readyz", waitBound)
	reqs := [][3]string{{"GET", "/v2/stocks/variations", ""}, {"GET", "/v2/indexes/IBOV/highs?limit=10", ""}, {"GET", "/v2/indexes/IBOV/lows?limit=10", ""}}
	for lo := 0; lo < len(tickers) && len(reqs) < 10; lo += 500 {
		var q []string
		for _, tk := range tickers[lo:min(lo+500, len(tickers))] {
			q = append(q, `"`+tk+`"`)
		}
		reqs = append(reqs, [3]string{"POST", "/v2/quotes", `{"type":"current","tickers":[` + strings.Join(q, ",") + `]}`})
	}
	for i, n := 0, 200-len(reqs); i < n; i++ {
		reqs = append(reqs, [3]string{"GET", "/v2/quotes/" + tickers[i*len(tickers)/n] + "?type=current", ""})
	}
	differ := 0
	for _, q := range reqs {
		var codes [4]int
		var etags, bodies [4]string
		for i, a := range []string{addrs[0], addrs[1], addrs[2], fullAddr} {
			codes[i], etags[i], bodies[i] = ask(t, a, key, q)
		}
		same := codes[0] == 200 && codes[1] == codes[0] && codes[2] == codes[0] && etags[1] == etags[0] && etags[2] == etags[0] && bodies[1] == bodies[0] && bodies[2] == bodies[0]
		if !same || codes[3] != 200 || bodies[3] != bodies[0] {
			differ++
			if differ <= 3 {
				t.Errorf("%s %s: replicas %v %q; full %d\n%.300s\n%.300s\n%.300s\nfull %.300s", q[0], q[1], codes[:3], etags[:3], codes[3], bodies[0], bodies[1], bodies[2], bodies[3])
			}
		}
	}

	// A fourth replica catches the whole session up.
	addr4 := freeAddr(t)
	t4 := time.Now()
	procs = append(procs, start("replica3", bin, "serve", "--snapshot", base, "--keys", keys, "--addr", addr4, "--live", natsURL, "--access-log", "off"))
	waitReady(t, "http://"+addr4+"/readyz", waitBound)
	catchUp := time.Since(t4)
	t.Logf("a new replica loaded the snapshot and caught the whole session up (%d messages) in %.2fs", head, catchUp.Seconds())
	for _, a := range addrs {
		if d := readyzStream(t, "http://"+a); d["redeliveries"] == 0.0 {
			t.Errorf("replica %s counted no redelivery: %v", a, d)
		}
	}
	summary := fmt.Sprintf("live replicas: %d requests, %d failed, 3 replicas identical at sequence %d", len(samples)+len(reqs)*4, failed, head)
	if differ > 0 {
		summary = fmt.Sprintf("live replicas: %d requests, %d failed, %d of %d fixed requests differ at sequence %d", len(samples)+len(reqs)*4, failed, differ, len(reqs), head)
	}
	t.Log(summary)
	if p := os.Getenv("PREGAO_LIVE_SUMMARY"); p != "" {
		os.WriteFile(p, []byte(summary+"\n"), 0o644)
	}
}

// republish publishes every batch of the stream again: the same message
// (the stream must drop it: dropped, else notDropped) and one without
// its deduplication id (stored: again). last is the stream sequence of
// the last message it has read and handled.
//
// It reads the stream as the replicas do (engine/session/bus): an
// ordered consumer that delivers nothing for 10 s while the stream holds
// later messages is made again from the next one. The library's ordered
// consumer can retry making itself for good after a node is killed (seen
// here: the republisher stuck while the replicas went on).
func republish(t *testing.T, ctx context.Context, url string, dropped, again, notDropped *atomic.Int64, last *atomic.Uint64) {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		t.Error(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	next := uint64(1)
	for ctx.Err() == nil {
		next = republishFrom(t, ctx, js, next, dropped, again, notDropped, last)
	}
}

// republishFrom is republish's reading from stream sequence next, until
// ctx ends or the consumer stalls; it returns the sequence to go on
// from.
func republishFrom(t *testing.T, ctx context.Context, js jetstream.JetStream, next uint64, dropped, again, notDropped *atomic.Int64, last *atomic.Uint64) uint64 {
	c, err := js.OrderedConsumer(ctx, bus.StreamName, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: next})
	if err != nil {
		time.Sleep(500 * time.Millisecond)
		return next
	}
	it, err := c.Messages()
	if err != nil {
		time.Sleep(500 * time.Millisecond)
		return next
	}
	defer it.Stop()
	quiet := time.Now()
	for {
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		m, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		if ctx.Err() != nil {
			return next
		}
		if err != nil {
			if time.Since(quiet) > 10*time.Second {
				ictx, icancel := context.WithTimeout(ctx, 2*time.Second)
				st, serr := js.Stream(ictx, bus.StreamName)
				icancel()
				if serr == nil && st.CachedInfo().State.LastSeq >= next {
					return next // stalled: made again from next
				}
				quiet = time.Now()
			}
			continue
		}
		quiet = time.Now()
		md, err := m.Metadata()
		if err != nil {
			t.Error(err)
			return next
		}
		next = md.Sequence.Stream + 1
		if m.Headers().Get(nats.MsgIdHdr) == "" {
			last.Store(md.Sequence.Stream)
			continue // one of ours
		}
		same := nats.NewMsg(m.Subject())
		same.Data, same.Header = m.Data(), m.Headers()
		for ack, err := js.PublishMsg(ctx, same); ctx.Err() == nil; ack, err = js.PublishMsg(ctx, same) {
			if err == nil {
				if ack.Duplicate {
					dropped.Add(1)
				} else {
					notDropped.Add(1)
				}
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		bare := nats.NewMsg(m.Subject())
		bare.Data, bare.Header = m.Data(), nats.Header{}
		for k, v := range m.Headers() {
			if k != nats.MsgIdHdr {
				bare.Header[k] = v
			}
		}
		for _, err := js.PublishMsg(ctx, bare); ctx.Err() == nil; _, err = js.PublishMsg(ctx, bare) {
			if err == nil {
				again.Add(1)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		last.Store(md.Sequence.Stream)
	}
}

// streamAnswers reports whether the live stream has a leader that
// answers: a new connection to the cluster at url (a killed node refuses
// it at once) asks for the stream's information.
func streamAnswers(ctx context.Context, url string) bool {
	nc, err := nats.Connect(url, nats.Timeout(time.Second))
	if err != nil {
		return false
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return false
	}
	ictx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = js.Stream(ictx, bus.StreamName)
	return err == nil
}

// ask sends request q to addr and returns the status, ETag and body.
func ask(t *testing.T, addr, key string, q [3]string) (int, string, string) {
	req, _ := http.NewRequest(q[0], "http://"+addr+q[1], strings.NewReader(q[2]))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", q[0], q[1], err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("ETag"), string(body)
}

// readyzLiveOf returns /readyz's live object at base ("": not ready).
func readyzLiveOf(base string) map[string]any {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var r struct {
		Live map[string]any `json:"live"`
	}
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&r) != nil {
		return nil
	}
	return r.Live
}

// readyzStream returns /readyz's live.stream object at base.
func readyzStream(t *testing.T, base string) map[string]any {
	t.Helper()
	lv := readyzLiveOf(base)
	s, _ := lv["stream"].(map[string]any)
	if s == nil {
		t.Errorf("%s/readyz has no live.stream: %v", base, lv)
	}
	return s
}

// waitSeq waits until the replica at base has applied batch n of the
// session (n > 0), or stream sequence -n (n < 0).
func waitSeq(t *testing.T, base string, n int64, within time.Duration) {
	t.Helper()
	var lv map[string]any
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		lv = readyzLiveOf(base)
		s, _ := lv["stream"].(map[string]any)
		switch seq, _ := lv["seq"].(float64); {
		case n > 0 && seq >= float64(n):
			return
		case n < 0 && s != nil && s["sequence"] == float64(-n):
			return
		}
	}
	t.Fatalf("%s: not at %d after %v: %v", base, n, within, lv)
}

// waitComplete2 waits until the replica at base has a complete session.
func waitComplete2(t *testing.T, base string, within time.Duration) {
	t.Helper()
	var lv map[string]any
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if lv = readyzLiveOf(base); lv["complete"] == true {
			return
		}
	}
	t.Fatalf("%s: the session is not complete after %v: %v", base, within, lv)
}
