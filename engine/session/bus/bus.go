package bus

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// Embedded is the URL of the in-process JetStream server.
const Embedded = "embedded"

// DefaultMaxAge is how long the stream keeps a batch by default: 7 days.
const DefaultMaxAge = 7 * 24 * time.Hour

// Config configures Open.
type Config struct {
	// URL is Embedded or the nats:// URLs of a cluster, comma-separated.
	URL string
	// Dir is the embedded server's store folder (required with Embedded).
	Dir string
	// Listen is the embedded server's client address (host:port); "":
	// no listener (only this process reaches it).
	Listen string
	// Replicas is the number of copies of the stream (1 embedded; 3 on
	// a 3-node cluster).
	Replicas int
	// MaxAge is how long the stream keeps a batch (0: DefaultMaxAge).
	MaxAge time.Duration
	// Duplicates is the stream's deduplication window (0: 10 minutes).
	Duplicates time.Duration
	// Name names the connection on the servers.
	Name string
	// MaxBytes caps the stream's size in bytes: beyond it the oldest
	// batches are dropped, as beyond MaxAge (0: no cap but MaxAge).
	MaxBytes int64

	// Creds is the file of a NATS user's credentials (its JWT and nkey
	// seed, a .creds file), read at each connection; "": none. A user
	// and password (or a token) go in URL instead.
	Creds string
	// TLSCA is a PEM file of the certificate authorities the servers'
	// certificates are checked against ("": the system's); TLSCert and
	// TLSKey are the PEM files of a client certificate and its key, for
	// servers that verify their clients (both or neither). Any of them
	// makes the connection TLS. None applies to Embedded.
	TLSCA, TLSCert, TLSKey string

	// Log receives the connection's failures (each new one while it
	// retries) and the stream's limits that differ from Config's; nil:
	// none.
	Log *slog.Logger
}

// Check reports a Config that cannot connect whatever the servers do:
// security files with Embedded, a certificate without its key (or the
// other way round), a file that cannot be read or is not what it should
// be. Open checks it too; call it to refuse a configuration at startup.
func (c Config) Check() error {
	secured := c.Creds != "" || c.TLSCA != "" || c.TLSCert != "" || c.TLSKey != ""
	if c.URL == Embedded && secured {
		return errors.New("bus: credentials and TLS files are for a NATS cluster, not the embedded server")
	}
	if c.MaxBytes < 0 {
		return fmt.Errorf("bus: stream size cap %d: want 0 (none) or a number of bytes", c.MaxBytes)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("bus: a client certificate needs both its certificate file and its key file")
	}
	if c.Creds != "" {
		b, err := os.ReadFile(c.Creds)
		if err != nil {
			return fmt.Errorf("bus: credentials file: %w", err)
		}
		jwt, _ := nkeys.ParseDecoratedJWT(b)
		kp, err := nkeys.ParseDecoratedUserNKey(b)
		if err != nil || strings.Count(jwt, ".") != 2 {
			return fmt.Errorf("bus: credentials file %s: not a NATS user's credentials (a JWT and a user nkey seed)", c.Creds)
		}
		kp.Wipe()
	}
	if c.TLSCA != "" {
		b, err := os.ReadFile(c.TLSCA)
		if err != nil {
			return fmt.Errorf("bus: TLS CA file: %w", err)
		}
		if !x509.NewCertPool().AppendCertsFromPEM(b) {
			return fmt.Errorf("bus: TLS CA file %s: no PEM certificate in it", c.TLSCA)
		}
	}
	if c.TLSCert != "" {
		if _, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey); err != nil {
			return fmt.Errorf("bus: TLS client certificate %s and key %s: %w", c.TLSCert, c.TLSKey, err)
		}
	}
	return nil
}

