package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/internal/wireload"
	"github.com/pregao/pregao/snapshot"
)

// benchW4 is the side-by-side harness's small answer (../shared/perf, w4).
const benchW4 = "/v2/indexes/IBOV/highs?limit=10"

// benchServe starts serve as pregao serve runs it (its flags' defaults:
// the access log on, the answer cache, the admission, the metrics, the
// connection tracking) on a loopback port, serving PREGAO_BENCH_SNAPSHOT
// or, when unset, the small bundle's snapshot, with one delayed key. The
// access log goes to io.Discard.
func benchServe(b *testing.B) (m *Main, key string) {
	b.Helper()
	dir := b.TempDir()
	snap := os.Getenv("PREGAO_BENCH_SNAPSHOT")
	if snap == "" {
		snap = filepath.Join(dir, "small.snap")
		if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	keys := filepath.Join(dir, "keys.json")
	var out, errb bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "bench", "--plan", "delayed"}, &out, &errb); err != nil {
		b.Fatal(err)
	}
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.FilesDir = snap, keys, "127.0.0.1:0", "off"
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Open(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	b.Cleanup(func() {
		cancel()
		<-done
	})
	return m, strings.TrimSpace(out.String())
}

// BenchmarkServeW4 serves the harness's small answer (w4) through the
// whole of serve's stack, its answer kept in the answer cache after the
// first request:
//
//   - handler/pregao: the API's ServeHTTP called in process, with a fresh
//     header map per request as net/http gives (the router, the access
//     log, the metrics, the key, the admission, the answer cache, the
//     headers); handler/static: the static twin's handler the same way,
//     so that the difference is what the API adds per request (cpu-ns/op:
//     the process's CPU time, the access log's writer and the collector
//     included); handler-parallel: the same from every core at once, so
//     that what the cores contend for (shared counters, locks) shows;
//   - wire/pregao and wire/static: over 8 loopback HTTP/1.1 connections
//     kept alive, to serve's own server and to a static server sending
//     the same bytes with the same headers (captured once, Date aside),
//     as ../shared/perf's static server does (internal/wireload).
//     cpu-ns/op is the process's CPU time (servers and client) per
//     request.
//
// PREGAO_BENCH_SNAPSHOT names the snapshot (default: the small bundle's).
func BenchmarkServeW4(b *testing.B) {
	m, key := benchServe(b)
	url := "http://" + m.Addr() + benchW4
	body, hdr := wireload.Capture(b, url, key)
	handlers := []struct {
		name string
		h    http.Handler
	}{{"pregao", m.API}, {"static", wireload.Static(body, hdr)}}
	// request is a w4 request, to one goroutine's own; serve sends it to
	// h through w, which it readies as net/http would (a fresh header map).
	request := func() *http.Request {
		r := httptest.NewRequest("GET", benchW4, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		return r
	}
	serve := func(h http.Handler, w *benchSink, r *http.Request) {
		w.h, w.n, w.status = make(http.Header), 0, 0
		h.ServeHTTP(w, r)
	}
	check := func(w *benchSink) error {
		if w.status != http.StatusOK || w.n != len(body) {
			return fmt.Errorf("status %d, %d bytes; want 200, %d", w.status, w.n, len(body))
		}
		return nil
	}
	for _, h := range handlers {
		b.Run("handler/"+h.name, func(b *testing.B) {
			req, w := request(), &benchSink{}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			report := wireload.ReportCPU(b)
			for range b.N {
				serve(h.h, w, req)
			}
			report()
			b.StopTimer()
			if err := check(w); err != nil {
				b.Fatal(err)
			}
		})
		b.Run("handler-parallel/"+h.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			defer wireload.ReportCPU(b)()
			b.RunParallel(func(pb *testing.PB) {
				req, w := request(), &benchSink{status: http.StatusOK, n: len(body)} // as if served, for a goroutine given none
				for pb.Next() {
					serve(h.h, w, req)
				}
				if err := check(w); err != nil {
					b.Error(err)
				}
			})
		})
	}
	static := &http.Server{Handler: handlers[1].h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go static.Serve(sl)
	defer static.Close()
	for _, s := range []struct{ name, addr string }{{"pregao", m.Addr()}, {"static", sl.Addr().String()}} {
		b.Run("wire/"+s.name, func(b *testing.B) { wireload.Run(b, s.addr, benchW4, key, len(body)) })
	}
}

type benchSink struct {
	h      http.Header
	status int
	n      int
}

func (s *benchSink) Header() http.Header { return s.h }
func (s *benchSink) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
}
func (s *benchSink) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	s.n += len(p)
	return len(p), nil
}
