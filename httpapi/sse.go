package httpapi

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// The session stream (addition): GET /stream/quotes sends the live
// session to the client as Server-Sent Events (text/event-stream), as
// the key's plan sees it: the bars, the quotes they change, the
// corrections and the session's states (sseevents.go).
//
// One hub per plan makes the steps: every StreamStep it loads the
// published view once (never half a batch) and the clock, and when the
// plan's cursor moved it makes the step's events for every ticker, each
// encoded once and shared by every subscriber, which takes those of its
// tickers. A subscriber is a request: it catches up from its
// Last-Event-ID with the view of the hub's last step, then follows the
// steps through a channel of StreamQueue steps; one that falls that far
// behind is cut (counted) and reconnects where it was. The feed never
// waits for the stream: the hubs only read what the Store published.
//
// Bounds: StreamConnsPerKey streams per key (429 past it), MaxStreams in
// all (503), each refusal sent to an EventSource as events that ask it
// to retry (sserefuse.go); a write that does not go through within the
// write timeout cuts the stream; the shutdown, after the drain
// (EndStreams), ends every stream, the client reconnecting elsewhere
// with its Last-Event-ID.

// Stream defaults (Config).
const (
	DefaultStreamConnsPerKey = 8
	DefaultMaxStreams        = 10000
	defaultStreamStep        = 100 * time.Millisecond
	defaultStreamHeartbeat   = 15 * time.Second
	streamQueue              = 64
	// sseRetry is the reconnection delay the stream asks of clients.
	sseRetry = 3000 // milliseconds
	// sseDamaged ends a stream whose snapshot failed (a bad block, a
	// fault reading its file, its deferred kinds): its client's
	// reconnection is answered 503 until a reload.
	sseDamaged = ": the snapshot is damaged: reconnect (with Last-Event-ID) later\n\n"
)

// retryStreams is the Retry-After, in seconds, of a stream refused for
// its key's or the server's count of streams.
var retryStreams = []string{"10"}

const routeStreamQuotes = "/stream/quotes"

// streamAheadWait is how long a stream resumed with an id ahead of this
// server's view waits for the view to reach it: a replica behind the one
// the client came from gets there within seconds (a restarted one within
// its restore). An id no step reaches by then is of another timeline (a
// made-up id, a deployment whose stream was reset): the client starts at
// the present, as a new one does, with the session's state.
var streamAheadWait = 30 * time.Second

// sseStep is the events between two cursors, with the view at the
// second.
type sseStep struct {
	from, to sseCursor
	sv       *sseView
	events   []sseEvent // by ticker ("" first), as diff orders them
}

// sseHub makes the steps of one plan.
type sseHub struct {
	a    *API
	plan string

	mu    sync.Mutex
	subs  map[*sseSub]struct{}
	last  *sseView       // the view of the last step (nil: none yet)
	ran   time.Time      // the clock of the last step tried
	wants map[string]int // the symbols of the indexes streamed, with their streams
	stop  chan struct{}  // closes the running loop (nil: not running)
}

// sseSub is one stream.
type sseSub struct {
	// The key's digest and plan when the stream began: a keys reload that
	// revokes the key or changes its plan ends the stream (recheck).
	digest [sha256.Size]byte
	plan   string
	steps  chan *sseStep
	cut    chan struct{} // closed by the hub: too far behind, draining, or the key changed
	once   sync.Once
	why    atomic.Pointer[string]
}

func (s *sseSub) close(why string) {
	s.once.Do(func() {
		s.why.Store(&why)
		close(s.cut)
	})
}

// sseHubs are the hubs of the plans and the streams' counts.
type sseHubs struct {
	hubs   map[string]*sseHub
	mu     sync.Mutex
	perKey map[string]int
	total  int
	closed bool
	m      *sseMetrics
}

type sseMetrics struct {
	subscribers *prometheus.GaugeVec
	events      *prometheus.CounterVec
	cut         *prometheus.CounterVec
	byKind      [len(eventKinds)]prometheus.Counter // events' series by eventKind, made once
}

// eventKind is the kind of a stream's event: its "event:" field and
// its counter (sseMetrics.byKind, sseOut.counted).
type eventKind uint8

const (
	kindBar eventKind = iota
	kindCorrection
	kindQuote
	kindSession
)

