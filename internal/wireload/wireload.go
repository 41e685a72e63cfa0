// Package wireload measures a server's cost per request over the wire,
// for benchmarks only: one GET sent over kept-alive loopback HTTP/1.1
// connections, each sending its next request once its last is answered,
// by a bare loop of writes and reads (not net/http's client), and the
// answer a static server is to send for a fair comparison.
package wireload

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"syscall"
	"testing"
)

// Run is b's loop: 8 connections (4 per GOMAXPROCS on 2 cores, as the
// side-by-side harness's wrk) to addr each send GET path with key as a
// bearer token and read the answer, which must be a 200 of size bytes.
// It reports the process's CPU time per request (cpu-ns/op: servers and
// client, steadier than the wall time on a shared machine).
func Run(b *testing.B, addr, path, key string, size int) {
	req := []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr +
		"\r\nContent-Type: application/json\r\nAuthorization: Bearer " + key + "\r\n\r\n")
	b.SetBytes(int64(size))
	b.SetParallelism(4)
	b.ResetTimer()
	defer ReportCPU(b)()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", addr)
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
			if n, err := ReadAnswer(br); err != nil || n != size {
				b.Errorf("answer of %d bytes (want %d): %v", n, size, err)
				return
			}
		}
	})
}

// Capture returns the body of a GET of url with key and its headers,
// Date and the framing headers aside and Content-Length set as the
// side-by-side harness's static server sets it: what a static server
// sends to answer as the server did.
func Capture(tb testing.TB, url, key string) ([]byte, http.Header) {
	tb.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	h := res.Header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return body, h
}

// Static returns a handler answering every request with body and the
// headers hd.
func Static(body []byte, hd http.Header) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range hd {
			h[k] = v
		}
		w.Write(body)
	})
}

// ReadAnswer reads one HTTP/1.1 answer framed by Content-Length and
// returns its body's length; an answer other than a 200 with a length is
// an error.
func ReadAnswer(br *bufio.Reader) (int, error) {
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

// ReportCPU starts counting the process's CPU time; the function it
// returns reports it per iteration of b (cpu-ns/op). Call it after
// b.ResetTimer and the returned function when the loop ends.
func ReportCPU(b *testing.B) func() {
	cpu := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op") }
}

// cpuTime returns the process's user and system CPU time, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
