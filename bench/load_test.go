package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/yieldpoint"
)

func TestLoadRefusesRemote(t *testing.T) {
	if _, err := Load(context.Background(), LoadConfig{URL: "http://example.com/", Requests: 1}); err == nil {
		t.Error("a non-loopback address was accepted")
	}
}

// The latency on the wire is the time to the kernel's receipt of the
// answer's last byte: at least what the server took, at most what the
// client saw. The server answers a first part, waits 30 ms, then the
// rest; the client's threads are not delayed here, so the two figures
// differ by the client's read alone.
func TestLoadWire(t *testing.T) {
	if _, ok := rxStampDialer(); !ok {
		t.Skip("the kernel's receive times are read on Linux only")
	}
	const wait = 30 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first part "))
		w.(http.Flusher).Flush()
		time.Sleep(wait)
		w.Write(bytes.Repeat([]byte("x"), 64<<10))
	}))
	defer srv.Close()
	res, err := Load(context.Background(), LoadConfig{URL: srv.URL + "/", Requests: 12, Concurrency: 3, Wire: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Requests != 12 || len(res.Wire) != 12 {
		t.Fatalf("%v: %d on the wire", res, len(res.Wire))
	}
	for i, w := range res.Wire {
		if w < wait || w > res.Latencies[i] {
			t.Errorf("answer %d on the wire in %v: want from %v to %v (the client's)", i, w, wait, res.Latencies[i])
		}
	}
	res, err = Load(context.Background(), LoadConfig{URL: srv.URL + "/", Requests: 2})
	if err != nil || res.Wire != nil {
		t.Errorf("without Wire: %v, %v on the wire", err, res.Wire)
	}
}

// A request's arrival is when the kernel received its last segment: a
// request whose head comes in two parts 30 ms apart waits from the
// second, not the first.
func TestTimedHandlerQueued(t *testing.T) {
	if _, ok := rxStampDialer(); !ok {
		t.Skip("the kernel's receive times are read on Linux only")
	}
	tw := &timedHandler{h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	ts := rxServer(tw)
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n"))
	time.Sleep(30 * time.Millisecond)
	c.Write([]byte("\r\n"))
	if _, err := c.Read(make([]byte, 512)); err != nil {
		t.Fatal(err)
	}
	light, queued := tw.take()
	if len(light) != 1 || len(queued) != 1 || queued[0] < 0 || queued[0] >= 20*time.Millisecond {
		t.Errorf("handled %v, queued %v: want one request queued from 0 to 20 ms", light, queued)
	}
}

// BenchmarkLoadIndexHighs runs a short loopback load (PREGAO_LOAD=1) over
// real HTTP connections and logs p50/p99 and requests per second.
func BenchmarkLoadIndexHighs(b *testing.B) {
	if os.Getenv("PREGAO_LOAD") == "" {
		b.Skip("set PREGAO_LOAD=1 to run the loopback load")
	}
	a, _ := setup(b)
	srv := httptest.NewServer(a)
	defer srv.Close()
	for i := 0; i < b.N; i++ {
		res, err := Load(context.Background(), LoadConfig{URL: srv.URL + "/v2/indexes/IBOV/highs", Key: benchKey, Requests: 20000, Duration: 10 * time.Second, Concurrency: 8})
		if err != nil {
			b.Fatal(err)
		}
		b.Log(res)
	}
}

// BenchmarkFairShare (PREGAO_LOAD=1) serves, over loopback HTTP, a light
// key at 20 requests a second (a company's detail with its market cap,
// computed each time: the answer cache is off) alone, then beside a heavy
// key's 4 connections of costly requests, with the admission on (the
// default) and off, alternately for PREGAO_FAIR_ROUNDS rounds (default
// 3) of PREGAO_FAIR_SECONDS (default 20) per phase. Both clients run as
// processes of their own (this test binary, TestLoadClient), the heavy
// one at the lowest CPU priority (nice 19), so that reading its answers
// (185 MB each for the total return) is not work the server's cores do
// for it, as it is not when the client is another machine. It logs the
// light key's p50 and p99 (over every round of a phase) and the heavy
// key's answers, and fails when, admission on, the light key's p99 beside
// the heavy key is over 1.5 times its p99 alone, or a heavy request got a
// 5xx. PREGAO_FAIR_HEAVY=screener-as_of or total-return-500x20y runs one
// kind of heavy request; PREGAO_FAIR_HEAVY_KEYS=2 runs two heavy keys
// (more keys than cores: each has one slot). PREGAO_FAIR_CONFIGS lists
// the server's configurations (default admission,no-admission;
// admission-slice is admission with the server's threads asking the
// kernel for 0.1 ms time slices, Linux; admission-noyield is admission
// with the computations' yield points off, see internal/yieldpoint;
// admission-spare is admission with one Go processor more than its
// slots, so that one is free to take the network's readiness;
// admission-idle is admission with each heavy request served on a
// thread of its own under Linux's SCHED_IDLE policy, which any waking
// thread preempts). PREGAO_FAIR_CLIENT_CPUS runs both clients on those
// CPUs only (taskset's list, Linux: "1").
//
// On Linux it also logs the light key's latency on the wire: from the
// request's start to the kernel's receipt of the answer's last byte in
// the light client's socket (LoadConfig.Wire), which leaves out the
// light client's own wait for a CPU to read it, as a client on another
// machine does not share the server's cores; and, per round, the light
// requests' time from the kernel's receipt of the request at the
// server's socket to the handler's start (timedHandler, rxServer).
//
// Each client runs in a session of its own, the heavy one's scheduling
// group (Linux's autogroup) at the lowest priority too. On a host shared
// with other work, the light key's tail is then the host's: the heavy
// request's core counts against the server's group, so the light
// request's thread, waking on the other core, waits behind the other
// groups' processes, which it does not when the server has the host to
// itself. PREGAO_FAIR_DEDICATED=1 (the benchmark then leads a session of
// its own) stands in for a dedicated host: the server's group and the
// light client's run at nice -10 (the host's other work keeps running,
// at a lower weight).
//
// Where the light key's time goes: each phase also logs the light
// requests' time in the server's handler (p50/p99), the Go scheduler's
// latency over the phase (runtime/metrics /sched/latencies:seconds: how
// long goroutines waited runnable for a processor), and how long the
// process's threads waited for a CPU, as the kernel counts it (Linux:
// /proc/self/task/*/schedstat; the mean per time slice). PREGAO_FAIR_TRACE=FILE writes an execution trace of the
// first round's "beside" phase of each configuration (FILE.CONFIG.trace),
// each request a task named "light" or "heavy", for go tool trace.
func BenchmarkFairShare(b *testing.B) {
	if os.Getenv("PREGAO_LOAD") == "" {
		b.Skip("set PREGAO_LOAD=1 to run the loopback load")
	}
	dedicated := os.Getenv("PREGAO_FAIR_DEDICATED") != ""
	if dedicated {
		if !sessionLeader() && newSession() != nil {
			b.Fatal("PREGAO_FAIR_DEDICATED: start the benchmark under setsid, so that its scheduling group is its own")
		}
		if err := groupPriority(-10); err != nil {
			b.Fatal("PREGAO_FAIR_DEDICATED:", err)
		}
	}
	lightGroup := 0
	if dedicated {
		lightGroup = -10
	}
	_, d := setup(b)
	rounds := envInt("PREGAO_FAIR_ROUNDS", 3)
	phase := time.Duration(envInt("PREGAO_FAIR_SECONDS", 20)) * time.Second
	asOf := d.LastSession().Time().AddDate(-1, 0, 0).Format(time.DateOnly)
	end := d.LastSession()
	start := engine.MakeDate(end.Time().Year()-20, end.Time().Month(), end.Time().Day())
	heavies := []struct{ name, path, body string }{
		{"screener-as_of", "/v2/screener", `{"as_of":"` + asOf + `","primaryOnly":false,"filters":[{"type":"droplet","id":"PRICE_TO_EARNINGS","op":"between","min":0,"max":30}],"sort":[{"by":"droplet:DIVIDEND_YIELD","order":"desc"}]}`},
		{"total-return-500x20y", "/v2/quotes/total-return", quotesBody(b, 500, fmt.Sprintf(`,"start_date":"%s","end_date":"%s"`, start, end))},
	}
	if h := os.Getenv("PREGAO_FAIR_HEAVY"); h != "" {
		heavies = slices.DeleteFunc(heavies, func(x struct{ name, path, body string }) bool { return x.name != h })
	}
	light := "/v2/companies/" + d.Screener().Assets[d.Screener().ByVolume[3]].Ticker + "?show_market_cap=true"
	for i := 0; i < b.N; i++ {
		for _, h := range heavies {
			type result struct {
				alone, beside         []time.Duration
				wireAlone, wireBeside []time.Duration // on the wire (LoadConfig.Wire)
				heavy                 LoadResult
			}
			res := map[string]*result{}
			names := []string{"admission", "no-admission"}
			if c := os.Getenv("PREGAO_FAIR_CONFIGS"); c != "" {
				names = strings.Split(c, ",")
			}
			sliced := false // a -slice configuration's slices are set
			for round := range rounds {
				for _, name := range names { // alternately, round by round
					srv := api
					if strings.HasPrefix(name, "no-admission") {
						srv = apiFree
					}
					procs := runtime.GOMAXPROCS(0)
					if strings.HasSuffix(name, "-spare") {
						// One Go processor more than the slots: one is
						// free to take the network's readiness while the
						// slots compute.
						srv = apiSpare
						runtime.GOMAXPROCS(procs + 1)
					}
					if strings.HasSuffix(name, "-slice") {
						if err := processSlice(100 * time.Microsecond); err != nil {
							b.Fatal("slice:", err)
						}
						sliced = true
					} else if sliced { // the kernel's default again
						if err := processSlice(0); err != nil {
							b.Fatal("slice:", err)
						}
						sliced = false
					}
					if strings.HasSuffix(name, "-noyield") {
						yieldpoint.SetProcs(1 << 30)
					}
					r := res[name]
					if r == nil {
						r = &result{}
						res[name] = r
					}
					tw := &timedHandler{h: srv, idle: strings.HasSuffix(name, "-idle")}
					ts := rxServer(tw)
					s0, k0 := schedLatencies(), threadDelay()
					a := runClient(b, clientConfig{URL: ts.URL + light, Key: benchKeyLight, Rate: 20, Concurrency: 4, Duration: phase, Group: lightGroup, Wire: true})
					sa, ka := schedLatencies().sub(s0), threadDelay().sub(k0)
					la, qa := tw.take()
					r.alone = append(r.alone, a.Latencies...)
					heavyKeys := []string{benchKey, benchKeyHeavy2}[:envInt("PREGAO_FAIR_HEAVY_KEYS", 1)]
					hc := make(chan clientResult, len(heavyKeys))
					for _, key := range heavyKeys {
						go func() {
							hc <- runClient(b, clientConfig{URL: ts.URL + h.path, Method: "POST", Body: h.body, Key: key, Concurrency: 4, Duration: phase + 4*time.Second, Nice: true, Group: 19})
						}()
					}
					time.Sleep(2 * time.Second) // the heavy key at work first
					tracing := false
					if f := os.Getenv("PREGAO_FAIR_TRACE"); f != "" && round == 0 {
						tf, err := os.Create(f + "." + h.name + "." + name + ".trace")
						if err != nil {
							b.Fatal(err)
						}
						defer tf.Close()
						if err := trace.Start(tf); err != nil {
							b.Fatal(err)
						}
						tw.tasks.Store(true)
						tracing = true
					}
					tw.take()
					s1, k1 := schedLatencies(), threadDelay()
					w := runClient(b, clientConfig{URL: ts.URL + light, Key: benchKeyLight, Rate: 20, Concurrency: 4, Duration: phase, Group: lightGroup, Wire: true})
					sb, kb := schedLatencies().sub(s1), threadDelay().sub(k1)
					lb, qb := tw.take()
					if tracing {
						trace.Stop()
						tw.tasks.Store(false)
					}
					var hr clientResult
					for range heavyKeys {
						x := <-hc
						hr.Requests += x.Requests
						hr.Errors += x.Errors
						hr.Refused += x.Refused
						hr.Failed += x.Failed
					}
					ts.Close()
					if strings.HasSuffix(name, "-slice") {
						processSlice(0)
					}
					yieldpoint.SetProcs(0)
					runtime.GOMAXPROCS(procs)
					b.Logf("%s, %s, round: light from arrival to handler p50/p99 %v/%v alone, %v/%v beside", h.name, name, pct(qa, 50), pct(qa, 99), pct(qb, 50), pct(qb, 99))
					b.Logf("%s, %s, round: light in handler p50/p99 %v/%v alone, %v/%v beside; Go scheduling latency p50/p99/p99.9 %v alone, %v beside; waiting for a CPU: the server's threads %v alone, %v beside, the light client's %v alone, %v beside",
						h.name, name, pct(la, 50), pct(la, 99), pct(lb, 50), pct(lb, 99), sa, sb, ka, kb, a.Kernel, w.Kernel)
					r.beside = append(r.beside, w.Latencies...)
					r.wireAlone, r.wireBeside = append(r.wireAlone, a.Wire...), append(r.wireBeside, w.Wire...)
					b.Logf("%s, %s, round: light p99 %v alone, %v beside (%.2fx); on the wire %v alone, %v beside (%.2fx)", h.name, name,
						pct(a.Latencies, 99), pct(w.Latencies, 99), float64(pct(w.Latencies, 99))/float64(max(pct(a.Latencies, 99), 1)),
						pct(a.Wire, 99), pct(w.Wire, 99), float64(pct(w.Wire, 99))/float64(max(pct(a.Wire, 99), 1)))
					r.heavy.Requests += hr.Requests
					r.heavy.Errors += hr.Errors
					r.heavy.Refused += hr.Refused
					r.heavy.Failed += hr.Failed
					if a.Errors+w.Errors > 0 {
						b.Errorf("%s %s: light key errors: alone %v; beside %v", h.name, name, a.LoadResult, w.LoadResult)
					}
				}
			}
			for _, name := range names {
				r := res[name]
				pa, pb := pct(r.alone, 99), pct(r.beside, 99)
				ratio := float64(pb) / float64(pa)
				lo, hi := ratioInterval(r.alone, r.beside, 99)
				b.Logf("%s, %s: light p50 %v alone, %v beside; p99 %v alone, %v beside (%.2fx; 90 %% bootstrap interval %.2f-%.2fx); heavy %d answers (%d 429, %d 5xx, %d other errors)",
					h.name, name, pct(r.alone, 50), pct(r.beside, 50), pa, pb, ratio, lo, hi, r.heavy.Requests, r.heavy.Refused, r.heavy.Failed, r.heavy.Errors-r.heavy.Refused-r.heavy.Failed)
				if len(r.wireAlone) > 0 && len(r.wireBeside) > 0 {
					wa, wb := pct(r.wireAlone, 99), pct(r.wireBeside, 99)
					wlo, whi := ratioInterval(r.wireAlone, r.wireBeside, 99)
					b.Logf("%s, %s: light on the wire p50 %v alone, %v beside; p99 %v alone, %v beside (%.2fx; 90 %% bootstrap interval %.2f-%.2fx)",
						h.name, name, pct(r.wireAlone, 50), pct(r.wireBeside, 50), wa, wb, float64(wb)/float64(wa), wlo, whi)
				}
				if !strings.HasPrefix(name, "no-admission") && (ratio > 1.5 || r.heavy.Failed > 0) {
					b.Errorf("%s with admission: light p99 %.2fx alone (want ≤ 1.5), heavy 5xx %d", h.name, ratio, r.heavy.Failed)
				}
			}
		}
	}
}

// clientConfig is a LoadConfig for TestLoadClient, passed in the
// environment; Nice runs it at the lowest CPU priority, and Group, when
// not 0, sets its session's scheduling group's nice value.
type clientConfig struct {
	URL, Method, Body, Key string
	Rate                   float64
	Concurrency            int
	Duration               time.Duration
	Nice                   bool
	Group                  int
	Wire                   bool // measure the answers on the wire too (LoadConfig.Wire)
}

// runClient runs cfg in a process of its own (TestLoadClient) and returns
// its result.
// clientResult is a load client's result and the time its threads
// waited for a CPU, as the kernel counts it.
type clientResult struct {
	LoadResult
	Kernel kernelDelay
}

func runClient(b *testing.B, cfg clientConfig) clientResult {
	b.Helper()
	js, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PREGAO_LOAD_CLIENT="+string(js))
	if cpus := os.Getenv("PREGAO_FAIR_CLIENT_CPUS"); cpus != "" {
		cmd = pinned(cmd, cpus)
	}
	ownSession(cmd)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load client: %v: %s", err, out)
	}
	var r clientResult
	line := out[bytes.LastIndex(out, []byte("\nRESULT "))+len("\nRESULT "):]
	if err := json.Unmarshal(line[:bytes.IndexByte(line, '\n')], &r.LoadResult); err != nil {
		b.Fatalf("load client: %v: %s", err, out)
	}
	if i := bytes.LastIndex(out, []byte("\nKERNEL ")); i >= 0 {
		var wait int64
		fmt.Sscan(string(out[i+len("\nKERNEL "):]), &wait, &r.Kernel.slices)
		r.Kernel.wait = time.Duration(wait)
	}
	return r
}

// TestLoadClient is the client process of BenchmarkFairShare: it runs the
// load PREGAO_LOAD_CLIENT describes and prints its result.
func TestLoadClient(t *testing.T) {
	js := os.Getenv("PREGAO_LOAD_CLIENT")
	if js == "" {
		t.Skip("a load client of BenchmarkFairShare")
	}
	var cfg clientConfig
	if err := json.Unmarshal([]byte(js), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Nice {
		if err := lowestPriority(); err != nil {
			t.Log("nice:", err)
		}
	}
	if cfg.Group != 0 {
		if err := groupPriority(cfg.Group); err != nil {
			t.Log("group priority:", err)
		}
	}
	k0 := threadDelay()
	r, err := Load(context.Background(), LoadConfig{URL: cfg.URL, Method: cfg.Method, Body: []byte(cfg.Body), Key: cfg.Key, Rate: cfg.Rate, Concurrency: cfg.Concurrency, Duration: cfg.Duration, Wire: cfg.Wire})
	if err != nil {
		t.Fatal(err)
	}
	k := threadDelay().sub(k0)
	out, _ := json.Marshal(r)
	fmt.Printf("\nKERNEL %d %d\nRESULT %s\n", k.wait, k.slices, out)
}

// pct returns the p-th percentile of latencies.
func pct(lats []time.Duration, p int) time.Duration {
	if len(lats) == 0 {
		return 0
	}
	s := slices.Clone(lats)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// ratioInterval returns a 90 % bootstrap interval of the ratio of the
// p-th percentiles pct(beside, p) / pct(alone, p): each side resampled
// with replacement 2,000 times (a fixed seed: the same latencies give
// the same interval). With 20 requests a second for a minute a side,
// the p99 is the 12th slowest request of each, and rounds differ by
// 2 to 4 times: the interval says what the pooled figure can tell.
func ratioInterval(alone, beside []time.Duration, p int) (lo, hi float64) {
	if len(alone) == 0 || len(beside) == 0 {
		return 0, 0
	}
	const n = 2000
	rng := rand.New(rand.NewPCG(1, 2))
	alone, beside = slices.Sorted(slices.Values(alone)), slices.Sorted(slices.Values(beside))
	ratios := make([]float64, n)
	var top []int
	for i := range ratios {
		ratios[i] = float64(resampledPct(rng, beside, p, &top)) / float64(max(resampledPct(rng, alone, p, &top), 1))
	}
	slices.Sort(ratios)
	return ratios[n*5/100], ratios[n*95/100]
}

// resampledPct returns the p-th percentile (as pct takes it) of a resample
// with replacement of sorted: the element at the smallest of the
// len(sorted)-rank largest indices drawn, kept in *top (ascending), so
// that a high percentile costs no sort.
func resampledPct(rng *rand.Rand, sorted []time.Duration, p int, top *[]int) time.Duration {
	m := len(sorted)
	k := m - min(m-1, m*p/100) // the draws at or above the percentile's rank
	t := (*top)[:0]
	for range m {
		x := rng.IntN(m)
		if len(t) == k && x <= t[0] {
			continue
		}
		at, _ := slices.BinarySearch(t, x)
		if len(t) < k {
			t = slices.Insert(t, at, x)
			continue
		}
		copy(t[:at-1], t[1:at]) // drop the smallest, x in its place
		t[at-1] = x
	}
	*top = t
	return sorted[t[0]]
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// timedHandler records the time its GET requests (the light key's) spend
// in the handler and, where the kernel's receive times are read
// (rxServer), from the request's arrival to the handler's start; when
// tasks is set, it makes each request a trace task.
type timedHandler struct {
	h      http.Handler
	tasks  atomic.Bool
	mu     sync.Mutex
	light  []time.Duration
	queued []time.Duration // from the kernel's receipt of the request to the handler's start
	idle   bool            // serve the heavy requests under SCHED_IDLE (idleThread)
}

// connKey holds a request's connection in its context (rxServer).
type connKey struct{}

// rxServer starts an httptest server of h whose connections record the
// kernel's receive times (rxStamped), each request's connection in its
// context under connKey.
func rxServer(h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = rxListener{ts.Listener}
	ts.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) }
	ts.Start()
	return ts
}

// rxListener accepts connections that record the kernel's receive times.
type rxListener struct{ net.Listener }

func (l rxListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return rxStamped(c), nil
}

func (t *timedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if t.tasks.Load() {
		kind := "heavy"
		if r.Method == http.MethodGet {
			kind = "light"
		}
		ctx, task := trace.NewTask(r.Context(), kind)
		defer task.End()
		r = r.WithContext(ctx)
	}
	if r.Method != http.MethodGet {
		if t.idle {
			if err := idleThread(func() { t.h.ServeHTTP(w, r) }); err != nil {
				panic(err) // the heavy key's answers count it as a failure
			}
			return
		}
		t.h.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	var queued time.Duration
	arrived := false
	if c, ok := r.Context().Value(connKey{}).(*rxConn); ok {
		var at time.Time
		if at, arrived = c.received(); arrived {
			queued = start.Sub(at)
		}
	}
	t.h.ServeHTTP(w, r)
	d := time.Since(start)
	t.mu.Lock()
	t.light = append(t.light, d)
	if arrived {
		t.queued = append(t.queued, queued)
	}
	t.mu.Unlock()
}

// take returns the durations recorded since the last take: in the
// handler, and from arrival to the handler.
func (t *timedHandler) take() (light, queued []time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	light, queued = t.light, t.queued
	t.light, t.queued = nil, nil
	return light, queued
}

// schedHist is the runtime's histogram of goroutine scheduling latencies.
type schedHist struct {
	counts  []uint64
	buckets []float64
}

func schedLatencies() schedHist {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	h := s[0].Value.Float64Histogram()
	return schedHist{counts: slices.Clone(h.Counts), buckets: h.Buckets}
}

// sub returns the latencies counted in h and not in old.
func (h schedHist) sub(old schedHist) schedHist {
	d := schedHist{counts: slices.Clone(h.counts), buckets: h.buckets}
	for i := range d.counts {
		if i < len(old.counts) {
			d.counts[i] -= old.counts[i]
		}
	}
	return d
}

// quantile returns the upper bound of the bucket holding the q-th
// quantile.
func (h schedHist) quantile(q float64) time.Duration {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	want := uint64(q * float64(n))
	var acc uint64
	for i, c := range h.counts {
		acc += c
		if acc > want {
			return time.Duration(h.buckets[i+1] * 1e9)
		}
	}
	return 0
}

func (h schedHist) String() string {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return fmt.Sprintf("%v/%v/%v of %d", h.quantile(0.5), h.quantile(0.99), h.quantile(0.999), n)
}

// kernelDelay is the time the process's threads waited on a CPU's run
// queue and the time slices they ran, as Linux counts them.
type kernelDelay struct {
	wait   time.Duration
	slices int64
}

func (k kernelDelay) sub(old kernelDelay) kernelDelay {
	return kernelDelay{k.wait - old.wait, k.slices - old.slices}
}

func (k kernelDelay) String() string {
	if k.slices <= 0 {
		return "(unknown)"
	}
	return fmt.Sprintf("%v over %d slices (%v each)", k.wait.Round(time.Microsecond), k.slices, (k.wait / time.Duration(k.slices)).Round(100*time.Nanosecond))
}

// threadDelay sums /proc/self/task/*/schedstat (running ns, waiting ns,
// slices); zero where there is none. Threads that ended are not counted.
func threadDelay() kernelDelay {
	var k kernelDelay
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var run, wait, n int64
		if _, err := fmt.Sscan(string(b), &run, &wait, &n); err == nil {
			k.wait += time.Duration(wait)
			k.slices += n
		}
	}
	return k
}

// ratioInterval brackets the ratio of the p99s: near 1 for the same
// latencies, near 2 for latencies doubled, and wider for fewer requests.
func TestRatioInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int, scale float64) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(scale * float64(time.Millisecond) * rng.ExpFloat64())
		}
		return out
	}
	for _, c := range []struct {
		n     int
		scale float64
	}{{2000, 1}, {2000, 2}, {700, 2}} {
		lo, hi := ratioInterval(draw(c.n, 1), draw(c.n, c.scale), 99)
		if lo > c.scale || hi < c.scale || hi/lo > 3 {
			t.Errorf("%d requests a side, beside %gx alone: interval %.2f-%.2f", c.n, c.scale, lo, hi)
		}
		t.Logf("%d requests a side, beside %gx alone: interval %.2f-%.2f", c.n, c.scale, lo, hi)
	}
	a, b := ratioInterval(draw(700, 1), draw(700, 1), 99)
	c, d := ratioInterval(draw(4000, 1), draw(4000, 1), 99)
	if d-c >= b-a {
		t.Errorf("interval of 4,000 requests a side %.2f-%.2f not narrower than of 700 %.2f-%.2f", c, d, a, b)
	}
	if lo, hi := ratioInterval(nil, draw(10, 1), 99); lo != 0 || hi != 0 {
		t.Errorf("no latency alone: %v-%v", lo, hi)
	}
}
