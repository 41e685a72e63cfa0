package httpapi

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// latencyBuckets are the request latency histogram's upper bounds in
// seconds, from 25 µs (sub-millisecond answers are the norm) to 10 s.
var latencyBuckets = []float64{
	0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// metrics are the server's Prometheus metrics, registered on an injected
// registerer (never the global one).
type metrics struct {
	requests *prometheus.CounterVec   // route, code
	latency  *prometheus.HistogramVec // route
	// inflight counts the requests being served (a Gauge's Inc and Dec
	// are a compare-and-swap loop on a float each, retried while the
	// cores contend; an atomic add is one instruction), exported as
	// pregao_http_requests_in_flight.
	inflight atomic.Int64
	panics   prometheus.Counter

	snapshotInfo *prometheus.GaugeVec // id
	asOf         prometheus.Gauge     // unix seconds
	loadSeconds  prometheus.Gauge
	loadedAt     prometheus.Gauge     // unix seconds
	entities     *prometheus.GaugeVec // kind
	reloads      *prometheus.CounterVec

	keysLoaded  prometheus.Gauge       // keys being served
	keysReloads *prometheus.CounterVec // result: ok, error, refused
	rateLimited *prometheus.CounterVec // key: the key's name (never the key)
	logDropped  prometheus.Counter     // access log lines dropped (AccessLog)
	answerHits  prometheus.Counter     // answers sent from the answer cache
	// deferredWaits counts the requests that waited for their snapshot's
	// deferred kinds (awaitDeferred).
	deferredWaits prometheus.Counter
	answerEvict   prometheus.Counter // answers evicted from the answer cache
	// authFailures counts the requests without a valid key: refused (401)
	// or limited (401 with Retry-After, authlimit.go).
	authFailures *prometheus.CounterVec

	mu     sync.Mutex
	routes map[string]*routeMetrics
}

// routeMetrics caches one route's series for the common statuses so the hot
// path does no label lookups.
type routeMetrics struct {
	ok      prometheus.Counter
	latency prometheus.Observer
	vec     *prometheus.CounterVec
	route   string
}

func (rm *routeMetrics) observe(status int, d time.Duration) {
	if status == 200 {
		rm.ok.Inc()
	} else {
		rm.vec.WithLabelValues(rm.route, strconv.Itoa(status)).Inc()
	}
	rm.latency.Observe(d.Seconds())
}

// newMetrics makes the metrics and registers them on reg (nil: none).
// asOfFn returns the served snapshot's as_of, now the wall clock, and
// cache the bytes held and entries of the current answer cache.
func newMetrics(reg prometheus.Registerer, asOfFn func() time.Time, now func() time.Time, cache func() (int64, int)) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_http_requests_total",
			Help: "HTTP requests by route template and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pregao_http_request_duration_seconds",
			Help:    "HTTP request latency by route template, in seconds.",
			Buckets: latencyBuckets,
		}, []string{"route"}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pregao_http_panics_total",
			Help: "Handler panics recovered and answered 500.",
		}),
		snapshotInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pregao_snapshot_info",
			Help: "The snapshot being served (value 1, id in the label).",
		}, []string{"id"}),
		asOf: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pregao_snapshot_as_of_seconds",
			Help: "The served snapshot's as_of, unix seconds.",
		}),
		loadSeconds: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pregao_snapshot_load_duration_seconds",
			Help: "Seconds from the start of the served snapshot's load to its publish: the header and sections read and verified, the index built (and, on a reload, every block verified); a first load's deferred kinds and background block pass come after.",
		}),
		loadedAt: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pregao_snapshot_loaded_at_seconds",
			Help: "When the served snapshot was published, unix seconds.",
		}),
		entities: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pregao_snapshot_entities",
			Help: "Entities in the served snapshot by kind.",
		}, []string{"kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_snapshot_reloads_total",
			Help: "Snapshot reload attempts by result (ok or error; a fetch stopped by a shutdown is neither).",
		}, []string{"result"}),
		keysLoaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pregao_keys_loaded",
			Help: "API keys being served.",
		}),
		keysReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_keys_reloads_total",
			Help: "Keys file reload attempts by result: ok, error (unreadable or invalid file) or refused (it would drop every key without allow_empty).",
		}, []string{"result"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_rate_limited_total",
			Help: "Requests answered 429 because their key's rate limit was reached, by key name.",
		}, []string{"key"}),
		deferredWaits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pregao_deferred_waits_total",
			Help: "Requests that waited for their snapshot's cash actions, fund data, insider reports and documents, loaded after the snapshot was published.",
		}),
		answerHits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pregao_answer_cache_hits_total",
			Help: "Answers sent from the answer cache, without running their handler.",
		}),
		logDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pregao_access_log_dropped_total",
			Help: "Access log lines dropped because the log's writer fell behind by more than 4 MiB.",
		}),
		answerEvict: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pregao_answer_cache_evictions_total",
			Help: "Answers evicted from the answer cache to keep it within its bound (or replaced).",
		}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pregao_auth_failures_total",
			Help: "Requests without a valid API key, by result: refused (401) or limited (401 with Retry-After: too many from the client's address).",
		}, []string{"result"}),
		routes: map[string]*routeMetrics{},
	}
	m.authFailures.WithLabelValues("refused")
	m.authFailures.WithLabelValues("limited")
	// Both results exist from the start, so that increase() sees the
	// first failure after a restart (a series born at 1 shows no increase).
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("error")
	for _, r := range []string{"ok", "error", "refused"} {
		m.keysReloads.WithLabelValues(r)
	}
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pregao_snapshot_age_seconds",
		Help: "Seconds between now (wall clock) and the served snapshot's as_of; 0 without a snapshot.",
	}, func() float64 {
		t := asOfFn()
		if t.IsZero() {
			return 0
		}
		return now().Sub(t).Seconds()
	})
	cacheBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pregao_answer_cache_bytes",
		Help: "Bytes the served snapshot's answer cache holds (kept answers, their compressed forms and per-entry overhead), counted against --answer-cache.",
	}, func() float64 { b, _ := cache(); return float64(b) })
	cacheEntries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pregao_answer_cache_entries",
		Help: "Answers the served snapshot's answer cache holds.",
	}, func() float64 { _, n := cache(); return float64(n) })
	inflight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "pregao_http_requests_in_flight",
		Help: "HTTP requests being served.",
	}, func() float64 { return float64(m.inflight.Load()) })
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, inflight, m.panics, m.snapshotInfo, m.asOf,
			m.loadSeconds, m.loadedAt, m.entities, m.reloads, age, m.keysLoaded, m.keysReloads, m.rateLimited, m.logDropped, m.answerHits, m.deferredWaits,
			m.answerEvict, m.authFailures, cacheBytes, cacheEntries,
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// route returns the cached series of a route template.
func (m *metrics) route(route string) *routeMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if rm := m.routes[route]; rm != nil {
		return rm
	}
	rm := &routeMetrics{
		ok:      m.requests.WithLabelValues(route, "200"),
		latency: m.latency.WithLabelValues(route),
		vec:     m.requests,
		route:   route,
	}
	m.routes[route] = rm
	return rm
}

