package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/internal/yieldpoint"
	"github.com/prometheus/client_golang/prometheus"
)

// Admission: each API key gets a fair share of the cores, by default.
//
// A request computes its answer in a slot of its key: the handler runs,
// and the answer is written, while it holds one. A key may hold at most
// its share of the slots at once: the cores (Admission.Cores, default
// GOMAXPROCS) divided by the number of keys active in the last second or
// two, rounded down, at least 1. One key alone has every core; beside it,
// another key that sends any request has its own share, and the first
// keeps only its part, so a core is free when the other's request comes:
// its latency stays what it is without the first. Requests answered
// without computing (from the answer cache, 304) take no slot and do not
// make their key active; nor do the operational and /admin routes.
//
// A request of a key that holds its share waits, first come first
// served among that key's requests, for one of them to finish; after
// Admission.MaxWait (default 1 s), or when Admission.MaxQueue of its
// requests already wait, it is answered 429 with Retry-After (the key's
// mean slot time times the requests still ahead of it plus one, divided
// by its share), never a 5xx. One whose client leaves while it waits is
// sent nothing and counted as 499 (answer.clientLeft). Other keys never wait behind it: each key waits only for
// its own slots.
//
// The cost of a small request is two atomic operations on its key (take
// and give back a slot) and, once a second, one to count the key active:
// no lock, no allocation, no clock reading the API does not make anyway.
// The time each key holds slots (its requests' cost, measured), its
// answers' bytes, its waits and refusals are exported per key
// (admissionCollector); docs/operations.md, "Fair share of the cores",
// says how to size it.

// Admission configures the per-key admission (Config.Admission).
// DefaultAdmission returns the defaults.
type Admission struct {
	// Cores is the number of slots shared among the active keys (default
	// runtime.GOMAXPROCS(0), read by New). A negative value turns
	// admission off: every request computes at once.
	Cores int
	// MaxWait is how long a request over its key's share waits for a slot
	// before it is answered 429 (default 1 s).
	MaxWait time.Duration
	// MaxQueue is how many requests of one key may wait at once; one more
	// is answered 429 at once (default 1024). A waiting request costs
	// little beyond its connection, which is open anyway (a channel and
	// a place in the queue), and a burst of cheap requests drains in
	// milliseconds: the bound is against a runaway client, not a pool of
	// a few hundred connections asking at once (MaxWait bounds costly
	// requests).
	MaxQueue int
}

// DefaultAdmission returns the default admission: on, the cores of the
// process, 1 s of wait, 1024 requests waiting per key.
func DefaultAdmission() Admission {
	return Admission{Cores: runtime.GOMAXPROCS(0), MaxWait: time.Second, MaxQueue: 1024}
}

// activeEpoch is the unit of time (ns, a power of two: about 1.07 s) over
// which the keys that computed are counted: a key is active in the epoch
// of its last such request and the next one.
const activeEpochShift = 30

// admission is the API's admission: the shares and the active keys.
// Safe for concurrent use.
type admission struct {
	cfg Admission // Cores > 0
	// active counts, for the epochs ep (slot ep&3), the keys that took a
	// slot in it: epoch<<24 | count.
	active [4]atomic.Uint64
	now    func() time.Time
}

func newAdmission(cfg Admission) *admission {
	if cfg.Cores < 0 {
		return nil
	}
	def := DefaultAdmission()
	if cfg.Cores == 0 {
		cfg.Cores = def.Cores
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = def.MaxWait
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = def.MaxQueue
	}
	return &admission{cfg: cfg, now: time.Now}
}

// keyAdmission is one key's state: its slots, its queue and its
// counters. It is shared by every request of the key and carried across
// keys-file reloads (Keys.inherit) with the key's name.
type keyAdmission struct {
	running atomic.Int32 // slots held
	waiting atomic.Int32 // requests in queue
	epoch   atomic.Int64 // the last epoch the key was counted active in

	mu    sync.Mutex
	queue []chan struct{} // waiting requests, first come first: a slot is handed by a send

	// Counters (monotonic), read by the collector.
	busyNs   atomic.Int64 // time slots were held
	meanNs   atomic.Int64 // moving mean of one request's slot time (Retry-After)
	bytes    atomic.Int64 // bytes of the answers made in a slot
	waited   atomic.Int64 // requests that waited for a slot
	waitNs   atomic.Int64 // time they waited
	refused  atomic.Int64 // requests answered 429
	admitted atomic.Int64 // requests that took a slot
}

// touch counts k active in epoch ep (once per epoch).
func (ad *admission) touch(k *keyAdmission, ep int64) {
	if k.epoch.Load() == ep || k.epoch.Swap(ep) == ep {
		return
	}
	slot := &ad.active[ep&3]
	for {
		v := slot.Load()
		n := uint64(1)
		if int64(v>>24) == ep {
			n = v&(1<<24-1) + 1
		}
		if slot.CompareAndSwap(v, uint64(ep)<<24|n) {
			return
		}
	}
}

