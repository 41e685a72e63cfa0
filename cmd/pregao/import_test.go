package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/ratios"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// TestImportReal imports every real sample file (the shared
// realFixture), writes the bundle and reads it back with full validation.
func TestImportReal(t *testing.T) {
	f := realFixtureOf(t)
	t.Log(f.summary)
	if strings.ContainsAny(f.summary, "\r\033") {
		t.Error("progress written to a non-terminal")
	}
	// The summary fits a screen: its lists of tickers (430 linked by name
	// alone) show their first entries; -v writes them whole.
	if n := strings.Count(f.summary, "\n"); n > 60 || !strings.Contains(f.summary, "more (-v lists them)") {
		t.Errorf("summary of %d lines, want 60 at most with its lists cut", n)
	}
	u, err := bundle.Read(f.bundle)
	if err != nil {
		t.Fatal(err)
	}
	// As of the last COTAHIST session, 2022-02-04 (the DFP year ending
	// 2023-06-30 of BrasilAgro and Pettenati is later: counted in the
	// summary); CVM data is stamped retrieved then.
	if want := engine.MakeDate(2022, 2, 4); engine.DateOf(u.Meta.AsOf) != want || u.Meta.AsOf.Hour() != 21 {
		t.Errorf("as of %v", u.Meta.AsOf)
	}
	listed := map[string]bool{}
	for _, s := range u.Securities {
		listed[s.CompanyID] = true
	}
	for _, c := range u.Companies {
		if strings.Contains(c.Name, "  ") || strings.Contains(c.TradingName, "  ") || listed[c.ID] && c.TradingName == "" || c.Address.Country == "Brasil" || c.Address.Country == "BRASIL" {
			t.Errorf("registry text of %s: name %q, trading name %q, country %q", c.ID, c.Name, c.TradingName, c.Address.Country)
		}
	}
	for _, r := range u.Reports {
		if !r.RetrievalDate.Equal(engine.StampOf(u.Meta.AsOf)) {
			t.Fatalf("report %s %s retrieved %v", r.CompanyID, r.ReferenceDate, r.RetrievalDate)
		}
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
		if c.Ticker.String() == "ABEV3" {
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
	checkRealFundSigns(t, u)
	checkRealDataset(t, u)
	// The same files imported as of a day after the DFPs: their ratios are
	// current then.
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(t.TempDir(), "later")
	var so, stderr bytes.Buffer
	if err := runImport(context.Background(), []string{"--real-testdata", dir, "--out", out2, "--as-of", "2023-06-30"}, &so, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	later, err := bundle.Read(out2)
	if err != nil {
		t.Fatal(err)
	}
	checkRealRatios(t, later)
}

// checkRealFundSigns checks that FII money and rates keep their sign as
// filed (inf_mensal_fii_complemento 2020 and 2021).
func checkRealFundSigns(t *testing.T, u *engine.Universe) {
	t.Helper()
	var negDY, negAssets int
	for _, f := range u.FundReports {
		if f.DividendYield < 0 {
			negDY++
		}
		if f.TotalAssets < 0 {
			negAssets++
		}
		switch {
		case f.FundID == "15348117000138" && f.ReferenceDate == engine.MakeDate(2020, 1, 1):
			if f.TotalAssets != -10613973.85 || f.NetAssets != -10653973.85 || f.NAVPerShare != -10653.97385 || f.SharesOut != 1000 {
				t.Errorf("15.348.117/0001-38 2020-01: %+v", f)
			}
		case f.FundID == "01964775000140" && f.ReferenceDate == engine.MakeDate(2021, 3, 1) && f.Version == 1:
			if f.DividendYield != -0.000207 || f.MonthlyReturn != -3.114659 {
				t.Errorf("01.964.775/0001-40 2021-03: %+v", f)
			}
		}
	}
	// 617 negative monthly yields and 10 negative total assets, as filed.
	if negDY != 617 || negAssets != 10 {
		t.Errorf("negative dividend yields %d, total assets %d", negDY, negAssets)
	}
}

// checkRealDataset derives the ratios of the imported universe, builds
// the engine's Dataset and checks facts read from the sample files
// through it, the way the API answers them.
func checkRealDataset(t *testing.T, u *engine.Universe) {
	t.Helper()
	der, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = der
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	// PETR4: last session 2022-02-04, close 32,63; 2021-03-26 close 23,46.
	p, ok := ds.Asset("PETR4")
	if !ok {
		t.Fatal("no PETR4")
	}
	if q := p.Latest; q.Date != engine.MakeDate(2022, 2, 4) || q.Close != 32.63 || q.PrevClose != 32.07 {
		t.Errorf("PETR4 latest %+v", q)
	}
	if i := p.DayIndex(engine.MakeDate(2021, 3, 26)); i < 0 || p.Daily.Close(i) != 23.46 || p.Daily.Volume(i) != 1433177694 {
		t.Errorf("PETR4 2021-03-26 row %d", i)
	}
	for id, want := range map[string]string{"PETR4": "33000167000101", "PETR": "33000167000101", "33.000.167/0001-01": "33000167000101",
		"RAIZ4": "33453598000123", "TEND3": "71476527000135", "JALL3": "02635522000195", "ABEV3": "07526557000100"} {
		if r, err := ds.Resolve(id); err != nil || r.Company.ID != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", id, r.Company, err, want)
		}
	}
	// IBOV: the portfolio of 2021-03-26 (82 members, every one quoted that
	// day) is preferred to the 2024 one, which postdates the quotes.
	ix, ok := ds.Index("IBOV")
	if !ok || ix.AsOf != engine.MakeDate(2021, 3, 26) || len(ix.Members) != 82 {
		t.Fatalf("IBOV %v members %d", ok, len(ix.Members))
	}
	day := engine.MakeDate(2021, 3, 26)
	var quoted int
	for _, m := range ix.Members {
		if m.DayIndex(day) >= 0 && m.Daily.Dates[m.DayIndex(day)] == day {
			quoted++
		}
	}
	if quoted != 82 {
		t.Errorf("IBOV members quoted on %s: %d", day, quoted)
	}
	ranked := ix.RankAt(day.Time().Add(23*time.Hour), false, nil)
	if len(ranked) != 82 || ranked[0].Quote.Date != day || ranked[0].Quote.Variation < ranked[81].Quote.Variation {
		t.Errorf("IBOV ranked on %s: %d", day, len(ranked))
	}
	// Latest rankings leave out the members that stopped trading before
	// 2022-02-03 (HGTX3 last traded on 2021-06-25; BTOW3 became AMER3).
	for _, e := range ix.Highs {
		if e.Quote.Date < engine.MakeDate(2022, 2, 3) {
			t.Errorf("stale member ranked: %s %s", e.Asset.Ticker, e.Quote.Date)
		}
	}
	if len(ix.Highs) == 0 || len(ix.Highs) > 82 {
		t.Errorf("IBOV highs %d", len(ix.Highs))
	}
	// Ambev: the 29 cash events of GetListedCashDividends.
	if am, ok := ds.Issuer("07526557000100"); !ok || len(am.CashActions()) != 29 {
		t.Errorf("Ambev cash actions")
	}
	// HGLG11: March 2021 P/NAV = close of 2021-03-26 (169,70) / NAV per
	// share of the 2021-03 report (146,936763778988).
	h, err := ds.Resolve("HGLG11")
	if err != nil {
		t.Fatal(err)
	}
	pnav := fundPoint(t, ds, h.Issuer, "P_NAV", engine.MakeDate(2021, 3, 1))
	if want := 169.70 / 146.936763778988; math.Abs(float64(pnav)-want) > 1e-12 {
		t.Errorf("HGLG11 P_NAV 2021-03 = %v, want %v", pnav, want)
	}
	if v := fundPoint(t, ds, h.Issuer, "P_NAV", engine.MakeDate(2021, 4, 1)); v.Valid() {
		t.Errorf("HGLG11 P_NAV 2021-04 = %v without a price that month", v)
	}
	// Jalles Machado's DFP of the year ending 2023-03-31 is dated after the
	// as-of day (2022-02-04): kept as filed, no ratio point (never current).
	j, err := ds.Resolve("JALL3")
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Issuer.Reports()) == 0 {
		t.Error("JALL3 has no reports")
	}
	if v := ratioPoint(t, ds, j.Issuer, "NET_REVENUE", engine.MakeDate(2023, 3, 31)); v.Valid() {
		t.Errorf("JALL3 NET_REVENUE of 2023-03-31 = %v as of 2022-02-04", v)
	}
}

// checkRealRatios derives the ratios of the real sample's bundle u as of a
// day after its DFPs: Jalles Machado's NET_REVENUE ANNUAL (year ending
// 2023-03-31) is DRE 3.01 of the consolidated statement, and margins
// compute.
func checkRealRatios(t *testing.T, u *engine.Universe) {
	t.Helper()
	der, err := ratios.Derive(u)
	if err != nil {
		t.Fatal(err)
	}
	u.Derived = der
	ds, err := engine.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	j, err := ds.Resolve("JALL3")
	if err != nil {
		t.Fatal(err)
	}
	ref := engine.MakeDate(2023, 3, 31)
	var dre301 engine.Num = engine.Null
	for _, r := range j.Issuer.Reports() {
		if r.Statement.String() == "DRE" && r.Aggregation.String() == engine.AggConsolidated && r.ReferenceDate == ref {
			for _, a := range r.Accounts {
				if a.Code() == "3.01" {
					dre301 = a.Value
				}
			}
		}
	}
	if !dre301.Valid() || dre301 <= 0 {
		t.Fatalf("JALL3 DRE 3.01 = %v", dre301)
	}
	if v := ratioPoint(t, ds, j.Issuer, "NET_REVENUE", ref); v != dre301 {
		t.Errorf("JALL3 NET_REVENUE = %v, want DRE 3.01 %v", v, dre301)
	}
	for _, id := range []string{"GROSS_MARGIN", "NET_MARGIN", "RETURN_ON_EQUITY"} {
		if v := ratioPoint(t, ds, j.Issuer, id, ref); !v.Valid() {
			t.Errorf("JALL3 %s null", id)
		}
	}
	// Construtora Tenda's DFP of 2023-03-31 covers one quarter: no ANNUAL.
	tend, err := ds.Resolve("TEND3")
	if err != nil {
		t.Fatal(err)
	}
	if v := ratioPoint(t, ds, tend.Issuer, "NET_REVENUE", ref); v.Valid() {
		t.Errorf("TEND3 NET_REVENUE ANNUAL of a quarter = %v", v)
	}
}

// fundPoint returns the MONTHLY value of fund indicator id at ref.
func fundPoint(t *testing.T, ds *engine.Dataset, is *engine.Issuer, id string, ref engine.Date) engine.Num {
	t.Helper()
	k, ok := ds.IndicatorIndex(engine.IndFund, id)
	if !ok {
		t.Fatalf("no fund indicator %s", id)
	}
	for _, g := range is.FundRatios() {
		if int(g.Indicator) == k && g.Frequency == engine.FreqMonthly {
			for _, p := range g.Points {
				if p.ReferenceDate == ref {
					return p.Value
				}
			}
		}
	}
	return engine.Null
}

// ratioPoint returns the company-level ANNUAL value of indicator id at ref
// (the last point published for it).
func ratioPoint(t *testing.T, ds *engine.Dataset, is *engine.Issuer, id string, ref engine.Date) engine.Num {
	t.Helper()
	k, ok := ds.IndicatorIndex("", id)
	if !ok {
		t.Fatalf("no indicator %s", id)
	}
	v := engine.Null
	for _, g := range is.Ratios() {
		if int(g.Indicator) == k && g.Class == "" && g.Frequency == engine.FreqAnnual {
			for _, p := range g.Points {
				if p.ReferenceDate == ref {
					v = p.Value
				}
			}
		}
	}
	return v
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
		{[]string{"--out", t.TempDir(), "--as-of", "26/03/2021"}, "--as-of: "},
		{[]string{"--out", t.TempDir(), "--as-of", "2021-03-26", "--retrieved", "2021-03-26"}, "--retrieved: "},
	} {
		var so, se bytes.Buffer
		err := runImport(context.Background(), c.args, &so, &se)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// progressInputs returns the import flags of one input of each CVM kind
// (registry, FCA, DFP, FII) and a COTAHIST day, and the FCA file.
func progressInputs(t *testing.T) (args []string, fca string) {
	t.Helper()
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	head, err := datafile.ReadFile(filepath.Join(dir, "cvm-headers/fca_cia_aberta_valor_mobiliario_header.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	row := "07526557000100;2021-01-01;1;1;AMBEV S.A.;Ações Ordinárias;;;ABEV3;;Bolsa;B3;B3 S.A.;2013-11-11;;Tradicional;2013-11-11;\n"
	fca = filepath.Join(t.TempDir(), "fca_cia_aberta_valor_mobiliario_2021.csv")
	if err := os.WriteFile(fca, append(bytes.TrimRight(head, "\r\n"), append([]byte("\n"), row...)...), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"--cotahist", filepath.Join(dir, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst"),
		"--cad", filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst"),
		"--fca", fca,
		"--dfp", filepath.Join(dir, "cvm-dfp"),
		"--fii", filepath.Join(dir, "cvm-fii"),
	}, fca
}

// TestImportQuietWhenNotTerminal imports every kind of long input with
// standard output a pipe (a file, not a terminal): no progress line, no
// terminal control sequence, only the summary.
func TestImportQuietWhenNotTerminal(t *testing.T) {
	args, _ := progressInputs(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	var se bytes.Buffer
	err = runImport(context.Background(), append([]string{"--out", t.TempDir()}, args...), w, &se)
	w.Close()
	out := <-read
	if err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	if bytes.ContainsAny(out, "\r\033") || bytes.Contains(out, []byte("rows/s")) || bytes.Contains(out, []byte("lines/s")) {
		t.Errorf("progress written to a pipe:\n%q", out)
	}
	if !bytes.HasPrefix(out, []byte("wrote bundle ")) || !bytes.Contains(out, []byte("CVM: ")) {
		t.Errorf("summary %q", out)
	}
}

// TestImportDates checks that --as-of and --retrieved reach the bundle:
// the as-of time is 21:00 UTC of the day given, and the reports carry the
// retrieval time given, in UTC.
func TestImportDates(t *testing.T) {
	dir, _ := datafile.RealDir()
	out := t.TempDir()
	var so, se bytes.Buffer
	args := []string{"--out", out, "--as-of", "2021-03-26", "--retrieved", "2024-05-01T12:00:00-03:00",
		"--cad", filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst"), "--dfp", filepath.Join(dir, "cvm-dfp")}
	if err := runImport(context.Background(), args, &so, &se); err != nil {
		t.Fatalf("%v\n%s", err, se.String())
	}
	u, err := bundle.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2021, 3, 26, 21, 0, 0, 0, time.UTC); !u.Meta.AsOf.Equal(want) {
		t.Errorf("as of %v, want %v", u.Meta.AsOf, want)
	}
	if len(u.Reports) == 0 {
		t.Fatal("no report")
	}
	want := time.Date(2024, 5, 1, 15, 0, 0, 0, time.UTC)
	for _, r := range u.Reports {
		if !r.RetrievalDate.Equal(engine.StampOf(want)) {
			t.Fatalf("report %s %s retrieved %v, want %v", r.CompanyID, r.ReferenceDate, r.RetrievalDate, want)
		}
	}
	if !strings.HasPrefix(so.String(), "wrote bundle "+out+" (as of 2021-03-26T21:00:00Z)\n") {
		t.Errorf("summary %q", so.String())
	}
}

// pregao import --out a folder that holds files of the user's refuses it,
// naming them, before reading anything, and leaves them; --force replaces
// the folder. A folder holding a bundle (with a README) is replaced
// without --force, the README kept.
func TestImportRefusesForeignFolder(t *testing.T) {
	dir, err := datafile.RealDir()
	if err != nil {
		t.Fatal(err)
	}
	in := []string{"--cotahist", filepath.Join(dir, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa/COTAHIST_D26032021.TXT.zst")}
	out := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(filepath.Join(out, "drafts"), 0o755)
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	var so, se bytes.Buffer
	err = runImport(context.Background(), append([]string{"--out", out}, in...), &so, &se)
	if err == nil || !strings.Contains(err.Error(), `"drafts/", "notes.txt"`) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("import into a folder of the user's: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != "mine" {
		t.Error("notes.txt changed by a refused import")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 2 {
		t.Errorf("the refused import wrote into the folder: %d entries", len(ents))
	}
	if err := runImport(context.Background(), append([]string{"--out", out, "--force"}, in...), &so, &se); err != nil {
		t.Fatalf("import --force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "notes.txt")); err == nil {
		t.Error("notes.txt kept by import --force")
	}
	os.WriteFile(filepath.Join(out, "README.md"), []byte("mine"), 0o644)
	if err := runImport(context.Background(), append([]string{"--out", out}, in...), &so, &se); err != nil {
		t.Fatalf("import over its own bundle: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "README.md")); string(b) != "mine" {
		t.Error("README.md not kept")
	}
}
