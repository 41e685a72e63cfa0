//go:build !linux

package main

import (
	"errors"
	"net"
	"time"
)

// setUserTimeout does nothing where TCP has no user timeout: the write
// deadlines still cut a connection whose client stops reading.
func setUserTimeout(*net.TCPConn, time.Duration) error { return nil }

// userTimeout is not known where TCP has no user timeout.
func userTimeout(*net.TCPConn) (time.Duration, error) {
	return 0, errors.New("no TCP user timeout on this system")
}
