package assemble

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/bcb"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/sectors"
)

// Report collects what an import read, linked and skipped. Run returns it
// complete; it is the caller's.
type Report struct {
	Quotes cotahist.Stats // COTAHIST files, lines and what was skipped
	CVM    cvm.Stats      // CVM tables (registry, FCA, DFP, ITR, FII)
	Macro  bcb.Stats      // the Banco Central's files (macro series)
	Notes  []string       // one sentence each, in the order met

	// Linked counts the securities linked to companies by each kind of
	// evidence (the by* constants of linking.go; [0]: none, an issuer made
	// from the quote file).
	Linked  [byCount]int
	Minimal int // issuers created from COTAHIST names

	BadTickers      []string // quoted tickers the bundle format does not accept, skipped
	UnquotedMembers int      // index members kept without a quoted ticker (not ranked)
	// UnknownShareLabels counts, by label as B3 writes it, the
	// stockDividends records of the supplements skipped because no
	// share-action type maps their label.
	UnknownShareLabels map[string]int
	// UnquotedLegs counts the legs of imported share actions whose asset
	// has no quotes (kept without a ticker; a received asset without a
	// price adds nothing to the original's adjustment).
	UnquotedLegs int
	// NameLinks lists every security linked to a company by name alone
	// (the weakest evidence: guessed), "TICKER ("NOMRES") → ID NAME
	// [STATUS] (how the name matched)".
	NameLinks []string
	// SharesKeptCVM counts the B3 supplements whose share counts equal the
	// CVM's latest capital composition of the company (which stays in
	// effect, with its treasury shares); SharesNoTreasury lists the
	// symbols whose share count at the as-of day is B3's, without treasury
	// shares (market cap and per-share values count them).
	SharesKeptCVM    int
	SharesNoTreasury []string
	// UnitsComposed counts the units whose composition (shares per unit)
	// the FCA gives; UnitsWithout lists the others, which get no per-share
	// ratios.
	UnitsComposed int
	UnitsWithout  []string
	// Instruments counts the rows of B3's instruments files read and passed
	// over; ListingUnmatched lists the shares whose issuer, as that file
	// names it, is no eligible registrant's legal name ("TICKER
	// ("CrpnNm")"): a company renamed since, or absent from the registry.
	Instruments      b3.InstrumentStats
	ListingUnmatched []string
	// Ambiguous lists the shares whose short name matches several
	// registrants alike: left on an issuer made from the quote file.
	Ambiguous []string
	// Verbose makes WriteSummary write its lists whole; else each shows
	// its first summaryListMax entries and says how many more -v lists,
	// so that the summary fits a screen.
	Verbose bool
	// MadeUp lists the shares and units left on an issuer made from the
	// quote file ("TICKER ("NOMRES")"): no file ties them to a registrant
	// (what stays guessed, never linked wrong).
	MadeUp []string

	// StatusesTakenBack counts the registry companies whose status in force
	// on the as-of day differs from the registry's current one (a status
	// that began later: cvm.CompaniesOn).
	StatusesTakenBack int

	// SectorsBy counts the companies placed on a sub-industry by each
	// source of evidence (sectors.None: unclassified).
	SectorsBy map[sectors.Source]int
	// UnmappedSectors lists the official classifications met that the
	// reviewed mapping lacks ("CVM SETOR_ATIV \"...\""), sorted.
	UnmappedSectors []string
}

func (r *Report) notef(format string, a ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, a...))
}

