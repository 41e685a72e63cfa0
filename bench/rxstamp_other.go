//go:build !linux

package bench

import (
	"context"
	"net"
	"time"
)

// rxStampDialer: the kernel's receive times are read on Linux only.
func rxStampDialer() (func(ctx context.Context, network, addr string) (net.Conn, error), bool) {
	return nil, false
}

// rxStamped returns c: the kernel's receive times are read on Linux
// only.
func rxStamped(c net.Conn) net.Conn { return c }

// rxConn is never made here.
type rxConn struct{ net.Conn }

func (c *rxConn) received() (time.Time, bool) { return time.Time{}, false }
