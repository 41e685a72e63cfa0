package yieldpoint

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock makes clock advance step at each reading.
func fakeClock(t *testing.T, step time.Duration) {
	var now time.Duration
	old := clock
	clock = func() time.Duration { now += step; return now }
	t.Cleanup(func() { clock = old })
}

func contend(t *testing.T, procsN, computingN int) {
	old := procs.Load()
	SetProcs(procsN)
	for range computingN {
		Begin()
	}
	t.Cleanup(func() {
		for range computingN {
			End()
		}
		procs.Store(old)
	})
}

// TestYieldOnlyWhenContended: no yield while fewer requests compute than
// there are processors; one each Every while they hold them all.
func TestYieldOnlyWhenContended(t *testing.T) {
	fakeClock(t, 10*time.Microsecond)
	for _, tc := range []struct {
		procs, computing int
		want             int // yields in 100 calls
	}{
		{2, 0, 0},
		{2, 1, 0},
		{2, 2, 9}, // the first call starts the count; then every 10 calls
		{2, 3, 9},
		{1 << 30, 5, 0}, // turned off
	} {
		t.Run("", func(t *testing.T) {
			contend(t, tc.procs, tc.computing)
			var p Point
			n := 0
			for range 100 {
				if p.Yield() {
					n++
				}
			}
			if n != tc.want {
				t.Errorf("procs %d, computing %d: %d yields, want %d", tc.procs, tc.computing, n, tc.want)
			}
		})
	}
}

// TestYieldLetsWaiterRun: on one processor held by a computation, a
// goroutine made runnable meanwhile runs at the computation's next yield
// (Every of its time), not when the scheduler preempts it (about 10 ms)
// or it ends.
func TestYieldLetsWaiterRun(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fakeClock(t, 10*time.Microsecond)
	contend(t, 1, 1)
	var done atomic.Bool
	go done.Store(true) // runnable, waiting for the one processor
	var p Point
	calls := 0
	for !done.Load() {
		calls++
		p.Yield()
		if calls > 1e7 {
			break
		}
	}
	// The first call starts the count, the 11th is Every later: yields.
	// The runtime may run other goroutines of its own first (the race
	// detector's, a timer's), so allow a few yields; without them the
	// waiter runs only when the scheduler preempts the loop, millions of
	// calls later.
	if calls > 5*10+1 {
		t.Errorf("the waiting goroutine ran after %d calls (%d yields), want at most 5 yields", calls, (calls-1)/10)
	}
}
