//go:build linux

package bench

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// processSlice asks the kernel for time slices of d (EEVDF's custom
// slice: a thread with a shorter one is given the CPU sooner when it
// wakes) for every thread of the process; threads made later inherit
// their maker's. 0 restores the default.
func processSlice(d time.Duration) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	var first error
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		a, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // the thread ended
		}
		a.Runtime = uint64(d)
		if err := unix.SchedSetAttr(tid, a, 0); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// idleThread runs f on a thread of its own under the SCHED_IDLE policy
// (which any other waking thread preempts at once), then restores the
// thread's policy.
func idleThread(f func()) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return err
	}
	old := *a
	a.Policy, a.Priority = unix.SCHED_IDLE, 0
	if err := unix.SchedSetAttr(0, a, 0); err != nil {
		return err
	}
	defer unix.SchedSetAttr(0, &old, 0)
	f()
	return nil
}

// pinned returns cmd run on the CPUs cpus lists (taskset's form: "1",
// "0,2-3").
func pinned(cmd *exec.Cmd, cpus string) *exec.Cmd {
	c := exec.Command("taskset", append([]string{"-c", cpus}, cmd.Args...)...)
	c.Env, c.Stdout, c.Stderr = cmd.Env, cmd.Stdout, cmd.Stderr
	return c
}
