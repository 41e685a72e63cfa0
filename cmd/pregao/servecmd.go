package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/httpapi"
	"github.com/pregao/pregao/snapshot/remote"
)

// runServe serves the API: pregao serve --snapshot FILE --keys FILE
// [--addr 127.0.0.1:8080] [--clock snapshot|wall] [--prefix /v2] [--watch 0].
// Every flag can also come from its environment variable (PREGAO_ADDR...).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, os.LookupEnv, stderr)
	if err != nil {
		return err
	}
	m, err := newMain(cfg, stderr)
	if err != nil {
		return err
	}
	if err := m.Open(); err != nil {
		return err
	}
	prefix := shownPrefix(cfg.Prefix)
	fmt.Fprintf(stdout, "pregao %s: serving %s on http://%s%s (clock %s)\n", currentBuild().Version, remote.Redact(cfg.Snapshot), m.Addr(), prefix, m.cfg.Clock)
	if cfg.PrintKey != "" {
		if err := printKey(stdout, cfg.PrintKey, m.Addr(), prefix); err != nil {
			m.Close()
			return err
		}
	}
	return m.Run(ctx)
}

// serveFlags returns serve's flags, bound to the fields of cfg; their
// defaults are cfg's values.
func serveFlags(cfg *ServeConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.Snapshot, "snapshot", cfg.Snapshot, "snapshot to serve: a file, or an http(s):// or s3://BUCKET/KEY location fetched into --snapshot-cache (required)")
	fs.StringVar(&cfg.SnapshotCache, "snapshot-cache", cfg.SnapshotCache, "folder of the local copy of a remote --snapshot (default: the user's cache folder)")
	fs.Int64Var(&cfg.SnapshotMaxBytes, "snapshot-max-bytes", cfg.SnapshotMaxBytes, "cap of a remote snapshot's download in bytes (0: 4x the local copy, at least 256 MiB; 8 GiB for a first fetch)")
	fs.DurationVar(&cfg.SnapshotStallTimeout, "snapshot-stall-timeout", cfg.SnapshotStallTimeout, "abandon a remote snapshot's download that receives no byte for this long (it is retried, resumed)")
	fs.BoolVar(&cfg.SnapshotCrossHostRedirects, "snapshot-cross-host-redirects", cfg.SnapshotCrossHostRedirects, "follow a remote snapshot's redirects to other hosts (default: only its own host's)")
	fs.StringVar(&cfg.Keys, "keys", cfg.Keys, "API keys file (required; see pregao keys)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "serve /metrics on this address instead of --addr, e.g. :9090, whose /metrics then answers 404: the API's port, the one clients reach, lists neither the keys' names nor their use (default: on --addr)")
	fs.Var(newEnum(&cfg.Clock, "snapshot", "wall"), "clock", "`source` of \"now\" for plan cut-offs: snapshot (the snapshot's as_of, reproducible) or wall")
	fs.StringVar(&cfg.Prefix, "prefix", cfg.Prefix, "path prefix of the API routes")
	fs.DurationVar(&cfg.Watch, "watch", cfg.Watch, "reload when the snapshot or keys file changes, checking at this interval (0: only on SIGHUP)")
	fs.Int64Var(&cfg.MaxBodyBytes, "max-body", cfg.MaxBodyBytes, "request body cap in bytes (larger bodies get 413)")
	fs.Int64Var(&cfg.MaxPushBytes, "max-push-body", cfg.MaxPushBytes, "body cap in bytes of the push feed's batches, POST /admin/live/trades and /bars (larger ones get 413)")
	fs.Var(newEnum(&cfg.LogFormat, "text", "json"), "log", "`format` of the logs: text or json")
	fs.Var(newEnum(&cfg.AccessLog, "stderr", "stdout", "off"), "access-log", "`where` the access log goes (a line per request): stderr, stdout or off")
	fs.Float64Var(&cfg.AccessLogSample, "access-log-sample", cfg.AccessLogSample, "fraction of requests the access log keeps, 0 to 1 (answers 5xx are always logged)")
	fs.Int64Var(&cfg.AnswerCacheMB, "answer-cache", cfg.AnswerCacheMB, "MiB of answers kept per snapshot to be sent again without encoding (0: off)")
	fs.Int64Var(&cfg.VerifyRateMB, "verify-rate", cfg.VerifyRateMB, "MiB a second of the background pass verifying a format 6 snapshot's blocks (bars, report accounts, ratio points) after the first load publishes it, each verified on first use meanwhile (0: every block before publishing); a reload verifies every block before publishing")
	fs.Float64Var(&cfg.AuthFailureRate, "auth-failure-rate", cfg.AuthFailureRate, "requests without a valid API key allowed per client address, a second, after the burst (past it: 401 with Retry-After; 0: no limit)")
	fs.IntVar(&cfg.AuthFailureBurst, "auth-failure-burst", cfg.AuthFailureBurst, "requests without a valid API key a client address may send at once before --auth-failure-rate applies")
	fs.IntVar(&cfg.AdmissionCores, "admission-cores", cfg.AdmissionCores, "slots of computing shared fairly among the API keys making requests: each key holds at most this divided by the active keys (0: GOMAXPROCS; -1: off)")
	fs.DurationVar(&cfg.AdmissionWait, "admission-wait", cfg.AdmissionWait, "how long a request over its key's share of --admission-cores waits for a slot before it is answered 429 with Retry-After")
	fs.IntVar(&cfg.AdmissionQueue, "admission-queue", cfg.AdmissionQueue, "requests of one API key that may wait for a slot at once; one more is answered 429 at once")
	fs.StringVar(&cfg.CORSOrigin, "cors-origin", cfg.CORSOrigin, "browser origins allowed to call the API (CORS), comma-separated, e.g. https://app.example.com; * for any (default none)")
	fs.StringVar(&cfg.PrintKey, "print-key", cfg.PrintKey, "print the API key this file holds (keys add's output) at start, with a request to try: for the demo image, whose log is where its user looks; never for a real key")
	fs.BoolVar(&cfg.QueryToken, "query-token", cfg.QueryToken, "also accept the API key as ?token=KEY (spreadsheets, browsers) from requests without an Authorization header; it is removed from the query before logging (default off: URLs end up in histories and proxies' logs)")
	fs.DurationVar(&cfg.Drain, "drain", cfg.Drain, "on SIGTERM, answer /readyz 503 for this long while still serving, before shutting down (give load balancers time to notice)")
	fs.IntVar(&cfg.StreamConnsPerKey, "stream-conns-per-key", cfg.StreamConnsPerKey, "streams of the live session (GET /stream/quotes) a key may hold open; past it, 429")
	fs.IntVar(&cfg.MaxStreams, "max-streams", cfg.MaxStreams, "streams of the live session (GET /stream/quotes) the server holds open, every key together; past it, 503")
	fs.StringVar(&cfg.FilesDir, "files-dir", cfg.FilesDir, "folder of the flat files GET /files serves, built on first demand per snapshot (default: the user's cache folder + /pregao/files; off: serve no files)")
	fs.Int64Var(&cfg.FilesMaxBytes, "files-max-bytes", cfg.FilesMaxBytes, "bytes of flat files --files-dir keeps; past it the least recently asked snapshot's are removed")
	cfg.Live.AddFlags(fs, session.RoleServe)
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "after the drain, how long requests in flight may take before their connections are cut (at least the write timeout + 5s)")
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
	// As the API takes it (httpapi.New): one leading slash, none
	// trailing ("v2/" is "/v2"; "/" is no prefix, "" the default); the
	// banner and --print-key's request print it ("/" as nothing).
	if cfg.Prefix == "" {
		cfg.Prefix = httpapi.DefaultConfig().Prefix
	}
	cfg.Prefix = "/" + strings.Trim(cfg.Prefix, "/")
	return cfg, nil
}

// shownPrefix is the API's path prefix p (parseServe's) as the banner and
// --print-key's request print it before a path: "/" (no prefix) as
// nothing, so that no path starts with "//".
func shownPrefix(p string) string { return strings.TrimSuffix(p, "/") }

// printKey writes the API key held in file (the demo's) and a request to
// try it with, for a user who reads the server's output (the demo
// image's log).
func printKey(w io.Writer, file, addr, prefix string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("serve: --print-key: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if !strings.HasPrefix(key, "pg_") || strings.ContainsAny(key, " \n\t") {
		return fmt.Errorf("serve: --print-key %s: not an API key (pregao keys add's output)", file)
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	fmt.Fprintf(w, "API key: %s\n", key)
	fmt.Fprintf(w, "try: curl -s -H \"Authorization: Bearer %s\" 'http://127.0.0.1:%s%s/indexes/IBOV/highs?limit=5'\n", key, port, prefix)
	fmt.Fprintf(w, "reference: http://127.0.0.1:%s/docs\n", port)
	return nil
}
