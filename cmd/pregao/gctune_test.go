package main

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
	"weak"
)

func TestGCPercentFor(t *testing.T) {
	const mib, gib = 1 << 20, 1 << 30
	for _, c := range []struct {
		name       string
		live, scan uint64
		base, want int
	}{
		{"scale 10: headroom the scannable heap", 5816 * mib, 1601 * mib, 100, 27},
		{"scale 1: base (headroom at least gcHeadroomMin)", 600 * mib, 161 * mib, 100, 100},
		{"at least gcHeadroomMin", 2 * gib, 161 * mib, 100, 50},
		{"small heap: headroom gcHeadroomSmall", 128 * mib, 50 * mib, 100, 200},
		{"scale 1, format 6: headroom gcHeadroomSmall", 83 * mib, 70 * mib, 100, 309},
		{"tiny heap: at most gcPercentMax", 5 * mib, 5 * mib, 100, gcPercentMax},
		{"headroom gcHeadroomSmall at base: base", 256 * mib, 200 * mib, 100, 100},
		{"tiny heap, operator's base over gcPercentMax: base", 5 * mib, 5 * mib, 500, 500},
		{"all pointers: base", 4 * gib, 4 * gib, 100, 100},
		{"scan over live: base", 4 * gib, 5 * gib, 100, 100},
		{"never over the operator's base", 2 * gib, 1 * gib, 40, 40},
		{"never under gcPercentMin", 64 * gib, 1 * gib, 100, gcPercentMin},
		{"no figures: base", 0, 0, 100, 100},
		{"collector off: left off", 8 * gib, 1 * gib, -1, -1},
	} {
		if got := gcPercentFor(c.live, c.scan, c.base); got != c.want {
			t.Errorf("%s: gcPercentFor(%d MiB, %d MiB, %d) = %d, want %d", c.name, c.live>>20, c.scan>>20, c.base, got, c.want)
		}
	}
}

// gcPercent reads the collector's GOGC.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// serve tunes GOGC to the Dataset after the first load and after each
// reload, and leaves an operator's GOGC alone.
func TestServeTunesGC(t *testing.T) {
	tuning.Wait() // other tests' servers
	defer debug.SetGCPercent(gcPercent())
	snap, keys, _ := serveFixture(t)
	start := func(base int, live, scan uint64) *Main {
		debug.SetGCPercent(100)
		m := lazyMain(t, snap, keys)
		m.gcBase = base
		m.heapFigures = func() (uint64, uint64) { return live, scan }
		if err := m.loadFirst(context.Background()); err != nil {
			t.Fatal(err)
		}
		tuning.Wait()
		return m
	}
	m := start(100, 8<<30, 1<<30)
	if got := gcPercent(); got != 12 {
		t.Fatalf("after the first load GOGC = %d, want 12 (8 GiB live, 1 GiB scannable)", got)
	}
	m.heapFigures = func() (uint64, uint64) { return 4 << 30, 1 << 30 }
	b, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	tmp := snap + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, snap); err != nil { // same bytes, another file: a reload
		t.Fatal(err)
	}
	replaced := weak.Make(m.Store.Current())
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	tuning.Wait()
	if got := gcPercent(); got != 25 {
		t.Fatalf("after a reload GOGC = %d, want 25 (4 GiB live, 1 GiB scannable)", got)
	}
	if replaced.Value() != nil {
		t.Error("tuned before the replaced Dataset was released")
	}

	start(0, 8<<30, 1<<30) // GOGC set by the operator
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC set by the operator: serve changed it to %d", got)
	}
	t.Setenv("GOGC", "100")
	if gcBase() != 0 {
		t.Error("GOGC in the environment: gcBase wants to tune")
	}
	os.Unsetenv("GOGC")
	if gcBase() != 100 {
		t.Error("no GOGC in the environment: gcBase does not tune")
	}
}
