package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/flatfiles"
)

func smallSnap(t *testing.T) string {
	t.Helper()
	snap := filepath.Join(t.TempDir(), "small.snap")
	if _, err := snapshot.BuildFromBundle("../../snapshot/bundle/testdata/small", snap, snapshot.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestExportCmd exports the small snapshot: the files and the manifest
// the summary line counts, the snapshot's id in the manifest, and a
// second export into the same folder replacing the first.
func TestExportCmd(t *testing.T) {
	snap := smallSnap(t)
	out := filepath.Join(t.TempDir(), "files")
	for range 2 {
		var stdout, stderr bytes.Buffer
		if err := runExport(context.Background(), []string{"--snapshot", snap, "--out", out}, &stdout, &stderr); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "manifest.json in "+out) {
			t.Errorf("stdout %q", stdout.String())
		}
	}
	m, err := flatfiles.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	h, err := snapshot.ReadHeader(snap)
	if err != nil {
		t.Fatal(err)
	}
	if m.Snapshot != h.ID || len(m.Files) == 0 {
		t.Errorf("manifest snapshot %q (want %q), %d files", m.Snapshot, h.ID, len(m.Files))
	}
	for _, e := range m.Files {
		st, err := os.Stat(filepath.Join(out, e.File))
		if err != nil || st.Size() != e.Bytes {
			t.Errorf("%s: %v, %d bytes, manifest %d", e.File, err, st.Size(), e.Bytes)
		}
	}

	// One dataset in one format: only its file is left.
	var stdout, stderr bytes.Buffer
	if err := runExport(context.Background(), []string{"--snapshot", snap, "--out", out, "--datasets", "companies", "--format", "csv"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 2 || ents[0].Name() != "companies.csv.gz" {
		t.Errorf("folder after --datasets companies --format csv: %v", ents)
	}
}

func TestExportCmdErrors(t *testing.T) {
	snap := smallSnap(t)
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "mine.txt"), nil, 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{"--snapshot", snap}, "--snapshot and --out are required"},
		{"no snapshot", []string{"--out", t.TempDir()}, "--snapshot and --out are required"},
		{"extra argument", []string{"--snapshot", snap, "--out", t.TempDir(), "x"}, "unexpected argument"},
		{"unknown dataset", []string{"--snapshot", snap, "--out", t.TempDir(), "--datasets", "daily_bars,bars"}, `unknown dataset "bars" (the datasets: daily_bars, minute_bars`},
		{"unknown format", []string{"--snapshot", snap, "--out", t.TempDir(), "--format", "xlsx"}, `unknown format "xlsx"`},
		{"foreign folder", []string{"--snapshot", snap, "--out", foreign}, `holds files that are not an export's: "mine.txt"`},
		{"missing snapshot", []string{"--snapshot", filepath.Join(t.TempDir(), "none.snap"), "--out", t.TempDir()}, "none.snap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runExport(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if ents, _ := os.ReadDir(foreign); len(ents) != 1 {
		t.Errorf("the refused export wrote into the folder: %v", ents)
	}
}

// TestFilesServedEqualExported: the files GET /files lists, read by two
// ranges each over HTTP, are the bytes pregao export writes.
func TestFilesServedEqualExported(t *testing.T) {
	snap := smallSnap(t)
	out := filepath.Join(t.TempDir(), "files")
	var stdout, stderr bytes.Buffer
	if err := runExport(context.Background(), []string{"--snapshot", snap, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	ds, h, err := snapshot.Load(snap, snapshot.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api, key := apiWithKey(t, ds)
	api.Prepare(ds, h.ID, h.BuildTime)
	c, err := flatfiles.NewCache(flatfiles.CacheConfig{Dir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	api.SetFiles(fileSource{c})
	srv := httptest.NewServer(api)
	defer srv.Close()
	get := func(path, rng string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	var l struct {
		Snapshot string `json:"snapshot"`
		Files    []struct {
			File, URL, SHA256 string
			Bytes             int64
		} `json:"files"`
	}
	for range 100 { // the first requests may find the files being built
		st, b := get("/v2/files", "")
		if st == http.StatusServiceUnavailable {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if st != 200 {
			t.Fatalf("GET /v2/files: %d %s", st, b)
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		break
	}
	m, err := flatfiles.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Files) != len(m.Files) || l.Snapshot != m.Snapshot {
		t.Fatalf("served %d files of snapshot %q, exported %d of %q", len(l.Files), l.Snapshot, len(m.Files), m.Snapshot)
	}
	for i, f := range l.Files {
		want, err := os.ReadFile(filepath.Join(out, m.Files[i].File))
		if err != nil {
			t.Fatal(err)
		}
		half := f.Bytes / 2
		st1, a := get(f.URL, fmt.Sprintf("bytes=0-%d", half-1))
		st2, b := get(f.URL, fmt.Sprintf("bytes=%d-", half))
		if st1 != 206 || st2 != 206 || !bytes.Equal(append(a, b...), want) || f.SHA256 != m.Files[i].SHA256 {
			t.Errorf("%s: %d %d, %d bytes served, %d exported", f.File, st1, st2, len(a)+len(b), len(want))
		}
	}
}
