package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// Config configures an API. DefaultConfig returns the defaults.
type Config struct {
	// Prefix is the path prefix of the API routes (default "/v2"). The
	// operational routes /healthz, /readyz and /metrics are at the root.
	Prefix string
	// MaxBodyBytes caps request bodies (default 1 MiB); larger bodies are
	// answered 413.
	MaxBodyBytes int64
	// MaxPushBytes caps the bodies of the push endpoints, POST
	// /admin/live/trades and /admin/live/bars (default
	// DefaultMaxPushBytes); larger bodies are answered 413.
	MaxPushBytes int64
	// Version is the server's version, reported by /healthz (default
	// "unknown").
	Version string
	// CORSOrigins are the browser origins allowed to call the API
	// ("https://app.example.com"; "*": any); none by default (cors.go).
	CORSOrigins []string
	// AnswerCacheBytes bounds, per Dataset, the answers kept to be sent
	// again without encoding (answercache.go): 0 is
	// DefaultAnswerCacheBytes, a negative value turns the cache off.
	AnswerCacheBytes int64
	// WriteTimeout, when set, is the time an answer of over longAnswer
	// bytes may take to be written from its first byte: the API sets the
	// connection's write deadline before sending one
	// (http.ResponseController). Shorter answers rely on the deadline the
	// server keeps on the connection (pregao serve: at least half of
	// WriteTimeout left whenever a request starts).
	WriteTimeout time.Duration
	// AuthFailures limits the requests without a valid API key per client
	// address (authlimit.go): nil is DefaultAuthFailures, PerSecond 0 no
	// limit.
	AuthFailures *Limit
	// QueryToken accepts the API key in the query parameter token=
	// (?token=KEY) from requests without an Authorization header, for
	// spreadsheets and browser address bars that cannot send headers
	// (querytoken.go). Off by default: a URL ends up in histories,
	// proxies' logs and Referer headers. The parameter is removed from the
	// request before anything reads or logs its query.
	QueryToken bool
	// Admission gives each API key a fair share of the cores
	// (admission.go): nil is DefaultAdmission (on); Cores < 0 turns it
	// off.
	Admission *Admission
	// MetricsApart leaves /metrics out of the API's routes (a 404 there):
	// the server serves MetricsHandler on a listener of its own (serve
	// --metrics-addr), so that the API's port, the one exposed to
	// clients, does not list the keys' names and use.
	MetricsApart bool
	// AccessLog, when not nil, receives one line per request, and every
	// answer carries an X-Request-Id (the client's, or a new one); see
	// accesslog.go. nil: no access log, no request ids.
	AccessLog *AccessLog
	// StreamConnsPerKey bounds the open streams of the live session
	// (GET /stream/quotes) per key (0: DefaultStreamConnsPerKey; past
	// it, 429); MaxStreams the streams of the server (0:
	// DefaultMaxStreams; past it, 503). StreamStep is how often a plan's
	// steps are made (0: 100 ms) and StreamHeartbeat how often an idle
	// stream gets a comment (0: 15 s). See sse.go.
	StreamConnsPerKey, MaxStreams int
	StreamStep, StreamHeartbeat   time.Duration
}

// DefaultConfig returns the default Config.
func DefaultConfig() Config {
	return Config{Prefix: "/v2", MaxBodyBytes: 1 << 20, MaxPushBytes: DefaultMaxPushBytes}
}

// Clock gives the API its "now": plan cut-offs (the 15-minute delay, the
// previous session) are computed from it.
type Clock interface {
	Now() time.Time
}

// WallClock is the system clock.
type WallClock struct{}

// Now returns time.Now().
func (WallClock) Now() time.Time { return time.Now() }

// SnapshotClock is a clock stopped at the served snapshot's as_of, so that
// answers are reproducible. Its Now is zero before a snapshot is published.
type SnapshotClock struct{ Store *engine.Store }

// Now returns the as_of of the Store's current Dataset.
func (c SnapshotClock) Now() time.Time {
	if ds := c.Store.Current(); ds != nil {
		return ds.AsOf()
	}
	return time.Time{}
}

