package bus

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pregao/pregao/internal/natstest"
)

func TestRedact(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
	f("nats://a:4222", "nats://a:4222")
	f("nats://feed:s3cret@a:4222", "nats://feed:xxxxx@a:4222")
	f("nats://t0ken@a:4222", "nats://xxxxx@a:4222")
	f("tls://u:p@a:1,nats://b:2,nats://v:p:q@c:3", "tls://u:xxxxx@a:1,nats://b:2,nats://v:xxxxx@c:3")
	f("nats://u:p%40ss@a:4222/x?y=1", "nats://u:xxxxx@a:4222/x?y=1")
	f("nats://u:p@ss@a:4222", "nats://u:xxxxx@a:4222")
	f("embedded", "embedded")
	f("", "")
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	c := natstest.TLS(t, &server.Options{}, dir)
	creds := natstest.Operator(t, &server.Options{}, dir)
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a certificate\n"), 0o600)
	missing := filepath.Join(dir, "missing")
	cluster := "nats://127.0.0.1:4222"
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "": valid
	}{
		{"nothing", Config{URL: cluster}, ""},
		{"every file", Config{URL: cluster, Creds: creds, TLSCA: c.CA, TLSCert: c.Cert, TLSKey: c.Key}, ""},
		{"CA alone", Config{URL: cluster, TLSCA: c.CA}, ""},
		{"creds embedded", Config{URL: Embedded, Creds: creds}, "not the embedded server"},
		{"TLS embedded", Config{URL: Embedded, TLSCA: c.CA}, "not the embedded server"},
		{"cert without key", Config{URL: cluster, TLSCert: c.Cert}, "both its certificate file and its key file"},
		{"key without cert", Config{URL: cluster, TLSKey: c.Key}, "both its certificate file and its key file"},
		{"creds missing", Config{URL: cluster, Creds: missing}, "credentials file: open " + missing},
		{"creds not creds", Config{URL: cluster, Creds: c.CA}, "not a NATS user's credentials"},
		{"CA missing", Config{URL: cluster, TLSCA: missing}, "TLS CA file: open"},
		{"CA not PEM", Config{URL: cluster, TLSCA: junk}, "no PEM certificate"},
		{"key of another", Config{URL: cluster, TLSCert: c.Cert, TLSKey: junk}, "TLS client certificate"},
		{"cert missing", Config{URL: cluster, TLSCert: missing, TLSKey: c.Key}, "TLS client certificate"},
		{"negative cap", Config{URL: cluster, MaxBytes: -1}, "size cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Check()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check: %v, want %q", err, tc.want)
			}
			if tc.want != "" {
				if _, err := Open(tc.cfg); err == nil {
					t.Fatal("Open took a config Check refuses")
				}
			}
		})
	}
}

// openPublish opens cfg, publishes one batch and returns the error of
// either.
func openPublish(t *testing.T, cfg Config) error {
	t.Helper()
	b, err := Open(cfg)
	if err != nil {
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := b.Publish(ctx, sd, record(1, bar("PETR4", 13, 5, 23.5)), false); err != nil {
		t.Fatalf("publish over %s: %v", Redact(cfg.URL), err)
	}
	return nil
}

// A server that asks for TLS with a client certificate: a client with
// the CA and its certificate publishes; one without them is refused at
// Open, with an error that says why.
func TestOpenTLS(t *testing.T) {
	o := &server.Options{}
	c := natstest.TLS(t, o, t.TempDir())
	addr := natstest.Start(t, o)
	for _, u := range []string{"nats://" + addr, "tls://" + addr} {
		if err := openPublish(t, Config{URL: u, TLSCA: c.CA, TLSCert: c.Cert, TLSKey: c.Key, Name: t.Name()}); err != nil {
			t.Fatalf("%s with the CA and a client certificate: %v", u, err)
		}
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no CA: the system's", Config{}, "certificate"},
		{"no client certificate", Config{TLSCA: c.CA}, "tls"},
		{"not the server's CA", Config{TLSCert: c.Cert, TLSKey: c.Key}, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.URL = "nats://" + addr
			// The server's refusal reaches the client in one of a few
			// ways (TLS 1.3 checks the client's certificate after the
			// handshake): every try is refused at once.
			for range 10 {
				start := time.Now()
				err := openPublish(t, tc.cfg)
				if err == nil || !strings.Contains(err.Error(), "bus: connect nats://"+addr) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Open: %v, want an error with %q", err, tc.want)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("refused after %s, want at once", d)
				}
			}
		})
	}
}

