package httpapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
)

// rotatedCatalog returns a copy of u whose indicator catalog is rotated by
// k positions (no indicator keeps its position when 0 < k < len), with
// every ratio point renumbered to match, as a snapshot built by a binary
// with another catalog order holds it. u is not modified.
func rotatedCatalog(tb testing.TB, u *engine.Universe, k int) *engine.Universe {
	tb.Helper()
	cat := u.Derived.Catalog
	n := len(cat)
	if k <= 0 || k >= n {
		tb.Fatalf("rotation %d of a catalog of %d", k, n)
	}
	newPos := func(i uint16) uint16 { return uint16((int(i) + k) % n) }
	v := *u
	v.Derived.Catalog = make([]engine.Indicator, n)
	for i := range cat {
		v.Derived.Catalog[newPos(uint16(i))] = cat[i]
	}
	v.Derived.Ratios = slices.Clone(u.Derived.Ratios)
	for i := range v.Derived.Ratios {
		v.Derived.Ratios[i].Indicator = newPos(v.Derived.Ratios[i].Indicator)
	}
	engine.SortRatioPoints(v.Derived.Ratios)
	v.Derived.FundRatios = slices.Clone(u.Derived.FundRatios)
	for i := range v.Derived.FundRatios {
		v.Derived.FundRatios[i].Indicator = newPos(v.Derived.FundRatios[i].Indicator)
	}
	engine.SortFundRatioPoints(v.Derived.FundRatios)
	return &v
}

// canonicalJSON decodes an answer; arrays of catalog entries (objects with
// an "id" and a "kind") are sorted by kind and id, since the catalog
// endpoint lists indicators in catalog order.
func canonicalJSON(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatalf("%s: %v", b, err)
	}
	if a, ok := v.([]any); ok && len(a) > 0 {
		if m, ok := a[0].(map[string]any); ok && m["kind"] != nil && m["formula"] != nil {
			key := func(x any) string {
				m := x.(map[string]any)
				return m["kind"].(string) + "/" + m["id"].(string)
			}
			slices.SortFunc(a, func(x, y any) int { return strings.Compare(key(x), key(y)) })
		}
	}
	return v
}

// TestForeignCatalogOrder serves a snapshot whose catalog is in another
// order than the one compiled into this binary (engine/ratios): every
// answer that names indicators (company and fund ratios, valuation,
// market cap, screener droplets, the catalog) must be the one of the
// normal snapshot, since indicators are looked up in the snapshot's own
// catalog.
func TestForeignCatalogOrder(t *testing.T) {
	// A Dataset's Universe leaves its daily series out: read the bundle.
	u, err := bundle.Read(smallBundle)
	if err != nil {
		t.Fatal(err)
	}
	if u.Derived, err = ratios.Derive(u); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, rotatedCatalog(t, u, len(u.Derived.Catalog)/3+1), snapshot.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	u2, _, err := snapshot.Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if u2.Derived.Catalog[0].ID == u.Derived.Catalog[0].ID {
		t.Fatal("the snapshot's catalog is in the binary's order")
	}
	ds2, err := engine.Build(u2)
	if err != nil {
		t.Fatal(err)
	}
	want := newTestServer(t, true)
	got := &testServer{store: &engine.Store{}, reg: prometheus.NewRegistry()}
	got.store.Publish(ds2)
	got.api = New(DefaultConfig(), got.store, testKeys(t), nil, got.reg, nil)

	cases := slices.Clone(goldenCases)
	for _, p := range []string{
		"/v2/companies/ENHZ/ratios?ids=RETURN_ON_EQUITY,NET_DEBT",
		"/v2/companies/ENHZ/ratios/valuation?ids=MARKET_CAP,ENTERPRISE_VALUE,DIVIDEND_YIELD_PS",
		"/v2/traded-funds/GSUL11/ratios?ids=DIVIDEND_YIELD",
		"/v2/ratios/catalog?kind=FUND",
	} {
		cases = append(cases, struct{ name, method, path, key, body string }{p, "GET", p, testKeyDelayed, ""})
	}
	for _, b := range []string{
		`{"primaryOnly":false,"filters":[{"type":"droplet","id":"net_margin","op":"<","value":100}],"sort":[{"by":"droplet:RETURN_ON_EQUITY","order":"asc"}]}`,
		`{"primaryOnly":false,"filters":[{"type":"droplet","id":"DIVIDEND_YIELD_CS","op":">=","value":0}]}`,
	} {
		cases = append(cases, struct{ name, method, path, key, body string }{b, "POST", "/v2/screener", testKeyDelayed, b})
	}
	for _, tc := range cases {
		w, g := want.do(tc.method, tc.path, tc.key, tc.body), got.do(tc.method, tc.path, tc.key, tc.body)
		if w.Code != g.Code {
			t.Errorf("%s: status %d, want %d: %s", tc.name, g.Code, w.Code, g.Body)
			continue
		}
		if wv, gv := canonicalJSON(t, w.Body.Bytes()), canonicalJSON(t, g.Body.Bytes()); !reflect.DeepEqual(wv, gv) {
			t.Errorf("%s: answer differs with the rotated catalog:\n got %s\nwant %s", tc.name, g.Body, w.Body)
		}
	}
}
