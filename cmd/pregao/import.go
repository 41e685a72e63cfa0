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
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
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

// importFlags holds the import command's flags: the inputs go straight
// into the assembler's Config, the dates are parsed into it (config).
type importFlags struct {
	Out         string
	Compression string
	RealData    string
	AsOf        string
	Retrieved   string
	cfg         assemble.Config
}

const importUsage = `usage: pregao import --out BUNDLE_DIR [inputs...]

Turns official B3 and CVM files into a source bundle (then: pregao build --from BUNDLE_DIR).
Every input flag may be repeated and takes comma-separated files, directories
(searched recursively for files of that kind) or glob patterns. Files may be
compressed (.zst, .gz); a missing name also finds NAME.zst or NAME.gz.
`

// runImport implements "pregao import": it reads whatever official files
// are given, joins them into one engine.Universe (assemble.Run, whose
// package doc states the joining rules) and writes it as a source bundle
// (bundle.Write), then a summary of what was read, linked and skipped.
//
// When stdout is a terminal, one progress line, rewritten in place, shows
// the file being read: for COTAHIST its lines, for CVM tables (registry,
// FCA, DFP, ITR, FII, archive members included) its rows, with the rate
// per second, the MB of text read and the heap in use. Otherwise (a file,
// a pipe) only the closing summary is written.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := importFlags{cfg: assemble.DefaultConfig()}
	cfg := &f.cfg
	fl := flag.NewFlagSet("import", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, importUsage)
		fl.PrintDefaults()
	}
	fl.StringVar(&f.Out, "out", "", "bundle directory to write (required)")
	fl.StringVar(&f.Compression, "compression", bundle.CompressZstd, "bundle file compression: zstd, gzip or none")
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
	fl.Var((*listFlag)(&cfg.Listings), "listings", "ETF and FII listing exports (ETFs listados, fundosListados)")
	fl.StringVar(&f.RealData, "real-testdata", "", "import every sample file of the project's testdata/real folder at this path (implies --lenient)")
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
	fl.StringVar(&f.AsOf, "as-of", "", "the data's date, YYYY-MM-DD (default: the last COTAHIST session)")
	fl.StringVar(&f.Retrieved, "retrieved", "", "retrieval time stamped on reports, RFC 3339 (default: the as-of time, for reproducible output)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("import: unexpected argument %q", fl.Arg(0))
	}
	if f.RealData != "" {
		extra, err := realTestdataArgs(f.RealData)
		if err != nil {
			return fmt.Errorf("import: --real-testdata: %w", err)
		}
		if err := fl.Parse(extra); err != nil {
			return err
		}
	}
	if f.Out == "" {
		fl.Usage()
		return errors.New("import: --out is required")
	}
	if f.AsOf != "" {
		d, err := engine.ParseDate(f.AsOf)
		if err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
		cfg.AsOf = d
	}
	if f.Retrieved != "" {
		t, err := time.Parse(time.RFC3339, f.Retrieved)
		if err != nil {
			return fmt.Errorf("--retrieved: %w", err)
		}
		cfg.Retrieved = t
	}
	var prog assemble.Progress
	if isTerminal(stdout) {
		prog = progressTo(stdout)
	}
	u, rep, err := assemble.Run(ctx, *cfg, prog)
	if err != nil {
		return err
	}
	if prog != nil {
		fmt.Fprint(stdout, "\r\033[K")
	}
	wopt := bundle.WriteOptions{Compression: f.Compression}
	bprog, stop := startMeter(stdout, "import")
	if bprog != nil {
		wopt.Meter = bprog
	}
	err = bundle.Write(f.Out, u, wopt)
	stop()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote bundle %s (as of %s)\n", f.Out, u.Meta.AsOf.Format(time.RFC3339))
	rep.WriteSummary(stdout, u)
	return nil
}

// realTestdataArgs returns the import flags that take in the sample files
// of the project's testdata/real folder (dir): every complete COTAHIST day
// of 2021-2022 (not the edited extract whose trailer does not match, nor
// B3's 2003 demo file, whose lone session 18 years earlier would distort
// variations), the registry, DFP
// tables, FII reports, index portfolios, AMBEV's listed-company responses
// and the fund listings. Folders that are absent are left out. One listing
// export holds a malformed code, hence --lenient.
func realTestdataArgs(dir string) ([]string, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	var args []string
	// addAs adds rel as the value of flag, prefixed "SYMBOL=" unless sym
	// is "".
	addAs := func(flag, sym, rel string) {
		if _, err := os.Stat(p(rel)); err != nil {
			return
		}
		if sym != "" {
			args = append(args, flag, sym+"="+p(rel))
			return
		}
		args = append(args, flag, p(rel))
	}
	add := func(flag, rel string) { addAs(flag, "", rel) }
	add("--cotahist", "b3-cotahist/pedrosampaiomatias__Project-Ibovespa")
	add("--cotahist", "b3-cotahist/gbvbahia01__Spring-Batch-Cotahist")
	add("--cad", "cvm-cad/cad_cia_aberta.csv.zst")
	add("--dfp", "cvm-dfp")
	add("--itr", "cvm-itr")
	add("--fca", "cvm-fca")
	add("--fii", "cvm-fii")
	add("--index", "b3-indexes/pedrosampaiomatias__Project-Ibovespa/IBOVDia_26-03-21.csv.zst")
	add("--index", "b3-indexes/ManoelAugustoOliveira__proppaga/IBOVDia_30-12-24.csv.zst")
	add("--index", "b3-indexes/igor64BR__calculadora-b3-ativos/SMLLDia_02-07-25.csv.zst")
	add("--index", "b3-indexes/ropensci__rb3/GetStockIndex.json.zst")
	addAs("--cash-dividends", "ABEV", "b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")
	add("--supplement", "b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst")
	add("--details", "b3-proventos/ropensci__rb3/GetDetailsCompany.json.zst")
	add("--listings", "b3-listings")
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: no sample file found", dir)
	}
	return append(args, "--lenient"), nil
}
