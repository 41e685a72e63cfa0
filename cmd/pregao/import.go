package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// listFlag is a repeatable flag; each value may hold several
// comma-separated paths, directories or glob patterns.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// importConfig is one run of pregao import: runImport parses its flags
// into it, pregao update fills it itself (run).
type importConfig struct {
	Out         string          // bundle folder to write
	Compression string          // bundle file compression: zstd, gzip or none
	Force       bool            // replace Out even when it holds files that are not a bundle's (deleting them)
	Verbose     bool            // the summary's lists whole (assemble.Report.Verbose)
	Assemble    assemble.Config // the inputs and how to date them
	// SessionLogs are live session logs (files, or folders of
	// session-YYYY-MM-DD.log files: serve's --live-dir) whose 1-minute
	// bars become the intraday history of their sessions up to the as-of
	// day (live.AddIntraday).
	SessionLogs []string
	// Live.Stream, a NATS cluster's nats:// URLs (comma-separated),
	// takes the snapshot's position in the live stream from the stream
	// itself (session.PositionInStream) rather than from the session
	// logs' copies; its credentials and TLS files reach a secured
	// cluster.
	Live session.Config
}

// forceUsage is the help text of the --force flag of the commands that
// write a bundle folder.
const forceUsage = "replace the bundle folder even when it holds files that are not a bundle's, deleting them (default: refuse, naming them)"

// forceHint adds to a refusal of bundle.Write (a *bundle.ForeignError)
// what the user can do about it.
func forceHint(err error) error {
	var fe *bundle.ForeignError
	if errors.As(err, &fe) {
		return fmt.Errorf("%w (move them or write elsewhere; --force replaces the folder and deletes them)", err)
	}
	return err
}

const importUsage = `usage: pregao import --out BUNDLE_DIR [--force] [inputs...]

Turns official B3, CVM and Banco Central files into a source bundle (then: pregao build --from BUNDLE_DIR).
An existing BUNDLE_DIR is replaced whole; one holding anything but a bundle's
files (and README, LICENSE, NOTICE, PROVENANCE files, kept) is refused unless --force.
Every input flag may be repeated and takes comma-separated files, directories
(searched recursively for files of that kind) or glob patterns. Files may be
compressed (.zst, .gz); a missing name also finds NAME.zst or NAME.gz.
`

