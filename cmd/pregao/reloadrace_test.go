package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestReloadAfterRefusalSeesTheNextFile: a good file put in place while a
// bad one's load fails is another file: the next reload loads it. The
// refusal used to record the signature of whatever was at the path when
// it was logged, so that a good file renamed in meanwhile was taken for
// the refused one and never loaded (found with SIGHUP storms that
// replaced the file during a refused reload).
func TestReloadAfterRefusalSeesTheNextFile(t *testing.T) {
	snap, keys, _ := serveFixture(t)
	cfg := DefaultServeConfig()
	cfg.Snapshot, cfg.Keys, cfg.Addr = snap, keys, "127.0.0.1:0"
	m, err := NewMain(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	first := m.Store.Current()
	bad := append([]byte(nil), good...)
	bad[len(bad)/2] ^= 0xFF
	if err := os.WriteFile(snap, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	// The good file comes back (under a new inode) while the bad one's
	// load fails.
	loadRefused = func() {
		tmp := snap + ".new"
		if err := os.WriteFile(tmp, good, 0o644); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, snap); err != nil {
			t.Error(err)
		}
	}
	defer func() { loadRefused = nil }()
	if err := m.Reload(); err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("the damaged file's reload: %v", err)
	}
	loadRefused = nil
	if m.Store.Current() != first {
		t.Fatal("the damaged file was published")
	}
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if m.Store.Current() == first {
		t.Fatal("the good file put in place during the refused load was not loaded by the next reload")
	}
}
