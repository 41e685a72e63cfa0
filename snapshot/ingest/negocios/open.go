package negocios

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// File is a Scanner over an opened file; Close releases it.
type File struct {
	*Scanner
	// Name is the name of the text the rows come from: the file's path,
	// or "ARCHIVE.zip!NAME.txt" inside a zip.
	Name  string
	close func() error
}

// Close closes the underlying file.
func (f *File) Close() error { return f.close() }

// zipMagic starts every zip archive.
var zipMagic = []byte("PK\x03\x04")

// Open opens a trade file: a text file (plain, or .zst/.gz compressed, as
// datafile.Open reads them) or a zip archive holding exactly one .txt
// (recognized by its content, whatever its name). The caller must Close
// the result.
func Open(name string, opt Options) (*File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	if bytes.Equal(head[:n], zipMagic) {
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		zf, err := OpenZip(f, st.Size(), name, opt)
		if err != nil {
			f.Close()
			return nil, err
		}
		inner := zf.close
		zf.close = func() error { inner(); return f.Close() }
		return zf, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	rc, err := datafile.Decompress(f, name)
	if err != nil {
		f.Close()
		return nil, err
	}
	s, err := NewScanner(rc, name, opt)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &File{Scanner: s, Name: name, close: rc.Close}, nil
}

// OpenBytes opens a trade file held in memory (a download): a zip archive
// holding one .txt, or the text itself. name is used in errors.
func OpenBytes(b []byte, name string, opt Options) (*File, error) {
	if bytes.HasPrefix(b, zipMagic) {
		return OpenZip(bytes.NewReader(b), int64(len(b)), name, opt)
	}
	s, err := NewScanner(bytes.NewReader(b), name, opt)
	if err != nil {
		return nil, err
	}
	return &File{Scanner: s, Name: name, close: func() error { return nil }}, nil
}

// OpenZip opens the one .txt of a zip archive of size bytes read from ra;
// name (the archive's) is used in errors. Closing the result does not
// close ra.
func OpenZip(ra io.ReaderAt, size int64, name string, opt Options) (*File, error) {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var txt *zip.File
	for _, zf := range zr.File {
		if strings.HasSuffix(zf.Name, "/") {
			continue
		}
		if !strings.EqualFold(path.Ext(zf.Name), ".txt") {
			continue
		}
		if txt != nil {
			return nil, fmt.Errorf("%s: holds %s and %s: want one .txt", name, txt.Name, zf.Name)
		}
		txt = zf
	}
	if txt == nil {
		return nil, fmt.Errorf("%s: %w", name, errNoText)
	}
	rc, err := txt.Open()
	if err != nil {
		return nil, fmt.Errorf("%s!%s: %w", name, txt.Name, err)
	}
	inner := name + "!" + txt.Name
	s, err := NewScanner(rc, inner, opt)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return &File{Scanner: s, Name: inner, close: rc.Close}, nil
}

var errNoText = errors.New("holds no .txt file")
