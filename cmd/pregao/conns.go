package main

import (
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// conns follows the server's connections from the http.Server's ConnState
// hook: how many are serving a request (for the shutdown log), and the
// write deadline of each. The server's own WriteTimeout would set the
// deadline on every request (a timer change per request); here it is set
// when a request starts and less than half of writeTimeout is left, so
// that every answer has at least half of it, and the API gives answers
// over 64 KiB the whole of it from their first byte (httpapi
// Config.WriteTimeout). The deadline stays between requests (serverConn
// ignores the server's clear). A connection whose client stops reading is
// cut once its deadline passes, as with the server's WriteTimeout.
type conns struct {
	writeTimeout time.Duration
	active       atomic.Int64
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
}

// SetWriteDeadline sets the connection's write deadline, except that a
// clear (the zero time, which net/http asks after every request) keeps the
// deadline conns set: it is renewed when the next request starts, before
// anything of it is written.
func (c *serverConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	c.writeUntil = t
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite half-closes a TCP connection, as net/http does before it
// closes one after an error answer.
func (c *serverConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// connListener accepts serverConns.
type connListener struct{ net.Listener }

func (l connListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &serverConn{Conn: c}, nil
}

// track is the ConnState hook.
func (cs *conns) track(conn net.Conn, st http.ConnState) {
	c, ok := conn.(*serverConn)
	if !ok {
		return
	}
	if st != http.StateActive {
		if c.active.CompareAndSwap(true, false) {
			cs.active.Add(-1)
		}
		return
	}
	if c.active.CompareAndSwap(false, true) {
		cs.active.Add(1)
	}
	if d := cs.writeTimeout; d > 0 {
		if now := time.Now(); c.writeUntil.Sub(now) < d/2 {
			c.SetWriteDeadline(now.Add(d))
		}
	}
}

// count returns the connections serving a request.
func (cs *conns) count() int { return int(cs.active.Load()) }
