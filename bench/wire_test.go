package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWire sends a GET over loopback HTTP/1.1 connections kept
// alive (8 of them, as ../shared/perf's wrk does) to the API with its
// answer cache and to a static server answering the same bytes with the
// same headers (captured from the API once, Date aside): the ratio of
// their ns/op is the API's cost per request over the physical limit of
// the HTTP stack, without wrk. The client is a bare loop of writes and
// reads that counts the body, not net/http's client.
func BenchmarkWire(b *testing.B) {
	for _, w := range []struct{ name, path string }{
		{"w4", "/v2/indexes/IBOV/highs?limit=10"},
	} {
		setup(b)
		pregao := wireServer(apiKept)
		defer pregao.Close()
		body, hdr := capture(b, pregao.URL+w.path)
		static := wireServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			h := rw.Header()
			for k, v := range hdr {
				h[k] = v
			}
			rw.Write(body)
		}))
		defer static.Close()
		for _, s := range []struct {
			name string
			srv  *httptest.Server
		}{{"pregao", pregao}, {"static", static}} {
			b.Run(w.name+"/"+s.name, func(b *testing.B) { runWire(b, s.srv, w.path, len(body)) })
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

// capture returns the body of a GET of url and its headers, Date and the
// framing headers aside.
func capture(b *testing.B, url string) ([]byte, http.Header) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+benchKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	h := res.Header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	h.Set("Content-Length", strconv.Itoa(len(body))) // as the static harness sets it
	return body, h
}

func runWire(b *testing.B, srv *httptest.Server, path string, size int) {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + srv.Listener.Addr().String() +
		"\r\nContent-Type: application/json\r\nAuthorization: Bearer " + benchKey + "\r\n\r\n")
	b.SetBytes(int64(size))
	b.SetParallelism(4) // 8 connections on 2 cores
	b.ResetTimer()
	cpu := cpuTime()
	defer func() {
		// The process's CPU time (servers and client) per request: on a
		// shared machine, steadier than the wall time.
		b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	}()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		br := bufio.NewReaderSize(conn, 64<<10)
		for pb.Next() {
			if _, err := conn.Write(req); err != nil {
				b.Error(err)
				return
			}
			if n, err := readAnswer(br); err != nil || n != size {
				b.Errorf("answer of %d bytes (want %d): %v", n, size, err)
				return
			}
		}
	})
}

// cpuTime returns the process's user and system CPU time, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// readAnswer reads one HTTP/1.1 answer framed by Content-Length and
// returns its body's length.
func readAnswer(br *bufio.Reader) (int, error) {
	n, status := -1, true
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if first {
			status = bytes.HasPrefix(line, []byte("HTTP/1.1 200 "))
			continue
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return 0, err
			}
		}
	}
	if !status || n < 0 {
		return 0, fmt.Errorf("not a 200 with a length")
	}
	_, err := br.Discard(n)
	return n, err
}
