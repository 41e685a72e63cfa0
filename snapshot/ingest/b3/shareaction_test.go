package b3

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
)

// stockRec is one stockDividends record in the layout of
// GetListedSupplementCompany (every field a string, as B3 writes them).
func stockRec(isin, issued, label, factor, approved, prior, remarks string) string {
	return fmt.Sprintf(`{"assetIssued":%q,"factor":%q,"approvedOn":%q,"isinCode":%q,"label":%q,"lastDatePrior":%q,"remarks":%q}`,
		issued, factor, approved, isin, label, prior, remarks)
}

// supplementWith returns a GetListedSupplementCompany answer holding the
// given stockDividends records.
func supplementWith(recs ...string) []byte {
	return []byte(`[{"tradingName":"XPTO","code":"XPTO","codeCVM":"99999","numberCommonShares":"1.000.000","numberPreferredShares":"0",` +
		`"cashDividends":[],"stockDividends":[` + strings.Join(recs, ",") + `],"subscriptions":[]}]`)
}

const (
	isinX = "BRXPTOACNOR0" // the company's share
	isinA = "BRAAAAACNOR1" // received assets
	isinB = "BRBBBBACNOR2"
)

// TestSupplementLegs checks every leg-bearing label of stockDividends:
// one action per event with its legs, the received asset's factor from
// the percentage's digits, the original's from a record on the original
// for the two types that reduce the holding; and the redemption's root
// factor.
func TestSupplementLegs(t *testing.T) {
	s, err := ReadSupplement(supplementWith(
		// A spin-off into two companies: two records of one event.
		stockRec(isinX, isinA, "CIS RED CAP", "100,00000000000", "31/08/2021", "01/10/2021", "Cisão parcial"),
		stockRec(isinX, isinB, "CIS RED CAP", "12,34567800000", "31/08/2021", "01/10/2021", "Cisão parcial"),
		// A spin-off with share reduction: received asset and holding kept.
		stockRec(isinX, isinA, "CIS RED CAP QTD", "25,00000000000", "01/02/2022", "10/02/2022", ""),
		stockRec(isinX, isinX, "CIS RED CAP QTD", "80,00000000000", "01/02/2022", "10/02/2022", ""),
		stockRec(isinX, isinB, "INCORPORACAO", "50,00000000000", "23/05/2025", "06/06/2025", ""),
		stockRec(isinX, isinA, "REST CAP ACOES", "9,13000000000", "01/12/2021", "10/12/2021", "Entrega de ações"),
		stockRec(isinX, isinX, "REST CAP C/ RED", "90,00000000000", "01/03/2023", "15/03/2023", ""),
		stockRec(isinX, isinX, "RESG TOTAL RV", "100,00000000000", "01/11/2025", "27/11/2025", ""),
		// Labels not mapped: counted, not errors even with odd factors.
		stockRec(isinX, isinX, "ATUALIZACAO", "x", "", "", ""),
		stockRec(isinX, isinX, "ATUALIZACAO", "", "", "", ""),
		stockRec(isinX, isinA, "CONVERSAO", "1,0", "01/01/2020", "02/01/2020", ""),
	), "supp.json")
	if err != nil {
		t.Fatal(err)
	}
	legs := func(ls ...engine.Leg) []engine.Leg { return ls }
	orig := func(f engine.Num) engine.Leg { return engine.Leg{LegType: engine.LegOriginal, ISIN: isinX, Factor: f} }
	recv := func(isin string, f engine.Num) engine.Leg {
		return engine.Leg{LegType: engine.LegReceived, ISIN: isin, Factor: f}
	}
	want := []struct {
		typ, label, issued string
		prior              engine.Date
		legs               []engine.Leg
		remarks            string
	}{
		{engine.ActSpinOff, "CIS RED CAP", isinA, day(2021, 10, 1), legs(orig(1), recv(isinA, 1), recv(isinB, 0.123456780)), "Cisão parcial"},
		{engine.ActSpinOffQuantity, "CIS RED CAP QTD", isinA, day(2022, 2, 10), legs(orig(0.8), recv(isinA, 0.25)), ""},
		{engine.ActMerger, "INCORPORACAO", isinB, day(2025, 6, 6), legs(orig(1), recv(isinB, 0.5)), ""},
		{engine.ActRestitutionInShares, "REST CAP ACOES", isinA, day(2021, 12, 10), legs(orig(1), recv(isinA, 0.0913)), "Entrega de ações"},
		{engine.ActRestitutionWithReduce, "REST CAP C/ RED", isinX, day(2023, 3, 15), legs(orig(0.9)), ""},
	}
	if len(s.ShareActions) != len(want)+1 {
		t.Fatalf("%d actions: %+v", len(s.ShareActions), s.ShareActions)
	}
	for i, w := range want {
		a := s.ShareActions[i]
		if a.Type != w.typ || a.Label != w.label || a.ISIN != isinX || a.IssuedISIN != w.issued || a.PriorExDate != w.prior ||
			a.Factor.Valid() || a.Remarks != w.remarks || fmt.Sprint(a.Legs) != fmt.Sprint(w.legs) {
			t.Errorf("action %d: %+v\nwant %+v", i, a, w)
		}
		for _, l := range a.Legs {
			if l.Ticker != "" {
				t.Errorf("action %d: leg ticker %q (the caller resolves them)", i, l.Ticker)
			}
		}
	}
	// The received factors are the decimals written, not a division's
	// approximation (9.13/100 is 0.09130000000000001 in float64).
	if f := s.ShareActions[3].Legs[1].Factor; f != 0.0913 {
		t.Errorf("REST CAP ACOES factor %v, want 0.0913", float64(f))
	}
	if r := s.ShareActions[5]; r.Type != engine.ActTotalRedemption || r.Factor != 0 || len(r.Legs) != 0 || r.IssuedISIN != isinX {
		t.Errorf("redemption %+v", r)
	}
	// Records on the original asset of events that keep the holding have
	// no leg to set: their factor is in remarks.
	s2, err := ReadSupplement(supplementWith(
		stockRec(isinX, isinA, "CIS RED CAP", "10,0", "31/08/2021", "01/10/2021", "Cisão"),
		stockRec(isinX, "", "CIS RED CAP", "100,0", "31/08/2021", "01/10/2021", ""),
		stockRec(isinX, isinX, "CIS RED CAP", "95,0", "31/08/2021", "01/10/2021", ""),
	), "supp.json")
	if err != nil || len(s2.ShareActions) != 1 || len(s2.ShareActions[0].Legs) != 2 || s2.ShareActions[0].Legs[0].Factor != 1 ||
		s2.ShareActions[0].Remarks != "Cisão; fator 100,0 sem ativo emitido; fator 95,0 sobre o próprio ativo" {
		t.Errorf("%+v %v", s2, err)
	}
	if len(s.UnknownLabels) != 2 || s.UnknownLabels["ATUALIZACAO"] != 2 || s.UnknownLabels["CONVERSAO"] != 1 {
		t.Errorf("unknown labels %v", s.UnknownLabels)
	}
}

