package httpapi

import (
	"context"
	"net"
	"sync"
	"time"
)

// connKey is the request context's key of its connection (ConnContext).
type connKey struct{}

// ConnContext is an http.Server's ConnContext hook: it keeps the
// connection c in its requests' context, so that a download's write
// deadline can follow what the client acknowledges (writeWatch); c is
// the TCP connection itself (a wrapper's deadline and socket are its
// own). A server without it keeps each write's own deadline.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ContextConn returns the connection ConnContext kept in ctx, nil when
// it kept none.
func ContextConn(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// writeWatch keeps a long answer's write deadline ahead of a client that
// reads slowly but steadily. A blocked write waits for the kernel to
// free half of the connection's send buffer (up to 4 MiB on Linux): a
// client reading 160 KB/s over loopback made each write wait 9.8 s,
// one at 40 KB/s past 30 s, the client reading all along, and a
// deadline per write cut such a download. Every timeout/4
// the watch reads the bytes the client has acknowledged (acked: TCP_INFO
// on Linux); when they grew, the deadline moves to timeout from then. A
// client that stops reading acknowledges nothing more and is cut at most
// timeout and a quarter after its last byte.
type writeWatch struct {
	mu      sync.Mutex
	stopped bool
	t       *time.Timer
	last    uint64
	timeout time.Duration
	conn    net.Conn
}

// watchWrites starts a writeWatch over c, the request's connection as
// ConnContext kept it (nil when c is nil, timeout is 0 or c's
// acknowledged bytes cannot be read); stop ends it. It sets c's write
// deadline from its own goroutine: c must allow that (a net.TCPConn
// does).
func watchWrites(c net.Conn, timeout time.Duration) *writeWatch {
	if c == nil || timeout <= 0 {
		return nil
	}
	n, ok := ackedBytes(c)
	if !ok {
		return nil
	}
	w := &writeWatch{last: n, timeout: timeout, conn: c}
	w.t = time.AfterFunc(timeout/4, w.tick)
	return w
}

func (w *writeWatch) tick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if n, ok := ackedBytes(w.conn); ok && n != w.last {
		w.last = n
		_ = w.conn.SetWriteDeadline(time.Now().Add(w.timeout))
	}
	w.t.Reset(w.timeout / 4)
}

// stop ends the watch: once it returns the watch sets no deadline.
func (w *writeWatch) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.stopped = true
	w.t.Stop()
	w.mu.Unlock()
}
