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
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live/bus"
)

// runFeedCmd runs a feed alone, publishing its batches to the live
// stream of a NATS cluster (issue 28): pregao feed --feed replay:DIR|b3
// --live nats://HOST:PORT,... --live-dir DIR. The API replicas (serve
// --live nats://...) apply them. A restarted feed reads its session
// back from the stream and goes on after its last batch there.
func runFeedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := DefaultServeConfig()
	var metricsAddr string
	fs := feedFlags(&cfg, &metricsAddr)
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
	case cfg.Feed == "" || cfg.Feed == feedPush:
		return errors.New("feed: --feed replay:DIR or b3 is required (the push feed runs in serve --feed push)")
	case cfg.Live == "" || cfg.Live == bus.Embedded:
		return errors.New("feed: --live nats://HOST:PORT is required (the stream the replicas apply)")
	}
	lc, err := parseLiveConfig(&cfg)
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "serve:", "feed:", 1))
	}
	bc, err := parseBusConfig(&cfg)
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "serve:", "feed:", 1))
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if cfg.LogFormat == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	log := slog.New(h)
	bc.Log = log.With("live", "stream")
	reg := prometheus.NewRegistry()
	registerBuildInfo(reg, currentBuild())
	var r *liveRunner
	met := registerLiveMetrics(reg, func() *liveState {
		if r == nil {
			return nil
		}
		return r.state.Load()
	}, func() time.Duration {
		if r == nil {
			return 0
		}
		return r.lag(r.state.Load())
	})
	r, err = newLiveRunner(lc, &engine.Store{}, log, met)
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "serve:", "feed:", 1))
	}
	if metricsAddr != "" {
		ln, err := net.Listen("tcp", metricsAddr)
		if err != nil {
			return fmt.Errorf("feed: --metrics-addr: %w", err)
		}
		srv := feedHTTP(reg, r)
		go srv.Serve(ln)
		defer srv.Close()
		log.Info("metrics", "addr", ln.Addr().String())
	}
	b, err := bus.Open(bc)
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	defer b.Close()
	r.bus, r.ctx = b, ctx
	fmt.Fprintf(stdout, "pregao %s: feed %s publishing to %s\n", currentBuild().Version, cfg.Feed, bus.Redact(cfg.Live))
	if err := r.start(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("feed: %w", err)
	}
	r.loop(ctx)
	return nil
}

// feedFlags returns pregao feed's flags, bound to the fields of cfg
// (those of serve's flags the feed takes; their defaults are cfg's) and
// to metricsAddr.
func feedFlags(cfg *ServeConfig, metricsAddr *string) *flag.FlagSet {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	fs.StringVar(&cfg.Feed, "feed", cfg.Feed, "the `feed`: replay:DIR (a recorded session's B3 trade files) or b3 (B3's trade files, polled); the push feed runs in serve")
	fs.StringVar(&cfg.Live, "live", cfg.Live, "the live stream to publish to: nats://HOST:PORT of a NATS cluster (comma-separated), or a serve's embedded server (--live-listen)")
	fs.StringVar(&cfg.LiveDir, "live-dir", cfg.LiveDir, "folder of the b3 feed's state (required)")
	fs.IntVar(&cfg.LiveReplicas, "live-replicas", cfg.LiveReplicas, "copies of the live stream when the feed creates it (0: 3)")
	fs.DurationVar(&cfg.LiveRetention, "live-retention", cfg.LiveRetention, "how long the live stream keeps a batch")
	liveStreamFlags(fs, cfg)
	fs.StringVar(&cfg.FeedSpeed, "feed-speed", cfg.FeedSpeed, "replay speed: K times real time (60: a minute a second) or max")
	fs.StringVar(&cfg.FeedFrom, "feed-from", cfg.FeedFrom, "replay: play as fast as published up to this São Paulo time (HH:MM), at --feed-speed from there")
	fs.StringVar(&cfg.LiveSession, "live-session", cfg.LiveSession, "the session's day, YYYY-MM-DD (default: the feed's)")
	fs.StringVar(&cfg.B3URL, "b3-url", cfg.B3URL, "b3 feed: the address B3's trade files are under")
	fs.StringVar(&cfg.B3Tickers, "b3-tickers", cfg.B3Tickers, "b3 feed: tickers polled one file each during the session, comma-separated")
	fs.DurationVar(&cfg.B3Interval, "b3-interval", cfg.B3Interval, "b3 feed: time between the starts of two polls")
	fs.DurationVar(&cfg.B3Pace, "b3-pace", cfg.B3Pace, "b3 feed: least time between two requests to B3")
	fs.Var(newEnum(&cfg.LogFormat, "text", "json"), "log", "`format` of the logs: text or json")
	fs.StringVar(metricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz (200 once the session is open) on this address, e.g. :8080 (default none)")
	return fs
}

// feedHTTP serves pregao feed's /metrics, /healthz (200 while the
// process runs) and /readyz (200 once its session is open: the stream
// was reached and the session read back from it).
func feedHTTP(reg *prometheus.Registry, r *liveRunner) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q}", currentBuild().Version)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		st := r.state.Load()
		if !st.running {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"status":"starting"}`)
			return
		}
		fmt.Fprintf(w, "{\"status\":\"ready\",\"session\":%q,\"seq\":%d,\"complete\":%t}", st.session, st.seq, st.complete)
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 15 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second}
}