// eventKinds are the kinds' names, by eventKind.
var eventKinds = [...]string{kindBar: "bar", kindCorrection: "correction", kindQuote: "quote", kindSession: "session"}

func (k eventKind) String() string { return eventKinds[k] }

func newSSEHubs(a *API, reg prometheus.Registerer) *sseHubs {
	h := &sseHubs{hubs: map[string]*sseHub{}, perKey: map[string]int{}, m: &sseMetrics{
		subscribers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "pregao_stream_subscribers",
			Help: "Open streams of the live session (GET /stream/quotes) by plan."}, []string{"plan"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_stream_events_total",
			Help: "Events sent on the streams of the live session, by event: bar, correction, quote, session."}, []string{"event"}),
		cut: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pregao_stream_cut_total",
			Help: "Streams the server ended, by reason: slow (too far behind the steps), write (a write did not go through in time: the write timeout or the TCP user timeout), drain (shutdown), key (a keys reload revoked the stream's key or changed its plan), damaged (its snapshot found damaged)."}, []string{"reason"}),
	}}
	for _, p := range []string{PlanDelayed, PlanEOD} {
		h.hubs[p] = &sseHub{a: a, plan: p, subs: map[*sseSub]struct{}{}, wants: map[string]int{}}
		h.m.subscribers.WithLabelValues(p)
	}
	for i, e := range eventKinds {
		h.m.byKind[i] = h.m.events.WithLabelValues(e)
	}
	for _, r := range []string{"slow", "write", "drain", "key", "damaged"} {
		h.m.cut.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(h.m.subscribers, h.m.events, h.m.cut)
	}
	return h
}

// admit counts a new stream of key: false when the key has its streams
// (perKey) or the server its total (what, for the answer).
func (h *sseHubs) admit(key string, perKey, total int) (ok bool, what string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return false, "draining"
	case h.perKey[key] >= perKey:
		return false, "key"
	case h.total >= total:
		return false, "total"
	}
	h.perKey[key]++
	h.total++
	return true, ""
}

func (h *sseHubs) release(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.perKey[key]--; h.perKey[key] <= 0 {
		delete(h.perKey, key)
	}
	h.total--
}

// closeAll ends every stream (draining) and refuses new ones.
func (h *sseHubs) closeAll() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	for _, hub := range h.hubs {
		hub.mu.Lock()
		for s := range hub.subs {
			s.close("drain")
		}
		hub.mu.Unlock()
	}
}

// ended reports whether closeAll ran. A stream that reads it after its
// subscription is ended by closeAll or sees true: closeAll sets closed
// before it looks at each hub's subscribers, under the hub's lock.
func (h *sseHubs) ended() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// recheck ends the streams whose key keys no longer has, or has with
// another plan: a revoked key stops receiving the session, and a key
// moved to another plan reconnects to that plan's stream.
func (h *sseHubs) recheck(keys *Keys) {
	for _, hub := range h.hubs {
		hub.mu.Lock()
		for s := range hub.subs {
			if !s.keyHolds(keys) {
				s.close("key")
			}
		}
		hub.mu.Unlock()
	}
}

// keyHolds reports whether keys still has s's key, with s's plan.
func (s *sseSub) keyHolds(keys *Keys) bool {
	var st *keyState
	if keys != nil {
		st = keys.byDigest[s.digest]
	}
	return st != nil && st.Plan == s.plan
}

// beforeStreamSubscribe runs between a stream's key check and its
// subscription (tests: a keys reload right there).
var beforeStreamSubscribe = func() {}

// beforeStreamDiff runs in a stream's diff, where it reads its view's
// Dataset (tests: a read that faults right there).
var beforeStreamDiff = func() {}

// sseFailure is why a Dataset feeds no stream: its error, and the log
// line and the answer's reason of a request refused for it.
type sseFailure struct {
	ds       *engine.Dataset
	err      error
	log, why string
}

