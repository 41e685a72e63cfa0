package snapshot

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// pauseGC disables collection for large loads under a bounded memory
// limit, nests, and restores the previous settings when the last pause
// ends; small inputs leave the collector alone.
func TestPauseGC(t *testing.T) {
	pct0 := debug.SetGCPercent(100)
	defer debug.SetGCPercent(pct0)
	lim0 := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(lim0)

	pauseGC(gcPauseMin-1, 1<<30)()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("small input changed GC percent to %d", got)
	}

	r1 := pauseGC(gcPauseMin, 1<<20)
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("paused: GC percent %d, want -1", got)
	}
	lim1 := debug.SetMemoryLimit(-1)
	if lim1 == math.MaxInt64 || lim1 < gcPauseMin+gcPauseGrowth<<20 {
		t.Errorf("paused: memory limit %d, want a bound covering the load", lim1)
	}
	r2 := pauseGC(gcPauseMin, 1<<20)
	if lim2 := debug.SetMemoryLimit(-1); lim2 != lim1+gcPauseMin+gcPauseGrowth<<20 {
		t.Errorf("nested: memory limit %d, want %d", lim2, lim1+gcPauseMin+gcPauseGrowth<<20)
	}
	r2()
	r2() // idempotent
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("after the inner resume: GC percent %d, want still -1", got)
	}
	r1()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("resumed: GC percent %d, want 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("resumed: memory limit %d, want none", got)
	}

	// A limit set by the process is kept, not replaced.
	debug.SetMemoryLimit(1 << 40)
	r := pauseGC(gcPauseMin, 1<<20)
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("paused under a process limit: limit %d, want %d", got, int64(1<<40))
	}
	r()
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("resumed: limit %d, want %d", got, int64(1<<40))
	}
}

// Load reads, decodes and indexes a snapshot; errors name the file.
func TestLoad(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.snap")
	want, err := BuildFromBundle(smallBundle(t), out, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ds, h, err := Load(out, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.ID != want.ID || ds == nil {
		t.Fatalf("Load: header id %q, want %q (dataset %v)", h.ID, want.ID, ds != nil)
	}
	if _, _, err := Load(goldenPath, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "unknown sub_industry_id") {
		t.Errorf("Load of an unindexable universe: err = %v, want the Build error", err)
	}
	if _, _, err := Load(filepath.Join(t.TempDir(), "absent"), LoadOptions{}); err == nil {
		t.Error("missing file: no error")
	}
}

// Only a load that asks for it (LoadOptions.PauseGC) pauses the
// collector; ReadFile and Decode never do.
func TestLoadPausesOnlyWhenAsked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.snap")
	if _, err := BuildFromBundle(smallBundle(t), out, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var pauses int
	defer func(f func(file, raw int64) func()) { startPause = f }(startPause)
	startPause = func(file, raw int64) func() {
		pauses++
		return pauseGC(file, raw)
	}
	for _, c := range []struct {
		name string
		load func() error
		want int
	}{
		{"Load", func() error { _, _, err := Load(out, LoadOptions{}); return err }, 0},
		{"Load PauseGC", func() error { _, _, err := Load(out, LoadOptions{PauseGC: true}); return err }, 2}, // Load, then the decode
		{"ReadFile", func() error { _, _, err := ReadFile(out); return err }, 0},
		{"Decode", func() error { _, _, err := Decode(b); return err }, 0},
	} {
		pauses = 0
		if err := c.load(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pauses != c.want {
			t.Errorf("%s: %d pauses, want %d", c.name, pauses, c.want)
		}
	}
}
