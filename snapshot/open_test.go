package snapshot

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestReadRefusesNonRegular: Load, ReadFile and ReadHeader refuse a path
// that is not a regular file (a folder; a named pipe without a writer:
// see stop_unix_test.go) at once, with ErrNotRegular.
func TestReadRefusesNonRegular(t *testing.T) {
	refusesNonRegular(t, t.TempDir(), "a folder")
}

// refusesNonRegular checks that every reader refuses path, within 5
// seconds, with an error wrapping ErrNotRegular that says what (kind).
func refusesNonRegular(t *testing.T, path, kind string) {
	t.Helper()
	for name, read := range map[string]func() error{
		"Load":       func() error { _, _, err := Load(path, LoadOptions{}); return err },
		"ReadFile":   func() error { _, _, err := ReadFile(path); return err },
		"ReadHeader": func() error { _, err := ReadHeader(path); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), kind) || !strings.Contains(err.Error(), path) {
				t.Errorf("%s of %s: %v, want ErrNotRegular naming the path and %q", name, kind, err, kind)
			}
		case <-time.After(2 * time.Minute): // refused at once: the bound only guards a hang
			t.Errorf("%s of %s: still blocked after 2 minutes", name, kind)
		}
	}
}
