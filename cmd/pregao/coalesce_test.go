package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection, the server's
// as a serverConn.
func tcpPair(t *testing.T) (*serverConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := newConnListener(ln, 0).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); sc.Close() })
	return sc.(*serverConn), client
}

// readFor reads what arrives on c within d.
func readFor(c net.Conn, d time.Duration) []byte {
	c.SetReadDeadline(time.Now().Add(d))
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got
		}
	}
}

// A write of exactly one net/http buffer is held until the next write,
// which sends both, or until the answer ends (the write deadline cleared)
// or the connection is half-closed; other writes go out at once; every
// byte arrives once, in order.
func TestServerConnHoldsOneBuffer(t *testing.T) {
	sc, client := tcpPair(t)
	first := bytes.Repeat([]byte{'a'}, heldSize)
	if n, err := sc.Write(first); n != heldSize || err != nil {
		t.Fatalf("Write(4 KiB) = %d, %v", n, err)
	}
	if got := readFor(client, 100*time.Millisecond); len(got) != 0 {
		t.Fatalf("a 4 KiB write was sent at once (%d bytes): not held", len(got))
	}
	if n, err := sc.Write([]byte("rest")); n != 4 || err != nil {
		t.Fatalf("Write(rest) = %d, %v", n, err)
	}
	if got, want := readFor(client, 200*time.Millisecond), append(first, "rest"...); !bytes.Equal(got, want) {
		t.Fatalf("held write and the next: got %d bytes, want %d", len(got), len(want))
	}
	// The end of an answer sends what is held.
	sc.Write(first)
	sc.SetWriteDeadline(time.Time{})
	if got := readFor(client, 200*time.Millisecond); !bytes.Equal(got, first) {
		t.Fatalf("after the deadline's clear: %d bytes, want %d", len(got), heldSize)
	}
	// So does a half-close.
	sc.Write(first)
	sc.CloseWrite()
	if got := readFor(client, time.Second); !bytes.Equal(got, first) {
		t.Fatalf("after CloseWrite: %d bytes, want %d", len(got), heldSize)
	}
}

// Writes of any sizes, with the answer's end now and then, arrive whole
// and in order; a write after the peer is gone reports an error, held or
// not.
func TestServerConnWritesInOrder(t *testing.T) {
	sc, client := tcpPair(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var want []byte
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(client); done <- b }()
	for i := range 400 {
		n := []int{heldSize, heldSize, 1, heldSize - 1, heldSize + 1, 3 * heldSize, rng.IntN(3 * heldSize)}[rng.IntN(7)]
		p := make([]byte, n)
		for j := range p {
			p[j] = byte(i + j)
		}
		if k, err := sc.Write(p); k != n || err != nil {
			t.Fatalf("write %d: %d of %d bytes, %v", i, k, n, err)
		}
		want = append(want, p...)
		if rng.IntN(5) == 0 {
			sc.SetWriteDeadline(time.Time{})
		}
	}
	sc.CloseWrite()
	if got := <-done; !bytes.Equal(got, want) {
		t.Fatalf("received %d bytes, want %d (or different bytes)", len(got), len(want))
	}

	sc2, client2 := tcpPair(t)
	client2.Close()
	big := make([]byte, heldSize)
	var err error
	for range 1000 { // until the reset is seen
		if _, err = sc2.Write(big); err != nil {
			break
		}
		if _, err = sc2.Write([]byte("x")); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("writes to a closed peer never failed")
	}
}

// Through net/http with the server's listener and hook: answers of every
// length around the 4 KiB buffer (with the headers, some end exactly on
// it), with a Content-Length or chunked, kept alive or closing, arrive
// whole, and none waits for a later request.
func TestAnswersAroundTheBuffer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &conns{writeTimeout: 5 * time.Second}
	srv := &http.Server{ConnState: cs.track, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		if r.URL.Query().Has("length") {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		if r.URL.Query().Has("close") {
			w.Header().Set("Connection", "close")
		}
		for len(body) > 0 { // in pieces, as a streamed answer is
			k := min(len(body), 1500)
			w.Write(body[:k])
			body = body[k:]
		}
	})}
	go srv.Serve(newConnListener(ln, 0))
	defer srv.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	for n := 3500; n <= 9000; n++ {
		if n > 4300 && n < 8000 && n%97 != 0 {
			continue
		}
		for _, q := range []string{"", "&length", "&close", "&length&close"} {
			res, err := client.Get(fmt.Sprintf("http://%s/?n=%d%s", ln.Addr(), n, q))
			if err != nil {
				t.Fatalf("n=%d%s: %v", n, q, err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || len(b) != n {
				t.Fatalf("n=%d%s: %d bytes, %v", n, q, len(b), err)
			}
		}
	}
}

// recConn records the sizes of the writes made to it.
type recConn struct {
	net.Conn
	mu     sync.Mutex
	writes []int
}

func (c *recConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, len(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

type recListener struct {
	net.Listener
	conns chan *recConn
}

func (l recListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &recConn{Conn: c}
	l.conns <- rc
	return rc, nil
}

// What Write holds is what net/http writes first for an answer over its
// buffer: exactly heldSize bytes, then the rest. If a Go release changes
// its buffer, this fails (Write would then hold nothing, and gain nothing).
func TestNetHTTPWritesOneBufferFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := recListener{ln, make(chan *recConn, 1)}
	body := bytes.Repeat([]byte("x"), 18000)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})}
	go srv.Serve(rl)
	defer srv.Close()
	res, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	rc := <-rl.conns
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.writes) < 2 || rc.writes[0] != heldSize {
		t.Fatalf("net/http wrote an 18,000-byte answer as %v; want %d bytes first", rc.writes, heldSize)
	}
}

// Holding and sending a held write allocate nothing (a connection's
// writes are on every answer's path).
func TestServerConnWriteAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector (make test runs Alloc tests without it)")
	}
	sc, client := tcpPair(t)
	go io.Copy(io.Discard, client)
	held, rest := make([]byte, heldSize), make([]byte, 9000)
	if n := testing.AllocsPerRun(200, func() { sc.Write(held); sc.Write(rest); sc.Write(held); sc.SetWriteDeadline(time.Time{}) }); n != 0 {
		t.Errorf("a held write and its sending allocate %v times", n)
	}
}
