package httpapi

import (
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// AccessLog writes one line per request: time, method, route template,
// path, status, bytes of the body written, duration, key name, request id
// and client address, as logfmt ("text") or JSON. Lines are collected in
// memory and written by one goroutine every FlushInterval (or sooner when
// 512 KiB have gathered), so a request never waits for the log's writer;
// when the writer falls behind by more than maxPending bytes, lines are
// dropped and counted (pregao_access_log_dropped_total). Create it with
// NewAccessLog; Close writes what is pending.
type AccessLog struct {
	w      io.Writer
	json   bool
	sample float64 // fraction of requests logged; 5xx always are

	mu      sync.Mutex
	pending []byte // lines not yet written
	spare   []byte // the other buffer, swapped in by the flusher
	kick    chan struct{}
	done    chan struct{}
	closed  bool
	dropped func() // counts a dropped line (set by New)

	lines sync.Pool // *[]byte: one line being assembled

	stamp atomic.Pointer[logStamp] // the formatted second last logged
}

// logStamp is a second formatted once ("2026-11-26T01:02:03."), reused by
// every line of that second.
type logStamp struct {
	sec  int64
	text []byte
}

// appendStamp appends t (UTC, milliseconds, "Z") as the lines write it,
// formatting its second once per second.
func (l *AccessLog) appendStamp(b []byte, t time.Time) []byte {
	t = t.UTC()
	sec := t.Unix()
	s := l.stamp.Load()
	if s == nil || s.sec != sec {
		s = &logStamp{sec: sec, text: t.Truncate(time.Second).AppendFormat(nil, "2006-01-02T15:04:05.")}
		l.stamp.Store(s)
	}
	b = append(b, s.text...)
	ms := t.Nanosecond() / 1e6
	return append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z')
}

// FlushInterval is how often an AccessLog writes its pending lines.
const FlushInterval = 100 * time.Millisecond

const (
	flushAt    = 512 << 10 // pending bytes that wake the writer early
	maxPending = 4 << 20   // pending bytes beyond which lines are dropped
	maxLogPath = 256       // bytes of a path logged; longer ones are cut
)

// NewAccessLog returns an AccessLog writing to w, as JSON when json is set
// (logfmt otherwise), logging the fraction sample of requests (1: all;
// requests answered 5xx are always logged). It starts its writer
// goroutine; Close stops it.
func NewAccessLog(w io.Writer, json bool, sample float64) *AccessLog {
	l := &AccessLog{w: w, json: json, sample: sample, kick: make(chan struct{}, 1), done: make(chan struct{}), dropped: func() {}}
	l.lines.New = func() any { b := make([]byte, 0, 512); return &b }
	go l.run()
	return l
}

func (l *AccessLog) run() {
	defer close(l.done)
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-l.kick:
		}
		if !l.flush() {
			return
		}
	}
}

// flush writes the pending lines; it reports false once the log is
// closed and empty.
func (l *AccessLog) flush() bool {
	l.mu.Lock()
	b := l.pending
	l.pending = l.spare[:0]
	closed := l.closed
	l.mu.Unlock()
	if len(b) > 0 {
		l.w.Write(b)
	}
	l.mu.Lock()
	l.spare = b[:0]
	if cap(l.spare) > maxPending {
		l.spare = nil
	}
	empty := len(l.pending) == 0
	l.mu.Unlock()
	return !(closed && empty)
}

// Close writes the pending lines and stops the writer; later lines are
// dropped. Safe to call more than once.
func (l *AccessLog) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		<-l.done
		return
	}
	l.closed = true
	l.mu.Unlock()
	select {
	case l.kick <- struct{}{}:
	default:
	}
	<-l.done
}

// entry is what is logged of one request.
type entry struct {
	start    time.Time
	method   string
	route    string // route template ("/companies/:id"), "(unmatched)"
	path     string
	status   int
	bytes    int64
	duration time.Duration
	key      string // key name ("" on public routes or when refused)
	id       string // request id
	remote   string
}

// sampled reports whether a request answered status is logged.
func (l *AccessLog) sampled(status int) bool {
	return l.sample >= 1 || status >= 500 || rand.Float64() < l.sample
}

