// Package mapfile opens a file read-only as a byte slice used in place:
// mapped into memory where the system allows it (a snapshot's columns
// are then read where they lie, and memory is the pages touched), else
// read into the heap with ReadAt (the same bytes, held by the process).
// Either way the bytes are aligned to 8, so that fixed-width columns of
// a file written at aligned offsets can be viewed as typed slices.
//
// A mapping is released by Close, or by ReleaseWith once the value that
// owns the bytes (a Dataset) can no longer be reached: no reader can
// then hold a slice of them, so nothing is unmapped under a reader and
// a request pays nothing to keep its bytes alive. Every value that keeps
// a slice of the bytes must keep their owner too.
//
// A mapping's file cut in place (truncated under it) makes a read past
// the new end fault. A goroutine that reads mapped bytes with
// debug.SetPanicOnFault(true) gets a panic instead of the process's
// end; Fault tells such a fault (inside a mapping this package holds
// open) from any other panic, and Catch hands it to the reader's owner
// (the server fails that snapshot).
//
// It imports only the standard library and golang.org/x/sys; it must not
// import any package of this module.
package mapfile
