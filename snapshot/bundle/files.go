package bundle

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// File base names of a bundle, in canonical order. Each may carry a
// ".zst" or ".gz" suffix.
const (
	FileMeta           = "meta.json"
	FileSectors        = "sectors.jsonl"
	FileCompanies      = "companies.jsonl"
	FileSecurities     = "securities.jsonl"
	FileRenames        = "renames.jsonl"
	FileIndexes        = "indexes.jsonl"
	FileReports        = "reports.jsonl"
	FileShares         = "shares.jsonl"
	FileCashActions    = "cash_actions.jsonl"
	FileShareActions   = "share_actions.jsonl"
	FileFundReports    = "fund_reports.jsonl"
	FileInsiderReports = "insider_reports.jsonl"
	FileDocuments      = "documents.jsonl"
	FileDaily          = "daily.csv"
	FileIntraday       = "intraday.csv"
)

// Files lists every file base name of a bundle in canonical order.
var Files = []string{
	FileMeta, FileSectors, FileCompanies, FileSecurities, FileRenames,
	FileIndexes, FileReports, FileShares, FileCashActions, FileShareActions,
	FileFundReports, FileInsiderReports, FileDocuments, FileDaily, FileIntraday,
}

// RequiredFiles must be present in every bundle (possibly empty, except
// meta.json).
var RequiredFiles = []string{FileMeta, FileCompanies, FileSecurities}

// Compression names accepted by WriteOptions.
const (
	CompressZstd = "zstd"
	CompressGzip = "gzip"
	CompressNone = "none"
)

var (
	magicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
	magicGzip = []byte{0x1f, 0x8b}
)

// ignoredFile reports whether name is not part of the data and is skipped:
// hidden files and README, LICENSE, NOTICE or PROVENANCE files.
func ignoredFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return true
	}
	stem, _, _ := strings.Cut(name, ".")
	switch stem {
	case "README", "LICENSE", "NOTICE", "PROVENANCE":
		return true
	}
	return false
}

// splitName returns the base name and compression of a file name.
func splitName(name string) (base, comp string) {
	switch {
	case strings.HasSuffix(name, ".zst"):
		return strings.TrimSuffix(name, ".zst"), CompressZstd
	case strings.HasSuffix(name, ".gz"):
		return strings.TrimSuffix(name, ".gz"), CompressGzip
	}
	return name, CompressNone
}

func fileOrder(name string) int {
	base, _ := splitName(name)
	for i, f := range Files {
		if f == base {
			return i
		}
	}
	return len(Files)
}

// listing maps the base names present in a bundle directory to their file
// names. Problems (unknown files, directories, duplicates, missing required
// files) go to c.
func listing(dir string, c *collector) (map[string]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	known := make(map[string]bool, len(Files))
	for _, f := range Files {
		known[f] = true
	}
	found := make(map[string]string)
	for _, e := range ents {
		name := e.Name()
		if ignoredFile(name) || name == FileManifest {
			continue
		}
		if e.IsDir() {
			c.addf(name, 0, "", "unexpected directory in bundle")
			continue
		}
		if t := e.Type(); !t.IsRegular() && t&fs.ModeSymlink == 0 {
			// A named pipe would block its read until some writer came.
			what := "a special file"
			switch {
			case t&fs.ModeNamedPipe != 0:
				what = "a named pipe"
			case t&fs.ModeSocket != 0:
				what = "a socket"
			case t&fs.ModeDevice != 0:
				what = "a device"
			}
			c.addf(name, 0, "", "%s, not a regular file", what)
			continue
		}
		base, _ := splitName(name)
		if !known[base] {
			c.addf(name, 0, "", "unknown file (want one of %s, optionally with .zst or .gz)", strings.Join(Files, ", "))
			continue
		}
		if prev, ok := found[base]; ok {
			c.addf(name, 0, "", "duplicate of %s: keep one of them", prev)
			continue
		}
		found[base] = name
	}
	for _, r := range RequiredFiles {
		if _, ok := found[r]; !ok {
			c.addf(r, 0, "", "required file missing")
		}
	}
	return found, nil
}

type multiCloser struct {
	io.Reader
	closers []func() error
}

func (m *multiCloser) Close() error {
	var errs []error
	for _, c := range m.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// decompress wraps f (named name) in the decompressor its suffix names,
// after checking the magic bytes.
func decompress(f io.ReadCloser, name string) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(f, 1<<16)
	head, _ := br.Peek(4)
	_, comp := splitName(name)
	isZstd := bytes.HasPrefix(head, magicZstd)
	isGzip := bytes.HasPrefix(head, magicGzip)
	switch comp {
	case CompressZstd:
		if !isZstd {
			return nil, errors.New("suffix .zst but content is not zstd (bad magic bytes)")
		}
		d, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return &multiCloser{Reader: d, closers: []func() error{func() error { d.Close(); return nil }, f.Close}}, nil
	case CompressGzip:
		if !isGzip {
			return nil, errors.New("suffix .gz but content is not gzip (bad magic bytes)")
		}
		g, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return &multiCloser{Reader: g, closers: []func() error{g.Close, f.Close}}, nil
	}
	if isZstd {
		return nil, errors.New("content is zstd-compressed: name the file with a .zst suffix")
	}
	if isGzip {
		return nil, errors.New("content is gzip-compressed: name the file with a .gz suffix")
	}
	return &multiCloser{Reader: br, closers: []func() error{f.Close}}, nil
}

// lineReader yields the lines of r without their terminator (LF or CRLF),
// skipping a UTF-8 byte order mark at the start. A line may be up to
// maxLine bytes.
type lineReader struct {
	sc *bufio.Scanner
	n  int
}

const maxLine = 256 << 20

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256<<10), maxLine)
	return &lineReader{sc: sc}
}

// next returns the next line and its 1-based number, or ok=false at the
// end (see err).
func (l *lineReader) next() (line []byte, n int, ok bool) {
	if !l.sc.Scan() {
		return nil, l.n, false
	}
	l.n++
	b := l.sc.Bytes()
	if l.n == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b, l.n, true
}

func (l *lineReader) err() error {
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d longer than %d bytes", l.n+1, maxLine)
		}
		return err
	}
	return nil
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
