package httpapi

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/yieldpoint"
)

// The share of one key is the cores divided by the active keys, rounded
// down, at least 1; a key counts for the epoch of its last slot and the
// next one.
func TestAdmissionShare(t *testing.T) {
	ad := newAdmission(Admission{Cores: 4})
	ep := epochOf(time.Now())
	a, b, c, d, e := &keyAdmission{}, &keyAdmission{}, &keyAdmission{}, &keyAdmission{}, &keyAdmission{}
	f := func(want int32) {
		t.Helper()
		if got := ad.share(ep); got != want {
			t.Errorf("share %d, want %d (active %d)", got, want, ad.activeKeys(ep))
		}
	}
	f(4)
	ad.touch(a, ep)
	ad.touch(a, ep) // once per epoch
	f(4)
	ad.touch(b, ep)
	f(2)
	ad.touch(c, ep)
	f(1)
	for _, k := range []*keyAdmission{d, e} {
		ad.touch(k, ep)
	}
	f(1)
	ep++ // the next epoch still counts the keys of the last
	ad.touch(a, ep)
	f(1)
	ep++ // two epochs on: only a
	f(4)
	ad.touch(a, ep)
	f(4)
}

// A key within its share takes a slot at once; over it, its request waits
// for one of the key's own to finish (first come, first served), or gets a
// refusal with Retry-After after MaxWait; the queue has a cap; other keys
// are never held up by it.
func TestAdmissionWaitAndRefuse(t *testing.T) {
	ad := newAdmission(Admission{Cores: 2, MaxWait: 200 * time.Millisecond, MaxQueue: 2})
	heavy, light := &keyAdmission{}, &keyAdmission{}
	ctx := context.Background()
	now := time.Now()
	ad.touch(light, epochOf(now)) // two keys active: a share of 1 each
	if _, _, ok := ad.acquire(ctx, heavy, now); !ok {
		t.Fatal("first slot refused")
	}
	// The light key is not held up.
	if w, _, ok := ad.acquire(ctx, light, now); !ok || w != 0 {
		t.Fatalf("light key: waited %v, ok %v", w, ok)
	}
	ad.release(light, time.Millisecond, 10)

	// A second heavy request waits, then takes the slot the first gives back.
	done := make(chan time.Duration)
	go func() {
		w, _, ok := ad.acquire(ctx, heavy, time.Now())
		if !ok {
			t.Error("the waiting request was refused")
		}
		done <- w
	}()
	for heavy.waiting.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	ad.release(heavy, 300*time.Millisecond, 1000)
	if w := <-done; w < 15*time.Millisecond || w > 150*time.Millisecond {
		t.Errorf("waited %v", w)
	}
	if heavy.running.Load() != 1 {
		t.Fatalf("running %d, want 1 (the slot handed over)", heavy.running.Load())
	}
	// Now over the share with nothing given back: refused after MaxWait,
	// with a Retry-After of the mean slot time.
	start := time.Now()
	w, retry, ok := ad.acquire(ctx, heavy, start)
	if ok || w < 190*time.Millisecond || retry < 1 {
		t.Errorf("over the share: ok %v after %v, retry %d", ok, w, retry)
	}
	// The queue's cap: the third waiting request is refused at once.
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); ad.acquire(ctx, heavy, time.Now()) }()
	}
	for heavy.waiting.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	if w, _, ok := ad.acquire(ctx, heavy, time.Now()); ok || w != 0 {
		t.Errorf("past the queue's cap: ok %v, waited %v", ok, w)
	}
	wg.Wait()
	if got := heavy.refused.Load(); got != 4 {
		t.Errorf("refused %d, want 4", got)
	}
	ad.release(heavy, time.Millisecond, 0)
	if heavy.running.Load() != 0 || heavy.waiting.Load() != 0 || len(heavy.queue) != 0 {
		t.Errorf("left running %d waiting %d queue %d", heavy.running.Load(), heavy.waiting.Load(), len(heavy.queue))
	}
}

