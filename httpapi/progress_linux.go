package httpapi

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ackedBytes returns the bytes c's peer has acknowledged (TCP_INFO's
// tcpi_bytes_acked), false when c is not a TCP socket.
func ackedBytes(c net.Conn) (uint64, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) {
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil || ierr != nil {
		return 0, false
	}
	return info.Bytes_acked, true
}
