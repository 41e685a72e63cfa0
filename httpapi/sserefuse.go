package httpapi

import (
	"net/http"
	"strconv"
	"strings"
)

// A stream refused for a while, to an EventSource (addition): a
// browser's EventSource takes any answer that is not a 200 of
// text/event-stream as the end ("fail the connection", HTML standard)
// and never reconnects, so that a 429 (the key's streams, its rate
// limit) or a 503 (the server's streams, its shutdown, its snapshot
// loading) would stop a page for good. To a request of the stream route
// that accepts text/event-stream (EventSource always sends it; curl
// does not), such a refusal is a 200 event stream that says it and
// ends: the retry its Retry-After asks (retry: in milliseconds), then
// one event error whose data is the refusal's JSON error, with no id
// (the client's Last-Event-ID stays its last event's). The browser
// reconnects by itself after that time, with its Last-Event-ID, and
// resumes. A refusal that retrying does not mend (400, 401, 403, 404)
// keeps its status: the browser stops on it.
//
// The access log and pregao_http_requests_total count such an answer
// with the refusal's status, not the 200 sent (as a 499 is counted but
// never sent): a refused stream is never counted as one served.

// ctEventStream is the Content-Type of the stream route's answers.
var ctEventStream = []string{"text/event-stream; charset=utf-8"}

var noCache = []string{"no-cache"}

// retryDraining is the Retry-After, in seconds, of a stream refused by
// a server shutting down (EndStreams, after the drain): by then the load
// balancer has taken the server out (/readyz answered 503 through the
// drain), so a client that retries at once reaches another replica; it
// is refused again, once a second at most, only while the load balancer
// still sends it here.
var retryDraining = []string{"1"}

// temporaryRefusal reports whether status is a refusal that the same
// request, sent again later, may not get: 429 and 503.
func temporaryRefusal(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}

// acceptsEventStream reports whether r's Accept header lists
// text/event-stream (with a q above 0).
func acceptsEventStream(r *http.Request) bool {
	found := false
	for _, h := range r.Header["Accept"] {
		if strings.Contains(strings.ToLower(h), "text/event-stream") { // most requests: no parsing
			acceptRanges(r, func(mt string, q float64) { found = found || mt == "text/event-stream" && q > 0 })
			break
		}
	}
	return found
}

// refuseEvents sends the refusal of status, whose JSON error is in
// o.buf, as a stream that says it and ends (see above): retry, the
// Retry-After in milliseconds (3 s without one), then the event error.
// It returns status, which the access log and the metrics count.
func (o *answer) refuseEvents(status int) int {
	hd := o.w.Header()
	retry := int64(sseRetry)
	if v := hd["Retry-After"]; len(v) == 1 {
		if s, err := strconv.ParseInt(v[0], 10, 32); err == nil && s >= 0 {
			retry = s * 1000
		}
	}
	hd["Content-Type"] = ctEventStream
	hd["Cache-Control"] = noCache
	hd["X-Content-Type-Options"] = noSniff
	if o.log != nil && o.log.status == 0 {
		o.log.status = status // kept: the 200 below does not replace it
	}
	n := len(o.buf)
	o.buf = append(o.buf, "retry: "...)
	o.buf = strconv.AppendInt(o.buf, retry, 10)
	o.buf = append(o.buf, "\n\nevent: error\ndata: "...)
	o.buf = append(o.buf, o.buf[:n]...) // the JSON: one line (appendString escapes line ends)
	o.buf = append(o.buf, "\n\n"...)
	o.w.WriteHeader(http.StatusOK)
	o.w.Write(o.buf[n:])
	return status
}
