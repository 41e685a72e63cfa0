package session

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// Config configures the live session of a process. Serve and pregao feed
// build it from the same flags (AddFlags); DefaultConfig returns their
// defaults. The zero Config runs no feed and no stream.
type Config struct {
	// Feed is where the session's batches come from: "" (none: a replica
	// of the stream, or no live session), "replay:DIR" (a recorded
	// session's B3 trade files, on a virtual clock), "b3" (B3's trade
	// files, polled) or "push" (POST /admin/live/..., serve only).
	Feed string
	// FeedSpeed is the replay's speed: "max", or K times real time
	// (default "1"; "60": a minute a second). FeedFrom plays the replay as
	// fast as it is applied up to that São Paulo time of the day (HH:MM),
	// at FeedSpeed from there ("": FeedSpeed from the start).
	FeedSpeed, FeedFrom string
	// Dir is the folder of the session logs and the b3 feed's state,
	// required with a feed and with Stream "embedded" (whose store is
	// Dir/jetstream).
	Dir string
	// Day is the session's day, YYYY-MM-DD ("": the feed's: the
	// recording's, or today's in São Paulo).
	Day string
	// Keep is how many sessions' logs (and b3 states) Dir keeps (default
	// 10; at least 1).
	Keep int
	// B3URL is the address B3's trade files are under (default
	// negocios.DefaultBase); B3Tickers the tickers polled one file each
	// during the session, comma-separated ("": the whole day's file, the
	// next morning); B3Interval the time between the starts of two polls
	// (default live.DefaultB3Interval, 1m) and B3Pace the least time
	// between two requests (default live.DefaultB3Pace, 1s). They
	// configure the b3 feed.
	B3URL, B3Tickers   string
	B3Interval, B3Pace time.Duration

	// Stream is the live stream the batches go through (NATS JetStream):
	// "" (none: the feed applies here, its log in Dir), "embedded" (a
	// server in the process, its store in Dir/jetstream) or the
	// nats://HOST:PORT URLs of a cluster, comma-separated. Listen is the
	// embedded server's client address ("": none). Replicas is the
	// stream's copies (0: 1 embedded, 3 on a cluster), Retention how long
	// it keeps a batch (default bus.DefaultMaxAge, 7 days) and MaxBytes
	// how many bytes (0: no cap but Retention). Creds, TLSCA, TLSCert and
	// TLSKey are the files of a cluster's credentials and TLS
	// (bus.Config; "": none).
	Stream, Listen                string
	Replicas                      int
	Retention                     time.Duration
	MaxBytes                      int64
	Creds, TLSCA, TLSCert, TLSKey string

	// Retry is the wait after a feed's transient error (default 5s; not
	// a flag).
	Retry time.Duration
}

// defaultRetry is Config.Retry's default.
const defaultRetry = 5 * time.Second

// DefaultConfig returns the defaults of every setting.
func DefaultConfig() Config {
	return Config{FeedSpeed: "1", Keep: 10, Retention: bus.DefaultMaxAge, B3URL: negocios.DefaultBase, B3Interval: live.DefaultB3Interval,
		B3Pace: live.DefaultB3Pace, Retry: defaultRetry}
}

// Role says which command declares the flags: a server (every flag),
// pregao feed, or a command that only asks the stream (RoleImport).
type Role int

const (
	RoleServe  Role = iota
	RoleFeed        // pregao feed: a feed publishing to a cluster's stream
	RoleImport      // pregao import and update: a cluster's stream asked where a snapshot stands (--live and its credentials)
)