// activeKeys returns the number of keys active in epoch ep: those counted
// in it or in the one before (at least 1).
func (ad *admission) activeKeys(ep int64) int {
	n := uint64(1)
	for _, e := range [2]int64{ep, ep - 1} {
		if v := ad.active[e&3].Load(); int64(v>>24) == e {
			n = max(n, v&(1<<24-1))
		}
	}
	return int(n)
}

// share returns the slots one key may hold in epoch ep.
func (ad *admission) share(ep int64) int32 {
	return int32(max(1, ad.cfg.Cores/ad.activeKeys(ep)))
}

// epochOf returns the epoch of t.
func epochOf(t time.Time) int64 { return t.UnixNano() >> activeEpochShift }

// acquire takes a slot of k for a request at now, waiting (until ctx is
// done, or MaxWait) when k holds its share. It returns how long it
// waited and ok; not ok: no slot was taken, and retry is the Retry-After
// to send (counted from the requests still ahead of it then), or 0 when
// ctx ended first (the client left: not counted as a refusal).
func (ad *admission) acquire(ctx context.Context, k *keyAdmission, now time.Time) (waited time.Duration, retry int, ok bool) {
	ep := epochOf(now)
	ad.touch(k, ep)
	share := ad.share(ep)
	for k.waiting.Load() == 0 {
		n := k.running.Load()
		if n >= share {
			break
		}
		if k.running.CompareAndSwap(n, n+1) {
			k.admitted.Add(1)
			return 0, 0, true
		}
	}
	// Over the share, or others wait first: queue.
	k.mu.Lock()
	k.waiting.Add(1)
	if n := k.running.Load(); n < share && len(k.queue) == 0 {
		k.running.Add(1)
		k.waiting.Add(-1)
		k.mu.Unlock()
		k.admitted.Add(1)
		return 0, 0, true
	}
	if len(k.queue) >= ad.cfg.MaxQueue {
		ahead := len(k.queue)
		k.waiting.Add(-1)
		k.mu.Unlock()
		k.refused.Add(1)
		return 0, ad.retryAfter(k, ahead, share), false
	}
	ch := make(chan struct{}, 1)
	k.queue = append(k.queue, ch)
	ahead := 0 // set when it leaves the queue unserved
	k.mu.Unlock()

	t := time.NewTimer(ad.cfg.MaxWait)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
	waited = ad.now().Sub(now)
	k.mu.Lock()
	granted := true
	for i, q := range k.queue {
		if q == ch { // still queued: not granted
			k.queue = append(k.queue[:i], k.queue[i+1:]...)
			granted = false
			ahead = i // those still waiting before it, not those at its arrival
			break
		}
	}
	k.waiting.Add(-1)
	k.mu.Unlock()
	k.waited.Add(1)
	k.waitNs.Add(int64(waited))
	if !granted {
		if ctx.Err() != nil { // the client left: not a refusal
			return waited, 0, false
		}
		k.refused.Add(1)
		return waited, ad.retryAfter(k, ahead, share), false
	}
	k.admitted.Add(1)
	return waited, 0, true
}

// release gives back a slot of k, held for d, for an answer of n bytes:
// to the first request waiting, if any and k is within its share.
func (ad *admission) release(k *keyAdmission, d time.Duration, n int64) {
	k.busyNs.Add(int64(d))
	k.bytes.Add(n)
	if m := k.meanNs.Load(); m == 0 {
		k.meanNs.Store(int64(d))
	} else {
		k.meanNs.Store(m + (int64(d)-m)/8)
	}
	k.running.Add(-1)
	if k.waiting.Load() == 0 {
		return
	}
	share := ad.share(epochOf(ad.now()))
	k.mu.Lock()
	for len(k.queue) > 0 && k.running.Load() < share {
		ch := k.queue[0]
		k.queue[0] = nil
		k.queue = k.queue[1:]
		k.running.Add(1)
		ch <- struct{}{} // buffered: never blocks
	}
	k.mu.Unlock()
}

// retryAfter is the Retry-After (whole seconds, 1 to 60) of a request
// refused with ahead requests of k before it: the time the key's share
// takes to answer them at its mean slot time.
func (ad *admission) retryAfter(k *keyAdmission, ahead int, share int32) int {
	d := time.Duration(k.meanNs.Load()) * time.Duration(ahead+1) / time.Duration(max(share, 1))
	return min(max(secondsUp(d), 1), 60)
}

