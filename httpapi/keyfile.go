package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/pregao/pregao/internal/atomicfile"
)

// UpdateKeysFile applies change to the keys file at path and writes the
// result atomically. Concurrent updates, from this process or others, are
// serialized by an exclusive lock on path+".lock" held from the read to the
// rename, so no update is lost and a removed key is never resurrected.
//
// A path that is a symbolic link is written through: the file the chain of
// links names (atomicfile.Target) is locked, read and replaced in its own
// folder, and the links stay (a keys file mounted through a link keeps
// being the file the server reads); path+".lock" is then beside that file.
//
// The new file keeps the owner, group and permission bits of the file it
// replaces (a new file is 0600, owned by the caller); when the owner cannot
// be kept the update fails and the old file is left as it was. The data and
// the directory entry are synced before UpdateKeysFile returns, and it
// returns nil only after reading the file back and finding the bytes it
// wrote. A missing file starts as an empty KeysFile. change must not keep f.
func UpdateKeysFile(path string, change func(f *KeysFile) error) error {
	target, err := atomicfile.Target(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	path = target
	// Anything but a regular file (a folder, a device) is refused before
	// the lock beside it is made: a refused update leaves nothing behind.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", path, st.Mode().Type())
	}
	unlock, err := atomicfile.Lock(path + ".lock")
	if err != nil {
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	defer unlock()
	f, err := ReadKeysFile(path)
	if err != nil {
		return err
	}
	if err := change(&f); err != nil {
		return err
	}
	if _, err := NewKeys(f); err != nil {
		return err
	}
	b, err := encodeKeysFile(f)
	if err != nil {
		return err
	}
	if err := replaceFile(path, b, 0o600); err != nil {
		return err
	}
	got, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, b) {
		return fmt.Errorf("%s: changed by another writer that does not take %s.lock; the update may be lost", path, filepath.Base(path))
	}
	return nil
}

// WriteKeysFile replaces the keys file at path with f atomically, under
// the same lock as UpdateKeysFile and with the same owner and mode rules.
func WriteKeysFile(path string, f KeysFile) error {
	return UpdateKeysFile(path, func(cur *KeysFile) error {
		*cur = f
		return nil
	})
}

// encodeKeysFile returns the file bytes of f: keys sorted by name,
// indented JSON, a final newline.
func encodeKeysFile(f KeysFile) ([]byte, error) {
	keys := append([]KeyEntry(nil), f.Keys...)
	sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
	if keys == nil {
		keys = []KeyEntry{}
	}
	f.Keys = keys
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// replaceFile replaces the file at path with b (atomicfile.Create and
// Commit). The new file takes the owner, group and permission bits of the
// existing path, or mode (owned by the caller) when there is none. On any
// error path is unchanged.
func replaceFile(path string, b []byte, mode fs.FileMode) error {
	uid, gid := -1, -1
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
		uid, gid = fileOwner(st)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	f, err := atomicfile.Create(path, mode)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return err
	}
	if uid >= 0 && (uid != os.Getuid() || gid != os.Getgid()) {
		if err := f.Chown(uid, gid); err != nil {
			return fmt.Errorf("%s: cannot keep its owner %d:%d (run as that user or root): %w", path, uid, gid, err)
		}
	}
	return f.Commit()
}
