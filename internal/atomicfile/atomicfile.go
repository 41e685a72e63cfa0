package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// TempPattern returns the os.CreateTemp / os.MkdirTemp pattern of a
// temporary entry for a file or folder named base: ".base.tmp-PID-*".
func TempPattern(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-*"
}

// TempOf returns the base name of a temporary entry named name
// (TempPattern's form, ".base.tmp-PID-RANDOM", or an older version's
// ".base.tmp-RANDOM", RANDOM then standing for the process id) and the
// id of the process that made it; ok is false for any other name.
func TempOf(name string) (base string, pid int, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	i := strings.LastIndex(rest, ".tmp-")
	if !ok || i < 1 {
		return "", 0, false
	}
	pidText, _, _ := strings.Cut(rest[i+len(".tmp-"):], "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		return "", 0, false
	}
	return rest[:i], pid, true
}

// RemoveStale removes the temporary entries (files or folders) for
// dir/base left by writers that are no longer running, and returns their
// names. Entries of running processes, this one included, are kept.
// Entries written by older versions (".base.tmp-RANDOM") are treated the
// same way, RANDOM standing for the process id. Errors are ignored: a
// stale entry that cannot be removed is retried by the next writer.
func RemoveStale(dir, base string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		b, pid, ok := TempOf(e.Name())
		if !ok || b != base || pid <= 0 || alive(pid) {
			continue
		}
		if os.RemoveAll(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// SwapDir makes the complete folder tmp appear at dir in one step and
// removes what dir held before. When dir exists, the two are exchanged
// atomically where the system can (Linux renameat2 RENAME_EXCHANGE), so a
// reader or a crash sees the old folder or the new one, never a mix or
// neither; elsewhere the old folder is first renamed aside. tmp must be a
// sibling of dir.
func SwapDir(tmp, dir string) error {
	if filepath.Dir(filepath.Clean(tmp)) != filepath.Dir(filepath.Clean(dir)) {
		return fmt.Errorf("atomicfile: %s and %s are not in the same folder", tmp, dir)
	}
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(tmp, dir); err == nil {
			return syncDir(filepath.Dir(dir))
		}
		// Created meanwhile by another writer: exchange with it.
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("atomicfile: %s exists and is not a folder", dir)
	}
	if err := exchange(tmp, dir); err != nil {
		return err
	}
	if err := syncDir(filepath.Dir(dir)); err != nil {
		return err
	}
	return os.RemoveAll(tmp) // now the old folder
}