// API is the HTTP handler of the service. It is safe for concurrent use.
type API struct {
	cfg   Config
	store *engine.Store
	keys  atomic.Pointer[Keys]

	draining   atomic.Bool                            // /readyz answers 503 (shutting down)
	streams    *sseHubs                               // the streams of the live session (sse.go)
	loading    atomic.Pointer[func() LoadStatus]      // SetLoadStatus
	corsAllow  corsOrigins                            // from Config.CORSOrigins
	accessLog  *AccessLog                             // Config.AccessLog
	openapi    *staticAsset                           // the OpenAPI document (openapi.go)
	docs       docsAssets                             // the docs page and its files (docs.go)
	logWriters sync.Pool                              // *logWriter, with accessLog
	captured   atomic.Int64                           // bytes held by captures of streamed answers (answercache.go)
	chunks     chunkPool                              // the chunks captured answers are kept in
	pages      chunkPool                              // the pages answers built whole are kept in (keptCopy)
	bodies     [bodySlots]atomic.Pointer[bodyAlias]   // request bodies seen (bodyKey)
	liveHdr    atomic.Pointer[liveSeqHdr]             // the last X-Live-Seq value made
	movingCC   atomic.Pointer[secondHdr]              // the last Cache-Control of a moving answer (movingCacheControl)
	queries    [querySlots]atomic.Pointer[queryAlias] // query strings seen (queryKey)
	keyBytes   atomic.Int64                           // bytes the tables of bodies and queries seen hold (bounded: conditional.go)
	authFails  *authLimiter                           // requests without a valid key, per address
	adm        *admission                             // each key's share of the cores (nil: off)
	clock      Clock
	log        *slog.Logger
	m          *metrics
	router     *httprouter.Router
	routed     [routedSlots]atomic.Pointer[routed] // paths routed before (dispatch)
	metrics    http.Handler                        // /metrics (nil: no gatherer)
	calls      sync.Pool                           // *call
	dsinfo     atomic.Pointer[dsInfo]
	dsnext     atomic.Pointer[dsInfo] // prepared for a Dataset about to be published (Prepare)
	// patterns are the method and pattern of every route registered
	// ("GET /v2/companies/:id"), written once by New.
	patterns []string
	// sink receives the batches of the push endpoints (SetLiveSink; nil:
	// none, they answer 503).
	sink  atomic.Pointer[engine.LiveSink]
	pushM *pushMetrics // the push endpoints' counters (admin.go)

	// liveStatus is what /readyz reports of the live session
	// (SetLiveStatus, livestatus.go).
	liveStatus atomic.Pointer[func() (engine.LiveStatus, bool)]
	// liveRestoring reports whether the live session is being read back
	// from its log (SetLiveRestoring; nil: no live session).
	liveRestoring atomic.Pointer[func() bool]

	// badBlockLogged is the last Dataset whose bad block was logged
	// (badBlock).
	badBlockLogged atomic.Pointer[weak.Pointer[engine.Dataset]]

	// files gives the flat files of GET /files (SetFiles; nil: none).
	files atomic.Pointer[FileSource]
}

