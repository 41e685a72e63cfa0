//go:build unix

package ratios

import (
	"syscall"
	"time"
)

// cpuTime returns the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(r.Utime) + syscall.TimevalToNsec(r.Stime))
}