// log adds e's line to the pending lines.
func (l *AccessLog) log(e *entry) {
	bp := l.lines.Get().(*[]byte)
	line := (*bp)[:0]
	if l.json {
		line = e.appendJSON(line, l)
	} else {
		line = e.appendText(line, l)
	}
	l.mu.Lock()
	switch {
	case l.closed || len(l.pending)+len(line) > maxPending:
		l.mu.Unlock()
		l.dropped()
	default:
		l.pending = append(l.pending, line...)
		kick := len(l.pending) >= flushAt
		l.mu.Unlock()
		if kick {
			select {
			case l.kick <- struct{}{}:
			default:
			}
		}
	}
	*bp = line[:0]
	l.lines.Put(bp)
}

func (e *entry) appendText(b []byte, l *AccessLog) []byte {
	b = append(b, "time="...)
	b = l.appendStamp(b, e.start)
	b = append(b, " level=INFO msg=access method="...)
	b = appendLogfmt(b, e.method)
	b = append(b, " route="...)
	b = appendLogfmt(b, e.route)
	b = append(b, " path="...)
	b = appendLogfmt(b, cutPath(e.path))
	b = append(b, " status="...)
	b = appendStatus(b, e.status)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, e.bytes, 10)
	b = append(b, " duration="...)
	b = appendSeconds(b, e.duration)
	b = append(b, " key="...)
	b = appendLogfmt(b, e.key)
	b = append(b, " request_id="...)
	b = appendLogfmt(b, e.id)
	b = append(b, " remote="...)
	b = appendLogfmt(b, e.remote)
	return append(b, '\n')
}

func (e *entry) appendJSON(b []byte, l *AccessLog) []byte {
	b = append(b, `{"time":"`...)
	b = l.appendStamp(b, e.start)
	b = append(b, `","level":"INFO","msg":"access","method":`...)
	b = appendString(b, e.method)
	b = append(b, `,"route":`...)
	b = appendString(b, e.route)
	b = append(b, `,"path":`...)
	b = appendString(b, cutPath(e.path))
	b = append(b, `,"status":`...)
	b = appendStatus(b, e.status)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.bytes, 10)
	b = append(b, `,"duration":`...)
	b = appendSeconds(b, e.duration)
	b = append(b, `,"key":`...)
	b = appendString(b, e.key)
	b = append(b, `,"request_id":`...)
	b = appendString(b, e.id)
	b = append(b, `,"remote":`...)
	b = appendString(b, e.remote)
	return append(b, "}\n"...)
}

// appendStatus appends the status code st in decimal, as
// strconv.AppendInt does, the three digits of an HTTP status without it.
func appendStatus(b []byte, st int) []byte {
	if st < 100 || st > 999 {
		return strconv.AppendInt(b, int64(st), 10)
	}
	return append(b, byte('0'+st/100), byte('0'+st/10%10), byte('0'+st%10))
}

// maxExactDuration bounds the durations appendSeconds formats with
// integers: below it, float64(d)/1e9 is within a nanosecond of d, so
// that it rounds to the microsecond as d does, but on an exact tie.
const maxExactDuration = 1e6 * time.Second

// appendSeconds appends d in seconds with six decimals, the bytes
// strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64) appends: rounded to
// the microsecond in integers, except where the float's rounding may
// differ (a duration of exactly half a microsecond past one, a negative
// or very long one), which AppendFloat formats.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 || d >= maxExactDuration || d%1000 == 500 {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	}
	us := (int64(d) + 500) / 1000
	b = strconv.AppendInt(b, us/1e6, 10)
	f := us % 1e6
	return append(b, '.', byte('0'+f/1e5), byte('0'+f/1e4%10), byte('0'+f/1e3%10),
		byte('0'+f/100%10), byte('0'+f/10%10), byte('0'+f%10))
}

// logfmtQuoted marks the bytes that make appendLogfmt quote a value:
// space and controls, '"', '=', DEL and every byte past ASCII.
var logfmtQuoted = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c <= ' ' || c >= 0x7f || c == '"' || c == '='
	}
	return t
}()

// cutPath cuts a path to maxLogPath bytes on a rune boundary.
func cutPath(p string) string {
	if len(p) <= maxLogPath {
		return p
	}
	cut := maxLogPath
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut]
}

// appendLogfmt appends s as a logfmt value: as it is when it holds only
// printable ASCII other than space, '"' and '=', quoted otherwise; ""
// for the empty string.
func appendLogfmt(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if logfmtQuoted[s[i]] {
			return strconv.AppendQuote(b, s)
		}
	}
	if s == "" {
		return append(b, `""`...)
	}
	return append(b, s...)
}

