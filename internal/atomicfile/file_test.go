package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// temps returns the temporary entries beside path.
func temps(tb testing.TB, path string) []string {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// content returns the file at path, or "<none>" when it does not exist.
func content(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "<none>"
	}
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.json")
	for _, c := range []string{"one", "two, longer", ""} { // create, replace, shrink
		if err := WriteFile(path, 0o640, writeString(c)); err != nil {
			t.Fatal(err)
		}
		if got := content(t, path); got != c {
			t.Errorf("after WriteFile(%q): %q", c, got)
		}
		if left := temps(t, path); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
	if runtime.GOOS != "windows" {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o640 { // exactly perm, whatever the umask
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}
	}
}

// A failing write func leaves the target as it was (or absent) and no
// temporary file, and its error comes back as is.
func TestWriteFileFailingWrite(t *testing.T) {
	dir := t.TempDir()
	boom := errors.New("boom")
	fail := func(w io.Writer) error {
		io.WriteString(w, "half of the new content")
		return boom
	}
	old := filepath.Join(dir, "old")
	os.WriteFile(old, []byte("old content"), 0o644)
	for path, want := range map[string]string{old: "old content", filepath.Join(dir, "new"): "<none>"} {
		if err := WriteFile(path, 0o644, fail); !errors.Is(err, boom) {
			t.Errorf("%s: err = %v, want boom", path, err)
		}
		if got := content(t, path); got != want {
			t.Errorf("%s after a failed write: %q, want %q", path, got, want)
		}
		if left := temps(t, path); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), 0o644, writeString("x")); err == nil {
		t.Error("WriteFile into a missing folder succeeded")
	}
}

// Commit renames, then syncs the folder; the temporary file's content can
// be read back before (Name); Abort is a no-op after Commit and a second
// Commit fails.
func TestCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.snap")
	os.WriteFile(path, []byte("old"), 0o644)
	var synced []string
	sync := syncDir
	syncDir = func(d string) error {
		synced = append(synced, d+" holding "+content(t, path))
		return sync(d)
	}
	t.Cleanup(func() { syncDir = sync })

	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	io.WriteString(f, "new")
	if got := content(t, f.Name()); got != "new" {
		t.Errorf("Name() holds %q before Commit", got)
	}
	if got := content(t, path); got != "old" {
		t.Errorf("target is %q before Commit", got)
	}
	if f.Path() != path || filepath.Dir(f.Name()) != dir {
		t.Errorf("Path %q, Name %q: want %q and a sibling", f.Path(), f.Name(), path)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if want := []string{dir + " holding new"}; fmt.Sprint(synced) != fmt.Sprint(want) {
		t.Errorf("folder syncs %q, want %q (after the rename)", synced, want)
	}
	f.Abort()
	if got := content(t, path); got != "new" {
		t.Errorf("Abort after Commit changed the target: %q", got)
	}
	if err := f.Commit(); err == nil {
		t.Error("a second Commit succeeded")
	}

	g, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(g, "abandoned")
	g.Abort()
	if got := content(t, path); got != "new" {
		t.Errorf("after Abort the target is %q", got)
	}
	if left := temps(t, path); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := g.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
}

// helperEnv names the file TestHelperWriter writes in a child process.
const helperEnv = "ATOMICFILE_HELPER_PATH"

// TestHelperWriter is not a test: run by TestKilledWriter in a child
// process, it starts replacing the file, says so and waits to be killed.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("run by TestKilledWriter")
	}
	f, err := Create(path, 0o644)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	io.WriteString(f, "half of the new")
	fmt.Println("writing", filepath.Base(f.Name()))
	io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(1)
}

// A writer killed between Create and Commit leaves the target as it was
// and a temporary file that RemoveStale, and so the next writer, removes.
func TestKilledWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	os.WriteFile(path, []byte("old"), 0o644)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n') // the child is writing
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got := content(t, path); got != "old" {
		t.Errorf("after the kill the target is %q", got)
	}
	left := temps(t, path)
	want := "writing ." + filepath.Base(path) + ".tmp-" + strconv.Itoa(cmd.Process.Pid) + "-"
	if len(left) != 1 || !strings.HasPrefix(line, want) {
		t.Fatalf("child said %q; temporary files %v", line, left)
	}
	if err := WriteFile(path, 0o644, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if got := content(t, path); got != "new" {
		t.Errorf("the next write gave %q", got)
	}
	if left := temps(t, path); len(left) != 0 {
		t.Errorf("the killed writer's temporary file was not removed: %v", left)
	}
}
