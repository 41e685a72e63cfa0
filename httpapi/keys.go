package httpapi

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"
)

// Plans.
const (
	// PlanDelayed sees same-session data with a 15-minute delay and every
	// quote option.
	PlanDelayed = "delayed"
	// PlanEOD sees only sessions before the current one and may send only
	// `adjusted` on quote operations.
	PlanEOD = "eod"
)

// ScopeAdmin is the scope of the keys that may call the operator routes
// under /admin (the live session's push feed). It gives no market data: a
// key with this scope and no plan (Plan "") is refused (403) on every other
// route, and a plan key without it is refused on /admin. Keep the two
// apart: a feed's key and a reader's key are different keys.
const ScopeAdmin = "admin"

// QuoteDelay is the delay of same-session data for PlanDelayed.
const QuoteDelay = 15 * time.Minute

// KeyPrefix starts every API key.
const KeyPrefix = "pg_"

// maxKeyLen bounds a presented key; longer keys are refused without hashing.
const maxKeyLen = 128

// KeyEntry is one API key in a keys file. Only the SHA-256 digest of the key
// is stored; the key itself is shown once, when it is created.
type KeyEntry struct {
	Name string `json:"name"`
	// Plan is the market data the key sees, PlanDelayed or PlanEOD; ""
	// only for a key with ScopeAdmin, which then sees none.
	Plan      string    `json:"plan"`
	SHA256    string    `json:"sha256"` // lowercase hex digest of the key
	CreatedAt time.Time `json:"created_at"`
	// Limit overrides the plan's request-rate limit for this key (nil:
	// the plan's, from KeysFile.Limits).
	Limit *Limit `json:"limit,omitempty"`
	// Scopes are the key's rights beside its plan: ScopeAdmin, or none.
	Scopes []string `json:"scopes,omitempty"`
}

// Admin reports whether the key has ScopeAdmin.
func (e *KeyEntry) Admin() bool { return slices.Contains(e.Scopes, ScopeAdmin) }

// KeysFile is the JSON document of a keys file.
type KeysFile struct {
	Keys []KeyEntry `json:"keys"`
	// AllowEmpty says that a file with no key is meant: a running server
	// refuses to reload a keys file that drops every key unless it is set.
	AllowEmpty bool `json:"allow_empty,omitempty"`
	// Limits are the request-rate limits of each plan, by plan name; a
	// plan without one is not limited.
	Limits map[string]Limit `json:"limits,omitempty"`
}

// Keys authenticates presented API keys. Its keys are fixed by NewKeys;
// it is safe for concurrent use.
type Keys struct {
	byDigest map[[sha256.Size]byte]*keyState

	// seen remembers keys presented before and found, so that a key
	// presented again is not hashed again (find).
	seen [keySlots]atomic.Pointer[knownKey]
}

// keySlots is the size of Keys.seen: a key in use has a slot of its
// own while fewer than about this many keys are in use at once.
const keySlots = 1024

// knownKey is a key presented and found, as presented. Never modified.
type knownKey struct {
	key string
	st  *keyState
}

// keySlotSeed seeds the hash that places a presented key in Keys.seen: chosen
// at random per process, so that a client cannot choose which slot its
// guesses land in.
var keySlotSeed = maphash.MakeSeed()

// keyState is a key's entry, its token bucket (nil: not limited) and its
// admission state (admission.go).
type keyState struct {
	KeyEntry
	lim *limiter
	adm *keyAdmission
}

// NewKeys indexes the entries of f. It fails on an unknown plan, a malformed
// digest or a duplicated name or digest.
func NewKeys(f KeysFile) (*Keys, error) {
	k := &Keys{byDigest: make(map[[sha256.Size]byte]*keyState, len(f.Keys))}
	for plan, l := range f.Limits {
		if err := validPlan(plan); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
		if err := l.check(); err != nil {
			return nil, fmt.Errorf("limits of plan %s: %w", plan, err)
		}
		f.Limits[plan] = l
	}
	names := map[string]bool{}
	for i, e := range f.Keys {
		if err := checkAccess(e.Plan, e.Scopes); err != nil {
			return nil, fmt.Errorf("key %d (%q): %w", i, e.Name, err)
		}
		if e.Name == "" {
			return nil, fmt.Errorf("key %d: empty name", i)
		}
		if names[e.Name] {
			return nil, fmt.Errorf("key %d: duplicate name %q", i, e.Name)
		}
		names[e.Name] = true
		raw, err := hex.DecodeString(e.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("key %d (%q): sha256 must be 64 hex digits", i, e.Name)
		}
		var d [sha256.Size]byte
		copy(d[:], raw)
		if _, dup := k.byDigest[d]; dup {
			return nil, fmt.Errorf("key %d (%q): duplicate digest", i, e.Name)
		}
		l := f.Limits[e.Plan]
		if e.Limit != nil {
			l = *e.Limit
			if err := l.check(); err != nil {
				return nil, fmt.Errorf("key %d (%q): limit: %w", i, e.Name, err)
			}
		}
		st := &keyState{KeyEntry: e, adm: &keyAdmission{}}
		if l.PerSecond > 0 {
			st.lim = newLimiter(l)
		}
		k.byDigest[d] = st
	}
	return k, nil
}

