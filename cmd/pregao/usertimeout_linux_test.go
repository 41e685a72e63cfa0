package main

import (
	"net"
	"testing"
	"time"
)

// A connection the server accepts has the listener's TCP user timeout
// (serve gives it the write timeout), or the system's when it is 0.
func TestAcceptedConnUserTimeout(t *testing.T) {
	for _, want := range []time.Duration{30 * time.Second, 0} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := newConnListener(ln, want)
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c, err := cl.Accept()
		if err != nil {
			t.Fatal(err)
		}
		got, err := userTimeout(c.(*serverConn).Conn.(*net.TCPConn))
		if err != nil || got != want {
			t.Errorf("TCP user timeout %v, %v; want %v", got, err, want)
		}
		client.Close()
		c.Close()
		cl.Close()
	}
}
