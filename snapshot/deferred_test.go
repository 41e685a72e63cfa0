package snapshot

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// loadDeferred loads path with its deferred kinds after Load returns,
// holding them until release is called, and returns the Dataset and a
// function that waits for them and returns DeferredDone's error.
func loadDeferred(t *testing.T, path string) (ds *engine.Dataset, release func(), done func() error) {
	t.Helper()
	hold := make(chan struct{})
	prev := beforeDeferred
	beforeDeferred = func() { <-hold }
	t.Cleanup(func() { beforeDeferred = prev })
	errc := make(chan error, 1)
	ds, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1, Deferred: true, DeferredDone: func(err error) { errc <- err }})
	if err != nil {
		close(hold)
		t.Fatal(err)
	}
	var released bool
	release = func() {
		if !released {
			released = true
			close(hold)
		}
	}
	t.Cleanup(release)
	return ds, release, func() error { release(); return <-errc }
}

// TestDeferredLoadSameAsWhole loads each format's file whole and with its
// deferred kinds after Load: before they are in, the Dataset says so and
// a caller's wait ends with its context; once they are in, every kind
// and every list built from them equals the whole load's.
func TestDeferredLoadSameAsWhole(t *testing.T) {
	u := ratioDemo(t)
	if len(u.CashActions) == 0 || len(u.FundReports) == 0 || len(u.InsiderReports) == 0 || len(u.Documents) == 0 || len(u.Derived.FundRatios) == 0 {
		t.Fatal("the demo lacks a deferred kind")
	}
	for _, v := range []uint16{5, 6} {
		path := filepath.Join(t.TempDir(), "s.snap")
		if err := WriteFile(path, u, WriteOptions{Version: v}); err != nil {
			t.Fatal(err)
		}
		whole, _, err := Load(path, LoadOptions{LazyVerify: true, VerifyRate: -1})
		if err != nil {
			t.Fatal(err)
		}
		if whole.Deferred() {
			t.Fatalf("v%d: a whole load says its kinds are deferred", v)
		}
		part, release, done := loadDeferred(t, path)
		if !part.Deferred() {
			t.Fatalf("v%d: the deferred kinds are in before they were decoded", v)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := part.WaitDeferred(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("v%d: WaitDeferred while held = %v, want the context's error", v, err)
		}
		if err := part.DeferredErr(); err != nil {
			t.Fatalf("v%d: DeferredErr while held = %v", v, err)
		}
		// What no deferred kind feeds is there already.
		if len(part.Issuers()) != len(whole.Issuers()) || len(part.Assets()) != len(whole.Assets()) {
			t.Fatalf("v%d: issuers or assets differ before the deferred kinds", v)
		}
		release()
		if err := done(); err != nil {
			t.Fatalf("v%d: deferred kinds: %v", v, err)
		}
		if err := part.WaitDeferred(context.Background()); err != nil || part.Deferred() {
			t.Fatalf("v%d: after the kinds are in: WaitDeferred %v, Deferred %v", v, err, part.Deferred())
		}
		sameDeferred(t, whole, part)
	}
}

// sameDeferred compares what the deferred kinds give in two Datasets of
// one snapshot.
func sameDeferred(t *testing.T, want, got *engine.Dataset) {
	t.Helper()
	wu, gu := want.Universe(), got.Universe()
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"cash actions", wu.CashActions, gu.CashActions},
		{"fund reports", wu.FundReports, gu.FundReports},
		{"insider reports", wu.InsiderReports, gu.InsiderReports},
		{"documents", wu.Documents, gu.Documents},
		{"fund ratio points", fundPoints(wu), fundPoints(gu)},
	} {
		if d := diff(c.a, c.b); d != "" {
			t.Fatalf("%s differ: %s", c.name, d)
		}
	}
	// The fund points' source lists are shared with the fund reports'
	// in both (after the deferred kinds, in the deferred load).
	if w, g := sharedFundLists(wu), sharedFundLists(gu); w != g || w == 0 {
		t.Fatalf("fund source lists shared with fund reports: %d, want %d (not 0)", g, w)
	}
	wc, gc := want.CashActions(), got.CashActions()
	if len(wc) != len(gc) {
		t.Fatalf("cash events: %d, want %d", len(gc), len(wc))
	}
	for i := range wc {
		w, g := wc[i], gc[i]
		if w.ID != g.ID || w.Issuer.ID != g.Issuer.ID || math.Float64bits(float64(w.Factor)) != math.Float64bits(float64(g.Factor)) || w.Current != g.Current {
			t.Fatalf("cash event %d: %s/%s factor %v current %v, want %s/%s %v %v", i, g.ID, g.Issuer.ID, g.Factor, g.Current, w.ID, w.Issuer.ID, w.Factor, w.Current)
		}
	}
	for i := range want.Issuers() {
		w, g := &want.Issuers()[i], &got.Issuers()[i]
		if len(w.CashActions()) != len(g.CashActions()) || len(w.Insider()) != len(g.Insider()) || len(w.Documents()) != len(g.Documents()) || len(w.FundReports()) != len(g.FundReports()) || len(w.FundRatios()) != len(g.FundRatios()) {
			t.Fatalf("issuer %s: lists differ", w.ID)
		}
		for j := range w.CashActions() {
			if w.CashActions()[j].ID != g.CashActions()[j].ID {
				t.Fatalf("issuer %s: cash action %d is %s, want %s", w.ID, j, g.CashActions()[j].ID, w.CashActions()[j].ID)
			}
		}
		for j := range w.Documents() {
			if w.Documents()[j].ID != g.Documents()[j].ID {
				t.Fatalf("issuer %s: document %d differs", w.ID, j)
			}
		}
		for j := range w.FundRatios() {
			if d := diff(w.FundRatios()[j], g.FundRatios()[j]); d != "" {
				t.Fatalf("issuer %s: fund ratio series %d: %s", w.ID, j, d)
			}
		}
	}
	for i := range want.Assets() {
		wa, ga := &want.Assets()[i], &got.Assets()[i]
		if d := diff(want.ExCash(wa), got.ExCash(ga)); d != "" {
			t.Fatalf("%s: ex-cash differs: %s", wa.Ticker, d)
		}
	}
	if !want.FirstPublished().Equal(got.FirstPublished()) {
		t.Fatalf("first published %v, want %v", got.FirstPublished(), want.FirstPublished())
	}
}