// Redact returns urls (comma-separated, as Config.URL) with the
// password of each replaced by "xxxxx", and a token (a user without a
// password) by "xxxxx": what may be logged or shown of them.
func Redact(urls string) string {
	parts := strings.Split(urls, ",")
	for i, u := range parts {
		scheme, rest, ok := strings.Cut(u, "://")
		if !ok {
			continue
		}
		host := rest
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			host = rest[:j]
		}
		at := strings.LastIndexByte(host, '@')
		if at < 0 {
			continue
		}
		user := "xxxxx"
		if name, _, ok := strings.Cut(host[:at], ":"); ok {
			user = name + ":xxxxx"
		}
		parts[i] = scheme + "://" + user + rest[at:]
	}
	return strings.Join(parts, ",")
}

// permanent reports a connection failure that retrying does not cure:
// the servers refuse the credentials, or TLS fails.
func permanent(err error) bool {
	// ErrTLS: among others, the server closed the connection right
	// after the handshake (TLS 1.3 checks the client's certificate
	// then), which is reported either as the server's alert or so.
	for _, e := range []error{nats.ErrAuthorization, nats.ErrAuthExpired, nats.ErrAuthRevoked, nats.ErrAccountAuthExpired,
		nats.ErrSecureConnRequired, nats.ErrSecureConnWanted, nats.ErrClientCertOrRootCAsRequired, nats.ErrTLS} {
		if errors.Is(err, e) {
			return true
		}
	}
	var (
		verify  *tls.CertificateVerificationError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		header  tls.RecordHeaderError
	)
	return errors.As(err, &verify) || errors.As(err, &alert) || errors.As(err, &unknown) || errors.As(err, &host) ||
		errors.As(err, &invalid) || errors.As(err, &header) || strings.Contains(err.Error(), "tls: ")
}

// Bus is a connection to the stream.
type Bus struct {
	cfg    Config
	srv    *server.Server // the embedded server, nil for a cluster
	nc     *nats.Conn
	js     jetstream.JetStream
	stream atomic.Pointer[jetstream.Stream]
	// down is when the connection was lost (unix ns; 0: connected, or
	// never connected yet: see Connected).
	down atomic.Int64
}

// Open starts the embedded server (cfg.URL Embedded) or connects to the
// cluster. The connection reconnects forever: Open succeeds while the
// cluster is down, and the stream is made (EnsureStream) once it is up.
func Open(cfg Config) (*Bus, error) {
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.Duplicates <= 0 {
		cfg.Duplicates = 10 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	b := &Bus{cfg: cfg}
	var lastErr atomic.Pointer[string]
	opts := []nats.Option{nats.Name(cfg.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond), nats.PingInterval(2 * time.Second), nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(func(*nats.Conn, error) { b.down.CompareAndSwap(0, time.Now().UnixNano()) }),
		nats.ReconnectHandler(func(*nats.Conn) { b.down.Store(0); lastErr.Store(nil) }),
		// Credentials refused now may be accepted later (a file
		// rotated, an account pushed): keep trying, and log each new
		// failure once.
		nats.IgnoreAuthErrorAbort(),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			if msg := err.Error(); err != nil && (lastErr.Load() == nil || *lastErr.Load() != msg) {
				lastErr.Store(&msg)
				cfg.Log.Warn("live stream: connection failed; retrying", "url", Redact(cfg.URL), "err", msg)
			}
		})}
	if cfg.Creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.Creds))
	}
	if cfg.TLSCA != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCA))
	}
	if cfg.TLSCert != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCert, cfg.TLSKey))
	}
	url := cfg.URL
	if cfg.URL == Embedded {
		srv, err := StartEmbedded(cfg.Dir, cfg.Listen)
		if err != nil {
			return nil, err
		}
		b.srv = srv
		url = srv.ClientURL()
		opts = append(opts, nats.InProcessServer(srv))
	}
	// A first try that gives up at once: credentials or TLS the servers
	// refuse are an error now; servers that do not answer yet are tried
	// again, forever.
	nc, err := nats.Connect(url, opts...)
	if err != nil && !permanent(err) {
		nc, err = nats.Connect(url, append(opts, nats.RetryOnFailedConnect(true))...)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("bus: connect %s: %w", Redact(cfg.URL), err)
	}
	b.nc = nc
	if b.js, err = jetstream.New(nc); err != nil {
		b.Close()
		return nil, fmt.Errorf("bus: %w", err)
	}
	return b, nil
}

