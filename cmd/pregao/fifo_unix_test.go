//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mkfifo makes a named pipe in a new folder and returns its path; no
// process writes to it, so opening it for reading waits forever.
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	return p
}

// TestVerifyInspectRefuseFIFO: verify and inspect of a named pipe with no
// writer (which hung, deaf to SIGINT and SIGTERM) refuse it at once,
// as anything but a regular file.
func TestVerifyInspectRefuseFIFO(t *testing.T) {
	fifo := mkfifo(t)
	for _, args := range [][]string{{"verify", fifo}, {"inspect", fifo}, {"inspect", "--verify", fifo}, {"verify", filepath.Dir(fifo)}} {
		done := make(chan error, 1)
		go func() {
			var so, se bytes.Buffer
			done <- run(context.Background(), args, &so, &se)
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.HasPrefix(err.Error(), args[0]+": ") {
				t.Errorf("%v: %v, want a refusal as not a regular file", args, err)
			}
		case <-time.After(waitBound):
			t.Fatalf("%v: still blocked after %v", args, waitBound)
		}
	}
}

// TestServeRefusesFIFO: serve of a named pipe (which hung, deaf to
// SIGTERM and SIGINT) refuses it at once, as verify does, and so does a
// keys file that is a named pipe.
func TestServeRefusesFIFO(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	fifo := mkfifo(t)
	for _, c := range []struct{ snap, keys, want string }{
		{fifo, keys, "serve: --snapshot " + fifo + ": not a regular file (a named pipe)"},
		{snap, fifo, "not a regular file: a keys file must be a file"},
	} {
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys, cfg.Addr = c.snap, c.keys, "127.0.0.1:0"
		done := make(chan error, 1)
		go func() { _, err := newMain(cfg, io.Discard); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("serve of %s, %s: still blocked after 10 s", c.snap, c.keys)
		}
	}
}

// TestShutdownWhileLoading: a SIGTERM (the end of Run's context) while
// the first snapshot's load is stuck (a hung disk) ends Run within the
// shutdown's timeout; the loader is left behind.
func TestShutdownWhileLoading(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	stuck, release := make(chan struct{}), make(chan struct{})
	beforeFirstLoad = func() { close(stuck); <-release }
	// The loader left behind ends before the next test: its GC tuning
	// would run beside another test's (TestServeTunesGC).
	var m *Main
	defer func() {
		beforeFirstLoad = nil
		close(release)
		if m != nil {
			m.background.Wait()
		}
		tuning.Wait()
	}()
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr, cfg.AccessLog = snap, keys, "127.0.0.1:0", "off"
	cfg.WriteTimeout, cfg.ShutdownTimeout = time.Second, time.Second
	m, err := newMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	<-stuck
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return while the loader is stuck")
	}
}
