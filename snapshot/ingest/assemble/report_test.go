package assemble

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

func TestWriteSummary(t *testing.T) {
	u := &engine.Universe{Companies: make([]engine.Company, 3), Securities: make([]engine.Security, 2), Indexes: make([]engine.Index, 1),
		Reports: []engine.Report{{Form: engine.LabelDFP}, {Form: engine.LabelITR}, {Form: engine.LabelITR}}}
	u.Companies[0].Status, u.Companies[1].Status = "ACTIVE", "CANCELLED"
	r := &Report{
		Quotes: cotahist.Stats{Files: 1, Lines: 2512034, Records: 8, Kept: 6, SkippedMarket: map[int]int64{70: 14738, 20: 3},
			SkippedBoard: map[int]int64{10: 4}, SkippedSpec: map[string]int64{"PNF": 1}, SkippedCurrency: map[string]int64{"CR$": 9}, KeptOtherBoard: map[int]int64{34: 5}, Malformed: 2,
			TrailerProblems: []string{"a.TXT: trailer counts 11 records, file has 10"}},
		CVM:    cvm.Stats{Files: 2, Rows: 1100, Skipped: 1, Previous: 3, Ignored: 4, Unused: 1},
		Linked: [byCount]int{byNone: 6, byFCA: 1, byISIN: 2, byB3: 3, byListing: 9, byCode: 7, byName: 4}, Minimal: 5,
		Instruments:        b3.InstrumentStats{Rows: 120000, Other: 118000, BadTicker: 2, Malformed: 1},
		ListingUnmatched:   []string{`VIIA3 ("VIA S.A.")`},
		StatusesTakenBack:  8,
		BadTickers:         strings.Fields("A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 A11"),
		UnquotedMembers:    7,
		UnknownShareLabels: map[string]int{"ZZ NOVO": 1, "ATUALIZACAO": 2},
		UnquotedLegs:       3,
		NameLinks:          []string{`ABCD3 ("ABC") → 11 ABC SA [ACTIVE] (equal name)`},
		Ambiguous:          []string{`EFGH3 ("EFG"): 2 registrants match alike (equal name): 12 EFG SA [ACTIVE]; 13 EFG [ACTIVE]`},
		MadeUp:             []string{`EFGH3 ("EFG")`, `IJKL4 ("IJK")`},
	}
	r.notef("%d things", 2)
	var b strings.Builder
	r.WriteSummary(&b, u)
	want := `  companies 3, securities 2, daily series 0, indexes 1, reports 3, share counts 0, cash actions 0, share actions 0, fund reports 0
  COTAHIST: 1 files, 2,512,034 lines, 8 quote records, 6 daily bars kept
    kept: 5 rows on BDI 34 (a board not in the 2017 layout) whose ISIN names a share, unit, BDR or fund quota
    skipped: 3 odd-lot rows (TPMERC 020)
    skipped: 14,738 call-option rows (TPMERC 070)
    skipped: 4 cash-market rows on BDI 10 (rights and receipts)
    skipped: 1 rows of ESPECI "PNF" (not a share, unit, BDR or fund quota class Pregão serves)
    skipped: 9 rows priced in "CR$" (MODREF), not reais (R$): no BRL price
    skipped: 2 malformed records (--lenient)
    hint: --odd-lot also imports the odd-lot market (tickers ending in F)
  COTAHIST trailer: a.TXT: trailer counts 11 records, file has 10
  CVM: 2 files, 1,100 rows
    not imported: 3 statement rows of the comparison period (ORDEM_EXERC PENÚLTIMO: the previous period's figures each filing repeats; each period comes from its own filing)
    not imported: 4 rows of the statement of changes in equity (DMPL), which the API does not serve
    skipped: 1 malformed rows (--lenient)
    not read: 1 zip members of no table Pregão imports
    registry (cad_cia_aberta SIT): 1 ACTIVE, 1 CANCELLED (listed only with status=CANCELLED or ALL), 0 SUSPENDED
    registry newer than the as-of day: 8 statuses that began later taken back to the one in force then (a company cancelled or suspended later is ACTIVE, one registered later has no status)
    statements: 1 from DFP (annual filings), 2 from ITR (quarterly filings)
  securities linked to companies by evidence: 1 by the FCA ticker map, 2 by ISIN (funds), 3 by B3 company details, 9 by B3's instruments file (the issuer's legal name), 7 by the ISIN's issuer code; 4 by name alone; 6 on 5 issuers made from COTAHIST names
  B3 instruments: 120,000 rows, 118,000 of other markets or the odd lot, 2 with a ticker the bundle format refuses, 1 malformed (skipped)
  1 shares whose issuer in B3's instruments file is no active registrant's legal name (renamed since, or not in the registry; the rules after it applied): VIIA3 ("VIA S.A.")
  1 securities linked by name alone (guessed: no FCA, ISIN or B3 evidence; an active registrant on the exchange whose name matches; check them):
    ABCD3 ("ABC") → 11 ABC SA [ACTIVE] (equal name)
  1 shares left unlinked, their short name matching several registrants alike (on an issuer made from COTAHIST):
    EFGH3 ("EFG"): 2 registrants match alike (equal name): 12 EFG SA [ACTIVE]; 13 EFG [ACTIVE]
  2 shares and units on issuers made from COTAHIST names (no file ties them to a registrant: give the FCA, B3's details or instruments file): EFGH3 ("EFG"); IJKL4 ("IJK")
  11 tickers skipped (not a bundle ticker): A1 A2 A3 A4 A5 A6 A7 A8 A9 A10 ...
  7 index members without quotes kept in their portfolios (ranked once they trade)
  skipped: 3 share events of B3 supplements under labels no share-action type maps: 2 "ATUALIZACAO", 1 "ZZ NOVO"
  3 share-action legs on assets without quotes kept without a ticker
  note: 2 things
`
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
	if len(r.BadTickers) != 11 || r.BadTickers[10] != "A11" {
		t.Errorf("first modified the list: %q", r.BadTickers)
	}
	// Without quotes, CVM data, skipped tickers or dropped members: their
	// lines are left out.
	b.Reset()
	(&Report{}).WriteSummary(&b, &engine.Universe{})
	if n := strings.Count(b.String(), "\n"); n != 2 {
		t.Errorf("empty summary:\n%s", b.String())
	}
}

// TestWriteSummaryLists: without Verbose each list shows its first
// entries and how many more -v writes, so that the summary fits a
// screen; with it, every entry.
func TestWriteSummaryLists(t *testing.T) {
	var links, made []string
	for i := range 7 {
		links = append(links, fmt.Sprintf(`AB%02d3 ("AB") → 1%d AB SA [ACTIVE] (equal name)`, i, i))
		made = append(made, fmt.Sprintf(`CD%02d3 ("CD")`, i))
	}
	r := &Report{NameLinks: links, MadeUp: made}
	var b strings.Builder
	r.WriteSummary(&b, &engine.Universe{})
	out := b.String()
	for _, want := range []string{"  7 securities linked by name alone", `    AB043 ("AB")`, "    ... 2 more (-v lists them)\n",
		`CD043 ("CD"); ... 2 more (-v lists them)`} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "AB053") || strings.Contains(out, "CD053") {
		t.Errorf("summary lists the 6th entry without -v:\n%s", out)
	}
	r.Verbose = true
	b.Reset()
	r.WriteSummary(&b, &engine.Universe{})
	if out := b.String(); !strings.Contains(out, `    AB063 ("AB")`) || !strings.Contains(out, `CD063 ("CD")`) || strings.Contains(out, "more (-v") {
		t.Errorf("verbose summary:\n%s", out)
	}
}
