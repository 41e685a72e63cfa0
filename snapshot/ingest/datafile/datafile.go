package datafile

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// Open opens path for reading. A name ending in .zst or .gz is decompressed
// transparently. When path does not exist but path+".zst" or path+".gz"
// does, that file is opened instead. The caller must Close the result.
func Open(path string) (io.ReadCloser, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		for _, ext := range []string{".zst", ".gz"} {
			if _, err2 := os.Stat(path + ext); err2 == nil {
				path += ext
				break
			}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	rc, err := Decompress(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return rc, nil
}

// Decompress wraps r according to name's extension (.zst, .gz; anything
// else is returned as is). Closing the result closes r when r is an
// io.Closer.
func Decompress(r io.Reader, name string) (io.ReadCloser, error) {
	lower := strings.ToLower(name)
	var closer io.Closer
	if c, ok := r.(io.Closer); ok {
		closer = c
	}
	switch {
	case strings.HasSuffix(lower, ".zst"):
		zr, err := zstd.NewReader(bufio.NewReaderSize(r, 1<<16), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &readCloser{Reader: zr, close: func() error { zr.Close(); return closeIf(closer) }}, nil
	case strings.HasSuffix(lower, ".gz"):
		gr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &readCloser{Reader: gr, close: func() error { gr.Close(); return closeIf(closer) }}, nil
	}
	return &readCloser{Reader: r, close: func() error { return closeIf(closer) }}, nil
}

func closeIf(c io.Closer) error {
	if c == nil {
		return nil
	}
	return c.Close()
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r *readCloser) Close() error { return r.close() }

// MaxReadFile is the most bytes ReadFile returns: the official files it
// is for (B3's JSON answers, index portfolios) are a few MB at most, and
// a compressed file is refused once its content passes it, so that a
// small .zst or .gz (a compression bomb: 1 MB of zstd is 1 GB of zeros)
// cannot take the memory of the import.
var MaxReadFile int64 = 256 << 20

// ReadFile returns the whole (decompressed) content of path, opened as Open
// does. Use it only for small files (JSON responses, index portfolios):
// content over MaxReadFile bytes is an error.
func ReadFile(path string) ([]byte, error) {
	rc, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxReadFile+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > MaxReadFile {
		return nil, fmt.Errorf("%s: over %d MiB (decompressed): too large for this kind of file", path, MaxReadFile>>20)
	}
	return b, nil
}

// BaseName returns the base name of path without a trailing .zst or .gz:
// the official file name of a compressed copy.
func BaseName(path string) string {
	b := filepath.Base(path)
	lower := strings.ToLower(b)
	for _, ext := range []string{".zst", ".gz"} {
		if strings.HasSuffix(lower, ext) {
			return b[:len(b)-len(ext)]
		}
	}
	return b
}

// Text returns b as a UTF-8 string: b itself when it is valid UTF-8,
// otherwise b decoded as ISO-8859-1 (every byte is one code point).
func Text(b []byte) string {
	ascii := true
	for _, c := range b {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii || utf8.Valid(b) {
		return string(b)
	}
	return Latin1(b)
}

// Latin1 decodes b as ISO-8859-1.
func Latin1(b []byte) string {
	return string(AppendLatin1(make([]byte, 0, len(b)+len(b)/4), b))
}

// AppendLatin1 appends ISO-8859-1 text b to dst as UTF-8.
func AppendLatin1(dst, b []byte) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(b))[:n+2*len(b)]
	for len(b) > 0 {
		// Copy the ASCII run, then convert one byte.
		i := 0
		for i < len(b) && b[i] < utf8.RuneSelf {
			i++
		}
		n += copy(dst[n:], b[:i])
		if i == len(b) {
			break
		}
		c := b[i]
		dst[n], dst[n+1] = 0xC0|c>>6, 0x80|c&0x3F
		n += 2
		b = b[i+1:]
	}
	return dst[:n]
}

// RealDir returns the absolute path of the project's testdata/real folder,
// found by walking up from the working directory to the directory holding
// go.mod.
func RealDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "real"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("datafile: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// RealPath returns the path of rel (slash-separated, relative to
// testdata/real) in the project's testdata/real folder.
func RealPath(rel string) (string, error) {
	dir, err := RealDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), nil
}
