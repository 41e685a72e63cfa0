package fetch

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/pregao/pregao/internal/atomicfile"
)

// lockDir takes the lock of dir's LockName (atomicfile.Lock), creating dir
// if needed, and returns its release. It blocks while another fetch holds
// it, so that two commands fetching into one folder take turns instead of
// writing the same partial files and manifest; a killed command's lock
// goes with its process. Without flock (not Unix), concurrent fetches into
// one folder are not serialized.
func lockDir(dir string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	unlock, err = atomicfile.Lock(filepath.Join(dir, LockName))
	if errors.Is(err, errors.ErrUnsupported) {
		return func() {}, nil
	}
	return unlock, err
}