// streamable returns why ds may not feed a stream (nil: it may), as
// resolveView refuses a request to it: a bad block found (or a fault
// that failed it, Dataset.Fail), or its deferred kinds failed. A stream
// reads the bars of any ticker, so the blocks not yet verified are
// verified first (Dataset.CheckAll; once they all are, an atomic load):
// a reload of a fetched copy publishes it before its blocks are
// verified, and no stream reads one before it is.
func streamable(ds *engine.Dataset) *sseFailure {
	if err := ds.BlockErr(); err != nil {
		return &sseFailure{ds, err, badBlockLog, badBlockWhy}
	}
	if err := ds.DeferredErr(); err != nil {
		return &sseFailure{ds, err, deferredLog, deferredWhy}
	}
	if err := ds.CheckAll(); err != nil {
		return &sseFailure{ds, err, badBlockLog, badBlockWhy}
	}
	return nil
}

// subscribe registers s and returns the view of the hub's last step,
// which the subscriber catches up to (the hub's steps after it come
// through s.steps); the loop starts with the first subscriber. A stopped
// hub's view is made from the published one, refused (s unsubscribed)
// when its Dataset may not feed a stream (streamable); a running hub's
// last step was made from one that could, and a catch-up checks it
// again (streamDiff).
func (hub *sseHub) subscribe(s *sseSub, index string) (*sseView, *sseFailure) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.last == nil || hub.stop == nil {
		v := *hub.a.store.View()
		if f := streamable(v.Base); f != nil {
			return nil, f
		}
		// The view reads its Dataset: a fault there (the snapshot's file
		// cut in place) fails it, and the stream is refused unsubscribed.
		var sv *sseView
		if err := catchFault(v.Base, func() {
			sv = hub.a.sseViewOf(hub.plan, v, hub.a.clock.Now(), hubCursor(hub.last))
		}); err != nil {
			return nil, &sseFailure{v.Base, err, faultLog, faultWhy}
		}
		hub.last = sv
	}
	hub.subs[s] = struct{}{}
	if index != "" {
		hub.wants[index]++
	}
	if hub.stop == nil {
		hub.stop = make(chan struct{})
		go hub.loop(hub.stop)
	}
	return hub.last, nil
}

func hubCursor(sv *sseView) sseCursor {
	if sv == nil {
		return sseCursor{session: engine.NoDate}
	}
	return sv.cur
}

// view returns the view of the hub's last step.
func (hub *sseHub) view() *sseView {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	return hub.last
}

func (hub *sseHub) unsubscribe(s *sseSub, index string) {
	hub.mu.Lock()
	defer hub.mu.Unlock()
	delete(hub.subs, s)
	if index != "" {
		if hub.wants[index]--; hub.wants[index] <= 0 {
			delete(hub.wants, index)
		}
	}
	if len(hub.subs) == 0 && hub.stop != nil {
		close(hub.stop)
		hub.stop = nil
		// Stopped, the hub keeps only its cursor: a view would hold its
		// Dataset (and live session) past the next publish.
		hub.last = &sseView{cur: hub.last.cur}
	}
}

// loop makes a step every StreamStep until stop is closed.
func (hub *sseHub) loop(stop chan struct{}) {
	t := time.NewTicker(hub.a.cfg.StreamStep)
	defer t.Stop()
	debug.SetPanicOnFault(true)
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			hub.guardedStep(stop)
		}
	}
}

// guardedStep is step, a fault reading the snapshot's mapped file (cut
// in place) failing the published Dataset (its requests then answer
// 503) instead of ending the process; the loop goes on with the next
// snapshot a reload publishes.
func (hub *sseHub) guardedStep(stop chan struct{}) {
	defer func() {
		mapfile.Catch(recover(), func(err error) {
			if v := hub.a.store.View(); v != nil {
				v.Base.Fail(err)
			}
			hub.a.log.Error("a read of the snapshot's mapped file faulted in a stream's step: the snapshot answers 503", "error", err)
		})
	}()
	hub.step(stop)
}

