package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"weak"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// The way in, in phases: wrap (metrics, the pooled call, panics), then
// serve: authenticate, authorize (admin.go), limit, resolve the view,
// read the body, negotiate the answer, look up the cache (304 or a kept
// answer), run the handler, end the answer. Each phase that can answer returns the status it sent
// (0: go on); every answer leaves through the call's answer (answer.go).

// wrap turns rt into an httprouter.Handle: the pooled call, panic
// recovery and the route's metrics around serve.
func (a *API) wrap(rt *Route) httprouter.Handle {
	route := rt.Path
	rm := a.m.route(route)
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		c := a.calls.Get().(*call)
		c.out.begin(w, r, route, a)
		// One clock reading for the access log and the metrics: each costs
		// as much as a router lookup.
		var start time.Time
		if c.out.log != nil {
			start = c.out.log.start
		} else {
			start = time.Now()
		}
		a.m.inflight.Add(1)
		// A read of the snapshot's mapped file that faults (the file was
		// cut in place) panics instead of ending the process; the
		// recovery below answers it (mapfile.Fault). The goroutine's
		// setting is restored after it.
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		status := 0
		defer func() {
			if p := recover(); p != nil {
				cut := p == http.ErrAbortHandler // a deliberate cut (endStream)
				fault := mapfile.Fault(p)
				switch {
				case fault != nil:
					// The snapshot's file changed under its mapping: the
					// Dataset answers nothing more (503 until a reload).
					// A stream holds no Dataset in its call (c.ds is nil):
					// its reads fail their view's (catchFault); a fault
					// left there is still a fault, not an internal error.
					if c.ds != nil {
						c.ds.Fail(fault)
					}
				case !cut:
					a.m.panics.Inc()
					a.log.Error("panic in handler", "route", route, "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(p))
				}
				if cut || c.out.streamed {
					// Part of a 200 answer went out: the connection is
					// cut, so that the client cannot take a truncated
					// body for a complete one (nor read an error in it).
					if fault != nil {
						a.log.Error("a read of the snapshot's mapped file faulted after the answer started: the connection is cut", "route", route, "error", fault)
					}
					rm.observe(http.StatusOK, time.Since(start))
					a.m.inflight.Add(-1)
					c.out.reset() // the call is not reused: give back what its answer holds
					panic(http.ErrAbortHandler)
				}
				if fault != nil {
					status = c.out.failErr(a.failedSnapshot(c, c.ds, fault, faultLog, faultWhy))
				} else {
					status = c.out.fail(http.StatusInternalServerError, "internal server error")
				}
				c.out.reset()
				c = newCall() // do not reuse a call left in an unknown state
			}
			d := time.Since(start)
			if c.out.log != nil {
				c.out.log.duration = d
			}
			rm.observe(status, d)
			a.m.inflight.Add(-1)
			c.reset()
			if cap(c.out.buf) <= 64<<20 {
				a.calls.Put(c)
			}
		}()
		status = a.serve(c, r, ps, rt)
	}
}

// serve answers r: the phases in order.
func (a *API) serve(c *call, r *http.Request, ps httprouter.Params, rt *Route) int {
	c.route = rt
	o := &c.out
	o.events = rt.Stream
	if !rt.Root {
		if st := a.authenticate(c, r); st != 0 {
			return st
		}
		if st := a.authorize(c, rt); st != 0 {
			return st
		}
		if st := a.limit(c); st != 0 {
			return st
		}
		if rt.Priced || rt.Stream {
			if st := a.restoring(c); st != 0 {
				return st
			}
		}
		if st := a.resolveView(c, r); st != 0 {
			return st
		}
	}
	if r.Method == http.MethodPost {
		if err := a.readBody(c, r); err != nil {
			return o.failErr(err)
		}
	}
	if c.ds != nil && c.ds.Deferred() && readsDeferred(a, c, r) {
		if st := a.awaitDeferred(c, r); st != 0 {
			return st
		}
	}
	if rt.raw != nil {
		return rt.raw(a, c, r, ps)
	}
	if !rt.Root && !rt.Admin && !rt.Stream { // a push is applied, a stream streamed: never answered from a cache
		o.negotiate(r, rt, c)
		if st := a.lookup(c, r); st != 0 {
			return st
		}
		// The answer is computed: it takes a slot of its key's share.
		if st := a.admit(c, r); st != 0 {
			return st
		}
		defer a.leave(c)
	}
	body, err := rt.serve(a, c, o.buf[:0], r, ps)
	return o.end(body, err)
}

