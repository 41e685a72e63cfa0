package official

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"testing"
)

// A file is published under its official name only once it is whole: a
// failing fill (as a full disk or a kill midway would leave it) keeps an
// earlier file as it was and leaves no temporary file behind.
func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	w := &writer{dir: dir}
	rel := "dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"
	// The temporary file of a generate killed midway (its process gone):
	// the next write of the same file removes it.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	stale := filepath.Join(dir, filepath.FromSlash(path.Dir(rel)), ".cad_cia_aberta.csv.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-1")
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.writeFile(rel, func(out io.Writer) error { _, err := io.WriteString(out, "whole\n"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if err := w.writeFile(rel, func(out io.Writer) error {
		io.WriteString(out, "half")
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the fill's", err)
	}
	if err := w.writeZip("x/archive.zip", []member{{"a.csv", func(io.Writer) error { return boom }}}); !errors.Is(err, boom) {
		t.Fatalf("zip err = %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil || string(b) != "whole\n" {
		t.Fatalf("file after a failed rewrite: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x", "archive.zip")); !os.IsNotExist(err) {
		t.Fatalf("failed archive published: %v", err)
	}
	for _, d := range []string{filepath.Dir(filepath.Join(dir, filepath.FromSlash(rel))), filepath.Join(dir, "x")} {
		ents, _ := os.ReadDir(d)
		if len(ents) > 1 || len(ents) == 1 && filepath.Join(d, ents[0].Name()) != filepath.Join(dir, filepath.FromSlash(rel)) {
			t.Errorf("%s holds %v: temporary files left", d, ents)
		}
	}
	if w.st.Files != 1 || w.st.Bytes != 6 {
		t.Errorf("stats %d files, %d bytes; want the one whole file", w.st.Files, w.st.Bytes)
	}
}