// logWriter is the ResponseWriter of a logged request: it counts the
// status and the body bytes, and carries what the handler learns (route,
// key) to the line. Pooled by the API.
type logWriter struct {
	http.ResponseWriter
	e   entry
	ids *idBatch // the request ids this writer gives out next
}

func (w *logWriter) WriteHeader(code int) {
	if w.e.status == 0 {
		w.e.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(p []byte) (int, error) {
	if w.e.status == 0 {
		w.e.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.e.bytes += int64(n)
	return n, err
}

// ReadFrom sends what r holds through the server's ResponseWriter's
// ReadFrom when it has one (a kept answer's parts, gathered: writeParts),
// and counts it.
func (w *logWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.e.status == 0 {
		w.e.status = http.StatusOK
	}
	var n int64
	var err error
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
	}
	w.e.bytes += n
	return n, err
}

// Unwrap returns the server's ResponseWriter (http.ResponseController).
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush sends buffered data to the client when the server's writer can.
func (w *logWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// noteRoute records the route template and key name of the request w
// serves, when w is a logged request's writer.
func noteRoute(w http.ResponseWriter, route, key string) {
	if lw, ok := w.(*logWriter); ok {
		lw.e.route = route
		if key != "" {
			lw.e.key = key
		}
	}
}

// maxRequestID is the longest X-Request-Id honored; a longer one, or one
// with bytes other than printable ASCII, is replaced by a new id.
const maxRequestID = 128

// validRequestID reports whether a client's X-Request-Id is kept.
func validRequestID(s string) bool {
	if s == "" || len(s) > maxRequestID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// idBatch hands out request ids made 64 at a time, as X-Request-Id
// header values: one allocation for the text of 64 ids and one for their
// values, instead of two per request. A batch is used once: the values it
// gave out stay in answers' headers, so it is never refilled.
type idBatch struct {
	left int                 // ids not yet given out: ids[:left]
	ids  [idsPerBatch]string // each one value, 16 hex digits of one string
}

const idsPerBatch = 64

// newRequestIDHeader returns a new X-Request-Id header value: 16 random
// hex digits, from *bp, which it replaces with a new batch when nil or
// spent (a logWriter's own: no lock). The slice is shared: never to be
// modified.
func newRequestIDHeader(bp **idBatch) []string {
	b := *bp
	if b == nil || b.left == 0 {
		b = new(idBatch)
		const hex = "0123456789abcdef"
		var text [idsPerBatch * 16]byte
		for i := 0; i < len(text); i += 16 {
			v := rand.Uint64()
			for j := range 16 {
				text[i+j] = hex[v&15]
				v >>= 4
			}
		}
		all := string(text[:])
		for i := range b.ids {
			b.ids[i] = all[16*i : 16*i+16]
		}
		b.left = idsPerBatch
		*bp = b
	}
	b.left--
	return b.ids[b.left : b.left+1 : b.left+1]
}

var hdrRequestID = http.CanonicalHeaderKey("X-Request-Id")

// serveLogged serves r through a logWriter and logs it: the request id is
// the client's X-Request-Id when valid, a new one otherwise, and is sent
// back in the answer's X-Request-Id.
func (a *API) serveLogged(w http.ResponseWriter, r *http.Request) {
	lw := a.logWriters.Get().(*logWriter)
	lw.ResponseWriter = w
	lw.e = entry{start: time.Now(), method: r.Method, route: routeUnmatched, path: r.URL.Path, remote: r.RemoteAddr}
	var idh []string
	if v := r.Header[hdrRequestID]; len(v) == 1 && validRequestID(v[0]) {
		idh = v
	} else {
		idh = newRequestIDHeader(&lw.ids)
	}
	lw.e.id = idh[0]
	w.Header()[hdrRequestID] = idh
	defer func() {
		// A deliberate cut (http.ErrAbortHandler) passes through; the
		// line is still written, with the status sent so far.
		if lw.e.duration == 0 { // not measured by the route's handler (wrap)
			lw.e.duration = time.Since(lw.e.start)
		}
		if lw.e.status == 0 {
			lw.e.status = http.StatusOK
		}
		if a.accessLog.sampled(lw.e.status) {
			a.accessLog.log(&lw.e)
		}
		lw.ResponseWriter = nil
		lw.e = entry{}
		a.logWriters.Put(lw)
	}()
	a.serveHTTP(lw, r)
}
