package httpapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestKeysAddLookupRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	f, err := ReadKeysFile(path) // missing file: empty
	if err != nil || len(f.Keys) != 0 {
		t.Fatalf("ReadKeysFile(missing) = %v, %v", f, err)
	}
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	k1, err := f.AddKey("alice", PlanDelayed, now)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := f.AddKey("bob", PlanEOD, now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddKey("alice", PlanEOD, now); err == nil {
		t.Error("duplicate name accepted")
	}
	if _, err := f.AddKey("carol", "gold", now); err == nil {
		t.Error("unknown plan accepted")
	}
	if !strings.HasPrefix(k1, KeyPrefix) || len(k1) != len(KeyPrefix)+32 || k1 == k2 {
		t.Fatalf("keys %q %q", k1, k2)
	}
	if err := WriteKeysFile(path, f); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), k1) || strings.Contains(string(raw), k2) {
		t.Fatal("keys file holds a raw key")
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("keys file mode %v", st.Mode())
	}
	keys, err := LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := keys.Lookup(k1); !ok || e.Name != "alice" || e.Plan != PlanDelayed {
		t.Errorf("Lookup(k1) = %+v, %v", e, ok)
	}
	if e, ok := keys.Lookup(k2); !ok || e.Plan != PlanEOD {
		t.Errorf("Lookup(k2) = %+v, %v", e, ok)
	}
	for _, bad := range []string{"", k1[:len(k1)-1], k1 + "0", strings.ToUpper(k1), strings.Repeat("x", 500)} {
		if _, ok := keys.Lookup(bad); ok {
			t.Errorf("Lookup(%q) accepted", bad)
		}
	}
	if err := f.RemoveKey("alice"); err != nil {
		t.Fatal(err)
	}
	if err := f.RemoveKey("alice"); err == nil {
		t.Error("removing a missing key succeeded")
	}
	WriteKeysFile(path, f)
	keys, _ = LoadKeys(path)
	if _, ok := keys.Lookup(k1); ok {
		t.Error("removed key still accepted")
	}
	if keys.Len() != 1 {
		t.Errorf("Len = %d", keys.Len())
	}
}

func TestKeysFileInvalid(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"badplan":   `{"keys":[{"name":"a","plan":"gold","sha256":"` + strings.Repeat("0", 64) + `"}]}`,
		"baddigest": `{"keys":[{"name":"a","plan":"eod","sha256":"xyz"}]}`,
		"unknown":   `{"keys":[],"extra":1}`,
		"dupdigest": `{"keys":[{"name":"a","plan":"eod","sha256":"` + strings.Repeat("0", 64) + `"},{"name":"b","plan":"eod","sha256":"` + strings.Repeat("0", 64) + `"}]}`,
		"notjson":   `{`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := LoadKeys(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := LoadKeys(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing keys file accepted by LoadKeys")
	}
}
