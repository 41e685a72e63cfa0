package httpapi

import (
	"errors"
	"fmt"
	"github.com/cespare/xxhash/v2"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// AccessLog, when not nil, receives one line per request, and every
	// answer carries an X-Request-Id (the client's, or a new one); see
	// accesslog.go. nil: no access log, no request ids.
	AccessLog *AccessLog
}

// DefaultConfig returns the default Config.
func DefaultConfig() Config {
	return Config{Prefix: "/v2", MaxBodyBytes: 1 << 20}
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
		return datasetAsOf(ds)
	}
	return time.Time{}
}

// API is the HTTP handler of the service. It is safe for concurrent use.
type API struct {
	cfg   Config
	store *engine.Store
	keys  atomic.Pointer[Keys]

	draining   atomic.Bool                       // /readyz answers 503 (shutting down)
	loading    atomic.Pointer[func() LoadStatus] // SetLoadStatus
	corsAllow  corsOrigins                       // from Config.CORSOrigins
	accessLog  *AccessLog                        // Config.AccessLog
	openapi    *staticAsset                      // the OpenAPI document (openapi.go)
	docs       docsAssets                        // the docs page and its files (docs.go)
	logWriters sync.Pool                         // *logWriter, with accessLog
	captured   atomic.Int64                      // bytes held by captures of large answers (answercache.go)
	clock      Clock
	log        *slog.Logger
	m          *metrics
	router     *httprouter.Router
	calls      sync.Pool // *call
	dsinfo     atomic.Pointer[dsInfo]
	dsnext     atomic.Pointer[dsInfo] // prepared for a Dataset about to be published (Prepare)
	// patterns are the method and pattern of every route registered
	// ("GET /v2/companies/:id"), written once by New.
	patterns []string
}

// call is the per-request state the wrapper hands to a handler. It is
// pooled: nothing in it may be kept after the handler returns.
type call struct {
	ds   *engine.Dataset // the one Dataset of this request
	key  KeyEntry        // the authenticated key (zero on public routes)
	now  time.Time       // the clock's now for this request
	body []byte          // the request body (POST), read up to the cap
	buf  []byte          // output buffer

	route *Route // the operation served: its parameter declarations

	// The answer as it is streamed (stream.go): the writer, whether the
	// 200 header went out, the bytes written and the first write error.
	w        http.ResponseWriter
	streamed bool
	sent     int64
	werr     error
	enc      int           // the answer's content coding (negotiate)
	z        compressor    // compresses a streamed answer (nil: not compressed)
	cached   *cachedAnswer // the answer, when a handler serves a cached one

	// The capture of a large answer for the answer cache (answercache.go):
	// the bytes streamed so far, the memory held for them (counted in
	// *capBudget) and the answer's bound.
	capturing bool
	capBuf    []byte
	capHeld   int64
	capMax    int64
	capBudget *atomic.Int64
	// capTooLarge: the capture was given up past capMax.
	capTooLarge bool

	writeTimeout time.Duration // Config.WriteTimeout, for streamed answers

	hash xxhash.Digest // ETag scratch

	// The answer cache's keys of this request (answerKey, checkOf).
	akey, acheck uint64
	akeyOK       bool

	csv    bool   // the answer is text/csv (csv.go)
	csvSrc []byte // the JSON a CSV answer is made from, as the handler emitted it

	quotes quotesRequest       // scratch of POST /quotes
	bars   []engine.Bar        // scratch of bar series
	bars2  []engine.Bar        // scratch of the second encoder of POST /quotes
	buf2   []byte              // output of the second encoder of POST /quotes
	items  []quoteItem         // scratch of POST /quotes
	ranks  []engine.RankEntry  // scratch of rankings
	rows   []int32             // scratch of the screener and of cash actions
	keys   []sortKey           // scratch of the screener
	scr    *screenerScratch    // scratch of the screener (made on its first request)
	seen   map[string]struct{} // scratch of POST /quotes (cleared after use)
}

