package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/httpapi"
)

// conns follows the server's connections from the http.Server's ConnState
// hook: how many are open and how many serving a request (for the
// shutdown), and the write deadline of each. The server's own WriteTimeout would set the
// deadline on every request (a timer change per request); here it is set
// when a request starts and less than half of writeTimeout is left, so
// that every answer has at least half of it, and the API gives answers
// over 64 KiB the whole of it from their first byte (httpapi
// Config.WriteTimeout). The deadline stays between requests (serverConn
// ignores the server's clear). A connection whose client stops reading is
// cut once its deadline passes, as with the server's WriteTimeout.
type conns struct {
	writeTimeout time.Duration

	// all are the connections accepted and not closed yet: count reads
	// whether each serves a request (serverConn.active). A request
	// changes its connection's flag only: a count of all the connections
	// serving, kept by every request, was a write both cores contend
	// for, twice a request.
	mu  sync.Mutex
	all map[*serverConn]struct{}
}

// serverConn is a connection accepted by connListener, with what conns
// keeps of it.
type serverConn struct {
	net.Conn
	active atomic.Bool
	// writeUntil is the write deadline last set; only the connection's
	// own goroutine (StateActive, its requests' handlers) reads and sets
	// it.
	writeUntil time.Time

	// held is a write of exactly one net/http connection buffer not sent
	// yet (see Write), nil when there is none; pair and bufs send it with
	// the next write (fields, not locals: as locals the writev allocates
	// twice). Only the connection's goroutine uses them.
	held *[heldSize]byte
	pair [2][]byte
	bufs net.Buffers
}

// heldSize is the size of net/http's connection write buffer: an answer
// that, with its headers, is longer than that reaches the connection as
// one write of exactly heldSize bytes (the headers and the start of the
// body), then one of the rest.
const heldSize = 4 << 10

// heldBufs recycles held writes: a connection keeps one only between two
// of its writes.
var heldBufs = sync.Pool{New: func() any { return new([heldSize]byte) }}

