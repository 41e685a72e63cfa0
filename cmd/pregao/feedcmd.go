package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	met := registerLiveMetrics(prometheus.NewRegistry(), func() *liveState { return nil }, func() time.Duration { return 0 })
	r, err := newLiveRunner(lc, &engine.Store{}, log, met)
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "serve:", "feed:", 1))
	}
	b, err := bus.Open(bc)
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	defer b.Close()
	r.bus, r.ctx = b, ctx
	fmt.Fprintf(stdout, "pregao %s: feed %s publishing to %s\n", currentBuild().Version, cfg.Feed, cfg.Live)
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
// (those of serve's flags the feed takes); their defaults are cfg's.
func feedFlags(cfg *ServeConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	fs.StringVar(&cfg.Feed, "feed", cfg.Feed, "the `feed`: replay:DIR (a recorded session's B3 trade files) or b3 (B3's trade files, polled); the push feed runs in serve")
	fs.StringVar(&cfg.Live, "live", cfg.Live, "the live stream to publish to: nats://HOST:PORT of a NATS cluster (comma-separated), or a serve's embedded server (--live-listen)")
	fs.StringVar(&cfg.LiveDir, "live-dir", cfg.LiveDir, "folder of the b3 feed's state (required)")
	fs.IntVar(&cfg.LiveReplicas, "live-replicas", cfg.LiveReplicas, "copies of the live stream when the feed creates it (0: 3)")
	fs.DurationVar(&cfg.LiveRetention, "live-retention", cfg.LiveRetention, "how long the live stream keeps a batch")
	fs.StringVar(&cfg.FeedSpeed, "feed-speed", cfg.FeedSpeed, "replay speed: K times real time (60: a minute a second) or max")
	fs.StringVar(&cfg.FeedFrom, "feed-from", cfg.FeedFrom, "replay: play as fast as published up to this São Paulo time (HH:MM), at --feed-speed from there")
	fs.StringVar(&cfg.LiveSession, "live-session", cfg.LiveSession, "the session's day, YYYY-MM-DD (default: the feed's)")
	fs.StringVar(&cfg.B3URL, "b3-url", cfg.B3URL, "b3 feed: the address B3's trade files are under")
	fs.StringVar(&cfg.B3Tickers, "b3-tickers", cfg.B3Tickers, "b3 feed: tickers polled one file each during the session, comma-separated")
	fs.DurationVar(&cfg.B3Interval, "b3-interval", cfg.B3Interval, "b3 feed: time between the starts of two polls")
	fs.DurationVar(&cfg.B3Pace, "b3-pace", cfg.B3Pace, "b3 feed: least time between two requests to B3")
	fs.Var(newEnum(&cfg.LogFormat, "text", "json"), "log", "`format` of the logs: text or json")
	return fs
}
