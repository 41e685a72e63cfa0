package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
)

// A stream holds no Dataset of its own: its catch-up reads the one of
// the hub's view. Read from a format 6 snapshot cut in place under it
// (the column area gone), that read fails the snapshot as a request's
// does: the stream is answered 503, or ends with a comment saying so
// when its status was sent; /readyz answers 503, the next stream 503,
// and no handler panic is counted.
func TestStreamCutInPlace(t *testing.T) {
	f := liveFixtureOf(t)
	served := filepath.Join(t.TempDir(), "served.snap")
	if _, err := snapshot.BuildFromBundle(f.baseBundle, served, snapshot.WriteOptions{Version: 6}); err != nil {
		t.Fatal(err)
	}
	h, err := snapshot.ReadHeader(served)
	if err != nil || h.Columns == 0 {
		t.Fatalf("header %+v, %v: want a column area", h, err)
	}
	m, stop := serveLive(t, f, served, func(c *ServeConfig) {
		c.Live.Feed, c.Live.FeedSpeed, c.Live.Dir = "replay:"+f.session, "max", t.TempDir()
		// Every block verified before the snapshot serves: no background
		// pass reads the file after the cut.
		c.VerifyRateMB = 0
	})
	defer stop()
	waitComplete(t, m)
	var tickers []string
	for _, as := range loadDataset(t, f.full).Assets() {
		if lo, hi := as.MinuteRange(int64(f.day)*86400, int64(f.day+1)*86400-1); hi > lo && len(tickers) < 20 {
			tickers = append(tickers, as.Ticker)
		}
	}
	if len(tickers) == 0 {
		t.Fatal("no ticker trades in the session")
	}
	base := "http://" + m.Addr()
	stream := func() (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v2/stream/quotes?tickers="+strings.Join(tickers, ","), nil)
		req.Header.Set("Authorization", "Bearer "+f.key)
		// From before the session: the catch-up reads every ticker's
		// previous close from the daily bars' columns.
		req.Header.Set("Last-Event-ID", "0.0.0.0/0.0.0.0//s0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body) // the stream ends by itself
		if err != nil {
			t.Fatalf("stream: %d, %v after %.300s", resp.StatusCode, err, b)
		}
		return resp.StatusCode, string(b)
	}

	if err := os.Truncate(served, h.ColumnsOffset); err != nil {
		t.Fatal(err)
	}
	switch code, body := stream(); {
	case code == 503 && strings.Contains(body, "changed in place"):
	case code == 200 && strings.Contains(body, ": the snapshot is damaged"):
	default:
		t.Fatalf("a stream from a cut file: %d %.500s", code, body)
	}
	if code, body := get(t, base+"/readyz", ""); code != 503 || !strings.Contains(body, "changed in place") {
		t.Errorf("/readyz after the fault: %d %s", code, body)
	}
	if code, body := stream(); code != 503 {
		t.Errorf("the next stream: %d %.300s", code, body)
	}
	_, metrics := get(t, base+"/metrics", "")
	if !strings.Contains(metrics, "\npregao_http_panics_total 0\n") {
		i := strings.Index(metrics, "pregao_http_panics_total ")
		t.Errorf("a fault counted as a handler panic: %.40s", metrics[max(i, 0):])
	}
}
