package snapshot

import (
	"os"

	"golang.org/x/sys/unix"
)

// freeSpill gives the disk space of bytes [off, off+n) of the spill file
// f back to the file system (a hole punched in it), once they are copied
// into the snapshot: the build's disk peak is then about one file, not
// two. Best effort: a file system without holes keeps the bytes.
func freeSpill(f *os.File, off, n int64) {
	unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}