// TestSupplementSameDayFactors checks B3's two readings of factor on one
// day: DESDOBRAMENTO 7.900% (x80) and GRUPAMENTO 0,025 (the multiplier)
// make 2 together.
func TestSupplementSameDayFactors(t *testing.T) {
	s, err := ReadSupplement(supplementWith(
		stockRec(isinX, isinX, "DESDOBRAMENTO", "7.900,00000000000", "12/03/2025", "14/04/2025", ""),
		stockRec(isinX, isinX, "GRUPAMENTO", "0,02500000000", "12/03/2025", "14/04/2025", ""),
	), "supp.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.ShareActions) != 2 || s.ShareActions[0].Factor != 80 || s.ShareActions[1].Factor != 0.025 ||
		s.ShareActions[0].Factor*s.ShareActions[1].Factor != 2 || s.ShareActions[0].Legs != nil {
		t.Errorf("%+v", s.ShareActions)
	}
}

// TestShareActionType checks the label table: B3's abbreviations, the
// spelled-out forms (any case, accents, spacing) and unknown labels.
func TestShareActionType(t *testing.T) {
	for in, want := range map[string]string{
		"DESDOBRAMENTO": engine.ActStockSplit, "Bonificação": engine.ActStockBonus, "GRUPAMENTO": engine.ActReverseSplit,
		"CIS RED CAP": engine.ActSpinOff, "CIS  RED CAP QTD": engine.ActSpinOffQuantity, "INCORPORAÇÃO": engine.ActMerger,
		"RESG TOTAL RV": engine.ActTotalRedemption, "REST CAP ACOES": engine.ActRestitutionInShares,
		"REST CAP C/ RED": engine.ActRestitutionWithReduce, "Cisão com redução de capital": engine.ActSpinOff,
		"RESTITUIÇÃO DE CAPITAL EM AÇÕES": engine.ActRestitutionInShares,
		"DIVIDENDO":                       "", "SUBSCRICAO": "", "": "", "CIS": "",
	} {
		if got := ShareActionType(in); got != want {
			t.Errorf("ShareActionType(%q) = %q, want %q", in, got, want)
		}
	}
}
