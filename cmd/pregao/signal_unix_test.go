//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalled runs pregao with args in a child process as main runs it,
// sends it sig once it has started (and again, when twice), and returns
// its standard error, the time it took after the signal and its exit
// error. A child still running 30 s
// later is killed and the test fails.
func signalled(t *testing.T, sig syscall.Signal, twice bool, args ...string) (string, time.Duration, error) {
	t.Helper()
	cmd := pregaoProcess(args...)
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(500 * time.Millisecond) // the command is blocked by now
	start := time.Now()
	cmd.Process.Signal(sig)
	if twice {
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(sig)
	}
	select {
	case err := <-done:
		return se.String(), time.Since(start), err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running 30 s after %v (stderr: %s)", args, sig, se.String())
		return "", 0, nil
	}
}

// TestImportStopsOnSignal: an import blocked on an input (a named pipe no
// process writes to) stops on SIGTERM or SIGINT: exit status 2, a message
// naming the signal and saying that nothing was written, and no bundle
// folder nor temporary entry beside it. A second SIGINT ends it at once.
func TestImportStopsOnSignal(t *testing.T) {
	fifo := mkfifo(t)
	for _, c := range []struct {
		sig  syscall.Signal
		name string
	}{{syscall.SIGTERM, "terminated"}, {syscall.SIGINT, "interrupt"}} {
		parent := t.TempDir()
		out := filepath.Join(parent, "bundle")
		stderr, took, err := signalled(t, c.sig, false, "import", "--out", out, "--cad", fifo, "--as-of", "2021-03-26")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: exit %v, want status 2", c.sig, err)
		}
		want := "pregao: import: interrupted (" + c.name + " signal received): no bundle written, " + out + " is as it was"
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "import: stopping") {
			t.Errorf("%v: stderr %q, want %q", c.sig, stderr, want)
		}
		if took > stopGrace+2*time.Second {
			t.Errorf("%v: stopped %v after the signal", c.sig, took)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%v: %d entries left in the output's folder", c.sig, len(ents))
		}
	}
	_, took, err := signalled(t, syscall.SIGINT, true, "import", "--out", filepath.Join(t.TempDir(), "b"), "--cad", fifo, "--as-of", "2021-03-26")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT || took > stopGrace {
		t.Errorf("second SIGINT: %v after %v, want the process ended by the signal at once", err, took)
	}
}

// TestVerifyFIFOProcess: pregao verify of a named pipe with no writer,
// run as main runs it (the case that hung, deaf to SIGTERM and SIGINT),
// exits at once with status 2, naming what the path is.
func TestVerifyFIFOProcess(t *testing.T) {
	fifo := mkfifo(t)
	cmd := pregaoProcess("verify", fifo)
	var se bytes.Buffer
	cmd.Stderr = &se
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(se.String(), "a named pipe") {
			t.Errorf("verify of a named pipe: %v, stderr %q", err, se.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("verify of a named pipe still running after 10 s")
	}
}
