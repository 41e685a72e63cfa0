package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
)

// ServeConfig configures `pregao serve`. DefaultServeConfig returns the
// defaults.
type ServeConfig struct {
	Snapshot     string        // snapshot file (required)
	Addr         string        // listen address, default 127.0.0.1:8080
	Keys         string        // keys file (required)
	Clock        string        // "snapshot" (default: now = the snapshot's as_of) or "wall"
	Prefix       string        // API path prefix, default /v2
	Watch        time.Duration // poll the snapshot and keys files for changes; 0 = only on SIGHUP
	MaxBodyBytes int64         // request body cap, default 1 MiB
	LogFormat    string        // "text" (default) or "json"

	// Server timeouts.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
}

// DefaultServeConfig returns the default ServeConfig.
func DefaultServeConfig() ServeConfig {
	return ServeConfig{
		Addr: "127.0.0.1:8080", Clock: "snapshot", Prefix: "/v2", MaxBodyBytes: 1 << 20, LogFormat: "text",
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, ShutdownTimeout: 15 * time.Second,
	}
}

// Main is the serve program: it loads a snapshot and keys, serves the API
// and reloads both on SIGHUP or when the files change (--watch). A new
// snapshot that fails to load is refused and the previous one keeps serving.
type Main struct {
	cfg      ServeConfig
	log      *slog.Logger
	Store    *engine.Store
	Registry *prometheus.Registry
	API      *httpapi.API

	srv *http.Server
	ln  net.Listener

	mu      sync.Mutex // serializes reloads
	snapSig fileSig
	keysSig fileSig
}

// fileSig detects a changed file.
type fileSig struct {
	size int64
	mod  time.Time
}

func sigOf(path string) fileSig {
	st, err := os.Stat(path)
	if err != nil {
		return fileSig{}
	}
	return fileSig{st.Size(), st.ModTime()}
}

// NewMain loads the keys and the snapshot and builds the API. It does not
// listen yet (see Open).
func NewMain(cfg ServeConfig, logw io.Writer) (*Main, error) {
	if cfg.Snapshot == "" || cfg.Keys == "" {
		return nil, errors.New("serve: --snapshot and --keys (or PREGAO_SNAPSHOT and PREGAO_KEYS) are required (create a key with: pregao keys add --file FILE --name NAME --plan delayed)")
	}
	var h slog.Handler = slog.NewTextHandler(logw, nil)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(logw, nil)
	}
	m := &Main{cfg: cfg, log: slog.New(h), Store: &engine.Store{}, Registry: prometheus.NewRegistry()}
	build := currentBuild()
	registerBuildInfo(m.Registry, build)
	m.log.Info("pregao starting", "version", build.Version, "revision", build.Revision, "go", build.GoVersion)
	keys, err := httpapi.LoadKeys(cfg.Keys)
	if err != nil {
		return nil, fmt.Errorf("serve: keys: %w", err)
	}
	if keys.Len() == 0 {
		m.log.Warn("the keys file holds no key: every API request will be refused", "file", cfg.Keys)
	}
	m.keysSig = sigOf(cfg.Keys)
	var clock httpapi.Clock
	switch cfg.Clock {
	case "", "snapshot":
		clock = httpapi.SnapshotClock{Store: m.Store}
	case "wall":
		clock = httpapi.WallClock{}
	default:
		return nil, fmt.Errorf("serve: --clock %q: want snapshot or wall", cfg.Clock)
	}
	m.API = httpapi.New(httpapi.Config{Prefix: cfg.Prefix, MaxBodyBytes: cfg.MaxBodyBytes, Version: build.Version}, m.Store, keys, clock, m.Registry, m.log)
	if err := m.loadSnapshot(); err != nil {
		return nil, err
	}
	return m, nil
}

// loadSnapshot reads, verifies and indexes the snapshot file and publishes
// it; on error the current Dataset is kept.
func (m *Main) loadSnapshot() error {
	start := time.Now()
	sig := sigOf(m.cfg.Snapshot)
	ds, hdr, err := snapshot.Load(m.cfg.Snapshot)
	if err != nil {
		return fmt.Errorf("serve: snapshot %s: %w", m.cfg.Snapshot, err)
	}
	m.Store.Publish(ds)
	m.API.Warm()
	m.snapSig = sig
	d := time.Since(start)
	counts := make(map[string]int64, len(hdr.Counts))
	for k, v := range hdr.Counts {
		counts[k] = int64(v)
	}
	m.API.RecordLoad(httpapi.LoadInfo{ID: hdr.ID, AsOf: ds.AsOf(), Duration: d, Counts: counts, At: time.Now()})
	m.log.Info("snapshot published", "file", m.cfg.Snapshot, "id", hdr.ID, "as_of", ds.AsOf(), "load_seconds", d.Seconds())
	return nil
}

