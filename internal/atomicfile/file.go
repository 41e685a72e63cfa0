package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// File is the new content of the file at a path, written to a temporary
// file beside it (named by TempPattern) and put in its place by Commit in
// one rename. Until Commit returns nil, path holds what it held before
// (or nothing); after it, the new content, synced, and the rename made
// durable by a sync of the folder. A File is not safe for concurrent use.
//
// The steps, in order: Create (RemoveStale, then the temporary file);
// writes; Commit (chmod to perm, fsync, close, rename over path, fsync of
// the folder). Abort, or a failed Commit, removes the temporary file. A
// writer killed between Create and Commit leaves its temporary file,
// which the next Create or RemoveStale for the same path removes.
//
// WriteFile is the one-call form for content written by one function;
// Create, Commit and Abort are for content written over several calls
// (a writer handed to a caller) or checked before it replaces path.
type File struct {
	f      *os.File
	path   string
	perm   fs.FileMode
	noSync bool
	done   bool
}

// Create starts the replacement of the file at path. It removes the
// temporary files of killed writers of path (RemoveStale) and creates a
// new temporary file in path's folder, which must exist. The content is
// given permission bits perm (exactly: the umask does not apply) and
// appears at path only through Commit.
//
// path itself is replaced: a symbolic link at path is replaced by the
// file, not followed (resolve it first with Target to replace the file
// it names).
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" {
		return nil, fmt.Errorf("atomicfile: %q names no file", path)
	}
	RemoveStale(dir, base)
	f, err := os.CreateTemp(dir, TempPattern(base))
	if err != nil {
		return nil, err
	}
	return &File{f: f, path: path, perm: perm}, nil
}

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// ReadFrom copies r to the temporary file (in the kernel where it can:
// copy_file_range from an *os.File or an *io.LimitedReader of one).
func (f *File) ReadFrom(r io.Reader) (int64, error) { return f.f.ReadFrom(r) }

// Name returns the temporary file's path: the content written so far can
// be read back there (for a check before Commit).
func (f *File) Name() string { return f.f.Name() }

// Path returns the path Commit replaces.
func (f *File) Path() string { return f.path }

// Chown sets the temporary file's owner and group (os.File.Chown), which
// the file at Path has after Commit.
func (f *File) Chown(uid, gid int) error { return f.f.Chown(uid, gid) }

// SkipSync makes Commit skip both fsyncs. The replacement stays atomic
// for readers, but a crash may lose it or leave an empty file: only for
// tests that write many throw-away files.
func (f *File) SkipSync() { f.noSync = true }

// Commit gives the content its permission bits, syncs it, closes it and
// renames it over Path, then syncs Path's folder. On an error before the
// rename, the temporary file is removed and Path is left as it was; an
// error from the folder's sync means the new content is in place but the
// rename may not survive a crash. Commit may be called once; after it
// the File is done and Abort does nothing.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s: already committed or aborted", f.path)
	}
	f.done = true
	err := f.f.Chmod(f.perm)
	if err == nil && !f.noSync {
		err = f.f.Sync()
	}
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.f.Name())
		return err
	}
	if f.noSync {
		return nil
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort gives up the replacement: the temporary file is closed and
// removed, and Path keeps what it held. It does nothing after Commit or
// a previous Abort, so `defer f.Abort()` right after Create covers every
// early return.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	os.Remove(f.f.Name())
}

// WriteFile replaces the file at path with what write writes, with
// permission bits perm: Create, write, then Commit, or Abort when write
// returns an error (returned as is), so path holds either its old content
// or all of the new. write gets the temporary file; it may buffer (and
// must flush what it buffers before it returns).
func WriteFile(path string, perm fs.FileMode, write func(w io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// SyncDir makes the renames, links and removals in dir durable (the
// folder's fsync): what a writer of several files, or of links, calls
// once they are in place. A file system that cannot sync a folder
// (EINVAL) is not an error.
func SyncDir(dir string) error { return syncDir(dir) }

// syncDir syncs the directory entry changes of dir. A file system that
// cannot sync a folder (EINVAL) is not an error: it gives no stronger
// guarantee to ask for. A variable, so that tests can see the call.
var syncDir = func(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