// reset readies c for the next request: it keeps the scratch buffers
// (emptied) and drops everything that refers to this request's data.
func (c *call) reset() {
	if c.capBudget != nil {
		c.dropCapture()
	}
	clear(c.items) // drop references to assets and the body
	clear(c.ranks)
	if cap(c.csvSrc) > 4<<20 {
		c.csvSrc = nil
	}
	*c = call{csvSrc: c.csvSrc[:0], buf: c.buf[:0], body: c.body[:0], quotes: quotesRequest{Tickers: c.quotes.Tickers[:0]}, bars: c.bars[:0], bars2: c.bars2[:0], buf2: c.buf2[:0], items: c.items[:0], ranks: c.ranks[:0], rows: c.rows[:0], keys: c.keys[:0], scr: c.scr, seen: c.seen}
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
	if cfg.Version == "" {
		cfg.Version = "unknown"
	}
	if cfg.AnswerCacheBytes == 0 {
		cfg.AnswerCacheBytes = DefaultAnswerCacheBytes
	}
	if clock == nil {
		clock = SnapshotClock{Store: store}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &API{cfg: cfg, store: store, clock: clock, log: log, corsAllow: newCORSOrigins(cfg.CORSOrigins), accessLog: cfg.AccessLog}
	a.logWriters.New = func() any { return new(logWriter) }
	a.keys.Store(keys)
	a.calls.New = func() any { return &call{buf: make([]byte, 0, 64<<10)} }
	a.m = newMetrics(reg, func() time.Time {
		if ds := store.Current(); ds != nil {
			return datasetAsOf(ds)
		}
		return time.Time{}
	}, time.Now)
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

// SetDraining makes /readyz answer 503 ("shutting down") while the API
// keeps answering, each answer closing its connection, so that load
// balancers and clients move away before the server stops. Safe for
// concurrent use.
func (a *API) SetDraining(on bool) { a.draining.Store(on) }

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
	k.inherit(a.keys.Load())
	a.keys.Store(k)
	a.m.keysLoaded.Set(float64(k.Len()))
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
	c := &call{ds: ds, now: a.clock.Now(), key: KeyEntry{Plan: PlanDelayed}}
	a.view(c)
	c.key.Plan = PlanEOD
	a.view(c)
}

// RecordReload counts a reload attempt (ok false: the new snapshot was
// refused and the previous one kept).
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
	a.router.ServeHTTP(w, r)
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

// wrap turns rt into an httprouter.Handle: authentication, the dataset,
// the body cap, pooled buffers, error writing, panic recovery and metrics
// (labelled with rt.Path).
func (a *API) wrap(rt *Route) httprouter.Handle {
	route := rt.Path
	rm := a.m.route(route)
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		noteRoute(w, route, "")
		// One clock reading for the access log and the metrics: each costs
		// as much as a router lookup.
		lw, _ := w.(*logWriter)
		var start time.Time
		if lw != nil {
			start = lw.e.start
		} else {
			start = time.Now()
		}
		a.m.inflight.Inc()
		c := a.calls.Get().(*call)
		status := 0
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler { // a deliberate cut (serve)
					rm.observe(http.StatusOK, time.Since(start))
					a.m.inflight.Dec()
					c.dropCapture() // the call is not reused: give its capture's bytes back
					panic(p)
				}
				a.m.panics.Inc()
				a.log.Error("panic in handler", "route", route, "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p))
				status = http.StatusInternalServerError
				a.writeError(w, c, route, status, "internal server error")
				c.dropCapture()
				c = &call{buf: make([]byte, 0, 1024)} // do not reuse a call left in an unknown state
			}
			d := time.Since(start)
			if lw != nil {
				lw.e.duration = d
			}
			rm.observe(status, d)
			a.m.inflight.Dec()
			c.reset()
			if cap(c.buf) <= 64<<20 {
				a.calls.Put(c)
			}
		}()
		status = a.serve(c, w, r, ps, rt)
	}
}

