package atomicfile

import "golang.org/x/sys/unix"

// exchange swaps the entries a and b atomically.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
