package flatfiles

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// haveFiles returns an error when a file m lists is not in dir, whole.
func haveFiles(dir string, m *Manifest) error {
	for _, e := range m.Files {
		b, err := os.ReadFile(filepath.Join(dir, e.File))
		if err != nil {
			return err
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != e.SHA256 {
			return fmt.Errorf("%s: not the bytes the manifest lists", e.File)
		}
	}
	return nil
}

func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.Process.Pid
}

// TestCacheStartsClean: a new Cache removes what an interrupted run
// left in its folder (a killed build's temporary folder, a folder without
// its manifest, a folder missing a file its manifest lists: a removal
// cut short) and keeps what is not its own.
func TestCacheStartsClean(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	c, err := NewCache(CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies", "securities"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, m, err := c.Get(context.Background(), ds, "whole", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(context.Background(), ds, "cut", engine.NoDate); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "cut-all", m.Files[1].File))
	killed := filepath.Join(dir, fmt.Sprintf(".other-all.tmp-%d-123", deadPid(t)))
	// A container's server is process 1 at every start: a killed build
	// of the previous one has this process's id.
	killedSamePid := filepath.Join(dir, fmt.Sprintf(".other-all.tmp-%d-456", os.Getpid()))
	for _, d := range []string{killed, killedSamePid, filepath.Join(dir, "nomanifest-all"), filepath.Join(dir, "notes")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "companies.csv.gz"), []byte("half"), 0o644)
	}

	c2, err := NewCache(CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies", "securities"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"notes", "whole-all"}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("folders after the restart: %v, want %v", names, want)
	}
	if d, m2, err := c2.Get(context.Background(), ds, "cut", engine.NoDate); err != nil || haveFiles(d, m2) != nil {
		t.Errorf("the folder missing a file is not built again: %v", err)
	}
	if d, m2, err := c2.Get(context.Background(), ds, "whole", engine.NoDate); err != nil || d != whole || m2.Files[0].SHA256 != m.Files[0].SHA256 {
		t.Errorf("the whole folder is not kept: %s %v", d, err)
	}
}