// AddFlags declares the live session's flags on fs, bound to c's fields
// (their defaults are c's values): every flag for RoleServe, those of a
// feed alone for RoleFeed (no push feed, no session logs kept, no
// embedded server's listener), --live and the files of a secured
// cluster for RoleImport.
func (c *Config) AddFlags(fs *flag.FlagSet, role Role) {
	if role == RoleImport {
		fs.StringVar(&c.Stream, "live", c.Stream, "the live stream's NATS cluster, nats://HOST:PORT (comma-separated): the snapshot's position in the stream is taken from the stream (after its last session's last batch, when complete) rather than from the --session-log copies")
		c.addSecurityFlags(fs, "with --live: ")
		return
	}
	serve := role == RoleServe
	pick := func(s, f string) string {
		if serve {
			return s
		}
		return f
	}
	fs.StringVar(&c.Feed, "feed", c.Feed, pick("live session `feed`: replay:DIR (a recorded session's B3 trade files), b3 (B3's trade files, polled) or push (POST /admin/live/...); default none",
		"the `feed`: replay:DIR (a recorded session's B3 trade files) or b3 (B3's trade files, polled); the push feed runs in serve"))
	fs.StringVar(&c.FeedSpeed, "feed-speed", c.FeedSpeed, "replay speed: K times real time (60: a minute a second) or max")
	fs.StringVar(&c.FeedFrom, "feed-from", c.FeedFrom, pick("replay: play as fast as applied up to this São Paulo time (HH:MM), at --feed-speed from there",
		"replay: play as fast as published up to this São Paulo time (HH:MM), at --feed-speed from there"))
	fs.StringVar(&c.Dir, "live-dir", c.Dir, pick("folder of the session logs (and the b3 feed's state); required with --feed", "folder of the b3 feed's state (required)"))
	fs.StringVar(&c.Day, "live-session", c.Day, pick("the live session's day, YYYY-MM-DD (default: the feed's: the recording's, or today's in São Paulo)",
		"the session's day, YYYY-MM-DD (default: the feed's)"))
	if serve {
		fs.IntVar(&c.Keep, "live-keep", c.Keep, "session logs kept in --live-dir (the 1-minute history pregao update takes)")
	}
	fs.StringVar(&c.Stream, "live", c.Stream, pick("the live stream the session's batches go through (NATS JetStream): embedded (a server in this process, its store in --live-dir) or nats://HOST:PORT,... of a cluster; default none (the feed applies here, its log in --live-dir)",
		"the live stream to publish to: nats://HOST:PORT of a NATS cluster (comma-separated), or a serve's embedded server (--live-listen)"))
	if serve {
		fs.StringVar(&c.Listen, "live-listen", c.Listen, "--live embedded: also accept NATS clients (pregao feed, other replicas) on this host:port; default none")
	}
	fs.IntVar(&c.Replicas, "live-replicas", c.Replicas, pick("copies of the live stream: 1 embedded; on a cluster 3 (0: that default; never 2)", "copies of the live stream when the feed creates it (0: 3)"))
	fs.DurationVar(&c.Retention, "live-retention", c.Retention, "how long the live stream keeps a batch")
	fs.Int64Var(&c.MaxBytes, "live-max-bytes", c.MaxBytes, "the live stream's size cap in bytes: beyond it the oldest batches are dropped, as beyond --live-retention (0: no cap)")
	c.addSecurityFlags(fs, "--live nats://: ")
	fs.StringVar(&c.B3URL, "b3-url", c.B3URL, pick("b3 feed: the address B3's trade files are under (a mirror, a moved portal)", "b3 feed: the address B3's trade files are under"))
	fs.StringVar(&c.B3Tickers, "b3-tickers", c.B3Tickers, pick("b3 feed: tickers polled one file each during the session, comma-separated (default: the whole day's file, the next morning)",
		"b3 feed: tickers polled one file each during the session, comma-separated"))
	fs.DurationVar(&c.B3Interval, "b3-interval", c.B3Interval, "b3 feed: time between the starts of two polls")
	fs.DurationVar(&c.B3Pace, "b3-pace", c.B3Pace, "b3 feed: least time between two requests to B3")
}

// addSecurityFlags declares the flags of a secured cluster's files, their
// usage starting with when.
func (c *Config) addSecurityFlags(fs *flag.FlagSet, when string) {
	fs.StringVar(&c.Creds, "live-creds", c.Creds, when+"the `file` of a NATS user's credentials (.creds: its JWT and nkey seed); default none")
	fs.StringVar(&c.TLSCA, "live-tls-ca", c.TLSCA, when+"PEM `file` of the CAs the NATS servers' certificates are checked against (default: the system's); makes the connection TLS")
	fs.StringVar(&c.TLSCert, "live-tls-cert", c.TLSCert, when+"PEM `file` of the client certificate, for NATS servers that verify clients (with --live-tls-key)")
	fs.StringVar(&c.TLSKey, "live-tls-key", c.TLSKey, when+"PEM `file` of the client certificate's key (with --live-tls-cert)")
}

// The feeds of Config.Feed.
const (
	FeedReplay = "replay"
	FeedB3     = "b3"
	FeedPush   = "push"
)

