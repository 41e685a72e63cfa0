package httpapi

import (
	"net/http"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"github.com/julienschmidt/httprouter"
)

// staticAsset is an answer fixed for the life of the process (the OpenAPI
// document, the docs page and its files): sent with a strong ETag (304 to
// a matching If-None-Match), compressed once per coding on first demand.
type staticAsset struct {
	ctype []string
	etag  []string
	weak  []string // etag's weak form
	cache []string
	ans   cachedAnswer
}

// newStaticAsset holds b, served as content type ctype, cacheable for
// maxAge seconds.
func newStaticAsset(ctype string, b []byte, maxAge int) *staticAsset {
	weak := `W/"` + strconv.FormatUint(xxhash.Sum64(b), 16) + `"`
	return &staticAsset{
		ctype: []string{ctype},
		etag:  []string{weak[2:]},
		weak:  []string{weak},
		cache: []string{"public, max-age=" + strconv.Itoa(maxAge)},
		ans:   cachedAnswer{raw: b},
	}
}

// serveStatic returns the handle serving s, counted in the route's
// metrics.
func (a *API) serveStatic(s *staticAsset, route string, extra http.Header) httprouter.Handle {
	rm := a.m.route(route)
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		noteRoute(w, route, "")
		hd := w.Header()
		for k, v := range extra {
			hd[k] = v
		}
		hd["Etag"] = s.etag
		hd["Cache-Control"] = s.cache
		hd["Vary"] = hdrVaryAE
		hd["X-Content-Type-Options"] = noSniff
		for _, v := range r.Header["If-None-Match"] {
			if etagListed(v, s.etag[0]) {
				w.WriteHeader(http.StatusNotModified)
				rm.observe(http.StatusNotModified, 0)
				return
			}
		}
		enc := negotiate(r)
		if len(s.ans.raw) < compressMin {
			enc = encIdentity
		}
		b, length := s.ans.encoded(enc)
		hd["Content-Type"] = s.ctype
		setEncoding(hd, enc, s.weak)
		hd["Content-Length"] = length
		allowWrite(w, a.cfg.WriteTimeout, len(b))
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		rm.observe(http.StatusOK, 0)
	}
}
