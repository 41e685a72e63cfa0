package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/internal/natstest"
)

// TestLiveSecuredCluster: a NATS server that asks for TLS with a client
// certificate and a user's password. pregao feed and a replica (serve
// --live nats://) given the CA, the client certificate and the password
// publish and apply the session; a feed without the certificate is
// refused at once, with an error that says why; the password shows in
// no output, error or log line.
func TestLiveSecuredCluster(t *testing.T) {
	f := liveFixtureOf(t)
	o := &server.Options{Username: "pregao", Password: "pw-S3cret"}
	c := natstest.TLS(t, o, t.TempDir())
	url := "nats://pregao:pw-S3cret@" + natstest.Start(t, o)
	tlsArgs := []string{"--live-tls-ca", c.CA, "--live-tls-cert", c.Cert, "--live-tls-key", c.Key}

	var logs syncBuffer
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.AccessLog = f.base, f.keys, "off"
	cfg.Live.Stream, cfg.Live.TLSCA, cfg.Live.TLSCert, cfg.Live.TLSKey, cfg.Live.Replicas = url, c.CA, c.Cert, c.Key, 1
	m, stop := startServe(t, cfg, &logs)
	defer stop()

	var out, errb bytes.Buffer
	fctx, fcancel := context.WithCancel(context.Background())
	fed := make(chan error, 1)
	go func() {
		fed <- runFeedCmd(fctx, append([]string{"--feed", "replay:" + f.session, "--feed-speed", "max", "--live", url, "--live-replicas", "1",
			"--live-dir", t.TempDir()}, tlsArgs...), &out, &errb)
	}()
	waitStream(t, m, 1, true)
	fcancel()
	if err := <-fed; err != nil {
		t.Fatalf("feed: %v\n%s", err, errb.String())
	}
	if compareView(t, m.Store.View(), loadDataset(t, f.full), f.day, m.clock.Now().Unix(), nil) > 0 {
		t.Error("the view differs from the full snapshot")
	}
	if !strings.Contains(out.String(), "publishing to nats://pregao:xxxxx@") || !strings.Contains(logs.String(), `url=nats://pregao:xxxxx@`) ||
		!strings.Contains(logs.String(), "tls=true") {
		t.Errorf("feed's output %q; serve's log:\n%s", out.String(), logs.String())
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no client certificate", []string{"--live-tls-ca", c.CA}, "tls"}, // "tls: certificate required", or the connection closed after the handshake
		{"not the server's CA", []string{"--live-tls-cert", c.Cert, "--live-tls-key", c.Key}, "certificate signed by unknown authority"},
		{"a wrong password", append([]string{"--live", strings.Replace(url, "pw-S3cret", "pw-Wr0ng", 1)}, tlsArgs...), "Authorization Violation"},
		{"a certificate without its key", []string{"--live-tls-cert", c.Cert}, "both its certificate file and its key file"},
		{"an unreadable CA file", []string{"--live-tls-ca", filepath.Join(t.TempDir(), "none.pem")}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			start := time.Now()
			err := runFeedCmd(context.Background(), append([]string{"--feed", "replay:" + f.session, "--live", url, "--live-dir", t.TempDir()}, tc.args...), &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "feed: ") {
				t.Fatalf("feed: %v, want %q", err, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("refused after %s", d)
			}
			if all := err.Error() + out.String() + errb.String(); strings.Contains(all, "pw-") && !strings.Contains(all, "xxxxx") || strings.Contains(all, "pw-S3cret") || strings.Contains(all, "pw-Wr0ng") {
				t.Errorf("a password shows: %s", all)
			}
		})
	}
	// A replica without the client certificate: the snapshot served,
	// /readyz 503, the refusal logged (and tried again).
	var rlogs syncBuffer
	cfg.Live.TLSCert, cfg.Live.TLSKey = "", ""
	r, rstop := startServe(t, cfg, &rlogs)
	defer rstop()
	for end := time.Now().Add(10 * time.Second); !strings.Contains(rlogs.String(), "live stream not opened") && time.Now().Before(end); {
		time.Sleep(20 * time.Millisecond)
	}
	if l := rlogs.String(); !strings.Contains(l, "live stream not opened") || !strings.Contains(l, "tls") {
		t.Errorf("the replica's log:\n%s", l)
	}
	if code, body := readyzBody(t, r); code != 503 || !strings.Contains(body, "not connected") {
		t.Errorf("the replica's readyz: %d %s", code, body)
	}
	if strings.Contains(logs.String()+rlogs.String(), "pw-S3cret") {
		t.Errorf("the password in serve's log:\n%s", logs.String())
	}
}