// A waiting request whose client leaves gives up its place.
func TestAdmissionClientGone(t *testing.T) {
	ad := newAdmission(Admission{Cores: 1, MaxWait: 10 * time.Second})
	k := &keyAdmission{}
	if _, _, ok := ad.acquire(context.Background(), k, time.Now()); !ok {
		t.Fatal("refused")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, retry, ok := ad.acquire(ctx, k, time.Now()); ok || retry != 0 {
		t.Errorf("a request whose client left: admitted %v, Retry-After %d", ok, retry)
	}
	if k.waiting.Load() != 0 || len(k.queue) != 0 {
		t.Error("its place was kept")
	}
	if k.refused.Load() != 0 || k.waited.Load() != 1 {
		t.Errorf("refused %d, waited %d; want 0 and 1 (a client that left is not refused)", k.refused.Load(), k.waited.Load())
	}
}

// A request refused after waiting gets a Retry-After for the requests
// still ahead of it when it leaves the queue, not those ahead when it came:
// two requests that came one after the other and both waited past MaxWait
// are told the same (the first has left by then).
func TestAdmissionRetryAfterFromQueueNow(t *testing.T) {
	ad := newAdmission(Admission{Cores: 1, MaxWait: 300 * time.Millisecond})
	k := &keyAdmission{}
	if _, _, ok := ad.acquire(context.Background(), k, time.Now()); !ok {
		t.Fatal("refused")
	}
	k.meanNs.Store(int64(2 * time.Second))
	retries := make(chan int, 2)
	for i := range 2 {
		go func() {
			_, retry, ok := ad.acquire(context.Background(), k, time.Now())
			if ok {
				t.Error("admitted over the share")
			}
			retries <- retry
		}()
		for k.waiting.Load() < int32(i+1) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Each had no one left ahead of it when refused: one mean slot time
	// (2 s) for a share of 1. Counted from their arrival, the second
	// would have been told 6 s and the first 4 s.
	for range 2 {
		if r := <-retries; r != 2 {
			t.Errorf("Retry-After %d, want 2", r)
		}
	}
	// Refused at once past the queue's cap, the count is the queue then.
	ad.cfg.MaxQueue = 1
	go ad.acquire(context.Background(), k, time.Now())
	for k.waiting.Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	if _, retry, ok := ad.acquire(context.Background(), k, time.Now()); ok || retry != 4 {
		t.Errorf("past the cap behind one: ok %v, Retry-After %d, want 4", ok, retry)
	}
	ad.release(k, time.Millisecond, 0)
}

// Many goroutines of several keys: slots never exceed the share, every
// slot given back, nothing left queued.
func TestAdmissionConcurrent(t *testing.T) {
	ad := newAdmission(Admission{Cores: 4, MaxWait: time.Second, MaxQueue: 1000})
	keys := make([]*keyAdmission, 3)
	for i := range keys {
		keys[i] = &keyAdmission{}
	}
	var wg sync.WaitGroup
	var over sync.Once
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := keys[g%len(keys)]
			for range 200 {
				if _, _, ok := ad.acquire(context.Background(), k, time.Now()); !ok {
					continue
				}
				if n := k.running.Load(); n > 4 {
					over.Do(func() { t.Errorf("%d slots held by one key of 4 cores", n) })
				}
				ad.release(k, time.Microsecond, 1)
			}
		}()
	}
	wg.Wait()
	for i, k := range keys {
		if k.running.Load() != 0 || k.waiting.Load() != 0 || len(k.queue) != 0 {
			t.Errorf("key %d: running %d waiting %d queue %d", i, k.running.Load(), k.waiting.Load(), len(k.queue))
		}
	}
}

// Through the API: a key holding its share gets 429 with Retry-After
// (never a 5xx), counted per key; another key is answered at once; an
// answer from the answer cache takes no slot.
func TestAdmissionAnswers429(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.Admission = &Admission{Cores: 2, MaxWait: 50 * time.Millisecond}
	reg := prometheus.NewRegistry()
	keys := testKeys(t)
	api := New(cfg, store, keys, nil, reg, nil)
	heavy := keys.find(testKeyDelayed).adm
	light := keys.find(testKeyEOD).adm
	now := time.Now()
	api.adm.touch(light, epochOf(now)) // another key active: a share of 1
	if _, _, ok := api.adm.acquire(context.Background(), heavy, now); !ok {
		t.Fatal("slot refused")
	}
	do := func(key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v2/companies/ENHZ", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		return w
	}
	w := do(testKeyDelayed)
	checkError(t, w, 429, "this key's requests hold its share of the server (1 of 2 cores while 2 keys compute)")
	if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 {
		t.Errorf("Retry-After %q", w.Header().Get("Retry-After"))
	}
	if w := do(testKeyEOD); w.Code != 200 {
		t.Errorf("the other key: %d", w.Code)
	}
	if got := metricValue(t, reg, "pregao_admission_refused_total", "delayed"); got != 1 {
		t.Errorf("refused (delayed) %v, want 1", got)
	}
	api.adm.release(heavy, time.Millisecond, 0)
	if w := do(testKeyDelayed); w.Code != 200 {
		t.Fatalf("after the slot is back: %d", w.Code)
	}
	if heavy.running.Load() != 0 {
		t.Errorf("%d slots held after the answer", heavy.running.Load())
	}
	// The same request again is answered from the answer cache: no slot.
	admitted := heavy.admitted.Load()
	api.adm.acquire(context.Background(), heavy, time.Now())
	if w := do(testKeyDelayed); w.Code != 200 || heavy.admitted.Load() != admitted+1 {
		t.Errorf("a kept answer: %d, admitted %d → %d", w.Code, admitted, heavy.admitted.Load())
	}
	if got := metricValue(t, reg, "pregao_key_busy_seconds_total", "delayed"); got <= 0 {
		t.Errorf("busy seconds %v", got)
	}
	// Off: Cores < 0.
	cfg.Admission = &Admission{Cores: -1}
	if off := New(cfg, store, testKeys(t), nil, nil, nil); off.adm != nil {
		t.Error("admission on with Cores -1")
	}
}

