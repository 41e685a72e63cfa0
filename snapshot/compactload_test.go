package snapshot

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// A load compacts daily series as their parts decode (the wide columns
// of a compactable series are gone from the Universe), and the Dataset
// it builds serves every daily row bit for bit as one built from the
// wide Universe does.
func TestLoadCompactsDaily(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.snap")
	// A small demo market: whole-cent series (compactable) and its macro
	// series of four decimals (USD: wide).
	u := demo.GenerateSize(3, demo.Size{Companies: 4, FIIs: 1, ETFs: 1, SponsoredBDRs: 1, HistoryFrom: 2025})
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = d
	if err := WriteFile(path, u, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cu, _, err := readFile(path, false, true, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	wu, _, err := readFile(path, false, false, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	compacted, wide := 0, 0
	for i := range cu.Daily {
		if cu.Daily[i].Len() > 0 && cu.Daily[i].Open == nil {
			compacted++
		} else if cu.Daily[i].Len() > 0 {
			wide++
		}
		if wu.Daily[i].Len() > 0 && wu.Daily[i].Open == nil {
			t.Fatalf("series %s compacted without being asked", wu.Daily[i].Ticker)
		}
	}
	if compacted == 0 || wide == 0 {
		t.Fatalf("%d series compacted by the load, %d left wide; want both kinds", compacted, wide)
	}
	cds, err := engine.Build(cu)
	if err != nil {
		t.Fatal(err)
	}
	wds, err := engine.Build(wu)
	if err != nil {
		t.Fatal(err)
	}
	ds, _, err := Load(path, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eq := func(x, y engine.Num) bool { return math.Float64bits(float64(x)) == math.Float64bits(float64(y)) }
	for _, d := range []*engine.Dataset{cds, ds} {
		for i, a := range wds.Assets() {
			b := &d.Assets()[i]
			if a.Ticker != b.Ticker || a.Daily.Len() != b.Daily.Len() {
				t.Fatalf("asset %d: %s/%d vs %s/%d", i, a.Ticker, a.Daily.Len(), b.Ticker, b.Daily.Len())
			}
			for r := range a.Daily.Len() {
				x, y := a.DailyBar(r, true), b.DailyBar(r, true)
				if x.Date != y.Date || !eq(x.Open, y.Open) || !eq(x.High, y.High) || !eq(x.Low, y.Low) || !eq(x.Close, y.Close) ||
					!eq(x.Volume, y.Volume) || !eq(x.Quantity, y.Quantity) || x.Trades != y.Trades || !eq(x.Factor, y.Factor) {
					t.Fatalf("%s row %d: %+v vs %+v", a.Ticker, r, x, y)
				}
			}
		}
	}
}