// WriteSummary writes to w the import summary of u, as assembled with r:
// entity counts, what each input held and skipped, how the securities
// were linked and the notes, one indented line each.
func (r *Report) WriteSummary(w io.Writer, u *engine.Universe) {
	fmt.Fprintf(w, "  companies %d, securities %d, daily series %d, indexes %d, reports %d, share counts %d, cash actions %d, share actions %d, fund reports %d\n",
		len(u.Companies), len(u.Securities), len(u.Daily), len(u.Indexes), len(u.Reports), len(u.Shares), len(u.CashActions), len(u.ShareActions), len(u.FundReports))
	if q := r.Quotes; q.Files > 0 {
		fmt.Fprintf(w, "  COTAHIST: %d files, %s lines, %s quote records, %s daily bars kept\n", q.Files, commas(q.Lines), commas(q.Records), commas(q.Kept))
		for _, b := range sortedKeys(q.KeptOtherBoard) {
			fmt.Fprintf(w, "    kept: %s rows on BDI %02d (%s) whose ISIN names a share, unit, BDR or fund quota\n", commas(q.KeptOtherBoard[b]), b, boardName(b))
		}
		for _, m := range sortedKeys(q.SkippedMarket) {
			fmt.Fprintf(w, "    skipped: %s %s rows (TPMERC %03d)\n", commas(q.SkippedMarket[m]), marketName(m), m)
		}
		for _, b := range sortedKeys(q.SkippedBoard) {
			fmt.Fprintf(w, "    skipped: %s cash-market rows on BDI %02d (%s)\n", commas(q.SkippedBoard[b]), b, boardName(b))
		}
		specs := make([]string, 0, len(q.SkippedSpec))
		for sp := range q.SkippedSpec {
			specs = append(specs, sp)
		}
		sort.Strings(specs)
		for _, sp := range specs {
			fmt.Fprintf(w, "    skipped: %s rows of ESPECI %q (not a share, unit, BDR or fund quota class Pregão serves)\n", commas(q.SkippedSpec[sp]), sp)
		}
		for _, c := range slices.Sorted(maps.Keys(q.SkippedCurrency)) {
			fmt.Fprintf(w, "    skipped: %s rows priced in %q (MODREF), not reais (R$): no BRL price\n", commas(q.SkippedCurrency[c]), c)
		}
		if q.Malformed > 0 {
			fmt.Fprintf(w, "    skipped: %s malformed records (--lenient)\n", commas(q.Malformed))
		}
		if q.SkippedMarket[20] > 0 {
			fmt.Fprintf(w, "    hint: --odd-lot also imports the odd-lot market (tickers ending in F)\n")
		}
		for _, p := range q.TrailerProblems {
			fmt.Fprintf(w, "  COTAHIST trailer: %s\n", p)
		}
	}
	if c := r.CVM; c.Files > 0 {
		fmt.Fprintf(w, "  CVM: %d files, %s rows\n", c.Files, commas(int64(c.Rows)))
		if c.Previous > 0 {
			fmt.Fprintf(w, "    not imported: %s statement rows of the comparison period (ORDEM_EXERC PENÚLTIMO: the previous period's figures each filing repeats; each period comes from its own filing)\n", commas(int64(c.Previous)))
		}
		if c.Ignored > 0 {
			fmt.Fprintf(w, "    not imported: %s rows of the statement of changes in equity (DMPL), which the API does not serve\n", commas(int64(c.Ignored)))
		}
		if c.Skipped > 0 {
			fmt.Fprintf(w, "    skipped: %s malformed rows (--lenient)\n", commas(int64(c.Skipped)))
		}
		if c.Unused > 0 {
			fmt.Fprintf(w, "    not read: %d zip members of no table Pregão imports\n", c.Unused)
		}
		status := map[string]int{}
		for i := range u.Companies {
			if st := u.Companies[i].Status; st != "" {
				status[st]++
			}
		}
		if len(status) > 0 {
			fmt.Fprintf(w, "    registry (cad_cia_aberta SIT): %s ACTIVE, %s CANCELLED (listed only with status=CANCELLED or ALL), %s SUSPENDED\n",
				commas(int64(status["ACTIVE"])), commas(int64(status["CANCELLED"])), commas(int64(status["SUSPENDED"])))
		}
		if r.StatusesTakenBack > 0 {
			fmt.Fprintf(w, "    registry newer than the as-of day: %s statuses that began later taken back to the one in force then (a company cancelled or suspended later is ACTIVE, one registered later has no status)\n",
				commas(int64(r.StatusesTakenBack)))
		}
		forms := map[string]int{}
		for i := range u.Reports {
			forms[u.Reports[i].Form.String()]++
		}
		if len(u.Reports) > 0 {
			fmt.Fprintf(w, "    statements: %s from DFP (annual filings), %s from ITR (quarterly filings)\n", commas(int64(forms["DFP"])), commas(int64(forms["ITR"])))
		}
	}
	r.writeMacro(w)
	l := r.Linked
	fmt.Fprintf(w, "  securities linked to companies by evidence: %d by the FCA ticker map, %d by ISIN (funds), %d by B3 company details, %d by B3's instruments file (the issuer's legal name), %d by the ISIN's issuer code; %d by name alone; %d on %d issuers made from COTAHIST names\n",
		l[byFCA], l[byISIN], l[byB3], l[byListing], l[byCode], l[byName], l[byNone], r.Minimal)
	if in := r.Instruments; in.Rows > 0 {
		fmt.Fprintf(w, "  B3 instruments: %s rows, %s of other markets or the odd lot, %s with a ticker the bundle format refuses, %s malformed (skipped)\n",
			commas(int64(in.Rows)), commas(int64(in.Other)), commas(int64(in.BadTicker)), commas(int64(in.Malformed)))
	}
	if len(r.ListingUnmatched) > 0 {
		fmt.Fprintf(w, "  %d shares whose issuer in B3's instruments file is no active registrant's legal name (renamed since, or not in the registry; the rules after it applied): %s\n",
			len(r.ListingUnmatched), strings.Join(first(r.ListingUnmatched, 30), "; "))
	}
	if len(r.NameLinks) > 0 {
		fmt.Fprintf(w, "  %d securities linked by name alone (guessed: no FCA, ISIN or B3 evidence; an active registrant on the exchange whose name matches; check them):\n", len(r.NameLinks))
		for _, l := range r.list(r.NameLinks) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if len(r.Ambiguous) > 0 {
		fmt.Fprintf(w, "  %d shares left unlinked, their short name matching several registrants alike (on an issuer made from COTAHIST):\n", len(r.Ambiguous))
		for _, l := range r.list(r.Ambiguous) {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if len(r.MadeUp) > 0 {
		fmt.Fprintf(w, "  %d shares and units on issuers made from COTAHIST names (no file ties them to a registrant: give the FCA, B3's details or instruments file): %s\n",
			len(r.MadeUp), strings.Join(r.list(r.MadeUp), "; "))
	}
	if r.SharesKeptCVM+len(r.SharesNoTreasury) > 0 {
		fmt.Fprintf(w, "  share counts of B3 supplements: %d equal to the CVM's latest capital composition (kept, with its treasury shares), %d newer, taken whole (B3 gives no treasury shares: market cap and per-share values include them): %s\n",
			r.SharesKeptCVM, len(r.SharesNoTreasury), strings.Join(first(r.SharesNoTreasury, 10), " "))
	}
	if r.UnitsComposed+len(r.UnitsWithout) > 0 {
		fmt.Fprintf(w, "  units: %d with their composition from the FCA (Composicao_BDR_Unit), %d without one (no per-share ratios; give the FCA): %s\n",
			r.UnitsComposed, len(r.UnitsWithout), strings.Join(first(r.UnitsWithout, 30), " "))
	}
	if n := r.SectorsBy; len(n) > 0 {
		fmt.Fprintf(w, "  sectors: %s companies by B3's classification, %s by CVM's activity sector (coarser), %s funds by FII segment, %s ETFs by listed geography, %s unclassified (no evidence)\n",
			commas(int64(n[sectors.B3])), commas(int64(n[sectors.CVM])), commas(int64(n[sectors.FII])), commas(int64(n[sectors.ETF])), commas(int64(n[sectors.None])))
	}
	if len(r.UnmappedSectors) > 0 {
		fmt.Fprintf(w, "  %d official classifications not in the sector mapping (their companies fall back to weaker evidence; add them to snapshot/ingest/sectors/mapping.tsv): %s\n",
			len(r.UnmappedSectors), strings.Join(first(r.UnmappedSectors, 10), ", "))
	}
	if len(r.BadTickers) > 0 {
		fmt.Fprintf(w, "  %d tickers skipped (not a bundle ticker): %s\n", len(r.BadTickers), strings.Join(first(r.BadTickers, 10), " "))
	}
	if r.UnquotedMembers > 0 {
		fmt.Fprintf(w, "  %d index members without quotes kept in their portfolios (ranked once they trade)\n", r.UnquotedMembers)
	}
	if len(r.UnknownShareLabels) > 0 {
		labels := make([]string, 0, len(r.UnknownShareLabels))
		total := 0
		for _, l := range slices.Sorted(maps.Keys(r.UnknownShareLabels)) {
			labels = append(labels, fmt.Sprintf("%d %q", r.UnknownShareLabels[l], l))
			total += r.UnknownShareLabels[l]
		}
		fmt.Fprintf(w, "  skipped: %d share events of B3 supplements under labels no share-action type maps: %s\n", total, strings.Join(labels, ", "))
	}
	if r.UnquotedLegs > 0 {
		fmt.Fprintf(w, "  %d share-action legs on assets without quotes kept without a ticker\n", r.UnquotedLegs)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// writeMacro writes the lines of the Banco Central's files: what they
// held, by series, and what was left out.
func (r *Report) writeMacro(w io.Writer) {
	m := r.Macro
	if m.SGSFiles+m.ClosingFiles == 0 {
		return
	}
	var series, fx []string
	for _, s := range bcb.Mapping {
		if n := m.Points[s.Ticker]; n > 0 {
			series = append(series, fmt.Sprintf("%s %s", s.Ticker, commas(int64(n))))
		}
	}
	for _, t := range slices.Sorted(maps.Keys(m.Points)) {
		if _, ok := bcb.SGSSeries(t); !ok && t != "USD" {
			fx = append(fx, t)
		}
	}
	if n := m.Points["USD"]; n > 0 {
		series = append(series, fmt.Sprintf("USD %s", commas(int64(n))))
	}
	line := fmt.Sprintf("  BCB: %d SGS answers, %d PTAX closing-rate files; points: %s", m.SGSFiles, m.ClosingFiles, strings.Join(series, ", "))
	if len(fx) > 0 {
		line += fmt.Sprintf("; %d other currencies (%s)", len(fx), strings.Join(first(fx, 12), " "))
	}
	fmt.Fprintln(w, line)
	var out []string
	if m.Later > 0 {
		out = append(out, fmt.Sprintf("%s points published after the as-of day", commas(int64(m.Later))))
	}
	if m.NotBusinessDay > 0 {
		out = append(out, fmt.Sprintf("%s Selic targets of weekends and holidays (one point per business day)", commas(int64(m.NotBusinessDay))))
	}
	if m.Empty > 0 {
		out = append(out, fmt.Sprintf("%d records without a value", m.Empty))
	}
	if m.Malformed > 0 {
		out = append(out, fmt.Sprintf("%d malformed records (--lenient)", m.Malformed))
	}
	if m.Revised > 0 {
		out = append(out, fmt.Sprintf("%d dates given again with another value (the later file's kept)", m.Revised))
	}
	if len(out) > 0 {
		fmt.Fprintf(w, "    left out: %s\n", strings.Join(out, "; "))
	}
}

// first returns the first n elements of s, then "..." if it had more.
// summaryListMax is how many entries of each list the summary shows
// without Verbose.
const summaryListMax = 5

// list returns s whole when r.Verbose, else its first summaryListMax
// entries and, when there are more, a last one saying how many -v adds.
func (r *Report) list(s []string) []string {
	if r.Verbose || len(s) <= summaryListMax {
		return s
	}
	return append(s[:summaryListMax:summaryListMax], fmt.Sprintf("... %d more (-v lists them)", len(s)-summaryListMax))
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// commas writes n with thousands separators: 2512034 -> "2,512,034".
func commas(n int64) string { return Commas(n) }

// Commas writes n with thousands separators: 2512034 -> "2,512,034".
func Commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func sortedKeys(m map[int]int64) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// marketName names a COTAHIST market type (TPMERC), as in the official
// layout.
func marketName(m int) string {
	switch m {
	case 10:
		return "cash-market"
	case 12:
		return "call-exercise"
	case 13:
		return "put-exercise"
	case 17:
		return "auction"
	case 20:
		return "odd-lot"
	case 30:
		return "term-market"
	case 50:
		return "forward-with-gain-retention"
	case 60:
		return "futures"
	case 70:
		return "call-option"
	case 80:
		return "put-option"
	}
	return "other-market"
}

// boardName names a COTAHIST board (CODBDI), as in the official layout.
func boardName(b int) string {
	switch b {
	case 2:
		return "standard lot"
	case 5:
		return "sanctioned by the exchange's rules"
	case 6:
		return "in concordata"
	case 7:
		return "extrajudicial recovery"
	case 8:
		return "judicial recovery"
	case 9:
		return "special temporary administration"
	case 10:
		return "rights and receipts"
	case 11:
		return "intervention"
	case 12:
		return "real-estate funds"
	case 13:
		return "agribusiness funds (FIAGRO)"
	case 14:
		return "investment certificates and funds"
	case 18:
		return "bonds"
	case 22:
		return "private subscription bonuses"
	case 26:
		return "public bonds and policies"
	case 46, 48, 49, 50, 51, 52, 53, 54:
		return "auction"
	case 56:
		return "court-ordered sales"
	case 58:
		return "others"
	case 60:
		return "share swaps"
	case 66, 68:
		return "debentures"
	case 96:
		return "odd lot"
	}
	return "a board not in the 2017 layout"
}
