package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// The package-layout tables of README.md and CONTRIBUTING.md, and the
// lists of fetch's sources in the docs, are held to the tree: a package
// added, moved or removed fails here until its row is written. A new
// package needs a row in each table (and in allowedImports).

// docSection returns the text of file's section that starts with the
// heading line (e.g. "### Layout"), up to the next heading of the same or
// a higher level.
func docSection(tb testing.TB, file, heading string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot(tb), file))
	if err != nil {
		tb.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		tb.Fatalf("%s has no %q section", file, heading)
	}
	level, _, _ := strings.Cut(heading, " ")
	for l := len(level); l > 0; l-- {
		sec, _, _ = strings.Cut(sec, "\n"+strings.Repeat("#", l)+" ")
	}
	return sec
}

// isModule reports whether root/dir holds a Go module of its own (deploy).
func isModule(root, dir string) bool {
	_, err := os.Stat(filepath.Join(root, filepath.FromSlash(dir), "go.mod"))
	return err == nil
}

// TestReadmeLayout: README's layout table has a row for every package,
// by its path or by a "x/..." row whose text names each package of the
// level below x in backticks, and no row for a package that does not
// exist (a row for a folder holding a module of its own, deploy, is
// allowed).
func TestReadmeLayout(t *testing.T) {
	root := moduleRoot(t)
	pkgs, _ := modulePackages(t, root)
	sec := docSection(t, "README.md", "### Layout")
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (.*) \\|$").FindAllStringSubmatch(sec, -1)
	if len(rows) < 5 {
		t.Fatalf("README.md's layout table: %d rows found", len(rows))
	}
	var patterns []string
	for _, r := range rows {
		name, text := r[1], r[2]
		patterns = append(patterns, name)
		base, wild := strings.CutSuffix(name, "/...")
		if !wild {
			if !slices.Contains(pkgs, name) && !isModule(root, name) {
				t.Errorf("README.md's layout table has a row for %s, which is no package of the module", name)
			}
			continue
		}
		var below []string // the packages of the level below base
		for _, p := range pkgs {
			if rest, ok := strings.CutPrefix(p, base+"/"); ok {
				child, _, _ := strings.Cut(rest, "/")
				if !slices.Contains(below, child) {
					below = append(below, child)
				}
			}
		}
		if !slices.Contains(pkgs, base) && len(below) == 0 {
			t.Errorf("README.md's layout table has a row for %s, which holds no package", name)
		}
		for _, child := range below {
			if !strings.Contains(text, "`"+child+"`") {
				t.Errorf("README.md's layout row %s does not name `%s` (%s/%s)", name, child, base, child)
			}
		}
	}
	for _, p := range pkgs {
		if !slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, p) }) {
			t.Errorf("README.md's layout table has no row for package %s", p)
		}
	}
}

// layoutEntry is one package of CONTRIBUTING's layout tree.
type layoutEntry struct {
	pkg string
	// ruled is set for a line whose imports column is checked: one at
	// the tree's first level, or any line with "->". The column is
	// "-> a, b" (stdlib, x/... and other modules' names left out),
	// "(imports all)", or, at the first level, nothing (no package of
	// this module). An indented line without "->" shares its parent's
	// rule.
	ruled   bool
	imports string
	line    string
}

