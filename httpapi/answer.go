package httpapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// answer is the way out of one request. The handler hands it bytes (its
// return value) or a stream (flush, stream.go); the answer decides
// everything after that: the framing (Content-Length, or chunked when
// streamed or compressed as sent), the representation (JSON or CSV),
// the compression, the validators and 304, the capture for the answer
// cache and the access-log record. end is its one exit: every answer of
// a route, error or not, leaves through it (or through fail, for the
// answers refused before the handler runs).
//
// An answer lives in its pooled call: nothing in it may be kept after
// the request.
type answer struct {
	w            http.ResponseWriter
	r            *http.Request
	log          *entry        // the request's access-log record (nil: not logged)
	logger       *slog.Logger  // where failures are logged
	writeTimeout time.Duration // Config.WriteTimeout
	route        string        // the route template, for logs
	// events marks the answer of a Stream route: a temporary refusal
	// to a client that accepts text/event-stream is sent as events
	// (refuseEvents).
	events bool

	// buf is the output buffer handlers append to (dst); kept, emptied,
	// across requests.
	buf []byte

	enc     int    // the content coding (negotiate)
	csv     bool   // the representation is text/csv (negotiate)
	csvKind string // the CSV form: the route's (Route.CSV), or its handler's choice (setCSVForm)
	// csvSrc is the JSON a CSV answer is made from, as the handler
	// streamed it; kept across requests up to 4 MiB.
	csvSrc []byte

	// A streamed answer: whether the 200 header went out, the bytes
	// written, the first write error and the compressor.
	streamed bool
	sent     int64
	// size is the answer's bytes as made (before compression), once end
	// has run: the cost in bytes admission counts per key.
	size int64
	werr error
	z    compressor

	// cached is the answer when it is one encoded before: kept by the
	// answer cache (held then, released at the end) or by a handler's
	// per-Dataset slot (cachedList).
	cached *cachedAnswer
	held   *answerEntry
	// weak is the weak form of the ETag the validators set (nil: none).
	weak []string

	// The answer cache: where a fresh answer may be kept (nil: it is not
	// kept), by which key (name), under which hashes, and the capture of a
	// streamed one (answercache.go).
	cache        *answerCache
	owner        string
	akey, acheck uint64
	akeyOK       bool
	capt         capture
}

// begin makes w the answer's writer; route and r are for the logs.
func (o *answer) begin(w http.ResponseWriter, r *http.Request, route string, a *API) {
	o.w, o.r, o.route, o.logger, o.writeTimeout = w, r, route, a.log, a.cfg.WriteTimeout
	if lw, ok := w.(*logWriter); ok {
		o.log = &lw.e
		o.log.route = route
	}
}

// noteKey records the authenticated key's name in the access-log record.
func (o *answer) noteKey(name string) {
	if o.log != nil {
		o.log.key = name
	}
}

// reset readies o for the next request, keeping its buffers.
func (o *answer) reset() {
	o.release()
	o.dropCapture()
	if o.z != nil { // a stream cut by a panic
		putCompressor(o.enc, o.z)
	}
	src := o.csvSrc[:0]
	if cap(src) > 4<<20 {
		src = nil
	}
	*o = answer{buf: o.buf[:0], csvSrc: src, capt: capture{chunks: o.capt.chunks[:0]}}
}

