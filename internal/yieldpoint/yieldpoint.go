// Package yieldpoint lets a long computation give its Go processor to
// other goroutines while computing requests hold every processor.
//
// Go preempts a goroutine that runs without blocking after about 10 ms.
// When the server's costly requests (an as_of screener, a total return
// of hundreds of tickers) occupy every processor, a request that arrives
// meanwhile (another key's, a cheap one) waits that long, or until one
// of them ends, before its goroutine runs at all. A computation that
// calls Point.Yield in its loop gives way every Every instead, and only
// then: while fewer requests compute than there are processors, Yield
// reads an atomic counter and returns.
//
// The server counts its computing requests with Begin and End (httpapi's
// admission does, for the requests that hold a slot).
package yieldpoint

import (
	"runtime"
	"sync/atomic"
	"time"
)

// Every is the computing time between two yields while the processors
// are all taken by computing requests.
const Every = 100 * time.Microsecond

// refreshEvery is how often Begin reads GOMAXPROCS again while the
// number of processors follows it: the runtime changes it when the
// container's CPU limit changes, and reading it takes the scheduler's
// lock, too much for every request.
const refreshEvery = time.Second

var (
	computing atomic.Int32
	procs     atomic.Int32
	// fixed is set while SetProcs's number holds instead of GOMAXPROCS.
	fixed atomic.Bool
	// refreshed is when Begin last read GOMAXPROCS (clock's time).
	refreshed atomic.Int64
	epoch     = time.Now()
	// clock returns the time since epoch (a test replaces it).
	clock = func() time.Duration { return time.Since(epoch) }
	// gomaxprocs returns the runtime's GOMAXPROCS (a test replaces it).
	gomaxprocs = func() int { return runtime.GOMAXPROCS(0) }
)

func init() { procs.Store(int32(gomaxprocs())) }

// SetProcs sets the number of processors the computing requests are
// compared with, in place of GOMAXPROCS (a very large number turns the
// yields off, for measurements); n ≤ 0 goes back to GOMAXPROCS, which
// is then read again at least every second, since the runtime changes it
// when the CPU limit of the container does.
func SetProcs(n int) {
	if n <= 0 {
		fixed.Store(false)
		procs.Store(int32(max(gomaxprocs(), 1)))
		refreshed.Store(int64(clock()))
		return
	}
	fixed.Store(true)
	procs.Store(int32(min(n, 1<<30)))
}

// Begin counts a computing request; End, when it is done.
func Begin() {
	computing.Add(1)
	if fixed.Load() {
		return
	}
	now := int64(clock())
	if last := refreshed.Load(); now-last >= int64(refreshEvery) && refreshed.CompareAndSwap(last, now) {
		procs.Store(int32(max(gomaxprocs(), 1)))
	}
}

// End undoes Begin.
func End() { computing.Add(-1) }

// Computing returns the number of computing requests (Begin less End).
func Computing() int { return int(computing.Load()) }

// Contended reports whether computing requests hold every processor.
func Contended() bool { return computing.Load() >= procs.Load() }

// A Point is one computation's yield point: its zero value is ready. One
// goroutine's.
type Point struct {
	last time.Duration // when it last yielded, or first saw contention
}

// Yield gives the processor to other runnable goroutines when the
// processors are all taken by computing requests and this computation
// has run Every since it last did; it reports whether it did.
func (p *Point) Yield() bool {
	if computing.Load() < procs.Load() {
		return false
	}
	now := clock()
	if p.last == 0 {
		p.last = now
		return false
	}
	if now-p.last < Every {
		return false
	}
	runtime.Gosched()
	p.last = clock()
	return true
}
