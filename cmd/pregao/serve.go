package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"github.com/pregao/pregao/snapshot/remote"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
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
	Snapshot string // snapshot file, or an http(s):// or s3:// location (required)
	// SnapshotCache is the folder of the local copy of a remote snapshot
	// ("": the user's cache folder).
	SnapshotCache string
	Addr          string        // listen address, default 127.0.0.1:8080
	Keys          string        // keys file (required)
	Clock         string        // "snapshot" (default: now = the snapshot's as_of) or "wall"
	Prefix        string        // API path prefix, default /v2
	Watch         time.Duration // poll the snapshot and keys files for changes; 0 = only on SIGHUP
	MaxBodyBytes  int64         // request body cap, default 1 MiB
	LogFormat     string        // "text" (default) or "json"
	// AccessLog is where the access log goes: "stderr" (default, with the
	// other logs), "stdout" or "off"; AccessLogSample is the fraction of
	// requests logged (1: all; 5xx answers always are).
	AccessLog       string
	AccessLogSample float64
	// AnswerCacheMB bounds the answers kept per snapshot to be sent again
	// without encoding, in MiB (0: off).
	AnswerCacheMB int64
	// CORSOrigin lists the browser origins allowed to call the API,
	// comma-separated ("*": any); "" (default): none.
	CORSOrigin string
	// Drain is how long, on SIGTERM or interrupt, /readyz answers 503 and
	// answers close their connections while the API keeps serving, before
	// the graceful shutdown: set it to what your load balancer needs to
	// notice (e.g. probe period × failure threshold). Default 0.
	Drain time.Duration

	// Server timeouts. ShutdownTimeout bounds the graceful shutdown after
	// the drain; it is raised to WriteTimeout + 5s when shorter, so that an
	// answer being written is never cut by the shutdown before its own
	// write timeout.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
}

