package main

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
	"weak"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
)

// reloadOptions are how serve loads a snapshot that replaces the one it
// serves, while it answers requests. PREGAO_RELOAD_WORKERS,
// PREGAO_RELOAD_PAUSE_GC and PREGAO_RELOAD_RELEASE override them (for
// measurements: make soak). A reload publishes the next snapshot before
// its deferred kinds are decoded, as the first load does, and decodes
// them once the replaced snapshot is released (its heap and theirs are
// never held at once); the requests that read them wait meanwhile.
// PREGAO_RELOAD_DEFERRED=0 loads it whole before publishing instead.
func reloadOptions() (opt snapshot.LoadOptions, release, background bool) {
	opt = snapshot.LoadOptions{Workers: 1, Deferred: true}
	release, background = true, true
	if v, err := strconv.ParseBool(os.Getenv("PREGAO_RELOAD_DEFERRED")); err == nil {
		opt.Deferred = v
	}
	if v, err := strconv.Atoi(os.Getenv("PREGAO_RELOAD_WORKERS")); err == nil {
		opt.Workers = v
	}
	if v, err := strconv.ParseBool(os.Getenv("PREGAO_RELOAD_PAUSE_GC")); err == nil {
		opt.PauseGC = v
	}
	if v, err := strconv.ParseBool(os.Getenv("PREGAO_RELOAD_RELEASE")); err == nil {
		release = v
	}
	if v, err := strconv.ParseBool(os.Getenv("PREGAO_RELOAD_BACKGROUND")); err == nil {
		background = v
	}
	return opt, release, background
}

// loadInBackground runs load on an OS thread of the lowest CPU priority,
// with one more P than the process had, so that requests keep every core
// they had and the load takes what they leave. The thread is discarded
// afterwards (its priority cannot be raised back). A reload's load and a
// flat files build may run at once: each has its P (backgroundProcs).
func loadInBackground(load func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if lowerThreadPriority() != nil {
			load()
			return
		}
		backgroundProcs.add(1)
		defer backgroundProcs.add(-1)
		load()
	}()
	<-done
}

// backgroundProcs counts the Ps added for the work loadInBackground runs,
// so that two of them at once leave GOMAXPROCS as it was when both end.
var backgroundProcs procCount

// procCount is a count of Ps added to GOMAXPROCS.
type procCount struct {
	mu      sync.Mutex
	n, base int // base: GOMAXPROCS before the first was added
}

// add adds d (1 or -1) Ps.
func (c *procCount) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.base = runtime.GOMAXPROCS(0)
	}
	c.n += d
	runtime.GOMAXPROCS(c.base + c.n)
}

// reloadGCPercent is the collector's GOGC while a reload runs: a load
// allocates the new Dataset (~1 GiB at scale 1) in seconds, and at the
// default 100 the collector's cycles over the growing heap take the CPU
// requests need (p99 5-7× the steady one at 1,000 req/s; at 400 no
// different from it, with a peak RSS of ~1.9× the loaded Dataset).
// PREGAO_RELOAD_GOGC overrides it (0: leave the setting alone).
func reloadGCPercent() int {
	if v, err := strconv.Atoi(os.Getenv("PREGAO_RELOAD_GOGC")); err == nil {
		return v
	}
	return 400
}

// raiseGCPercent sets the collector's GOGC to pct (when pct > 0 and the
// process's own setting is not off or higher) and returns what restores
// it. The restore belongs after the publish, with the release of the old
// Dataset: restoring right at the publish starts a cycle over both
// Datasets while requests run.
func raiseGCPercent(pct int) (restore func()) {
	if pct <= 0 {
		return func() {}
	}
	prev := debug.SetGCPercent(pct)
	if prev < 0 || prev >= pct {
		debug.SetGCPercent(prev)
		return func() {}
	}
	return func() { debug.SetGCPercent(prev) }
}

// reloadHeadroom is, when set (PREGAO_RELOAD_HEADROOM_MB, MiB), the heap
// a reload may use beyond twice the live heap at its start (the two
// Datasets) before a soft memory limit makes the collector run
// (limitReloadHeap); -1, the default, sets no limit. At scale 10, format
// 6, under 1,000 requests a second, 512 MiB lowered the reload's peak
// anonymous memory from 2.86-2.92 to 2.56-2.60 GiB, but p99 during
// reloads rose from 6-28 ms to 108-149 ms: the collector's cycles take
// the CPU the requests need, which GOGC=400 (reloadGCPercent) avoids. An
// operator short of memory may prefer the limit.
func reloadHeadroom() int64 {
	if v, err := strconv.ParseInt(os.Getenv("PREGAO_RELOAD_HEADROOM_MB"), 10, 64); err == nil && v >= 0 {
		return v << 20
	}
	return -1
}

// limitReloadHeap sets a soft memory limit of twice live plus headroom
// bytes for a reload (unless headroom is negative, live unknown, or the
// process has a limit of its own: GOMEMLIMIT) and returns what restores
// the previous one. A next Dataset larger than the current one meets the
// limit early, and the collector then takes up to half of the CPU for
// the rest of the load (the runtime's bound on a limit's cycles).
func limitReloadHeap(live uint64, headroom int64) (restore func()) {
	if headroom < 0 || live == 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(-1)
	if prev != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(int64(2*live) + headroom)
	return func() { debug.SetMemoryLimit(prev) }
}

// releaseDelay lets requests that still hold the replaced Dataset finish
// before its memory is collected and returned.
const releaseDelay = 2 * time.Second

// releaseMemory, once the requests holding the replaced Dataset are done,
// restores the collector's setting, collects that Dataset and returns its
// pages to the OS (release set), so that the process's RSS after a reload
// is that of one Dataset, not two.
// releaseWhenGone is releaseMemory for a reload whose next step waits
// for it (the deferred kinds of PREGAO_RELOAD_DEFERRED): it collects
// until the replaced Dataset is gone (checked after each collection),
// for at most releaseDelay, instead of sleeping that long.
func releaseWhenGone(old weak.Pointer[engine.Dataset], restore func(), release bool) {
	for end := time.Now().Add(releaseDelay); ; time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		if old.Value() == nil || time.Now().After(end) {
			break
		}
	}
	restore()
	if release {
		debug.FreeOSMemory()
	}
}

func releaseMemory(restore func(), release bool) {
	time.Sleep(releaseDelay)
	restore()
	if release {
		debug.FreeOSMemory()
	}
}
