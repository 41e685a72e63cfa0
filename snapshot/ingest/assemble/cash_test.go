package assemble

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// TestCashNotesOrder checks that the events a cash-dividends response
// holds for unquoted stock types or under unknown labels are noted in a
// fixed order: by stock type, then by label.
func TestCashNotesOrder(t *testing.T) {
	ev := func(stock, label string) string {
		return `{"typeStock":"` + stock + `","dateApproval":"09/12/2021","valueCash":"0,1334","ratio":"1","corporateAction":"` + label +
			`","lastDatePriorEx":"17/12/2021","quotedPerShares":"1"}`
	}
	body := `{"results":[` + ev("PNB", "DIVIDENDO") + "," + ev("ON", "ZZ PREMIO") + "," + ev("PNA", "DIVIDENDO") + "," +
		ev("ON", "AA BONUS") + "," + ev("PNB", "DIVIDENDO") + "," + ev("ON", "DIVIDENDO") + `]}`
	p := filepath.Join(t.TempDir(), "cash.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		cfg := DefaultConfig()
		cfg.Cash = []string{"ABEV=" + p}
		a := newAssembler(cfg)
		a.asOf = engine.MakeDate(2022, 2, 4)
		a.u.Securities = []engine.Security{{Ticker: "ABEV3", CompanyID: "07526557000100", StockType: engine.ClassCS, ISIN: "BRABEVACNOR1"}}
		if err := a.readCash(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		want := []string{
			p + ": 1 events of ABEV PNA skipped (no quoted ticker)",
			p + ": 2 events of ABEV PNB skipped (no quoted ticker)",
			p + `: 1 events labelled "AA BONUS" skipped`,
			p + `: 1 events labelled "ZZ PREMIO" skipped`,
		}
		if !slices.Equal(a.rep.Notes, want) {
			t.Fatalf("notes %q, want %q", a.rep.Notes, want)
		}
		if len(a.u.CashActions) != 1 || a.u.CashActions[0].Ticker.String() != "ABEV3" {
			t.Fatalf("cash actions %+v", a.u.CashActions)
		}
	}
}

// TestSupplementLegsLinked imports a supplement whose stockDividends hold
// a spin-off into a quoted company, a merger into an unquoted one and a
// label no type maps (records in B3's layout): the legs get the tickers
// of their ISINs among the quotes, the unknown label is counted by name,
// an event given again is taken once (noted when its terms differ), and
// the engine adjusts the original's prices by the value handed out,
// P / (P - r x P_received) = 30 / (30 - 1 x 10).
func TestSupplementLegsLinked(t *testing.T) {
	const (
		isinX, isinA, isinB = "BRXPTOACNOR0", "BRAAAAACNOR1", "BRBBBBACNOR2"
		coX, coA            = "11111111000111", "22222222000122"
	)
	rec := func(issued, label, factor string) string {
		return `{"assetIssued":"` + issued + `","factor":"` + factor + `","approvedOn":"31/08/2021","isinCode":"` + isinX +
			`","label":"` + label + `","lastDatePrior":"01/10/2021","remarks":""}`
	}
	body := `[{"tradingName":"XPTO","code":"XPTO","codeCVM":"99999","numberCommonShares":"1.000","numberPreferredShares":"0","cashDividends":[],` +
		`"stockDividends":[` + rec(isinA, "CIS RED CAP", "100,00000000000") + "," + rec(isinB, "INCORPORACAO", "50,00000000000") + "," +
		rec(isinX, "ATUALIZACAO", "1,0") + `],"subscriptions":[]}]`
	p := filepath.Join(t.TempDir(), "GetListedSupplementCompany.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same answer fetched twice is taken once; a third one giving the
	// spin-off other terms is noted, the first terms kept.
	again := filepath.Join(filepath.Dir(p), "GetListedSupplementCompany_2.json")
	other := filepath.Join(filepath.Dir(p), "GetListedSupplementCompany_3.json")
	if err := os.WriteFile(again, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(strings.Replace(body, `"100,00000000000"`, `"90,00000000000"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Supplement = []string{p, again, other}
	a := newAssembler(cfg)
	d0, d1, d2 := engine.MakeDate(2021, 9, 30), engine.MakeDate(2021, 10, 1), engine.MakeDate(2021, 10, 4)
	a.asOf = d2
	a.u.Companies = []engine.Company{{ID: coX, Name: "XPTO SA", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null},
		{ID: coA, Name: "AAAA SA", Kind: engine.KindCompany, Employees: -1, FreeFloat: engine.Null}}
	a.u.Securities = []engine.Security{
		{Ticker: "XPTO3", CompanyID: coX, StockType: engine.ClassCS, ISIN: isinX, UnitFactor: engine.Null, ListedFrom: engine.NoDate, ListedTo: engine.NoDate},
		{Ticker: "AAAA3", CompanyID: coA, StockType: engine.ClassCS, ISIN: isinA, UnitFactor: engine.Null, ListedFrom: engine.NoDate, ListedTo: engine.NoDate},
	}
	series := func(ticker string, dates []engine.Date, closes ...engine.Num) engine.Series {
		n := len(dates)
		return engine.Series{Ticker: ticker, Dates: dates, Open: closes, High: closes, Low: closes, Close: closes,
			Volume: make([]engine.Num, n), Quantity: make([]int64, n), Trades: make([]int64, n)}
	}
	a.u.Daily = []engine.Series{
		series("XPTO3", []engine.Date{d0, d1, d2}, 31, 30, 20),
		series("AAAA3", []engine.Date{d2}, 10),
	}
	if err := a.readCash(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(a.u.ShareActions) != 2 {
		t.Fatalf("share actions %+v", a.u.ShareActions)
	}
	spin, merger := a.u.ShareActions[0], a.u.ShareActions[1]
	if spin.Type != engine.ActSpinOff || spin.CompanyID != coX || spin.Ticker != "XPTO3" || spin.IssuedISIN != isinA ||
		fmt.Sprint(spin.Legs) != fmt.Sprint([]engine.Leg{{LegType: engine.LegOriginal, ISIN: isinX, Ticker: "XPTO3", Factor: 1},
			{LegType: engine.LegReceived, ISIN: isinA, Ticker: "AAAA3", Factor: 1}}) {
		t.Errorf("spin-off %+v", spin)
	}
	if merger.Type != engine.ActMerger || len(merger.Legs) != 2 || merger.Legs[1].Ticker != "" || merger.Legs[1].Factor != 0.5 {
		t.Errorf("merger %+v", merger)
	}
	if a.rep.UnknownShareLabels["ATUALIZACAO"] != 3 || len(a.rep.UnknownShareLabels) != 1 || a.rep.UnquotedLegs != 1 {
		t.Errorf("report: unknown labels %v, %d unquoted legs", a.rep.UnknownShareLabels, a.rep.UnquotedLegs)
	}
	if want := []string{other + ": SPIN_OFF_CAPITAL_REDUCTION of XPTO3 on 2021-10-01 given again with other terms (factor or legs); the first kept"}; !slices.Equal(a.rep.Notes, want) {
		t.Errorf("notes %q, want %q", a.rep.Notes, want)
	}
	var sum strings.Builder
	a.rep.WriteSummary(&sum, &a.u)
	if !strings.Contains(sum.String(), `skipped: 3 share events of B3 supplements under labels no share-action type maps: 3 "ATUALIZACAO"`) {
		t.Errorf("summary:\n%s", sum.String())
	}
	ds, err := engine.Build(&a.u)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		day  engine.Date
		want engine.Num
	}{{d0, 1.5}, {d1, 1.5}, {d2, 1}} {
		if f, err := ds.AdjustmentFactor("XPTO3", c.day); err != nil || f != c.want {
			t.Errorf("XPTO3 factor on %s: %v %v, want %v", c.day, f, err, c.want)
		}
	}
}

// TestSupplementDatesItsOwnCompany: a supplement fills the payment dates
// of its company's events only, not those of another company's event of
// the same name, dates and value (whose ISIN is unknown).
func TestSupplementDatesItsOwnCompany(t *testing.T) {
	dir := t.TempDir()
	ev := `{"results":[{"typeStock":"ON","dateApproval":"09/12/2021","valueCash":"0,1334","ratio":"1","corporateAction":"DIVIDENDO","lastDatePriorEx":"17/12/2021","quotedPerShares":"1"}]}`
	sup := `[{"code":"ABEV","numberCommonShares":"","numberPreferredShares":"","cashDividends":[{"assetIssued":"BRABEVACNOR1","paymentDate":"30/12/2021","rate":"0,13340000000","approvedOn":"09/12/2021","isinCode":"BRABEVACNOR1","label":"DIVIDENDO","lastDatePrior":"17/12/2021"}],"stockDividends":[],"subscriptions":[]}]`
	files := map[string]string{"abev.json": ev, "othr.json": ev, "sup.json": sup}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := DefaultConfig()
	cfg.Cash = []string{"ABEV=" + filepath.Join(dir, "abev.json"), "OTHR=" + filepath.Join(dir, "othr.json")}
	cfg.Supplement = []string{filepath.Join(dir, "sup.json")}
	a := newAssembler(cfg)
	a.asOf = engine.MakeDate(2022, 2, 4)
	a.u.Securities = []engine.Security{
		{Ticker: "ABEV3", CompanyID: "07526557000100", StockType: engine.ClassCS, ISIN: "BRABEVACNOR1"},
		{Ticker: "OTHR3", CompanyID: "11111111000191", StockType: engine.ClassCS},
	}
	if err := a.readCash(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(a.u.CashActions) != 2 {
		t.Fatalf("cash actions %+v", a.u.CashActions)
	}
	for _, c := range a.u.CashActions {
		want := engine.NoDate
		if c.Ticker.String() == "ABEV3" {
			want = engine.MakeDate(2021, 12, 30)
		}
		if c.PaymentDate != want {
			t.Errorf("%s paid %s, want %s", c.Ticker, c.PaymentDate, want)
		}
	}
}

// TestRunSupplementTreasury imports Ambev's real B3 supplement (common
// shares 15,750,216,851, no treasury) with a CVM composicao_capital table
// in the official layout: when the CVM's latest composition has the same
// shares, it stays in effect with its treasury shares; when B3's counts
// are newer (other shares), they are taken whole and the summary says
// market cap and per-share values include treasury shares.
func TestRunSupplementTreasury(t *testing.T) {
	dir := realDir(t)
	tmp := t.TempDir()
	h, err := datafile.ReadFile(filepath.Join(dir, "cvm-headers/dfp_cia_aberta_composicao_capital_header.csv.zst"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		common      string
		kept, whole int
	}{{"15750216851", 1, 0}, {"15735150600", 0, 1}} {
		capital := filepath.Join(tmp, "dfp_cia_aberta_composicao_capital_2020.csv")
		row := "07.526.557/0001-00;2020-12-31;1;AMBEV S.A.;" + c.common + ";0;" + c.common + ";8000000;0;8000000\n"
		if err := os.WriteFile(capital, append(bytes.TrimRight(h, "\r\n"), append([]byte("\n"), row...)...), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Cotahist = []string{filepath.Join(dir, cotahistDay)}
		cfg.Cad = filepath.Join(dir, "cvm-cad/cad_cia_aberta.csv.zst")
		cfg.DFP = []string{capital}
		cfg.Supplement = []string{filepath.Join(dir, "b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst")}
		u, rep := run(t, cfg)
		var pts []engine.SharesPoint
		for _, s := range u.Shares {
			if s.CompanyID == "07526557000100" {
				pts = append(pts, s)
			}
		}
		if rep.SharesKeptCVM != c.kept || len(rep.SharesNoTreasury) != c.whole || len(pts) != 1+c.whole {
			t.Errorf("common %s: kept %d, whole %v, points %+v", c.common, rep.SharesKeptCVM, rep.SharesNoTreasury, pts)
		}
		if last := pts[len(pts)-1]; c.kept == 1 && last.Treasury != 8000000 {
			t.Errorf("the share count in effect lost its treasury shares: %+v", last)
		}
		var b bytes.Buffer
		rep.WriteSummary(&b, u)
		if !strings.Contains(b.String(), "share counts of B3 supplements:") {
			t.Errorf("summary:\n%s", b.String())
		}
	}
}

// TestCashGivenTwice: two answers of one company's cash dividends (two
// fetches) give each event once; an event the second gives with another
// value (B3 corrected it, or the first answer was of another day) is
// noted, the first value kept, never dropped in silence.
func TestCashGivenTwice(t *testing.T) {
	ev := func(value string) string {
		return `{"typeStock":"ON","dateApproval":"09/12/2021","valueCash":"` + value + `","ratio":"1","corporateAction":"DIVIDENDO","lastDatePriorEx":"17/12/2021","quotedPerShares":"1"}`
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := write("a.json", `{"results":[`+ev("0,1334")+`]}`)
	same := write("b.json", `{"results":[`+ev("0,1334")+`]}`)
	other := write("c.json", `{"results":[`+ev("0,1434")+`]}`)
	cfg := DefaultConfig()
	cfg.Cash = []string{"ABEV=" + first, "ABEV=" + same, "ABEV=" + other}
	a := newAssembler(cfg)
	a.asOf = engine.MakeDate(2022, 2, 4)
	a.u.Securities = []engine.Security{{Ticker: "ABEV3", CompanyID: "07526557000100", StockType: engine.ClassCS, ISIN: "BRABEVACNOR1"}}
	if err := a.readCash(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if len(a.u.CashActions) != 1 || a.u.CashActions[0].DeclaredValue != 0.1334 {
		t.Fatalf("cash actions %+v", a.u.CashActions)
	}
	want := []string{other + ": DIVIDEND of ABEV3 with prior-ex date 2021-12-17 (B3-ABEV-CS-DIV-20211209-20211217) given again with the value 0.1434 BRL a share; the first answer's 0.1334 kept"}
	if !slices.Equal(a.rep.Notes, want) {
		t.Errorf("notes %q\nwant  %q", a.rep.Notes, want)
	}
}
