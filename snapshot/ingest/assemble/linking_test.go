package assemble

import (
	"context"
	"strconv"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
)

func TestSyntheticID(t *testing.T) {
	f := func(root, st, want string) {
		t.Helper()
		if got := syntheticID(root, st); got != want {
			t.Errorf("syntheticID(%q, %q) = %s, want %s", root, st, got, want)
		}
	}
	f("PETR", engine.ClassPS, "9925142927")
	f("PETR", engine.ClassCS, "9925142927") // every share class of a root: one issuer
	f("PETR", engine.ClassUnit, "9925142927")
	f("HGLG", engine.ClassFundUnit, "9817162116")
	f("A1BB", engine.ClassBDR, "9710011111")
	f("AAAA", engine.ClassCS, "9910101010")
	f("ZZZZ", engine.ClassCS, "9935353535")
	f("0000", engine.ClassCS, "9900000000")
	f("9999", engine.ClassBDR, "9709090909")
	for _, root := range []string{"PETR", "ZZZZ", "0000", "B3SA"} {
		for _, st := range []string{engine.ClassCS, engine.ClassFundUnit, engine.ClassBDR} {
			id := syntheticID(root, st)
			if _, err := strconv.ParseUint(id, 10, 64); err != nil || len(id) != 10 {
				t.Errorf("syntheticID(%q, %q) = %q: not 10 digits", root, st, id)
			}
		}
	}
}

func TestKindOK(t *testing.T) {
	f := func(kind, st string, want bool) {
		t.Helper()
		if got := kindOK(kind, st); got != want {
			t.Errorf("kindOK(%q, %q) = %v", kind, st, got)
		}
	}
	f(engine.KindCompany, engine.ClassCS, true)
	f(engine.KindCompany, engine.ClassPSA, true)
	f(engine.KindCompany, engine.ClassUnit, true)
	f(engine.KindCompany, engine.ClassBDR, false)
	f(engine.KindCompany, engine.ClassFundUnit, false)
	f(engine.KindBDR, engine.ClassBDR, true)
	f(engine.KindBDR, engine.ClassCS, false)
	f(engine.KindFII, engine.ClassFundUnit, true)
	f(engine.KindFII, engine.ClassCS, false)
	f(engine.KindETF, engine.ClassFundUnit, true)
	f(engine.KindETF, engine.ClassBDR, false)
}

