package flatfiles

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pregao/pregao/engine"
)

// TestCache builds a Dataset's files once per cut, finds them again in a
// new Cache of the folder, and keeps within its bound by removing the
// least recently asked folder.
func TestCache(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	reg := prometheus.NewRegistry()
	c, err := NewCache(CacheConfig{Dir: dir, Formats: []string{Parquet}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d1, m1, err := c.Get(ctx, ds, "snap/1", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(d1) != "snap_1-all" || len(m1.Files) == 0 || m1.Snapshot != "snap_1" {
		t.Fatalf("folder %s, %d files, snapshot %q", d1, len(m1.Files), m1.Snapshot)
	}
	d2, m2, err := c.Get(ctx, ds, "snap/1", engine.NoDate)
	if err != nil || d2 != d1 || m2 != m1 {
		t.Fatalf("second Get: %s %p %v, want the same folder and manifest", d2, m2, err)
	}
	through := m1.Files[0].MaxDate - 1
	d3, m3, err := c.Get(ctx, ds, "snap/1", through)
	if err != nil || filepath.Base(d3) != "snap_1-"+through.String() || m3.Through != through {
		t.Fatalf("cut Get: %s %v", d3, err)
	}
	if got := testutil.ToFloat64(c.m.builds.WithLabelValues("ok")); got != 2 {
		t.Errorf("builds %v, want 2", got)
	}
	if got := testutil.ToFloat64(c.m.folders); got != 2 {
		t.Errorf("folders %v, want 2", got)
	}

	// A new Cache finds both; bounded to one folder's bytes, it keeps
	// one, and a Get of the other builds it again and removes the first.
	bound := manifestBytes(m1)
	c2, err := NewCache(CacheConfig{Dir: dir, Formats: []string{Parquet}, MaxBytes: bound}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c2.sets); n != 1 {
		t.Fatalf("the bounded cache kept %d folders, want 1", n)
	}
	if _, _, err := c2.Get(ctx, ds, "snap/1", engine.NoDate); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c2.Get(ctx, ds, "other", engine.NoDate); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "other-all" {
		t.Errorf("folders after the eviction: %v", ents)
	}
	if got := testutil.ToFloat64(c2.m.evictions); got < 1 {
		t.Errorf("evictions %v", got)
	}
}

// TestCacheBuilding: a Get whose context ends first is ErrBuilding; the
// build goes on and a later Get has it.
func TestCacheBuilding(t *testing.T) {
	ds := small(t)
	c, err := NewCache(CacheConfig{Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.build.Lock() // hold the build back
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := c.Get(ctx, ds, "s", engine.NoDate); !errors.Is(err, ErrBuilding) {
		t.Fatalf("err = %v, want ErrBuilding", err)
	}
	c.build.Unlock()
	if _, m, err := c.Get(context.Background(), ds, "s", engine.NoDate); err != nil || len(m.Files) == 0 {
		t.Fatalf("after the build: %v", err)
	}
}

// TestCacheRun: a build runs through CacheConfig.Run (serve's runs it at
// the lowest CPU priority), once per folder.
func TestCacheRun(t *testing.T) {
	ds := small(t)
	runs := 0
	c, err := NewCache(CacheConfig{Dir: t.TempDir(), Formats: []string{CSV}, Datasets: []string{"companies"},
		Run: func(build func()) { runs++; build() }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, m, err := c.Get(context.Background(), ds, "snap", engine.NoDate); err != nil || len(m.Files) == 0 {
			t.Fatalf("Get: %v", err)
		}
	}
	if runs != 1 {
		t.Errorf("builds run through Run: %d, want 1", runs)
	}
}