func (a *API) serve(c *call, w http.ResponseWriter, r *http.Request, ps httprouter.Params, rt *Route) int {
	route := rt.Path
	c.route = rt
	if !rt.Root {
		key := a.authenticate(r)
		if key == nil {
			w.Header()["Www-Authenticate"] = bearerHdr
			return a.writeError(w, c, route, http.StatusUnauthorized, "unauthorized: send the header Authorization: Bearer <API key>")
		}
		noteRoute(w, route, key.Name)
		if key.lim != nil {
			if wait, ok := key.lim.take(time.Now(), w.Header()); !ok {
				a.m.rateLimited.WithLabelValues(key.Name).Inc()
				s := secondsUp(wait)
				w.Header()["Retry-After"] = []string{strconv.Itoa(s)}
				return a.writeError(w, c, route, http.StatusTooManyRequests, fmt.Sprintf("too many requests: this key may send %g a second (bursts of %d); retry in %d s", key.lim.limit.PerSecond, key.lim.limit.Burst, s))
			}
		}
		c.key = key.KeyEntry
		c.ds = a.store.Current()
		if c.ds == nil {
			w.Header()["Retry-After"] = retryLoading
			return a.writeError(w, c, route, http.StatusServiceUnavailable, a.notLoaded()+"; retry shortly")
		}
		c.now = a.clock.Now()
	}
	if r.Method == http.MethodPost {
		if err := a.readBody(c, r); err != nil {
			st, msg := statusOf(err)
			return a.writeError(w, c, route, st, msg)
		}
	}
	c.w = w
	c.writeTimeout = a.cfg.WriteTimeout
	if !rt.Root {
		if hd := w.Header(); len(hd["Vary"]) == 0 {
			hd["Vary"] = hdrVaryAE // shared: a later append copies (len == cap)
		} else {
			hd["Vary"] = append(hd["Vary"], "Accept-Encoding")
		}
		c.enc = negotiate(r)
		if rt.CSV != "" {
			hd := w.Header()
			if v := hd["Vary"]; len(v) == 1 && &v[0] == &hdrVaryAE[0] {
				hd["Vary"] = hdrVaryAEAccept // shared, as hdrVaryAE: no allocation
			} else {
				hd["Vary"] = append(v, "Accept")
			}
			c.csv = wantsCSV(r)
			// format= in the query overrides Accept; known here, before the
			// answer cache is asked (call.query checks the value).
			if strings.Contains(r.URL.RawQuery, "format=") {
				switch f := strings.ToLower(r.URL.Query().Get("format")); f {
				case "csv":
					c.csv = true
				case "json":
					c.csv = false
				}
			}
		}
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && a.conditional(c, w, r) {
			w.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified
		}
	}
	var body []byte
	var err error
	var in *dsInfo
	// The cache of the current Dataset only: a request still served by a
	// replaced one (during a reload) would fill a cache nobody keeps.
	if !rt.Root && a.cfg.AnswerCacheBytes > 0 && c.ds == a.store.Current() {
		in = a.info(c.ds)
		if r.Method == http.MethodPost {
			a.answerKey(c, r, in, c.body)
		}
	}
	if in != nil && a.serveKept(c, w, r, in) {
		body = c.buf[:0]
	} else {
		if in != nil {
			a.startCapture(c, in)
		}
		body, err = rt.serve(a, c, c.buf[:0], r, ps)
		if in != nil && err == nil && len(c.csvSrc) == 0 {
			a.keep(c, w, in, body)
		}
	}
	if body != nil {
		c.buf = body[:0]
	}
	if c.csv && err == nil {
		return a.writeCSV(c, w, route, rt, body)
	}
	if c.streamed {
		if err != nil {
			// A handler failed after part of its 200 answer went out: cut
			// the connection so the client cannot take a truncated body
			// for a complete one.
			c.finish()
			a.log.Error("request failed after its answer started", "route", route, "method", r.Method, "path", r.URL.Path, "err", err.Error())
			panic(http.ErrAbortHandler)
		}
		c.emit(body)
		c.finish()
		if in != nil {
			a.keepStreamed(c, w, in)
		}
		return http.StatusOK
	}
	if err != nil {
		st, msg := statusOf(err)
		if failure(st) {
			a.log.Error("request failed", "route", route, "method", r.Method, "path", r.URL.Path, "err", err.Error())
		}
		return a.writeError(w, c, route, st, msg)
	}
	hd := w.Header()
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
	if ca := c.cached; ca != nil {
		enc := c.enc
		if len(ca.raw) < compressMin {
			enc = encIdentity
		}
		if enc != encIdentity && isLarge(ca.raw) {
			return writeOK(w, hd, enc, ca.raw, a.cfg.WriteTimeout) // compressed as it is sent, not kept
		}
		b, length := ca.encoded(enc)
		setEncoding(hd, enc)
		hd["Content-Length"] = length
		allowWrite(w, a.cfg.WriteTimeout, len(b))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		return http.StatusOK
	}
	return writeOK(w, hd, c.enc, body, a.cfg.WriteTimeout)
}

// chunkingSize is the size of net/http's answer buffer
// (bufferBeforeChunkingSize): an answer written whole that fits in it
// gets its Content-Length from net/http; a longer one, without ours, is
// sent chunked.
const chunkingSize = 2048

// longAnswer is the size over which an answer gets the whole write
// timeout (Config.WriteTimeout) from its first byte.
const longAnswer = 64 << 10

// allowWrite gives an answer of n bytes (n < 0: streamed, of unknown size)
// the whole write timeout, when it is over longAnswer bytes.
func allowWrite(w http.ResponseWriter, timeout time.Duration, n int) {
	if timeout > 0 && (n < 0 || n > longAnswer) {
		// An error means a writer without deadlines (tests): nothing to do.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout))
	}
}

