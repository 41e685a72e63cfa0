package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStalledBodyIs408: a POST whose body stops arriving gets, after the
// read timeout, a 408 JSON error that does not quote the server's socket
// addresses.
func TestStalledBodyIs408(t *testing.T) {
	snap, keys, key := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys = snap, keys
	cfg.ReadTimeout = 300 * time.Millisecond
	m, stop := startServe(t, cfg, nil)
	defer stop()

	conn, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(waitBound)) // the 408 comes after ReadTimeout: a bound against a hang
	io.WriteString(conn, "POST /v2/quotes HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+key+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tickers\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("status %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if strings.Contains(string(body), "127.0.0.1") || !strings.Contains(string(body), `"status":408`) {
		t.Errorf("body %s: want a 408 JSON error without addresses", body)
	}
}