// DefaultServeConfig returns the default ServeConfig.
func DefaultServeConfig() ServeConfig {
	return ServeConfig{
		Addr: "127.0.0.1:8080", Clock: "snapshot", Prefix: "/v2", MaxBodyBytes: 1 << 20, LogFormat: "text",
		AccessLog: "stderr", AccessLogSample: 1, AnswerCacheMB: httpapi.DefaultAnswerCacheBytes >> 20,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, ShutdownTimeout: 35 * time.Second,
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

	mu      sync.Mutex // serializes reloads (and tuneGC)
	snapSig fileSig
	keysSig fileSig

	// gcBase is the GOGC tuneGC starts from (0: the operator's own);
	// heapFigures returns the live heap and its scannable part in bytes
	// (tests replace it). See gctune.go.
	gcBase      int
	heapFigures func() (live, scan uint64)

	conns conns // the connections: requests in progress, write deadlines (conns.go)

	// reloadOpts load a snapshot that replaces a served one; releaseOld
	// returns the replaced Dataset's memory to the OS after the publish.
	// Set by NewMain (see reloadOptions); tests may change them.
	reloadOpts snapshot.LoadOptions
	releaseOld bool
	reloadLow  bool // reload on a low-priority thread (loadInBackground)

	// snapPath is the local file loaded: cfg.Snapshot, or the cached copy
	// fetcher keeps up to date for a remote one (remotesnap.go).
	snapPath string
	fetcher  *remote.Fetcher

	progress  snapshot.Progress  // of the first load (loadFirst), for /readyz
	accessLog *httpapi.AccessLog // nil: --access-log off
}

// answerCacheBytes is the httpapi bound of --answer-cache MiB (0: off).
func answerCacheBytes(mb int64) int64 {
	if mb <= 0 {
		return -1
	}
	return mb << 20
}

// lockedWriter serializes the writes of the logs and the access log to
// one writer, so that their lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// fileSig detects a changed file: its size, modification time, inode and
// a checksum of its first 64 KiB (a snapshot's header, which names its
// sections' checksums, or a whole keys file). A file replaced with its
// size and time kept (cp -p, rsync -t) still changes the signature.
type fileSig struct {
	size     int64
	mod      time.Time
	dev, ino uint64
	head     [sha256.Size]byte
}

// sigHead is how much of a file's start fileSig checksums.
const sigHead = 64 << 10

func sigOf(path string) fileSig {
	f, err := os.Open(path)
	if err != nil {
		return fileSig{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileSig{}
	}
	sig := fileSig{size: st.Size(), mod: st.ModTime()}
	sig.dev, sig.ino = fileID(st)
	h := sha256.New()
	io.Copy(h, io.LimitReader(f, sigHead))
	h.Sum(sig.head[:0])
	return sig
}

// NewMain loads the keys and the snapshot and builds the API. It does not
// listen yet (see Open). pregao serve itself listens first and loads
// meanwhile (newMain, then Run).
func NewMain(cfg ServeConfig, logw io.Writer) (*Main, error) {
	m, err := newMain(cfg, logw)
	if err != nil {
		return nil, err
	}
	if err := m.loadFirst(); err != nil {
		return nil, err
	}
	return m, nil
}

// newMain loads the keys and builds the API, without a snapshot: its
// routes answer 503 with the progress of the load (loadFirst, which Run
// starts) until one is published.
func newMain(cfg ServeConfig, logw io.Writer) (*Main, error) {
	if cfg.Snapshot == "" || cfg.Keys == "" {
		return nil, errors.New("serve: --snapshot and --keys (or PREGAO_SNAPSHOT and PREGAO_KEYS) are required (create a key with: pregao keys add --file FILE --name NAME --plan delayed)")
	}
	if cfg.AnswerCacheMB < 0 || cfg.AnswerCacheMB > 1<<20 {
		return nil, fmt.Errorf("serve: --answer-cache %d: want MiB from 0 (off) to 1048576", cfg.AnswerCacheMB)
	}
	if cfg.AccessLogSample < 0 || cfg.AccessLogSample > 1 {
		return nil, fmt.Errorf("serve: --access-log-sample %g: want a fraction from 0 to 1", cfg.AccessLogSample)
	}
	logw = &lockedWriter{w: logw} // shared by the logs and the access log
	var h slog.Handler = slog.NewTextHandler(logw, nil)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(logw, nil)
	}
	m := &Main{cfg: cfg, log: slog.New(h), Store: &engine.Store{}, Registry: prometheus.NewRegistry()}
	switch cfg.AccessLog {
	case "stderr", "":
		m.accessLog = httpapi.NewAccessLog(logw, cfg.LogFormat == "json", cfg.AccessLogSample)
	case "stdout":
		m.accessLog = httpapi.NewAccessLog(&lockedWriter{w: os.Stdout}, cfg.LogFormat == "json", cfg.AccessLogSample)
	case "off":
	default:
		return nil, fmt.Errorf("serve: --access-log %q: want stderr, stdout or off", cfg.AccessLog)
	}
	m.reloadOpts, m.releaseOld, m.reloadLow = reloadOptions()
	m.gcBase, m.heapFigures = gcBase(), heapFigures
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
	var origins []string
	for _, o := range strings.Split(cfg.CORSOrigin, ",") {
		if o = strings.TrimSpace(o); o != "" {
			if o != "*" && !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://") {
				return nil, fmt.Errorf("serve: --cors-origin %q: want *, or origins such as https://app.example.com, comma-separated", o)
			}
			origins = append(origins, o)
		}
	}
	m.API = httpapi.New(httpapi.Config{Prefix: cfg.Prefix, MaxBodyBytes: cfg.MaxBodyBytes, Version: build.Version, CORSOrigins: origins, AccessLog: m.accessLog, AnswerCacheBytes: answerCacheBytes(cfg.AnswerCacheMB), WriteTimeout: cfg.WriteTimeout}, m.Store, keys, clock, m.Registry, m.log)
	m.API.SetLoadStatus(func() httpapi.LoadStatus {
		st := m.progress.State()
		return httpapi.LoadStatus{Phase: st.Phase, Done: st.Done, Total: st.Total, Elapsed: st.Elapsed}
	})
	if m.snapPath, err = localSnapshot(cfg); err != nil {
		return nil, err
	}
	if remote.IsURL(cfg.Snapshot) {
		m.fetcher = &remote.Fetcher{URL: cfg.Snapshot, Path: m.snapPath, RetryDelay: fetchRetryDelay}
	}
	return m, nil
}

// beforeFirstLoad, when set (tests), runs in loadFirst just before the
// snapshot is read.
var beforeFirstLoad func()

// loadFirst fetches (for a remote --snapshot) and loads the first
// snapshot, reporting its progress to /readyz. A remote snapshot whose
// fetch fails is served from the cached copy when there is one.
func (m *Main) loadFirst() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fetcher != nil {
		m.progress.Begin("fetch", "", 0)
		if err := m.fetchSnapshot(); err != nil {
			if _, serr := os.Stat(m.snapPath); serr != nil {
				return err // nothing to serve
			}
			m.log.Warn("serving the cached copy until a fetch succeeds", "file", m.snapPath)
		}
	}
	m.log.Info("loading the snapshot", "file", m.snapPath)
	if beforeFirstLoad != nil {
		beforeFirstLoad()
	}
	return m.loadSnapshot(snapshot.LoadOptions{PauseGC: true, Progress: &m.progress})
}

