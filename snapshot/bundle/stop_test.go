package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteContextStops: a write whose context has ended, or ends just
// before the swap, returns the context's error and leaves the previous
// bundle and no temporary folder.
func TestWriteContextStops(t *testing.T) {
	dir := writeSmall(t)
	before, err := os.ReadFile(filepath.Join(dir, FileManifest))
	if err != nil {
		t.Fatal(err)
	}
	u := mustRead(t, "testdata/small")
	u.Companies[0].Name = "Renamed S.A."
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", what, err)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, FileManifest)); string(after) != string(before) {
			t.Errorf("%s: the bundle changed", what)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".bundle.tmp-*")); len(left) != 0 {
			t.Errorf("%s: temporary folders left: %v", what, left)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	check("ended before", WriteContext(ctx, dir, u, WriteOptions{}))

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	testHookBeforeSwap = func(string) error { cancel(); return nil }
	defer func() { testHookBeforeSwap = nil }()
	check("ended before the swap", WriteContext(ctx, dir, u, WriteOptions{}))
}