// StartEmbedded starts a JetStream server in the process, its store in
// dir, listening on listen (host:port) or, when listen is "", on
// nothing.
func StartEmbedded(dir, listen string) (*server.Server, error) {
	if dir == "" {
		return nil, errors.New("bus: the embedded server needs a store folder")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	o := &server.Options{ServerName: "pregao-embedded", JetStream: true, StoreDir: abs, DontListen: listen == "",
		NoSigs: true, NoLog: true, DisableJetStreamBanner: true}
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		p, perr := strconv.Atoi(port)
		if err != nil || perr != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("bus: listen address %q: want host:port", listen)
		}
		o.Host, o.Port = host, p
	}
	srv, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("bus: embedded server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("bus: the embedded server did not start within 30s")
	}
	return srv, nil
}

// Server returns the embedded server (nil for a cluster).
func (b *Bus) Server() *server.Server { return b.srv }

// Connected reports whether the connection to the servers is up.
func (b *Bus) Connected() bool { return b.nc != nil && b.nc.IsConnected() }

// DownSince returns when the connection was lost, zero while it is up
// or before it was ever made.
func (b *Bus) DownSince() time.Time {
	if t := b.down.Load(); t != 0 && !b.Connected() {
		return time.Unix(0, t)
	}
	return time.Time{}
}

// Close closes the connection and stops the embedded server.
func (b *Bus) Close() {
	if b.nc != nil {
		b.nc.Close()
	}
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	}
}

// streamConfig is the stream Config asks for.
func (b *Bus) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: StreamName, Description: "pregao: the live sessions' batches",
		Subjects: []string{SubjectPrefix + ">"}, Storage: jetstream.FileStorage, Replicas: b.cfg.Replicas,
		MaxAge: b.cfg.MaxAge, MaxBytes: max(b.cfg.MaxBytes, 0), Duplicates: b.cfg.Duplicates, Discard: jetstream.DiscardOld,
		MaxMsgSize: MaxMessage + 4096,
	}
}

// LimitsDiffer returns the limits of stream config have that are not
// want's, each as "name: have (stream) vs want"; none when they agree.
// A cap of 0 or below is no cap.
func LimitsDiffer(have, want jetstream.StreamConfig) []string {
	var d []string
	capOf := func(v int64) int64 { return max(v, 0) }
	add := func(name string, h, w any) { d = append(d, fmt.Sprintf("%s: %v (stream) vs %v", name, h, w)) }
	if have.Replicas != want.Replicas {
		add("replicas", have.Replicas, want.Replicas)
	}
	if have.MaxAge != want.MaxAge {
		add("max_age", have.MaxAge, want.MaxAge)
	}
	if capOf(have.MaxBytes) != capOf(want.MaxBytes) {
		add("max_bytes", capOf(have.MaxBytes), capOf(want.MaxBytes))
	}
	if have.Duplicates != want.Duplicates {
		add("duplicates", have.Duplicates, want.Duplicates)
	}
	if have.Discard != want.Discard {
		add("discard", have.Discard, want.Discard)
	}
	if capOf(int64(have.MaxMsgSize)) != capOf(int64(want.MaxMsgSize)) {
		add("max_msg_size", have.MaxMsgSize, want.MaxMsgSize)
	}
	return d
}

