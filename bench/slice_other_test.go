//go:build !linux

package bench

import (
	"errors"
	"time"
)

func processSlice(d time.Duration) error { return errors.New("custom time slices are Linux's") }
