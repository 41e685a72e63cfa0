package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// maxLinks bounds the symbolic links Target follows (Linux's MAXSYMLINKS
// is 40).
const maxLinks = 40

// Target returns the path that a write replacing path atomically must
// rename its temporary file onto: path itself, or, when path is a
// symbolic link, the file the chain of links finally names, so that the
// links stay and their target is replaced (a keys file or snapshot
// mounted through a link keeps being the file readers open). A relative
// link is read from its own folder, that folder's links resolved
// (filepath.EvalSymlinks). The final target need not exist: a path that
// does not exist, or a link to a missing file, gives the path to create.
// A chain longer than 40 links is an error.
func Target(path string) (string, error) {
	p := path
	for range maxLinks {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		l, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(l) {
			dir, err := filepath.EvalSymlinks(filepath.Dir(p))
			if err != nil {
				return "", err
			}
			l = filepath.Join(dir, l)
		}
		p = l
	}
	return "", fmt.Errorf("%s: more than %d symbolic links", path, maxLinks)
}
