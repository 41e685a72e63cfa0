//go:build !unix

package httpapi

// mapChunk returns a chunk of size bytes (length 0) from the heap (the
// system has no anonymous mappings here).
func mapChunk(size int) (b []byte, mapped bool) { return make([]byte, 0, size), false }

// unmapChunk does nothing: mapChunk maps nothing here.
func unmapChunk(b []byte) {}