// parseLayoutTree reads the tree of CONTRIBUTING's "## Package layout":
// lines "PATH/  what it owns  -> imports", children indented by two
// spaces under their parent and named relative to it, several on a line
// when they share a description ("cotahist/ cvm/ fii/ b3/").
func parseLayoutTree(tb testing.TB, sec string) []layoutEntry {
	tb.Helper()
	_, tree, ok := strings.Cut(sec, "\n```\n")
	if !ok {
		tb.Fatal("CONTRIBUTING.md's package layout has no code block")
	}
	tree, _, _ = strings.Cut(tree, "\n```")
	type level struct {
		indent int
		path   string
	}
	var stack []level
	var out []layoutEntry
	for _, line := range strings.Split(tree, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		parent := ""
		if len(stack) > 0 {
			parent = stack[len(stack)-1].path
		} else if indent > 0 {
			tb.Fatalf("CONTRIBUTING.md's layout: %q is indented under nothing", line)
		}
		_, imports, arrow := strings.Cut(line, "->")
		if strings.Contains(line, "(imports all)") {
			imports, arrow = "...", true
		}
		fields := strings.Fields(line)
		var names []string
		for _, f := range fields {
			if !strings.HasSuffix(f, "/") {
				break
			}
			names = append(names, path.Join(parent, strings.TrimSuffix(f, "/")))
		}
		if len(names) == 0 {
			tb.Fatalf("CONTRIBUTING.md's layout: %q names no folder (PATH/ first)", line)
		}
		for _, n := range names {
			out = append(out, layoutEntry{pkg: n, ruled: indent == 0 || arrow, imports: imports, line: strings.TrimSpace(line)})
		}
		stack = append(stack, level{indent, names[len(names)-1]})
	}
	return out
}