// settings is a Config checked.
type settings struct {
	kind    string      // FeedReplay, FeedB3, FeedPush; "": no feed
	replay  string      // the recording's folder (replay)
	speed   float64     // replay: K times real time; 0: max
	from    string      // replay: the São Paulo time (HH:MM) from which speed applies ("": the start)
	dir     string      // Config.Dir
	session engine.Date // Config.Day; NoDate: the feed's
	keep    int
	b3      live.B3Config
	bus     bus.Config // zero URL: no stream
	retry   time.Duration
}

// Check checks c as New does, without building or starting anything:
// the flags' values, and the files of a cluster's credentials and TLS
// (read). version is the build's. Errors name the flag.
func (c *Config) Check(version string) error {
	_, err := c.check(version)
	return err
}

// CheckImport checks the settings of a command that only asks a
// cluster's stream (RoleImport): no URL, or nats:// ones (an embedded
// stream is reached through its serve's --live-listen), and the files of
// a secured cluster, read.
func (c *Config) CheckImport() error {
	_, err := c.importStream("")
	return err
}

// importStream is the stream's configuration of a command that only
// asks it (CheckImport); version names the connection.
func (c *Config) importStream(version string) (bus.Config, error) {
	bc := bus.Config{URL: c.Stream, Creds: c.Creds, TLSCA: c.TLSCA, TLSCert: c.TLSCert, TLSKey: c.TLSKey, Name: "pregao import " + version}
	if c.Stream == "" {
		if c.Creds != "" || c.TLSCA != "" || c.TLSCert != "" || c.TLSKey != "" {
			return bc, errors.New("--live-creds and --live-tls-* need --live nats://")
		}
		return bc, nil
	}
	for _, x := range strings.Split(c.Stream, ",") {
		if !strings.HasPrefix(x, "nats://") && !strings.HasPrefix(x, "tls://") || len(x) <= len("nats://") {
			return bc, fmt.Errorf("--live %q: want nats://HOST:PORT of the live stream's NATS cluster (comma-separated; an embedded stream is reached through its serve's --live-listen)", bus.Redact(c.Stream))
		}
	}
	if err := bc.Check(); err != nil {
		return bc, fmt.Errorf("--live-creds, --live-tls-*: %s", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return bc, nil
}

// check checks c; version is the build's (the b3 feed's user agent, the
// stream connection's name). Errors name the flag.
func (c *Config) check(version string) (settings, error) {
	st := settings{session: engine.NoDate, keep: c.Keep, retry: c.Retry}
	if st.retry <= 0 {
		st.retry = defaultRetry
	}
	if err := c.checkFeed(&st, version); err != nil {
		return st, err
	}
	var err error
	st.bus, err = c.checkStream(version)
	return st, err
}

// checkFeed checks the feed's settings into st.
func (c *Config) checkFeed(st *settings, version string) error {
	switch f := c.Feed; {
	case f == "":
		return nil
	case strings.HasPrefix(f, FeedReplay+":") && len(f) > len(FeedReplay)+1:
		st.kind, st.replay = FeedReplay, f[len(FeedReplay)+1:]
	case f == FeedB3 || f == FeedPush:
		st.kind = f
	default:
		return fmt.Errorf("--feed %q: want replay:DIR, b3 or push", f)
	}
	if c.Dir == "" {
		return errors.New("--feed needs --live-dir, the folder of the session logs (and the b3 feed's state)")
	}
	st.dir = c.Dir
	if s := c.FeedSpeed; s != "max" {
		k, err := strconv.ParseFloat(s, 64)
		if err != nil || !(k > 0) || math.IsInf(k, 0) {
			return fmt.Errorf("--feed-speed %q: want max or a speed above 0 (60: a minute a second)", s)
		}
		st.speed = k
	}
	if c.FeedFrom != "" {
		if _, err := time.Parse("15:04", c.FeedFrom); err != nil || st.kind != FeedReplay {
			return fmt.Errorf("--feed-from %q: want HH:MM (São Paulo time), with --feed replay:DIR", c.FeedFrom)
		}
		st.from = c.FeedFrom
	}
	if c.Day != "" {
		d, err := engine.ParseDate(c.Day)
		if err != nil {
			return fmt.Errorf("--live-session %q: want YYYY-MM-DD", c.Day)
		}
		st.session = d
	}
	if st.keep < 1 {
		return fmt.Errorf("--live-keep %d: want 1 or more sessions", st.keep)
	}
	if st.kind != FeedB3 {
		return nil
	}
	if c.B3Interval <= 0 || c.B3Pace <= 0 {
		return fmt.Errorf("--b3-interval %s, --b3-pace %s: want durations above 0", c.B3Interval, c.B3Pace)
	}
	st.b3 = live.B3Config{Session: st.session, URLs: negocios.URLs{Base: c.B3URL}, Interval: c.B3Interval, Pace: c.B3Pace,
		StateDir: st.dir, UserAgent: "pregao/" + version}
	for _, t := range strings.Split(c.B3Tickers, ",") {
		if t = strings.ToUpper(strings.TrimSpace(t)); t != "" {
			if !engine.ValidTicker(t) {
				return fmt.Errorf("--b3-tickers: %q is not a ticker", t)
			}
			st.b3.Tickers = append(st.b3.Tickers, t)
		}
	}
	return nil
}

// checkStream checks the stream's settings; a zero URL is no stream.
// Credentials and TLS files are read and checked here, so that a bad one
// is refused at startup.
func (c *Config) checkStream(version string) (bus.Config, error) {
	bc := bus.Config{URL: c.Stream, Listen: c.Listen, Replicas: c.Replicas, MaxAge: c.Retention, MaxBytes: c.MaxBytes,
		Creds: c.Creds, TLSCA: c.TLSCA, TLSCert: c.TLSCert, TLSKey: c.TLSKey, Name: "pregao " + version}
	secured := c.Creds != "" || c.TLSCA != "" || c.TLSCert != "" || c.TLSKey != ""
	switch u := c.Stream; {
	case u == "":
		switch {
		case c.Listen != "":
			return bc, errors.New("--live-listen needs --live embedded")
		case secured:
			return bc, errors.New("--live-creds and --live-tls-* need --live nats://")
		case c.MaxBytes != 0:
			return bc, errors.New("--live-max-bytes needs --live")
		}
		return bc, nil
	case u == bus.Embedded:
		if err := c.checkEmbedded(&bc, secured); err != nil {
			return bc, err
		}
	default:
		for _, x := range strings.Split(u, ",") {
			if !strings.HasPrefix(x, "nats://") && !strings.HasPrefix(x, "tls://") || len(x) <= len("nats://") {
				return bc, fmt.Errorf("--live %q: want embedded, or nats://HOST:PORT of a NATS cluster (comma-separated)", bus.Redact(u))
			}
		}
		if c.Listen != "" {
			return bc, errors.New("--live-listen needs --live embedded")
		}
		if bc.Replicas == 0 {
			bc.Replicas = 3
		}
		if bc.Replicas < 1 || bc.Replicas > 5 {
			return bc, fmt.Errorf("--live-replicas %d: want 1 to 5 (3 on a 3-node cluster)", bc.Replicas)
		}
	}
	if c.Retention < 0 {
		return bc, fmt.Errorf("--live-retention %s: want a duration above 0", c.Retention)
	}
	if c.MaxBytes < 0 {
		return bc, fmt.Errorf("--live-max-bytes %d: want 0 (no cap) or a number of bytes", c.MaxBytes)
	}
	if err := bc.Check(); err != nil {
		return bc, fmt.Errorf("--live-creds, --live-tls-*: %s", strings.TrimPrefix(err.Error(), "bus: "))
	}
	return bc, nil
}

// checkEmbedded checks the settings of --live embedded into bc.
func (c *Config) checkEmbedded(bc *bus.Config, secured bool) error {
	if c.Dir == "" {
		return errors.New("--live embedded needs --live-dir, the folder of the stream's store")
	}
	bc.Dir = c.Dir + "/jetstream"
	if bc.Replicas == 0 {
		bc.Replicas = 1
	}
	if bc.Replicas != 1 {
		return fmt.Errorf("--live-replicas %d: the embedded server holds 1 copy", bc.Replicas)
	}
	if secured {
		return errors.New("--live-creds and --live-tls-* are for a NATS cluster (--live nats://), not --live embedded")
	}
	if l := c.Listen; l != "" {
		if _, _, err := net.SplitHostPort(l); err != nil {
			return fmt.Errorf("--live-listen %q: want host:port", l)
		}
	}
	return nil
}
