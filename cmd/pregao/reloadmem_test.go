package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestLoadInBackground: the load runs on a thread of the lowest priority
// with one more P, and the process's GOMAXPROCS is restored after; the
// caller's thread keeps its priority (the one the tests run at: make
// test may run under nice).
func TestLoadInBackground(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base, _ := threadNice()
	procs := runtime.GOMAXPROCS(0)
	var during int
	var nice int
	var err error
	loadInBackground(func() {
		during = runtime.GOMAXPROCS(0)
		nice, err = threadNice()
	})
	if err != nil {
		t.Skip(err)
	}
	if runtime.GOOS == "linux" && (during != procs+1 || nice != 19) {
		t.Errorf("during the load: GOMAXPROCS %d (process %d), nice %d; want %d and 19", during, procs, nice, procs+1)
	}
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Errorf("GOMAXPROCS after: %d, want %d", got, procs)
	}
	if n, _ := threadNice(); n != base {
		t.Errorf("this thread's nice: %d, want %d as before the load", n, base)
	}
}

// TestLoadInBackgroundTwoAtOnce: a reload's load and a files build
// running at once have a P each, and GOMAXPROCS is the process's again
// when both end, whichever ends first.
func TestLoadInBackgroundTwoAtOnce(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("thread priorities: linux")
	}
	procs := runtime.GOMAXPROCS(0)
	for _, firstEnds := range []int{0, 1} {
		started := make(chan struct{}, 2)
		release := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
		done := make(chan int, 2)
		for i := range 2 {
			go func() {
				loadInBackground(func() {
					started <- struct{}{}
					<-release[i]
				})
				done <- i
			}()
		}
		<-started
		<-started
		if got := runtime.GOMAXPROCS(0); got != procs+2 {
			t.Errorf("two loads: GOMAXPROCS %d, want %d", got, procs+2)
		}
		close(release[firstEnds])
		<-done
		if got := runtime.GOMAXPROCS(0); got != procs+1 {
			t.Errorf("one load left: GOMAXPROCS %d, want %d", got, procs+1)
		}
		close(release[1-firstEnds])
		<-done
		if got := runtime.GOMAXPROCS(0); got != procs {
			t.Errorf("both ended (%d first): GOMAXPROCS %d, want %d", firstEnds, got, procs)
		}
	}
}

func TestRaiseGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	restore := raiseGCPercent(400)
	if got := debug.SetGCPercent(400); got != 400 {
		t.Errorf("during: %d", got)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("restored: %d", got)
	}
	debug.SetGCPercent(800) // a higher setting of the process is kept
	raiseGCPercent(400)()
	if got := debug.SetGCPercent(100); got != 800 {
		t.Errorf("kept: %d", got)
	}
}

func TestLimitReloadHeap(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	debug.SetMemoryLimit(math.MaxInt64)
	restore := limitReloadHeap(1<<30, 512<<20)
	if got := debug.SetMemoryLimit(-1); got != 2<<30+512<<20 {
		t.Errorf("during: %d", got)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("restored: %d", got)
	}
	limitReloadHeap(1<<30, -1)() // no headroom set: no limit
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("without headroom: %d", got)
	}
	debug.SetMemoryLimit(3 << 30) // the process's own limit is kept
	r := limitReloadHeap(1<<30, 512<<20)
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("own limit during: %d", got)
	}
	r()
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("own limit after: %d", got)
	}
	t.Setenv("PREGAO_RELOAD_HEADROOM_MB", "")
	if reloadHeadroom() >= 0 {
		t.Error("a limit by default")
	}
	t.Setenv("PREGAO_RELOAD_HEADROOM_MB", "256")
	if reloadHeadroom() != 256<<20 {
		t.Error("PREGAO_RELOAD_HEADROOM_MB=256 not read")
	}
}
