package main

import "golang.org/x/sys/unix"

// lowerThreadPriority gives the calling OS thread the lowest CPU priority
// (nice 19). Unprivileged processes cannot raise it back: the caller must
// have locked the goroutine to its thread and end without unlocking it,
// so that the thread exits with it.
func lowerThreadPriority() error {
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), 19)
}

// threadNice returns the calling thread's nice value.
func threadNice() (int, error) {
	// getpriority returns 20 - nice.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
	return 20 - p, err
}
