//go:build !linux

package bench

import (
	"errors"
	"os/exec"
	"time"
)

func processSlice(d time.Duration) error { return errors.New("custom time slices are Linux's") }

// idleThread runs f: the SCHED_IDLE policy is Linux's.
func idleThread(f func()) error {
	f()
	return errors.New("the SCHED_IDLE policy is Linux's")
}

// pinned returns cmd: taskset is Linux's.
func pinned(cmd *exec.Cmd, cpus string) *exec.Cmd { return cmd }
