package mapfile

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// File is a file's bytes, mapped or read. Its methods are safe for
// concurrent use; Bytes must not be used after Close.
type File struct {
	data   []byte
	mapped bool
	once   sync.Once
	err    error
}

// held counts the Files open (mapped or read) and their bytes, for
// tests and metrics.
var held struct {
	files, bytes atomic.Int64
}

// Held returns the number of Files not yet released and their bytes.
func Held() (files, bytes int64) { return held.files.Load(), held.bytes.Load() }

// Open maps the file at path read-only, or reads it into the heap where
// it cannot be mapped (a system without mappings, a file system that
// refuses them). An empty file gives an empty File.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return OpenFile(f)
}

// OpenFile is Open for a file already open (for reading); f may be
// closed afterwards, the mapping stays.
func OpenFile(f *os.File) (*File, error) {
	path := f.Name()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	if size > maxSize {
		return nil, fmt.Errorf("%s: %d bytes: too large to map", path, size)
	}
	if size > 0 {
		if b, err := mapFile(f, int(size)); err == nil {
			return newFile(b, true), nil
		}
	}
	return readAt(f, size, path)
}

// Read reads the file at path into the heap, as Open does where it
// cannot map it.
func Read(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxSize {
		return nil, fmt.Errorf("%s: %d bytes: too large to read", path, st.Size())
	}
	return readAt(f, st.Size(), path)
}

// maxSize bounds a file's size (the slice's length is an int).
const maxSize = math.MaxInt

// readAt reads size bytes of f into an 8-aligned heap buffer.
func readAt(f io.ReaderAt, size int64, path string) (*File, error) {
	words := make([]uint64, (size+7)/8)
	var b []byte
	if size > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), int(size))
		if _, err := f.ReadAt(b, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return newFile(b, false), nil
}

func newFile(b []byte, mapped bool) *File {
	held.files.Add(1)
	held.bytes.Add(int64(len(b)))
	if mapped && len(b) > 0 {
		regions.add(b)
	}
	return &File{data: b, mapped: mapped}
}

// Bytes returns the file's bytes (read-only: a write to a mapped file's
// bytes faults).
func (f *File) Bytes() []byte { return f.data }

// Len returns the file's size in bytes.
func (f *File) Len() int { return len(f.data) }

// Mapped reports whether the bytes are mapped (else read into the heap).
func (f *File) Mapped() bool { return f.mapped }

// Close releases the bytes: unmaps them, or lets the collector have the
// heap copy. The caller guarantees that nothing uses them any more.
// Later calls do nothing and return the first one's error.
func (f *File) Close() error {
	f.once.Do(func() {
		held.files.Add(-1)
		held.bytes.Add(-int64(len(f.data)))
		if f.mapped && len(f.data) > 0 {
			regions.remove(f.data)
			f.err = unmap(f.data)
		}
		f.data = nil
	})
	return f.err
}

// ReleaseWith closes f once owner can no longer be reached (the
// collector runs the release after the last reference to owner is
// gone). owner must hold every slice of f's bytes that outlives it
// through no other path; f must not reach owner.
func ReleaseWith[T any](f *File, owner *T) {
	if owner == nil {
		panic(errors.New("mapfile: ReleaseWith without an owner"))
	}
	runtime.AddCleanup(owner, func(f *File) { f.Close() }, f)
}