// EnsureStream creates the stream with Config's limits and returns it:
// the feed side's and the embedded server's. An existing stream whose
// limits differ is updated on the embedded server (this process owns
// it), and logged; on a cluster it is left as it is, and what differs
// is logged (the cluster's operator changes it). It fails while no
// server answers.
func (b *Bus) EnsureStream(ctx context.Context) (jetstream.Stream, error) {
	if s := b.stream.Load(); s != nil {
		return *s, nil
	}
	want := b.streamConfig()
	s, err := b.js.Stream(ctx, StreamName)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = b.js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			s, err = b.js.Stream(ctx, StreamName) // made meanwhile by another
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bus: stream %s: %w", StreamName, err)
	}
	if d := LimitsDiffer(s.CachedInfo().Config, want); len(d) > 0 {
		if b.srv == nil {
			b.cfg.Log.Warn("live stream: its limits differ from this process's flags; left as they are on the cluster (change them there, e.g. nats stream edit "+StreamName+")",
				"differs", strings.Join(d, "; "))
		} else {
			if s, err = b.js.UpdateStream(ctx, want); err != nil {
				return nil, fmt.Errorf("bus: stream %s: update its limits: %w", StreamName, err)
			}
			b.cfg.Log.Info("live stream: its limits updated to this process's flags", "changed", strings.Join(d, "; "))
		}
	}
	b.stream.Store(&s)
	return s, nil
}

// ErrNoStream is returned while the stream does not exist (no feed has
// published yet).
var ErrNoStream = errors.New("bus: no live stream yet")

// lookup returns the stream as it is: a replica never changes its
// limits (the feed side sets them).
func (b *Bus) lookup(ctx context.Context) (jetstream.Stream, error) {
	if s := b.stream.Load(); s != nil {
		return *s, nil
	}
	s, err := b.js.Stream(ctx, StreamName)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, ErrNoStream
	}
	if err != nil {
		return nil, fmt.Errorf("bus: stream %s: %w", StreamName, err)
	}
	if d := LimitsDiffer(s.CachedInfo().Config, b.streamConfig()); len(d) > 0 {
		b.cfg.Log.Info("live stream: its limits (the feed side's) differ from this replica's flags", "differs", strings.Join(d, "; "))
	}
	b.stream.Store(&s)
	return s, nil
}

// LastOfSession returns the stream sequence of session sd's last batch
// and the batch (decoded; nil when it does not decode); 0 when the stream
// has none, or no stream exists.
func (b *Bus) LastOfSession(ctx context.Context, sd engine.Date) (uint64, *Batch, error) {
	s, err := b.lookup(ctx)
	if errors.Is(err, ErrNoStream) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	m, err := s.GetLastMsgForSubject(ctx, Subject(sd))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("bus: session %s: %w", sd, err)
	}
	bt, _ := DecodeMsg(m.Subject, m.Header, m.Data)
	if bt != nil {
		bt.Record.Stream = m.Sequence
	}
	return m.Sequence, bt, nil
}

// Publish appends record rec of session sd to the stream and returns its
// stream sequence once the stream has it (on a cluster: a majority of
// its replicas). dup reports a batch the stream already held (the same
// deduplication id within its window): nothing was appended.
func (b *Bus) Publish(ctx context.Context, sd engine.Date, rec *live.Record, virtual bool) (seq uint64, dup bool, err error) {
	if _, err := b.EnsureStream(ctx); err != nil {
		return 0, false, err
	}
	m, err := Encode(sd, rec, virtual)
	if err != nil {
		return 0, false, err
	}
	ack, err := b.js.PublishMsg(ctx, m, jetstream.WithExpectStream(StreamName))
	if err != nil {
		return 0, false, fmt.Errorf("bus: publish batch %d of %s: %w", rec.Seq, sd, err)
	}
	return ack.Sequence, ack.Duplicate, nil
}

// Head returns the stream's last sequence and when it was stored (0 and
// the zero time for an empty stream, or none).
func (b *Bus) Head(ctx context.Context) (uint64, time.Time, error) {
	s, err := b.lookup(ctx)
	if errors.Is(err, ErrNoStream) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("bus: stream info: %w", err)
	}
	return info.State.LastSeq, info.State.LastTime, nil
}

// ErrGone is returned by Message for a stream sequence the stream does
// not hold: removed by its limits or deleted, or not stored yet.
var ErrGone = errors.New("bus: no such message in the stream")

