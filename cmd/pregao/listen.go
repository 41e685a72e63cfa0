// listen.go owns serve's listener and lifecycle: Open, Run (the loop of
// signals and watch ticks) and Close (the drain and the graceful
// shutdown).

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Open listens on the configured address.
func (m *Main) Open() error {
	ln, err := net.Listen("tcp", m.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	m.conns.writeTimeout = m.cfg.WriteTimeout
	m.ln = newConnListener(ln, m.cfg.WriteTimeout)
	m.srv = &http.Server{
		Handler:           m.API,
		ReadHeaderTimeout: m.cfg.ReadHeaderTimeout,
		ReadTimeout:       m.cfg.ReadTimeout,
		// WriteTimeout is kept by m.conns (the connection's write deadline,
		// renewed when less than half of it is left) and, for answers over
		// 64 KiB, by the API (from their first byte): the server would set
		// it again on every request.
		IdleTimeout:    m.cfg.IdleTimeout,
		MaxHeaderBytes: 64 << 10,
		ConnState:      m.conns.track,
		ConnContext:    connContext,
		ErrorLog:       slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
	}
	if m.cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", m.cfg.MetricsAddr)
		if err != nil {
			ln.Close()
			m.ln, m.srv = nil, nil // nothing opened
			return fmt.Errorf("serve: --metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		if h := m.API.MetricsHandler(); h != nil {
			mux.Handle("GET /metrics", h)
		}
		m.mln = mln
		m.msrv = &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: m.cfg.ReadHeaderTimeout,
			ReadTimeout:       m.cfg.ReadTimeout,
			WriteTimeout:      m.cfg.WriteTimeout,
			IdleTimeout:       m.cfg.IdleTimeout,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		}
	}
	return nil
}

// MetricsAddr returns the address /metrics listens on apart (after Open;
// "" without --metrics-addr).
func (m *Main) MetricsAddr() string {
	if m.mln == nil {
		return ""
	}
	return m.mln.Addr().String()
}

