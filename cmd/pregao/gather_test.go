package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// connWriterTo is a reader that writes itself, recording the writer it
// was given.
type connWriterTo struct {
	body []byte
	mu   sync.Mutex
	to   []io.Writer
}

func (c *connWriterTo) Read(p []byte) (int, error) {
	if len(c.body) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.body)
	c.body = c.body[n:]
	return n, nil
}

func (c *connWriterTo) WriteTo(w io.Writer) (int64, error) {
	c.mu.Lock()
	c.to = append(c.to, w)
	c.mu.Unlock()
	n, err := w.Write(c.body)
	c.body = c.body[n:]
	return int64(n), err
}

// A kept answer's rest handed to the ResponseWriter's ReadFrom after a
// first write (httpapi's writeParts) reaches the TCP connection itself
// through serve's listener (so that its parts can go out in one gathered
// write), after what the connection held, every byte in order. If a Go
// release stops handing ReadFrom to the connection, this fails.
func TestReadFromReachesTheConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &conns{writeTimeout: 5 * time.Second}
	first := bytes.Repeat([]byte("first-"), 5000)
	rest := bytes.Repeat([]byte("0123456789"), 200_000)
	var last *connWriterTo
	var mu sync.Mutex
	srv := &http.Server{ConnState: cs.track, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(rest)))
		w.Write(first)
		wt := &connWriterTo{body: rest}
		mu.Lock()
		last = wt
		mu.Unlock()
		w.(io.ReaderFrom).ReadFrom(wt)
	})}
	go srv.Serve(newConnListener(ln, 0))
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	for range 3 { // kept alive: the held write of one answer never leaks into the next
		res, err := client.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !bytes.Equal(b, append(append([]byte{}, first...), rest...)) {
			t.Fatalf("%d bytes, %v: want the first write then the rest", len(b), err)
		}
		mu.Lock()
		to := last.to
		mu.Unlock()
		if len(to) != 1 {
			t.Fatalf("WriteTo called %d times, want once", len(to))
		}
		if _, ok := to[0].(*net.TCPConn); !ok {
			t.Fatalf("WriteTo was given a %T, want the *net.TCPConn", to[0])
		}
	}
}
