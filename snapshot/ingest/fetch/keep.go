package fetch

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pregao/pregao/internal/atomicfile"
)

// KeptLayout is the time format (UTC) in the name of an earlier download
// kept beside the newest one (KeptName).
const KeptLayout = "20060102T150405Z"

// KeptName is the name under which an earlier download of the file at p,
// stored at t, is kept beside the newest one (Item.Keep): p with "." and
// t in UTC (KeptLayout) before its extension. dfp_cia_aberta_2023.zip
// stored on 2026-11-30 at 22:06:19 UTC is kept as
// dfp_cia_aberta_2023.20261130T220619Z.zip. Sorted by name, the
// downloads of one file are in the order they were stored, p itself (the
// newest) last: the digit after the dot sorts before the extension's
// letters. The import reads every one of them (they keep the official
// name's prefix and extension).
func KeptName(p string, t time.Time) string {
	ext := filepath.Ext(p)
	return strings.TrimSuffix(p, ext) + "." + t.UTC().Format(KeptLayout) + ext
}

// settle puts the complete download part in dst's place. When keep is
// set (Item.Keep) and dst holds other content (sameContent), that
// content is kept beside it first, as KeptName(dst, stored) (keepAside),
// and a download of the content dst holds is dropped instead (same).
// stored is when dst's content was stored (zero: dst's modification
// time).
//
// Every step links or renames a complete, synced file, and dst is never
// missing, so a process killed at any point leaves each download whole
// under a name the import reads: at worst the newest twice (dst and its
// kept copy, when killed between the two), which the next fetch finds
// alike and the import reads as one. part is synced by the caller.
func settle(part, dst string, keep bool, stored time.Time) (same bool, keptAs string, err error) {
	if keep {
		fi, err := os.Stat(dst)
		switch {
		case err == nil:
			eq, err := sameContent(part, dst)
			if err != nil {
				return false, "", err
			}
			if eq {
				return true, "", os.Remove(part)
			}
			if stored.IsZero() {
				stored = fi.ModTime()
			}
			if keptAs, err = keepAside(dst, stored); err != nil {
				return false, "", fmt.Errorf("keeping the earlier download of %s: %w", filepath.Base(dst), err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return false, "", err
		}
	}
	if err := os.Rename(part, dst); err != nil {
		return false, "", err
	}
	return false, keptAs, atomicfile.SyncDir(filepath.Dir(dst))
}

// keepAside gives dst's content a second name, KeptName(dst, stored): a
// hard link (no copy; dst stays in place), or where the file system
// refuses links a copy written under a temporary name and renamed
// (atomicfile). A name taken by other content moves the time on by a
// second; one taken by the same content (a fetch killed before it put
// the new download in place) is the copy already.
func keepAside(dst string, stored time.Time) (string, error) {
	for i := range 60 {
		name := KeptName(dst, stored.Add(time.Duration(i)*time.Second))
		err := os.Link(dst, name)
		if err == nil {
			return name, atomicfile.SyncDir(filepath.Dir(dst))
		}
		if _, serr := os.Lstat(name); serr == nil {
			eq, cerr := sameContent(name, dst)
			if cerr != nil {
				return "", cerr
			}
			if eq {
				return name, nil
			}
			continue
		}
		// No link (a file system without them): a copy.
		err = atomicfile.WriteFile(name, 0o644, func(w io.Writer) error {
			f, err := os.Open(dst)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(w, f)
			return err
		})
		return name, err
	}
	return "", fmt.Errorf("%s: 60 names taken", KeptName(dst, stored))
}

// sameContent reports whether the files at a and b hold the same data:
// for two ZIP archives, members of the same names, sizes and CRC-32 (an
// archive made again from the same tables, with other modification times
// or compression, is the same publication); otherwise the same bytes.
func sameContent(a, b string) (bool, error) {
	za, errA := zip.OpenReader(a)
	zb, errB := zip.OpenReader(b)
	if errA == nil && errB == nil {
		defer za.Close()
		defer zb.Close()
		return sameMembers(za.File, zb.File), nil
	}
	if errA == nil {
		za.Close()
	}
	if errB == nil {
		zb.Close()
	}
	return sameBytes(a, b)
}

func sameMembers(a, b []*zip.File) bool {
	if len(a) != len(b) {
		return false
	}
	type sum struct {
		crc  uint32
		size uint64
	}
	m := make(map[string]sum, len(a))
	for _, f := range a {
		m[f.Name] = sum{f.CRC32, f.UncompressedSize64}
	}
	for _, f := range b {
		if s, ok := m[f.Name]; !ok || s != (sum{f.CRC32, f.UncompressedSize64}) {
			return false
		}
	}
	return len(m) == len(b)
}

func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	sa, err := fa.Stat()
	if err != nil {
		return false, err
	}
	sb, err := fb.Stat()
	if err != nil {
		return false, err
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ba, bb := make([]byte, 256<<10), make([]byte, 256<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea == io.EOF || ea == io.ErrUnexpectedEOF {
			return eb == ea, nil
		}
		if ea != nil {
			return false, ea
		}
		if eb != nil {
			return false, eb
		}
	}
}
