//go:build !unix

package atomicfile

import "errors"

// Lock is not available on this platform (no flock): it returns
// errors.ErrUnsupported, and each caller decides whether to go on without
// the lock.
func Lock(string) (func(), error) { return nil, errors.ErrUnsupported }
