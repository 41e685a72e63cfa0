//go:build unix

package httpapi

import (
	"os"
	"syscall"
)

// fileOwner returns the owner and group of the file st describes.
func fileOwner(st os.FileInfo) (uid, gid int) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), int(sys.Gid)
	}
	return -1, -1
}