// New returns the API serving store's current Dataset to the holders of
// keys. clock gives "now" (SnapshotClock for reproducible answers). Metrics
// are registered on reg (nil: none); when reg is also a prometheus.Gatherer
// it is served on /metrics. log receives structured logs (never keys).
func New(cfg Config, store *engine.Store, keys *Keys, clock Clock, reg prometheus.Registerer, log *slog.Logger) *API {
	def := DefaultConfig()
	if cfg.Prefix == "" {
		cfg.Prefix = def.Prefix
	}
	cfg.Prefix = "/" + strings.Trim(cfg.Prefix, "/")
	if cfg.Prefix == "/" {
		cfg.Prefix = ""
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = def.MaxBodyBytes
	}
	if cfg.MaxPushBytes <= 0 {
		cfg.MaxPushBytes = def.MaxPushBytes
	}
	if cfg.Version == "" {
		cfg.Version = "unknown"
	}
	if cfg.AnswerCacheBytes == 0 {
		cfg.AnswerCacheBytes = DefaultAnswerCacheBytes
	}
	if clock == nil {
		clock = SnapshotClock{Store: store}
	}
	if cfg.AuthFailures == nil {
		l := DefaultAuthFailures
		cfg.AuthFailures = &l
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.StreamConnsPerKey <= 0 {
		cfg.StreamConnsPerKey = DefaultStreamConnsPerKey
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.StreamStep <= 0 {
		cfg.StreamStep = defaultStreamStep
	}
	if cfg.StreamHeartbeat <= 0 {
		cfg.StreamHeartbeat = defaultStreamHeartbeat
	}
	a := &API{cfg: cfg, store: store, clock: clock, log: log, corsAllow: newCORSOrigins(cfg.CORSOrigins), accessLog: cfg.AccessLog}
	a.logWriters.New = func() any { return new(logWriter) }
	a.keys.Store(keys)
	a.calls.New = func() any { return newCall() }
	a.authFails = newAuthLimiter(*cfg.AuthFailures, log)
	if cfg.Admission == nil {
		d := DefaultAdmission()
		cfg.Admission = &d
	}
	a.adm = newAdmission(*cfg.Admission)
	a.pages.size, a.pages.maxFree = keptPage, maxFreePages
	if reg != nil {
		reg.MustRegister(newAdmissionCollector(a), prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pregao_answer_cache_key_bytes",
			Help: "Bytes the tables of request bodies and query strings seen hold (the answer cache's keys; bounded, about 2.3 MiB at most).",
		}, func() float64 { return float64(a.keyBytes.Load()) }))
		registerBlockMetrics(reg, store)
	}
	a.pushM = newPushMetrics(reg)
	a.streams = newSSEHubs(a, reg)
	a.m = newMetrics(reg, func() time.Time {
		if ds := store.Current(); ds != nil {
			return ds.AsOf()
		}
		return time.Time{}
	}, time.Now, func() (int64, int) {
		if in := a.dsinfo.Load(); in != nil {
			return in.answers.size()
		}
		return 0, 0
	})
	a.m.exportKeys(keys)
	var gatherer prometheus.Gatherer
	if g, ok := reg.(prometheus.Gatherer); ok {
		gatherer = g
	}
	doc, err := OpenAPI(cfg.Prefix, cfg.Version)
	if err != nil {
		panic(err) // the declarations and openapi_schemas.json disagree: the tests catch it
	}
	a.openapi = newStaticAsset("application/json", doc, 3600)
	a.docs = newDocsAssets()
	a.router = a.routes(gatherer)
	if a.accessLog != nil {
		a.accessLog.dropped = a.m.logDropped.Inc
	}
	a.m.keysLoaded.Set(float64(keys.Len()))
	return a
}

// MetricsHandler returns the handler of /metrics (Prometheus's text
// format of the registry New was given, its requests counted under the
// route /metrics), nil when that registry cannot be gathered. It serves
// on the API's router unless Config.MetricsApart.
func (a *API) MetricsHandler() http.Handler { return a.metrics }

// SetDraining makes /readyz answer 503 ("shutting down") while the API
// keeps answering, each answer closing its connection, so that load
// balancers and clients move away before the server stops. The streams
// of the live session go on (and new ones are served) until EndStreams:
// a stream ended now would reconnect to this server, which its load
// balancer has not left yet. Safe for concurrent use.
func (a *API) SetDraining(on bool) {
	a.draining.Store(on)
}

// EndStreams ends every stream of the live session (GET /stream/quotes)
// with a comment asking its client to reconnect elsewhere, and refuses
// new ones (503): the server shuts down, after its drain (SetDraining).
// Safe for concurrent use.
func (a *API) EndStreams() {
	a.streams.closeAll()
}

// LoadStatus describes the load of the first snapshot while none is
// published, for /readyz and the API's 503 answers.
type LoadStatus struct {
	Phase       string        // e.g. "fetch", "verify", "decode", "index"
	Done, Total int64         // bytes of the phase done and to do (Total 0: unknown)
	Elapsed     time.Duration // since the load began
}

// SetLoadStatus sets what /readyz and the API report while no snapshot is
// published: fn is called by those answers (concurrently) and must be
// cheap. nil: no progress is reported.
func (a *API) SetLoadStatus(fn func() LoadStatus) {
	if fn == nil {
		a.loading.Store(nil)
		return
	}
	a.loading.Store(&fn)
}

