//go:build !unix

package mapfile

import (
	"errors"
	"os"
)

// mapFile is not available here: Open reads the file instead.
func mapFile(*os.File, int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmap([]byte) error { return nil }