// runImport implements "pregao import": it parses the flags into an
// importConfig and runs it.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := importConfig{Assemble: assemble.DefaultConfig()}
	cfg := &f.Assemble
	var realData, asOf, retrieved string
	fl := flag.NewFlagSet("import", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, importUsage)
		fl.PrintDefaults()
	}
	fl.StringVar(&f.Out, "out", "", "bundle directory to write (required)")
	fl.StringVar(&f.Compression, "compression", bundle.CompressZstd, "bundle file compression: zstd, gzip or none")
	fl.BoolVar(&f.Force, "force", false, forceUsage)
	fl.BoolVar(&f.Verbose, "v", false, "write the summary's lists whole (securities linked by name, unlinked, on made-up issuers); by default each shows its first 5")
	fl.Var((*listFlag)(&cfg.Cotahist), "cotahist", "B3 COTAHIST files (.TXT or .ZIP; daily, monthly or annual)")
	fl.StringVar(&cfg.Cad, "cad", "", "CVM company registry cad_cia_aberta.csv")
	fl.Var((*listFlag)(&cfg.FCA), "fca", "CVM FCA: fca_cia_aberta_YYYY.zip archives or their valor_mobiliario (ticker to company map), geral (website, description, founding date) and endereco (address) tables")
	fl.Var((*listFlag)(&cfg.DFP), "dfp", "CVM DFP dfp_cia_aberta_YYYY.zip or its CSV tables")
	fl.Var((*listFlag)(&cfg.ITR), "itr", "CVM ITR itr_cia_aberta_YYYY.zip or its CSV tables")
	fl.Var((*listFlag)(&cfg.FII), "fii", "CVM FII monthly reports inf_mensal_fii_* (CSV, ZIP or a directory)")
	fl.Var((*listFlag)(&cfg.Index), "index", "index portfolios: SYMBOLDia_dd-mm-yy.csv, GetStockIndex JSON, or SYMBOL=GetTheoricalPortfolio.json")
	fl.Var((*listFlag)(&cfg.Cash), "cash-dividends", "SYMBOL=GetListedCashDividends.json (the response names no company)")
	fl.Var((*listFlag)(&cfg.Supplement), "supplement", "GetListedSupplementCompany.json (share counts, payment dates, stock dividends)")
	fl.Var((*listFlag)(&cfg.Details), "details", "GetDetailsCompany.json (company CNPJ and tickers)")
	fl.Var((*listFlag)(&cfg.Instruments), "instruments", "B3 listed-instruments files: InstrumentsConsolidatedFile_YYYYMMDD.csv or the daily bulletin's InstrumentsEquities export (each ticker's ISIN and its issuer's legal name: linking evidence)")
	fl.Var((*listFlag)(&cfg.Listings), "listings", "ETF and FII listing exports (ETFs listados, fundosListados)")
	fl.Var((*listFlag)(&cfg.BCB), "bcb", "Banco Central files, the macro series: SGS answers (JSON or CSV) as SERIES=path (SELIC=, IPCA=, CDI= or the SGS code: 432=, 433=, 4389=) or under a path holding bcdata.sgs.CODE (pregao fetch's), and PTAX closing-rate files YYYYMMDD.csv (every currency)")
	fl.Var((*listFlag)(&f.SessionLogs), "session-log", "live session logs, or folders of them (serve's --live-dir): their 1-minute bars become the intraday history of their sessions up to the as-of day")
	f.Live.AddFlags(fl, session.RoleImport)
	fl.StringVar(&realData, "real-testdata", "", "import every sample file of the project's testdata/real folder at this path (implies --lenient)")
	fl.BoolVar(&cfg.Lenient, "lenient", false, "skip and count malformed rows and COTAHIST trailer mismatches instead of failing")
	fl.BoolVar(&cfg.OddLot, "odd-lot", false, "also import COTAHIST's odd-lot market (TPMERC 020, tickers ending in F)")
	fl.Func("boards", "keep exactly these COTAHIST cash-market boards, comma-separated BDI codes (default: 02,05,07,08,12,13,14 and, on any other board, the shares, units, BDRs and fund quotas its ISIN names)", func(v string) error {
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 || n > 99 {
				return fmt.Errorf("%q: want BDI codes 01 to 99, comma-separated", f)
			}
			cfg.Boards = append(cfg.Boards, n)
		}
		return nil
	})
	fl.StringVar(&asOf, "as-of", "", "the data's date, YYYY-MM-DD (default: the last COTAHIST session)")
	fl.StringVar(&retrieved, "retrieved", "", "retrieval time stamped on reports, RFC 3339 (default: the as-of time, for reproducible output)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("import: unexpected argument %q", fl.Arg(0))
	}
	if realData != "" {
		if err := realTestdataInputs(realData, cfg); err != nil {
			return fmt.Errorf("import: --real-testdata: %w", err)
		}
	}
	if f.Out == "" {
		fl.Usage()
		return errors.New("import: --out is required")
	}
	if err := f.Live.CheckImport(); err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if asOf != "" {
		d, err := engine.ParseDate(asOf)
		if err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
		cfg.AsOf = d
	}
	if retrieved != "" {
		t, err := time.Parse(time.RFC3339, retrieved)
		if err != nil {
			return fmt.Errorf("--retrieved: %w", err)
		}
		cfg.Retrieved = t
	}
	return f.run(ctx, stdout, stderr)
}