// inherit gives k's limited keys the token buckets of old's keys of the
// same name and limit, so that a reload of the keys file neither refills
// nor empties them, and every key the admission state (slots, queue,
// counters) of old's key of the same name.
func (k *Keys) inherit(old *Keys) {
	if k == nil || old == nil {
		return
	}
	byName := make(map[string]*keyState, len(old.byDigest))
	for _, st := range old.byDigest {
		byName[st.Name] = st
	}
	for _, st := range k.byDigest {
		o := byName[st.Name]
		if o == nil {
			continue
		}
		if st.lim != nil && o.lim != nil && o.lim.limit == st.lim.limit {
			st.lim = o.lim
		}
		if o.adm != nil {
			st.adm = o.adm
		}
	}
}

// Lookup returns the entry of the presented key. The key is hashed and
// looked up by digest, so the comparison does not depend on how many leading
// bytes of a stored key match.
func (k *Keys) Lookup(key string) (KeyEntry, bool) {
	if st := k.find(key); st != nil {
		return st.KeyEntry, true
	}
	return KeyEntry{}, false
}

// find returns the state of the presented key, or nil. A key found once
// is remembered in its slot of k.seen and found there the next time
// without SHA-256 (a tenth of the cost); the slot's key is compared in
// constant time, so that, as with the digest, how many leading bytes of
// a guess match a key in use does not show. k.seen holds keys of k only:
// a keys file's reload makes a new Keys, which has forgotten them.
func (k *Keys) find(key string) *keyState {
	if k == nil || len(key) == 0 || len(key) > maxKeyLen {
		return nil
	}
	slot := &k.seen[maphash.String(keySlotSeed, key)%keySlots]
	if e := slot.Load(); e != nil && subtle.ConstantTimeCompare(bytesOf(e.key), bytesOf(key)) == 1 {
		return e.st
	}
	var buf [maxKeyLen]byte
	n := copy(buf[:], key)
	st := k.byDigest[sha256.Sum256(buf[:n])]
	if st != nil {
		slot.Store(&knownKey{key: strings.Clone(key), st: st})
	}
	return st
}

// bytesOf returns the bytes of s, not copied: to be read only.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// names returns the keys' names, in no order.
func (k *Keys) names() []string {
	out := make([]string, 0, len(k.byDigest))
	for _, s := range k.byDigest {
		out = append(out, s.Name)
	}
	return out
}

// Len returns the number of keys.
func (k *Keys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.byDigest)
}

// holds reports whether k still has the key of entry e, under its name.
func (k *Keys) holds(e KeyEntry) bool {
	var d [sha256.Size]byte
	if k == nil || hex.DecodedLen(len(e.SHA256)) != len(d) {
		return false
	}
	if _, err := hex.Decode(d[:], []byte(e.SHA256)); err != nil {
		return false
	}
	st := k.byDigest[d]
	return st != nil && st.Name == e.Name
}

func validPlan(p string) error {
	if p != PlanDelayed && p != PlanEOD {
		return fmt.Errorf("plan %q: want %s or %s", p, PlanDelayed, PlanEOD)
	}
	return nil
}

// checkAccess checks a key's plan and scopes: known scopes, each once, and
// a valid plan, or none with a scope.
func checkAccess(plan string, scopes []string) error {
	for i, s := range scopes {
		if s != ScopeAdmin {
			return fmt.Errorf("scope %q: want %s", s, ScopeAdmin)
		}
		if slices.Contains(scopes[:i], s) {
			return fmt.Errorf("scope %q listed twice", s)
		}
	}
	if plan == "" && len(scopes) > 0 {
		return nil
	}
	if plan == "" {
		return fmt.Errorf("no plan: want %s or %s (only a key with the %s scope may have none)", PlanDelayed, PlanEOD, ScopeAdmin)
	}
	return validPlan(plan)
}

