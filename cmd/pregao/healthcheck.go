package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// exitStatus is an error that makes the process exit with its status
// instead of 2 (see mainStatus).
type exitStatus struct {
	status int
	err    error
}

func (e *exitStatus) Error() string { return e.err.Error() }
func (e *exitStatus) Unwrap() error { return e.err }

// runHealthcheck implements "pregao healthcheck [--url URL] [--wait D]":
// it asks a running server's /readyz and exits 0 when it answers 200, 1
// otherwise (a container's HEALTHCHECK: 1 is "unhealthy"). The default
// URL is /readyz on PREGAO_ADDR (a wildcard host as 127.0.0.1), else on
// 127.0.0.1:8080. With --wait it asks again every 250 ms until the
// server is ready or D has passed (make run waits for the demo's load
// this way).
func runHealthcheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", defaultHealthURL(os.Getenv("PREGAO_ADDR")), "the server's readiness URL")
	wait := fs.Duration("wait", 0, "ask again until ready or this long has passed (0: ask once)")
	timeout := fs.Duration("timeout", 3*time.Second, "time out each request after this long")
	quiet := fs.Bool("quiet", false, "print nothing when ready")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("healthcheck: unexpected argument %q", fs.Arg(0))
	}
	client := &http.Client{Timeout: *timeout}
	deadline := time.Now().Add(*wait)
	for {
		status, msg, err := askReady(ctx, client, *url)
		if err == nil && status == http.StatusOK {
			if !*quiet {
				fmt.Fprintf(stdout, "ready: %s\n", msg)
			}
			return nil
		}
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			if err == nil {
				err = fmt.Errorf("%s: %d %s", *url, status, msg)
			}
			return &exitStatus{status: 1, err: fmt.Errorf("healthcheck: not ready: %w", err)}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// askReady GETs url and returns the status and the start of the body.
func askReady(ctx context.Context, client *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

// defaultHealthURL is /readyz on addr (serve's --addr: "host:port" or
// ":port"), the wildcard hosts as 127.0.0.1.
func defaultHealthURL(addr string) string {
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/readyz"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz"
}