// Reload reloads the keys file and the snapshot. A snapshot or keys file
// that fails to load is refused: the previous one keeps serving and the
// error is returned.
func (m *Main) Reload() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if keys, err := httpapi.LoadKeys(m.cfg.Keys); err != nil {
		m.log.Error("keys reload refused; keeping the previous keys", "file", m.cfg.Keys, "err", err.Error())
		errs = append(errs, fmt.Errorf("keys: %w", err))
	} else {
		m.API.SetKeys(keys)
		m.keysSig = sigOf(m.cfg.Keys)
	}
	if err := m.loadSnapshot(); err != nil {
		m.log.Error("snapshot reload refused; keeping the previous snapshot", "err", err.Error())
		m.API.RecordReload(false)
		m.snapSig = sigOf(m.cfg.Snapshot) // do not retry the same bad file
		errs = append(errs, err)
	} else {
		m.API.RecordReload(true)
	}
	return errors.Join(errs...)
}

// changed reports whether the snapshot or keys file changed since loaded.
func (m *Main) changed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sigOf(m.cfg.Snapshot) != m.snapSig || sigOf(m.cfg.Keys) != m.keysSig
}

// Open listens on the configured address.
func (m *Main) Open() error {
	ln, err := net.Listen("tcp", m.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	m.ln = ln
	m.srv = &http.Server{
		Handler:           m.API,
		ReadHeaderTimeout: m.cfg.ReadHeaderTimeout,
		ReadTimeout:       m.cfg.ReadTimeout,
		WriteTimeout:      m.cfg.WriteTimeout,
		IdleTimeout:       m.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// Addr returns the listening address (after Open).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Run serves until ctx is done, then shuts down gracefully. SIGHUP (and,
// with Watch, a change of the snapshot or keys file) reloads.
func (m *Main) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- m.srv.Serve(m.ln) }()
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
			return err
		case <-hup:
			m.log.Info("SIGHUP: reloading")
			m.Reload()
		case <-tick:
			if m.changed() {
				m.log.Info("files changed: reloading")
				m.Reload()
			}
		case <-ctx.Done():
			return m.Close()
		}
	}
}

// Close shuts the server down gracefully, waiting for requests in flight
// up to ShutdownTimeout.
func (m *Main) Close() error {
	if m.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.ShutdownTimeout)
	defer cancel()
	m.log.Info("shutting down")
	if err := m.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// runServe serves the API: pregao serve --snapshot FILE --keys FILE
// [--addr 127.0.0.1:8080] [--clock snapshot|wall] [--prefix /v2] [--watch 0].
// Every flag can also come from its environment variable (PREGAO_ADDR...).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, os.LookupEnv, stderr)
	if err != nil {
		return err
	}
	m, err := NewMain(cfg, stderr)
	if err != nil {
		return err
	}
	if err := m.Open(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pregao %s: serving %s on http://%s%s (clock %s)\n", currentBuild().Version, cfg.Snapshot, m.Addr(), cfg.Prefix, cfg.Clock)
	return m.Run(ctx)
}

// serveFlags returns serve's flags, bound to the fields of cfg; their
// defaults are cfg's values.
func serveFlags(cfg *ServeConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Snapshot, "snapshot", cfg.Snapshot, "snapshot file to serve (required)")
	fs.StringVar(&cfg.Keys, "keys", cfg.Keys, "API keys file (required; see pregao keys)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address")
	fs.Var(newEnum(&cfg.Clock, "snapshot", "wall"), "clock", "`source` of \"now\" for plan cut-offs: snapshot (the snapshot's as_of, reproducible) or wall")
	fs.StringVar(&cfg.Prefix, "prefix", cfg.Prefix, "path prefix of the API routes")
	fs.DurationVar(&cfg.Watch, "watch", cfg.Watch, "reload when the snapshot or keys file changes, checking at this interval (0: only on SIGHUP)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", cfg.MaxBodyBytes, "request body cap in bytes (larger bodies get 413)")
	fs.Var(newEnum(&cfg.LogFormat, "text", "json"), "log", "`format` of the logs: text or json")
	return fs
}

// parseServe returns DefaultServeConfig with serve's flags applied: first
// from the environment (lookupEnv, e.g. os.LookupEnv; see envName), then
// from args, so that a flag on the command line wins.
func parseServe(args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (ServeConfig, error) {
	cfg := DefaultServeConfig()
	fs := serveFlags(&cfg)
	fs.SetOutput(stderr)
	fs.Usage = func() { envUsage(fs) }
	if err := setFromEnv(fs, lookupEnv); err != nil {
		return cfg, fmt.Errorf("serve: %w", err)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	return cfg, nil
}
