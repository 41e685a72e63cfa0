// serve.go owns serve's configuration (ServeConfig), its state (Main)
// and its construction (NewMain, newMain). The rest of serve is in
// reload.go (loads and reloads), listen.go (listener, Run, shutdown),
// remotesnap.go (remote snapshots), conns.go (connections) and gctune.go
// (the collector).

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/flatfiles"
	"github.com/pregao/pregao/snapshot/remote"
)

// ServeConfig configures `pregao serve`. DefaultServeConfig returns the
// defaults.
type ServeConfig struct {
	Snapshot string // snapshot file, or an http(s):// or s3:// location (required)
	// SnapshotCache is the folder of the local copy of a remote snapshot
	// ("": the user's cache folder).
	SnapshotCache string
	// SnapshotMaxBytes caps the download of a remote snapshot, in bytes
	// (0: four times the local copy, at least 256 MiB; 8 GiB when there
	// is no local copy). SnapshotStallTimeout abandons a download that
	// receives no byte for that long (default 60s). With
	// SnapshotCrossHostRedirects, a redirect may lead to another host
	// (default: only the location's own host). See remote.Fetcher.
	SnapshotMaxBytes           int64
	SnapshotStallTimeout       time.Duration
	SnapshotCrossHostRedirects bool
	Addr                       string        // listen address, default 127.0.0.1:8080
	MetricsAddr                string        // "": /metrics on Addr; else served here only, Addr's answering 404
	Keys                       string        // keys file (required)
	Clock                      string        // "snapshot" (default: now = the snapshot's as_of) or "wall"
	Prefix                     string        // API path prefix, default /v2
	Watch                      time.Duration // poll the snapshot and keys files for changes; 0 = only on SIGHUP
	MaxBodyBytes               int64         // request body cap, default 1 MiB
	MaxPushBytes               int64         // push body cap (POST /admin/live/…), default 16 MiB
	LogFormat                  string        // "text" (default) or "json"
	// AccessLog is where the access log goes: "stderr" (default, with the
	// other logs), "stdout" or "off"; AccessLogSample is the fraction of
	// requests logged (1: all; 5xx answers always are).
	AccessLog       string
	AccessLogSample float64
	// AnswerCacheMB bounds the answers kept per snapshot to be sent again
	// without encoding, in MiB (0: off).
	AnswerCacheMB int64
	// VerifyRateMB is the pace, MiB a second, of the background pass that
	// verifies the blocks of a format 6 snapshot's bars after it is
	// published (they are verified on first use meanwhile); 0 verifies
	// every block before the snapshot is published.
	VerifyRateMB int64
	// AuthFailureRate and AuthFailureBurst limit the requests without a
	// valid API key per client address: a token bucket of Burst refilled
	// at Rate a second (default 5 and 20; Rate 0: no limit). Past it,
	// such requests still get 401, with Retry-After.
	AuthFailureRate  float64
	AuthFailureBurst int
	// AdmissionCores, AdmissionWait and AdmissionQueue configure the
	// fair share of the cores each API key gets (httpapi.Admission):
	// the slots shared among the active keys (default 0: GOMAXPROCS;
	// -1: admission off), how long a request over its key's share waits
	// for a slot before a 429 (default 1s), and how many of one key's
	// requests may wait (default 64).
	AdmissionCores int
	AdmissionWait  time.Duration
	AdmissionQueue int
	// CORSOrigin lists the browser origins allowed to call the API,
	// comma-separated ("*": any); "" (default): none.
	CORSOrigin string
	// PrintKey names a file holding an API key (keys add's output) that
	// serve prints at start, for the demo image, whose users read its
	// log; "" (default): none. Keys otherwise never appear in output.
	PrintKey string
	// QueryToken accepts the API key as ?token=KEY from requests without
	// an Authorization header (spreadsheets, browser address bars); off by
	// default (httpapi.Config.QueryToken).
	QueryToken bool
	// Drain is how long, on SIGTERM or interrupt, /readyz answers 503 and
	// answers close their connections while the API keeps serving, before
	// the graceful shutdown: set it to what your load balancer needs to
	// notice (e.g. probe period × failure threshold). Default 0.
	Drain time.Duration
	// CloseGrace is how long, after the drain, the server keeps serving
	// the connections it has, no longer accepting new ones and closing
	// each after its next answer, so that their clients close them rather
	// than the server closing one as a request is sent on it; it ends as
	// soon as every connection is closed. Then the connections still idle
	// are closed. Default 1s; not a flag.
	CloseGrace time.Duration

	// Live configures the live session and the live stream (package
	// engine/session; its flags are declared there).
	Live session.Config
	// StreamConnsPerKey bounds the streams of the live session (GET
	// /stream/quotes) a key may hold open (default
	// httpapi.DefaultStreamConnsPerKey).
	StreamConnsPerKey int
	// MaxStreams bounds the streams of the live session the server holds
	// open, every key together (default httpapi.DefaultMaxStreams; past
	// it, 503).
	MaxStreams int
	// FilesDir is the folder of the flat files GET /files serves, built
	// on first demand per snapshot and plan cut ("": the user's cache
	// folder + /pregao/files; "off": no files, the routes answer 404);
	// FilesMaxBytes bounds what it keeps (default
	// flatfiles.DefaultCacheBytes, 8 GiB).
	FilesDir      string
	FilesMaxBytes int64

	// Server timeouts. ShutdownTimeout bounds the graceful shutdown after
	// the drain; it is raised to WriteTimeout + 5s when shorter, so that an
	// answer being written is never cut by the shutdown before its own
	// write timeout.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
}

