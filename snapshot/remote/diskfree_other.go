//go:build !(linux || darwin || freebsd || dragonfly)

package remote

// diskFree does not know the free space here: only MaxBytes (and a write
// failing with ENOSPC) bound a download.
func diskFree(dir string) (int64, bool) { return 0, false }
