package bench

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pregao/pregao/internal/wireload"
)

// BenchmarkWire sends a GET over loopback HTTP/1.1 connections kept
// alive (8 of them, as ../shared/perf's wrk does) to the API with its
// answer cache and to a static server answering the same bytes with the
// same headers (captured from the API once, Date aside): the ratio of
// their ns/op is the API's cost per request over the physical limit of
// the HTTP stack, without wrk (internal/wireload). cmd/pregao's
// BenchmarkServeW4 does the same through serve's whole stack.
func BenchmarkWire(b *testing.B) {
	for _, w := range []struct{ name, path string }{
		{"w4", "/v2/indexes/IBOV/highs?limit=10"},
	} {
		setup(b)
		pregao := wireServer(apiKept)
		defer pregao.Close()
		body, hdr := wireload.Capture(b, pregao.URL+w.path, benchKey)
		static := wireServer(wireload.Static(body, hdr))
		defer static.Close()
		for _, s := range []struct {
			name string
			srv  *httptest.Server
		}{{"pregao", pregao}, {"static", static}} {
			b.Run(w.name+"/"+s.name, func(b *testing.B) {
				wireload.Run(b, s.srv.Listener.Addr().String(), w.path, benchKey, len(body))
			})
		}
	}
}

// wireServer starts h behind an http.Server set as serve sets it.
func wireServer(h http.Handler) *httptest.Server {
	s := httptest.NewUnstartedServer(h)
	s.Config.ReadHeaderTimeout = 5 * time.Second
	s.Config.IdleTimeout = 120 * time.Second
	s.Config.MaxHeaderBytes = 64 << 10
	s.Start()
	return s
}