// negotiate decides the answer's coding (Accept-Encoding) and, on a route
// with a CSV form, its representation: the format query parameter when
// given (q holds the request's query), else Accept. It sets Vary to
// match. This is the one place format= is decided.
func (o *answer) negotiate(r *http.Request, rt *Route, c *call) {
	hd := o.w.Header()
	if len(hd["Vary"]) == 0 {
		hd["Vary"] = hdrVaryAE // shared: a later append copies (len == cap)
	} else {
		hd["Vary"] = append(hd["Vary"], "Accept-Encoding")
	}
	o.enc = negotiate(r)
	if rt.CSV == "" {
		return
	}
	o.csvKind = rt.CSV
	if rt.Media == mediaCSV { // the CSV form's own route: no choice
		o.csv = true
		return
	}
	if v := hd["Vary"]; len(v) == 1 && &v[0] == &hdrVaryAE[0] {
		hd["Vary"] = hdrVaryAEAccept // shared, as hdrVaryAE: no allocation
	} else {
		hd["Vary"] = append(v, "Accept")
	}
	o.csv = wantsCSV(r)
	if !strings.Contains(r.URL.RawQuery, "format=") {
		return
	}
	c.parseQuery(r)
	q := &c.q
	if i := q.find("format"); i >= 0 && q.seen&(1<<i) != 0 && q.vals[i] != "" {
		switch v := q.vals[i]; strings.ToLower(v) {
		case "csv":
			o.csv = true
		case "json":
			o.csv = false
		default: // refused (400) before anything is looked up
			q.fail(badRequest("query parameter format=%q: want one of %s", v, strings.Join(q.params[i].Enum, ", ")))
		}
	}
}

// validators sets the answer's ETag, Cache-Control and Last-Modified
// (shared header values, never modified), keeps weak, the ETag's weak
// form, for a compressed answer (weakETag), and reports whether the
// request's If-None-Match lists the ETag: then the caller answers
// notModified.
func (o *answer) validators(r *http.Request, etag, weak, cacheControl, lastModified []string) bool {
	hd := o.w.Header()
	hd["Etag"] = etag
	o.weak = weak
	hd["Cache-Control"] = cacheControl
	hd["Last-Modified"] = lastModified
	for _, v := range r.Header["If-None-Match"] {
		if etagListed(v, etag[0]) {
			return true
		}
	}
	return false
}

// notModified answers 304 with the validators set, the ETag weak when
// the request accepts a compressed form (as its 200 would carry it).
func (o *answer) notModified() int {
	if o.enc != encIdentity {
		weakETag(o.w.Header(), o.weak)
	}
	o.w.WriteHeader(http.StatusNotModified)
	return http.StatusNotModified
}

// end is the exit of every answer a handler made: body and err are what
// the handler returned (body after what it streamed). It returns the
// status sent.
func (o *answer) end(body []byte, err error) int {
	if body != nil {
		o.buf = body[:0]
	}
	o.size = o.sent + int64(len(body))
	switch {
	case o.csv && err == nil:
		return o.sendCSV(body)
	case o.streamed:
		return o.endStream(body, err)
	case err != nil:
		return o.failErr(err)
	case o.cached != nil:
		return o.sendCached()
	}
	o.keep(body)
	o.jsonHeaders()
	return o.sendBody(body)
}

// endStream ends a streamed answer: the rest of the body, the
// compressor's end, and the capture kept. A handler that failed after
// part of its 200 answer went out gets the connection cut, so that the
// client cannot take a truncated body for a complete one.
func (o *answer) endStream(body []byte, err error) int {
	if err != nil {
		o.finish()
		o.logger.Error("request failed after its answer started", "route", o.route, "method", o.r.Method, "path", o.r.URL.Path, "err", err.Error())
		panic(http.ErrAbortHandler)
	}
	o.emit(body)
	o.finish()
	o.keepStreamed()
	return http.StatusOK
}

// fail answers status with the JSON error msg. An error carries no
// validators: a later If-None-Match must not turn it into a 304. A
// stream's temporary refusal to an EventSource is sent as events
// (refuseEvents).
func (o *answer) fail(status int, msg string) int {
	o.buf = appendError(o.buf[:0], status, capMessage(msg))
	hd := o.w.Header()
	delete(hd, "Etag")
	delete(hd, "Last-Modified")
	if o.events && temporaryRefusal(status) {
		// Its form depends on Accept (sserefuse.go).
		v := hd["Vary"]
		hd["Vary"] = append(v[:len(v):len(v)], "Accept")
		if acceptsEventStream(o.r) {
			return o.refuseEvents(status)
		}
	}
	if _, ok := hd["Cache-Control"]; ok {
		hd["Cache-Control"] = noStore
	}
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
	o.w.WriteHeader(status)
	o.w.Write(o.buf)
	return status
}

