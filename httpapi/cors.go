package httpapi

import (
	"net/http"
	"strings"
)

// CORS: a browser page on an allowed origin (Config.CORSOrigins) may call
// the API. Every answer to a request with an allowed Origin carries
// Access-Control-Allow-Origin (errors included, so that the page can read
// them); a preflight (OPTIONS with Access-Control-Request-Method) is
// answered 204 with the methods and headers the API takes (Last-Event-ID:
// a stream's client resuming, GET /stream/quotes, which an EventSource or
// a fetch-based reader sends on a reconnection). With no origin
// configured (the default) no CORS header is sent and browsers keep the
// same-origin rule.

var (
	corsMethods  = []string{"GET, HEAD, POST, OPTIONS"}
	corsHeaders  = []string{"Authorization, Content-Type, If-None-Match, If-Modified-Since, Last-Event-ID, X-Request-Id"}
	corsExpose   = []string{"ETag, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id, X-Total-Count, Link, X-Live-Seq, X-Live-Next-Seq, X-Live-Batch-Digest"}
	corsMaxAge   = []string{"600"}
	corsWildcard = []string{"*"}
)

// corsOrigins is the allow list of Config.CORSOrigins: "*" allows every
// origin.
type corsOrigins struct {
	any     bool
	origins map[string]bool
}

func newCORSOrigins(list []string) corsOrigins {
	c := corsOrigins{origins: map[string]bool{}}
	for _, o := range list {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		switch o {
		case "":
		case "*":
			c.any = true
		default:
			c.origins[strings.ToLower(o)] = true
		}
	}
	return c
}

func (c *corsOrigins) enabled() bool { return c.any || len(c.origins) > 0 }

// cors sets the CORS headers of an answer to r on w and reports whether r
// is a preflight request, which the caller answers 204 with nothing else.
func (a *API) cors(w http.ResponseWriter, r *http.Request) (preflight bool) {
	if !a.corsAllow.enabled() {
		return false
	}
	hd := w.Header()
	hd["Vary"] = append(hd["Vary"], "Origin")
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	switch {
	case a.corsAllow.any:
		hd["Access-Control-Allow-Origin"] = corsWildcard
	case a.corsAllow.origins[strings.ToLower(origin)]:
		hd["Access-Control-Allow-Origin"] = []string{origin}
	default:
		return false
	}
	hd["Access-Control-Expose-Headers"] = corsExpose
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	hd["Access-Control-Allow-Methods"] = corsMethods
	hd["Access-Control-Allow-Headers"] = corsHeaders
	hd["Access-Control-Max-Age"] = corsMaxAge
	return true
}
