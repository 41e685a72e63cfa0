package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// smallBundle writes a tiny demo universe as a bundle in a temp dir.
func smallBundle(tb testing.TB) string {
	tb.Helper()
	u := demo.GenerateSize(3, demo.Size{Companies: 3, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 2, IntradaySessions: 2, ReportsFrom: 2024, FundReportsFrom: 2025, EventsFrom: 2025})
	dir := filepath.Join(tb.TempDir(), "bundle")
	if err := bundle.Write(dir, u, bundle.WriteOptions{Compression: "none"}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestBuildFromBundle(t *testing.T) {
	dir := smallBundle(t)
	out := filepath.Join(t.TempDir(), "s.snap")
	h, err := BuildFromBundle(dir, out, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, gh, err := ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(h, gh); d != "" {
		t.Errorf("returned header differs from the file's at %s", d)
	}
	want, err := bundle.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want.Derived, err = ratios.Derive(want); err != nil {
		t.Fatal(err)
	}
	if d := diff(want, got); d != "" {
		t.Fatalf("snapshot differs from bundle+derive at %s", d)
	}
	if len(got.Derived.Catalog) == 0 || h.Counts["daily"] == 0 {
		t.Errorf("counts = %v", h.Counts)
	}
	// Same bundle, same bytes.
	out2 := filepath.Join(t.TempDir(), "s2.snap")
	if _, err := BuildFromBundle(dir, out2, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(out)
	b, _ := os.ReadFile(out2)
	if string(a) != string(b) {
		t.Error("building the same bundle twice gave different bytes")
	}
}

func TestBuildFromBadBundle(t *testing.T) {
	dir := smallBundle(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var victim string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "companies") {
			victim = filepath.Join(dir, e.Name())
		}
	}
	if victim == "" {
		t.Fatalf("no companies file in %v", ents)
	}
	f, err := os.OpenFile(victim, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("{not json\n")
	f.Close()
	out := filepath.Join(t.TempDir(), "s.snap")
	os.WriteFile(out, []byte("previous"), 0o644)
	_, err = BuildFromBundle(dir, out, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "companies") {
		t.Fatalf("err = %v, want a validation error naming the file", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "previous" {
		t.Error("a bad bundle changed the existing output file")
	}
	if _, err := BuildFromBundle(filepath.Join(dir, "absent"), out, WriteOptions{}); err == nil {
		t.Error("missing bundle: no error")
	}
}

// A universe built in memory gives the bytes its bundle gives: the demo
// can be generated straight into a snapshot (pregao generate --snapshot).
func TestBuildFromUniverseIsTheBundles(t *testing.T) {
	sz := demo.Size{Companies: 3, SponsoredBDRs: 1, FIIs: 2, ETFs: 1, IntradayTickers: 2, IntradaySessions: 2, ReportsFrom: 2024, FundReportsFrom: 2025, EventsFrom: 2025}
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := bundle.Write(dir, demo.GenerateSize(3, sz), bundle.WriteOptions{Compression: "none"}); err != nil {
		t.Fatal(err)
	}
	viaBundle := filepath.Join(t.TempDir(), "b.snap")
	if _, err := BuildFromBundle(dir, viaBundle, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	direct := filepath.Join(t.TempDir(), "u.snap")
	if _, err := BuildFromUniverseContext(context.Background(), demo.GenerateSize(3, sz), direct, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(viaBundle)
	b, _ := os.ReadFile(direct)
	if len(a) == 0 || string(a) != string(b) {
		ua, _, _ := ReadFile(viaBundle)
		ub, _, _ := ReadFile(direct)
		t.Errorf("the universe's snapshot (%d bytes) differs from its bundle's (%d bytes) at %s", len(b), len(a), diff(ua, ub))
	}
}
