package session

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
)

// TestConfigCheck: the live session's and the live stream's settings are
// checked by New, before anything runs, and the error names the flag.
func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Feed = "kafka" }, "want replay:DIR, b3 or push"},
		{func(c *Config) { c.Feed = "replay:" }, "want replay:DIR, b3 or push"},
		{func(c *Config) { c.Feed = "push" }, "needs --live-dir"},
		{func(c *Config) { c.Feed, c.Dir, c.FeedSpeed = "push", dir, "fast" }, "--feed-speed"},
		{func(c *Config) { c.Feed, c.Dir, c.FeedSpeed = "push", dir, "-1" }, "--feed-speed"},
		{func(c *Config) { c.Feed, c.Dir, c.Day = "push", dir, "19/11/2026" }, "--live-session"},
		{func(c *Config) { c.Feed, c.Dir, c.Keep = "push", dir, 0 }, "--live-keep"},
		{func(c *Config) { c.Feed, c.Dir, c.B3Tickers = "b3", dir, "PETR4,no way" }, "not a ticker"},
		{func(c *Config) { c.Feed, c.Dir, c.B3Interval = "b3", dir, 0 }, "--b3-interval"},
		{func(c *Config) { c.Feed, c.Dir = "replay:"+t.TempDir(), dir }, "holds no trade"},
		{func(c *Config) { c.Feed, c.Dir, c.FeedFrom = "replay:"+t.TempDir(), dir, "25:99" }, "--feed-from"},
		{func(c *Config) { c.Feed, c.Dir, c.FeedFrom = "push", dir, "14:00" }, "--feed-from"},
		{func(c *Config) { c.Stream = "embedded" }, "--live embedded needs --live-dir"},
		{func(c *Config) { c.Stream = "kafka://x" }, "want embedded, or nats://"},
		{func(c *Config) { c.Stream = "nats://a:1,http://b" }, "want embedded, or nats://"},
		{func(c *Config) { c.Listen = "127.0.0.1:4222" }, "--live-listen needs --live embedded"},
		{func(c *Config) { c.Stream, c.Listen = "nats://a:1", "127.0.0.1:4222" }, "--live-listen needs --live embedded"},
		{func(c *Config) { c.Stream, c.Dir, c.Listen = "embedded", dir, "4222" }, "want host:port"},
		{func(c *Config) { c.Stream, c.Dir, c.Replicas = "embedded", dir, 3 }, "holds 1 copy"},
		{func(c *Config) { c.Stream, c.Replicas = "nats://a:1", 7 }, "want 1 to 5"},
		{func(c *Config) { c.Stream, c.Retention = "nats://a:1", -time.Hour }, "--live-retention"},
		{func(c *Config) { c.MaxBytes = 1 << 20 }, "--live-max-bytes needs --live"},
		{func(c *Config) { c.Stream, c.MaxBytes = "nats://a:1", -1 }, "--live-max-bytes"},
		{func(c *Config) { c.Creds = "/x.creds" }, "need --live nats://"},
		{func(c *Config) { c.Stream, c.Dir, c.TLSCA = "embedded", dir, "/ca.pem" }, "not --live embedded"},
	} {
		cfg := DefaultConfig()
		tc.set(&cfg)
		if _, err := New(cfg, &engine.Store{}, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", cfg, err, tc.want)
		}
	}
	// A cluster's copies default to 3, the embedded server's to 1.
	for url, want := range map[string]int{"nats://a:1": 3, "embedded": 1} {
		cfg := DefaultConfig()
		cfg.Stream, cfg.Dir = url, dir
		st, err := cfg.check("v")
		if err != nil || st.bus.Replicas != want || st.bus.Name != "pregao v" {
			t.Errorf("%s: copies %d (%q), %v; want %d", url, st.bus.Replicas, st.bus.Name, err, want)
		}
	}
	// A feed alone publishes a replay or B3's files to a cluster.
	for _, c := range []Config{{Feed: "push", Dir: dir, Stream: "nats://a:1"}, {Feed: "b3", Dir: dir, Stream: "embedded"}, {Feed: "b3", Dir: dir}} {
		cfg := DefaultConfig()
		cfg.Feed, cfg.Dir, cfg.Stream = c.Feed, c.Dir, c.Stream
		if _, err := New(cfg, nil, Options{}); err == nil {
			t.Errorf("a feed alone with %+v: no error", c)
		}
	}
}

// TestAddFlags: serve declares every live flag, pregao feed those of a
// feed alone, each bound to its Config field, with Config's defaults.
func TestAddFlags(t *testing.T) {
	names := func(role Role) []string {
		c := DefaultConfig()
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		c.AddFlags(fs, role)
		var out []string
		fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
		return out
	}
	serve, feed := names(RoleServe), names(RoleFeed)
	for _, n := range []string{"live-keep", "live-listen"} {
		if !slices.Contains(serve, n) || slices.Contains(feed, n) {
			t.Errorf("--%s: serve %t, feed %t; want serve only", n, slices.Contains(serve, n), slices.Contains(feed, n))
		}
	}
	if len(serve) != len(feed)+2 {
		t.Errorf("serve's flags %v, feed's %v", serve, feed)
	}
	c := DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	c.AddFlags(fs, RoleServe)
	if c.FeedSpeed != "1" || c.Keep != 10 || c.Retention != 7*24*time.Hour || c.B3Interval != time.Minute || c.B3Pace != time.Second || c.B3URL == "" {
		t.Errorf("defaults %+v", c)
	}
	err := fs.Parse([]string{"--feed", "replay:/x", "--feed-speed", "max", "--feed-from", "14:00", "--live-dir", "/d", "--live-session", "2026-11-19",
		"--live-keep", "3", "--live", "nats://a:4222,nats://b:4222", "--live-replicas", "3", "--live-retention", "48h", "--live-max-bytes", "1024",
		"--live-creds", "c", "--live-tls-ca", "ca", "--live-tls-cert", "cert", "--live-tls-key", "key", "--live-listen", "h:1",
		"--b3-url", "http://mirror", "--b3-tickers", "PETR4", "--b3-interval", "2m", "--b3-pace", "3s"})
	want := Config{Feed: "replay:/x", FeedSpeed: "max", FeedFrom: "14:00", Dir: "/d", Day: "2026-11-19", Keep: 3, B3URL: "http://mirror", B3Tickers: "PETR4",
		B3Interval: 2 * time.Minute, B3Pace: 3 * time.Second, Stream: "nats://a:4222,nats://b:4222", Listen: "h:1", Replicas: 3, Retention: 48 * time.Hour,
		MaxBytes: 1024, Creds: "c", TLSCA: "ca", TLSCert: "cert", TLSKey: "key", Retry: c.Retry}
	if err != nil || c != want {
		t.Errorf("parsed %+v, %v\nwant %+v", c, err, want)
	}
}
