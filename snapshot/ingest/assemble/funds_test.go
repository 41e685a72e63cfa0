package assemble

import (
	"archive/zip"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

func TestISINOwners(t *testing.T) {
	jan, feb := engine.MakeDate(2022, 1, 1), engine.MakeDate(2022, 2, 1)
	for _, c := range []struct {
		name   string
		isins  map[string]string // fund -> ISIN
		latest map[string]engine.Date
		owners map[string]string // ISIN -> fund
		tied   map[string][]string
	}{
		{"one fund each", map[string]string{"A": "I1", "B": "I2"}, map[string]engine.Date{"A": jan, "B": jan},
			map[string]string{"I1": "A", "I2": "B"}, nil},
		{"the most recent report", map[string]string{"A": "I1", "B": "I1"}, map[string]engine.Date{"A": feb, "B": jan},
			map[string]string{"I1": "A"}, nil},
		{"the most recent report, by ID after", map[string]string{"A": "I1", "B": "I1"}, map[string]engine.Date{"A": jan, "B": feb},
			map[string]string{"I1": "B"}, nil},
		{"a tie", map[string]string{"A": "I1", "B": "I1", "C": "I2"}, map[string]engine.Date{"A": jan, "B": jan, "C": jan},
			map[string]string{"I2": "C"}, map[string][]string{"I1": {"A", "B"}}},
		{"a tie below a more recent report", map[string]string{"A": "I1", "B": "I1", "C": "I1"}, map[string]engine.Date{"A": jan, "B": jan, "C": feb},
			map[string]string{"I1": "C"}, nil},
		{"a tie at the most recent report", map[string]string{"A": "I1", "B": "I1", "C": "I1"}, map[string]engine.Date{"A": feb, "B": jan, "C": feb},
			map[string]string{}, map[string][]string{"I1": {"A", "C"}}},
		{"none", nil, nil, map[string]string{}, nil},
	} {
		owners, tied := isinOwners(c.isins, c.latest)
		if !maps.Equal(owners, c.owners) || !maps.EqualFunc(tied, c.tied, slices.Equal) {
			t.Errorf("%s: owners %v, tied %v; want %v, %v", c.name, owners, tied, c.owners, c.tied)
		}
	}
}

// TestRunISINOfTwoFunds imports the FII reports of testdata/real, where
// the reports of two funds carry SARE11's ISIN (BRSARECTF006) up to the
// same last month: SARE11 links to neither, and the summary says so.
func TestRunISINOfTwoFunds(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	cfg.FII = []string{filepath.Join(dir, "cvm-fii")}
	u, rep := run(t, cfg)
	for _, s := range u.Securities {
		if s.Ticker == "SARE11" && s.CompanyID != syntheticID("SARE", engine.ClassFundUnit) {
			t.Errorf("SARE11 linked to %s", s.CompanyID)
		}
	}
	want := "SARE11: ISIN BRSARECTF006 is in the latest FII reports of 2 funds of the same month (23570871000146, 32903702000171): not linked by ISIN"
	if !slices.Contains(rep.Notes, want) || strings.Count(strings.Join(rep.Notes, "\n"), "not linked by ISIN") != 1 {
		t.Errorf("notes %s", strings.Join(rep.Notes, "\n"))
	}
}

// TestRunFIIArchive imports the FII reports of 2022 from the yearly
// archive inf_mensal_fii_2022.zip, as CVM publishes it and pregao fetch
// downloads it: the same funds and reports as from its tables.
func TestRunFIIArchive(t *testing.T) {
	src := filepath.Join(realDir(t), "cvm-fii")
	zpath := filepath.Join(t.TempDir(), "inf_mensal_fii_2022.zip")
	f, err := os.Create(zpath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	var tables []string
	for _, tbl := range []string{"geral", "complemento"} {
		name := "inf_mensal_fii_" + tbl + "_2022.csv"
		tables = append(tables, filepath.Join(src, name+".zst"))
		b, err := datafile.ReadFile(filepath.Join(src, name+".zst"))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	read := func(in []string) *engine.Universe {
		cfg := DefaultConfig()
		cfg.Cotahist = []string{filepath.Join(realDir(t), cotahistDay)}
		cfg.FII = in
		u, _ := run(t, cfg)
		return u
	}
	fromZip, fromTables := read([]string{zpath}), read(tables)
	if len(fromZip.FundReports) == 0 || len(fromZip.FundReports) != len(fromTables.FundReports) || len(fromZip.Companies) != len(fromTables.Companies) {
		t.Errorf("archive: %d fund reports, %d companies; tables: %d, %d",
			len(fromZip.FundReports), len(fromZip.Companies), len(fromTables.FundReports), len(fromTables.Companies))
	}
}

// TestRunFIITwoDownloads imports the real FII tables of 2022 twice, as
// two downloads of the year would give them: the same reports as once,
// and the summary counts the rows read once.
func TestRunFIITwoDownloads(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	one := filepath.Join(dir, "cvm-fii/inf_mensal_fii_geral_2022.csv.zst")
	two := filepath.Join(dir, "cvm-fii/inf_mensal_fii_complemento_2022.csv.zst")
	cfg.FII = []string{one, two}
	once, _ := run(t, cfg)
	cfg.FII = []string{one, two, one, two}
	u, rep := run(t, cfg)
	if len(u.FundReports) != len(once.FundReports) || len(u.FundReports) != 5851 {
		t.Errorf("%d fund reports from two downloads, %d from one", len(u.FundReports), len(once.FundReports))
	}
	if want := "FII: 11702 monthly-report rows repeated by another input read once"; !strings.Contains(strings.Join(rep.Notes, "\n"), want) {
		t.Errorf("notes %s", strings.Join(rep.Notes, "\n"))
	}
}
