package mapfile

import (
	"fmt"
	"runtime"
)

// ErrFault is wrapped by the error Fault returns.
var ErrFault = fmt.Errorf("a read of a mapped file faulted")

// Fault returns an error wrapping ErrFault when p, a recovered panic, is a
// memory fault at an address past the first page: what a goroutine that
// called debug.SetPanicOnFault(true) gets, instead of the process ending,
// when it reads a mapping whose file was cut or changed in place (SIGBUS
// past the file's new end). It returns nil for any other panic (a nil
// dereference among them), which the caller re-panics or reports as it
// would have.
func Fault(p any) error {
	re, ok := p.(runtime.Error)
	if !ok {
		return nil
	}
	f, ok := re.(interface{ Addr() uintptr })
	if !ok || f.Addr() < 4096 {
		return nil
	}
	return fmt.Errorf("%w at %#x (%v): the file was cut or changed in place; publish a snapshot by renaming a new file over it, then reload", ErrFault, f.Addr(), re)
}
