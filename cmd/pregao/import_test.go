package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/b3/datafile"
	"github.com/pregao/pregao/snapshot/bundle"
)

// TestImportReal imports every real sample file, writes the bundle and
// reads it back with full validation.
func TestImportReal(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--out", out, "--real-testdata", dir}
	if err := runImport(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	t.Log(stdout.String())
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := engine.MakeDate(2022, 2, 4); engine.DateOf(u.Meta.AsOf) != want {
		t.Errorf("as of %v", u.Meta.AsOf)
	}
	sec := map[string]engine.Security{}
	for _, s := range u.Securities {
		sec[s.Ticker] = s
	}
	co := map[string]engine.Company{}
	for _, c := range u.Companies {
		co[c.ID] = c
	}
	// PETR4 has the 6 sessions of the sample days, linked by name to
	// Petrobras's registry entry.
	if c := co[sec["PETR4"].CompanyID]; c.ID != "33000167000101" || c.Symbol != "PETR" {
		t.Errorf("PETR4 company %+v", c)
	}
	for _, s := range u.Daily {
		if s.Ticker == "PETR4" && s.Len() != 6 {
			t.Errorf("PETR4 %d sessions: %v", s.Len(), s.Dates)
		}
	}
	// ABEV3 belongs to Ambev's CNPJ (from the B3 company details) and has
	// the 29 cash events.
	if sec["ABEV3"].CompanyID != "07526557000100" {
		t.Errorf("ABEV3 %+v", sec["ABEV3"])
	}
	var abev int
	for _, c := range u.CashActions {
		if c.Ticker == "ABEV3" {
			abev++
		}
	}
	if abev != 29 {
		t.Errorf("ABEV3 cash actions %d", abev)
	}
	// HGLG11 is an FII joined by ISIN to its CVM monthly reports.
	h := sec["HGLG11"]
	if c := co[h.CompanyID]; c.Kind != engine.KindFII || len(h.CompanyID) != 14 {
		t.Errorf("HGLG11 %+v company %+v", h, c)
	}
	idx := map[string]int{}
	for _, x := range u.Indexes {
		idx[x.Symbol] = len(x.Members)
	}
	if idx["IBOV"] == 0 || idx["SMLL"] == 0 || idx["IFIX"] == 0 {
		t.Errorf("indexes %v", idx)
	}
	if len(u.Reports) == 0 || len(u.FundReports) == 0 {
		t.Errorf("%d reports, %d fund reports", len(u.Reports), len(u.FundReports))
	}
}

func TestImportErrors(t *testing.T) {
	dir, _ := datafile.RealDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--out is required"},
		{[]string{"--out", t.TempDir(), "extra"}, "unexpected argument"},
		{[]string{"--out", t.TempDir()}, "--as-of is required"},
		{[]string{"--out", t.TempDir(), "--cotahist", filepath.Join(dir, "b3-cotahist/ropensci__rb3")}, "trailer counts 1745"},
		{[]string{"--out", t.TempDir(), "--cotahist", filepath.Join(dir, "b3-cotahist/lucasdf__b3-cotahist"),
			"--cash-dividends", filepath.Join(dir, "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")}, "give SYMBOL="},
		{[]string{"--out", t.TempDir(), "--cotahist", "/nonexistent/x.TXT"}, "no such file"},
	} {
		var so, se bytes.Buffer
		err := runImport(context.Background(), c.args, &so, &se)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

func TestSyntheticID(t *testing.T) {
	if got := syntheticID("PETR", engine.ClassPS); got != "9925142927" {
		t.Errorf("got %s", got)
	}
	if got := syntheticID("A1BB", engine.ClassBDR); got != "9710011111" {
		t.Errorf("got %s", got)
	}
}

func TestNormName(t *testing.T) {
	for in, want := range map[string]string{"Ambev S.A.": "AMBEVSA", "ITAÚ UNIBANCO": "ITAUUNIBANCO", "Cia. Ça": "CIACA"} {
		if got := normName(in); got != want {
			t.Errorf("normName(%q) = %q", in, got)
		}
	}
}

// TestImportPortfolioJSON imports one day of quotes and the IBOV
// theoretical portfolio response: its members that traded that day stay.
func TestImportPortfolioJSON(t *testing.T) {
	dir, _ := datafile.RealDir()
	out := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--out", out, "--compression", "none",
		"--cotahist", filepath.Join(dir, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst"),
		"--index", "IBOV=" + filepath.Join(dir, "b3-indexes/ropensci__rb3/GetTheoricalPortfolio.json.zst")}
	if err := runImport(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Indexes) != 1 || u.Indexes[0].Symbol != "IBOV" || u.Indexes[0].Name != "Ibovespa" || len(u.Indexes[0].Members) < 80 {
		t.Fatalf("indexes %+v", u.Indexes)
	}
	// Without a sector registry every company is unclassified.
	for _, c := range u.Companies {
		if c.SubIndustryID != unclassifiedSub {
			t.Fatalf("%+v", c)
		}
	}
	if strings.Contains(so.String(), "\r") {
		t.Error("progress written to a non-terminal")
	}
}

// TestFetchCommand runs "pregao fetch" against a local server: one day
// present, one answering 404.
func TestFetchCommand(t *testing.T) {
	dir, _ := datafile.RealDir()
	zipBytes, err := os.ReadFile(filepath.Join(dir, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist/COTAHIST_D03022022.TXT.zip"))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/InstDados/SerHist/COTAHIST_D03022022.ZIP" {
			http.NotFound(w, r)
			return
		}
		w.Write(zipBytes)
	}))
	defer ts.Close()
	out := t.TempDir()
	var so, se bytes.Buffer
	err = runFetch(context.Background(), []string{"--from", "2022-02-03", "--to", "2022-02-04", "--dir", out, "--base-url", ts.URL}, &so, &se)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "1 downloaded, 0 already complete, 1 absent") {
		t.Errorf("output %q", so.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "InstDados/SerHist/COTAHIST_D03022022.ZIP"))
	if err != nil || !bytes.Equal(got, zipBytes) {
		t.Errorf("file: %v", err)
	}
	for _, args := range [][]string{{"--dir", out}, {"--from", "x", "--dir", out}, {"--from", "2022-02-03", "--dir", out, "--sources", "nope"}} {
		if err := runFetch(context.Background(), args, &so, &se); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// TestImportIBOVDay joins the IBOV portfolio of 2021-03-26 with that day's
// quotes: all 82 members traded on the standard-lot board, none is dropped.
func TestImportIBOVDay(t *testing.T) {
	dir, _ := datafile.RealDir()
	out := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--out", out,
		"--cotahist", filepath.Join(dir, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst"),
		"--index", filepath.Join(dir, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")}
	if err := runImport(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Indexes) != 1 || len(u.Indexes[0].Members) != 82 || u.Indexes[0].AsOf != engine.MakeDate(2021, 3, 26) {
		t.Fatalf("%d indexes, %+v", len(u.Indexes), u.Indexes)
	}
	if strings.Contains(so.String(), "index members dropped") {
		t.Errorf("members dropped: %s", so.String())
	}
}

// TestImportFCA links a ticker through an FCA valor_mobiliario table (the
// official header, one synthetic row): the FCA map wins over the name.
func TestImportFCA(t *testing.T) {
	dir, _ := datafile.RealDir()
	head, err := datafile.ReadFile(filepath.Join(dir, "cvm-headers/fca_cia_aberta_valor_mobiliario_header.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	row := "07526557000100;2021-01-01;1;1;AMBEV S.A.;Ações Ordinárias;;;ABEV3;;Bolsa;B3;B3 S.A.;2013-11-11;;Tradicional;2013-11-11;\n"
	fca := filepath.Join(t.TempDir(), "fca_cia_aberta_valor_mobiliario_2021.csv")
	if err := os.WriteFile(fca, append(bytes.TrimRight(head, "\r\n"), append([]byte("\n"), row...)...), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--out", out, "--fca", fca,
		"--cad", filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst"),
		"--cotahist", filepath.Join(dir, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst")}
	if err := runImport(context.Background(), args, &so, &se); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(so.String(), "1 by FCA ticker map") {
		t.Errorf("output %s", so.String())
	}
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range u.Securities {
		if s.Ticker == "ABEV3" && (s.CompanyID != "07526557000100" || s.ListedFrom != engine.MakeDate(2013, 11, 11)) {
			t.Errorf("ABEV3 %+v", s)
		}
	}
	for _, c := range u.Companies {
		if c.ID == "07526557000100" && (c.Symbol != "ABEV" || c.ListingSegment != "Tradicional") {
			t.Errorf("Ambev %+v", c)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(w) || isTerminal(&bytes.Buffer{}) {
		t.Error("a pipe or a buffer is not a terminal")
	}
}
