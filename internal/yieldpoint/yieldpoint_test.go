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
		fixed.Store(false)
		procs.Store(old)
	})
}

// TestProcsFollowGOMAXPROCS: without SetProcs, the number of processors
// follows GOMAXPROCS as the runtime changes it (read again within
// refreshEvery, by Begin); SetProcs's number holds until SetProcs(0).
func TestProcsFollowGOMAXPROCS(t *testing.T) {
	var now time.Duration
	oldClock, oldMax, oldProcs := clock, gomaxprocs, procs.Load()
	clock = func() time.Duration { return now }
	n := 4
	gomaxprocs = func() int { return n }
	t.Cleanup(func() {
		clock, gomaxprocs = oldClock, oldMax
		fixed.Store(false)
		procs.Store(oldProcs)
	})
	SetProcs(0)
	begin := func(k int) {
		for range k {
			Begin()
		}
		t.Cleanup(func() {
			for range k {
				End()
			}
		})
	}
	begin(2)
	if Contended() {
		t.Fatal("2 computing on 4 processors: contended")
	}
	n = 2 // the container's CPU limit fell
	now += refreshEvery / 2
	begin(1)
	if got := procs.Load(); got != 4 {
		t.Fatalf("GOMAXPROCS read again within refreshEvery: procs %d, want 4 still", got)
	}
	now += refreshEvery
	begin(1)
	if got := procs.Load(); got != 2 || !Contended() {
		t.Fatalf("after refreshEvery: procs %d (want 2), contended %v", got, Contended())
	}
	SetProcs(16)
	n = 1
	now += 2 * refreshEvery
	begin(1)
	if got := procs.Load(); got != 16 {
		t.Fatalf("SetProcs(16) then Begin: procs %d, want 16", got)
	}
	SetProcs(0)
	if got := procs.Load(); got != 1 {
		t.Fatalf("SetProcs(0): procs %d, want GOMAXPROCS 1", got)
	}
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
