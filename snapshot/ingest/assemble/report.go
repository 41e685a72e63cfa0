package assemble

import (
	"fmt"
	"io"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

// Report collects what an import read, linked and skipped. Run returns it
// complete; it is the caller's.
type Report struct {
	Quotes cotahist.Stats // COTAHIST files, lines and what was skipped
	CVM    cvm.Stats      // CVM tables (registry, FCA, DFP, ITR, FII)
	Notes  []string       // one sentence each, in the order met

	// Securities linked to companies, by rule (see the package doc).
	LinkedFCA, LinkedISIN, LinkedB3, LinkedName int
	Minimal                                     int // issuers created from COTAHIST names

	BadTickers     []string // quoted tickers the bundle format does not accept, skipped
	DroppedMembers int      // index members not among the quoted tickers
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
		fmt.Fprintf(w, "  COTAHIST: %d files, %d lines, %d quote records, %d bars kept; skipped: markets %v, boards %v, specifications %v; malformed %d\n",
			q.Files, q.Lines, q.Records, q.Kept, q.SkippedMarket, q.SkippedBoard, q.SkippedSpec, q.Malformed)
		for _, p := range q.TrailerProblems {
			fmt.Fprintf(w, "  COTAHIST trailer: %s\n", p)
		}
	}
	if r.CVM.Files > 0 {
		fmt.Fprintf(w, "  CVM: %d files, %d rows (%d malformed skipped, %d previous-period rows, %d ignored)\n", r.CVM.Files, r.CVM.Rows, r.CVM.Skipped, r.CVM.Previous, r.CVM.Ignored)
	}
	fmt.Fprintf(w, "  securities linked to companies: %d by FCA ticker map, %d by ISIN (funds), %d by B3 company details, %d by name; %d minimal issuers created from COTAHIST names\n",
		r.LinkedFCA, r.LinkedISIN, r.LinkedB3, r.LinkedName, r.Minimal)
	if len(r.BadTickers) > 0 {
		fmt.Fprintf(w, "  %d tickers skipped (not a bundle ticker): %s\n", len(r.BadTickers), strings.Join(first(r.BadTickers, 10), " "))
	}
	if r.DroppedMembers > 0 {
		fmt.Fprintf(w, "  %d index members dropped (ticker not in the quotes)\n", r.DroppedMembers)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

// first returns the first n elements of s, then "..." if it had more.
func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}
