package httpapi

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestUpdateKeysFileConcurrentAdds runs many adds on one file at once:
// every key each of them returned must be in the file afterwards.
func TestUpdateKeysFileConcurrentAdds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	const n = 20
	for round := 0; round < 5; round++ {
		os.Remove(path)
		var wg sync.WaitGroup
		keys := make([]string, n)
		errs := make([]error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				errs[i] = UpdateKeysFile(path, func(f *KeysFile) error {
					k, err := f.AddKey(fmt.Sprintf("k%02d", i), PlanDelayed, time.Now())
					keys[i] = k
					return err
				})
			}(i)
		}
		wg.Wait()
		ks, err := LoadKeys(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			if errs[i] != nil {
				t.Fatalf("round %d add %d: %v", round, i, errs[i])
			}
			if _, ok := ks.Lookup(k); !ok {
				t.Errorf("round %d: key %d was reported added but is not in the file", round, i)
			}
		}
		if ks.Len() != n {
			t.Errorf("round %d: %d keys in the file, want %d", round, ks.Len(), n)
		}
	}
}

// TestUpdateKeysFileRemoveRacesAdd removes a key while others are added:
// the removed key never comes back.
func TestUpdateKeysFileRemoveRacesAdd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	var victim string
	if err := UpdateKeysFile(path, func(f *KeysFile) (err error) {
		victim, err = f.AddKey("victim", PlanEOD, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if err := UpdateKeysFile(path, func(f *KeysFile) error {
				_, err := f.AddKey(fmt.Sprintf("a%d", i), PlanEOD, time.Now())
				return err
			}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := UpdateKeysFile(path, func(f *KeysFile) error { return f.RemoveKey("victim") }); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	ks, err := LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ks.Lookup(victim); ok {
		t.Error("the removed key is back in the file")
	}
	if ks.Len() != 10 {
		t.Errorf("%d keys, want 10", ks.Len())
	}
}

// TestUpdateKeysFileKeepsModeAndOwner: an update keeps the replaced file's
// permission bits and, when run as root, its owner and group.
func TestUpdateKeysFileKeepsModeAndOwner(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	add := func(name string) {
		t.Helper()
		if err := UpdateKeysFile(path, func(f *KeysFile) error {
			_, err := f.AddKey(name, PlanDelayed, time.Now())
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	add("first")
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", st.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	owned := os.Getuid() == 0
	if owned {
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	add("second")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode after update %v, want 0640", st.Mode().Perm())
	}
	if owned {
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 65534 || sys.Gid != 65534 {
			t.Errorf("owner after update %d:%d, want 65534:65534", sys.Uid, sys.Gid)
		}
	} else {
		t.Log("not root: owner preservation checked only as root")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".keys.json.tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestUpdateKeysFileFailureKeepsFile: a change that fails, or a file that
// cannot be read, leaves the file as it was.
func TestUpdateKeysFileFailureKeepsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := UpdateKeysFile(path, func(f *KeysFile) error { _, err := f.AddKey("a", PlanEOD, time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := UpdateKeysFile(path, func(f *KeysFile) error { return f.RemoveKey("nobody") }); err == nil {
		t.Error("removing a missing key succeeded")
	}
	if err := UpdateKeysFile(path, func(f *KeysFile) error { _, err := f.AddKey("a", PlanEOD, time.Now()); return err }); err == nil {
		t.Error("a duplicate name was added")
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Errorf("file changed by failed updates:\n%s\n%s", before, after)
	}
}

// TestReadKeysFileNotAKeysFile: a document that is not a keys object is an
// error, not an empty key set.
func TestReadKeysFileNotAKeysFile(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"null": "null", "empty": "", "spaces": " \n", "two": `{"keys":[]} {"keys":[]}`} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := ReadKeysFile(p); err == nil {
			t.Errorf("%s: %q read as a keys file", name, body)
		}
	}
	p := filepath.Join(dir, "allow")
	os.WriteFile(p, []byte(`{"keys":[],"allow_empty":true}`), 0o600)
	if f, err := ReadKeysFile(p); err != nil || !f.AllowEmpty {
		t.Errorf("allow_empty file: %+v, %v", f, err)
	}
}

// TestReloadKeys: a reload that would drop every key is refused unless the
// file says so, an invalid file is refused, and each outcome is counted.
func TestReloadKeys(t *testing.T) {
	ts := newTestServer(t, true)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := ts.api.keys.Load().Len()
	if before == 0 {
		t.Fatal("the test server serves no key")
	}
	for _, body := range []string{`{"keys":[]}`, `{}`, `{"keys":null}`} {
		n, err := ts.api.ReloadKeys(write("empty.json", body))
		if !errors.Is(err, ErrKeysDropped) || n != before {
			t.Errorf("%s: ReloadKeys = %d, %v; want %d and ErrKeysDropped", body, n, err, before)
		}
	}
	for _, body := range []string{`null`, `{`, `{"keys":[{"name":"a","plan":"gold","sha256":"00"}]}`} {
		if _, err := ts.api.ReloadKeys(write("bad.json", body)); err == nil || errors.Is(err, ErrKeysDropped) {
			t.Errorf("%s: ReloadKeys error %v, want a parse error", body, err)
		}
	}
	if _, err := ts.api.ReloadKeys(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file was applied")
	}
	if got := ts.api.keys.Load().Len(); got != before {
		t.Fatalf("after refusals %d keys served, want %d", got, before)
	}
	if n, err := ts.api.ReloadKeys(write("allow.json", `{"keys":[],"allow_empty":true}`)); err != nil || n != 0 {
		t.Errorf("allow_empty: ReloadKeys = %d, %v", n, err)
	}
	metrics := ts.do("GET", "/metrics", "", "").Body.String()
	for _, want := range []string{
		`pregao_keys_loaded 0`,
		`pregao_keys_reloads_total{result="refused"} 3`,
		`pregao_keys_reloads_total{result="error"} 4`,
		`pregao_keys_reloads_total{result="ok"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// TestRemoveLastKeyRevokes: removing the last key of a keys file (what
// `pregao keys remove` does) is a revocation the running server applies:
// the file says it is meant to be empty, so the reload is not refused as
// an accidental truncation, and the removed key gets 401.
func TestRemoveLastKeyRevokes(t *testing.T) {
	ts := newTestServer(t, true)
	path := filepath.Join(t.TempDir(), "keys.json")
	var key string
	if err := UpdateKeysFile(path, func(f *KeysFile) (err error) {
		key, err = f.AddKey("last", PlanDelayed, time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.api.ReloadKeys(path); err != nil || n != 1 {
		t.Fatalf("ReloadKeys = %d, %v", n, err)
	}
	if w := ts.do("GET", "/v2/companies", key, ""); w.Code != 200 {
		t.Fatalf("before the removal: %d %s", w.Code, w.Body)
	}
	if err := UpdateKeysFile(path, func(f *KeysFile) error { return f.RemoveKey("last") }); err != nil {
		t.Fatal(err)
	}
	if n, err := ts.api.ReloadKeys(path); err != nil || n != 0 {
		t.Errorf("reload after removing the last key = %d, %v; want 0 keys served", n, err)
	}
	checkError(t, ts.do("GET", "/v2/companies", key, ""), 401, "unknown API key")
}

// An update killed midway leaves its temporary file; the next update
// removes it (its writer is gone) and keeps a live writer's.
func TestUpdateKeysFileRemovesStaleTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "keys.json")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("cannot run true:", err)
	}
	stale := filepath.Join(dir, ".keys.json.tmp-"+strconv.Itoa(cmd.Process.Pid)+"-1")
	live := filepath.Join(dir, ".keys.json.tmp-"+strconv.Itoa(os.Getpid())+"-2")
	for _, p := range []string{stale, live} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := UpdateKeysFile(path, func(f *KeysFile) error { _, err := f.AddKey("a", PlanEOD, time.Now()); return err }); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file of a killed update is still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
}
