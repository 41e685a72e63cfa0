package assemble

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pregao/pregao/engine"
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
		if len(a.u.CashActions) != 1 || a.u.CashActions[0].Ticker != "ABEV3" {
			t.Fatalf("cash actions %+v", a.u.CashActions)
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
		if c.Ticker == "ABEV3" {
			want = engine.MakeDate(2021, 12, 30)
		}
		if c.PaymentDate != want {
			t.Errorf("%s paid %s, want %s", c.Ticker, c.PaymentDate, want)
		}
	}
}
