//go:build !linux

package atomicfile

import "os"

// exchange swaps a and b with two renames: b goes aside under a's name
// pattern, a takes b's place, and the old b ends at a. A crash between the
// renames leaves b missing and its old content at a temporary name.
func exchange(a, b string) error {
	aside := a + ".old"
	if err := os.Rename(b, aside); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(aside, b)
		return err
	}
	return os.Rename(aside, a)
}