// TestLiveSecurityFlags: the credentials and TLS flags are refused at
// startup where they cannot work, and set by their PREGAO_ variables.
func TestLiveSecurityFlags(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	dir := t.TempDir()
	c := natstest.TLS(t, &server.Options{}, dir)
	creds := natstest.Operator(t, &server.Options{}, dir)
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("junk\n"), 0o600)
	for _, tc := range []struct {
		name string
		set  func(*ServeConfig)
		want string
	}{
		{"creds without --live", func(c *ServeConfig) { c.Live.Creds = creds }, "need --live nats://"},
		{"max bytes without --live", func(c *ServeConfig) { c.Live.MaxBytes = 1 << 30 }, "--live-max-bytes needs --live"},
		{"creds embedded", func(c *ServeConfig) { c.Live.Stream, c.Live.Dir, c.Live.Creds = "embedded", t.TempDir(), creds }, "not --live embedded"},
		{"TLS embedded", func(x *ServeConfig) { x.Live.Stream, x.Live.Dir, x.Live.TLSCA = "embedded", t.TempDir(), c.CA }, "not --live embedded"},
		{"key without cert", func(x *ServeConfig) { x.Live.Stream, x.Live.TLSKey = "nats://a:1", c.Key }, "both its certificate file and its key file"},
		{"creds missing", func(x *ServeConfig) { x.Live.Stream, x.Live.Creds = "nats://a:1", filepath.Join(dir, "none") }, "credentials file: open"},
		{"creds not creds", func(x *ServeConfig) { x.Live.Stream, x.Live.Creds = "nats://a:1", junk }, "not a NATS user's credentials"},
		{"CA not PEM", func(x *ServeConfig) { x.Live.Stream, x.Live.TLSCA = "nats://a:1", junk }, "no PEM certificate"},
		{"negative max bytes", func(x *ServeConfig) { x.Live.Stream, x.Live.MaxBytes = "nats://a:1", -1 }, "--live-max-bytes -1"},
		{"password in a bad URL", func(x *ServeConfig) { x.Live.Stream = "nats://u:pw-x@a:1,http://u:pw-y@b" }, "nats://u:xxxxx@a:1,http://u:xxxxx@b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultServeConfig()
			cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
			tc.set(&cfg)
			_, err := newMain(cfg, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "pw-") {
				t.Errorf("%v, want %q", err, tc.want)
			}
		})
	}
	env := map[string]string{"PREGAO_LIVE": "nats://a:4222", "PREGAO_LIVE_CREDS": creds, "PREGAO_LIVE_TLS_CA": c.CA,
		"PREGAO_LIVE_TLS_CERT": c.Cert, "PREGAO_LIVE_TLS_KEY": c.Key, "PREGAO_LIVE_MAX_BYTES": "1073741824"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg, err := parseServe(nil, lookup, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Live
	if err := l.Check("test"); err != nil || l.Creds != creds || l.TLSCA != c.CA || l.TLSCert != c.Cert || l.TLSKey != c.Key || l.MaxBytes != 1<<30 {
		t.Errorf("serve from the environment: %+v, %v", l, err)
	}
	fcfg := FeedConfig{Live: session.DefaultConfig()}
	fs := feedFlags(&fcfg)
	if err := setFromEnv(fs, lookup); err != nil {
		t.Fatal(err)
	}
	if l := fcfg.Live; l.Check("test") != nil || l.Creds != creds || l.TLSCert != c.Cert || l.MaxBytes != 1<<30 {
		t.Errorf("feed from the environment: %+v", l)
	}
}