// notLoaded describes, for a 503 answer, why no snapshot is served yet:
// "no snapshot loaded yet", with the load's progress when known
// ("loading the snapshot: decode 45% (120.3 of 265.0 MB), 3.2 s elapsed").
func (a *API) notLoaded() string {
	fn := a.loading.Load()
	if fn == nil {
		return "no snapshot loaded yet"
	}
	return loadingMessage((*fn)())
}

func loadingMessage(s LoadStatus) string {
	var b strings.Builder
	b.WriteString("loading the snapshot: ")
	b.WriteString(s.Phase)
	if s.Total > 0 {
		pct := 100 * float64(s.Done) / float64(s.Total)
		fmt.Fprintf(&b, " %.0f%% (%.1f of %.1f MB)", pct, float64(s.Done)/1e6, float64(s.Total)/1e6)
	}
	fmt.Fprintf(&b, ", %.1f s elapsed", s.Elapsed.Seconds())
	return b.String()
}

// SetKeys replaces the keys (e.g. after the keys file changed).
func (a *API) SetKeys(k *Keys) {
	old := a.keys.Load()
	k.inherit(old)
	a.keys.Store(k)
	a.m.keysLoaded.Set(float64(k.Len()))
	a.m.dropKeys(old, k)
	a.m.exportKeys(k)
	a.streams.recheck(k) // a revoked key's streams end, a changed plan's reconnect to it
}

// RecordLoad records a published snapshot in the metrics.
func (a *API) RecordLoad(info LoadInfo) { a.m.recordLoad(info) }

// Warm computes, for the Store's current Dataset, what the API derives once
// per Dataset (quote views of both plans at the clock's now, rankings,
// catalog index, the screener's rows encoded, the search index), so that
// the first requests do not pay for it. Calling it after each Publish is
// optional.
func (a *API) Warm() {
	ds := a.store.Current()
	if ds == nil {
		return
	}
	in := a.info(ds)
	in.screenEnc()
	in.search()
	c := &call{ds: ds, now: a.clock.Now(), key: KeyEntry{Plan: PlanDelayed}, s: new(scratch)}
	a.view(c)
	c.key.Plan = PlanEOD
	a.view(c)
}

// RecordReload counts a reload attempt (ok false: the new snapshot was
// refused and the previous one kept). A caller does not count a reload
// it stopped itself (a fetch abandoned at shutdown).
func (a *API) RecordReload(ok bool) {
	if ok {
		a.m.reloads.WithLabelValues("ok").Inc()
	} else {
		a.m.reloads.WithLabelValues("error").Inc()
	}
}

// ServeHTTP serves one request, and logs it when the API has an access
// log. While draining (SetDraining), every answer carries
// "Connection: close", so clients leave their keep-alive connections
// before the server stops.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.accessLog != nil {
		a.serveLogged(w, r)
		return
	}
	a.serveHTTP(w, r)
}

func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if a.draining.Load() {
		w.Header()["Connection"] = connClose
	}
	if rp := r.URL.RawPath; rp != "" && strings.Contains(strings.ToUpper(rp), "%2F") {
		unslash(r)
	}
	if a.cors(w, r) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	a.dispatch(w, r)
}

// unslash drops the encoded slashes (%2F) of r's path, so that an
// identifier written with one stays one path segment: a CNPJ such as
// 33.000.167/0001-01, sent URL-encoded, resolves as 33.000.1670001-01
// does (identifiers match without their punctuation).
func unslash(r *http.Request) {
	rp := r.URL.RawPath
	var b strings.Builder
	for i := 0; i < len(rp); i++ {
		if rp[i] == '%' && i+2 < len(rp) && rp[i+1] == '2' && (rp[i+2] == 'F' || rp[i+2] == 'f') {
			i += 2
			continue
		}
		b.WriteByte(rp[i])
	}
	if p, err := url.PathUnescape(b.String()); err == nil {
		u := *r.URL
		u.Path, u.RawPath = p, ""
		r.URL = &u
	}
}

var (
	ctJSON    = []string{"application/json"}
	noSniff   = []string{"nosniff"}
	bearerHdr = []string{`Bearer realm="pregao"`}
	connClose = []string{"close"}
	// retryLoading is the Retry-After, in seconds, of the 503 answers
	// given while the first snapshot loads.
	retryLoading = []string{"5"}
)
