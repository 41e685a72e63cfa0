//go:build linux || darwin || freebsd || dragonfly

package remote

import "syscall"

// diskFree returns the bytes an unprivileged process may still write on
// the file system of dir (statfs: available blocks × block size).
func diskFree(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