// TestContributingLayout: CONTRIBUTING's layout tree names every package
// of the module and nothing else, and the imports it gives a package
// (every top-level one, and any with "->") are allowedImports' own.
func TestContributingLayout(t *testing.T) {
	root := moduleRoot(t)
	pkgs, _ := modulePackages(t, root)
	entries := parseLayoutTree(t, docSection(t, "CONTRIBUTING.md", "## Package layout"))
	var named []string
	for _, e := range entries {
		named = append(named, e.pkg)
		if !slices.Contains(pkgs, e.pkg) {
			t.Errorf("CONTRIBUTING.md's layout names %s/, which is no package of the module: %q", e.pkg, e.line)
			continue
		}
		if !e.ruled {
			continue
		}
		var doc []string
		for _, f := range strings.Split(e.imports, ",") {
			f = strings.TrimSpace(f)
			if f == "" || f == "stdlib" || strings.HasPrefix(f, "x/") || strings.Contains(strings.TrimSuffix(f, "..."), ".") {
				continue // not a package of this module: stdlib, x/sys, github.com/...
			}
			doc = append(doc, f)
		}
		allow, _, _ := rulesFor(e.pkg)
		if !sameSet(doc, allow) {
			t.Errorf("CONTRIBUTING.md's layout says %s imports %v of the module; allowedImports says %v: %q", e.pkg, doc, allow, e.line)
		}
	}
	for _, p := range pkgs {
		if !slices.Contains(named, p) {
			t.Errorf("CONTRIBUTING.md's layout tree does not name package %s", p)
		}
	}
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// TestParseLayoutTree checks the tree reader on nesting and shared lines.
func TestParseLayoutTree(t *testing.T) {
	sec := "x\n```\n" +
		"cmd/pregao/   flags          (imports all)\n" +
		"snapshot/ingest/   producers   -> engine, snapshot/ingest/...\n" +
		"  a/ b/         two formats\n" +
		"  live/         feeds\n" +
		"    bus/        the stream   -> engine\n" +
		"  c/            one more\n" +
		"index/        structures     -> stdlib\n" +
		"```\n"
	var got []string
	for _, e := range parseLayoutTree(t, sec) {
		got = append(got, e.pkg+"|"+strings.TrimSpace(e.imports)+"|"+map[bool]string{true: "ruled", false: ""}[e.ruled])
	}
	want := []string{
		"cmd/pregao|...|ruled",
		"snapshot/ingest|engine, snapshot/ingest/...|ruled",
		"snapshot/ingest/a||", "snapshot/ingest/b||",
		"snapshot/ingest/live||",
		"snapshot/ingest/live/bus|engine|ruled",
		"snapshot/ingest/c||",
		"index|stdlib|ruled",
	}
	if !slices.Equal(got, want) {
		t.Errorf("parsed\n%q\nwant\n%q", got, want)
	}
}

// TestDocsFetchSources: every list of fetch's sources in the docs is
// fetch.Sources (in its order), and the sources update fetches unless
// told, and the default index list, are the code's.
func TestDocsFetchSources(t *testing.T) {
	root := moduleRoot(t)
	read := func(file string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := strings.Join(fetch.Sources, ",")
	readme := read("README.md")
	m := regexp.MustCompile("`pregao fetch [^`|]*\\[--sources ([a-z,]+)\\]").FindStringSubmatch(readme)
	if m == nil {
		t.Error("README.md's CLI table: no `pregao fetch ... [--sources LIST]` row")
	} else if m[1] != all {
		t.Errorf("README.md lists fetch's sources as %s; fetch.Sources is %s", m[1], all)
	}

	sec := docSection(t, "docs/operations.md", "### What `pregao fetch` downloads")
	var table []string
	for _, r := range regexp.MustCompile("(?m)^\\| ((?:`[a-z]+`(?:, )?)+) \\|").FindAllStringSubmatch(sec, -1) {
		for _, s := range strings.Split(r[1], ", ") {
			table = append(table, strings.Trim(s, "`"))
		}
	}
	if !slices.Equal(table, fetch.Sources) {
		t.Errorf("docs/operations.md's table of fetch sources lists %v; fetch.Sources is %v", table, fetch.Sources)
	}
	if want := "`pregao update` fetches `" + defaultUpdateSources + "`"; !strings.Contains(strings.Join(strings.Fields(sec), " "), want) {
		t.Errorf("docs/operations.md does not say %q (defaultUpdateSources)", want)
	}
	if want := "(default `" + strings.Join(fetch.DefaultIndexes, ",") + "`)"; !strings.Contains(sec, want) {
		t.Errorf("docs/operations.md does not give the default indexes as %s (fetch.DefaultIndexes)", want)
	}
}

// declaredNames returns, for each package name of the module (its Go
// files, tests included), the names it declares: functions, methods,
// types, variables, constants and struct fields.
func declaredNames(tb testing.TB, root string) map[string]map[string]bool {
	tb.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || isModule(root, p[len(root):])) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := out[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.Name.Name] = names
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				names[n.Name.Name] = true
			case *ast.TypeSpec:
				names[n.Name.Name] = true
			case *ast.ValueSpec:
				for _, id := range n.Names {
					names[id.Name] = true
				}
			case *ast.Field:
				for _, id := range n.Names {
					names[id.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestContributingNames: every Go file CONTRIBUTING.md names (a
// backquoted path ending in .go) exists, and so does every name of code
// it gives: pkg.Name of a package of this module, an unexported
// camelCase name (officialInputs) or a test (TestImportRules). Its steps
// cannot point at a file or a function that moved or was renamed.
func TestContributingNames(t *testing.T) {
	root := moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	files := regexp.MustCompile("`([a-z0-9_/]+\\.go)[`:]").FindAllStringSubmatch(text, -1)
	if len(files) < 3 {
		t.Fatalf("%d Go files named in CONTRIBUTING.md", len(files))
	}
	for _, m := range files {
		p := m[1]
		if !strings.Contains(p, "/") {
			continue // a file of the package the text is about (encode.go)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("CONTRIBUTING.md names %s: %v", p, err)
		}
	}
	decl := declaredNames(t, root)
	codeName := regexp.MustCompile("^(Test[A-Z]|[a-z]+[A-Z])") // not a plain word
	n := 0
	for _, m := range regexp.MustCompile("`(?:([a-z]+)\\.)?([A-Za-z_][A-Za-z0-9_]*)`").FindAllStringSubmatch(text, -1) {
		pkg, name := m[1], m[2]
		switch {
		case pkg != "":
			if decl[pkg] == nil {
				continue // not a package of this module (testing.TB)
			}
			if !decl[pkg][name] {
				t.Errorf("CONTRIBUTING.md names %s.%s, which package %s does not declare", pkg, name, pkg)
			}
		case codeName.MatchString(name):
			if !slices.ContainsFunc(slices.Collect(maps.Values(decl)), func(names map[string]bool) bool { return names[name] }) {
				t.Errorf("CONTRIBUTING.md names %s, which no package declares", name)
			}
		default:
			continue
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d names of code checked in CONTRIBUTING.md", n)
	}
}
