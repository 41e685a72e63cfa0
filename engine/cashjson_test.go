package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestCashActionSize guards the layout: hundreds of thousands of cash
// actions are held.
func TestCashActionSize(t *testing.T) {
	if n := unsafe.Sizeof(CashAction{}); n > 144 {
		t.Fatalf("CashAction is %d bytes, want at most 144", n)
	}
	if l := InstallmentsOf(nil); l.All() != nil || l.Len() != 0 {
		t.Fatal("InstallmentsOf(nil) is not absent")
	}
	if l := InstallmentsOf([]Installment{}); l.All() == nil || l.Len() != 0 {
		t.Fatal("InstallmentsOf of an empty list is not empty")
	}
	if l := InstallmentsOf([]Installment{{Currency: "BRL"}}); l.Len() != 1 || l.All()[0].Currency != "BRL" {
		t.Fatal("InstallmentsOf of one installment")
	}
	var c CashAction
	if c.SourceOrZero() == nil || *c.SourceOrZero() != (Source{}) {
		t.Fatal("a cash action without a source does not answer the zero Source")
	}
}

// TestCashActionJSON checks that a CashAction's JSON spells its words,
// publication, installments and source as the strings, time, slice and
// value it held before, keys in the same order, and reads back.
func TestCashActionJSON(t *testing.T) {
	const want = `{"id":"E-1-v2","event_id":"E-1","version":2,"company_id":"33000167000101","ticker":"PETR4","stock_type":"PS","isin":"BRPETRACNPR6",` +
		`"approval_date":"2024-03-01","prior_ex_date":"2024-03-11","publish_date":"2024-03-01T22:00:00.5Z","payment_date":null,"protocol":"P-1",` +
		`"name":"INTEREST_ON_EQUITY","code":"JRS CAP PROPRIO","declared_value":1.25,"monetary_correction":0,"monetary_correction_start_date":null,` +
		`"monetary_correction_end_date":null,"net_value":1.0625,"currency":"BRL","installments":[],` +
		`"source":{"visualization_url":"https://example.com/a","download_url":"","published_at":"2024-03-01T22:00:00Z","retrieved_at":"0001-01-01T00:00:00Z","name":"Aviso"}}`
	var c CashAction
	if err := json.Unmarshal([]byte(want), &c); err != nil {
		t.Fatal(err)
	}
	if c.StockType.String() != ClassPS || c.Name.String() != "INTEREST_ON_EQUITY" || c.Code.String() != "JRS CAP PROPRIO" || c.Currency.String() != "BRL" ||
		!c.PublishDate.Time().Equal(time.Date(2024, 3, 1, 22, 0, 0, 5e8, time.UTC)) || c.Installments.All() == nil || c.Installments.Len() != 0 ||
		c.Source == nil || c.Source.Name != "Aviso" || c.Version != 2 {
		t.Fatalf("decoded %+v", c)
	}
	got, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	c.Installments, c.Source = InstallmentsOf(nil), nil
	got, _ = json.Marshal(c)
	if !strings.Contains(string(got), `"installments":null,"source":{"visualization_url":"","download_url":"","published_at":"0001-01-01T00:00:00Z"`) {
		t.Errorf("nil installments and source: %s", got)
	}
}
