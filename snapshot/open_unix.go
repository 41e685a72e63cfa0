//go:build unix

package snapshot

import "syscall"

// oNonblock makes the open of a named pipe return at once instead of
// waiting for a writer; reads of a regular file are not affected.
const oNonblock = syscall.O_NONBLOCK
