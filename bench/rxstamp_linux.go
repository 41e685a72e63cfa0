package bench

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// rxStampDialer returns a dialer whose connections record when the
// kernel received the data each read returns (rxStamped), and true.
func rxStampDialer() (func(ctx context.Context, network, addr string) (net.Conn, error), bool) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return rxStamped(c), nil
	}, true
}

// rxStamped returns c recording the kernel's receive time of the data
// each read returns (SO_TIMESTAMPNS: the receive time of the last segment
// read, as TCP reports it) when c is a TCP connection and the kernel
// takes the option, else c itself.
func rxStamped(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return c
	}
	return &rxConn{TCPConn: tc, rc: rc}
}

// rxConn is a TCP connection whose reads record the kernel's receive
// time of what they return. One goroutine reads it at a time (the
// transport's).
type rxConn struct {
	*net.TCPConn
	rc   syscall.RawConn
	oob  [64]byte
	last atomic.Int64 // unix ns of the last segment read; 0: none yet
}

func (c *rxConn) Read(p []byte) (int, error) {
	var n, oobn int
	var rerr error
	err := c.rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), p, c.oob[:], 0)
		return rerr != syscall.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if ts, ok := rxTime(c.oob[:oobn]); ok {
		c.last.Store(ts)
	}
	return n, nil
}

// received returns the kernel's receive time of the last segment read.
func (c *rxConn) received() (time.Time, bool) {
	ns := c.last.Load()
	return time.Unix(0, ns), ns != 0
}

// rxTime returns the SCM_TIMESTAMPNS time in oob, in unix ns.
func rxTime(oob []byte) (int64, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			// struct timespec: seconds and nanoseconds, 64 bits each.
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:16]))
			return sec*1e9 + nsec, true
		}
	}
	return 0, false
}