// authenticate finds the request's key (the Authorization header). A
// request without a known key is answered 401; once its client address
// has failed too often (authlimit.go) the 401 carries Retry-After.
func (a *API) authenticate(c *call, r *http.Request) int {
	h := r.Header["Authorization"]
	var key *keyState
	missing := true
	if len(h) == 0 && a.cfg.QueryToken {
		if tok, ok := takeQueryToken(r); ok {
			missing = false
			key = a.keys.Load().find(tok)
		}
	}
	if len(h) == 1 {
		v := h[0]
		const scheme = "Bearer "
		if len(v) > len(scheme) && strings.EqualFold(v[:len(scheme)], scheme) {
			missing = false
			key = a.keys.Load().find(strings.TrimSpace(v[len(scheme):]))
		}
	}
	if key != nil {
		c.key = key.KeyEntry
		c.lim = key.lim
		c.adm = key.adm
		c.out.noteKey(key.Name)
		return 0
	}
	hd := c.out.w.Header()
	hd["Www-Authenticate"] = bearerHdr
	msg := "unauthorized: unknown API key (check it, or ask for a new one)"
	if missing {
		msg = "unauthorized: send the header Authorization: Bearer <API key>" + queryTokenHint(a.cfg.QueryToken, r)
	}
	if wait, ok := a.authFails.fail(r.RemoteAddr, time.Now()); !ok {
		a.m.authFailures.WithLabelValues("limited").Inc()
		s := secondsUp(wait)
		hd["Retry-After"] = []string{strconv.Itoa(s)}
		return c.out.fail(http.StatusUnauthorized, msg+"; too many requests without a valid API key from this address: retry in "+strconv.Itoa(s)+" s")
	}
	a.m.authFailures.WithLabelValues("refused").Inc()
	return c.out.fail(http.StatusUnauthorized, msg)
}

// limit takes a token of the key's rate limit: 429 when it has none.
func (a *API) limit(c *call) int {
	lim := c.lim
	if lim == nil {
		return 0
	}
	wait, ok := lim.take(time.Now(), c.out.w.Header())
	if ok {
		return 0
	}
	a.m.rateLimited.WithLabelValues(c.key.Name).Inc()
	if !a.keys.Load().holds(c.key) {
		// Removed by a keys reload since this request's key check: its
		// series went with it (dropKeys), and goes again.
		a.m.rateLimited.DeleteLabelValues(c.key.Name)
	}
	s := secondsUp(wait)
	c.out.w.Header()["Retry-After"] = []string{strconv.Itoa(s)}
	return c.out.fail(http.StatusTooManyRequests, fmt.Sprintf("too many requests: this key may send %g a second (bursts of %d); retry in %d s", lim.limit.PerSecond, lim.limit.Burst, s))
}

// resolveView fixes what the request sees: the current View (the Dataset
// and the live session beside it), loaded once, and the clock's now. 503
// while no snapshot is published, and once a block of the snapshot's
// bars is found bad. A route whose answer may read any column block
// (Route.Blocks BlocksAll, for the route or for this request) verifies
// every block not yet verified first: once they all are, a call. A
// route that reads none, or only the tickers it names (which it
// verifies itself), is served at once.
func (a *API) resolveView(c *call, r *http.Request) int {
	if v := a.store.View(); v != nil {
		c.ds, c.live = v.Base, v.Live
	}
	if c.ds == nil {
		c.out.w.Header()["Retry-After"] = retryLoading
		return c.out.fail(http.StatusServiceUnavailable, a.notLoaded()+"; retry shortly")
	}
	if err := c.ds.BlockErr(); err != nil {
		return c.out.failErr(a.badBlock(c, err))
	}
	if err := c.ds.DeferredErr(); err != nil {
		return c.out.failErr(a.failedDeferred(c, err))
	}
	c.now = a.clock.Now()
	if a.blockScope(c, r) == BlocksAll {
		if err := c.ds.CheckAll(); err != nil {
			return c.out.failErr(a.badBlock(c, err))
		}
	}
	return 0
}

