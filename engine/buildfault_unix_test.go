//go:build unix

package engine

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A fault in one of parallelFor's goroutines (a read of a mapped file cut
// in place, here a page mapped without access) is raised again in the
// caller's goroutine, where Build's recover makes it an error, instead
// of ending the process; the other goroutines stop.
func TestParallelForFault(t *testing.T) {
	page, err := unix.Mmap(-1, 0, 4096, unix.PROT_NONE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Skip("no anonymous mapping:", err)
	}
	defer unix.Munmap(page)
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one processor: parallelFor runs in the caller")
	}
	b := &builder{}
	var got any
	func() {
		defer func() { got = recover() }()
		b.parallelFor(64, func(i int) {
			if i == 7 {
				faultSink += page[100] // faults
			}
		})
	}()
	re, ok := got.(runtime.Error)
	if !ok {
		t.Fatalf("recovered %v (%T), want the fault as a runtime.Error", got, got)
	}
	if f, ok := re.(interface{ Addr() uintptr }); !ok || f.Addr() == 0 {
		t.Errorf("the fault %v carries no address", re)
	}
}

// faultSink keeps the faulting read from being compiled away.
var faultSink byte
