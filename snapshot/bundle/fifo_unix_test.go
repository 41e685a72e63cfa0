//go:build unix

package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRefusesFIFO: a named pipe in a bundle folder (here as
// daily.csv, with no writer) is an error naming it, not a read that
// waits for a writer forever.
func TestReadRefusesFIFO(t *testing.T) {
	dir := writeSmall(t)
	for _, n := range []string{"daily.csv.zst", FileManifest} {
		os.Remove(filepath.Join(dir, n))
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "daily.csv"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "daily.csv") || !strings.Contains(err.Error(), "a named pipe, not a regular file") {
			t.Errorf("Read: %v, want an error naming daily.csv as a named pipe", err)
		}
	case <-time.After(2 * time.Minute): // refused at once: the bound only guards a hang
		t.Fatal("Read still blocked after 2 minutes")
	}
}
