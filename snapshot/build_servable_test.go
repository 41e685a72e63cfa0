package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildRefusesWhatServeRefuses: a bundle that passes the bundle's
// validation but that the engine refuses (two tickers of one ISIN with no
// rename between them) produces no snapshot: build runs the server's
// load before it publishes the file.
func TestBuildRefusesWhatServeRefuses(t *testing.T) {
	src := "bundle/testdata/small"
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "renames.jsonl" {
			b = nil // EHZN3 and ENHZ3 share an ISIN: without the rename, two securities claim it
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "s.snap")
	_, err = BuildFromBundle(dir, out, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "a server would refuse") || !strings.Contains(err.Error(), "ISIN") {
		t.Fatalf("build: %v", err)
	}
	if _, serr := os.Stat(out); !os.IsNotExist(serr) {
		t.Error("a refused snapshot was published")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
