package official_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// TestWriteRestatedYear: a DFP year where one filing was restated is
// written as the CVM publishes it: the download of the day before the
// restatement (kept beside the newest, named as pregao fetch keeps it)
// holds version 1 and no filing published later; the newest, under the
// official name, holds version 2 and the later filing. Each holds one
// VERSAO per filing, with its own filing index (DT_RECEB).
func TestWriteRestatedYear(t *testing.T) {
	const a, b = "11111111000191", "22222222000191"
	ref := engine.MakeDate(2024, 12, 31)
	at := func(m, d int) engine.Stamp {
		return engine.StampOf(time.Date(2025, time.Month(m), d, 21, 30, 0, 0, time.UTC))
	}
	rep := func(co string, v int, pub engine.Stamp, revenue engine.Num) engine.Report {
		return engine.Report{CompanyID: co, Statement: engine.MustLabel("DRE"), Aggregation: engine.MustLabel(engine.AggConsolidated),
			Form: engine.MustLabel("DFP"), ReferenceDate: ref, StartDate: engine.MakeDate(2024, 1, 1), EndDate: ref,
			PublishDate: pub, RetrievalDate: pub, Version: v,
			Accounts: []engine.Account{engine.NewAccount("3.01", "Receita de Venda de Bens e/ou Serviços", true, revenue)}}
	}
	u := &engine.Universe{
		Meta: engine.Meta{AsOf: time.Date(2025, 7, 1, 21, 0, 0, 0, time.UTC)},
		Companies: []engine.Company{
			{ID: a, CVMCode: "1", Symbol: "AAAA", Name: "Alfa S.A.", Kind: engine.KindCompany, Status: "ACTIVE"},
			{ID: b, CVMCode: "2", Symbol: "BBBB", Name: "Beta S.A.", Kind: engine.KindCompany, Status: "ACTIVE"},
		},
		Reports: []engine.Report{rep(a, 1, at(3, 20), 1000e3), rep(a, 2, at(5, 10), 1100e3), rep(b, 1, at(6, 2), 500e3)},
	}
	dir := t.TempDir()
	if _, err := official.Write(dir, u, official.Options{}); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(official.DFPDir), "*"))
	var names []string
	for _, p := range m {
		names = append(names, filepath.Base(p))
	}
	// 2025-05-10 at 18:30 in São Paulo: the day before is 05-09, kept as
	// downloaded at 20:00 there (23:00 UTC).
	want := []string{"dfp_cia_aberta_2024.20250509T230000Z.zip", "dfp_cia_aberta_2024.zip"}
	if !slices.Equal(names, want) {
		t.Fatalf("downloads %q, want %q (in this order by name)", names, want)
	}
	type got struct {
		co      string
		version int
		revenue engine.Num
		pub     string
	}
	read := func(name string) []got {
		f, err := cvm.ReadStatementsZip(filepath.Join(dir, filepath.FromSlash(official.DFPDir), name), cvm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out []got
		for _, r := range f.Reports {
			out = append(out, got{r.CompanyID, r.Version, r.AccountList().At(0).Value, r.PublishDate.Time().Format("2006-01-02")})
		}
		return out
	}
	if g := read(want[0]); !slices.Equal(g, []got{{a, 1, 1000e3, "2025-03-20"}}) {
		t.Errorf("earlier download %+v", g)
	}
	if g := read(want[1]); !slices.Equal(g, []got{{a, 2, 1100e3, "2025-05-10"}, {b, 1, 500e3, "2025-06-02"}}) {
		t.Errorf("newest download %+v", g)
	}
}
