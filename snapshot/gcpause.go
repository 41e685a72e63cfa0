package snapshot

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// A load builds hundreds of megabytes of long-lived, pointer-rich data
// from an almost empty heap. With the default pacer the collector runs
// several full cycles during that growth, each marking everything decoded
// so far and returning pages the next allocation faults in again: at
// scale 1 that was about half of a cold load's wall time. While a large
// snapshot decodes, collection is therefore paused under a memory limit
// sized from the snapshot (so a load can never grow the heap without
// bound), and restored afterwards. As that changes process-wide
// settings, only a caller that asks for it gets it (LoadOptions.PauseGC).

// gcPauseMin is the smallest snapshot (bytes) whose decode pauses the
// collector; small inputs (tests, fuzzing) leave it alone.
const gcPauseMin = 16 << 20

// gcPauseGrowth bounds the memory a paused decode may add, per raw
// section byte: the decoded Universe of the demo takes about 3.3 bytes
// per raw byte, the raw buffers and the file one more each.
const gcPauseGrowth = 8

var gcPause struct {
	mu     sync.Mutex
	n      int   // decodes currently holding the pause
	pct    int   // GC percent to restore
	limit  int64 // memory limit to restore
	ours   bool  // the current limit was set by the pause
	budget int64 // memory limit in force while paused (when ours)
}

// pauseGC pauses garbage collection for a decode of a snapshot of size
// file bytes holding raw decompressed section bytes, and returns the
// function that ends the pause. Pauses nest: collection resumes, with
// the previous GC percent and memory limit, when the last one ends. If
// the process runs under a memory limit it is kept (the collector still
// runs near it); otherwise a limit of the current memory plus
// gcPauseGrowth times the raw bytes (plus the file) is set for the
// duration, so a paused load degrades to ordinary collection rather than
// growing past its estimate.
func pauseGC(file, raw int64) (resume func()) {
	if file < gcPauseMin {
		return func() {}
	}
	need := file + gcPauseGrowth*raw
	gcPause.mu.Lock()
	defer gcPause.mu.Unlock()
	if gcPause.n == 0 {
		gcPause.limit = debug.SetMemoryLimit(-1)
		gcPause.ours = gcPause.limit == math.MaxInt64
		if gcPause.ours {
			gcPause.budget = runtimeMemory() + need
			debug.SetMemoryLimit(gcPause.budget)
		}
		gcPause.pct = debug.SetGCPercent(-1)
	} else if gcPause.ours {
		gcPause.budget += need
		debug.SetMemoryLimit(gcPause.budget)
	}
	gcPause.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPause.mu.Lock()
			defer gcPause.mu.Unlock()
			gcPause.n--
			if gcPause.n > 0 {
				return
			}
			debug.SetGCPercent(gcPause.pct)
			if gcPause.ours {
				debug.SetMemoryLimit(gcPause.limit)
			}
		})
	}
}

// startPause is pauseGC; tests replace it to see which loads pause.
var startPause = pauseGC

// runtimeMemory returns the memory the Go runtime holds from the OS and
// has not released (the quantity a memory limit bounds), in bytes.
func runtimeMemory() int64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	var v [2]int64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = int64(s[i].Value.Uint64())
		}
	}
	return v[0] - v[1]
}