// Addr returns the listening address (after Open).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Run serves until ctx is done, then shuts down gracefully. SIGHUP (and,
// with Watch, every Watch interval) reloads the keys file if it changed,
// at once, and hands the snapshot's fetch and reload to a goroutine of
// their own (snapshotReloads), so that a slow download never delays a
// keys change. Without a snapshot yet (newMain), Run loads it while
// serving (/healthz 200, /readyz and the API 503 with the load's
// progress) and returns the error when it cannot be loaded. A fetch
// under way when ctx is done is abandoned.
func (m *Main) Run(ctx context.Context) error {
	errc := make(chan error, 2)
	go func() { errc <- m.srv.Serve(m.ln) }()
	if m.msrv != nil {
		go func() {
			if err := m.msrv.Serve(m.mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("serve: --metrics-addr: %w", err)
			}
		}()
	}
	bg, stopBg := context.WithCancel(context.Background())
	bgDone := &m.background
	defer func() {
		stopBg()
		// A loader stuck in a read (a hung network disk) does not hold
		// the process: it is left behind after the shutdown's timeout.
		done := make(chan struct{})
		go func() { bgDone.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(m.shutdownTimeout()):
			m.log.Warn("background work (a snapshot load, a fetch) still running after the shutdown's timeout: left behind", "timeout", m.shutdownTimeout().String())
		}
	}()
	loaded := make(chan error, 1)
	if m.Store.Current() == nil {
		bgDone.Go(func() { loaded <- m.loadFirst(bg) })
	} else {
		m.startLive(bg, bgDone)
	}
	kick := make(chan struct{}, 1)
	bgDone.Go(func() { m.snapshotReloads(bg, kick) })
	reload := func() {
		m.reloadKeys()
		select {
		case kick <- struct{}{}:
		default: // one is pending already
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if m.cfg.Watch > 0 {
		t := time.NewTicker(m.cfg.Watch)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-errc:
			// A listener failed: the other is shut down too (and the
			// access log written) before the error is returned.
			stopBg()
			return errors.Join(err, m.Close())
		case err := <-loaded:
			if err != nil {
				m.log.Error("no snapshot to serve: stopping", "err", err.Error())
				m.srv.Close()
				if m.msrv != nil {
					m.msrv.Close()
				}
				m.closeAccessLog()
				return err
			}
			m.startLive(bg, bgDone)
		case <-hup:
			if m.Store.Current() == nil {
				m.log.Info("SIGHUP: the first snapshot is still loading; reloading the keys only")
				m.reloadKeys()
				continue
			}
			m.log.Info("SIGHUP: reloading")
			reload()
		case <-tick:
			if m.Store.Current() == nil {
				m.reloadKeys()
				continue
			}
			reload()
		case <-ctx.Done():
			stopBg() // abandons a fetch under way
			return m.Close()
		}
	}
}

// startLive runs the live session, if a feed or a stream is configured,
// once the first snapshot is published, until ctx ends.
func (m *Main) startLive(ctx context.Context, wg *sync.WaitGroup) {
	if m.Live.Runs() {
		wg.Go(func() { m.Live.Run(ctx) })
	}
}

// Close shuts the server down: /readyz turns 503 first and, for Drain,
// the API keeps answering (each answer closing its connection, the
// live session's streams going on) so that load balancers notice. Then
// the streams end and the listener closes (a new connection is
// refused: its client has sent nothing and may send it elsewhere) and,
// for up to CloseGrace, the connections left are served on, each answer
// closing its own, so that clients close them: a client never sends a
// request on a connection the server is closing at that instant (the
// race an idle keep-alive connection closed by the server has). Last, a
// graceful shutdown closes the connections still idle and waits for the
// requests in flight up to ShutdownTimeout. Connections still serving a
// request then are cut, logged and returned as an error.
func (m *Main) Close() error {
	if m.srv == nil {
		return nil
	}
	defer m.closeAccessLog()
	if m.msrv != nil {
		// Scraped until the end: closed last, at once (a scrape is short).
		defer m.msrv.Close()
	}
	m.API.SetDraining(true)
	if m.cfg.Drain > 0 {
		m.log.Info("draining: /readyz answers 503, answers close their connections", "drain", m.cfg.Drain.String())
		time.Sleep(m.cfg.Drain)
	}
	// The streams of the live session end now, not with the drain's
	// start: their clients reconnect after the load balancer has left
	// this server (a stream refused here is asked to retry in 1 s).
	m.API.EndStreams()
	m.ln.stopAccepting()
	if open := m.conns.openCount(); open > 0 && m.cfg.CloseGrace > 0 {
		m.log.Info("closing: new connections refused, answers close their connections", "open_connections", open, "grace", m.cfg.CloseGrace.String())
		m.awaitClientsClose(m.cfg.CloseGrace)
	}
	timeout := m.shutdownTimeout()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	m.log.Info("shutting down", "timeout", timeout.String(), "active_connections", m.conns.count())
	err := m.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		cut := m.conns.count()
		m.srv.Close()
		m.log.Warn("shutdown timed out: connections cut", "connections_cut", cut)
		return fmt.Errorf("serve: shutdown timed out after %s: %d connections cut", timeout, cut)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	m.log.Info("stopped", "connections_cut", 0)
	return nil
}

// awaitClientsClose returns when every connection is closed, or after
// grace.
func (m *Main) awaitClientsClose(grace time.Duration) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	deadline := time.Now().Add(grace)
	for m.conns.openCount() > 0 && time.Now().Before(deadline) {
		<-t.C
	}
}

// closeAccessLog writes the access log's pending lines.
func (m *Main) closeAccessLog() {
	if m.accessLog != nil {
		m.accessLog.Close()
	}
}

// shutdownTimeout is ShutdownTimeout, at least WriteTimeout + 5s.
func (m *Main) shutdownTimeout() time.Duration {
	return max(m.cfg.ShutdownTimeout, m.cfg.WriteTimeout+5*time.Second)
}
