package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// TestRunDFPQuarterRow imports the real DFP tables of 2023: Construtora
// Tenda's DFP of 2023-03-31 holds a DRE of 2023-01-01..2023-03-31 (ÚLTIMO,
// revenue 651,443 thousand). As of 2023-06-30 it is a quarter, never
// ANNUAL; Jalles Machado's twelve months to 2023-03-31 are. As of the
// quotes' last day (2022-02-04) none of these reports is known: the
// summary says so and they yield no ratio point.
func TestRunDFPQuarterRow(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.DFP = []string{filepath.Join(dir, "cvm-dfp")}
	cfg.AsOf = engine.MakeDate(2023, 6, 30)
	u, _ := run(t, cfg)
	d, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := ratios.Lookup(engine.IndFundamental, "NET_REVENUE")
	rev := map[string]engine.Num{}
	for _, p := range d.Ratios {
		if p.Indicator == ix && p.ReferenceDate == engine.MakeDate(2023, 3, 31) {
			rev[p.CompanyID.String()+" "+p.Frequency.String()] = p.Value
		}
	}
	if v, ok := rev["71476527000135 ANNUAL"]; ok {
		t.Errorf("Tenda's quarter served as the year: %v", v)
	}
	if v := rev["71476527000135 QUARTERLY"]; v != 651443e3 {
		t.Errorf("Tenda's quarter %v", v)
	}
	if v := rev["02635522000195 ANNUAL"]; !v.Valid() || v < 1e9 {
		t.Errorf("Jalles Machado's year %v", v)
	}

	cfg.AsOf = engine.NoDate
	cfg.Cotahist = []string{filepath.Join(dir, lastDay)}
	u, rep := run(t, cfg)
	if d, err = ratios.Derive(u); err != nil {
		t.Fatal(err)
	}
	if len(d.Ratios) != 0 || len(u.Reports) == 0 {
		t.Errorf("%d ratio points of %d reports dated after the as-of day", len(d.Ratios), len(u.Reports))
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "never served as current") {
		t.Errorf("notes %s", notes)
	}
}

// TestRunDFPTwoDownloads: CVM's yearly DFP and ITR files hold the latest
// version of each filing only (the real DFP files of 2022 and 2023 carry
// one VERSAO per company: Jalles Machado's 2 and 3), so the versions of a
// restated filing are kept by importing every download of the year. Two
// downloads repeat the filings that did not change: each is imported once,
// a restatement the later download holds is a version of its own, and one
// version filed with two sets of figures is an error naming it.
func TestRunDFPTwoDownloads(t *testing.T) {
	dir := realDir(t)
	body, err := datafile.ReadFile(filepath.Join(dir, "cvm-dfp/dfp_cia_aberta_DRE_con_2023.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	download := func(name, content string) string {
		d := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "dfp_cia_aberta_DRE_con_2023.csv"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The later download: Construtora Tenda's filing restated as version 2,
	// its revenue changed.
	const tenda = "71.476.527/0001-35;2023-03-31;"
	restated := strings.ReplaceAll(string(body), tenda+"1;", tenda+"2;")
	restated = strings.Replace(restated, ";651443.", ";651444.", 1) // the current period's 3.01
	if strings.Count(string(body), ";651443.") != 1 || !strings.Contains(restated, tenda+"2;") {
		t.Fatal("the restatement was not written")
	}
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.AsOf = engine.MakeDate(2023, 6, 30)
	cfg.DFP = []string{filepath.Join(dir, "cvm-dfp/dfp_cia_aberta_DRE_con_2023.csv.zst")}
	once, _ := run(t, cfg)

	cfg.DFP = []string{download("2023-05-01", string(body)), download("2023-07-01", restated)}
	u, rep := run(t, cfg)
	type key struct {
		co             string
		ref, ini, end  engine.Date
		version        int
		stmt, agg, frm string
	}
	seen := map[key]int{}
	tendaRevenue := map[int]engine.Num{}
	for _, r := range u.Reports {
		seen[key{r.CompanyID, r.ReferenceDate, r.StartDate, r.EndDate, r.Version, r.Statement.String(), r.Aggregation.String(), r.Form.String()}]++
		if r.CompanyID == "71476527000135" {
			for _, a := range r.Accounts {
				if a.Code() == "3.01" {
					tendaRevenue[r.Version] = a.Value
				}
			}
		}
	}
	for k, n := range seen {
		if n > 1 {
			t.Errorf("%+v imported %d times", k, n)
		}
	}
	if len(u.Reports) != len(once.Reports)+1 {
		t.Errorf("%d reports from two downloads, %d from one: want one more (Tenda's version 2)", len(u.Reports), len(once.Reports))
	}
	if tendaRevenue[1] != 651443e3 || tendaRevenue[2] != 651444e3 {
		t.Errorf("Tenda's revenue by version %v", tendaRevenue)
	}
	if notes := strings.Join(rep.Notes, "\n"); !strings.Contains(notes, "10 reports repeated by another input imported once") {
		t.Errorf("notes:\n%s", notes)
	}

	// One version, two sets of figures: not a choice the import makes.
	conflict := strings.Replace(string(body), ";651443.", ";651444.", 1)
	cfg.DFP = []string{download("2023-05-01", string(body)), download("2023-07-01", conflict)}
	if _, _, err := Run(context.Background(), cfg, nil); err == nil ||
		!strings.Contains(err.Error(), "71476527000135") || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("conflicting figures of one version: %v", err)
	}
}

// TestRunCapitalTwoDownloads: the capital tables of two downloads of a
// year give one share count per company and date, the highest version's;
// one version with two counts is an error.
func TestRunCapitalTwoDownloads(t *testing.T) {
	dir := realDir(t)
	const head = "CNPJ_CIA;DT_REFER;VERSAO;DENOM_CIA;QT_ACAO_ORDIN_CAP_INTEGR;QT_ACAO_PREF_CAP_INTEGR;QT_ACAO_TOTAL_CAP_INTEGR;QT_ACAO_ORDIN_TESOURO;QT_ACAO_PREF_TESOURO;QT_ACAO_TOTAL_TESOURO\r\n"
	row := func(version, common int) string {
		return fmt.Sprintf("71.476.527/0001-35;2023-03-31;%d;CONSTRUTORA TENDA S.A.;%d;0;%d;0;0;0\r\n", version, common, common)
	}
	download := func(rows ...string) string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "dfp_cia_aberta_composicao_capital_2023.csv"), []byte(head+strings.Join(rows, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	cfg := DefaultConfig()
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.AsOf = engine.MakeDate(2023, 6, 30)
	for _, c := range []struct {
		name    string
		a, b    string
		want    int64 // common shares; 0: an error
		wantErr string
	}{
		{"same count twice", row(1, 122200000), row(1, 122200000), 122200000, ""},
		{"restated", row(2, 123000000), row(1, 122200000), 123000000, ""},
		{"one version, two counts", row(1, 122200000), row(1, 123000000), 0, "version 1: two inputs give different share counts"},
	} {
		cfg.DFP = []string{download(c.a), download(c.b)}
		u, _, err := Run(context.Background(), cfg, nil)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(u.Shares) != 1 || u.Shares[0].Common != c.want {
			t.Errorf("%s: shares %+v", c.name, u.Shares)
		}
	}
}
