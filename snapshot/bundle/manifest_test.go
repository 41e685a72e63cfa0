package bundle

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeSmall writes the small test bundle's Universe to a new folder with
// Write and returns the folder.
func writeSmall(t *testing.T) (dir string) {
	t.Helper()
	u := mustRead(t, "testdata/small")
	dir = filepath.Join(t.TempDir(), "bundle")
	if err := Write(dir, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWriteManifest(t *testing.T) {
	dir := writeSmall(t)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(m.Files) != len(ents)-1 {
		t.Errorf("manifest lists %d files, the folder holds %d besides it", len(m.Files), len(ents)-1)
	}
	u := mustRead(t, "testdata/small")
	rows := map[string]int64{
		FileCompanies + ".zst":  int64(len(u.Companies)),
		FileSecurities + ".zst": int64(len(u.Securities)),
		FileMeta:                1,
	}
	for _, f := range m.Files {
		st, err := os.Stat(filepath.Join(dir, f.Name))
		if err != nil || st.Size() != f.Bytes {
			t.Errorf("%s: stat %v, manifest says %d bytes", f.Name, err, f.Bytes)
		}
		if want, ok := rows[f.Name]; ok && f.Rows != want {
			t.Errorf("%s: %d rows, want %d", f.Name, f.Rows, want)
		}
	}
	if _, err := ReadWith(dir, ReadOptions{RequireManifest: true}); err != nil {
		t.Fatalf("a written bundle fails its own manifest: %v", err)
	}
}

// TestReadChecksManifest: a file changed, cut, removed or added after the
// bundle was written is an error naming the file.
func TestReadChecksManifest(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"changed", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileMeta)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, []byte(strings.Replace(string(b), "{", "{ ", 1)), 0o644)
		}, "meta.json: 207 bytes, manifest.json says 206: the file was changed or cut"},
		{"cut", func(t *testing.T, dir string) {
			p := filepath.Join(dir, FileCompanies+".zst")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-3)
		}, "companies.jsonl.zst"},
		{"removed", func(t *testing.T, dir string) {
			m, _ := ReadManifest(dir)
			os.Remove(filepath.Join(dir, m.Files[len(m.Files)-1].Name))
		}, "missing: the bundle is incomplete"},
		{"added", func(t *testing.T, dir string) {
			m, _ := ReadManifest(dir)
			m.Files = m.Files[:len(m.Files)-1]
			os.Remove(filepath.Join(dir, FileManifest))
			if err := writeManifest(dir, m); err != nil {
				t.Fatal(err)
			}
		}, "not listed in manifest.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSmall(t)
			tc.change(t, dir)
			_, err := Read(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRequireManifest(t *testing.T) {
	_, err := ReadWith("testdata/small", ReadOptions{RequireManifest: true})
	if !errors.Is(err, ErrNoManifest) {
		t.Errorf("hand-written bundle with RequireManifest: %v, want ErrNoManifest", err)
	}
	if _, err := Read("testdata/small"); err != nil {
		t.Errorf("hand-written bundle without RequireManifest: %v", err)
	}
}

// TestWriteFailureKeepsBundle: a Write stopped before the swap (an error,
// a full disk) leaves the previous bundle whole and no temporary folder.
func TestWriteFailureKeepsBundle(t *testing.T) {
	dir := writeSmall(t)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("mine\n"), 0o644)
	before, _ := ReadManifest(dir)
	testHookBeforeSwap = func(string) error { return errors.New("disk full") }
	defer func() { testHookBeforeSwap = nil }()
	u := mustRead(t, "testdata/small")
	u.Companies[0].Name = "Renamed S.A."
	if err := Write(dir, u, WriteOptions{}); err == nil {
		t.Fatal("Write with a failing hook succeeded")
	}
	after, err := ReadManifest(dir)
	if err != nil || len(after.Files) != len(before.Files) || after.Files[0] != before.Files[0] {
		t.Errorf("the previous bundle changed: %v", err)
	}
	if _, err := ReadWith(dir, ReadOptions{RequireManifest: true}); err != nil {
		t.Errorf("previous bundle no longer reads: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".bundle.tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary folders left: %v", left)
	}
	// A successful Write replaces the data and keeps README.md.
	testHookBeforeSwap = nil
	if err := Write(dir, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, dir); got.Companies[0].Name != "Renamed S.A." {
		t.Errorf("company name %q after the rewrite", got.Companies[0].Name)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "mine\n" {
		t.Errorf("README.md not carried over: %q", b)
	}
}

// TestWriteRemovesStaleStaging: the staging folder of a killed writer is
// removed by the next Write; a live writer's is kept.
func TestWriteRemovesStaleStaging(t *testing.T) {
	dir := writeSmall(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command:", err)
	}
	dead := filepath.Join(filepath.Dir(dir), ".bundle.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-123")
	live := filepath.Join(filepath.Dir(dir), ".bundle.tmp-"+strconv.Itoa(os.Getpid())+"-456")
	for _, d := range []string{dead, live} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, FileCompanies), []byte("partial"), 0o644)
	}
	if err := Write(dir, mustRead(t, dir), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("a dead writer's staging folder survives: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's staging folder was removed: %v", err)
	}
}

