package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
)

func TestMeterLine(t *testing.T) {
	for _, c := range []struct {
		st   snapshot.State
		want string
	}{
		{snapshot.State{Phase: "decode", Unit: "bytes", Done: 512_000_000, Total: 1_250_300_000, Elapsed: 4100 * time.Millisecond, PhaseElapsed: 2 * time.Second},
			"build: decode [#########---------------] 40%  512.0 of 1250.3 MB  256.0 MB/s  4.1 s"},
		{snapshot.State{Phase: "derive ratios", Unit: "companies", Done: 1234, Total: 9130, Elapsed: 12300 * time.Millisecond, PhaseElapsed: 4 * time.Second},
			"build: derive ratios [###---------------------] 13%  1,234 of 9,130 companies  309/s  12.3 s"},
		{snapshot.State{Phase: "read bundle", Unit: "bytes", Done: 3_000_000, Elapsed: time.Second, PhaseElapsed: 100 * time.Millisecond},
			"build: read bundle  3.0 MB  1.0 s"},
		{snapshot.State{Phase: "index", Elapsed: 15 * time.Second},
			"build: index  15.0 s"},
		{snapshot.State{Phase: "encode", Unit: "sections", Done: 14, Total: 14, Elapsed: time.Second, PhaseElapsed: time.Second},
			"build: encode [########################] 100%  14 of 14 sections  14/s  1.0 s"},
	} {
		if got := meterLine("build", c.st); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := groupDigits(n); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", n, got, want)
		}
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The line is redrawn in place while the work runs and erased at the end;
// off a terminal nothing is drawn.
func TestMeterDraws(t *testing.T) {
	var w syncBuf
	p, stop := drawMeter(&w, "generate", time.Millisecond)
	p.Begin("simulate", "entities", 10)
	p.Add(4)
	waitUntil(t, "the line drawn", func() bool { return strings.Contains(w.String(), "4 of 10 entities") })
	stop()
	stop() // twice is harmless
	out := w.String()
	if !strings.Contains(out, "\r\033[Kgenerate: simulate [#########---------------] 40%  4 of 10 entities") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("drawn: %q", out)
	}
	var piped bytes.Buffer
	q, stop2 := startMeter(&piped, "build")
	q.Begin("encode", "sections", 3)
	q.Add(3)
	stop2()
	if q != nil || piped.Len() != 0 {
		t.Errorf("off a terminal: progress %v, drew %q", q, piped.String())
	}
}
