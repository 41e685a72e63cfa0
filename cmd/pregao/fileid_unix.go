//go:build unix

package main

import (
	"os"
	"syscall"
)

// fileID returns the device and inode of the file st describes.
func fileID(st os.FileInfo) (dev, ino uint64) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Dev), uint64(sys.Ino)
	}
	return 0, 0
}