// sharedFundLists counts the fund source lists of u that are a fund
// report's own list (the same array).
func sharedFundLists(u *engine.Universe) int {
	reports := map[*engine.Source]bool{}
	for i := range u.FundReports {
		if s := u.FundReports[i].Sources; len(s) > 0 {
			reports[unsafe.SliceData(s)] = true
		}
	}
	n := 0
	for _, l := range u.Derived.FundSources {
		if len(l) > 0 && reports[unsafe.SliceData(l)] {
			n++
		}
	}
	return n
}

// TestDeferredLoadFails breaks a deferred section past its first check
// (its raw checksum: the compressed bytes match theirs): Load returns a
// usable Dataset, and then its deferred kinds fail, DeferredErr and
// DeferredDone say why, and no deferred list is served.
func TestDeferredLoadFails(t *testing.T) {
	good := mustWrite(t, ratioDemo(t), WriteOptions{Version: 5})
	h, parts := splitFile(t, good)
	h.Sections[sectionIndex(t, h, "cash_actions")].RawChecksum++
	path := filepath.Join(t.TempDir(), "bad.snap")
	if err := os.WriteFile(path, rebuild(t, h, parts), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(path, LoadOptions{}); !errors.Is(err, ErrChecksum) {
		t.Fatalf("whole load: %v, want a checksum error", err)
	}
	ds, _, done := loadDeferred(t, path)
	err := done()
	if !errors.Is(err, ErrChecksum) {
		t.Fatalf("deferred kinds: %v, want a checksum error", err)
	}
	if derr := ds.DeferredErr(); derr == nil || derr.Error() != err.Error() {
		t.Fatalf("DeferredErr = %v, want %v", derr, err)
	}
	if err := ds.WaitDeferred(context.Background()); !errors.Is(err, ErrChecksum) {
		t.Fatalf("WaitDeferred = %v", err)
	}
	if len(ds.CashActions()) != 0 || len(ds.Universe().FundReports) != 0 {
		t.Fatal("a failed deferred load serves some of its kinds")
	}
	for i := range ds.Issuers() {
		is := &ds.Issuers()[i]
		if len(is.CashActions()) != 0 || len(is.FundReports()) != 0 || len(is.Insider()) != 0 || len(is.Documents()) != 0 {
			t.Fatalf("issuer %s keeps a deferred list", is.ID)
		}
	}
}
