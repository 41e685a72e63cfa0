package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	json "github.com/goccy/go-json"
)

// FileManifest is the name of a bundle's manifest: the list of its files
// with their sizes, row counts and SHA-256 checksums. Write writes it
// last, into the bundle's staging folder, so a bundle with a manifest is
// complete; Read verifies every file against it.
const FileManifest = "manifest.json"

// ManifestVersion is the version of the manifest document.
const ManifestVersion = 1

// Manifest is the document of manifest.json.
type Manifest struct {
	Version int            `json:"manifest_version"`
	Files   []ManifestFile `json:"files"` // in canonical file order
}

// ManifestFile describes one file of a bundle.
type ManifestFile struct {
	Name   string `json:"name"`   // file name, with its compression suffix
	Bytes  int64  `json:"bytes"`  // size of the file as stored (compressed)
	Rows   int64  `json:"rows"`   // data rows: lines, less the header line of a CSV file
	SHA256 string `json:"sha256"` // lowercase hex digest of the stored bytes
}

// ReadManifest reads the manifest of the bundle in dir. It returns
// fs.ErrNotExist (wrapped) when the bundle has none.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileManifest))
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", FileManifest, err)
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("%s: manifest_version %d, want %d", FileManifest, m.Version, ManifestVersion)
	}
	seen := map[string]bool{}
	for _, f := range m.Files {
		base, _ := splitName(f.Name)
		if !slices.Contains(Files, base) || strings.ContainsAny(f.Name, `/\`) {
			return nil, fmt.Errorf("%s: unknown file %q", FileManifest, f.Name)
		}
		if seen[base] {
			return nil, fmt.Errorf("%s: %s listed twice", FileManifest, base)
		}
		seen[base] = true
		if d, err := hex.DecodeString(f.SHA256); err != nil || len(d) != sha256.Size || f.Bytes < 0 || f.Rows < 0 {
			return nil, fmt.Errorf("%s: %s: bad sha256, bytes or rows", FileManifest, f.Name)
		}
	}
	return &m, nil
}

// fileStats accumulates a written file's manifest entry.
type fileStats struct {
	sum   hash.Hash // of the stored bytes
	bytes int64
	size  int64 // uncompressed content bytes
	lines int64 // '\n' in the uncompressed content
	last  byte  // last uncompressed byte written
}

func newFileStats() *fileStats { return &fileStats{sum: sha256.New()} }

// stored returns a writer that counts and hashes the stored bytes.
func (s *fileStats) stored(w io.Writer) io.Writer { return storedWriter{w, s} }

type storedWriter struct {
	w io.Writer
	s *fileStats
}

func (sw storedWriter) Write(p []byte) (int, error) {
	n, err := sw.w.Write(p)
	sw.s.sum.Write(p[:n])
	sw.s.bytes += int64(n)
	return n, err
}

// content counts the lines of the uncompressed content.
func (s *fileStats) content(p []byte) {
	if len(p) > 0 {
		s.size += int64(len(p))
		s.lines += int64(bytes.Count(p, []byte{'\n'}))
		s.last = p[len(p)-1]
	}
}

func (s *fileStats) entry(name string) ManifestFile {
	rows := s.lines
	if s.size > 0 && s.last != '\n' {
		rows++ // a last line without its newline
	}
	if strings.HasSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".zst"), ".gz"), ".csv") && rows > 0 {
		rows-- // the header
	}
	return ManifestFile{Name: name, Bytes: s.bytes, Rows: rows, SHA256: hex.EncodeToString(s.sum.Sum(nil))}
}

// writeManifest writes m as dir/manifest.json, synced.
func writeManifest(dir string, m *Manifest) error {
	slices.SortFunc(m.Files, func(a, b ManifestFile) int {
		return fileOrder(a.Name) - fileOrder(b.Name)
	})
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, FileManifest), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if syncFiles {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// ErrNoManifest is returned by Read with RequireManifest when the bundle
// has no manifest.json: it may be incomplete (a writer was stopped) or
// written by hand.
var ErrNoManifest = errors.New("no " + FileManifest + ": the bundle may be incomplete (pregao generate and import write the manifest last); a bundle written by hand can be built with --no-manifest")

// checkAgainstManifest compares the bundle files found in dir (base ->
// file name) with m: the same files, no more, no fewer. Sizes and
// checksums are compared as the files are read (see hashedFile).
func checkAgainstManifest(m *Manifest, names map[string]string, c *collector) map[string]ManifestFile {
	want := make(map[string]ManifestFile, len(m.Files))
	for _, f := range m.Files {
		base, _ := splitName(f.Name)
		want[base] = f
		got, ok := names[base]
		switch {
		case !ok:
			c.addf(f.Name, 0, "", "listed in %s but missing: the bundle is incomplete", FileManifest)
		case got != f.Name:
			c.addf(got, 0, "", "%s lists it as %s", FileManifest, f.Name)
		}
	}
	for base, name := range names {
		if _, ok := want[base]; !ok {
			c.addf(name, 0, "", "not listed in %s: a file was added after the bundle was written", FileManifest)
		}
	}
	return want
}

// hashedFile reads a file while hashing and counting its stored bytes.
type hashedFile struct {
	f     *os.File
	sum   hash.Hash
	n     int64
	meter Meter // counts the bytes read (nil: none)
}

func (h *hashedFile) Read(p []byte) (int, error) {
	n, err := h.f.Read(p)
	h.sum.Write(p[:n])
	h.n += int64(n)
	if h.meter != nil {
		h.meter.Add(int64(n))
	}
	return n, err
}

func (h *hashedFile) Close() error { return h.f.Close() }

// verify reads what the decoder left of the file and compares its size and
// checksum with want.
func (h *hashedFile) verify(want ManifestFile) error {
	if _, err := io.Copy(io.Discard, h); err != nil {
		return err
	}
	if h.n != want.Bytes {
		return fmt.Errorf("%d bytes, %s says %d: the file was changed or cut", h.n, FileManifest, want.Bytes)
	}
	if got := hex.EncodeToString(h.sum.Sum(nil)); got != want.SHA256 {
		return fmt.Errorf("SHA-256 %s, %s says %s: the file was changed or is corrupt", got[:12], FileManifest, want.SHA256[:12])
	}
	return nil
}
