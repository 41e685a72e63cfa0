package atomicfile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestTempPattern(t *testing.T) {
	p := TempPattern("x.snap")
	if want := ".x.snap.tmp-" + strconv.Itoa(os.Getpid()) + "-*"; p != want {
		t.Errorf("TempPattern = %q, want %q", p, want)
	}
}

// TestTempOf: TempPattern's names, and an older version's, give back
// their base and process id; any other name is not a temporary entry.
func TestTempOf(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		pid        int
		ok         bool
	}{
		{".x.snap.tmp-123-456", "x.snap", 123, true},
		{".x.snap.tmp-987654", "x.snap", 987654, true}, // an older version's: RANDOM stands for the pid
		{".a.tmp-b.tmp-7-1", "a.tmp-b", 7, true},       // a base holding ".tmp-"
		{".s1-all.tmp-42-99", "s1-all", 42, true},
		{"x.snap.tmp-1-2", "", 0, false}, // no leading dot
		{".x.snap.tmp-abc-2", "", 0, false},
		{".x.snap", "", 0, false},
		{"..tmp-1-2", "", 0, false}, // no base
		{"", "", 0, false},
	} {
		base, pid, ok := TempOf(tc.name)
		if base != tc.base || pid != tc.pid || ok != tc.ok {
			t.Errorf("TempOf(%q) = %q, %d, %v; want %q, %d, %v", tc.name, base, pid, ok, tc.base, tc.pid, tc.ok)
		}
	}
	name := strings.Replace(TempPattern("f"), "*", "55", 1)
	if base, pid, ok := TempOf(name); base != "f" || pid != os.Getpid() || !ok {
		t.Errorf("TempOf(%q) = %q, %d, %v: not TempPattern's inverse", name, base, pid, ok)
	}
}

func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	return cmd.Process.Pid
}

func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	dead := strconv.Itoa(deadPid(t))
	mine := strconv.Itoa(os.Getpid())
	names := map[string]bool{ // name -> must survive
		".x.snap.tmp-" + dead + "-1":  false, // killed writer (file)
		".x.snap.tmp-" + dead + "-2/": false, // killed writer (folder)
		".x.snap.tmp-" + mine + "-3":  true,  // this live process
		".x.snap.tmp-abc":             true,  // not a pid
		".y.snap.tmp-" + dead + "-4":  true,  // another file's
		"x.snap":                      true,
	}
	for n := range names {
		p := filepath.Join(dir, strings.TrimSuffix(n, "/"))
		if strings.HasSuffix(n, "/") {
			os.MkdirAll(filepath.Join(p, "sub"), 0o755)
		} else {
			os.WriteFile(p, []byte("x"), 0o644)
		}
	}
	removed := RemoveStale(dir, "x.snap")
	if len(removed) != 2 {
		t.Errorf("removed %v, want the 2 entries of the dead writer", removed)
	}
	for n, keep := range names {
		_, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(n, "/")))
		if keep != (err == nil) {
			t.Errorf("%s: exists=%v, want %v", n, err == nil, keep)
		}
	}
}

func TestSwapDir(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "b")
	mk := func(content string) string {
		t.Helper()
		tmp, err := os.MkdirTemp(parent, TempPattern("b"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, "f"), []byte(content), 0o644)
		return tmp
	}
	for _, content := range []string{"one", "two"} { // new, then replace
		tmp := mk(content)
		if err := SwapDir(tmp, dir); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != content {
			t.Errorf("after swap f = %q, want %q", b, content)
		}
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Errorf("%s still exists after the swap", tmp)
		}
	}
	if err := SwapDir(mk("x"), filepath.Join(t.TempDir(), "elsewhere")); err == nil {
		t.Error("SwapDir across folders succeeded")
	}
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o644)
	if err := SwapDir(mk("x"), file); err == nil {
		t.Error("SwapDir over a file succeeded")
	}
}
