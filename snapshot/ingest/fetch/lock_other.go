//go:build !unix

package fetch

import "os"

// lockDir creates dir; without flock, concurrent fetches into one folder
// are not serialized on this platform.
func lockDir(dir string) (func(), error) { return func() {}, os.MkdirAll(dir, 0o755) }
