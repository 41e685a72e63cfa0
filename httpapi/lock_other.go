//go:build !unix

package httpapi

import (
	"errors"
	"os"
)

// lockFile is not available on this platform: keys files are updated only
// on Unix systems, where the lock serializes concurrent commands.
func lockFile(string) (func(), error) { return nil, errors.ErrUnsupported }

// fileOwner reports no owner on this platform.
func fileOwner(os.FileInfo) (uid, gid int) { return -1, -1 }
