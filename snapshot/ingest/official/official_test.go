package official_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// TestDeterministic: the same universe gives byte-identical files.
func TestDeterministic(t *testing.T) {
	sz := smallSize()
	sz.Companies, sz.FIIs, sz.ETFs = 8, 3, 2
	u := demo.GenerateSize(3, sz)
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if _, err := official.Write(dir, u, official.Options{Workers: 3}); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	err := filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two writes (%v)", rel, err)
		}
		n++
		return nil
	})
	if err != nil || n < 10 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

// TestSupplementShareActions: the supplement states each share action as
// B3 does and the importer's reader gives it back: a split's percentage
// added, a reverse split's multiplier, a total redemption's 100% of the
// shares (the demo states no factor), a leg-bearing event's legs.
func TestSupplementShareActions(t *testing.T) {
	const co, isin, other = "11111111000191", "BRXPTOACNOR0", "BRAAAAACNOR1"
	d := engine.MakeDate
	act := func(typ string, f engine.Num, legs ...engine.Leg) engine.ShareAction {
		return engine.ShareAction{CompanyID: co, ISIN: isin, IssuedISIN: isin, Ticker: "XPTO3", ApprovalDate: d(2025, 1, 2),
			PriorExDate: d(2025, 2, 3), Type: typ, Label: map[string]string{engine.ActStockSplit: "DESDOBRAMENTO",
				engine.ActReverseSplit: "GRUPAMENTO", engine.ActTotalRedemption: "RESGATE TOTAL", engine.ActSpinOff: "CISAO COM REDUCAO DE CAPITAL"}[typ],
			Factor: f, Legs: legs}
	}
	u := &engine.Universe{
		Meta:       engine.Meta{AsOf: time.Date(2025, 3, 3, 21, 0, 0, 0, time.UTC)},
		Companies:  []engine.Company{{ID: co, CVMCode: "9", Symbol: "XPTO", Name: "Xpto S.A.", TradingName: "XPTO", Kind: engine.KindCompany, Status: "ACTIVE"}},
		Securities: []engine.Security{{Ticker: "XPTO3", CompanyID: co, ISIN: isin, StockType: engine.ClassCS}},
		ShareActions: []engine.ShareAction{act(engine.ActStockSplit, 3), act(engine.ActReverseSplit, 0.1), act(engine.ActTotalRedemption, engine.Null),
			act(engine.ActSpinOff, engine.Null, engine.Leg{LegType: engine.LegOriginal, ISIN: isin, Factor: 1}, engine.Leg{LegType: engine.LegReceived, ISIN: other, Factor: 0.1768})},
	}
	dir := t.TempDir()
	if _, err := official.Write(dir, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(official.SuppDir), "XPTO.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sup, err := b3.ReadSupplement(b, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(sup.ShareActions) != 4 {
		t.Fatalf("share actions %+v", sup.ShareActions)
	}
	for i, want := range []engine.Num{3, 0.1, 0} {
		if g := sup.ShareActions[i]; g.Factor != want {
			t.Errorf("%s factor %v, want %v", g.Type, g.Factor, want)
		}
	}
	if l := sup.ShareActions[3].Legs; len(l) != 2 || l[1].ISIN != other || l[1].Factor != 0.1768 {
		t.Errorf("spin-off legs %+v", l)
	}
}