// TestCacheFolderRemoved: a folder removed from the disk while the Cache
// runs (by hand, to free space) is built again by the next Get, not
// listed from memory with files that are gone.
func TestCacheFolderRemoved(t *testing.T) {
	ds := small(t)
	c, err := NewCache(CacheConfig{Dir: t.TempDir(), Formats: []string{CSV}, Datasets: []string{"companies"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := c.Get(context.Background(), ds, "s", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(d); err != nil {
		t.Fatal(err)
	}
	d2, m, err := c.Get(context.Background(), ds, "s", engine.NoDate)
	if err != nil || d2 != d {
		t.Fatalf("Get after the removal: %s %v", d2, err)
	}
	if err := haveFiles(d2, m); err != nil {
		t.Errorf("not built again: %v", err)
	}
}

// TestCacheSharedFolder: two servers sharing one folder (two Caches here)
// building the same files never take each other's away: a build writes
// into a folder of its own and swaps it in whole, so the first server's
// files stay readable while the second builds, and after.
func TestCacheSharedFolder(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	cfg := CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies", "securities"}}
	c1, err := NewCache(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg2 := cfg
	var during error
	cfg2.Run = func(build func()) {
		// The first server's folder, as it reads it, while this one builds.
		d, m, err := c1.Get(context.Background(), ds, "s", engine.NoDate)
		if err == nil {
			err = haveFiles(d, m)
		}
		during = err
		build()
	}
	c2, err := NewCache(cfg2, nil) // started before c1's build: it knows no folder
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c1.Get(context.Background(), ds, "s", engine.NoDate); err != nil {
		t.Fatal(err)
	}
	d, m, err := c2.Get(context.Background(), ds, "s", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	if during != nil {
		t.Errorf("the first server's files while the second built: %v", during)
	}
	if err := haveFiles(d, m); err != nil {
		t.Errorf("after both builds: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("entries left: %v", ents)
	}
}

// TestCacheBuildFails: a build that cannot write (here the folder has
// become a file; a full disk alike) is an error that leaves nothing
// behind, the answer until RetryFailed has passed (not a build per
// request), then tried again.
func TestCacheBuildFails(t *testing.T) {
	ds := small(t)
	dir := filepath.Join(t.TempDir(), "files")
	const retry = 200 * time.Millisecond
	var logs bytes.Buffer
	c, err := NewCache(CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies"}, RetryFailed: retry, Log: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(dir)
	os.WriteFile(dir, []byte("not a folder"), 0o644)
	failed := time.Now()
	_, _, err = c.Get(context.Background(), ds, "s", engine.NoDate)
	if err == nil {
		t.Fatal("a build into a file: no error")
	}
	// The error says when the build is tried again: RetryFailed after it
	// failed.
	var be *BuildError
	if !errors.As(err, &be) || be.RetryAt().Before(failed.Add(retry)) || be.RetryAt().After(time.Now().Add(retry)) {
		t.Fatalf("error %v (%T): want a BuildError retried %v after the failure", err, err, retry)
	}
	os.Remove(dir)
	if _, _, err = c.Get(context.Background(), ds, "s", engine.NoDate); err == nil && time.Since(failed) < retry {
		t.Error("a Get right after a failed build built again")
	}
	if got := testutil.ToFloat64(c.m.builds.WithLabelValues("error")); got != 1 {
		t.Errorf("failed builds %v, want 1", got)
	}
	// The failure is logged once, not once per Get it answers.
	if n := strings.Count(logs.String(), "level=ERROR msg=\"files: build failed\" folder=s-all"); n != 1 {
		t.Errorf("%d failure records, want 1:\n%s", n, logs.String())
	}
	// Until the time the error said (RetryFailed after the build failed,
	// which is after failed): a Get before it is answered the failure.
	time.Sleep(time.Until(be.RetryAt()))
	if _, m, err := c.Get(context.Background(), ds, "s", engine.NoDate); err != nil || len(m.Files) == 0 {
		t.Fatalf("a Get after RetryFailed: %v", err)
	}
	if !strings.Contains(logs.String(), "level=INFO msg=\"files: built\" folder=s-all files=1") {
		t.Errorf("no record of the build:\n%s", logs.String())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("entries: %v, want the folder built", ents)
	}
}

// TestCacheRestartKeepsNewest: a restart over the bound (lowered, or a
// folder larger than it) removes the folders of the oldest builds first,
// keeping the latest snapshot's, not any of them.
func TestCacheRestartKeepsNewest(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	cfg := CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies"}}
	c, err := NewCache(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"a", "b", "c", "d", "e", "f"}
	var bound int64
	for i, id := range names {
		d, m, err := c.Get(context.Background(), ds, id, engine.NoDate)
		if err != nil {
			t.Fatal(err)
		}
		bound = manifestBytes(m)
		at := time.Now().Add(time.Duration(i-len(names)) * time.Hour) // built in this order
		os.Chtimes(filepath.Join(d, ManifestName), at, at)
	}
	cfg.MaxBytes = bound // one folder
	if _, err := NewCache(cfg, nil); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "f-all" {
		t.Errorf("after a restart bounded to one folder: %v, want the last built, f-all", ents)
	}
}

// TestCacheDropsOtherVersions: a folder an earlier build of the server
// wrote (its manifest of another Version, or of none) is not served as
// this build's files after a restart: it is removed and built again.
func TestCacheDropsOtherVersions(t *testing.T) {
	ds := small(t)
	dir := t.TempDir()
	cfg := CacheConfig{Dir: dir, Formats: []string{CSV}, Datasets: []string{"companies"}}
	c, err := NewCache(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, m, err := c.Get(context.Background(), ds, "s", engine.NoDate)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != Version {
		t.Fatalf("manifest version %d, want %d", m.Version, Version)
	}
	// The earlier build's: the same names, other bytes, no version.
	old := *m
	old.Version = 0
	old.Files = append([]Entry(nil), m.Files...)
	for i := range old.Files {
		b := []byte("earlier")
		if err := os.WriteFile(filepath.Join(d, old.Files[i].File), b, 0o644); err != nil {
			t.Fatal(err)
		}
		old.Files[i].Bytes, old.Files[i].SHA256 = int64(len(b)), "earlier"
	}
	if err := writeManifest(d, &old, true); err != nil {
		t.Fatal(err)
	}
	c2, err := NewCache(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	d2, m2, err := c2.Get(context.Background(), ds, "s", engine.NoDate)
	if err != nil || d2 != d {
		t.Fatalf("Get after the restart: %s %v", d2, err)
	}
	if m2.Version != Version || m2.Files[0].SHA256 != m.Files[0].SHA256 || haveFiles(d2, m2) != nil {
		t.Errorf("after the restart: version %d, %s; want the files built again (%s)", m2.Version, m2.Files[0].SHA256, m.Files[0].SHA256)
	}
}
