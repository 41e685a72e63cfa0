package main

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSlowlorisAbsorbed: 200 connections that trickle a request header a
// byte at a time are cut by the header timeout, while ordinary requests
// sent meanwhile all succeed.
func TestSlowlorisAbsorbed(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys = snap, keys
	cfg.ReadHeaderTimeout = 500 * time.Millisecond
	m, stop := startServe(t, cfg, nil)
	defer stop()

	var cut atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", m.Addr())
			if err != nil {
				return
			}
			defer c.Close()
			hdr := "GET /v2/companies HTTP/1.1\r\nHost: x\r\nX-Slow: a" // then "a" forever
			start := time.Now()
			for i := 0; time.Since(start) < waitBound; i++ { // until cut: the bound only guards a hang
				b := []byte{hdr[min(i, len(hdr)-1)]}
				if _, err := c.Write(b); err != nil {
					cut.Add(1)
					return
				}
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				var buf [512]byte
				if n, err := c.Read(buf[:]); n > 0 || err != nil && !isTimeout(err) {
					cut.Add(1) // the server answered (408/400) or closed
					return
				}
			}
		}()
	}
	ok := 0
	for i := 0; i < 100; i++ {
		if code, _ := get(t, "http://"+m.Addr()+"/v2/companies/ENHZ", key); code == 200 {
			ok++
		}
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	if ok != 100 || cut.Load() != 200 {
		t.Errorf("%d of 100 ordinary requests succeeded; %d of 200 slow connections cut", ok, cut.Load())
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