// Message returns the message at stream sequence seq, decoded (its
// Record.Stream is seq), or a decoding error wrapping ErrMessage;
// ErrGone when the stream does not hold it (or there is no stream).
func (b *Bus) Message(ctx context.Context, seq uint64) (*Batch, error) {
	if seq == 0 {
		return nil, ErrGone
	}
	s, err := b.lookup(ctx)
	if errors.Is(err, ErrNoStream) {
		return nil, ErrGone
	}
	if err != nil {
		return nil, err
	}
	m, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrGone
	}
	if err != nil {
		return nil, fmt.Errorf("bus: message %d: %w", seq, err)
	}
	bt, err := DecodeMsg(m.Subject, m.Header, m.Data)
	if err != nil {
		return nil, err
	}
	bt.Record.Stream = m.Sequence
	return bt, nil
}

// Bounds returns the stream's first and last sequences (0 and 0 when
// there is no stream; an empty stream's first is its last plus 1).
func (b *Bus) Bounds(ctx context.Context) (first, last uint64, err error) {
	s, err := b.lookup(ctx)
	if errors.Is(err, ErrNoStream) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("bus: stream info: %w", err)
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// ReadSession calls fn with each batch of session sd in the stream, in
// order, up to its last one at the time of the call (each record's
// Stream its stream sequence), and returns how many messages did not
// decode (skipped). The feed side calls it when it
// starts a session, to number its next batch and rebuild what it
// aggregates.
func (b *Bus) ReadSession(ctx context.Context, sd engine.Date, fn func(*live.Record) error) (bad int, err error) {
	s, err := b.EnsureStream(ctx)
	if err != nil {
		return 0, err
	}
	last, err := s.GetLastMsgForSubject(ctx, Subject(sd))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("bus: session %s: %w", sd, err)
	}
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{Subject(sd)}})
	if err != nil {
		return 0, fmt.Errorf("bus: session %s: %w", sd, err)
	}
	it, err := c.Messages()
	if err != nil {
		return 0, fmt.Errorf("bus: session %s: %w", sd, err)
	}
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return bad, fmt.Errorf("bus: session %s: %w", sd, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return bad, fmt.Errorf("bus: session %s: %w", sd, err)
		}
		if bt, err := DecodeMsg(m.Subject(), m.Headers(), m.Data()); err != nil {
			bad++
		} else {
			bt.Record.Stream = md.Sequence.Stream
			if err := fn(bt.Record); err != nil {
				return bad, err
			}
		}
		if md.Sequence.Stream >= last.Sequence {
			return bad, nil
		}
	}
}

// Delivery is one message Consume hands over.
type Delivery struct {
	// Batch is the message decoded; nil when it does not decode (Err).
	Batch *Batch
	Err   error
	// StreamSeq is the message's stream sequence, Pending the messages
	// after it in the stream when it was delivered, Stored when the
	// stream stored it.
	StreamSeq, Pending uint64
	Stored             time.Time
	// Delivered counts the deliveries of the message (above 1: a
	// redelivery).
	Delivered uint64
	// Gap counts the stream sequences missing before this message (gone
	// from the stream before they were delivered: its limits, a
	// deletion); 0 for the first message of a consumer from the stream's
	// start.
	Gap uint64
}

// ConsumeErrors receives the consumer's transient errors (a lost
// heartbeat, a consumer created again); it may be nil.
type ConsumeErrors func(error)

