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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/engine/session/bus"
)

// FeedConfig configures `pregao feed`: the live session's settings (a
// feed publishing to a cluster's stream), the logs' format and the
// address of its /metrics.
type FeedConfig struct {
	Live        session.Config
	LogFormat   string // "text" (default) or "json"
	MetricsAddr string // "": no HTTP listener
}

// runFeedCmd runs a feed alone, publishing its batches to the live
// stream of a NATS cluster (issue 28): pregao feed --feed replay:DIR|b3
// --live nats://HOST:PORT,... --live-dir DIR. The API replicas (serve
// --live nats://...) apply them. A restarted feed reads its session
// back from the stream and goes on after its last batch there.
func runFeedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := FeedConfig{Live: session.DefaultConfig(), LogFormat: "text"}
	fs := feedFlags(&cfg)
	fs.SetOutput(stderr)
	if err := setFromEnv(fs, os.LookupEnv); err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("feed: unexpected argument %q", fs.Arg(0))
	}
	switch {
	case cfg.Live.Feed == "" || cfg.Live.Feed == session.FeedPush:
		return errors.New("feed: --feed replay:DIR or b3 is required (the push feed runs in serve --feed push)")
	case cfg.Live.Stream == "" || cfg.Live.Stream == bus.Embedded:
		return errors.New("feed: --live nats://HOST:PORT is required (the stream the replicas apply)")
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h)
	reg := prometheus.NewRegistry()
	registerBuildInfo(reg, currentBuild())
	s, err := session.New(cfg.Live, nil, session.Options{Log: log, Registerer: reg, Version: currentBuild().Version})
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("feed: --metrics-addr: %w", err)
		}
		srv := feedHTTP(reg, s)
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}
	if err := s.OpenStream(); err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	fmt.Fprintf(stdout, "pregao %s: feed %s publishing to %s\n", currentBuild().Version, cfg.Live.Feed, bus.Redact(cfg.Live.Stream))
	if err := s.Run(ctx); err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	return nil
}

// feedFlags returns pregao feed's flags, bound to the fields of cfg
// (their defaults are cfg's): the live session's of a feed alone
// (session.Config.AddFlags), --log and --metrics-addr.
func feedFlags(cfg *FeedConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	cfg.Live.AddFlags(fs, session.RoleFeed)
	fs.Var(newEnum(&cfg.LogFormat, "text", "json"), "log", "`format` of the logs: text or json")
	fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cfg.MetricsAddr, "serve /metrics, /healthz and /readyz (200 once the session is open) on this address, e.g. :8080 (default none)")
	return fs
}

// feedHTTP serves pregao feed's /metrics, /healthz (200 while the
// process runs) and /readyz (200 once its session is open: the stream
// was reached and the session read back from it).
func feedHTTP(reg *prometheus.Registry, s *session.Session) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}", currentBuild().Version)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		st := s.State()
		if !st.Running {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"status":"starting"}`)
			return
		}
		fmt.Fprintf(w, "{\"status\":\"ready\",\"session\":%q,\"seq\":%d,\"complete\":%t}", st.Session, st.Seq, st.Complete)
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
}
