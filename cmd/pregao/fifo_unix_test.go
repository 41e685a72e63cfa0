//go:build unix

package main

import (
	"bytes"
	"context"
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
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: still blocked after 5 s", args)
		}
	}
}
