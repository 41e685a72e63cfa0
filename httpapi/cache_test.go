package httpapi

import (
	"bytes"
	"testing"

	"github.com/pregao/pregao/engine"
)

// TestCachedBodies checks that the companies list and the catalog are
// encoded once per Dataset and flag set, and that the cached answer is
// the one the encoder gives.
func TestCachedBodies(t *testing.T) {
	ts := newTestServer(t, true)
	ds := ts.store.Current()
	get := func(path string) []byte {
		t.Helper()
		w := ts.do("GET", path, testKeyDelayed, "")
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", path, w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	for _, bdr := range []bool{false, true} {
		for _, sec := range []bool{false, true} {
			for _, mc := range []bool{false, true} {
				path := "/v2/companies?bdr=" + fmtBool(bdr) + "&show_sector=" + fmtBool(sec) + "&show_market_cap=" + fmtBool(mc)
				want, _ := appendCompanies(nil, ds, func(is *engine.Issuer) bool {
					return (is.Kind == engine.KindCompany || bdr && is.Kind == engine.KindBDR) && listed(is.Status, 0)
				}, sec, mc, nil)
				slot := &ts.api.info(ds).companies[companiesSlot(bdr, sec, mc)*len(companyStatuses)]
				if slot.Load() != nil {
					t.Fatalf("%s: cached before the first request", path)
				}
				if got := get(path); !bytes.Equal(got, want) {
					t.Errorf("%s: first answer differs from the encoder's", path)
				}
				if b := slot.Load(); b == nil || !bytes.Equal(b.raw, want) {
					t.Fatalf("%s: not cached after the first request", path)
				}
				if got := get(path); !bytes.Equal(got, want) {
					t.Errorf("%s: cached answer differs from the encoder's", path)
				}
			}
		}
	}
	for i, kind := range catalogKinds {
		path := "/v2/ratios/catalog"
		if kind != "" {
			path += "?kind=" + kind
		}
		want := appendCatalog(nil, ds.Catalog(), kind)
		if got := get(path); !bytes.Equal(got, want) {
			t.Errorf("%s: answer differs from the encoder's", path)
		}
		if b := ts.api.info(ds).catalogBody[i].Load(); b == nil || !bytes.Equal(b.raw, want) {
			t.Fatalf("%s: not cached after the first request", path)
		}
		if got := get(path); !bytes.Equal(got, want) {
			t.Errorf("%s: cached answer differs from the encoder's", path)
		}
	}
	if n := len(appendCatalog(nil, ds.Catalog(), catalogKinds[1])); n >= len(appendCatalog(nil, ds.Catalog(), "")) {
		t.Errorf("catalog of one kind (%d bytes) is not smaller than the whole catalog", n)
	}
}

func fmtBool(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestEODViewsCached: an eod request always answers from a quote view
// (indexRanking has no other eod path).
func TestEODViewsCached(t *testing.T) {
	ts := newTestServer(t, true)
	ds := ts.store.Current()
	for _, days := range []int{-400, -2, -1, 0, 1, 30} {
		c := &call{ds: ds, now: ds.AsOf().AddDate(0, 0, days), key: KeyEntry{Plan: PlanEOD}}
		if v := ts.api.view(c); !v.eod || v.qv == nil {
			t.Errorf("eod view at as_of%+d days: eod %v, cached %v", days, v.eod, v.qv != nil)
		}
	}
}
