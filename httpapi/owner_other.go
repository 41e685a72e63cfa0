//go:build !unix

package httpapi

import "os"

// fileOwner reports no owner on this platform.
func fileOwner(os.FileInfo) (uid, gid int) { return -1, -1 }