// LoadInfo describes a published snapshot for the metrics.
type LoadInfo struct {
	ID       string           // snapshot id (e.g. its checksum or build id)
	AsOf     time.Time        // the data's as_of
	Duration time.Duration    // from the load's start to the publish
	Counts   map[string]int64 // entity counts by kind
	At       time.Time        // when it was published (wall clock)
}

func (m *metrics) recordLoad(info LoadInfo) {
	m.snapshotInfo.Reset()
	m.snapshotInfo.WithLabelValues(info.ID).Set(1)
	m.asOf.Set(float64(info.AsOf.Unix()))
	m.loadSeconds.Set(info.Duration.Seconds())
	m.loadedAt.Set(float64(info.At.Unix()))
	m.entities.Reset()
	for k, v := range info.Counts {
		m.entities.WithLabelValues(k).Set(float64(v))
	}
}

// dropKeys deletes the pregao_rate_limited_total series of the keys of
// old that next no longer holds, as the admission's per-key series are:
// the series a server exports follow its keys, however many come and go
// (a request of a removed key answered 429 just after the reload deletes
// the series it counted: API.limit).
func (m *metrics) dropKeys(old, next *Keys) {
	if old == nil {
		return
	}
	kept := map[string]bool{}
	for _, name := range next.names() {
		kept[name] = true
	}
	for _, name := range old.names() {
		if !kept[name] {
			m.rateLimited.DeleteLabelValues(name)
		}
	}
}

// exportKeys makes pregao_rate_limited_total{key} exist at 0 for every key
// of k, so that a fresh server's dashboard reads 0 rejections instead of
// "No data" (a removed key's series goes: dropKeys).
func (m *metrics) exportKeys(k *Keys) {
	if k == nil {
		return
	}
	for _, name := range k.names() {
		m.rateLimited.WithLabelValues(name)
	}
}
