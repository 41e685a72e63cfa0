package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is wrapped by the error of a snapshot path that names
// anything but a regular file (a named pipe, a device, a socket, a
// folder): a snapshot is read at offsets and its size checked against
// its section table, which only a file allows, and opening a named pipe
// without a writer would wait for one.
var ErrNotRegular = errors.New("not a regular file")

// CheckFile returns an error wrapping ErrNotRegular when path names
// anything but a regular file (symbolic links followed), the error of
// its Stat when it cannot be looked at (fs.ErrNotExist when absent), and
// nil otherwise. It never opens path: a command checks a snapshot path
// with it before anything could wait on a named pipe.
func CheckFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return regular(path, st)
}

// openFile opens the snapshot file at path (symbolic links followed) for
// reading and returns it with its size in bytes; the caller closes it.
// The path is checked before the open and the opened file again after
// it, and the open does not wait for a writer of a named pipe that
// appeared between the two (oNonblock), so it never blocks.
func openFile(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if err := regular(path, st); err != nil {
		return nil, 0, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, 0, err
	}
	if st, err = f.Stat(); err == nil {
		err = regular(path, st)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// regular returns nil when st is a regular file's, or else an error
// wrapping ErrNotRegular that names path and what it is.
func regular(path string, st fs.FileInfo) error {
	m := st.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a folder"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Errorf("%s: %w (%s): a snapshot must be a file", path, ErrNotRegular, what)
}
