//go:build linux

package bench

import (
	"os"
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