// blockScope returns what c's answer reads of the column blocks: its
// route's declaration, or the route's answer for this request.
func (a *API) blockScope(c *call, r *http.Request) BlockScope {
	rt := c.route
	switch {
	case rt.Admin:
		return BlocksNone // a push reads no block (it is no answer)
	case c.ds.Blocks() == nil:
		return BlocksNone // nothing to verify: the bars are verified already
	case rt.blocksFor != nil:
		return rt.blocksFor(a, c, r)
	}
	return rt.Blocks
}

// badBlock returns the error of a request whose answer would read a
// block of the snapshot that does not match its checksum: 503 with
// Retry-After (another replica, or the next snapshot, answers), logged
// once per snapshot. No answer is made from the snapshot.
func (a *API) badBlock(c *call, err error) error {
	return a.failedSnapshot(c, c.ds, err, badBlockLog, badBlockWhy)
}

// The log line and the answer's reason of a bad block, and of deferred
// kinds that failed to load.
const (
	badBlockLog = "snapshot block failed its checksum: answering 503"
	badBlockWhy = "the snapshot is damaged"
	deferredLog = "snapshot's deferred kinds failed to load: answering 503"
	deferredWhy = "the snapshot could not be loaded whole"
)

// failedSnapshot returns the error of a request to failed snapshot ds
// (what says so, why): 503 with Retry-After, the failure logged once per
// snapshot (log), or each time when ds is not known (nil).
func (a *API) failedSnapshot(c *call, ds *engine.Dataset, err error, log, why string) error {
	c.out.w.Header()["Retry-After"] = retryLoading
	a.logFailed(ds, err, log)
	return errorf(http.StatusServiceUnavailable, "%s (%v): not answered; retry shortly", why, err)
}

// logFailed logs the failure err of Dataset ds (log says what is
// answered), once per snapshot, or each time when ds is not known (nil).
func (a *API) logFailed(ds *engine.Dataset, err error, log string) {
	if ds == nil {
		a.log.Error(log, "error", err)
		return
	}
	w := weak.Make(ds)
	if old := a.badBlockLogged.Swap(&w); old == nil || *old != w {
		a.log.Error(log, "as_of", ds.AsOf(), "error", err)
	}
}

// The log line and the answer's reason of a fault reading a snapshot's
// mapped file.
const (
	faultLog = "a read of the snapshot's mapped file faulted: answering 503"
	faultWhy = "the snapshot is damaged"
)

// catchFault runs f, which reads ds, on a goroutine with
// debug.SetPanicOnFault set: a fault reading a mapped file there
// (mapfile.Fault) fails ds and is returned; any other panic goes on.
func catchFault(ds *engine.Dataset, f func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if err = mapfile.Fault(p); err == nil {
				panic(p)
			}
			ds.Fail(err)
		}
	}()
	f()
	return nil
}

// readsDeferred reports whether c's answer may read a deferred kind of
// its Dataset (Route.Deferred): its route's declaration, the screener
// beside a live session, or a request that names an earlier time (as_of, in its query or its body; a
// percent-encoded query or an escaped body is not read here, so it
// counts as naming one), or a valuation whose dividend yield counts
// them (valuing). Called only while the kinds are awaited.
func readsDeferred(a *API, c *call, r *http.Request) bool {
	rt := c.route
	if rt.Deferred {
		return true
	}
	if c.live != nil && rt.Path == routeScreener {
		// Repriced at a live session, the dividend yield counts the
		// cash of the session's twelve months (Screener.Priced).
		return true
	}
	if q := r.URL.RawQuery; strings.Contains(q, "as_of") || strings.IndexByte(q, '%') >= 0 {
		return true
	}
	if a.valuing(c) { // the dividend yield of the session before counts cash
		return true
	}
	return bytes.Contains(c.body, []byte("as_of")) || bytes.IndexByte(c.body, '\\') >= 0
}

// deferredWaitMax bounds a request's wait for its snapshot's deferred
// kinds (awaitDeferred): they take about 1 to 3 s at scale 10, longer
// while requests keep every core busy (a reload's are decoded at the
// lowest priority).
var deferredWaitMax = 10 * time.Second

