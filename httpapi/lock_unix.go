//go:build unix

package httpapi

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock (flock) on the file at path,
// creating it if needed, and returns the function that releases it. It
// blocks until the lock is free. The lock is released when the process
// dies, so a killed command never leaves the file locked.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// fileOwner returns the owner and group of the file st describes.
func fileOwner(st os.FileInfo) (uid, gid int) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), int(sys.Gid)
	}
	return -1, -1
}
