package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
)

// TestDropKind checks that dropKind empties every kind but the catalog.
func TestDropKind(t *testing.T) {
	u := synthUniverse(3, 20, 1, 30, 5)
	for _, k := range kinds {
		n := k.count(u)
		dropKind(u, k.name)
		if got := k.count(u); k.name == "catalog" && got != n || k.name != "catalog" && got != 0 {
			t.Errorf("%s: %d items left of %d", k.name, got, n)
		}
	}
}

// TestBuildReleasesSameBytes builds a bundle with tiny parts, so that
// kinds are released while others are still being encoded, and compares
// with WriteFile of the same Universe.
func TestBuildReleasesSameBytes(t *testing.T) {
	defer func(p int) { partTarget = p }(partTarget)
	partTarget = 64
	dir := smallBundle(t)
	tmp := t.TempDir()
	built := filepath.Join(tmp, "built.snap")
	if _, err := BuildFromBundle(dir, built, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if u.Derived, err = ratios.Derive(u); err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(tmp, "written.snap")
	if err := WriteFile(written, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(built)
	b, _ := os.ReadFile(written)
	if len(a) == 0 || string(a) != string(b) {
		t.Fatalf("BuildFromBundle wrote %d bytes, WriteFile %d: they differ", len(a), len(b))
	}
	h, err := ReadHeader(built)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Sections) < 2*len(kinds)/3 {
		t.Errorf("only %d sections: parts too big to test releases", len(h.Sections))
	}
	if u.Daily == nil || u.Reports == nil {
		t.Error("WriteFile released the caller's Universe")
	}
}

// TestDeriveInGroups checks that deriving groups of companies in turn
// gives exactly the points of one Derive, for every number of groups.
func TestDeriveInGroups(t *testing.T) {
	u, err := bundle.Read(smallBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Ratios) == 0 || len(want.FundRatios) == 0 || len(u.Companies) < 3 {
		t.Fatalf("bundle too small: %d companies, %d ratio points, %d fund ratio points", len(u.Companies), len(want.Ratios), len(want.FundRatios))
	}
	for n := 1; n <= len(u.Companies)+1; n++ {
		segs, err := deriveInGroups(context.Background(), u, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := diff(want, joinDerived(segs)); d != "" {
			t.Fatalf("%d groups: differs at %s", n, d)
		}
	}
}
