package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSigOfSeesReplacements: a file replaced with its size and time kept
// (cp -p, rsync -t), or renamed over with the same bytes, changes its
// signature; an untouched file keeps it.
func TestSigOfSeesReplacements(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("snapshot A"), 0o644)
	mtime := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(p, mtime, mtime)
	a := sigOf(p)
	if sigOf(p) != a {
		t.Fatal("signature of an untouched file changed")
	}
	os.WriteFile(p, []byte("snapshot B"), 0o644) // same size
	os.Chtimes(p, mtime, mtime)
	if sigOf(p) == a {
		t.Error("same size and time, other content: not seen")
	}
	b := sigOf(p)
	q := filepath.Join(dir, "g")
	os.WriteFile(q, []byte("snapshot B"), 0o644)
	os.Chtimes(q, mtime, mtime)
	os.Rename(q, p) // same bytes and time, another inode
	if sigOf(p) == b {
		t.Error("renamed over with the same bytes: not seen")
	}
	if sigOf(filepath.Join(dir, "missing")) != (fileSig{}) {
		t.Error("missing file has a signature")
	}
}

// TestReloadOnlyWhatChanged: a keys change reloads the keys, not the
// snapshot; nothing changed reloads nothing.
func TestReloadOnlyWhatChanged(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	var logs syncBuffer // the deferred kinds' load logs from its own goroutine
	m, err := NewMain(cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runKeys(context.Background(), []string{"add", "--file", keys, "--name", "second"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	logs.Reset()
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "keys reloaded") || strings.Contains(logs.String(), "snapshot published") {
		t.Errorf("a keys change reloaded:\n%s", logs.String())
	}
	mf, _ := m.Registry.Gather()
	for _, f := range mf {
		if f.GetName() != "pregao_snapshot_reloads_total" {
			continue
		}
		for _, mm := range f.GetMetric() {
			if mm.GetCounter().GetValue() != 0 {
				t.Errorf("snapshot reloads counted: %v", mm)
			}
		}
	}
}