// FuzzManifest: any manifest.json is read without a panic, and one that
// reads names only known bundle files, once each, with sizes, rows and
// digests that make sense.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"manifest_version":1,"files":[{"name":"companies.jsonl.zst","bytes":10,"rows":2,"sha256":"` + strings.Repeat("0", 64) + `"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"manifest_version":1,"files":[{"name":"../x","bytes":-1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, FileManifest), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadManifest(dir)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, e := range m.Files {
			base, _ := splitName(e.Name)
			if seen[base] || !slices.Contains(Files, base) || strings.ContainsAny(e.Name, `/\`) || e.Bytes < 0 || e.Rows < 0 || len(e.SHA256) != 64 {
				t.Fatalf("manifest accepted %+v", e)
			}
			seen[base] = true
		}
	})
}

// TestWriteRefusesForeignFiles: Write replaces an existing folder only
// when it is a bundle's (data files, manifest.json, README and the other
// carried-over files); a folder with anything else of the user's is
// refused, naming what replacing it would delete, and left as it was,
// unless Force.
func TestWriteRefusesForeignFiles(t *testing.T) {
	u := mustRead(t, "testdata/small")
	for _, c := range []struct {
		name  string
		setup func(dir string) // makes dir
		want  []string         // the foreign entries; none: Write succeeds
	}{
		{"missing", func(string) {}, nil},
		{"empty", func(dir string) { os.Mkdir(dir, 0o755) }, nil},
		{"a bundle with README and LICENSE", func(dir string) {
			Write(dir, u, WriteOptions{Compression: CompressGzip})
			os.WriteFile(filepath.Join(dir, "README.md"), []byte("mine"), 0o644)
			os.WriteFile(filepath.Join(dir, "LICENSE"), []byte("mine"), 0o644)
		}, nil},
		{"a hand-written bundle without manifest", func(dir string) {
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, FileMeta), []byte("{}\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "daily.csv.zst"), nil, 0o644)
		}, nil},
		{"notes beside a bundle", func(dir string) {
			Write(dir, u, WriteOptions{})
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		}, []string{"notes.txt"}},
		{"a folder of other things", func(dir string) {
			os.MkdirAll(filepath.Join(dir, "raw", "2024"), 0o755)
			os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
			os.WriteFile(filepath.Join(dir, "thesis.pdf"), []byte("mine"), 0o644)
			os.WriteFile(filepath.Join(dir, ".env"), []byte("mine"), 0o644)
			os.WriteFile(filepath.Join(dir, "company.jsonl"), []byte("mine"), 0o644) // a typo is not a bundle file
			os.Symlink("thesis.pdf", filepath.Join(dir, "daily.csv"))                // a link is not one either
		}, []string{".env", ".git/", "company.jsonl", "daily.csv", "raw/", "thesis.pdf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			c.setup(dir)
			err := Write(dir, u, WriteOptions{})
			if cerr := CheckDir(dir, WriteOptions{}); (cerr == nil) != (c.want == nil) {
				t.Errorf("CheckDir: %v, Write: %v", cerr, err)
			}
			if c.want == nil {
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				mustRead(t, dir)
				return
			}
			var fe *ForeignError
			if !errors.As(err, &fe) || !slices.Equal(fe.Names, c.want) || fe.Dir != dir {
				t.Fatalf("Write: %v, want a ForeignError naming %v", err, c.want)
			}
			for _, n := range c.want {
				if !strings.Contains(err.Error(), strconv.Quote(n)) {
					t.Errorf("error %q does not name %s", err, n)
				}
				if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
					t.Errorf("%s: %v after the refused Write", n, err)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.tmp-*")); len(left) != 0 {
				t.Errorf("temporary folders left: %v", left)
			}
			if err := Write(dir, u, WriteOptions{Force: true}); err != nil {
				t.Fatalf("Write with Force: %v", err)
			}
			for _, n := range c.want {
				if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
					t.Errorf("%s kept by a forced Write", n)
				}
			}
			mustRead(t, dir)
		})
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("mine"), 0o644)
	if err := Write(file, u, WriteOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("Write over a file: %v", err)
	}
}

// TestWriteRefusesLateForeignFiles: a file of the user's that appears in
// the folder while Write runs is not deleted by the swap.
func TestWriteRefusesLateForeignFiles(t *testing.T) {
	dir := writeSmall(t)
	testHookBeforeSwap = func(string) error { return os.WriteFile(filepath.Join(dir, "late.txt"), []byte("mine"), 0o644) }
	defer func() { testHookBeforeSwap = nil }()
	var fe *ForeignError
	if err := Write(dir, mustRead(t, "testdata/small"), WriteOptions{}); !errors.As(err, &fe) {
		t.Fatalf("Write: %v, want a ForeignError", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err != nil {
		t.Error(err)
	}
}

// TestWriteThroughSymlink: a bundle folder reached through a symbolic
// link is replaced where the link points; the link stays.
func TestWriteThroughSymlink(t *testing.T) {
	root := t.TempDir()
	target := filepath.Join(root, "bundles", "2025-01-02")
	u := mustRead(t, "testdata/small")
	if err := Write(target, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "current")
	os.Symlink("bundles/2025-01-02", link)
	u.Companies[0].Name = "Renamed S.A."
	if err := Write(link, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link (%v)", link, err)
	}
	if got := mustRead(t, target); got.Companies[0].Name != "Renamed S.A." {
		t.Errorf("target not replaced: company %q", got.Companies[0].Name)
	}
}