// admit takes a slot of the request's key before its handler runs: 0 when
// taken (or not needed: no admission, no key), else the status of the
// 429 sent. The caller calls leave when the answer is written.
func (a *API) admit(c *call, r *http.Request) int {
	if a.adm == nil || c.adm == nil {
		return 0
	}
	now := time.Now()
	_, retry, ok := a.adm.acquire(r.Context(), c.adm, now)
	if ok {
		c.admAt = now
		c.admitted = true
		yieldpoint.Begin()
		return 0
	}
	if r.Context().Err() != nil {
		return c.out.clientLeft()
	}
	share := a.adm.share(epochOf(now))
	c.out.w.Header()["Retry-After"] = []string{strconv.Itoa(retry)}
	return c.out.fail(http.StatusTooManyRequests, fmt.Sprintf("too many requests at once: this key's requests hold its share of the server (%d of %d cores while %d keys compute); retry in %d s",
		share, a.adm.cfg.Cores, a.adm.activeKeys(epochOf(now)), retry))
}

// leave gives back the slot admit took, once the answer is written.
func (a *API) leave(c *call) {
	if !c.admitted {
		return
	}
	c.admitted = false
	yieldpoint.End()
	a.adm.release(c.adm, time.Since(c.admAt), c.out.size)
}

// admissionCollector exports the admission's figures per key, read from
// the keys' counters at scrape time (nothing is counted per request
// beyond the keys' atomics).
type admissionCollector struct {
	a                                                        *API
	busy, bytes, admitted, waited, waitSec, refused, running *prometheus.Desc
	share, active, cores                                     *prometheus.Desc
}

func newAdmissionCollector(a *API) *admissionCollector {
	key := []string{"key"}
	return &admissionCollector{a: a,
		busy:     prometheus.NewDesc("pregao_key_busy_seconds_total", "Time the key's requests held a slot (computing and writing their answers): their measured cost, by key.", key, nil),
		bytes:    prometheus.NewDesc("pregao_key_answer_bytes_total", "Bytes of the answers the key's requests made in a slot (before compression), by key.", key, nil),
		admitted: prometheus.NewDesc("pregao_admission_admitted_total", "Requests that took a slot of their key, by key.", key, nil),
		waited:   prometheus.NewDesc("pregao_admission_waited_total", "Requests that waited for a slot of their key (admitted or not), by key.", key, nil),
		waitSec:  prometheus.NewDesc("pregao_admission_wait_seconds_total", "Time requests waited for a slot of their key, by key.", key, nil),
		refused:  prometheus.NewDesc("pregao_admission_refused_total", "Requests answered 429 because their key held its share of the cores, by key.", key, nil),
		running:  prometheus.NewDesc("pregao_admission_running", "Slots the key's requests hold now, by key.", key, nil),
		share:    prometheus.NewDesc("pregao_admission_share", "Slots one key may hold now: the cores divided by the active keys, at least 1.", nil, nil),
		active:   prometheus.NewDesc("pregao_admission_active_keys", "Keys whose requests took a slot in the last second or two.", nil, nil),
		cores:    prometheus.NewDesc("pregao_admission_cores", "The slots shared among the active keys (0: admission off).", nil, nil),
	}
}

func (ac *admissionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{ac.busy, ac.bytes, ac.admitted, ac.waited, ac.waitSec, ac.refused, ac.running, ac.share, ac.active, ac.cores} {
		ch <- d
	}
}

func (ac *admissionCollector) Collect(ch chan<- prometheus.Metric) {
	ad := ac.a.adm
	if ad == nil {
		ch <- prometheus.MustNewConstMetric(ac.cores, prometheus.GaugeValue, 0)
		return
	}
	ep := epochOf(ad.now())
	ch <- prometheus.MustNewConstMetric(ac.cores, prometheus.GaugeValue, float64(ad.cfg.Cores))
	ch <- prometheus.MustNewConstMetric(ac.share, prometheus.GaugeValue, float64(ad.share(ep)))
	ch <- prometheus.MustNewConstMetric(ac.active, prometheus.GaugeValue, float64(ad.activeKeys(ep)))
	keys := ac.a.keys.Load()
	if keys == nil {
		return
	}
	for _, st := range keys.byDigest {
		k := st.adm
		if k == nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(ac.busy, prometheus.CounterValue, float64(k.busyNs.Load())/1e9, st.Name)
		ch <- prometheus.MustNewConstMetric(ac.bytes, prometheus.CounterValue, float64(k.bytes.Load()), st.Name)
		ch <- prometheus.MustNewConstMetric(ac.admitted, prometheus.CounterValue, float64(k.admitted.Load()), st.Name)
		ch <- prometheus.MustNewConstMetric(ac.waited, prometheus.CounterValue, float64(k.waited.Load()), st.Name)
		ch <- prometheus.MustNewConstMetric(ac.waitSec, prometheus.CounterValue, float64(k.waitNs.Load())/1e9, st.Name)
		ch <- prometheus.MustNewConstMetric(ac.refused, prometheus.CounterValue, float64(k.refused.Load()), st.Name)
		ch <- prometheus.MustNewConstMetric(ac.running, prometheus.GaugeValue, float64(k.running.Load()), st.Name)
	}
}
