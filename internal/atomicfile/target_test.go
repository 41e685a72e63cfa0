package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTarget(t *testing.T) {
	root := t.TempDir()
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	p := func(rel string) string { return filepath.Join(real, rel) }
	os.MkdirAll(p("data/sub"), 0o755)
	os.WriteFile(p("data/keys.json"), []byte("{}"), 0o600)
	os.Symlink("data/keys.json", p("rel"))       // relative
	os.Symlink(p("data/keys.json"), p("abs"))    // absolute
	os.Symlink("rel", p("chain"))                // link to a link
	os.Symlink("../keys.json", p("data/sub/up")) // relative, upwards
	os.Symlink("data/sub", p("dirlink"))         // a folder link
	os.Symlink("missing.json", p("dangling"))    // to a file to create
	os.Symlink("loop2", p("loop1"))              // a cycle
	os.Symlink("loop1", p("loop2"))
	for _, c := range []struct{ in, want string }{
		{"data/keys.json", "data/keys.json"},
		{"new.json", "new.json"},
		{"rel", "data/keys.json"},
		{"abs", "data/keys.json"},
		{"chain", "data/keys.json"},
		{"data/sub/up", "data/keys.json"},
		{"dirlink/up", "data/keys.json"}, // the link's folder resolved first
		{"dangling", "missing.json"},
	} {
		got, err := Target(p(c.in))
		if err != nil || got != p(c.want) {
			t.Errorf("Target(%s) = %q, %v; want %q", c.in, got, err, p(c.want))
		}
	}
	if got, err := Target(p("loop1")); err == nil {
		t.Errorf("Target of a cycle = %q, no error", got)
	}
}
