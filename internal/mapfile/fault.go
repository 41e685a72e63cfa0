package mapfile

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ErrFault is wrapped by the error Fault returns.
var ErrFault = errors.New("a read of a mapped file faulted")

// Fault returns an error wrapping ErrFault when p, a recovered panic, is a
// memory fault inside a mapping this package made and has not released:
// what a goroutine that called debug.SetPanicOnFault(true) gets, instead
// of the process ending, when it reads a mapped file that was cut in
// place (SIGBUS past the file's new end). It returns nil for any other
// panic (a nil dereference, a fault elsewhere), which the caller lets go
// on.
func Fault(p any) error {
	re, ok := p.(runtime.Error)
	if !ok {
		return nil
	}
	f, ok := re.(interface{ Addr() uintptr })
	if !ok || !regions.holds(f.Addr()) {
		return nil
	}
	return fmt.Errorf("%w at %#x (%v): the file was cut or changed in place; publish a snapshot by renaming a new file over it, then reload", ErrFault, f.Addr(), re)
}

// Catch is deferred by a goroutine that reads mapped files with
// debug.SetPanicOnFault(true), as
//
//	defer func() { mapfile.Catch(recover(), fail) }()
//
// p being what it recovered: a fault in a mapping (Fault) is handed to
// fail and the goroutine returns; any other panic goes on.
func Catch(p any, fail func(error)) {
	if p == nil {
		return
	}
	err := Fault(p)
	if err == nil {
		panic(p)
	}
	fail(err)
}

// regions are the address ranges of the mappings open.
var regions regionSet

type regionSet struct {
	mu sync.Mutex
	r  [][2]uintptr // [start, end)
}

func (s *regionSet) add(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	s.mu.Lock()
	s.r = append(s.r, [2]uintptr{start, start + uintptr(len(b))})
	s.mu.Unlock()
}

func (s *regionSet) remove(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, r := range s.r {
		if r[0] == start {
			s.r = append(s.r[:i], s.r[i+1:]...)
			return
		}
	}
}

// holds reports whether addr lies in an open mapping.
func (s *regionSet) holds(addr uintptr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.r {
		if addr >= r[0] && addr < r[1] {
			return true
		}
	}
	return false
}
