//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalled runs pregao with args in a child process as main runs it,
// with the named pipe fifo among its inputs; once the child has the pipe
// open for reading (it is then past main's signal setup and blocked on
// its input), it sends sig, and when twice sends it again until the
// process ends. It returns the child's standard error, the time it took
// after the first signal and its exit error. The test holds the pipe's
// write end, writing nothing, until the child has ended. A child not
// blocked within waitBound, or still running waitBound after the signal,
// is killed and the test fails: the waits end on the state they wait
// for, the bound only on a hang.
func signalled(t *testing.T, sig syscall.Signal, twice bool, fifo string, args ...string) (string, time.Duration, error) {
	t.Helper()
	cmd := pregaoProcess(args...)
	var se syncBuffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var exitErr error
	ended := make(chan struct{})
	go func() { exitErr = cmd.Wait(); close(ended) }()
	fail := func(format string, a ...any) {
		t.Helper()
		cmd.Process.Kill()
		<-ended
		t.Fatalf("%v: "+format+" (stderr: %s)", append(append([]any{args}, a...), se.String())...)
	}
	w, err := awaitFIFOReader(fifo, ended, waitBound)
	if err != nil {
		fail("%v", err)
	}
	defer w.Close()
	start := time.Now()
	cmd.Process.Signal(sig)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	bound := time.After(waitBound)
	for {
		select {
		case <-ended:
			return se.String(), time.Since(start), exitErr
		case <-tick.C:
			// The first signal gives the signals back to their default
			// (main); until that has happened a second one is taken as
			// the first: send it until the process ends.
			if twice {
				cmd.Process.Signal(sig)
			}
		case <-bound:
			fail("still running %v after %v", waitBound, sig)
			return "", 0, nil
		}
	}
}

// awaitFIFOReader waits until a process has the named pipe at path open
// for reading, and returns the pipe's write end, which the caller keeps
// open (so that the reader blocks on its read) and closes. It gives up
// when ended is closed (the reader's process ended first) or after bound.
func awaitFIFOReader(path string, ended <-chan struct{}, bound time.Duration) (*os.File, error) {
	end := time.Now().Add(bound)
	for {
		// A write-only, non-blocking open fails with ENXIO while no
		// process has the pipe open for reading.
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return nil, err
		}
		select {
		case <-ended:
			return nil, fmt.Errorf("ended before it opened %s", path)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(end) {
			return nil, fmt.Errorf("%s not opened for reading within %v", path, bound)
		}
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
		stderr, took, err := signalled(t, c.sig, false, fifo, "import", "--out", out, "--cad", fifo, "--as-of", "2021-03-26")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v: exit %v, want status 2", c.sig, err)
		}
		want := "pregao: import: interrupted (" + c.name + " signal received): no bundle written, " + out + " is as it was"
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "import: stopping") {
			t.Errorf("%v: stderr %q, want %q", c.sig, stderr, want)
		}
		if took > stopGrace+10*time.Second { // its grace, and a process's exit on a loaded machine
			t.Errorf("%v: stopped %v after the signal", c.sig, took)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%v: %d entries left in the output's folder", c.sig, len(ents))
		}
	}
	_, took, err := signalled(t, syscall.SIGINT, true, fifo, "import", "--out", filepath.Join(t.TempDir(), "b"), "--cad", fifo, "--as-of", "2021-03-26")
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
	case <-time.After(waitBound):
		cmd.Process.Kill()
		t.Fatalf("verify of a named pipe still running after %v", waitBound)
	}
}