// statusClientClosed is the status logged and counted (access log,
// pregao_http_requests_total) for a request whose client left before its
// answer was made: nginx's 499 "client closed request". It is never
// sent: no one is there to read it.
const statusClientClosed = 499

// clientLeft records that the request's client left while the request waited
// (for a slot of its key, for its snapshot's deferred kinds): nothing is
// written, and the access log and the metrics count a 499, not a 5xx or
// a 429 no client saw.
func (o *answer) clientLeft() int {
	if o.log != nil && o.log.status == 0 {
		o.log.status = statusClientClosed
	}
	return statusClientClosed
}

// failErr answers the error a handler (or a request check) returned,
// logging the server's own failures.
func (o *answer) failErr(err error) int {
	st, msg := statusOf(err)
	if failure(st) {
		o.logger.Error("request failed", "route", o.route, "method", o.r.Method, "path", o.r.URL.Path, "err", err.Error())
	}
	return o.fail(st, msg)
}

// jsonHeaders sets the headers of a JSON answer.
func (o *answer) jsonHeaders() {
	hd := o.w.Header()
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
}

// sendCached sends the answer encoded before, in the request's coding: a
// compressed form made once, or (a large answer) compressed as sent.
func (o *answer) sendCached() int {
	ca := o.cached
	defer o.release()
	o.jsonHeaders()
	hd := o.w.Header()
	enc := o.enc
	if ca.size() < compressMin {
		enc = encIdentity
	}
	if enc != encIdentity && isLarge(ca.size()) {
		// Compressed as it is sent, not kept.
		setEncoding(hd, enc, o.weak)
		allowWrite(o.w, o.writeTimeout, -1)
		o.w.WriteHeader(http.StatusOK)
		z := getCompressor(enc, o.w)
		ca.each(func(b []byte) { z.Write(b) })
		z.Close()
		putCompressor(enc, z)
		return http.StatusOK
	}
	if enc == encIdentity && ca.raw == nil {
		hd["Content-Length"] = ca.length()
		allowWrite(o.w, o.writeTimeout, ca.size())
		o.w.WriteHeader(http.StatusOK)
		writeParts(o.w, ca.parts)
		return http.StatusOK
	}
	b, length := ca.encoded(enc)
	setEncoding(hd, enc, o.weak)
	hd["Content-Length"] = length
	allowWrite(o.w, o.writeTimeout, len(b))
	o.w.WriteHeader(http.StatusOK)
	o.w.Write(b)
	return http.StatusOK
}

// sendBody sends a 200 with body, compressed in the answer's coding
// (unless identity, or too small to gain), giving a long one the whole
// write timeout. The caller set the content headers.
func (o *answer) sendBody(body []byte) int {
	allowWrite(o.w, o.writeTimeout, len(body))
	hd := o.w.Header()
	if o.enc == encIdentity || len(body) < compressMin {
		if len(body) > chunkingSize {
			// Known length: one write, no chunked framing (net/http
			// counts a shorter answer itself, at no cost).
			hd["Content-Length"] = []string{strconv.Itoa(len(body))}
		}
		o.w.WriteHeader(http.StatusOK)
		o.w.Write(body)
		return http.StatusOK
	}
	setEncoding(hd, o.enc, o.weak)
	o.w.WriteHeader(http.StatusOK)
	z := getCompressor(o.enc, o.w)
	z.Write(body)
	z.Close()
	putCompressor(o.enc, z)
	return http.StatusOK
}

