package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
)

// make run on a taken address (PREGAO_ADDR, as the README says; ADDR
// wins over it) stops at once with serve's bind error: no banner of a
// server that never started, no wait for another listener's /readyz, and
// the log of the server already there (SERVE_LOG) untouched.
func TestMakeRunPortTaken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command with make")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	// A listener that accepts and never answers: the /readyz of make run's
	// old recipe waited 5 minutes on it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()

	_, keys, key := serveFixture(t)
	dir := t.TempDir()
	// A snapshot of the demo's format, which make demo keeps (it would
	// generate the scale 1 demo in place of another).
	snap := filepath.Join(dir, "demo.snap")
	if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{Version: defaultFormat}); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "demo.key")
	log := filepath.Join(dir, "serve.log")
	for f, text := range map[string]string{keyFile: key + "\n", log: "the running server's log\n"} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "--no-print-directory", "-C", "../..", "run",
		"BIN="+filepath.Join(dir, "pregao"), "DEMO_DIR="+dir, "DEMO_SNAP="+snap, "KEYS="+keys, "DEMO_KEY="+keyFile, "SERVE_LOG="+log)
	cmd.Env = append(os.Environ(), "PREGAO_ADDR="+addr)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("make run on a taken address: %v (after %v)\n%s", err, time.Since(start).Round(time.Second), out)
	}
	for _, want := range []string{"listen tcp " + addr + ": bind: address already in use", "make run: pregao serve could not start on " + addr} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make run's output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Serving the demo") {
		t.Errorf("make run printed the banner:\n%s", out)
	}
	if b, _ := os.ReadFile(log); string(b) != "the running server's log\n" {
		t.Errorf("the running server's log is now %q", b)
	}
	if _, err := os.Stat(log + ".new"); err == nil {
		t.Error("make run left serve.log.new")
	}
}
