package httpapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
)

// Keys of the admin tests, beside testKeyDelayed and testKeyEOD: one with
// only the admin scope, one with a plan and the admin scope.
const (
	testKeyAdmin     = "pg_00000000000000000000000000000a01"
	testKeyAdminPlan = "pg_00000000000000000000000000000a02"
)

// adminTestKeys are testKeys and the two admin keys.
func adminTestKeys(tb testing.TB) *Keys {
	tb.Helper()
	var f KeysFile
	for _, k := range []struct {
		key, name, plan string
		scopes          []string
	}{
		{testKeyDelayed, "delayed", PlanDelayed, nil},
		{testKeyEOD, "eod", PlanEOD, nil},
		{testKeyAdmin, "feed", "", []string{ScopeAdmin}},
		{testKeyAdminPlan, "both", PlanDelayed, []string{ScopeAdmin}},
	} {
		_, e, err := NewKey(k.name, k.plan, time.Unix(0, 0), k.scopes...)
		if err != nil {
			tb.Fatal(err)
		}
		e.SHA256 = sha256Hex(k.key)
		f.Keys = append(f.Keys, e)
	}
	keys, err := NewKeys(f)
	if err != nil {
		tb.Fatal(err)
	}
	return keys
}

// newAdminTestServer is newTestServer (published) with adminTestKeys and
// cfg.
func newAdminTestServer(tb testing.TB, cfg Config) *testServer {
	tb.Helper()
	ts := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	ts.store.Publish(mustSmall(tb))
	ts.api = New(cfg, ts.store, adminTestKeys(tb), nil, ts.reg, nil)
	ts.api.SetFiles(&fakeFiles{dir: tb.TempDir()})
	return ts
}

// A key may have the admin scope, with a plan or without one; without a
// scope it needs a plan; scopes are known ones, each once; the keys file
// keeps them.
func TestKeysAdminScope(t *testing.T) {
	now := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	var f KeysFile
	feed, err := f.AddKey("feed", "", now, ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.AddKey("both", PlanEOD, now, ScopeAdmin); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		plan   string
		scopes []string
		want   string
	}{
		{"", nil, "no plan"},
		{PlanDelayed, []string{"root"}, `scope "root"`},
		{"", []string{ScopeAdmin, ScopeAdmin}, "listed twice"},
		{"gold", []string{ScopeAdmin}, `plan "gold"`},
	} {
		if _, err := f.AddKey("bad", c.plan, now, c.scopes...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AddKey(plan %q, scopes %q): %v, want an error naming %q", c.plan, c.scopes, err, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := WriteKeysFile(path, f); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"scopes": [`) {
		t.Errorf("keys file without scopes:\n%s", raw)
	}
	keys, err := LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := keys.Lookup(feed); !ok || !e.Admin() || e.Plan != "" {
		t.Errorf("Lookup(feed) = %+v, %v", e, ok)
	}
	// A file naming an unknown scope, or a key with neither plan nor
	// scope, is refused whole.
	for _, body := range []string{
		`{"keys":[{"name":"x","plan":"delayed","sha256":"` + strings.Repeat("a", 64) + `","scopes":["write"]}]}`,
		`{"keys":[{"name":"x","plan":"","sha256":"` + strings.Repeat("a", 64) + `"}]}`,
	} {
		os.WriteFile(path, []byte(body), 0o600)
		if _, err := LoadKeys(path); err == nil {
			t.Errorf("LoadKeys accepted %s", body)
		}
	}
}

// A key with only the admin scope sees no market data: 403 on every
// market-data route; with a plan too, it sees its plan's.
func TestAdminKeyRefusedOnMarketData(t *testing.T) {
	ts := newAdminTestServer(t, DefaultConfig())
	for i := range routeTable {
		rt := &routeTable[i]
		if rt.Root || rt.Admin {
			continue
		}
		w := ts.do(rt.Method, samplePath(rt), testKeyAdmin, sampleBody(rt))
		checkError(t, w, 403, "this key has no plan")
		validateAnswer(t, rt.Method, samplePath(rt), sampleBody(rt), w)
	}
	if w := ts.do("GET", "/v2/companies/ENHZ", testKeyAdminPlan, ""); w.Code != 200 {
		t.Errorf("admin key with a plan: %d %s", w.Code, w.Body)
	}
}