// step makes the step from the last view to the published one, if the
// plan's cursor moved, and hands it to every subscriber; one whose queue
// is full is cut. stop is the running loop's: a step that finds the loop
// stopped meanwhile (its last subscriber left while the step waited for
// the lock) does nothing, so that a stopped hub keeps only its cursor.
// A published Dataset that may not feed a stream (streamable: a bad
// block, verified here before anything is read, or a failure) ends
// every stream instead, as "damaged": their clients' reconnections are
// refused (503) until a reload publishes a good snapshot.
func (hub *sseHub) step(stop chan struct{}) {
	v := hub.a.store.View()
	if v == nil {
		return
	}
	failed := streamable(v.Base) // outside the lock: a first verification reads every block
	now := hub.a.clock.Now()
	hub.mu.Lock()
	defer hub.mu.Unlock()
	if hub.stop != stop {
		return
	}
	if failed != nil {
		if len(hub.subs) > 0 {
			hub.a.logFailed(failed.ds, failed.err, failed.log)
		}
		for s := range hub.subs {
			s.close("damaged")
		}
		return
	}
	last := hub.last
	sv := hub.a.sseViewOf(hub.plan, *v, now, hubCursor(last))
	hub.ran = now
	if !sv.cur.after(last.cur) {
		if sv.ev.Base != last.ev.Base || sv.ev.Live != last.ev.Live {
			hub.last = sv // the same cursor, a newer view: a later catch-up reads it
		}
		return
	}
	// Every index some subscriber wants, in order of symbol, computed
	// along with the tickers.
	m := markAt(last.cur)
	events := hub.a.diff(nil, &m, sv, nil, nil, nil)
	for symbol := range hub.wants {
		if bx, ok := sv.ev.Base.Index(symbol); ok {
			events = hub.a.diff(events, &m, sv, []*engine.Asset{}, bx, nil)
		}
	}
	slices.SortStableFunc(events, func(x, y sseEvent) int {
		switch {
		case x.ticker == y.ticker:
			return 0
		case x.ticker < y.ticker:
			return -1
		}
		return 1
	})
	st := &sseStep{from: last.cur, to: sv.cur, sv: sv, events: dedupSession(events)}
	hub.last = sv
	for s := range hub.subs {
		select {
		case s.steps <- st:
		default:
			s.close("slow")
		}
	}
}

// dedupSession keeps one copy of each session event (the index diffs
// repeat them).
func dedupSession(events []sseEvent) []sseEvent {
	out := events[:0]
	seen := map[string]bool{}
	for _, e := range events {
		if e.ticker == "" {
			k := string(e.msg)
			if seen[k] {
				continue
			}
			seen[k] = true
		}
		out = append(out, e)
	}
	return out
}

// sseWant is what a stream takes: the events of its tickers (sorted),
// with the level of the index of symbol index ("": none), which is among
// them. It names them only: a stream lasts across publishes, and holds
// no asset of a Dataset between its steps (sseAssets).
type sseWant struct {
	tickers []string
	index   string
}

// sseAssets are a stream's tickers and index as one Dataset has them,
// with that Dataset: a format 6 snapshot's bars are read in place from
// its mapped file, released with the Dataset, so that the assets are
// read only while ds is held (a reload may drop every other reference to
// it), and resolved again in the Dataset of each view they are read
// with (the live session is bound to that one's assets).
type sseAssets struct {
	ds     *engine.Dataset
	assets []*engine.Asset
	index  *engine.IndexData
}

// resolve returns w's assets and index in ds (tickers ds does not have
// left out; an index without a level there: none).
func (w *sseWant) resolve(ds *engine.Dataset) sseAssets {
	r := sseAssets{ds: ds, assets: make([]*engine.Asset, 0, len(w.tickers))}
	for _, t := range w.tickers {
		if as, ok := ds.Asset(t); ok {
			r.assets = append(r.assets, as)
		}
	}
	if w.index != "" {
		r.index, _ = indexLevelTicker(ds, w.index)
	}
	return r
}

// streamDiff sends out the events of API.diff of the stream's assets in
// sv's Dataset, which it holds until they are made, as they are made (a
// catch-up of a whole session is not held whole). A fault reading the
// Dataset's mapped file (cut in place) fails it and is returned: the
// stream ends, and its client, reconnecting, is answered 503 until a
// reload.
func (a *API) streamDiff(out *sseOut, m *sseMark, sv *sseView, w *sseWant) error {
	// The view's Dataset failed since its step (or the hub's last step's
	// Dataset did, and a reload has come): nothing is read from it.
	if f := streamable(sv.ev.Base); f != nil {
		a.logFailed(f.ds, f.err, f.log)
		return f.err
	}
	err := catchFault(sv.ev.Base, func() {
		beforeStreamDiff()
		r := w.resolve(sv.ev.Base)
		// A client gone (a failed write) stops the catch-up: nothing more
		// is made for it.
		send := func(evs []sseEvent) bool { out.events(evs, nil); return out.err == nil }
		send(a.diff(nil, m, sv, r.assets, r.index, send))
		runtime.KeepAlive(r.ds)
	})
	if err != nil {
		a.log.Error("a read of the snapshot's mapped file faulted in a stream: the stream ends, the snapshot answers 503", "as_of", sv.ev.Base.AsOf(), "error", err)
	}
	return err
}

