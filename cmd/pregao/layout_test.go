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
// import, and those it may not import although allow names them (deny).
// Arrows point down only: nothing imports cmd, bench or httpapi, engine
// does no I/O of the snapshot, httpapi imports nothing of the snapshot
// tree, and the ingest tree (everything that produces a source bundle)
// never imports the snapshot format. The live session (engine/session,
// its stream's transport in engine/session/bus) reads the feeds' formats
// of the ingest tree and writes the Store; nothing but cmd imports it.
// No importer imports snapshot/ingest/official, the writer of the
// official formats (generate --official): the proof that import reads
// the official files is only a proof if the readers know nothing of the
// writer. Only cmd (generate) and official's own tests use it.
var allowedImports = []struct {
	pkg   string
	allow []string
	deny  []string
}{
	{"cmd/...", []string{"..."}, nil},
	{"bench", nil, nil},
	{"httpapi", []string{"engine", "internal/atomicfile", "internal/csvcell", "internal/mapfile", "internal/yieldpoint"}, nil},
	{"snapshot", []string{"engine", "engine/ratios", "snapshot/bundle", "internal/atomicfile", "internal/mapfile", "index"}, nil},
	{"snapshot/bundle", []string{"engine", "internal/atomicfile"}, nil},
	{"internal/atomicfile", nil, nil},
	{"internal/csvcell", nil, nil},
	{"internal/mapfile", nil, nil},
	{"internal/natstest", nil, nil},
	{"internal/wireload", nil, nil},
	{"internal/yieldpoint", nil, nil},
	{"snapshot/remote", []string{"snapshot", "internal/atomicfile"}, nil},
	{"snapshot/flatfiles", []string{"engine", "internal/atomicfile", "internal/csvcell", "internal/mapfile"}, nil},
	{"snapshot/ingest/...", []string{"engine", "internal/atomicfile", "snapshot/ingest/..."}, []string{"snapshot/ingest/official"}},
	{"engine/ratios", []string{"engine"}, nil},
	{"engine/session", []string{"engine", "engine/session/bus", "snapshot/ingest/live", "snapshot/ingest/negocios"}, nil},
	{"engine/session/bus", []string{"engine", "snapshot/ingest/live"}, nil},
	{"engine", []string{"index", "internal/yieldpoint"}, nil},
	{"index", nil, nil},
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

// rulesFor returns the allowed and denied imports of package p: those of
// the first entry whose pattern names it.
func rulesFor(p string) (allow, deny []string, ok bool) {
	for _, r := range allowedImports {
		if match(r.pkg, p) {
			return r.allow, r.deny, true
		}
	}
	return nil, nil, false
}

// allowed reports whether package p may import dep: a pattern of its
// allow list names dep and none of its deny list does.
func allowed(p, dep string) bool {
	allow, deny, _ := rulesFor(p)
	for _, d := range deny {
		if match(d, dep) {
			return false
		}
	}
	for _, a := range allow {
		if match(a, dep) {
			return true
		}
	}
	return false
}

// moduleRoot returns the module's root folder (the tests run in
// cmd/pregao).
func moduleRoot(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		tb.Fatalf("module root not found: %v", err)
	}
	return root
}

// modulePackages returns the module's packages (module-relative paths,
// sorted) and, for each, its non-test Go files (root-relative paths).
// Hidden folders, testdata and other modules (deploy) are left out; the
// module root (".") holds no package.
func modulePackages(tb testing.TB, root string) (pkgs []string, files map[string][]string) {
	tb.Helper()
	files = map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkg := filepath.ToSlash(rel)
		if files[pkg] == nil {
			pkgs = append(pkgs, pkg)
		}
		files[pkg] = append(files[pkg], path.Join(pkg, name))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(pkgs)
	return pkgs, files
}

// TestImportRules holds every package of the module to allowedImports and
// fails naming the file and the offending import.
func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	pkgs, files := modulePackages(t, root)
	fset := token.NewFileSet()
	for _, pkg := range pkgs {
		if _, _, ok := rulesFor(pkg); !ok && pkg != "." {
			t.Errorf("package %s has no entry in allowedImports: add one (and describe it in its doc.go)", pkg)
		}
		imports := map[string]string{} // import -> first file
		for _, file := range files[pkg] {
			f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(file)), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, spec := range f.Imports {
				ip, _ := strconv.Unquote(spec.Path.Value)
				if dep, ok := strings.CutPrefix(ip, module+"/"); ok {
					if _, seen := imports[dep]; !seen {
						imports[dep] = file
					}
				}
			}
		}
		allow, deny, _ := rulesFor(pkg)
		for dep, file := range imports {
			if !allowed(pkg, dep) {
				t.Errorf("%s imports %s: package %s may import only %v, never %v", file, dep, pkg, allow, deny)
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
	if a, _, _ := rulesFor("snapshot/ingest/cvm"); len(a) != 3 || a[0] != "engine" {
		t.Errorf("snapshot/ingest/cvm rules = %v", a)
	}
	g := func(p, dep string, want bool) {
		t.Helper()
		if got := allowed(p, dep); got != want {
			t.Errorf("allowed(%q, %q) = %v, want %v", p, dep, got, want)
		}
	}
	// No importer reaches the official-format writer; cmd (generate) does.
	for _, p := range []string{"snapshot/ingest/cvm", "snapshot/ingest/assemble", "snapshot/ingest/fetch", "snapshot/ingest/demo", "snapshot/ingest"} {
		g(p, "snapshot/ingest/official", false)
		g(p, "snapshot/ingest/datafile", true)
	}
	g("snapshot/ingest/official", "snapshot/ingest/fetch", true)
	g("cmd/pregao", "snapshot/ingest/official", true)
	g("httpapi", "internal/atomicfile", true)
	g("httpapi", "snapshot", false)
	g("httpapi", "snapshot/bundle", false)
	g("httpapi", "engine/session", false)
	g("snapshot/ingest/live", "engine/session/bus", false)
	g("engine/session", "httpapi", false)
	g("snapshot/flatfiles", "snapshot", false)
	g("httpapi", "snapshot/flatfiles", false)
}
