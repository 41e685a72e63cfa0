//go:build !unix

package snapshot

// oNonblock is 0 where the system has no O_NONBLOCK: openFile's check
// before the open still refuses a named pipe.
const oNonblock = 0
