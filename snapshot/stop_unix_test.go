//go:build unix

package snapshot

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadRefusesFIFO: a named pipe that no process writes to is refused
// at once, where opening it would wait for a writer forever.
func TestReadRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "snap.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	refusesNonRegular(t, fifo, "a named pipe")
}