// DefaultServeConfig returns the default ServeConfig.
func DefaultServeConfig() ServeConfig {
	return ServeConfig{
		Addr: "127.0.0.1:8080", Clock: "snapshot", Prefix: "/v2", MaxBodyBytes: 1 << 20, MaxPushBytes: httpapi.DefaultMaxPushBytes, LogFormat: "text",
		AccessLog: "stderr", AccessLogSample: 1, AnswerCacheMB: httpapi.DefaultAnswerCacheBytes >> 20, VerifyRateMB: snapshot.DefaultVerifyRate >> 20,
		AuthFailureRate: httpapi.DefaultAuthFailures.PerSecond, AuthFailureBurst: httpapi.DefaultAuthFailures.Burst,
		AdmissionWait: httpapi.DefaultAdmission().MaxWait, AdmissionQueue: httpapi.DefaultAdmission().MaxQueue,
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, ShutdownTimeout: 35 * time.Second, CloseGrace: time.Second,
		SnapshotStallTimeout: 60 * time.Second,
		Live:                 session.DefaultConfig(),
		StreamConnsPerKey:    httpapi.DefaultStreamConnsPerKey,
		MaxStreams:           httpapi.DefaultMaxStreams,
		FilesMaxBytes:        flatfiles.DefaultCacheBytes,
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
	ln  *connListener
	// msrv serves /metrics on its own listener, mln (serve
	// --metrics-addr); nil without one.
	msrv *http.Server
	mln  net.Listener
	// fetchedSig is the signature of the local copy a remote fetch last
	// wrote, verified whole (remote.Verify): a reload of it does not
	// verify its blocks again before it publishes. Guarded by snapMu.
	fetchedSig fileSig
	// background counts Run's background work (the first load, the
	// reloads, the live session); what is still running when Run
	// returns was left behind, and tests wait for it before the next.
	background sync.WaitGroup

	// keysMu serializes keys reloads and guards keysSig; snapMu
	// serializes snapshot fetches, loads and tuneGC and guards snapSig.
	// No code holds both: a keys reload never waits for a download.
	keysMu  sync.Mutex
	keysSig fileSig
	snapMu  sync.Mutex
	snapSig fileSig

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
	// fetchFailures counts the failed fetches of a remote snapshot by
	// reason (pregao_snapshot_fetch_failures_total).
	fetchFailures *prometheus.CounterVec

	progress  snapshot.Progress  // of the first load (loadFirst), for /readyz
	accessLog *httpapi.AccessLog // nil: --access-log off

	// Live is the live session (--feed, --live): it registers its
	// metrics whether or not one runs. clock is the API's.
	Live  *session.Session
	clock httpapi.Clock
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

// NewMain loads the keys and the snapshot and builds the API. It does not
// listen yet (see Open). pregao serve itself listens first and loads
// meanwhile (newMain, then Run).
func NewMain(cfg ServeConfig, logw io.Writer) (*Main, error) {
	m, err := newMain(cfg, logw)
	if err != nil {
		return nil, err
	}
	if err := m.loadFirst(context.Background()); err != nil {
		return nil, err
	}
	return m, nil
}

// newMain loads the keys and builds the API, without a snapshot: its
// routes answer 503 with the progress of the load (loadFirst, which Run
// starts) until one is published.
//
// maxPushBody is the most --max-push-body may be, bytes: half of the
// session log's cap on a record (live.MaxRecord, 256 MiB; a test holds
// them together).
const maxPushBody = 128 << 20

func newMain(cfg ServeConfig, logw io.Writer) (*Main, error) {
	if cfg.Snapshot == "" || cfg.Keys == "" {
		return nil, errors.New("serve: --snapshot and --keys (or PREGAO_SNAPSHOT and PREGAO_KEYS) are required (create a key with: pregao keys add --file FILE --name NAME --plan delayed)")
	}
	if cfg.AnswerCacheMB < 0 || cfg.AnswerCacheMB > 1<<20 {
		return nil, fmt.Errorf("serve: --answer-cache %d: want MiB from 0 (off) to 1048576", cfg.AnswerCacheMB)
	}
	if cfg.VerifyRateMB < 0 || cfg.VerifyRateMB > 1<<20 {
		return nil, fmt.Errorf("serve: --verify-rate %d: want MiB a second from 0 (every block before publishing) to 1048576", cfg.VerifyRateMB)
	}
	if r := cfg.AuthFailureRate; math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || r > 0 && cfg.AuthFailureBurst < 1 {
		return nil, fmt.Errorf("serve: --auth-failure-rate %g, --auth-failure-burst %d: want a rate ≥ 0 (0: no limit) and a burst ≥ 1", r, cfg.AuthFailureBurst)
	}
	if cfg.StreamConnsPerKey < 1 {
		return nil, fmt.Errorf("serve: --stream-conns-per-key %d: want 1 or more", cfg.StreamConnsPerKey)
	}
	if cfg.FilesMaxBytes < 1 {
		return nil, fmt.Errorf("serve: --files-max-bytes %d: want 1 or more", cfg.FilesMaxBytes)
	}
	if cfg.MaxStreams < 1 {
		return nil, fmt.Errorf("serve: --max-streams %d: want 1 or more", cfg.MaxStreams)
	}
	if cfg.AdmissionCores < -1 || cfg.AdmissionWait <= 0 || cfg.AdmissionQueue < 1 {
		return nil, fmt.Errorf("serve: --admission-cores %d, --admission-wait %v, --admission-queue %d: want cores ≥ 0 (0: GOMAXPROCS) or -1 (off), a wait > 0 and a queue ≥ 1", cfg.AdmissionCores, cfg.AdmissionWait, cfg.AdmissionQueue)
	}
	if cfg.MaxBodyBytes < 1 {
		return nil, fmt.Errorf("serve: --max-body %d: want bytes, 1 or more", cfg.MaxBodyBytes)
	}
	if cfg.MaxPushBytes < 1 || cfg.MaxPushBytes > maxPushBody {
		// Above it, a batch's record could pass the session log's cap
		// (live.MaxRecord, 256 MiB: about 1.6 bytes of record a byte of
		// body at worst), and a push of it would break the log.
		return nil, fmt.Errorf("serve: --max-push-body %d: want bytes from 1 to %d (128 MiB)", cfg.MaxPushBytes, maxPushBody)
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
	m.Live, err = session.New(cfg.Live, m.Store, session.Options{Log: m.log, Registerer: m.Registry, Version: build.Version,
		SetSink: func(s engine.LiveSink) { m.API.SetLiveSink(s) }})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if name := m.Live.ClockName(); name != "" {
		// The feed's (virtual for a replay) or the stream's: every
		// replica answers as of the stream's clock, the one beside the
		// feed included, so that replicas at one stream sequence give
		// the same answers.
		clock = m.Live.Clock()
		cfg.Clock, m.cfg.Clock = name, name
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
	m.clock = clock
	m.API = httpapi.New(httpapi.Config{MetricsApart: cfg.MetricsAddr != "", Prefix: cfg.Prefix, MaxBodyBytes: cfg.MaxBodyBytes, MaxPushBytes: cfg.MaxPushBytes, Version: build.Version, CORSOrigins: origins, QueryToken: cfg.QueryToken, AccessLog: m.accessLog, AnswerCacheBytes: answerCacheBytes(cfg.AnswerCacheMB), WriteTimeout: cfg.WriteTimeout, StreamConnsPerKey: cfg.StreamConnsPerKey, MaxStreams: cfg.MaxStreams,
		AuthFailures: &httpapi.Limit{PerSecond: cfg.AuthFailureRate, Burst: cfg.AuthFailureBurst},
		Admission:    &httpapi.Admission{Cores: cfg.AdmissionCores, MaxWait: cfg.AdmissionWait, MaxQueue: cfg.AdmissionQueue}}, m.Store, keys, clock, m.Registry, m.log)
	if m.Live.Runs() {
		m.API.SetLiveStatus(m.Live.Status)
		m.API.SetLiveRestoring(m.Live.Restoring)
	}
	if err := m.serveFiles(cfg); err != nil {
		return nil, err
	}
	m.API.SetLoadStatus(func() httpapi.LoadStatus {
		st := m.progress.State()
		return httpapi.LoadStatus{Phase: st.Phase, Done: st.Done, Total: st.Total, Elapsed: st.Elapsed}
	})
	if m.snapPath, err = localSnapshot(cfg); err != nil {
		return nil, err
	}
	if err := snapshot.CheckFile(m.snapPath); errors.Is(err, snapshot.ErrNotRegular) {
		// Refused at once, as verify does: opening a named pipe would wait
		// for a writer.
		return nil, fmt.Errorf("serve: --snapshot %w", err)
	}
	if remote.IsURL(cfg.Snapshot) {
		if cfg.SnapshotMaxBytes < 0 || cfg.SnapshotStallTimeout < 0 {
			return nil, fmt.Errorf("serve: --snapshot-max-bytes %d, --snapshot-stall-timeout %s: want 0 (the default) or more", cfg.SnapshotMaxBytes, cfg.SnapshotStallTimeout)
		}
		m.fetcher = &remote.Fetcher{URL: cfg.Snapshot, Path: m.snapPath, RetryDelay: fetchRetryDelay,
			MaxBytes: cfg.SnapshotMaxBytes, StallTimeout: cfg.SnapshotStallTimeout, CrossHostRedirects: cfg.SnapshotCrossHostRedirects,
			Progress: fetchProgress(&m.progress)}
		m.fetchFailures = registerFetchFailures(m.Registry)
	}
	return m, nil
}