// run reads whatever official files c.Assemble names, joins them into one
// engine.Universe (assemble.Run, whose package doc states the joining
// rules) and writes it as a source bundle into c.Out (bundle.Write), then
// a summary of what was read, linked and skipped.
//
// When stdout is a terminal, one progress line, rewritten in place, shows
// the file being read: for COTAHIST its lines, for CVM tables (registry,
// FCA, DFP, ITR, FII, archive members included) its rows, with the rate
// per second, the MB of text read and the heap in use. Otherwise (a file,
// a pipe) only the closing summary is written.
//
// The end of ctx (a signal) stops it between files and while it writes
// the bundle, whose folder is then left as it was (see untilDone).
func (c importConfig) run(ctx context.Context, stdout, stderr io.Writer) error {
	wopt := bundle.WriteOptions{Compression: c.Compression, Force: c.Force}
	if err := bundle.CheckDir(c.Out, wopt); err != nil {
		return forceHint(err) // before the import's minutes, not after
	}
	var prog assemble.Progress
	if isTerminal(stdout) {
		prog = progressTo(stdout)
	}
	var (
		u        *engine.Universe
		rep      *assemble.Report
		intraday *live.IntradayReport
		posWhy   string // why the bundle records no stream position
	)
	err := untilDone(ctx, "import", "no bundle written, "+c.Out+" is as it was", stopGrace, stderr, func(ctx context.Context) (err error) {
		if u, rep, err = assemble.Run(ctx, c.Assemble, prog); err != nil {
			return err
		}
		if len(c.SessionLogs) > 0 {
			ir, err := live.AddIntraday(u, c.SessionLogs, engine.DateOf(u.Meta.AsOf))
			if err != nil {
				return fmt.Errorf("--session-log: %w", err)
			}
			intraday = &ir
			u.Meta.Stream, posWhy = session.PositionFromLogs(u, &ir)
		}
		if c.Live.Stream != "" {
			pctx, cancel := context.WithTimeout(ctx, streamPositionTimeout)
			u.Meta.Stream, posWhy = session.PositionInStream(pctx, c.Live, currentBuild().Version, u)
			cancel()
		}
		if prog != nil {
			fmt.Fprint(stdout, "\r\033[K")
		}
		bprog, stop := startMeter(stdout, "import")
		defer stop()
		if bprog != nil {
			wopt.Meter = bprog
		}
		return forceHint(bundle.WriteContext(ctx, c.Out, u, wopt))
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote bundle %s (as of %s)\n", c.Out, u.Meta.AsOf.Format(time.RFC3339))
	rep.Verbose = c.Verbose
	rep.WriteSummary(stdout, u)
	if ir := intraday; ir != nil {
		fmt.Fprintf(stdout, "session logs: %d 1-minute bars of %d sessions %v", ir.Bars, len(ir.Sessions), ir.Sessions)
		if len(ir.Later) > 0 {
			fmt.Fprintf(stdout, "; sessions after the as-of day left out %v", ir.Later)
		}
		if ir.Unknown > 0 {
			fmt.Fprintf(stdout, "; %d bars of tickers without a security left out", ir.Unknown)
		}
		if ir.Cut > 0 {
			fmt.Fprintf(stdout, "; %d bytes of torn log tails left out", ir.Cut)
		}
		if ir.Damaged > 0 {
			fmt.Fprintf(stdout, "; %d damaged records (%d bytes) left out", ir.Damaged, ir.DamagedBytes)
		}
		fmt.Fprintln(stdout)
	}
	if len(c.SessionLogs) > 0 || c.Live.Stream != "" {
		if p := u.Meta.Stream; p.Known() {
			fmt.Fprintf(stdout, "stream position: %s\n", p.String())
		} else {
			fmt.Fprintf(stdout, "stream position: none (%s): a replica looks its last session up in the stream\n", posWhy)
		}
	}
	return nil
}

// streamPositionTimeout bounds import's questions to the live stream
// (session.PositionInStream).
var streamPositionTimeout = 15 * time.Second

// realTestdataInputs adds to cfg the sample files of the project's
// testdata/real folder (dir): every complete COTAHIST day of 2021-2022
// (not the edited extract whose trailer does not match, nor B3's 2003
// demo file, whose lone session 18 years earlier would distort
// variations), the registry, DFP tables, FII reports, index portfolios,
// AMBEV's listed-company responses, the fund listings and the Banco
// Central's SGS answers (SELIC, IPCA) and PTAX closing rates. Folders
// that are absent are left out. One listing export holds a malformed code,
// hence it sets Lenient.
func realTestdataInputs(dir string, cfg *assemble.Config) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	n := 0
	// add appends rel to list, prefixed "SYMBOL=" unless sym is "".
	addAs := func(list *[]string, sym, rel string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if _, err := os.Stat(p); err != nil {
			return
		}
		if sym != "" {
			p = sym + "=" + p
		}
		*list = append(*list, p)
		n++
	}
	add := func(list *[]string, rel string) { addAs(list, "", rel) }
	add(&cfg.Cotahist, "b3-cotahist/pedrosampaiomatias__Project-Ibovespa")
	add(&cfg.Cotahist, "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist")
	var cad []string
	add(&cad, "cvm-cad/cad_cia_aberta.csv.zst")
	if len(cad) > 0 {
		cfg.Cad = cad[0]
	}
	add(&cfg.DFP, "cvm-dfp")
	add(&cfg.ITR, "cvm-itr")
	add(&cfg.FCA, "cvm-fca")
	add(&cfg.FII, "cvm-fii")
	add(&cfg.Index, "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")
	add(&cfg.Index, "b3-indexes/ManoelAugustoOliveira__proppaga/IBOVDia_30-12-24.csv.zst")
	add(&cfg.Index, "b3-indexes/igor64BR__calculadora-b3-ativos/SMLLDia_02-07-25.csv.zst")
	add(&cfg.Index, "b3-indexes/ropensci__rb3/GetStockIndex.json.zst")
	addAs(&cfg.Cash, "ABEV", "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")
	add(&cfg.Supplement, "b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst")
	add(&cfg.Details, "b3-proventos/ropensci__rb3/GetDetailsCompany.json.zst")
	add(&cfg.Listings, "b3-listings")
	addAs(&cfg.BCB, "SELIC", "bcb-sgs/JuanRocha01__ML-ETTJ26/432_01-01-2020_13-02-2026.json.zst")
	addAs(&cfg.BCB, "IPCA", "bcb-sgs/JuanRocha01__ML-ETTJ26/433_01-01-2010_31-12-2019.json.zst")
	addAs(&cfg.BCB, "IPCA", "bcb-sgs/JuanRocha01__ML-ETTJ26/433_01-01-2020_13-02-2026.json.zst")
	add(&cfg.BCB, "bcb-ptax")
	if n == 0 {
		return fmt.Errorf("%s: no sample file found", dir)
	}
	cfg.Lenient = true
	return nil
}