// streamWant reads the stream's subscription: tickers (up to
// MaxTickers, each a ticker of the snapshot) or index.
func (a *API) streamWant(c *call, r *http.Request) (sseWant, error) {
	q := c.query(r)
	tickers := q.list("tickers")
	symbol := q.str("index")
	if err := q.err(); err != nil {
		return sseWant{}, err
	}
	switch {
	case len(tickers) == 0 && symbol == "":
		return sseWant{}, badRequest("query parameter tickers or index is required: the tickers to stream, comma-separated (up to %d), or an index (IBOV) for its members and level", MaxTickers)
	case len(tickers) > 0 && symbol != "":
		return sseWant{}, badRequest("query parameters tickers and index: send one of them")
	case len(tickers) > MaxTickers:
		return sseWant{}, badRequest("query parameter tickers: %d tickers, at most %d", len(tickers), MaxTickers)
	}
	var w sseWant
	if symbol != "" {
		ix, ok := indexLevelTicker(c.ds, symbol)
		if !ok {
			if _, known := c.ds.Index(symbol); known {
				return sseWant{}, badRequest("index %q: its level cannot be computed (a portfolio without a reductor, or a member without a security)", symbol)
			}
			return sseWant{}, errorf(http.StatusNotFound, "index %q not found (GET /indexes lists them)", symbol)
		}
		w.index = strings.Clone(ix.Index.Symbol)
		w.tickers = append(w.tickers, w.index)
		for _, as := range ix.Members {
			w.tickers = append(w.tickers, strings.Clone(as.Ticker))
		}
	}
	for _, t := range tickers {
		as, ok := c.ds.Asset(t)
		if !ok || as.StockType == engine.ClassMacro {
			return sseWant{}, errorf(http.StatusNotFound, "ticker %q not found", t)
		}
		w.tickers = append(w.tickers, strings.Clone(as.Ticker))
	}
	slices.Sort(w.tickers)
	w.tickers = slices.Compact(w.tickers)
	return w, nil
}