// ReadKeysFile reads a keys file. A missing file is an empty KeysFile.
func ReadKeysFile(path string) (KeysFile, error) {
	var f KeysFile
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return f, fmt.Errorf("%s: not a keys file (want a JSON object with a \"keys\" array)", path)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	if dec.More() {
		return f, fmt.Errorf("%s: trailing data after the keys object", path)
	}
	if _, err := NewKeys(f); err != nil {
		return f, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// LoadKeys reads a keys file and indexes it. A missing file is an error.
func LoadKeys(path string) (*Keys, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		// Never opened: a named pipe would wait for a writer.
		return nil, fmt.Errorf("%s: not a regular file: a keys file must be a file", path)
	}
	f, err := ReadKeysFile(path)
	if err != nil {
		return nil, err
	}
	return NewKeys(f)
}

// ErrKeysDropped refuses a keys file that would drop every key being
// served without saying so (allow_empty).
var ErrKeysDropped = errors.New(`the keys file holds no key while keys are being served: refused, the previous keys keep serving (set "allow_empty": true in the file to serve no key)`)

// ReloadKeys reads the keys file at path and serves its keys. It is safe for
// concurrent use with requests. The previous keys keep serving, and an
// error is returned, when the file cannot be read or is invalid (counted
// as result "error" in pregao_keys_reloads_total) or when it would drop
// every key being served and does not set allow_empty (result "refused",
// the error wraps ErrKeysDropped). It returns the number of keys served.
func (a *API) ReloadKeys(path string) (int, error) {
	cur := a.keys.Load()
	if _, err := os.Stat(path); err != nil {
		a.m.keysReloads.WithLabelValues("error").Inc()
		return cur.Len(), err
	}
	f, err := ReadKeysFile(path)
	var k *Keys
	if err == nil {
		k, err = NewKeys(f)
	}
	if err != nil {
		a.m.keysReloads.WithLabelValues("error").Inc()
		return cur.Len(), err
	}
	if k.Len() == 0 && cur.Len() > 0 && !f.AllowEmpty {
		a.m.keysReloads.WithLabelValues("refused").Inc()
		return cur.Len(), fmt.Errorf("%s: %w", path, ErrKeysDropped)
	}
	a.SetKeys(k)
	a.m.keysReloads.WithLabelValues("ok").Inc()
	return k.Len(), nil
}

// NewKey returns a new random API key ("pg_" and 32 hex digits from
// crypto/rand) and its entry for a keys file, with plan and scopes (plan
// "" only with ScopeAdmin).
func NewKey(name, plan string, now time.Time, scopes ...string) (string, KeyEntry, error) {
	if err := checkAccess(plan, scopes); err != nil {
		return "", KeyEntry{}, err
	}
	if strings.TrimSpace(name) == "" {
		return "", KeyEntry{}, errors.New("key name is empty")
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", KeyEntry{}, err
	}
	key := KeyPrefix + hex.EncodeToString(raw[:])
	d := sha256.Sum256([]byte(key))
	e := KeyEntry{Name: name, Plan: plan, SHA256: hex.EncodeToString(d[:]), CreatedAt: now.UTC().Truncate(time.Second)}
	if len(scopes) > 0 {
		e.Scopes = slices.Clone(scopes)
	}
	return key, e, nil
}

// AddKey adds a new key named name, with plan and scopes (see NewKey), to
// f and returns the key. Names are unique.
func (f *KeysFile) AddKey(name, plan string, now time.Time, scopes ...string) (string, error) {
	for _, e := range f.Keys {
		if e.Name == name {
			return "", fmt.Errorf("a key named %q exists", name)
		}
	}
	key, e, err := NewKey(name, plan, now, scopes...)
	if err != nil {
		return "", err
	}
	f.Keys = append(f.Keys, e)
	return key, nil
}

// RemoveKey removes the key named name; it fails when there is none.
// Removing the last key sets AllowEmpty: the file is meant to hold no
// key, so that a running server applies the revocation instead of
// refusing the file as an accidental truncation (ErrKeysDropped) and
// going on accepting the removed key.
func (f *KeysFile) RemoveKey(name string) error {
	for i, e := range f.Keys {
		if e.Name == name {
			f.Keys = append(f.Keys[:i], f.Keys[i+1:]...)
			if len(f.Keys) == 0 {
				f.AllowEmpty = true
			}
			return nil
		}
	}
	return fmt.Errorf("no key named %q", name)
}
