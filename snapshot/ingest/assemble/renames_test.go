package assemble

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

func series(ticker string, days ...engine.Date) engine.Series {
	s := engine.Series{Ticker: ticker, Dates: days}
	for range days {
		s.Open, s.High, s.Low, s.Close, s.Volume = append(s.Open, 10), append(s.High, 10), append(s.Low, 10), append(s.Close, 10), append(s.Volume, 100)
		s.Quantity, s.Trades = append(s.Quantity, 10), append(s.Trades, 1)
	}
	return s
}

// TestRecordRenames: a ticker change inside the quoted period (same ISIN,
// one ticker after the other) becomes a rename the engine serves: the old
// ticker resolves to the new one with the joined history; tickers of one
// ISIN quoted at the same time keep the ISIN on one of them.
func TestRecordRenames(t *testing.T) {
	d := engine.MakeDate
	a := newAssembler(DefaultConfig())
	quoted := []struct {
		ticker, isin, company string
		days                  []engine.Date
	}{
		{"OLDN3", "BROLDNACNOR1", "11111111000191", []engine.Date{d(2022, 1, 3), d(2022, 1, 4)}},
		{"NEWN3", "BROLDNACNOR1", "22222222000191", []engine.Date{d(2022, 1, 5), d(2022, 1, 6)}}, // renamed, linked elsewhere by name
		{"TWIN3", "BRTWINACNOR2", "33333333000191", []engine.Date{d(2022, 1, 3), d(2022, 1, 6)}},
		{"TWIN4", "BRTWINACNOR2", "33333333000191", []engine.Date{d(2022, 1, 4), d(2022, 1, 5)}}, // same ISIN, same days
	}
	a.u.Meta.AsOf = d(2022, 1, 6).Time()
	for _, id := range []string{"11111111000191", "22222222000191", "33333333000191"} {
		a.u.Companies = append(a.u.Companies, engine.Company{ID: id, Name: id, Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null,
			FoundingDate: engine.NoDate, IPODate: engine.NoDate})
	}
	for _, q := range quoted {
		a.quotes.Securities = append(a.quotes.Securities, cotahist.Security{Ticker: q.ticker, ISIN: q.isin, First: q.days[0], Last: q.days[len(q.days)-1]})
		a.u.Securities = append(a.u.Securities, engine.Security{Ticker: q.ticker, ISIN: q.isin, CompanyID: q.company, StockType: engine.ClassCS,
			Currency: "BRL", UnitFactor: engine.Null, ListedFrom: engine.NoDate, ListedTo: engine.NoDate})
		a.u.Daily = append(a.u.Daily, series(q.ticker, q.days...))
	}
	if err := a.recordRenames(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(a.u.Renames) != 1 || a.u.Renames[0] != (engine.TickerRename{From: "OLDN3", To: "NEWN3", Date: d(2022, 1, 5)}) {
		t.Fatalf("renames %+v", a.u.Renames)
	}
	if a.u.Securities[3].ISIN != "" || a.u.Securities[2].ISIN == "" {
		t.Errorf("ISINs of the overlapping pair: %q %q", a.u.Securities[2].ISIN, a.u.Securities[3].ISIN)
	}
	if notes := strings.Join(a.rep.Notes, "\n"); !strings.Contains(notes, "OLDN3→NEWN3 (2022-01-05)") || !strings.Contains(notes, "TWIN4") {
		t.Errorf("notes %q", notes)
	}
	ds, err := engine.Build(&a.u)
	if err != nil {
		t.Fatalf("the engine refuses the result: %v", err)
	}
	as, ok := ds.Asset("OLDN3")
	if !ok || as.Ticker != "NEWN3" || as.Daily.Len() != 4 || as.CompanyID != "22222222000191" {
		t.Errorf("OLDN3 resolves to %+v", as)
	}
}

// TestTidyRegistryText: names with runs of spaces collapse, a company
// without a registry trading name takes B3's, Brazil becomes BR.
func TestTidyRegistryText(t *testing.T) {
	c := engine.Company{Name: "  PETROLEO   BRASILEIRO S.A.  PETROBRAS ", Address: engine.Address{Country: "Brasil"}}
	tidyRegistryText(&c, "PETROBRAS   ")
	if c.Name != "PETROLEO BRASILEIRO S.A. PETROBRAS" || c.TradingName != "PETROBRAS" || c.Address.Country != "BR" {
		t.Errorf("%q %q %q", c.Name, c.TradingName, c.Address.Country)
	}
	c = engine.Company{TradingName: "AMBEV", Address: engine.Address{Country: "Argentina"}}
	tidyRegistryText(&c, "AMBEV S/A")
	if c.TradingName != "AMBEV" || c.Address.Country != "Argentina" {
		t.Errorf("%q %q", c.TradingName, c.Address.Country)
	}
}

// TestRenameMovesSymbol: a company renamed from IPOI to PIRC (both quoted,
// one after the other) is served under its current root, though IPOI comes
// first in ticker order; a root another company holds is not taken.
func TestRenameMovesSymbol(t *testing.T) {
	d := engine.MakeDate
	a := newAssembler(DefaultConfig())
	a.companies["11111111000191"] = &engine.Company{ID: "11111111000191", Symbol: "IPOI"}
	a.companies["22222222000191"] = &engine.Company{ID: "22222222000191", Symbol: "OLDX"}
	a.companies["33333333000191"] = &engine.Company{ID: "33333333000191", Symbol: "NEWX"}
	for _, q := range []struct {
		ticker, isin, company string
		first, last           engine.Date
	}{
		{"IPOI3", "BRIPOIACNOR0", "11111111000191", d(2025, 1, 2), d(2025, 6, 25)},
		{"PIRC3", "BRIPOIACNOR0", "11111111000191", d(2025, 6, 26), d(2025, 7, 1)},
		{"OLDX3", "BROLDXACNOR0", "22222222000191", d(2025, 1, 2), d(2025, 6, 25)},
		{"NEWX3", "BROLDXACNOR0", "22222222000191", d(2025, 6, 26), d(2025, 7, 1)},
	} {
		a.quotes.Securities = append(a.quotes.Securities, cotahist.Security{Ticker: q.ticker, ISIN: q.isin, First: q.first, Last: q.last})
		a.u.Securities = append(a.u.Securities, engine.Security{Ticker: q.ticker, ISIN: q.isin, CompanyID: q.company, StockType: engine.ClassCS})
	}
	if err := a.recordRenames(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if s := a.companies["11111111000191"].Symbol; s != "PIRC" {
		t.Errorf("renamed company's symbol %q, want PIRC", s)
	}
	if s := a.companies["22222222000191"].Symbol; s != "OLDX" {
		t.Errorf("symbol %q taken from another company, want OLDX kept", s)
	}
}

// TestRunRenameLeavesOneCompany imports quote records in the COTAHIST
// layout where one ISIN changes ticker: OLDX3 ("VELHA", a registrant by
// name) becomes NEWX3 ("NOVA MARCA", no registrant); OLDY3 becomes NEWY3,
// neither a registrant. Each rename leaves one company: the registrant,
// else the issuer made for the current ticker; no issuer is left without
// a security.
func TestRunRenameLeavesOneCompany(t *testing.T) {
	dir := t.TempDir()
	cad := filepath.Join(dir, "cad_cia_aberta.csv")
	h, err := datafile.ReadFile(filepath.Join(realDir(t), "cvm-headers/cad_cia_aberta_header.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	row := cadLine("12.345.678/0001-95", "VELHA S.A.", "2001-01-02", "", "ATIVO", "2001-01-02", "90001", "BOLSA", "Categoria A")
	if err := os.WriteFile(cad, append(h, row...), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Cad = cad
	cfg.Cotahist = []string{cotahistFile(t, dir, "COTAHIST_D04022022.TXT",
		quoteRec{"20220201", "OLDX3", "VELHA", "ON      NM", "BROLDXACNOR1", ""},
		quoteRec{"20220201", "OLDY3", "YPSILON", "ON      NM", "BROLDYACNOR1", ""},
		quoteRec{"20220204", "NEWX3", "NOVA MARCA", "ON      NM", "BROLDXACNOR1", ""},
		quoteRec{"20220204", "NEWY3", "YPSILON NOVA", "ON      NM", "BROLDYACNOR1", ""},
	)}
	u, rep := run(t, cfg)
	sec := map[string]string{}
	owned := map[string]int{}
	for _, s := range u.Securities {
		sec[s.Ticker] = s.CompanyID
		owned[s.CompanyID]++
	}
	if sec["OLDX3"] != "12345678000195" || sec["NEWX3"] != "12345678000195" {
		t.Errorf("OLDX3 %s, NEWX3 %s: want both the registrant's", sec["OLDX3"], sec["NEWX3"])
	}
	if y := syntheticID("NEWY", "CS"); sec["OLDY3"] != y || sec["NEWY3"] != y {
		t.Errorf("OLDY3 %s, NEWY3 %s: want both %s", sec["OLDY3"], sec["NEWY3"], y)
	}
	for _, c := range u.Companies {
		if strings.HasPrefix(c.ID, "99") && owned[c.ID] == 0 {
			t.Errorf("issuer %s %s left without a security", c.ID, c.Name)
		}
	}
	if len(u.Renames) != 2 || rep.Minimal != 1 {
		t.Errorf("renames %+v, %d made issuers", u.Renames, rep.Minimal)
	}
}