// streamQuotes serves GET /stream/quotes: the checks, then the stream
// until the client leaves, the server drains, or the stream is cut.
func (a *API) streamQuotes(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	want, err := a.streamWant(c, r)
	if err != nil {
		return nil, err
	}
	// A stream lasts: it reads the view of each step, never the
	// request's, which would hold the Dataset of its start (and that
	// snapshot's mapping) across every reload while it runs.
	c.ds, c.live = nil, nil
	mark := sseMark{to: sseCursor{session: engine.NoDate}, from: sseCursor{session: engine.NoDate}}
	resume := false
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if mark, err = parseID(id); err != nil {
			return nil, err
		}
		resume = true
	}
	hd := c.out.w.Header()
	if ok, what := a.streams.admit(c.key.Name, a.cfg.StreamConnsPerKey, a.cfg.MaxStreams); !ok {
		hd["Retry-After"] = retryStreams
		switch what {
		case "key":
			return nil, errorf(http.StatusTooManyRequests, "too many streams for this key: %d are open, the most a key may hold; close one, or retry in 10 s", a.cfg.StreamConnsPerKey)
		case "draining":
			hd["Retry-After"] = retryDraining
			return nil, errorf(http.StatusServiceUnavailable, "the server is shutting down: reconnect (with Last-Event-ID) to another")
		}
		return nil, errorf(http.StatusServiceUnavailable, "too many streams on this server: retry in 10 s")
	}
	defer a.streams.release(c.key.Name)
	w := c.out.w
	hd["Content-Type"] = ctEventStream
	hd["Cache-Control"] = noCache
	hd["X-Accel-Buffering"] = []string{"no"} // proxies: do not hold the events back
	hd["X-Content-Type-Options"] = noSniff
	if r.Method == http.MethodHead {
		// The head a GET would get, and the end: a HEAD has no body to
		// stream, and holding it open would hold one of the key's streams.
		w.WriteHeader(http.StatusOK)
		c.out.streamed = true
		return nil, nil
	}
	hub := a.streams.hubs[c.key.Plan]
	sub := &sseSub{plan: c.key.Plan, steps: make(chan *sseStep, streamQueue), cut: make(chan struct{})}
	_, _ = hex.Decode(sub.digest[:], []byte(c.key.SHA256)) // checked by NewKeys
	beforeStreamSubscribe()
	sv, failed := hub.subscribe(sub, want.index)
	if failed != nil {
		return nil, a.failedSnapshot(c, failed.ds, failed.err, failed.log, failed.why)
	}
	defer hub.unsubscribe(sub, want.index)
	// A keys reload between the request's key check and the subscription
	// found no stream to end: its keys (stored before its check of the
	// hubs) are read here.
	if !sub.keyHolds(a.keys.Load()) {
		sub.close("key")
	}
	// Likewise the shutdown (EndStreams) between the admission and the
	// subscription: it ended the streams it found, not this one, which
	// would have held the shutdown until its timeout cut it.
	if a.streams.ended() {
		sub.close("drain")
	}
	gauge := a.streams.m.subscribers.WithLabelValues(c.key.Plan)
	gauge.Inc()
	defer gauge.Dec()

	rc := http.NewResponseController(w)
	out := &sseOut{a: a, w: w, rc: rc, timeout: a.cfg.WriteTimeout}
	w.WriteHeader(http.StatusOK)
	c.out.streamed = true // the status is sent: errors now end the stream
	out.write([]byte("retry: " + strconv.Itoa(sseRetry) + "\n\n"))
	// A stream lasts: the call's answer buffer (64 KiB, for answers) is
	// not held by it; the call gets a new one when it serves again.
	c.out.buf = nil

	// Where the client is: its last event's place, or, new, the hub's
	// last step (it gets what comes after, and the session's state).
	// A client ahead of this server's view (a replica behind the one it
	// came from, or an id made up) has the rest of its step once the
	// view reaches it: never from a view without the step's batches (the
	// minutes missing there would be lost), nor past what the plan sees.
	ahead := resume && mark.to.after(sv.cur)
	if ahead && c.key.Plan == PlanEOD && (mark.to.at != 0 || mark.from.at != 0) {
		// A cut-off minute is an id of the delayed plan's stream (the
		// key's plan changed since): no eod step will reach it, so the
		// client starts at the present now rather than after the wait.
		ahead, resume = false, false
	}
	// present starts the client at v, as a new one: the session's state
	// now, its id the client's place; then what comes.
	present := func(v *sseView) {
		mark = sseMark{from: v.cur, to: v.cur, part: -int64(v.cur.state)}
		st := stepper{mark: mark}
		st.emit("", kindSession, mark.part, appendSessionEvent(nil, v.cur.session, v.cur.state))
		out.events(st.dst, nil)
	}
	// diff sends the events from m to sv; false: sv's Dataset failed (a
	// fault, a bad block: streamDiff), which ended the stream and says so
	// to the client.
	diff := func(m *sseMark, sv *sseView) bool {
		if err := a.streamDiff(out, m, sv, &want); err != nil {
			a.streams.m.cut.WithLabelValues("damaged").Inc()
			out.write([]byte(sseDamaged))
			return false
		}
		return true
	}
	var aheadWait <-chan time.Time
	switch {
	case ahead:
		// Nothing yet: the hub's steps below, for streamAheadWait.
		t := time.NewTimer(streamAheadWait)
		defer t.Stop()
		aheadWait = t.C
	case resume:
		if !diff(&mark, sv) {
			return nil, nil
		}
	default:
		present(sv)
	}
	// Then the hub's steps.
	mine := sv.cur
	if mark.to.after(mine) {
		mine = mark.to // a client ahead of this server: the steps it has are skipped
	}
	beat := time.NewTicker(a.cfg.StreamHeartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for out.err == nil {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-aheadWait:
			aheadWait = nil
			if ahead { // no step reached the client's id: another timeline
				now := hub.view()
				present(now)
				mine, ahead = now.cur, false
			}
		case <-sub.cut:
			reason := *sub.why.Load()
			a.streams.m.cut.WithLabelValues(reason).Inc()
			switch reason {
			case "drain":
				out.write([]byte(": the server is shutting down: reconnect with Last-Event-ID\n\n"))
			case "key":
				out.write([]byte(": the API key was revoked or its plan changed\n\n"))
			case "damaged":
				out.write([]byte(sseDamaged))
			}
			return nil, nil
		case <-beat.C:
			out.write([]byte(": keep-alive\n\n"))
		case st := <-sub.steps:
			switch {
			case ahead:
				if !mark.to.after(st.to) {
					if !diff(&mark, st.sv) {
						return nil, nil
					}
					ahead = false
				}
			case !st.to.after(mine):
				// Seen already.
			case st.from == mine:
				out.events(st.events, want.tickers)
			default:
				// Behind or ahead of the hub: the events from mine, of the
				// assets of the step's Dataset (a reload may have come).
				m := markAt(mine)
				if !diff(&m, st.sv) {
					return nil, nil
				}
			}
			if st.to.after(mine) {
				mine = st.to
			}
		}
	}
	if reason := writeCut(out.err, sub); reason != "" {
		a.streams.m.cut.WithLabelValues(reason).Inc()
	}
	return nil, nil
}

