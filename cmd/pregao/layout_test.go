package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/pregao/pregao"

// allowedImports is the package layout the doc.go files describe, as data:
// for each package (a path relative to the module; "x/..." is x and every
// package below it), the packages of this module its non-test files may
// import. Arrows point down only: nothing imports cmd, bench or httpapi,
// engine does no I/O of the snapshot, and the ingest tree (everything that
// produces a source bundle) never imports the snapshot format.
var allowedImports = []struct {
	pkg   string
	allow []string
}{
	{"cmd/...", []string{"..."}},
	{"bench", nil},
	{"httpapi", []string{"engine", "internal/atomicfile"}},
	{"snapshot", []string{"engine", "engine/ratios", "snapshot/bundle", "internal/atomicfile", "index"}},
	{"snapshot/bundle", []string{"engine", "internal/atomicfile"}},
	{"internal/atomicfile", nil},
	{"snapshot/remote", []string{"snapshot"}},
	{"snapshot/ingest/...", []string{"engine", "internal/atomicfile", "snapshot/ingest/..."}},
	{"engine/ratios", []string{"engine"}},
	{"engine", []string{"index"}},
	{"index", nil},
}

// match reports whether package p (module-relative) is named by pattern.
func match(pattern, p string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

// rulesFor returns the allowed imports of package p: the first entry whose
// pattern names it.
func rulesFor(p string) ([]string, bool) {
	for _, r := range allowedImports {
		if match(r.pkg, p) {
			return r.allow, true
		}
	}
	return nil, false
}

// TestImportRules holds every package of the module to allowedImports and
// fails naming the file and the offending import.
func TestImportRules(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	imports := map[string]map[string]string{} // package -> import -> first file
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // another module (deploy): its own rules
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		for _, spec := range f.Imports {
			ip, _ := strconv.Unquote(spec.Path.Value)
			dep, ok := strings.CutPrefix(ip, module+"/")
			if !ok {
				continue
			}
			if imports[pkg] == nil {
				imports[pkg] = map[string]string{}
			}
			if _, seen := imports[pkg][dep]; !seen {
				imports[pkg][dep] = path.Join(pkg, name)
			}
		}
		if _, ok := rulesFor(pkg); !ok && pkg != "." {
			t.Errorf("package %s has no entry in allowedImports: add one (and describe it in its doc.go)", pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		allow, _ := rulesFor(p)
		for dep, file := range imports[p] {
			ok := false
			for _, a := range allow {
				if match(a, dep) {
					ok = true
					break
				}
			}
			if !ok {
				t.Errorf("%s imports %s: package %s may import only %v", file, dep, p, allow)
			}
		}
	}
}

// TestImportRulesMatch checks the pattern matcher the rules rely on.
func TestImportRulesMatch(t *testing.T) {
	f := func(pattern, p string, want bool) {
		t.Helper()
		if got := match(pattern, p); got != want {
			t.Errorf("match(%q, %q) = %v, want %v", pattern, p, got, want)
		}
	}
	f("engine", "engine", true)
	f("engine", "engine/ratios", false)
	f("snapshot/ingest/...", "snapshot/ingest", true)
	f("snapshot/ingest/...", "snapshot/ingest/cvm", true)
	f("snapshot/ingest/...", "snapshot/ingestx", false)
	f("snapshot/...", "snapshot/bundle", true)
	f("...", "httpapi", true)
	if a, _ := rulesFor("snapshot/ingest/cvm"); len(a) != 3 || a[0] != "engine" {
		t.Errorf("snapshot/ingest/cvm rules = %v", a)
	}
}