// Write sends p. A write of exactly heldSize bytes is held (copied) and
// sent with the next one in a single writev, so that an answer over 4 KiB
// leaves in one send instead of two, each crossing the network stack on
// its own (and, on loopback, the client's receive path: the server's CPU
// per 18 KB screener answer fell from 19.6-19.8 to 14.8-15.7 µs). What is
// held is sent at the latest when the answer ends: net/http clears the
// write deadline (SetWriteDeadline with the zero time) after every
// answer, before the connection goes idle or closes, and the next write
// sends it first. A Flush of exactly 4 KiB mid-answer waits for the
// answer's next write. The heldSize is net/http's (a test sweeps answer
// lengths around it through a real server).
func (c *serverConn) Write(p []byte) (int, error) {
	if c.held != nil {
		c.pair = [2][]byte{c.held[:], p}
		c.bufs = c.pair[:]
		n, err := c.bufs.WriteTo(c.Conn) // writev
		c.pair, c.bufs = [2][]byte{}, nil
		heldBufs.Put(c.held)
		c.held = nil
		if n < heldSize {
			return 0, err
		}
		return int(n - heldSize), err
	}
	if len(p) == heldSize {
		c.held = heldBufs.Get().(*[heldSize]byte)
		copy(c.held[:], p)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// flushHeld sends what Write holds, if anything.
func (c *serverConn) flushHeld() error {
	if c.held == nil {
		return nil
	}
	_, err := c.Conn.Write(c.held[:])
	heldBufs.Put(c.held)
	c.held = nil
	return err
}

// SetWriteDeadline sets the connection's write deadline, except that a
// clear (the zero time, which net/http asks after every request) keeps the
// deadline conns set: it is renewed when the next request starts, before
// anything of it is written. A clear ends an answer: what Write holds is
// sent then.
func (c *serverConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return c.flushHeld()
	}
	c.writeUntil = t
	return c.Conn.SetWriteDeadline(t)
}

// ReadFrom sends what r holds, after what Write holds: a reader that
// writes itself (io.WriterTo) is given the TCP connection itself, so that
// a kept answer's parts go out in one gathered write (httpapi's
// gatheredParts; net/http's ResponseWriter hands its ReadFrom here once
// the headers are sent), and any other reader goes to the connection's
// own ReadFrom (sendfile for a file).
func (c *serverConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.flushHeld(); err != nil {
		return 0, err
	}
	if wt, ok := r.(io.WriterTo); ok {
		return wt.WriteTo(c.Conn)
	}
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one after an error answer.
func (c *serverConn) CloseWrite() error {
	c.flushHeld()
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connListener accepts serverConns. stopAccepting closes the listening
// socket while the server keeps serving the connections it has: Accept
// then waits for Close (the server's Shutdown or Close) and returns
// net.ErrClosed, so that Serve returns http.ErrServerClosed as it does
// after a Shutdown. Safe for concurrent use.
type connListener struct {
	net.Listener
	stopOnce, closeOnce sync.Once
	stopped, closed     chan struct{}
	stopErr             error
	userTimeout         time.Duration // TCP user timeout of accepted connections (0: the system's)
}

// newConnListener returns a connListener accepting from ln. A TCP
// connection it accepts gets userTimeout as its TCP user timeout (when
// above 0, where the system has one: Linux): data sent and not
// acknowledged for that long closes the connection. A client whose
// machine vanished then frees its connection (and, on a stream, one of
// its key's stream slots) in about that time, not after the kernel's
// retransmissions give up (about 15 minutes): a stream's keep-alives fit
// in the send buffer, so its writes never reach their deadline.
func newConnListener(ln net.Listener, userTimeout time.Duration) *connListener {
	return &connListener{Listener: ln, userTimeout: userTimeout, stopped: make(chan struct{}), closed: make(chan struct{})}
}

func (l *connListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		select {
		case <-l.stopped:
			<-l.closed
			return nil, net.ErrClosed
		default:
		}
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok && l.userTimeout > 0 {
		setUserTimeout(tc, l.userTimeout) // best effort: the deadlines still hold without it
	}
	return &serverConn{Conn: c}, nil
}

// stopAccepting closes the listening socket: new connections are refused
// (their clients have sent nothing, and may send it elsewhere), the
// connections accepted are served on.
func (l *connListener) stopAccepting() error {
	l.stopOnce.Do(func() {
		close(l.stopped)
		l.stopErr = l.Listener.Close()
	})
	return l.stopErr
}

// Close closes the listening socket if stopAccepting has not, and ends
// Accept.
func (l *connListener) Close() error {
	err := l.stopAccepting()
	l.closeOnce.Do(func() { close(l.closed) })
	return err
}

// track is the ConnState hook.
func (cs *conns) track(conn net.Conn, st http.ConnState) {
	c, ok := conn.(*serverConn)
	if !ok {
		return
	}
	switch st {
	case http.StateNew:
		cs.mu.Lock()
		if cs.all == nil {
			cs.all = make(map[*serverConn]struct{})
		}
		cs.all[c] = struct{}{}
		cs.mu.Unlock()
	case http.StateClosed, http.StateHijacked:
		cs.mu.Lock()
		delete(cs.all, c)
		cs.mu.Unlock()
	}
	if st != http.StateActive {
		c.active.Store(false)
		return
	}
	c.active.Store(true)
	if d := cs.writeTimeout; d > 0 {
		if now := time.Now(); c.writeUntil.Sub(now) < d/2 {
			c.SetWriteDeadline(now.Add(d))
		}
	}
}

// connContext is the server's ConnContext hook: the API is given the TCP
// connection under a serverConn (httpapi.ConnContext), whose deadline a
// download's watch may move from its own goroutine (serverConn's
// writeUntil is its connection goroutine's alone).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*serverConn); ok {
		c = sc.Conn
	}
	return httpapi.ConnContext(ctx, c)
}

// count returns the connections serving a request (read at the
// shutdown: it walks the open connections).
func (cs *conns) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for c := range cs.all {
		if c.active.Load() {
			n++
		}
	}
	return n
}

// openCount returns the connections accepted and not closed yet.
func (cs *conns) openCount() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.all)
}
