package demo_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

var tinySize = demo.Size{Companies: 12, SponsoredBDRs: 2, UnsponsoredBDRs: 2, FIIs: 6, ETFs: 2,
	IntradayTickers: 3, IntradaySessions: 1, ReportsFrom: 2025, FundReportsFrom: 2026, EventsFrom: 2026, HistoryFrom: 2020}

func sum(tb testing.TB, u *engine.Universe) string {
	tb.Helper()
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(u); err != nil {
		tb.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dirDigest hashes every file of dir (names and bytes, in name order).
func dirDigest(tb testing.TB, dir string) string {
	tb.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			tb.Fatal(err)
		}
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestBundleRoundTrip writes a small demo universe as a bundle, reads it
// back through the same validation as a user's bundle and compares.
func TestBundleRoundTrip(t *testing.T) {
	u := demo.GenerateSize(3, tinySize)
	dir := t.TempDir()
	if err := bundle.Write(dir, u, bundle.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := bundle.Read(dir)
	if err != nil {
		t.Fatalf("generated bundle refused: %v", err)
	}
	bundle.Canonicalize(u)
	if a, b := sum(t, u), sum(t, got); a != b {
		c1, c2 := demo.Count(u), demo.Count(got)
		t.Fatalf("read-back universe differs from the generated one\ngenerated %+v\nread      %+v", c1, c2)
	}
	// Same seed: byte-identical bundle.
	dir2 := t.TempDir()
	if err := bundle.Write(dir2, demo.GenerateSize(3, tinySize), bundle.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if dirDigest(t, dir) != dirDigest(t, dir2) {
		t.Fatal("same seed gave different bundle bytes")
	}
}

// TestEngineBuild checks that the demo universe builds into a Dataset and
// that every kind of identifier resolves, renamed tickers included.
func TestEngineBuild(t *testing.T) {
	u := demo.GenerateSize(4, tinySize)
	bundle.Canonicalize(u)
	d, err := engine.Build(u)
	if err != nil {
		t.Fatalf("engine.Build: %v", err)
	}
	ids := []string{u.Companies[0].ID, u.Companies[0].Symbol}
	for _, s := range u.Securities {
		if s.CompanyID != "" {
			ids = append(ids, s.Ticker)
		}
	}
	for _, r := range u.Renames {
		ids = append(ids, r.From, r.To)
	}
	for _, id := range ids {
		if _, err := d.Resolve(id); err != nil {
			t.Errorf("Resolve(%q): %v", id, err)
		}
	}
}

// TestAdjustedContinuity checks, through the engine's adjustment factors,
// that adjusted prices stay continuous across every share event of the
// demo universe.
func TestAdjustedContinuity(t *testing.T) {
	u := demo.GenerateSize(9, demo.Size{Companies: 120, FIIs: 6, ETFs: 2, HistoryFrom: 2014, ReportsFrom: 2026, FundReportsFrom: 2026, EventsFrom: 2026})
	bundle.Canonicalize(u)
	d, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	ser := map[string]*engine.Series{}
	for i := range u.Daily {
		ser[u.Daily[i].Ticker] = &u.Daily[i]
	}
	checked := map[string]int{}
	drift := map[string]float64{} // sum of log(adjusted open / adjusted close)
	for _, a := range u.ShareActions {
		s := ser[a.Ticker]
		i := -1
		for j, x := range s.Dates {
			if x == a.PriorExDate {
				i = j
			}
		}
		if i < 0 || i+1 >= s.Len() {
			continue
		}
		f0, err0 := d.AdjustmentFactor(a.Ticker, s.Dates[i])
		f1, err1 := d.AdjustmentFactor(a.Ticker, s.Dates[i+1])
		if err0 != nil || err1 != nil {
			t.Fatalf("%s: %v %v", a.Ticker, err0, err1)
		}
		before := float64(s.Close[i]) / float64(f0)
		after := float64(s.Open[i+1]) / float64(f1)
		if r := after / before; r < 0.88 || r > 1.12 {
			t.Errorf("%s %s on %s: adjusted close %.4f then open %.4f (factors %v, %v)", a.Type, a.Ticker, s.Dates[i+1], before, after, f0, f1)
		}
		checked[a.Type]++
		drift[a.Type] += math.Log(after / before)
	}
	for _, typ := range []string{engine.ActStockSplit, engine.ActReverseSplit, engine.ActStockBonus, engine.ActSpinOff, engine.ActRestitutionInShares} {
		if checked[typ] == 0 {
			t.Errorf("no %s checked", typ)
		}
	}
	// Per type, the adjusted overnight moves average out to about zero: an
	// unadjusted value transfer (3% to 12% of the price for a restitution
	// in shares) would show as a systematic drop.
	for typ, n := range checked {
		if m := drift[typ] / float64(n); math.Abs(m) > 0.025 {
			t.Errorf("%s: mean adjusted overnight move %.4f over %d events", typ, math.Exp(m)-1, n)
		}
	}
}

// countingMeter records phases and counts units, like a progress line.
type countingMeter struct {
	mu     sync.Mutex
	phases []string
	totals map[string]int64
	done   map[string]int64
	cur    string
}

func (m *countingMeter) Begin(phase, unit string, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.totals == nil {
		m.totals, m.done = map[string]int64{}, map[string]int64{}
	}
	m.phases = append(m.phases, phase+"/"+unit)
	m.totals[phase] = total
	m.cur = phase
}

func (m *countingMeter) Add(n int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done[m.cur] += n
}

// A metered generation and bundle write count every unit of their
// phases, and the universe is the one an unmetered generation gives.
func TestGenerateAndWriteMetered(t *testing.T) {
	var m countingMeter
	u := demo.GenerateMetered(3, tinySize, &m)
	dir := t.TempDir()
	if err := bundle.Write(dir+"/b", u, bundle.WriteOptions{Meter: &m}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(m.phases, " "), "simulate/entities detail/entities assemble/ write bundle/rows"; got != want {
		t.Errorf("phases %q, want %q", got, want)
	}
	for _, p := range []string{"simulate", "detail", "write bundle"} {
		if m.totals[p] == 0 || m.done[p] != m.totals[p] {
			t.Errorf("%s: %d of %d", p, m.done[p], m.totals[p])
		}
	}
	if err := bundle.Write(dir+"/plain", demo.GenerateSize(3, tinySize), bundle.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(dir + "/b/" + bundle.FileMeta)
	b, _ := os.ReadFile(dir + "/plain/" + bundle.FileMeta)
	ma, _ := bundle.ReadManifest(dir + "/b")
	mb, _ := bundle.ReadManifest(dir + "/plain")
	if string(a) != string(b) || ma == nil || mb == nil || len(ma.Files) != len(mb.Files) {
		t.Fatal("metered bundle differs")
	}
	for i := range ma.Files {
		if ma.Files[i] != mb.Files[i] {
			t.Errorf("metered bundle's %v differs from %v", ma.Files[i], mb.Files[i])
		}
	}
	var r countingMeter
	if _, err := bundle.ReadWith(dir+"/b", bundle.ReadOptions{Meter: &r}); err != nil {
		t.Fatal(err)
	}
	if r.totals["read bundle"] == 0 || r.done["read bundle"] != r.totals["read bundle"] {
		t.Errorf("read: %d of %d bytes", r.done["read bundle"], r.totals["read bundle"])
	}
}