// writeOK sends a 200 with body, compressed in coding enc (unless
// identity, or too small to gain), giving a long one the whole write
// timeout.
func writeOK(w http.ResponseWriter, hd http.Header, enc int, body []byte, timeout time.Duration) int {
	allowWrite(w, timeout, len(body))
	if enc == encIdentity || len(body) < compressMin {
		if len(body) > chunkingSize {
			// Known length: one write, no chunked framing (net/http
			// counts a shorter answer itself, at no cost).
			hd["Content-Length"] = []string{strconv.Itoa(len(body))}
		}
		w.WriteHeader(http.StatusOK)
		w.Write(body)
		return http.StatusOK
	}
	setEncoding(hd, enc)
	w.WriteHeader(http.StatusOK)
	z := getCompressor(enc, w)
	z.Write(body)
	z.Close()
	putCompressor(enc, z)
	return http.StatusOK
}

// writeCSV writes the CSV form of the JSON answer the handler made: what
// it emitted, then body (or its cached answer).
func (a *API) writeCSV(c *call, w http.ResponseWriter, route string, rt *Route, body []byte) int {
	size := len(c.csvSrc) + len(body)
	if c.cached != nil {
		size = len(c.cached.raw)
	}
	if errors.Is(c.werr, errCSVTooLarge) || size > maxCSVSource {
		c.csvSrc = c.csvSrc[:0]
		return a.writeError(w, c, route, http.StatusBadRequest, fmt.Sprintf("this answer is over %d MB of JSON, too large for a CSV form: ask for fewer tickers, a shorter window or a page (limit, offset)", maxCSVSource>>20))
	}
	var src []byte
	if c.cached != nil {
		src = c.cached.raw // shared: never appended to
		c.cached = nil
	} else {
		src = append(c.csvSrc, body...)
		c.csvSrc = src[:0] // ours: kept for the next CSV answer of this call
	}
	out, err := toCSV(rt.CSV, src)
	if err != nil {
		a.log.Error("CSV form failed", "route", route, "err", err.Error())
		return a.writeError(w, c, route, http.StatusInternalServerError, "internal server error")
	}
	hd := w.Header()
	hd["Content-Type"] = ctCSV
	hd["X-Content-Type-Options"] = noSniff
	return writeOK(w, hd, c.enc, out, a.cfg.WriteTimeout)
}

// failure reports whether an answer of status st is the server's failure,
// logged as an error: a 5xx other than 503, which is the expected answer
// of /readyz while a snapshot loads or the server drains (probes ask it
// every few seconds; the access log has each one).
func failure(st int) bool {
	return st >= 500 && st != http.StatusServiceUnavailable
}

// setEncoding sets Content-Encoding for coding enc.
func setEncoding(hd http.Header, enc int) {
	switch enc {
	case encGzip:
		hd["Content-Encoding"] = hdrGzip
	case encZstd:
		hd["Content-Encoding"] = hdrZstd
	}
}

// authenticate checks the Authorization header.
func (a *API) authenticate(r *http.Request) *keyState {
	h := r.Header["Authorization"]
	if len(h) != 1 {
		return nil
	}
	v := h[0]
	const scheme = "Bearer "
	if len(v) <= len(scheme) || !strings.EqualFold(v[:len(scheme)], scheme) {
		return nil
	}
	return a.keys.Load().find(strings.TrimSpace(v[len(scheme):]))
}

// readBody reads the request body into c.body, up to the cap.
func (a *API) readBody(c *call, r *http.Request) error {
	if r.ContentLength > a.cfg.MaxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", a.cfg.MaxBodyBytes)
	}
	b := c.body[:0]
	if r.Body == nil {
		c.body = b
		return nil
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > a.cfg.MaxBodyBytes {
			c.body = b[:0]
			return errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", a.cfg.MaxBodyBytes)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			c.body = b[:0]
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return errorf(http.StatusRequestEntityTooLarge, "request body too large")
			}
			// The error's text names the sockets: the client gets a
			// generic message.
			var ne net.Error
			if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
				return errorf(http.StatusRequestTimeout, "request body not received in time: send it whole within the server's read timeout")
			}
			return badRequest("request body: incomplete (the connection failed while reading it)")
		}
	}
	c.body = b
	return nil
}

// writeError writes the JSON error body and returns status.
func (a *API) writeError(w http.ResponseWriter, c *call, route string, status int, msg string) int {
	c.buf = appendError(c.buf[:0], status, msg)
	hd := w.Header()
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	w.Write(c.buf)
	return status
}

// plainError writes a JSON error outside any route (router-level 404/405).
func (a *API) plainError(w http.ResponseWriter, status int, msg string) {
	hd := w.Header()
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	w.Write(appendError(nil, status, msg))
}