// TestLinkPreference checks which rule links each ticker when several
// apply, that a company of the wrong kind is passed over, and what a
// minimal issuer looks like.
func TestLinkPreference(t *testing.T) {
	const (
		alpha = "11111111000111" // FCA map says ALPA3, B3 details say ALPA3 is Beta's
		beta  = "22222222000122" // B3 details: symbol BETA
		gamma = "33333333000133" // FII of ISIN BRGAMACTF001
		delta = "44444444000144" // BDR issuer the FCA map wrongly gives DELT3
		omega = "55555555000155" // found by name
	)
	last := engine.MakeDate(2022, 2, 4)
	a := newAssembler(DefaultConfig())
	a.companies = registry(
		engine.Company{ID: alpha, Name: "ALPHA S.A.", Status: "ACTIVE"},
		engine.Company{ID: beta, Name: "BETA PARTICIPACOES S.A.", Status: "ACTIVE"},
		engine.Company{ID: gamma, Name: "GAMMA FII", Kind: engine.KindFII},
		engine.Company{ID: delta, Name: "DELTA INC", Kind: engine.KindBDR, Symbol: "DELT"},
		engine.Company{ID: omega, Name: "OMEGA S.A.", Status: "ACTIVE"},
	)
	a.tickerCo = map[string]string{"ALPA3": alpha, "DELT3": delta}
	a.isinFund = map[string]string{"BRGAMACTF001": gamma}
	a.details = []*b3.Details{{Symbol: "BETA", CNPJ: beta, Tickers: map[string]string{"ALPA3": ""}}}
	a.fiiCodes = map[string]bool{"FUNB": true}
	a.etfSyms = map[string]bool{"FUNC": true}
	quote := func(ticker, st, name string, bdi int, isin string, lastDay engine.Date, sponsored bool) {
		a.quotes.Securities = append(a.quotes.Securities, cotahist.Security{Ticker: ticker, StockType: st, Name: name, BDI: bdi,
			ISIN: isin, Last: lastDay, Sponsored: sponsored})
		a.quotes.Series = append(a.quotes.Series, engine.Series{Ticker: ticker, Dates: []engine.Date{lastDay}, Volume: []engine.Num{1000}})
	}
	quote("ALPA3", engine.ClassCS, "BETA", 2, "", last, false)                          // FCA map over details and name
	quote("BETA3", engine.ClassCS, "ALPHA", 2, "", last, false)                         // details by root over name
	quote("DELT3", engine.ClassCS, "OMEGA", 2, "", last, false)                         // FCA map of the wrong kind: name
	quote("FUNA11", engine.ClassFundUnit, "FII GAMMA", 12, "BRGAMACTF001", last, false) // ISIN
	quote("FUNB11", engine.ClassFundUnit, "OMEGA", 14, "BRFUNBCTF000", last-1, false)   // never by name; a listed FII
	quote("FUNC11", engine.ClassFundUnit, "FUNDO C", 12, "", last, false)               // listed ETF, board 12
	quote("FUND11", engine.ClassFundUnit, "FUNDO D", 14, "", last, false)               // ETF
	quote("FUNE11", engine.ClassFundUnit, "FUNDO E", 12, "", last, false)               // FII by board
	quote("OMEG3", engine.ClassCS, "ALPHA", 2, "", last, false)                         // name
	quote("PETR4F", engine.ClassPS, "PETROBRAS", 96, "", last, false)                   // not a bundle ticker
	quote("ZETA34", engine.ClassBDR, "ZETA INC", 2, "BRZETABDR001", last, true)         // sponsored BDR
	quote("ZETA35", engine.ClassBDR, "ZETA INC", 2, "", last, false)
	if err := a.linkSecurities(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	sec := map[string]engine.Security{}
	for _, s := range a.u.Securities {
		sec[s.Ticker] = s
	}
	for _, c := range []struct{ ticker, company string }{
		{"ALPA3", alpha}, {"BETA3", beta}, {"DELT3", omega}, {"FUNA11", gamma}, {"FUNB11", syntheticID("FUNB", engine.ClassFundUnit)},
		{"FUNC11", "9815302312"}, {"FUND11", "9815302313"}, {"FUNE11", "9815302314"}, {"OMEG3", alpha},
		{"ZETA34", "9735142910"}, {"ZETA35", "9735142910"},
	} {
		if got := sec[c.ticker].CompanyID; got != c.company {
			t.Errorf("%s linked to %q, want %q", c.ticker, got, c.company)
		}
	}
	if _, ok := sec["PETR4F"]; ok || len(a.rep.BadTickers) != 1 || a.rep.BadTickers[0] != "PETR4F" {
		t.Errorf("bad tickers %v", a.rep.BadTickers)
	}
	if len(a.u.Daily) != len(a.u.Securities) || a.u.Daily[0].Ticker != "ALPA3" || a.quotes.Series != nil {
		t.Errorf("%d series for %d securities", len(a.u.Daily), len(a.u.Securities))
	}
	r := a.rep
	if l := r.Linked; l[byFCA] != 1 || l[byB3] != 1 || l[byISIN] != 1 || l[byName] != 2 || r.Minimal != 5 {
		t.Errorf("linked: FCA %d, B3 %d, ISIN %d, name %d; minimal %d", l[byFCA], l[byB3], l[byISIN], l[byName], r.Minimal)
	}
	for _, c := range []struct {
		ticker, kind, status, symbol string
		sponsored                    bool
	}{
		{"FUNB11", engine.KindFII, "", "FUNB", false}, // did not trade in the last session
		{"FUNC11", engine.KindETF, "ACTIVE", "FUNC", false},
		{"FUND11", engine.KindETF, "ACTIVE", "FUND", false},
		{"FUNE11", engine.KindFII, "ACTIVE", "FUNE", false},
		{"ZETA34", engine.KindBDR, "ACTIVE", "ZETA", true}, // ZETA35 (DRN) does not undo it
	} {
		co := a.companies[sec[c.ticker].CompanyID]
		if co.Kind != c.kind || co.Status != c.status || co.Symbol != c.symbol || co.BDRSponsored != c.sponsored || co.Name != co.TradingName ||
			co.Employees != -1 || co.FreeFloat.Valid() || co.FoundingDate.Valid() || co.IPODate.Valid() || co.StatusDate.Valid() {
			t.Errorf("%s issuer %+v", c.ticker, *co)
		}
	}
	// Symbols: a company without one takes its first ticker's root unless
	// another company holds it (Omega: DELT is Delta's).
	for id, want := range map[string]string{alpha: "ALPA", beta: "BETA", omega: "", delta: "DELT", gamma: "FUNA"} {
		if got := a.companies[id].Symbol; got != want {
			t.Errorf("%s symbol %q, want %q", id, got, want)
		}
	}
	if s := sec["ZETA34"]; s.ISIN != "BRZETABDR001" || s.LiquidityRank == 0 || s.Currency != "BRL" || s.ListedFrom.Valid() {
		t.Errorf("ZETA34 %+v", s)
	}
}
