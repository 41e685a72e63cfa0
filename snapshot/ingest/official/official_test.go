package official_test

import (
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// TestDeterministic: the same universe gives byte-identical files.
func TestDeterministic(t *testing.T) {
	sz := smallSize()
	sz.Companies, sz.FIIs, sz.ETFs = 8, 3, 2
	u := demo.GenerateSize(3, sz)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := official.Write(dir, u, official.Options{Workers: 3}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n < 10 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

// TestImportersDoNotImportOfficial: the proof is only a proof if the
// importers know nothing of the writer.
func TestImportersDoNotImportOfficial(t *testing.T) {
	const self = "github.com/pregao/pregao/snapshot/ingest/official"
	for _, pkg := range []string{"cotahist", "cvm", "fii", "b3", "assemble", "datafile"} {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go file (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				if p, _ := strconv.Unquote(im.Path.Value); p == self {
					t.Errorf("%s imports %s", f, self)
				}
			}
		}
	}
}
