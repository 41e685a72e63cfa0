package main

import (
	"io"
	"os"
	"testing"
	"weak"

	"github.com/pregao/pregao/snapshot"
)

// replaceSnapshot writes a copy of the snapshot at path over it (another
// inode: a changed file for Reload).
func replaceSnapshot(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// After a reload and its release, an idle server holds only the new
// Dataset: the replaced one, which requests had used (its info, quote
// views and answer cache made), is collected, in format 5 and in format
// 6 (whose background pass still runs: 1 MiB a second).
func TestReloadFreesReplacedDataset(t *testing.T) {
	for _, version := range []uint16{5, 6} {
		snap, keys, key := serveFixture(t)
		if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{Version: version}); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultServeConfig()
		cfg.Snapshot, cfg.Keys, cfg.VerifyRateMB = snap, keys, 1
		m, stop := startServe(t, cfg, io.Discard)
		url := "http://" + m.Addr()
		for range 2 { // the second time from the answer cache
			for _, p := range []string{"/v2/companies", "/v2/companies/ENHZ", "/v2/quotes/ENHZ3", "/v2/quotes/ENHZ3?type=current", "/v2/sectors", "/metrics", "/readyz"} {
				if code, body := get(t, url+p, key); code != 200 {
					t.Fatalf("%s: %d %s", p, code, body)
				}
			}
		}
		old := weak.Make(m.Store.Current())
		replaceSnapshot(t, snap)
		if err := m.Reload(); err != nil {
			t.Fatal(err)
		}
		tuning.Wait() // the release, whose collection must find it unreachable
		if old.Value() != nil {
			t.Errorf("format %d: the replaced Dataset is still reachable after the release", version)
		}
		stop()
	}
}