// A server that asks for a user and password, or a user's credentials:
// the right ones publish; the wrong ones are refused at Open, and the
// password shows in no error and no log line.
func TestOpenAuth(t *testing.T) {
	addr := natstest.Start(t, &server.Options{Username: "feed", Password: "s3cret-pw"})
	if err := openPublish(t, Config{URL: "nats://feed:s3cret-pw@" + addr}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	err := openPublish(t, Config{URL: "nats://feed:wr0ng-pw@" + addr, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err == nil || !strings.Contains(err.Error(), "Authorization Violation") || !strings.Contains(err.Error(), "feed:xxxxx@") {
		t.Errorf("a wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error()+logs.String(), "wr0ng-pw") {
		t.Errorf("the password shows: %v\n%s", err, logs.String())
	}

	dir := t.TempDir()
	o := &server.Options{}
	creds := natstest.Operator(t, o, dir)
	addr = natstest.Start(t, o)
	if err := openPublish(t, Config{URL: "nats://" + addr, Creds: creds}); err != nil {
		t.Fatalf("with the credentials: %v", err)
	}
	if err := openPublish(t, Config{URL: "nats://" + addr}); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Errorf("without the credentials: %v", err)
	}
	other := natstest.Operator(t, &server.Options{}, t.TempDir())
	if err := openPublish(t, Config{URL: "nats://" + addr, Creds: other}); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Errorf("another operator's credentials: %v", err)
	}
}

// Servers that are down are not refused: Open succeeds and retries, and
// logs each new failure once, not at each retry.
func TestOpenRetriesLogged(t *testing.T) {
	var logs bytes.Buffer
	b, err := Open(Config{URL: "nats://u:pw-in-url@" + freeListen(t), Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond)
	b.Close()
	// "no servers available", then "connection refused" once.
	if n := strings.Count(logs.String(), "connection failed; retrying"); n < 1 || n > 2 {
		t.Errorf("%d log lines of the failure, want 1 or 2:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "pw-in-url") || !strings.Contains(logs.String(), "u:xxxxx@") {
		t.Errorf("the log:\n%s", logs.String())
	}
}

// An existing stream whose limits differ: the embedded server's is
// updated and logged; a cluster's is left as it is, and what differs is
// logged.
func TestEnsureStreamLimits(t *testing.T) {
	dir, ln := t.TempDir(), freeListen(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	b, err := Open(Config{URL: Embedded, Dir: dir, Listen: ln, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := b.EnsureStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := s.CachedInfo().Config; c.MaxBytes > 0 || c.MaxAge != 7*24*time.Hour {
		t.Fatalf("a new stream: max_bytes %d, max_age %s", c.MaxBytes, c.MaxAge)
	}
	if logs.Len() != 0 {
		t.Errorf("a new stream logged %s", logs.String())
	}
	b.Close()
	b, err = Open(Config{URL: Embedded, Dir: dir, Listen: ln, MaxBytes: 1 << 20, MaxAge: 48 * time.Hour, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if s, err = b.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Config.MaxBytes != 1<<20 || info.Config.MaxAge != 48*time.Hour {
		t.Fatalf("embedded stream not updated: %+v, %v", info.Config, err)
	}
	if !strings.Contains(logs.String(), "limits updated") || !strings.Contains(logs.String(), "max_bytes: 0 (stream) vs 1048576") {
		t.Errorf("the update's log: %s", logs.String())
	}

	// A cluster's stream (this server, reached as a client).
	logs.Reset()
	c, err := Open(Config{URL: "nats://" + ln, MaxBytes: 1 << 30, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.EnsureStream(ctx); err != nil {
		t.Fatal(err)
	}
	if info, _ := s.Info(ctx); info.Config.MaxBytes != 1<<20 {
		t.Errorf("a cluster's stream changed: max_bytes %d", info.Config.MaxBytes)
	}
	if l := logs.String(); !strings.Contains(l, "left as they are") || !strings.Contains(l, "max_bytes: 1048576 (stream) vs 1073741824") ||
		!strings.Contains(l, "max_age: 48h0m0s (stream) vs 168h0m0s") {
		t.Errorf("the cluster's log: %s", l)
	}
	if d := LimitsDiffer(jetstream.StreamConfig{MaxBytes: -1, MaxMsgSize: -1}, jetstream.StreamConfig{}); len(d) != 0 {
		t.Errorf("no cap as -1 and as 0 differ: %v", d)
	}
}

// The stream keeps at most MaxBytes: the oldest batches go.
func TestMaxBytesDropsOldest(t *testing.T) {
	b, err := Open(Config{URL: Embedded, Dir: t.TempDir(), MaxBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for i := range 40 {
		if _, _, err := b.Publish(ctx, sd, record(uint64(i+1), bar("PETR4", 13, i, 23.5)), false); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := b.EnsureStream(ctx)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > 4096 || info.State.FirstSeq <= 1 || info.State.LastSeq != 40 {
		t.Errorf("stream of %d bytes, sequences %d to %d", info.State.Bytes, info.State.FirstSeq, info.State.LastSeq)
	}
	if _, err := Open(Config{URL: Embedded, Dir: t.TempDir(), MaxBytes: -1}); err == nil || errors.Is(err, nil) {
		t.Error("a negative cap opened")
	}
}