// loadSnapshot reads, verifies and indexes the snapshot file and publishes
// it; on error the current Dataset is kept.
func (m *Main) loadSnapshot(opt snapshot.LoadOptions) error {
	start := time.Now()
	sig := sigOf(m.snapPath)
	var ds *engine.Dataset
	var hdr snapshot.Header
	var err error
	load := func() {
		if ds, hdr, err = snapshot.Load(m.snapPath, opt); err == nil {
			m.API.Prepare(ds, hdr.ID, hdr.BuildTime)
		}
	}
	restore := func() {}
	if m.Store.Current() != nil && m.reloadLow {
		restore = raiseGCPercent(reloadGCPercent())
		loadInBackground(load)
	} else {
		load()
	}
	if err != nil {
		restore()
		return fmt.Errorf("serve: snapshot %s: %w", m.cfg.Snapshot, err)
	}
	old := m.Store.Current()
	m.Store.Publish(ds)
	if old != nil {
		m.goTuneGC(func() { releaseMemory(restore, m.releaseOld) }, !m.releaseOld) // a release collects
	} else {
		m.goTuneGC(func() {}, true)
	}
	m.snapSig = sig
	d := time.Since(start)
	counts := make(map[string]int64, len(hdr.Counts))
	for k, v := range hdr.Counts {
		counts[k] = int64(v)
	}
	m.API.RecordLoad(httpapi.LoadInfo{ID: hdr.ID, AsOf: ds.AsOf(), Duration: d, Counts: counts, At: time.Now()})
	m.log.Info("snapshot published", "file", m.snapPath, "id", hdr.ID, "as_of", ds.AsOf(), "load_seconds", d.Seconds())
	return nil
}

// Reload reloads what changed since it was last loaded (see fileSig): the
// keys file, the snapshot, or both; a keys change alone does not reload
// the snapshot. A snapshot or keys file that fails to load is refused: the
// previous one keeps serving, the same file is not retried, and the error
// is returned.
func (m *Main) Reload() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	if sig := sigOf(m.cfg.Keys); sig != m.keysSig {
		if n, err := m.API.ReloadKeys(m.cfg.Keys); err != nil {
			m.log.Error("keys reload refused; keeping the previous keys", "file", m.cfg.Keys, "keys", n, "err", err.Error())
			errs = append(errs, fmt.Errorf("keys: %w", err))
		} else {
			m.log.Info("keys reloaded", "file", m.cfg.Keys, "keys", n)
		}
		m.keysSig = sig
	}
	if err := m.fetchSnapshot(); err != nil {
		m.API.RecordReload(false)
		errs = append(errs, err)
	}
	if sigOf(m.snapPath) != m.snapSig {
		if err := m.loadSnapshot(m.reloadOpts); err != nil {
			m.log.Error("snapshot reload refused; keeping the previous snapshot", "err", err.Error())
			m.API.RecordReload(false)
			m.snapSig = sigOf(m.snapPath)
			errs = append(errs, err)
		} else {
			m.API.RecordReload(true)
		}
	}
	return errors.Join(errs...)
}

// changed reports whether the snapshot or keys file changed since loaded;
// a remote snapshot is fetched first (a conditional request: one 304 when
// it has not changed).
func (m *Main) changed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fetchSnapshot()
	return sigOf(m.snapPath) != m.snapSig || sigOf(m.cfg.Keys) != m.keysSig
}

// Open listens on the configured address.
func (m *Main) Open() error {
	ln, err := net.Listen("tcp", m.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	m.conns.writeTimeout = m.cfg.WriteTimeout
	m.ln = connListener{ln}
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
		ErrorLog:       slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
	}
	return nil
}

// Addr returns the listening address (after Open).
func (m *Main) Addr() string { return m.ln.Addr().String() }

// Run serves until ctx is done, then shuts down gracefully. SIGHUP (and,
// with Watch, a change of the snapshot or keys file) reloads. Without a
// snapshot yet (newMain), Run loads it while serving (/healthz 200,
// /readyz and the API 503 with the load's progress) and returns the error
// when it cannot be loaded.

func (m *Main) Run(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- m.srv.Serve(m.ln) }()
	loaded := make(chan error, 1)
	if m.Store.Current() == nil {
		go func() { loaded <- m.loadFirst() }()
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
			return err
		case err := <-loaded:
			if err != nil {
				m.log.Error("no snapshot to serve: stopping", "err", err.Error())
				m.srv.Close()
				m.closeAccessLog()
				return err
			}
		case <-hup:
			if m.Store.Current() == nil {
				m.log.Info("SIGHUP: the first snapshot is still loading; nothing to reload")
				continue
			}
			m.log.Info("SIGHUP: reloading")
			m.Reload()
		case <-tick:
			if m.Store.Current() == nil {
				continue
			}
			if m.changed() {
				m.log.Info("files changed: reloading")
				m.Reload()
			}
		case <-ctx.Done():
			return m.Close()
		}
	}
}

// Close shuts the server down: /readyz turns 503 first and, for Drain,
// the API keeps answering (each answer closing its connection) so that
// load balancers notice; then a graceful shutdown waits for the requests
// in flight up to ShutdownTimeout. Connections still serving a request
// then are cut, logged and returned as an error.
func (m *Main) Close() error {
	if m.srv == nil {
		return nil
	}
	defer m.closeAccessLog()
	m.API.SetDraining(true)
	if m.cfg.Drain > 0 {
		m.log.Info("draining: /readyz answers 503, answers close their connections", "drain", m.cfg.Drain.String())
		time.Sleep(m.cfg.Drain)
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
