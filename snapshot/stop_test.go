package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildStopsOnContext: a build whose context ends before it starts,
// or while its file is being checked (the last step before the rename),
// returns the context's error, leaves the previous snapshot at out as it
// was and no temporary file.
func TestBuildStopsOnContext(t *testing.T) {
	dir := smallBundle(t)
	outDir := t.TempDir()
	out := filepath.Join(outDir, "s.snap")
	os.WriteFile(out, []byte("the previous snapshot"), 0o644)
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", what, err)
		}
		if b, _ := os.ReadFile(out); string(b) != "the previous snapshot" {
			t.Errorf("%s: the previous snapshot changed", what)
		}
		if ents, _ := os.ReadDir(outDir); len(ents) != 1 {
			t.Errorf("%s: %d entries beside the snapshot, want none", what, len(ents)-1)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := BuildFromBundleContext(ctx, dir, out, WriteOptions{})
	check("ended before", err)

	// Ended while the written file is loaded for its check.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	u := handUniverse()
	enc, err := encode(u, WriteOptions{}, false)
	if err != nil {
		t.Fatal(err)
	}
	err = writeEncoded(ctx, out, enc, func(p string) error {
		cancel()
		return nil
	})
	check("ended during the check", err)
}