// writeCut names why a stream whose write failed with err was cut by the
// server, or "" when its client left (a closed or reset connection, even
// as the hub cut sub: the client went first). Only a write that did not
// go through in time was cut: the write deadline
// (os.ErrDeadlineExceeded), or the listener's TCP user timeout, which
// gives up on unacknowledged data first on Linux (ETIMEDOUT). A write
// blocked when the hub cut sub (slow, drain, key) fails so: the hub's
// reason; any other, "write".
func writeCut(err error, sub *sseSub) string {
	if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, syscall.ETIMEDOUT) {
		return ""
	}
	if why := sub.why.Load(); why != nil {
		return *why
	}
	return "write"
}

// sseOut writes a stream's events, each write given the write timeout.
type sseOut struct {
	a       *API
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	err     error
	buf     []byte
	// counted is the events in buf by kind, added to
	// pregao_stream_events_total once buf is sent: an event a failed
	// write did not send is not counted.
	counted [len(eventKinds)]int
}

func (o *sseOut) write(b []byte) {
	if o.err != nil {
		return
	}
	if o.timeout > 0 {
		_ = o.rc.SetWriteDeadline(time.Now().Add(o.timeout))
	}
	if _, o.err = o.w.Write(b); o.err == nil {
		o.err = o.rc.Flush()
	}
}

// writeEvents writes buf, the events counted in o.counted, and counts
// them once they are sent.
func (o *sseOut) writeEvents() {
	o.write(o.buf)
	o.buf = o.buf[:0]
	for k, n := range o.counted {
		if n > 0 && o.err == nil {
			o.a.streams.m.byKind[k].Add(float64(n))
		}
	}
	o.counted = [len(eventKinds)]int{}
}

// events writes the events of tickers (sorted; nil: all) of evs (sorted
// by ticker, the session's first), flushed at the end (or every 256
// KiB). A subscriber finds its tickers' events by binary search: an
// idle one costs a search per ticker a step, not a look at every event.
func (o *sseOut) events(evs []sseEvent, tickers []string) {
	o.buf = o.buf[:0]
	if tickers == nil {
		o.add(evs)
	} else {
		n := 0
		for n < len(evs) && evs[n].ticker == "" {
			n++
		}
		o.add(evs[:n])
		rest := evs[n:]
		for _, t := range tickers {
			i, found := slices.BinarySearchFunc(rest, t, func(e sseEvent, t string) int { return cmp.Compare(e.ticker, t) })
			if !found {
				continue
			}
			j := i + 1
			for j < len(rest) && rest[j].ticker == t {
				j++
			}
			o.add(rest[i:j])
			rest = rest[j:]
		}
	}
	if len(o.buf) > 0 {
		o.writeEvents()
	}
}

// add appends evs to the output, writing every streamChunk bytes.
func (o *sseOut) add(evs []sseEvent) {
	for i := range evs {
		o.buf = append(o.buf, evs[i].msg...)
		o.counted[evs[i].kind]++
		if len(o.buf) >= streamChunk {
			o.writeEvents()
		}
	}
}