// Consume calls fn with each message of the stream from stream sequence
// from (1 or 0: the first) on, in order, one at a time, until ctx ends.
// It survives the loss of the servers: its consumer is made again after
// the last message fn was given, so fn sees every message once, in
// order, without a gap the stream does not have.
func (b *Bus) Consume(ctx context.Context, from uint64, fn func(*Delivery), onErr ConsumeErrors) error {
	next := max(from, 1)
	strict := next > 1
	report := func(err error) {
		if onErr != nil && err != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
	for ctx.Err() == nil {
		err := b.consumeFrom(ctx, &next, &strict, fn)
		report(err)
		if ctx.Err() != nil {
			break
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return ctx.Err()
}

// consumeFrom runs one ordered consumer from *next until it fails or ctx
// ends, moving *next past each message delivered.
func (b *Bus) consumeFrom(ctx context.Context, next *uint64, strict *bool, fn func(*Delivery)) error {
	s, err := b.lookup(ctx)
	if err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: *next, InactiveThreshold: time.Minute}
	// A consumer is made on the stream's leader: after the loss of a
	// node it may take a new leader's election, so a request that goes
	// unanswered is soon asked again.
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	c, err := s.OrderedConsumer(cctx, cfg)
	cancel()
	if err != nil {
		return fmt.Errorf("bus: consumer: %w", err)
	}
	it, err := c.Messages(jetstream.WithMessagesErrOnMissingHeartbeat(false))
	if err != nil {
		return fmt.Errorf("bus: consumer: %w", err)
	}
	defer it.Stop()
	w := &stallWatch{}
	w.delivered.Store(*next - 1)
	w.at.Store(time.Now().UnixNano())
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go w.watch(wctx, s, it)
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if head := w.stalled.Load(); head != 0 {
				return fmt.Errorf("bus: consumer delivered nothing for %v after stream sequence %d, the stream holding %d: made again", stallAfter, w.delivered.Load(), head)
			}
			return fmt.Errorf("bus: consumer: %w", err)
		}
		w.at.Store(time.Now().UnixNano())
		md, err := m.Metadata()
		if err != nil {
			continue // not a stream message
		}
		d := &Delivery{StreamSeq: md.Sequence.Stream, Pending: md.NumPending, Stored: md.Timestamp, Delivered: md.NumDelivered}
		d.Batch, d.Err = DecodeMsg(m.Subject(), m.Headers(), m.Data())
		if d.Batch != nil {
			d.Batch.Record.Stream = d.StreamSeq
		}
		if d.StreamSeq < *next {
			continue // already handed over
		}
		if *strict && d.StreamSeq > *next {
			d.Gap = d.StreamSeq - *next
		}
		*next, *strict = d.StreamSeq+1, true
		fn(d)
		w.delivered.Store(d.StreamSeq)
		w.at.Store(time.Now().UnixNano())
	}
}

// stallWatch makes a consumer that stopped delivering be made again. A
// consumer can stop while the stream goes on: when the NATS node that
// held it dies, the client library waits for it (it rebuilds a consumer
// only on missing heartbeats, and retries that without a word), and the
// replica, its last delivery saying nothing is pending, looks caught up
// while it applies nothing. watch asks the stream for its last sequence
// whenever nothing was delivered for stallAfter; when the stream holds
// messages past the last delivered, it stops the iterator, and
// consumeFrom returns the stall as its error (Consume reports it and
// makes a consumer again from the next sequence).
type stallWatch struct {
	delivered atomic.Uint64 // the stream sequence last handed over
	at        atomic.Int64  // unix ns of the last message received (or the start)
	stalled   atomic.Uint64 // the stream's last sequence when watch stopped the iterator
}

func (w *stallWatch) watch(ctx context.Context, s jetstream.Stream, it jetstream.MessagesContext) {
	t := time.NewTicker(max(stallAfter/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, w.at.Load())) < stallAfter {
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
		info, err := s.Info(ictx)
		cancel()
		if err != nil || info.State.LastSeq <= w.delivered.Load() {
			continue // unreachable (the consumer's own errors say so), or nothing to deliver
		}
		if time.Since(time.Unix(0, w.at.Load())) < stallAfter {
			continue // delivered meanwhile
		}
		w.stalled.Store(info.State.LastSeq)
		it.Stop()
		return
	}
}

// stallAfter is how long a consumer may deliver nothing while the stream
// holds messages past the last it delivered before it is made again
// (consumeFrom).
var stallAfter = 10 * time.Second
