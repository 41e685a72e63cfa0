//go:build unix

package httpapi

import "syscall"

// mapChunk returns a chunk of size bytes (length 0) outside the
// Go heap: an anonymous private mapping, so that the kept answers held in
// chunks do not raise the heap the collector paces itself on (with
// GOGC=100 every live heap byte lets the heap grow by another). It falls
// back to the heap when the mapping fails.
func mapChunk(size int) (b []byte, mapped bool) {
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, 0, size), false
	}
	return m[:0], true
}

// unmapChunk gives a chunk of mapChunk (b: the whole of it) back to the
// system. Nothing may refer to it afterwards.
func unmapChunk(b []byte) { syscall.Munmap(b) }