// yieldCountingWriter records, at each write of the answer, how many requests
// the yield points count as computing.
type yieldCountingWriter struct {
	*httptest.ResponseRecorder
	seen []int
}

func (w *yieldCountingWriter) Write(b []byte) (int, error) {
	w.seen = append(w.seen, yieldpoint.Computing())
	return w.ResponseRecorder.Write(b)
}

// A request that holds a slot is counted by the yield points while its
// answer is written, and no longer after; one refused (429) or answered
// from the answer cache is never counted.
func TestAdmissionCountsComputing(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.Admission = &Admission{Cores: 2, MaxWait: 10 * time.Millisecond}
	keys := testKeys(t)
	api := New(cfg, store, keys, nil, nil, nil)
	base := yieldpoint.Computing()
	do := func(path string) *yieldCountingWriter {
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
		w := &yieldCountingWriter{ResponseRecorder: httptest.NewRecorder()}
		api.ServeHTTP(w, r)
		return w
	}
	w := do("/v2/companies/ENHZ")
	if w.Code != 200 || len(w.seen) == 0 || slices.Min(w.seen) != base+1 {
		t.Errorf("computed answer: %d, counted %v while written, want %d", w.Code, w.seen, base+1)
	}
	if w := do("/v2/companies/ENHZ"); w.Code != 200 || slices.Contains(w.seen, base+1) { // kept
		t.Errorf("kept answer (%d): counted while written", w.Code)
	}
	// Over the share: 429, not counted.
	heavy := keys.find(testKeyDelayed).adm
	now := time.Now()
	api.adm.touch(keys.find(testKeyEOD).adm, epochOf(now))
	api.adm.acquire(context.Background(), heavy, now)
	if w := do("/v2/companies/ENHZ?show_market_cap=true"); w.Code != 429 || slices.Contains(w.seen, base+1) {
		t.Errorf("429: %d, counted %v", w.Code, w.seen)
	}
	api.adm.release(heavy, 0, 0)
	if got := yieldpoint.Computing(); got != base {
		t.Errorf("%d computing after the answers, want %d", got, base)
	}
}

// A burst of cheap requests of one key, more than a few dozen at once (a
// client's connection pool asking together), waits for the key's slots
// and is answered whole, not refused by the queue's bound: with the
// former bound of 64 waiting, 236 of these 300 were answered 429 at once.
func TestAdmissionBurstOfCheapRequests(t *testing.T) {
	store := &engine.Store{}
	store.Publish(mustSmall(t))
	cfg := DefaultConfig()
	cfg.AnswerCacheBytes = -1 // every request computes, in a slot
	cfg.Admission = &Admission{Cores: 2}
	keys := testKeys(t)
	api := New(cfg, store, keys, nil, prometheus.NewRegistry(), nil)
	k := keys.find(testKeyDelayed).adm
	// The key's two slots held: every request of the burst queues.
	for range 2 {
		if _, _, ok := api.adm.acquire(context.Background(), k, time.Now()); !ok {
			t.Fatal("slot refused")
		}
	}
	const burst = 300
	codes := make(chan int, burst)
	for range burst {
		go func() {
			r := httptest.NewRequest("GET", "/v2/companies/ENHZ", nil)
			r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			codes <- w.Code
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	// Every request queued (or answered) before the slots are back.
	for int(k.waiting.Load())+len(codes) < burst && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	api.adm.release(k, time.Millisecond, 0)
	api.adm.release(k, time.Millisecond, 0)
	got := map[int]int{}
	for range burst {
		got[<-codes]++
	}
	if got[200] != burst {
		t.Errorf("answers by status %v, want %d × 200", got, burst)
	}
}
