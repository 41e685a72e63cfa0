package datafile

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProvenance checks that testdata/real/PROVENANCE.tsv lists every data
// file under testdata/real, with a repository and a full commit, and
// nothing that is absent.
func TestProvenance(t *testing.T) {
	dir, err := RealDir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "PROVENANCE.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		cols := strings.Split(sc.Text(), "\t")
		if n == 0 {
			if cols[0] != "path" || len(cols) < 4 {
				t.Fatalf("header %q", sc.Text())
			}
			continue
		}
		if len(cols) < 4 || !strings.Contains(cols[1], "/") || len(cols[3]) != 40 {
			t.Errorf("line %d: %q", n+1, sc.Text())
		}
		listed[cols[0]] = true
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch filepath.Base(rel) {
		case "PROVENANCE.tsv", "README.md":
			return nil
		}
		if !listed[rel] {
			t.Errorf("%s is not in PROVENANCE.tsv", rel)
		}
		delete(listed, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range listed {
		t.Errorf("PROVENANCE.tsv lists %s, which is absent", p)
	}
}
