package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// After a load, serve sets the collector's GOGC so that requests may
// allocate about the Dataset's scannable heap between two cycles, instead
// of the whole live heap as GOGC=100 does.
//
// Most of a Dataset is columns without pointers (prices, dates, ratio
// points: at demo scale 10, 1.6 GiB of a 5.8 GiB heap holds pointers). A
// cycle's work is the heap it scans, so headroom equal to that heap costs
// requests what GOGC=100 costs a heap of pointers, while GOGC=100 lets
// the process grow to twice the Dataset: at scale 10 from 6 to 11.5 GB,
// and every page of that growth is memory the process has never touched,
// which the kernel faults in and clears while requests wait (measured: w3
// at c=8 ran at 38k req/s for the minute the heap grew, 56k once it
// stopped). With the headroom at the scannable heap (GOGC=27), the
// resident size stays at 7.2 GB and the growth lasts seconds: 45k req/s
// in the first 5 s after the load, 52-57k after.
//
// The operator's GOGC (the environment variable) is left alone.

// gcHeadroomMin is the least headroom (bytes) serve gives requests between
// two collections: Datasets up to this size (demo scale 1: 0.6 GiB) keep
// GOGC=100. Below a GiB of room, the cycles come often enough under load
// to cost more than the growth they save (scale 1 at GOGC=85: about 5 %
// fewer requests a second in alternating runs, within the noise).
const gcHeadroomMin = 1 << 30

// gcPercentMin is the lowest GOGC serve sets, however little of a large
// heap holds pointers.
const gcPercentMin = 10

// gcHeadroomSmall is the least headroom (bytes) a small heap gets: GOGC
// is raised over base until requests may allocate that much between two
// cycles (at most gcPercentMax). A format 6 Dataset keeps its columns in
// the mapped file, so its heap is mostly what a cycle walks: at demo
// scale 1 an 83 MiB heap, which GOGC=100 collected every 83 MiB of
// requests' garbage: 6-9 cycles in 10 s of the small index answer at 8
// connections, 1.0-4.0 µs of collector CPU per request (of 23-34 µs in
// all, on a loaded host), where the format 5 file's 0.5 GiB heap cost
// 0.25 µs. With 256 MiB of room (GOGC=312): 2-4 cycles, 0.24-0.58 µs,
// and the heap peaks at 340 MiB, against 0.95 GiB for format 5.
const gcHeadroomSmall = 256 << 20

// gcPercentMax is the highest GOGC serve sets for a small heap (that of
// a reload, reloadGCPercent).
const gcPercentMax = 400

// gcPercentFor returns the GOGC that gives a heap of live bytes, of which
// scan bytes hold pointers, a headroom of max(scan, gcHeadroomMin) bytes:
// at most base (the process's GOGC), at least gcPercentMin. A heap whose
// headroom at base is under gcHeadroomSmall gets that much, up to
// gcPercentMax.
func gcPercentFor(live, scan uint64, base int) int {
	if live == 0 || base <= 0 {
		return base
	}
	room := max(scan, gcHeadroomMin)
	if room >= live || 100*room/live >= uint64(base) {
		if small := (100*gcHeadroomSmall + live - 1) / live; small > uint64(base) {
			return int(min(small, uint64(max(base, gcPercentMax))))
		}
		return base
	}
	return max(int(100*room/live), gcPercentMin)
}

// gcBase returns the GOGC serve tunes from (100, the runtime's default),
// or 0 when the operator chose one (GOGC set): then serve leaves it alone.
func gcBase() int {
	if _, set := os.LookupEnv("GOGC"); set {
		return 0
	}
	return 100
}

// heapFigures returns the live heap and its scannable part as of the last
// collection (bytes).
func heapFigures() (live, scan uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/heap:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		scan = s[1].Value.Uint64()
	}
	return live, scan
}

// tuning counts the tuneGC calls under way (tests wait for them).
var tuning sync.WaitGroup

// goTuneGC runs tuneGC(collect) after then, in its own goroutine.
func (m *Main) goTuneGC(then func(), collect bool) {
	tuning.Add(1)
	go func() {
		defer tuning.Done()
		then()
		m.tuneGC(collect)
	}()
}

// tuneGC sets GOGC for the Dataset just loaded (see gcPercentFor), after
// a collection when collect is set (the first load; a reload's release
// has just collected). It holds m.snapMu, so that it never runs beside a
// snapshot reload (which raises GOGC while it loads; see raiseGCPercent).
func (m *Main) tuneGC(collect bool) {
	m.snapMu.Lock()
	defer m.snapMu.Unlock()
	if m.gcBase <= 0 {
		return
	}
	if collect {
		runtime.GC()
	}
	live, scan := m.heapFigures()
	pct := gcPercentFor(live, scan, m.gcBase)
	if prev := debug.SetGCPercent(pct); prev != pct {
		m.log.Info("collector tuned to the Dataset", "gogc", pct, "live_mib", live>>20, "scannable_mib", scan>>20)
	}
}
