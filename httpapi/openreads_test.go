//go:build linux

package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
)

// A byte flipped in the close of a spin-off's child that the parent's
// adjustment factor is made from (engine.Build reads it at open, before
// any request): every route that serves that factor, or prices adjusted
// by it, answers the damaged snapshot's 503 (Retry-After, the block
// named), not a wrong factor, though none of them reads the child's
// bars: the cash actions (every company's, the parent's, CSV), the
// parent's corporate actions, its adjusted quotes and the rankings made
// from the series' summaries. The good file answers them 200.
func TestFlippedFactorCloseAnswersDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "good.snap")
	scopeSnapshot(t, path)
	good, _, err := snapshot.Load(path, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	parent, child, row := spinOffChildClose(good)
	if parent == nil {
		t.Fatal("the demo market has no spin-off with a listed child: the test covers nothing")
	}
	cols, _ := child.Daily.Columns()
	off := int64(uintptr(unsafe.Pointer(&cols.Close[row])) - mappingStart(t, path))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off+2] ^= 1 // the close's bit 16
	bad := filepath.Join(dir, "bad.snap")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ds, _, err := snapshot.Load(bad, snapshot.LoadOptions{LazyVerify: true, VerifyRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	company := parent.Issuer.ID
	ix := good.Indexes()[0].Symbol
	paths := []string{
		"/companies/cash-corporate-actions", "/companies/cash-corporate-actions.csv",
		"/companies/" + company + "/cash-corporate-actions", "/companies/" + parent.Ticker + "/cash-corporate-actions.csv",
		"/companies/" + company + "/corporate-actions",
		"/quotes/" + parent.Ticker + "?adjusted=true", "/quotes/" + parent.Ticker + "/historical?adjusted=true",
		"/indexes/" + ix + "/highs", "/stocks/variations",
	}
	goodSrv, badSrv := scopeServer(t, good, nil), scopeServer(t, ds, nil)
	for _, p := range paths {
		p = DefaultConfig().Prefix + p
		if w := goodSrv.do(http.MethodGet, p, testKeyDelayed, ""); w.Code != http.StatusOK {
			t.Errorf("good file: %s: %d %.200s", p, w.Code, w.Body.String())
		}
		w := badSrv.do(http.MethodGet, p, testKeyDelayed, "")
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" ||
			!strings.Contains(w.Body.String(), "the snapshot is damaged") || !strings.Contains(w.Body.String(), "daily block") {
			t.Errorf("%s with %s's close flipped: %d %.300s, want 503 naming the block", p, child.Ticker, w.Code, w.Body.String())
		}
	}
	if daily, _ := ds.OpenReads(); !slices.Contains(daily, child.Ticker) {
		t.Errorf("OpenReads %q: no %s", daily, child.Ticker)
	}
}

// spinOffChildClose finds in ds a share action whose factor takes the
// value of received shares (a spin-off's), its asset (parent), a received
// asset (child) whose daily bars lie compact in the file, and the row of
// the child's close the factor is made from (its first session after the
// prior_ex_date); nil when there is none.
func spinOffChildClose(ds *engine.Dataset) (parent, child *engine.Asset, row int) {
	for i := range ds.Assets() {
		a := &ds.Assets()[i]
		for _, e := range a.AdjustmentEvents() {
			sa := e.Action
			if sa.Type != engine.ActSpinOff && sa.Type != engine.ActSpinOffQuantity && sa.Type != engine.ActRestitutionInShares {
				continue
			}
			for _, l := range sa.Legs {
				r, found := ds.Asset(l.Ticker)
				if l.LegType != engine.LegReceived || !found || len(r.Former) > 0 || a.Issuer == nil {
					continue
				}
				cols, compact := r.Daily.Columns()
				if !compact {
					continue
				}
				k, _ := slices.BinarySearch(cols.Dates, sa.PriorExDate+1)
				if k < len(cols.Dates) && r.Daily.Close(k).Valid() {
					return a, r, k
				}
			}
		}
	}
	return nil, nil, 0
}
