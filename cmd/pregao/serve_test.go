package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// serveFixture builds a snapshot of the small bundle and a keys file with
// one delayed key.
func serveFixture(t *testing.T) (snap, keys, key string) {
	t.Helper()
	dir := t.TempDir()
	snap = filepath.Join(dir, "small.snap")
	if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	keys = filepath.Join(dir, "keys.json")
	var out, errb bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "test", "--plan", "delayed"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	return snap, keys, strings.TrimSpace(out.String())
}

func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeReloadRefusesCorruptSnapshot(t *testing.T) {
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	base := "http://" + m.Addr()

	if code, body := get(t, base+"/readyz", ""); code != 200 {
		t.Fatalf("readyz %d %s", code, body)
	}
	code, before := get(t, base+"/v2/companies/ENHZ", key)
	if code != 200 {
		t.Fatalf("company %d %s", code, before)
	}
	if code, _ := get(t, base+"/v2/companies/ENHZ", "pg_wrong"); code != 401 {
		t.Errorf("wrong key: %d", code)
	}

	// A corrupt snapshot is refused; the previous one keeps serving.
	good, _ := os.ReadFile(snap)
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0xFF
	os.WriteFile(snap, bad, 0o644)
	if err := m.Reload(); err == nil {
		t.Fatal("corrupt snapshot accepted")
	}
	if code, after := get(t, base+"/v2/companies/ENHZ", key); code != 200 || after != before {
		t.Errorf("after a refused reload: %d %s", code, after)
	}
	os.WriteFile(snap, good[:len(good)/3], 0o644)
	if err := m.Reload(); err == nil {
		t.Fatal("truncated snapshot accepted")
	}
	// A good file reloads.
	os.WriteFile(snap, good, 0o644)
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	_, metrics := get(t, base+"/metrics", "")
	for _, want := range []string{`pregao_snapshot_reloads_total{result="error"} 2`, `pregao_snapshot_reloads_total{result="ok"} 1`, "pregao_snapshot_info{id=", "pregao_snapshot_entities{kind=\"companies\"} 4", "pregao_snapshot_load_duration_seconds", "pregao_snapshot_as_of_seconds 1.7116596e+09"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// Keys are reloaded too. A file that drops every key without saying
	// allow_empty (truncated, or written by hand) is refused: the key
	// keeps working, the refusal is counted. Removing the only key with
	// keys remove is a revocation (it sets allow_empty): the key stops
	// working.
	orig, err := os.ReadFile(keys)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(keys, []byte(`{"keys":[]}`), 0o600)
	if err := m.Reload(); err == nil || !strings.Contains(err.Error(), "allow_empty") {
		t.Errorf("reload of a keys file with no key: %v", err)
	}
	if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Errorf("key after a refused keys reload: %d", code)
	}
	os.WriteFile(keys, orig, 0o600)
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"remove", "--file", keys, "--name", "test"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Errorf("reload after keys remove of the only key: %v", err)
	}
	if code, _ := get(t, base+"/v2/companies/ENHZ", key); code != 401 {
		t.Errorf("removed key: %d", code)
	}
	_, metrics = get(t, base+"/metrics", "")
	for _, want := range []string{`pregao_keys_reloads_total{result="refused"} 1`, `pregao_keys_reloads_total{result="ok"} 1`, "pregao_keys_loaded 0"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitBound):
		t.Fatal("no graceful shutdown")
	}
}