// awaitDeferred waits until c's Dataset has its deferred kinds: 0 once
// they are in; 503 when they could not be loaded (the snapshot is
// failed, as for a bad block), or are not in within deferredWaitMax
// (with Retry-After: they are coming); 499, sending nothing, when the
// client left first.
func (a *API) awaitDeferred(c *call, r *http.Request) int {
	a.m.deferredWaits.Inc()
	ctx, cancel := context.WithTimeout(r.Context(), deferredWaitMax)
	defer cancel()
	err := c.ds.WaitDeferred(ctx)
	switch {
	case err == nil:
		return 0
	case r.Context().Err() != nil:
		return c.out.clientLeft()
	case ctx.Err() != nil:
		c.out.w.Header()["Retry-After"] = retryLoading
		return c.out.fail(http.StatusServiceUnavailable, "the snapshot's cash actions, fund data, insider reports and documents are still loading: retry shortly")
	}
	return c.out.failErr(a.failedDeferred(c, err))
}

// failedDeferred returns the error of a request to a snapshot whose
// deferred kinds could not be loaded: a failed snapshot, as one with a
// bad block.
func (a *API) failedDeferred(c *call, err error) error {
	return a.failedSnapshot(c, c.ds, err, deferredLog, deferredWhy)
}

// readBody reads the request body into c.body, up to the route's cap.
func (a *API) readBody(c *call, r *http.Request) error {
	if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
		// A compressed body would be read as JSON and fail at its first
		// byte: say what is wrong (RFC 9110 §15.5.16, RFC 7694).
		c.out.w.Header()["Accept-Encoding"] = []string{"identity"}
		return errorf(http.StatusUnsupportedMediaType, "request body: Content-Encoding %q is not accepted: send the body uncompressed", ce)
	}
	limit := a.bodyCap(c.route)
	if r.ContentLength > limit {
		return errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", limit)
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
		if int64(len(b)) > limit {
			c.body = b[:0]
			return errorf(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", limit)
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

// companyBlocks is Route.blocksFor of the company ratio and report
// routes, which read the ratio points or the reports (heads and
// accounts) of the company they name (BlocksCompany),
// unless the request asks for an earlier time (as_of: the valuation at
// a session reads bars) or its query is percent-encoded (whose names
// are not read here): then they may read any. A route that shows
// valuations (Route.valued) prices them, while its key's view leaves
// out the Dataset's last session, at the view of the session before
// (valuer): it reads no bar when that view is made from the series'
// summaries (valuedBlocks), else any.
func companyBlocks(a *API, c *call, r *http.Request) BlockScope {
	q := r.URL.RawQuery
	if strings.IndexByte(q, '%') >= 0 || strings.Contains(q, "as_of") {
		return BlocksAll
	}
	if c.route.valued && a.valuedBlocks(c) == BlocksAll {
		return BlocksAll
	}
	return BlocksCompany
}

// marketCapBlocks is Route.blocksFor of the company detail: no block
// without show_market_cap; with it, the named company's ratio points
// (BlocksCompany), or any block at an earlier time (as_of), for a
// percent-encoded query or for a market cap priced at a view made from
// the bars, as companyBlocks.
func marketCapBlocks(a *API, c *call, r *http.Request) BlockScope {
	if noBlocksUnless("show_market_cap")(a, c, r) == BlocksNone {
		return BlocksNone
	}
	return companyBlocks(a, c, r)
}

// checkCompany verifies the blocks of is's ratio points when c's
// scope is BlocksCompany (its handler reads them; under BlocksAll
// resolveView has verified every block).
func (a *API) checkCompany(c *call, is *engine.Issuer) error {
	if err := c.ds.CheckIssuer(is); err != nil {
		return a.badBlock(c, err)
	}
	return nil
}

// noBlocksUnless is Route.blocksFor of a route that reads no column
// block unless one of the query parameters names is sent (whatever its
// value: show_market_cap=false too), or the query is percent-encoded
// (whose names are not read here): then it may read any.
func noBlocksUnless(names ...string) func(*API, *call, *http.Request) BlockScope {
	return func(_ *API, _ *call, r *http.Request) BlockScope {
		q := r.URL.RawQuery
		if strings.IndexByte(q, '%') >= 0 {
			return BlocksAll
		}
		for _, n := range names {
			if strings.Contains(q, n) {
				return BlocksAll
			}
		}
		return BlocksNone
	}
}
