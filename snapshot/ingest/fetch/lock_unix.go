//go:build unix

package fetch

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive advisory lock (flock) on dir's LockName,
// creating dir and the file if needed, and returns its release. It blocks
// while another fetch holds it, so that two commands fetching into one
// folder take turns instead of writing the same partial files and
// manifest; a killed command's lock goes with its process.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o644)
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