func TestServeRefusesBadStart(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	for name, cfg := range map[string]ServeConfig{
		"no snapshot": {Keys: keys},
		"missing":     {Snapshot: snap + ".missing", Keys: keys},
		"no keys":     {Snapshot: snap, Keys: filepath.Join(t.TempDir(), "none.json")},
		"bad clock":   {Snapshot: snap, Keys: keys, Clock: "moon"},
	} {
		if _, err := NewMain(cfg, io.Discard); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for _, c := range []struct {
		set  func(*ServeConfig)
		want string
	}{
		{func(c *ServeConfig) { c.AnswerCacheMB = -1 }, "--answer-cache -1"},
		{func(c *ServeConfig) { c.VerifyRateMB = -1 }, "--verify-rate -1"},
		{func(c *ServeConfig) { c.AccessLogSample = 1.5 }, "--access-log-sample 1.5"},
		{func(c *ServeConfig) { c.AccessLog = "syslog" }, `--access-log "syslog"`},
		{func(c *ServeConfig) { c.AuthFailureRate = -1 }, "--auth-failure-rate -1"},
		{func(c *ServeConfig) { c.AuthFailureBurst = 0 }, "--auth-failure-burst 0"},
		{func(c *ServeConfig) { c.StreamConnsPerKey = 0 }, "--stream-conns-per-key 0"},
		{func(c *ServeConfig) { c.MaxStreams = 0 }, "--max-streams 0"},
		{func(c *ServeConfig) { c.AdmissionCores = -2 }, "--admission-cores -2"},
		{func(c *ServeConfig) { c.AdmissionWait = 0 }, "--admission-wait 0s"},
		{func(c *ServeConfig) { c.AdmissionQueue = 0 }, "--admission-queue 0"},
		{func(c *ServeConfig) { c.MaxBodyBytes = 0 }, "--max-body 0"},
		{func(c *ServeConfig) { c.MaxPushBytes = 0 }, "--max-push-body 0"},
		{func(c *ServeConfig) { c.MaxPushBytes = maxPushBody + 1 }, "--max-push-body 134217729"},
	} {
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys = snap, keys
		c.set(&cfg)
		if _, err := NewMain(cfg, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", cfg, err, c.want)
		}
	}
	var out bytes.Buffer
	if err := runServe(context.Background(), []string{"--snapshot", snap}, &out, &out); err == nil {
		t.Error("serve without --keys accepted")
	}
	// A push body at the cap makes a record within the session log's
	// (about 1.6 bytes of record a byte of body at worst).
	if maxPushBody*2 > live.MaxRecord {
		t.Errorf("--max-push-body's cap %d is over half the session log's record cap %d", maxPushBody, live.MaxRecord)
	}
}

func TestKeysCommand(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.json")
	run := func(args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := runKeys(context.Background(), args, &out, &errb)
		return out.String(), err
	}
	k1, err := run("add", "--file", file, "--name", "a", "--plan", "eod")
	if err != nil || !strings.HasPrefix(k1, "pg_") {
		t.Fatalf("add: %q %v", k1, err)
	}
	if _, err := run("add", "--file", file, "--name", "a"); err == nil {
		t.Error("duplicate name accepted")
	}
	if _, err := run("add", "--file", file, "--name", "b", "--plan", "gold"); err == nil {
		t.Error("bad plan accepted")
	}
	if _, err := run("add", "--file", file); err == nil {
		t.Error("missing name accepted")
	}
	list, err := run("list", "--file", file)
	if err != nil || !strings.Contains(list, "a ") || !strings.Contains(list, "eod") || strings.Contains(list, strings.TrimSpace(k1)) {
		t.Errorf("list: %q %v", list, err)
	}
	raw, _ := os.ReadFile(file)
	if strings.Contains(string(raw), strings.TrimSpace(k1)) {
		t.Error("keys file holds the key")
	}
	if _, err := run("remove", "--file", file, "--name", "zz"); err == nil {
		t.Error("removing a missing key succeeded")
	}
	if _, err := run("remove", "--file", file, "--name", "a"); err != nil {
		t.Error(err)
	}
	if _, err := run("frob", "--file", file); err == nil {
		t.Error("unknown subcommand accepted")
	}
	if _, err := run(); err == nil {
		t.Error("no subcommand accepted")
	}
}

func TestServeWatchReloadsKeys(t *testing.T) {
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.Watch = snap, keys, "127.0.0.1:0", 20*time.Millisecond
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	base := "http://" + m.Addr()
	if code, _ := get(t, base+"/v2/ratios/catalog", key); code != 200 {
		t.Fatalf("catalog %d", code)
	}
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "other"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if err := runKeys(context.Background(), []string{"remove", "--file", keys, "--name", "test"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	// Make the change visible to the size/mtime check even on coarse clocks.
	os.Chtimes(keys, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	waitUntil(t, "the keys file change picked up", func() bool {
		code, _ := get(t, base+"/v2/ratios/catalog", key)
		return code == 401
	})
}

// startServe opens cfg's server on a free loopback port and runs it until
// stop, which cancels it and returns Run's error (waiting at most
// waitBound).
// Logs go to logw (nil: discarded).
func startServe(t *testing.T, cfg ServeConfig, logw io.Writer) (m *Main, stop func() error) {
	t.Helper()
	if logw == nil {
		logw = io.Discard
	}
	cfg.Addr = "127.0.0.1:0"
	m, err := NewMain(cfg, logw)
	if err != nil {
		t.Fatal(err)
	}
	stop, _ = runMain(t, m)
	return m, stop
}

// runMain opens m's listener and runs it: done receives Run's error; stop
// cancels it and returns that error (waiting at most waitBound; do not
// call both).
func runMain(t *testing.T, m *Main) (stop func() error, done <-chan error) {
	t.Helper()
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()
	t.Cleanup(cancel)
	return func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(waitBound):
			t.Errorf("no shutdown within %v", waitBound)
			return nil
		}
	}, errc
}

// --auth-failure-rate and --auth-failure-burst reach the API: past the
// burst, a client without a valid key still gets 401, saying when to
// retry; a valid key still 200; rate 0 turns the limit off.
func TestServeAuthFailureLimit(t *testing.T) {
	snap, keys, key := serveFixture(t)
	for _, c := range []struct {
		rate    float64
		limited bool
	}{{0.001, true}, {0, false}} {
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
		cfg.AuthFailureRate, cfg.AuthFailureBurst = c.rate, 2
		m, stop := startServe(t, cfg, nil)
		base := "http://" + m.Addr() + "/v2/ratios/catalog"
		var code int
		var body string
		for range 3 {
			code, body = get(t, base, "pg_wrong")
		}
		if code != 401 || strings.Contains(body, "retry in") != c.limited {
			t.Errorf("rate %g burst 2: third wrong key answered %d %s, want 401 (limited %v)", c.rate, code, body, c.limited)
		}
		if code, _ := get(t, base, key); code != 200 {
			t.Errorf("rate %g: a valid key answered %d", c.rate, code)
		}
		stop()
	}
}

// TestServeFilesDir: a --files-dir that cannot be written stops serve at
// once, naming it; the default folder (the user's cache, read-only for a
// hardened service) that cannot be written leaves the server without
// files, which the routes say (404), not a 503 at every request.
func TestServeFilesDir(t *testing.T) {
	snap, keys, key := serveFixture(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.FilesDir = snap, keys, filepath.Join(file, "files")
	if _, err := NewMain(cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "--files-dir") {
		t.Errorf("a --files-dir under a file: %v, want an error naming --files-dir", err)
	}

	t.Setenv("XDG_CACHE_HOME", filepath.Join(file, "cache"))
	t.Setenv("HOME", file)
	cfg.FilesDir, cfg.Addr = "", "127.0.0.1:0"
	var log bytes.Buffer
	m, stop := startServe(t, cfg, &log)
	code, body := get(t, "http://"+m.Addr()+"/v2/files", key)
	stop()
	if code != 404 || !strings.Contains(body, "serves no files") {
		t.Errorf("GET /files without a writable cache folder: %d %s, want 404", code, body)
	}
	if !strings.Contains(log.String(), "no flat files") {
		t.Errorf("no warning logged: %s", log.String())
	}
}

// With --metrics-addr, /metrics is served there (the keys' series with
// it) and the API's port answers it 404 with the API's JSON error; the
// API is unchanged. Both listeners close with the server.
func TestServeMetricsApart(t *testing.T) {
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.MetricsAddr = snap, keys, "127.0.0.1:0"
	m, stop := startServe(t, cfg, nil)
	base, mbase := "http://"+m.Addr(), "http://"+m.MetricsAddr()
	if code, body := get(t, base+"/v2/companies/ENHZ", key); code != 200 {
		t.Fatalf("API: %d %s", code, body)
	}
	if code, body := get(t, base+"/metrics", ""); code != 404 || !json.Valid([]byte(body)) {
		t.Errorf("/metrics on the API's port: %d %s, want a 404 JSON error", code, body)
	}
	code, metrics := get(t, mbase+"/metrics", "")
	if code != 200 || !strings.Contains(metrics, "pregao_http_requests_total{code=\"200\",route=\"/companies/:id\"}") || !strings.Contains(metrics, `key="`) {
		t.Errorf("/metrics apart: %d, want the API's and the keys' series:\n%s", code, grepLines(metrics, "pregao_http_requests_total"))
	}
	if code, _ := get(t, mbase+"/v2/companies/ENHZ", key); code != 404 {
		t.Errorf("the API on the metrics port: %d, want 404", code)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{m.Addr(), m.MetricsAddr()} {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s still listens after the shutdown", addr)
		}
	}
}
