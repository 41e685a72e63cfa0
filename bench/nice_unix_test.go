//go:build unix

package bench

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// lowestPriority gives the process the lowest CPU priority (nice 19).
func lowestPriority() error { return syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19) }

// ownSession starts cmd in a session of its own: where the kernel
// groups the scheduling of a session's processes (autogroup), the
// client then competes with the server as another group, as a client on
// another machine does not compete at all.
func ownSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// groupPriority sets the nice value (-20 to 19) of the process's
// scheduling group (its session's autogroup); nothing where the kernel
// has none.
func groupPriority(nice int) error {
	err := os.WriteFile("/proc/self/autogroup", []byte(strconv.Itoa(nice)), 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// sessionLeader reports whether the process leads its session (it was
// started under setsid), so that its scheduling group is its own.
func sessionLeader() bool {
	stat, err := os.ReadFile("/proc/self/stat") // pid (comm) state ppid pgrp session …
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 3 && f[3] == strconv.Itoa(os.Getpid())
}

// newSession makes the process the leader of a new session (and so of a
// scheduling group of its own); it fails when the process leads its
// process group.
func newSession() error {
	_, err := syscall.Setsid()
	return err
}
