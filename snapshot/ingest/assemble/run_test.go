package assemble

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// realDir returns the project's testdata/real folder.
func realDir(tb testing.TB) string {
	tb.Helper()
	dir, err := datafile.RealDir()
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// cotahistDay is the COTAHIST file of 2021-03-26 in testdata/real.
const cotahistDay = "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst"

// run runs Run on cfg without progress and fails on error.
func run(tb testing.TB, cfg Config) (*engine.Universe, *Report) {
	tb.Helper()
	u, rep, err := Run(context.Background(), cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return u, rep
}

// fcaTable writes an FCA table of the given kind (valor_mobiliario,
// geral, endereco) into dir: the official header and row, and returns its
// path.
func fcaTable(tb testing.TB, dir, table, row string) string {
	tb.Helper()
	head, err := datafile.ReadFile(filepath.Join(realDir(tb), "cvm-headers/fca_cia_aberta_"+table+"_header.csv.zst"))
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, "fca_cia_aberta_"+table+"_2021.csv")
	if err := os.WriteFile(p, append(bytes.TrimRight(head, "\r\n"), append([]byte("\n"), row...)...), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// ambevListing is an FCA valor_mobiliario row: ABEV3 is Ambev's.
const ambevListing = "07526557000100;2021-01-01;1;1;AMBEV S.A.;Ações Ordinárias;;;ABEV3;;Bolsa;B3;B3 S.A.;2013-11-11;;Tradicional;2013-11-11;\n"

// TestRunPortfolioJSON imports one day of quotes and the IBOV theoretical
// portfolio response: its members that traded that day stay.
func TestRunPortfolioJSON(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	cfg.Index = []string{"IBOV=" + filepath.Join(dir, "b3-indexes/ropensci__rb3/GetTheoricalPortfolio.json.zst")}
	u, _ := run(t, cfg)
	if len(u.Indexes) != 1 || u.Indexes[0].Symbol != "IBOV" || u.Indexes[0].Name != "Ibovespa" || len(u.Indexes[0].Members) < 80 {
		t.Fatalf("indexes %+v", u.Indexes)
	}
	// Without a sector registry every company is unclassified; the
	// dataset still carries the whole taxonomy.
	for _, c := range u.Companies {
		if c.SubIndustryID != sectors.UnclassifiedID {
			t.Fatalf("%+v", c)
		}
	}
	if len(u.Sectors) != len(sectors.Tree()) {
		t.Errorf("%d sectors, want the whole taxonomy", len(u.Sectors))
	}
	if want := "Imported from official open data: B3 COTAHIST quotes, B3 index portfolios"; u.Meta.Description != want {
		t.Errorf("description %q", u.Meta.Description)
	}
}

// TestRunIBOVDay joins the IBOV portfolio of 2021-03-26 with that day's
// quotes: all 82 members traded on the standard-lot board, none is
// dropped; the index keeps its reductor.
func TestRunIBOVDay(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	cfg.Index = []string{filepath.Join(dir, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")}
	u, rep := run(t, cfg)
	if len(u.Indexes) != 1 || len(u.Indexes[0].Members) != 82 || u.Indexes[0].AsOf != engine.MakeDate(2021, 3, 26) {
		t.Fatalf("%d indexes, %+v", len(u.Indexes), u.Indexes)
	}
	if rep.UnquotedMembers != 0 {
		t.Errorf("%d members without quotes", rep.UnquotedMembers)
	}
	// The footer's "Redutor;;;18.296.80337677573" is kept, digits and all.
	if r := u.Indexes[0].Reductor; r != 18296803.37677573 {
		t.Errorf("reductor %v", float64(r))
	}
}

// TestRunFCA links a ticker through an FCA valor_mobiliario table (the
// official header, one synthetic row): the FCA map wins over the name.
func TestRunFCA(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.FCA = []string{fcaTable(t, t.TempDir(), "valor_mobiliario", ambevListing)}
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	u, rep := run(t, cfg)
	if rep.Linked[byFCA] != 1 {
		t.Errorf("%d linked by the FCA ticker map", rep.Linked[byFCA])
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

// TestRunFCAGeneralAddress completes a registry company from FCA geral
// and endereco tables (the official headers, one synthetic row each),
// given as tables and as a yearly archive.
func TestRunFCAGeneralAddress(t *testing.T) {
	dir := realDir(t)
	tmp := t.TempDir()
	geral := fcaTable(t, tmp, "geral", "07.526.557/0001-00;2021-01-01;1;1;AMBEV S.A.;;;2005-07-08;23264;;;;;;Brasil;Brasil;Bebidas;Fabricação de cervejas;;;;;31;12;;https://ri.ambev.com.br\n")
	end := fcaTable(t, tmp, "endereco", "07.526.557/0001-00;2021-01-01;1;1;AMBEV S.A.;Sede;Rua Exemplo, 1;Sala 2;Centro;SÃO PAULO;SP;Brasil;01001-000;;;;;;;;ri@example.com\n")
	zp := filepath.Join(tmp, "fca_cia_aberta_2021.zip")
	zf, err := os.Create(zp)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(zf)
	for _, p := range []string{geral, end} {
		b, _ := os.ReadFile(p)
		w, _ := zw.Create(filepath.Base(p))
		w.Write(b)
	}
	if err := errors.Join(zw.Close(), zf.Close()); err != nil {
		t.Fatal(err)
	}
	for _, fca := range [][]string{{geral, end}, {zp}} {
		cfg := DefaultConfig()
		cfg.FCA = fca
		cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
		cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
		u, _ := run(t, cfg)
		found := false
		for _, c := range u.Companies {
			if c.ID != "07526557000100" {
				continue
			}
			found = true
			if c.Website != "https://ri.ambev.com.br" || c.Description != "Fabricação de cervejas" ||
				c.Address.Line1 != "Rua Exemplo, 1" || c.Address.PostalCode != "01001-000" {
				t.Errorf("FCA %s: Ambev %+v", fca, c)
			}
		}
		if !found {
			t.Fatalf("FCA %s: Ambev not imported", fca)
		}
	}
}

// TestRunProgressEveryInput checks that every long input, not only
// COTAHIST, shows its progress line: each CVM file is named, and its last
// line has the file's row count.
func TestRunProgressEveryInput(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
	cfg.FCA = []string{fcaTable(t, t.TempDir(), "valor_mobiliario", ambevListing)}
	cfg.DFP = []string{filepath.Join(dir, "cvm-dfp")}
	cfg.FII = []string{filepath.Join(dir, "cvm-fii")}
	var lines []string
	if _, _, err := Run(context.Background(), cfg, func(l string) { lines = append(lines, l) }); err != nil {
		t.Fatal(err)
	}
	last := map[string]string{} // kind and file -> last line
	for _, l := range lines {
		if i := strings.Index(l, ": "); i > 0 {
			last[l[:i]] = l
		}
	}
	line := regexp.MustCompile(`^[^:]+: \d+ rows \(\d+ rows/s\), \d+\.\d MB read, heap \d+ MiB$`)
	for _, c := range []struct{ key, rows string }{
		{"CVM registry cad_cia_aberta.csv", ""},
		{"CVM FCA fca_cia_aberta_valor_mobiliario_2021.csv", ": 1 rows "},
		{"CVM DFP dfp_cia_aberta_BPA_con_2023.csv", ": 1490 rows "},
		{"CVM DFP dfp_cia_aberta_DRE_con_2022.csv", ": 844 rows "},
		{"CVM FII inf_mensal_fii_geral_2021.csv", ""},
		{"CVM FII inf_mensal_fii_complemento_2022.csv", ""},
	} {
		l, ok := last[c.key]
		if !ok {
			t.Errorf("no progress line for %s in %q", c.key, lines)
			continue
		}
		if !line.MatchString(l) || !strings.Contains(l, c.rows) {
			t.Errorf("%s: last line %q", c.key, l)
		}
	}
	cot := regexp.MustCompile(`^COTAHIST COTAHIST_D26032021\.TXT\.zst: \d+ lines \(\d+ lines/s\), \d+\.\d MB read, \d+ bars, heap \d+ MiB$`)
	if l, ok := last["COTAHIST COTAHIST_D26032021.TXT.zst"]; !ok || !cot.MatchString(l) {
		t.Errorf("COTAHIST progress line %q in %q", l, lines)
	}
}

// TestCVMProgressLine checks the line's format and that no hook is made
// without a progress output.
func TestCVMProgressLine(t *testing.T) {
	if cvmProgress(nil, "CVM DFP") != nil {
		t.Error("a hook without a progress output")
	}
	var got []string
	hook := cvmProgress(func(l string) { got = append(got, l) }, "CVM DFP")
	hook("/in/dfp_cia_aberta_2023.zip:dfp_cia_aberta_BPA_con_2023.csv", 0, 2048)
	hook("/in/dfp_cia_aberta_2023.zip:dfp_cia_aberta_BPA_con_2023.csv", 65536, 15_000_000)
	want := regexp.MustCompile(`^CVM DFP dfp_cia_aberta_2023\.zip:dfp_cia_aberta_BPA_con_2023\.csv: 65536 rows \(\d+ rows/s\), 15\.0 MB read, heap \d+ MiB$`)
	if len(got) != 2 || !want.MatchString(got[1]) {
		t.Errorf("lines %q", got)
	}
}

// TestRunErrors checks that Run names the input at fault by its flag and
// stops on a cancelled context.
func TestRunErrors(t *testing.T) {
	dir := realDir(t)
	day := filepath.Join(dir, cotahistDay)
	for _, c := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"no date", func(c *Config) {}, "--as-of is required"},
		{"missing file", func(c *Config) { c.Cotahist = []string{"/nonexistent/x.TXT"} }, "--cotahist: stat /nonexistent/x.TXT"},
		{"portfolio without symbol", func(c *Config) {
			c.Cotahist = []string{day}
			c.Index = []string{filepath.Join(dir, "b3-indexes/ropensci__rb3/GetTheoricalPortfolio.json.zst")}
		}, "a portfolio response names no index: give SYMBOL="},
		{"cash without symbol", func(c *Config) {
			c.Cotahist = []string{day}
			c.Cash = []string{filepath.Join(dir, "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")}
		}, "--cash-dividends"},
		{"cash of an unquoted company", func(c *Config) {
			c.Cotahist = []string{day}
			c.Cash = []string{"XXXX=" + filepath.Join(dir, "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")}
		}, "no quoted ticker of XXXX"},
	} {
		cfg := DefaultConfig()
		c.cfg(&cfg)
		if _, _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := DefaultConfig()
	cfg.Cotahist = []string{day}
	if _, _, err := Run(ctx, cfg, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRunConcurrent runs two imports at once (under -race, a check that
// they share no state) and expects the same securities from both.
func TestRunConcurrent(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
	cfg.Index = []string{filepath.Join(dir, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")}
	var us [2]*engine.Universe
	var errs [2]error
	var wg sync.WaitGroup
	for i := range us {
		wg.Add(1)
		go func() {
			defer wg.Done()
			us[i], _, errs[i] = Run(context.Background(), cfg, func(string) {})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	a, b := us[0].Securities, us[1].Securities
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("%d and %d securities", len(a), len(b))
	}
	for i := range a {
		if a[i].Ticker != b[i].Ticker || a[i].CompanyID != b[i].CompanyID || a[i].LiquidityRank != b[i].LiquidityRank {
			t.Errorf("%+v != %+v", a[i], b[i])
		}
	}
}

// Index portfolios are kept whatever the quotes: members without a
// quoted ticker are counted, not dropped, and an index none of whose
// members is quoted is imported with a note.
func TestIndexKeptWithoutQuotes(t *testing.T) {
	dir := realDir(t)
	cfg := DefaultConfig()
	cfg.Index = []string{filepath.Join(dir, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")}
	cfg.AsOf = engine.MakeDate(2021, 3, 26)
	u, rep := run(t, cfg)
	if len(u.Indexes) != 1 || len(u.Indexes[0].Members) != 82 {
		t.Fatalf("%d indexes, %+v", len(u.Indexes), u.Indexes)
	}
	if rep.UnquotedMembers != 82 {
		t.Errorf("%d members without quotes, want 82", rep.UnquotedMembers)
	}
	found := false
	for _, n := range rep.Notes {
		found = found || strings.Contains(n, "index IBOV: none of its 82 members is among the quoted tickers")
	}
	if !found {
		t.Errorf("notes %q", rep.Notes)
	}
}
