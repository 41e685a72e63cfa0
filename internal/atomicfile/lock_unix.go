//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// Lock takes an exclusive advisory lock (flock) on the file at path,
// creating it (mode 0600) if needed, and returns the function that
// releases it. It blocks until the lock is free. The lock goes with the
// process, so a writer killed with SIGKILL never leaves it taken.
func Lock(path string) (unlock func(), err error) {
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