// sendCSV sends the CSV form of the JSON answer the handler made: what it
// streamed, then body (or the cached answer).
func (o *answer) sendCSV(body []byte) int {
	if len(o.csvSrc) == 0 {
		o.keep(body) // the JSON is kept: the CSV is made from it each time
	}
	size := len(o.csvSrc) + len(body)
	if o.cached != nil {
		size = o.cached.size()
	}
	if errors.Is(o.werr, errCSVTooLarge) || size > maxCSVSource {
		o.csvSrc = o.csvSrc[:0]
		o.release()
		return o.fail(http.StatusBadRequest, fmt.Sprintf("this answer is over %d MB of JSON, too large for a CSV form: ask for fewer tickers, a shorter window or a page (limit, offset)", maxCSVSource>>20))
	}
	var src []byte
	if ca := o.cached; ca != nil {
		src = ca.flat() // shared: never appended to
	} else {
		src = append(o.csvSrc, body...)
		o.csvSrc = src[:0] // ours: kept for the next CSV answer of this call
	}
	out, err := toCSV(o.csvKind, src)
	o.release()
	if err != nil {
		o.logger.Error("CSV form failed", "route", o.route, "err", err.Error())
		return o.fail(http.StatusInternalServerError, "internal server error")
	}
	hd := o.w.Header()
	hd["Content-Type"] = ctCSV
	hd["X-Content-Type-Options"] = noSniff
	return o.sendBody(out)
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

// failure reports whether an answer of status st is the server's failure,
// logged as an error: a 5xx other than 503, which is the expected answer
// of /readyz while a snapshot loads or the server drains (probes ask it
// every few seconds; the access log has each one).
func failure(st int) bool {
	return st >= 500 && st != http.StatusServiceUnavailable
}

// setEncoding sets Content-Encoding for coding enc, and makes the ETag
// weak (weakETag).
func setEncoding(hd http.Header, enc int, weak []string) {
	switch enc {
	case encGzip:
		hd["Content-Encoding"] = hdrGzip
	case encZstd:
		hd["Content-Encoding"] = hdrZstd
	default:
		return
	}
	weakETag(hd, weak)
}

// weakETag makes the answer's ETag weak (W/"…"): a compressed form is
// other bytes than the identity one, which a strong ETag names (RFC 9110
// 8.8.3), and If-None-Match compares weakly, so that either form still
// revalidates the other. weak is the ETag's weak form made with it
// (shared, never modified; nil: none), set instead of a new one.
func weakETag(hd http.Header, weak []string) {
	switch e := hd["Etag"]; {
	case len(e) != 1 || strings.HasPrefix(e[0], "W/"):
	case len(weak) == 1 && weak[0][2:] == e[0]:
		hd["Etag"] = weak
	default:
		hd["Etag"] = []string{"W/" + e[0]}
	}
}

var noStore = []string{"no-store"}

// plainError writes a JSON error outside any route (router-level 404/405).
func (a *API) plainError(w http.ResponseWriter, status int, msg string) {
	hd := w.Header()
	hd["Content-Type"] = ctJSON
	hd["X-Content-Type-Options"] = noSniff
	w.WriteHeader(status)
	w.Write(appendError(nil, status, capMessage(msg)))
}

// partsBatch is the most of a kept answer's parts writeParts joins into
// one write.
const partsBatch = 256 << 10

// partsBufs holds the buffers writeParts joins parts in.
var partsBufs = sync.Pool{New: func() any { b := make([]byte, 0, partsBatch); return &b }}

// writeParts writes the parts of a kept answer to w in as few writes as
// it can. Each write of a response goes to the connection whole when it
// is larger than the server's buffer, a system call and a send each: a
// 169 KB answer kept in 16 KiB pages was 11 of them, against one for
// the same bytes in one slice. So the first write joins the parts into
// up to partsBatch bytes (the server sends them with the headers, in one
// send), a part that large on its own going alone; what is left goes to
// w's ReadFrom, when it has one, as the parts as they lie (gathered), and
// is otherwise joined the same way.
func writeParts(w io.Writer, parts [][]byte) {
	bp := partsBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	for i := 0; i < len(parts); {
		if rf, ok := w.(io.ReaderFrom); ok && i > 0 {
			g := gatheredParts{parts: parts[i:], buf: buf}
			rf.ReadFrom(&g)
			break
		}
		i, buf = writeBatch(w, parts, i, buf)
	}
	*bp = buf[:0]
	partsBufs.Put(bp)
}

// writeBatch writes parts from i on to w in one write: the parts joined
// in buf up to partsBatch bytes, or parts[i] alone when it is that large.
// It returns the next part's index and buf.
func writeBatch(w io.Writer, parts [][]byte, i int, buf []byte) (int, []byte) {
	if len(parts[i]) >= partsBatch {
		w.Write(parts[i])
		return i + 1, buf
	}
	buf = buf[:0]
	for ; i < len(parts) && len(buf)+len(parts[i]) <= partsBatch; i++ {
		buf = append(buf, parts[i]...)
	}
	w.Write(buf)
	return i, buf
}

// gatheredParts is the rest of a kept answer handed to a ResponseWriter's
// ReadFrom. The server's ResponseWriter passes it, once the headers are
// sent, to its connection's ReadFrom; the connection of pregao serve
// (cmd/pregao's serverConn) gives it its TCP connection, to which
// WriteTo sends every part in one gathered write (writev, as
// net.Buffers does for a TCP or Unix connection), without copying them.
// To any other writer (another net.Conn, such as a TLS one, included:
// net.Buffers would write it a part at a time) WriteTo writes them
// joined, as writeParts does. It owns
// neither the parts (shared by every request the answer is sent to,
// never modified) nor buf (writeParts's).
type gatheredParts struct {
	parts [][]byte
	buf   []byte
	read  int // bytes of parts[0] given by Read
}

// WriteTo writes the parts to w and returns the bytes written.
func (g *gatheredParts) WriteTo(w io.Writer) (int64, error) {
	var n int64
	if gathers(w) {
		for len(g.parts) > 0 {
			bp := gatherBufs.Get().(*net.Buffers)
			all := (*bp)[:0]
			k := min(len(g.parts), cap(all))
			all = append(all, g.parts[:k]...)
			all[0] = all[0][g.read:]
			g.read = 0
			v := all
			m, err := v.WriteTo(w) // consumes v: all holds the headers of the parts, copied
			clear(all)
			*bp = all[:0]
			gatherBufs.Put(bp)
			n += m
			g.parts = g.parts[k:]
			if err != nil {
				return n, err
			}
		}
		return n, nil
	}
	if g.read > 0 {
		m, err := w.Write(g.parts[0][g.read:])
		n += int64(m)
		g.parts, g.read = g.parts[1:], 0
		if err != nil {
			return n, err
		}
	}
	for i := 0; i < len(g.parts); {
		before := i
		i, g.buf = writeBatch(w, g.parts, i, g.buf)
		for _, p := range g.parts[before:i] {
			n += int64(len(p))
		}
	}
	g.parts = nil
	return n, nil
}

// gathers reports whether net.Buffers writes to w with writev: a TCP or
// Unix connection.
func gathers(w io.Writer) bool {
	switch w.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// Read copies the parts into p (for a reader that does not use WriteTo).
func (g *gatheredParts) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(g.parts) > 0 {
		c := copy(p[n:], g.parts[0][g.read:])
		n += c
		g.read += c
		if g.read == len(g.parts[0]) {
			g.parts, g.read = g.parts[1:], 0
		}
	}
	if n == 0 && len(g.parts) == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// gatherBufs holds the slice headers of a gathered write: as many parts
// as one writev takes (IOV_MAX on Linux).
var gatherBufs = sync.Pool{New: func() any { b := make(net.Buffers, 0, 1024); return &b }}
