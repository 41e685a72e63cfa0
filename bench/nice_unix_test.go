//go:build unix

package bench

import "syscall"

// lowestPriority gives the process the lowest CPU priority (nice 19).
func lowestPriority() error { return syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19) }
