package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pregao/pregao/httpapi"
)

// A client that sends requests and never reads the answers is cut once
// the write deadline passes: the server's writes block on the full
// socket, and the connection must not be held forever. Meanwhile other
// clients are served, and the count of connections serving a request
// comes back to zero.
func TestWriteTimeoutCutsStalledReader(t *testing.T) {
	if testing.Short() {
		t.Skip("fills socket buffers")
	}
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys = snap, keys
	cfg.WriteTimeout = time.Second
	cfg.AccessLog = "off"
	m, stop := startServe(t, cfg, nil)
	defer stop()

	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := fmt.Sprintf("GET /v2/companies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", key)
	// Pipelined requests, never read: far more answer bytes than the
	// socket buffers of both ends hold (a few MB on loopback).
	code, body := get(t, "http://"+m.Addr()+"/v2/companies", key)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	n := 64<<20/len(body) + 1
	go func() {
		w := bufio.NewWriter(c)
		for range n {
			if _, err := w.WriteString(req); err != nil {
				return
			}
		}
		w.Flush()
	}()
	// The server is stuck writing to c within a moment (its socket
	// buffers full), and cuts it once the write deadline passes: then no
	// connection is open any more (get's idle one closed by its client).
	// Without a deadline c would stay open for good, and this wait fail.
	http.DefaultClient.CloseIdleConnections()
	waitUntil(t, "the stalled reader's connection cut", func() bool { return m.conns.openCount() == 0 })
	if n := m.conns.count(); n != 0 {
		t.Fatalf("stalled reader cut: %d connections still serving", n)
	}
	// Its connection is closed: reading ends (EOF or reset) well before
	// the n answers.
	c.SetReadDeadline(time.Now().Add(waitBound))
	var got int64
	buf := make([]byte, 1<<20)
	for {
		k, err := c.Read(buf)
		got += int64(k)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the stalled connection is still open after %d bytes", got)
			}
			break
		}
	}
	if got >= int64(n*len(body)) {
		t.Fatalf("read %d bytes: every answer was written", got)
	}
	if code, _ := get(t, "http://"+m.Addr()+"/v2/companies", key); code != http.StatusOK {
		t.Errorf("another client: status %d", code)
	}
}

// TestServeKeepsTheTCPConn: serve's requests carry their TCP connection
// itself, not the serverConn around it, for the API's download watch
// (httpapi.ConnContext), which moves its write deadline from a goroutine
// of its own (a serverConn's is its connection goroutine's alone).
func TestServeKeepsTheTCPConn(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys = snap, keys
	cfg.AccessLog = "off"
	m, stop := startServe(t, cfg, nil)
	defer stop()
	if m.srv.ConnContext == nil {
		t.Fatal("the server keeps no connection in its requests' context")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := httpapi.ContextConn(m.srv.ConnContext(context.Background(), &serverConn{Conn: c})); got != c {
		t.Errorf("the requests' connection is %T, want the %T under the serverConn", got, c)
	}
}

// Connections serving a request are counted from the ConnState hook, and
// a short answer's connection keeps a write deadline (renewed at most
// every half write timeout).
func TestConnsTrack(t *testing.T) {
	cs := conns{writeTimeout: time.Minute}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	c := &serverConn{Conn: a}
	cs.track(c, http.StateNew)
	if cs.count() != 0 {
		t.Fatal("a new connection counted as serving")
	}
	cs.track(c, http.StateActive)
	first := c.writeUntil
	if cs.count() != 1 || first.IsZero() || time.Until(first) < 59*time.Second {
		t.Fatalf("active: count %d, write deadline %v", cs.count(), first)
	}
	// A second connection: counted while it serves, not while idle.
	a2, b2 := net.Pipe()
	defer a2.Close()
	defer b2.Close()
	c2 := &serverConn{Conn: a2}
	cs.track(c2, http.StateNew)
	cs.track(c2, http.StateActive)
	if n := cs.count(); n != 2 {
		t.Errorf("two serving: count %d", n)
	}
	cs.track(c2, http.StateIdle)
	if n := cs.count(); n != 1 {
		t.Errorf("one serving, one idle: count %d", n)
	}
	cs.track(c2, http.StateClosed)
	cs.track(c, http.StateIdle)
	cs.track(c, http.StateActive) // half of it is left: not renewed
	if cs.count() != 1 || c.writeUntil != first {
		t.Errorf("second request: count %d, deadline moved from %v to %v", cs.count(), first, c.writeUntil)
	}
	c.writeUntil = time.Now().Add(29 * time.Second) // less than half left
	cs.track(c, http.StateIdle)
	cs.track(c, http.StateActive)
	if time.Until(c.writeUntil) < 59*time.Second {
		t.Errorf("less than half left: deadline not renewed (%v)", c.writeUntil)
	}
	cs.track(c, http.StateClosed)
	cs.track(c, http.StateClosed)
	if cs.count() != 0 || cs.openCount() != 0 {
		t.Errorf("closed: count %d, %d open", cs.count(), cs.openCount())
	}
	// The server's clear after a request keeps the deadline; one set by
	// the API (ResponseController) is recorded.
	kept := c.writeUntil
	c.SetWriteDeadline(time.Time{})
	if c.writeUntil != kept {
		t.Error("a clear moved the deadline")
	}
	later := time.Now().Add(time.Hour)
	c.SetWriteDeadline(later)
	if c.writeUntil != later {
		t.Error("a deadline set is not recorded")
	}
}

// BenchmarkConnsTrack is the ConnState hook of one request (active, then
// idle) on a connection of each core's own, from every core at once.
func BenchmarkConnsTrack(b *testing.B) {
	cs := conns{writeTimeout: time.Minute}
	b.RunParallel(func(pb *testing.PB) {
		a, p := net.Pipe()
		defer a.Close()
		defer p.Close()
		c := &serverConn{Conn: a}
		cs.track(c, http.StateNew)
		for pb.Next() {
			cs.track(c, http.StateActive)
			cs.track(c, http.StateIdle)
		}
		cs.track(c, http.StateClosed)
	})
}
