package httpapi

import (
	"crypto/sha256"
	"hash/maphash"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// TestKeysRemembered checks find's remembered keys: a key found once is
// found again from its slot, the slot's key is compared whole (a guess
// placed in a key's slot, one byte off, is refused), a refused key is not
// remembered, and a reload's Keys has forgotten a removed key.
func TestKeysRemembered(t *testing.T) {
	f := KeysFile{}
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	k1, err := f.AddKey("alice", PlanDelayed, now)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := NewKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	slotOf := func(k *Keys, key string) *atomic.Pointer[knownKey] {
		return &k.seen[maphash.String(keySlotSeed, key)%keySlots]
	}
	if slotOf(keys, k1).Load() != nil {
		t.Fatal("a key never presented is remembered")
	}
	st := keys.find(k1)
	if st == nil || st.Name != "alice" {
		t.Fatalf("find(k1) = %+v", st)
	}
	e := slotOf(keys, k1).Load()
	if e == nil || e.key != k1 || e.st != st {
		t.Fatalf("k1's slot holds %+v after find", e)
	}
	if again := keys.find(k1); again != st {
		t.Fatalf("find(k1) again = %p, want %p", again, st)
	}
	// A guess one byte off, placed in alice's slot as if it hashed there:
	// the slot is alice's, the guess is not, and the digest refuses it.
	guess := k1[:len(k1)-1] + string(k1[len(k1)-1]^1)
	slotOf(keys, guess).Store(e)
	if got := keys.find(guess); got != nil {
		t.Fatalf("find(guess) in alice's slot = %+v, want nil", got)
	}
	for _, bad := range []string{guess, "pg_" + strings.Repeat("0", 32), k1 + " "} {
		if keys.find(bad) != nil {
			t.Errorf("find(%q) accepted", bad)
		}
		if e := slotOf(keys, bad).Load(); e != nil && e.key == bad {
			t.Errorf("refused key %q remembered", bad)
		}
	}
	if err := f.RemoveKey("alice"); err != nil {
		t.Fatal(err)
	}
	reloaded, err := NewKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	if reloaded.find(k1) != nil {
		t.Error("a removed key is found after the reload")
	}
}

// BenchmarkKeysFind finds a key in use: from its slot (remembered), and
// through SHA-256 as every request did before (digest).
func BenchmarkKeysFind(b *testing.B) {
	f := KeysFile{}
	key, err := f.AddKey("alice", PlanDelayed, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	keys, err := NewKeys(f)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("remembered", func(b *testing.B) {
		for range b.N {
			if keys.find(key) == nil {
				b.Fatal("not found")
			}
		}
	})
	b.Run("digest", func(b *testing.B) {
		var buf [maxKeyLen]byte
		for range b.N {
			n := copy(buf[:], key)
			if keys.byDigest[sha256.Sum256(buf[:n])] == nil {
				b.Fatal("not found")
			}
		}
	})
}
