package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
	"github.com/pregao/pregao/snapshot/ingest/fii"
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

// importConfig holds the import command's flags.
type importConfig struct {
	Out         string
	Compression string
	Cotahist    listFlag
	Cad         string
	FCA         listFlag
	DFP         listFlag
	ITR         listFlag
	FII         listFlag
	Index       listFlag
	Cash        listFlag
	Supplement  listFlag
	Details     listFlag
	Listings    listFlag
	Lenient     bool
	RealData    string
	AsOf        string
	Retrieved   string
}

const importUsage = `usage: pregao import --out BUNDLE_DIR [inputs...]

Turns official B3 and CVM files into a source bundle (then: pregao build --from BUNDLE_DIR).
Every input flag may be repeated and takes comma-separated files, directories
(searched recursively for files of that kind) or glob patterns. Files may be
compressed (.zst, .gz); a missing name also finds NAME.zst or NAME.gz.
`

// runImport implements "pregao import": it reads whatever official files
// are given, joins them into one engine.Universe and writes it as a source
// bundle (bundle.Write).
//
// When stdout is a terminal, one progress line, rewritten in place, shows
// the file being read: for COTAHIST its lines, for CVM tables (registry,
// FCA, DFP, ITR, FII, archive members included) its rows, with the rate
// per second, the MB of text read and the heap in use. Otherwise (a file,
// a pipe) only the closing summary is written.
//
// Joining quote tickers to issuers, first rule that applies:
//  1. the CVM FCA ticker map (--fca: valor_mobiliario, Codigo_Negociacao);
//  2. fund quotas (CI) by ISIN to the CVM FII monthly reports' funds;
//  3. B3 company details (--details: CNPJ and tickers of an issuer);
//  4. shares and units only: the COTAHIST short name (NOMRES) against the
//     registry's trading and legal names (upper-case ASCII letters and
//     digits): the one company whose name equals it, else equals it plus
//     "SA", else starts with it, else (5 characters or more) contains its
//     words as whole words (nameIndex.find); active companies win;
//     anything ambiguous is left unlinked;
//  5. otherwise a minimal issuer is created from the quote file: name
//     NOMRES, symbol the ticker's 4-character root, kind COMPANY, BDR (DR1,
//     DR2, DR3 sponsored; DRN not) or, for fund quotas, FII (board 12 or a
//     listed FII) or ETF, and a 10-digit synthetic company_id (syntheticID).
//
// A link is used only when the company's kind fits the security (BDR
// issuers have BDRs, funds have fund quotas, companies have shares).
// FCA geral rows (--fca) fill a company's website, description and founding
// date where empty; the head-office address of its latest FCA (endereco)
// replaces the registry's.
// Tickers the bundle format does not accept (odd-lot "F" and receipt
// suffixes such as BBFI11B) are skipped and listed. Companies without a
// sector hang from a four-level "unclassified" chain (UNCLASSIFIED...).
// Index members that are not among the quoted tickers are dropped and
// counted; per index symbol the latest portfolio dated on or before the
// last COTAHIST session wins (a weighted one over a membership list of the
// same day), else the latest one. The as-of time is 21:00 UTC (18:00 in
// São Paulo) of the latest day the data speaks of (the last COTAHIST
// session, a report's reference date, a fund report's month end) unless
// --as-of says otherwise, and stamps the retrieval time of CVM data unless
// --retrieved does, so the same inputs give the same bundle. B3's listed-company responses carry no
// date: the share counts of --supplement are dated the as-of day, and a
// GetTheoricalPortfolio response (--index SYMBOL=FILE) is dated as of too.
// FII monthly money and rates keep their sign as filed (negative dividend
// yields, returns, net assets and total assets are real data); a negative
// share or investor count, which the bundle format rejects, is imported as
// missing and counted.
func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg importConfig
	fl := flag.NewFlagSet("import", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, importUsage)
		fl.PrintDefaults()
	}
	fl.StringVar(&cfg.Out, "out", "", "bundle directory to write (required)")
	fl.StringVar(&cfg.Compression, "compression", bundle.CompressZstd, "bundle file compression: zstd, gzip or none")
	fl.Var(&cfg.Cotahist, "cotahist", "B3 COTAHIST files (.TXT or .ZIP; daily, monthly or annual)")
	fl.StringVar(&cfg.Cad, "cad", "", "CVM company registry cad_cia_aberta.csv")
	fl.Var(&cfg.FCA, "fca", "CVM FCA: fca_cia_aberta_YYYY.zip archives or their valor_mobiliario (ticker to company map), geral (website, description, founding date) and endereco (address) tables")
	fl.Var(&cfg.DFP, "dfp", "CVM DFP dfp_cia_aberta_YYYY.zip or its CSV tables")
	fl.Var(&cfg.ITR, "itr", "CVM ITR itr_cia_aberta_YYYY.zip or its CSV tables")
	fl.Var(&cfg.FII, "fii", "CVM FII monthly reports inf_mensal_fii_* (CSV, ZIP or a directory)")
	fl.Var(&cfg.Index, "index", "index portfolios: SYMBOLDia_dd-mm-yy.csv, GetStockIndex JSON, or SYMBOL=GetTheoricalPortfolio.json")
	fl.Var(&cfg.Cash, "cash-dividends", "SYMBOL=GetListedCashDividends.json (the response names no company)")
	fl.Var(&cfg.Supplement, "supplement", "GetListedSupplementCompany.json (share counts, payment dates, stock dividends)")
	fl.Var(&cfg.Details, "details", "GetDetailsCompany.json (company CNPJ and tickers)")
	fl.Var(&cfg.Listings, "listings", "ETF and FII listing exports (ETFs listados, fundosListados)")
	fl.StringVar(&cfg.RealData, "real-testdata", "", "import every sample file of the project's testdata/real folder at this path (implies --lenient)")
	fl.BoolVar(&cfg.Lenient, "lenient", false, "skip and count malformed rows and COTAHIST trailer mismatches instead of failing")
	fl.StringVar(&cfg.AsOf, "as-of", "", "the data's date, YYYY-MM-DD (default: the last COTAHIST session)")
	fl.StringVar(&cfg.Retrieved, "retrieved", "", "retrieval time stamped on reports, RFC 3339 (default: the as-of time, for reproducible output)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("import: unexpected argument %q", fl.Arg(0))
	}
	if cfg.RealData != "" {
		extra, err := realTestdataArgs(cfg.RealData)
		if err != nil {
			return fmt.Errorf("import: --real-testdata: %w", err)
		}
		if err := fl.Parse(extra); err != nil {
			return err
		}
	}
	if cfg.Out == "" {
		fl.Usage()
		return errors.New("import: --out is required")
	}
	var prog progressFunc
	if isTerminal(stdout) {
		prog = progressTo(stdout)
	}
	u, rep, err := importUniverse(ctx, &cfg, prog)
	if err != nil {
		return err
	}
	if prog != nil {
		fmt.Fprint(stdout, "\r\033[K")
	}
	if err := bundle.Write(cfg.Out, u, bundle.WriteOptions{Compression: cfg.Compression}); err != nil {
		return err
	}
	rep.print(stdout, u, cfg.Out)
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
	add := func(flag, rel string) {
		path := rel
		sym, r := symbolPath(rel)
		if sym != "" {
			path = r
		}
		if _, err := os.Stat(p(path)); err != nil {
			return
		}
		if sym != "" {
			args = append(args, flag, sym+"="+p(path))
			return
		}
		args = append(args, flag, p(path))
	}
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
	add("--cash-dividends", "ABEV=b3-proventos/ropensci__rb3/GetListedCashDividends.json.zst")
	add("--supplement", "b3-proventos/ropensci__rb3/GetListedSupplementCompany.json.zst")
	add("--details", "b3-proventos/ropensci__rb3/GetDetailsCompany.json.zst")
	add("--listings", "b3-listings")
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: no sample file found", dir)
	}
	return append(args, "--lenient"), nil
}

// progressFunc shows one progress line (nil: no progress output).
type progressFunc func(format string, a ...any)

// progressTo returns a progressFunc that rewrites the current line of the
// terminal w.
func progressTo(w io.Writer) progressFunc {
	return func(format string, a ...any) { fmt.Fprintf(w, "\r\033[K"+format, a...) }
}

// cvmProgress returns the cvm.Options.Progress hook that shows, through
// prog, the file being read by the CVM readers (kind names the input:
// "CVM DFP"...), its rows, rows per second since its header and the MB of
// its text read, in the COTAHIST line's format. It returns nil (no
// progress) when prog is nil. The hook is called every
// cvm.DefaultProgressEvery rows, so its clock and memory readings cost
// nothing per row.
func cvmProgress(prog progressFunc, kind string) func(file string, rows, bytes int64) {
	if prog == nil {
		return nil
	}
	var ms runtime.MemStats
	var start time.Time
	return func(file string, rows, n int64) {
		now := time.Now()
		if rows == 0 || start.IsZero() {
			start = now
		}
		runtime.ReadMemStats(&ms)
		rate := float64(rows) / max(now.Sub(start).Seconds(), 1e-3)
		prog("%s %s: %d rows (%.0f rows/s), %.1f MB read, heap %.0f MiB",
			kind, filepath.Base(file), rows, rate, float64(n)/1e6, float64(ms.HeapInuse)/(1<<20))
	}
}

// withProgress returns a.opt reporting to prog under kind (see
// cvmProgress).
func (a *assembler) withProgress(prog progressFunc, kind string) cvm.Options {
	opt := a.opt
	opt.Progress = cvmProgress(prog, kind)
	return opt
}

// isTerminal reports whether w is a character device (an interactive
// terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// importReport collects what an import read, linked and skipped.
type importReport struct {
	quotes      cotahist.Stats
	cvm         cvm.Stats
	notes       []string
	linkedFCA   int
	linkedISIN  int
	linkedName  int
	linkedB3    int
	minimal     int
	badTickers  []string
	dropMembers int
}

func (r *importReport) notef(format string, a ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, a...))
}

func (r *importReport) print(w io.Writer, u *engine.Universe, out string) {
	fmt.Fprintf(w, "wrote bundle %s (as of %s)\n", out, u.Meta.AsOf.Format(time.RFC3339))
	fmt.Fprintf(w, "  companies %d, securities %d, daily series %d, indexes %d, reports %d, share counts %d, cash actions %d, share actions %d, fund reports %d\n",
		len(u.Companies), len(u.Securities), len(u.Daily), len(u.Indexes), len(u.Reports), len(u.Shares), len(u.CashActions), len(u.ShareActions), len(u.FundReports))
	if q := r.quotes; q.Files > 0 {
		fmt.Fprintf(w, "  COTAHIST: %d files, %d lines, %d quote records, %d bars kept; skipped: markets %v, boards %v, specifications %v; malformed %d\n",
			q.Files, q.Lines, q.Records, q.Kept, q.SkippedMarket, q.SkippedBoard, q.SkippedSpec, q.Malformed)
		for _, p := range q.TrailerProblems {
			fmt.Fprintf(w, "  COTAHIST trailer: %s\n", p)
		}
	}
	if r.cvm.Files > 0 {
		fmt.Fprintf(w, "  CVM: %d files, %d rows (%d malformed skipped, %d previous-period rows, %d ignored)\n", r.cvm.Files, r.cvm.Rows, r.cvm.Skipped, r.cvm.Previous, r.cvm.Ignored)
	}
	fmt.Fprintf(w, "  securities linked to companies: %d by FCA ticker map, %d by ISIN (funds), %d by B3 company details, %d by name; %d minimal issuers created from COTAHIST names\n",
		r.linkedFCA, r.linkedISIN, r.linkedB3, r.linkedName, r.minimal)
	if len(r.badTickers) > 0 {
		fmt.Fprintf(w, "  %d tickers skipped (not a bundle ticker): %s\n", len(r.badTickers), strings.Join(first(r.badTickers, 10), " "))
	}
	if r.dropMembers > 0 {
		fmt.Fprintf(w, "  %d index members dropped (ticker not in the quotes)\n", r.dropMembers)
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// expand turns a flag's values into sorted file paths: files as given,
// directories searched recursively for files accepted by keep, glob
// patterns expanded.
func expand(vals []string, keep func(base string) bool) ([]string, error) {
	var out []string
	for _, v := range vals {
		if strings.ContainsAny(v, "*?[") {
			m, err := filepath.Glob(v)
			if err != nil {
				return nil, err
			}
			if len(m) == 0 {
				return nil, fmt.Errorf("%s: no file matches", v)
			}
			out = append(out, m...)
			continue
		}
		fi, err := os.Stat(v)
		if err != nil {
			if _, err2 := datafile.Open(v); err2 == nil {
				out = append(out, v) // v.zst or v.gz exists
				continue
			}
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, v)
			continue
		}
		var found []string
		err = filepath.WalkDir(v, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && keep(strings.ToLower(datafile.BaseName(p))) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no input file of this kind in the directory", v)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isCotahist(b string) bool {
	return strings.HasSuffix(b, ".txt") || strings.HasSuffix(b, ".zip")
}
func isDFP(b string) bool { return strings.HasPrefix(b, "dfp_cia_aberta") }
func isITR(b string) bool { return strings.HasPrefix(b, "itr_cia_aberta") }
func isFII(b string) bool { return strings.HasPrefix(b, "inf_mensal_fii") }
func isFCA(b string) bool {
	rest, ok := strings.CutPrefix(b, "fca_cia_aberta_")
	return ok && (strings.HasPrefix(rest, "valor_mobiliario") || strings.HasPrefix(rest, "geral") ||
		strings.HasPrefix(rest, "endereco") || strings.HasSuffix(rest, ".zip"))
}
func isIndex(b string) bool {
	return strings.HasSuffix(b, ".csv") && strings.Contains(b, "dia_") || strings.HasPrefix(b, "getstockindex") || strings.HasPrefix(b, "stockindexinfo")
}
func isListing(b string) bool { return strings.HasSuffix(b, ".csv") }
func isJSON(b string) bool    { return strings.HasSuffix(b, ".json") }

// symbolPath splits "SYMBOL=path"; symbol is "" when absent.
func symbolPath(v string) (symbol, path string) {
	if i := strings.IndexByte(v, '='); i > 0 && !strings.ContainsAny(v[:i], `/\.`) {
		return strings.ToUpper(v[:i]), v[i+1:]
	}
	return "", v
}

// plainName is path without its compression suffix: the official name the
// CVM readers classify files by.
func plainName(path string) string {
	return filepath.Join(filepath.Dir(path), datafile.BaseName(path))
}

// assembler builds a Universe from the inputs.
type assembler struct {
	cfg         *importConfig
	rep         *importReport
	opt         cvm.Options
	asOf        engine.Date
	lastSession engine.Date // the last COTAHIST session (NoDate: no quotes)
	quotes      cotahist.Result
	companies   map[string]*engine.Company
	sectors     []engine.Sector
	tickerCo    map[string]string // FCA: ticker -> company
	fcaSecs     map[string]engine.Security
	fcaLists    []cvm.Listing
	fcaGeneral  []cvm.GeneralRow  // FCA geral: website, description, founding date
	fcaAddr     []cvm.AddressRow  // FCA endereco: head-office addresses
	isinFund    map[string]string // ISIN -> fund company
	details     []*b3.Details
	etfSyms     map[string]bool
	fiiCodes    map[string]bool
	u           engine.Universe
}

// importUniverse reads every input of cfg into a Universe.
func importUniverse(ctx context.Context, cfg *importConfig, prog progressFunc) (*engine.Universe, *importReport, error) {
	a := &assembler{cfg: cfg, rep: &importReport{}, companies: map[string]*engine.Company{}, isinFund: map[string]string{},
		etfSyms: map[string]bool{}, fiiCodes: map[string]bool{}, asOf: engine.NoDate, lastSession: engine.NoDate}
	a.opt = cvm.Options{Lenient: cfg.Lenient, Stats: &a.rep.cvm}
	steps := []func(context.Context, progressFunc) error{
		a.readQuotes, a.readDates, a.readCad, a.readFCA, a.readDetails, a.readListings, a.readFII,
		a.linkSecurities, a.readReports, a.settleAsOf, a.readIndexes, a.readCash, a.finish,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := step(ctx, prog); err != nil {
			return nil, nil, err
		}
	}
	return &a.u, a.rep, nil
}

func (a *assembler) readQuotes(ctx context.Context, prog progressFunc) error {
	files, err := expand(a.cfg.Cotahist, isCotahist)
	if err != nil {
		return fmt.Errorf("--cotahist: %w", err)
	}
	opt := cotahist.Options{Lenient: a.cfg.Lenient}
	if prog != nil {
		var ms runtime.MemStats
		opt.Progress = func(p cotahist.Progress) {
			runtime.ReadMemStats(&ms)
			rate := float64(p.Lines) / max(p.Elapsed.Seconds(), 1e-3)
			prog("COTAHIST %s: %d lines (%.0f lines/s), %.1f MB read, %d bars, heap %.0f MiB",
				filepath.Base(p.File), p.Lines, rate, float64(p.Bytes)/1e6, p.Kept, float64(ms.HeapInuse)/(1<<20))
		}
	}
	im := cotahist.NewImporter(opt)
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := im.ImportFile(f); err != nil {
			return err
		}
	}
	a.quotes = im.Result()
	a.rep.quotes = a.quotes.Stats
	return nil
}

// readDates fixes as-of (provisionally: see settleAsOf) and the retrieval
// time.
func (a *assembler) readDates(context.Context, progressFunc) error {
	for _, s := range a.quotes.Securities {
		if !a.lastSession.Valid() || s.Last > a.lastSession {
			a.lastSession = s.Last
		}
	}
	if a.cfg.AsOf != "" {
		d, err := engine.ParseDate(a.cfg.AsOf)
		if err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
		a.asOf = d
	} else {
		for _, s := range a.quotes.Securities {
			if !a.asOf.Valid() || s.Last > a.asOf {
				a.asOf = s.Last
			}
		}
		if !a.asOf.Valid() {
			return errors.New("import: --as-of is required when no COTAHIST quotes are given")
		}
	}
	// The as-of instant is the end of that session: 18:00 in São Paulo
	// (UTC-3), 21:00 UTC.
	a.u.Meta.AsOf = a.asOf.Time().Add(21 * time.Hour)
	a.opt.Retrieved = a.u.Meta.AsOf
	if a.cfg.Retrieved != "" {
		t, err := time.Parse(time.RFC3339, a.cfg.Retrieved)
		if err != nil {
			return fmt.Errorf("--retrieved: %w", err)
		}
		a.opt.Retrieved = t.UTC()
	}
	return nil
}

// settleAsOf moves the as-of day, unless --as-of is given, to the latest
// day the imported data speaks of: the last COTAHIST session, a report's
// reference date or the last day of a fund report's month (a snapshot of
// 2023 reports is not "as of" an earlier quote day). Unless --retrieved is
// given, the retrieval stamps of what was read so far move with it.
func (a *assembler) settleAsOf(context.Context, progressFunc) error {
	if a.cfg.AsOf != "" {
		return nil
	}
	d := a.asOf
	for i := range a.u.Reports {
		if r := a.u.Reports[i].ReferenceDate; r.Valid() && r > d {
			d = r
		}
	}
	for i := range a.u.FundReports {
		if r := a.u.FundReports[i].ReferenceDate; r.Valid() {
			if end := engine.DateOf(r.Time().AddDate(0, 1, -1)); end > d {
				d = end
			}
		}
	}
	if d == a.asOf {
		return nil
	}
	old := a.u.Meta.AsOf
	a.asOf = d
	a.u.Meta.AsOf = d.Time().Add(21 * time.Hour)
	a.rep.notef("as of %s, the latest reference date of the reports (last COTAHIST session %s)", d, a.lastSession)
	if a.cfg.Retrieved != "" {
		return nil
	}
	a.opt.Retrieved = a.u.Meta.AsOf
	restamp := func(t *time.Time) {
		if t.Equal(old) {
			*t = a.u.Meta.AsOf
		}
	}
	for i := range a.u.Reports {
		r := &a.u.Reports[i]
		restamp(&r.RetrievalDate)
		for k := range r.Sources {
			restamp(&r.Sources[k].RetrievedAt)
		}
	}
	for i := range a.u.FundReports {
		r := &a.u.FundReports[i]
		restamp(&r.RetrievalDate)
		for k := range r.Sources {
			restamp(&r.Sources[k].RetrievedAt)
		}
	}
	return nil
}

func (a *assembler) addCompany(c engine.Company) *engine.Company {
	if old, ok := a.companies[c.ID]; ok {
		return old
	}
	p := &c
	a.companies[c.ID] = p
	return p
}

func (a *assembler) readCad(_ context.Context, prog progressFunc) error {
	if a.cfg.Cad == "" {
		return nil
	}
	rc, err := datafile.Open(a.cfg.Cad)
	if err != nil {
		return fmt.Errorf("--cad: %w", err)
	}
	defer rc.Close()
	cos, secs, err := cvm.ReadCad(rc, plainName(a.cfg.Cad), a.withProgress(prog, "CVM registry"))
	if err != nil {
		return err
	}
	for _, c := range cos {
		a.addCompany(c)
	}
	a.sectors = secs
	return nil
}

func (a *assembler) readFCA(ctx context.Context, prog progressFunc) error {
	files, err := expand(a.cfg.FCA, isFCA)
	if err != nil {
		return fmt.Errorf("--fca: %w", err)
	}
	opt := a.withProgress(prog, "CVM FCA")
	var all []cvm.Listing
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		base := strings.ToLower(datafile.BaseName(f))
		if strings.HasSuffix(base, ".zip") {
			z, err := cvm.ReadFCAZip(f, opt)
			if err != nil {
				return err
			}
			all = append(all, z.Listings...)
			a.fcaGeneral = append(a.fcaGeneral, z.General...)
			a.fcaAddr = append(a.fcaAddr, z.Addresses...)
			continue
		}
		rc, err := datafile.Open(f)
		if err != nil {
			return err
		}
		switch rest := strings.TrimPrefix(base, "fca_cia_aberta_"); {
		case strings.HasPrefix(rest, "geral"):
			var gs []cvm.GeneralRow
			gs, err = cvm.ReadFCAGeral(rc, plainName(f), opt)
			a.fcaGeneral = append(a.fcaGeneral, gs...)
		case strings.HasPrefix(rest, "endereco"):
			var as []cvm.AddressRow
			as, err = cvm.ReadEndereco(rc, plainName(f), opt)
			a.fcaAddr = append(a.fcaAddr, as...)
		default:
			var ls []cvm.Listing
			ls, err = cvm.ReadValorMobiliario(rc, plainName(f), opt)
			all = append(all, ls...)
		}
		rc.Close()
		if err != nil {
			return err
		}
	}
	if len(all) == 0 {
		return nil
	}
	a.fcaLists = cvm.CurrentListings(all)
	a.tickerCo = cvm.TickerMap(a.fcaLists)
	a.fcaSecs = map[string]engine.Security{}
	for _, s := range cvm.Securities(a.fcaLists) {
		a.fcaSecs[s.Ticker] = s
	}
	return nil
}

func (a *assembler) readDetails(context.Context, progressFunc) error {
	files, err := expand(a.cfg.Details, isJSON)
	if err != nil {
		return fmt.Errorf("--details: %w", err)
	}
	for _, f := range files {
		b, err := datafile.ReadFile(f)
		if err != nil {
			return err
		}
		d, err := b3.ReadDetails(b, f)
		if err != nil {
			return err
		}
		if d.CNPJ == "" {
			a.rep.notef("%s: no CNPJ, ignored", f)
			continue
		}
		a.details = append(a.details, d)
		if _, ok := a.companies[d.CNPJ]; !ok {
			a.addCompany(engine.Company{ID: d.CNPJ, CVMCode: d.CVMCode, Name: d.Name, TradingName: d.TradingName, Kind: engine.KindCompany,
				Website: d.Website, Employees: -1, FreeFloat: engine.Null, FoundingDate: engine.NoDate, IPODate: engine.NoDate, Status: d.Status})
		}
	}
	return nil
}

func (a *assembler) readListings(context.Context, progressFunc) error {
	files, err := expand(a.cfg.Listings, isListing)
	if err != nil {
		return fmt.Errorf("--listings: %w", err)
	}
	for _, f := range files {
		rc, err := datafile.Open(f)
		if err != nil {
			return err
		}
		ls, bad, err := b3.ReadListings(rc, f, a.cfg.Lenient)
		rc.Close()
		if err != nil {
			return err
		}
		if bad > 0 {
			a.rep.notef("%s: %d malformed codes skipped", f, bad)
		}
		// A fund list names real-estate funds (fundosListados, FII);
		// every other export lists ETFs.
		fiiList := strings.Contains(strings.ToLower(filepath.Base(f)), "fundo") || strings.Contains(strings.ToLower(filepath.Base(f)), "fii")
		for _, l := range ls {
			if fiiList {
				a.fiiCodes[l.Symbol()] = true
			} else {
				a.etfSyms[l.Symbol()] = true
			}
		}
	}
	return nil
}

func (a *assembler) readFII(_ context.Context, prog progressFunc) error {
	files, err := expand(a.cfg.FII, func(b string) bool { return isFII(b) })
	if err != nil {
		return fmt.Errorf("--fii: %w", err)
	}
	if len(files) == 0 {
		return nil
	}
	var in []fii.File
	for _, f := range files {
		f := f
		in = append(in, fii.File{Name: plainName(f), Open: func() (io.ReadCloser, error) { return datafile.Open(f) }})
	}
	m, err := fii.ReadMonthlyFiles(in, a.withProgress(prog, "CVM FII"))
	if err != nil {
		return err
	}
	for _, c := range m.Funds {
		a.addCompany(c)
	}
	for id, isin := range m.ISIN {
		a.isinFund[isin] = id
	}
	// Money and rates keep their sign as filed (negative yields, returns,
	// net and total assets are real); the bundle format takes counts >= 0
	// only, so a negative share or investor count is imported as missing,
	// and counted.
	neg := map[string]int{}
	for i := range m.Reports {
		r := &m.Reports[i]
		for _, f := range []struct {
			name string
			v    *engine.Num
		}{{"shares outstanding", &r.SharesOut}, {"investors", &r.Investors}} {
			if f.v.Valid() && *f.v < 0 {
				*f.v = engine.Null
				neg[f.name]++
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(neg)) {
		a.rep.notef("FII: %d monthly reports with a negative %s (as filed) imported as null", neg[k], k)
	}
	a.u.FundReports = m.Reports
	if m.Orphans > 0 {
		a.rep.notef("FII: %d complement rows without a general row", m.Orphans)
	}
	return nil
}

// kindOK reports whether a company of kind may issue a security of stock
// type st.
func kindOK(kind, st string) bool {
	switch kind {
	case engine.KindBDR:
		return st == engine.ClassBDR
	case engine.KindFII, engine.KindETF:
		return st == engine.ClassFundUnit
	}
	return st != engine.ClassBDR && st != engine.ClassFundUnit
}

// normName folds a name to upper-case ASCII letters and digits for matching
// ("Ambev S.A." -> "AMBEVSA").
func normName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 32)
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		case r > 127 && unicode.IsLetter(r):
			b.WriteRune(unicode.ToUpper(foldRune(r)))
		}
	}
	return b.String()
}

func foldRune(r rune) rune {
	switch unicode.ToLower(r) {
	case 'á', 'à', 'â', 'ã', 'ä':
		return 'a'
	case 'é', 'ê', 'è':
		return 'e'
	case 'í', 'ì':
		return 'i'
	case 'ó', 'ô', 'õ', 'ò':
		return 'o'
	case 'ú', 'ü', 'ù':
		return 'u'
	case 'ç':
		return 'c'
	}
	return r
}

// syntheticID is the company_id of an issuer known only from the quote
// files: "99" (shares), "98" (funds) or "97" (BDRs) followed by two digits
// per character of the 4-character root (0-9 -> 00-09, A-Z -> 10-35). It
// has 10 digits, so it never collides with a CNPJ (14) or a CVM code (<= 6).
func syntheticID(root, st string) string {
	prefix := "99"
	switch st {
	case engine.ClassFundUnit:
		prefix = "98"
	case engine.ClassBDR:
		prefix = "97"
	}
	b := []byte(prefix)
	for i := 0; i < 4 && i < len(root); i++ {
		c := root[i]
		v := 0
		if c >= '0' && c <= '9' {
			v = int(c - '0')
		} else if c >= 'A' && c <= 'Z' {
			v = int(c-'A') + 10
		}
		b = append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return string(b)
}

// nameIndex finds the one registry company whose trading or legal name
// matches a COTAHIST short name (NOMRES, 12 characters at most).
type nameIndex struct {
	keys  [][2]string // normalized trading name, legal name
	words [][]string  // each name's words, normalized (trading name's, then legal name's)
	ids   []string
	act   []bool
}

func newNameIndex(cos map[string]*engine.Company) *nameIndex {
	ix := &nameIndex{}
	ids := make([]string, 0, len(cos))
	for id, c := range cos {
		if c.Kind == engine.KindCompany {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := cos[id]
		ix.keys = append(ix.keys, [2]string{normName(c.TradingName), normName(c.Name)})
		ix.words = append(ix.words, append(nameWords(c.TradingName), nameWords(c.Name)...))
		ix.ids = append(ix.ids, id)
		ix.act = append(ix.act, c.Status == "ACTIVE")
	}
	return ix
}

// nameWords splits a name into normalized words ("Construtora Tenda
// S/A" -> CONSTRUTORA, TENDA, S, A).
func nameWords(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if n := normName(w); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// find returns, first rule that applies, the one company (active ones
// preferred) whose name (normalized):
//  1. equals short;
//  2. equals short followed by the corporate form "SA" ("RAIZEN" ->
//     "Raízen S.A.", not "Raízen Energia S.A.");
//  3. starts with short;
//  4. for a short name of 5 characters or more, has its words as a run of
//     whole words ("TENDA" -> "Construtora Tenda S/A"; "VIA" is too short
//     to tell "Via S.A." from "Via Brasil BR 163 Concessionária");
//
// else "" (nothing or ambiguous).
func (ix *nameIndex) find(short, root string) string {
	n := normName(short)
	if len(n) < 3 {
		return ""
	}
	pick := func(match func(k string) bool) string {
		return ix.pickBy(func(i int) bool { return match(ix.keys[i][0]) || match(ix.keys[i][1]) })
	}
	if id := pick(func(k string) bool { return k == n }); id != "" {
		return id
	}
	if id := pick(func(k string) bool { return k == n+"SA" }); id != "" {
		return id
	}
	if id := pick(func(k string) bool { return k != "" && strings.HasPrefix(k, n) }); id != "" {
		return id
	}
	sw := nameWords(short)
	if len(n) < 5 || len(sw) == 0 {
		return ""
	}
	return ix.pickBy(func(i int) bool { return hasRun(ix.words[i], sw) })
}

// hasRun reports whether run occurs in words as consecutive elements.
func hasRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// pickBy returns the one active company matching, else the one company
// matching when none is active, else "".
func (ix *nameIndex) pickBy(match func(i int) bool) string {
	var all, active []string
	for i := range ix.keys {
		if match(i) {
			all = append(all, ix.ids[i])
			if ix.act[i] {
				active = append(active, ix.ids[i])
			}
		}
	}
	switch {
	case len(active) == 1:
		return active[0]
	case len(active) == 0 && len(all) == 1:
		return all[0]
	}
	return ""
}

// linkSecurities turns the quote files' tickers into securities of
// companies, following the rules listed on runImport.
func (a *assembler) linkSecurities(context.Context, progressFunc) error {
	detailCo := map[string]string{} // ticker or symbol -> CNPJ
	for _, d := range a.details {
		detailCo[d.Symbol] = d.CNPJ
		for t := range d.Tickers {
			detailCo[t] = d.CNPJ
		}
	}
	names := newNameIndex(a.companies)
	rootCo := map[string]string{} // root -> company found by name (shares only)
	symbolUsed := map[string]string{}
	for _, c := range a.companies {
		if c.Symbol != "" {
			symbolUsed[c.Symbol] = c.ID
		}
	}
	ranks := liquidityRanks(a.quotes.Series)
	lastSession := engine.NoDate
	for _, q := range a.quotes.Securities {
		if !lastSession.Valid() || q.Last > lastSession {
			lastSession = q.Last
		}
	}
	for i, q := range a.quotes.Securities {
		if !bundle.ValidTicker(q.Ticker) {
			a.rep.badTickers = append(a.rep.badTickers, q.Ticker)
			continue
		}
		root := q.Ticker[:4]
		st := q.StockType
		var co string
		ok := func(id string) bool {
			c := a.companies[id]
			return c != nil && kindOK(c.Kind, st)
		}
		switch {
		case a.tickerCo[q.Ticker] != "" && ok(a.tickerCo[q.Ticker]):
			co = a.tickerCo[q.Ticker]
			a.rep.linkedFCA++
		case st == engine.ClassFundUnit && ok(a.isinFund[q.ISIN]):
			co = a.isinFund[q.ISIN]
			a.rep.linkedISIN++
		case ok(detailCo[q.Ticker]) || ok(detailCo[root]):
			co = detailCo[q.Ticker]
			if !ok(co) {
				co = detailCo[root]
			}
			a.rep.linkedB3++
		case st != engine.ClassFundUnit && st != engine.ClassBDR:
			id, seen := rootCo[root]
			if !seen {
				id = names.find(q.Name, root)
				rootCo[root] = id
			}
			if ok(id) {
				co = id
				a.rep.linkedName++
			}
		}
		if co == "" {
			co = syntheticID(root, st)
			if _, exists := a.companies[co]; !exists {
				kind := engine.KindCompany
				switch st {
				case engine.ClassBDR:
					kind = engine.KindBDR
				case engine.ClassFundUnit:
					kind = engine.KindETF
					if (q.BDI == 12 || a.fiiCodes[root]) && !a.etfSyms[root] {
						kind = engine.KindFII
					}
				}
				// Traded in the last session of the files: active; else unknown.
				status := ""
				if q.Last == lastSession {
					status = "ACTIVE"
				}
				a.addCompany(engine.Company{ID: co, Name: q.Name, TradingName: q.Name, Kind: kind, BDRSponsored: q.Sponsored,
					Employees: -1, FreeFloat: engine.Null, FoundingDate: engine.NoDate, IPODate: engine.NoDate, Status: status})
				a.rep.minimal++
			} else if q.Sponsored {
				a.companies[co].BDRSponsored = true
			}
		}
		c := a.companies[co]
		if c.Symbol == "" {
			if _, used := symbolUsed[root]; !used {
				c.Symbol = root
				symbolUsed[root] = co
			}
		}
		sec := engine.Security{Ticker: q.Ticker, CompanyID: co, ISIN: q.ISIN, StockType: st, Currency: "BRL", UnitFactor: engine.Null,
			ListedFrom: engine.NoDate, ListedTo: engine.NoDate, LiquidityRank: ranks[q.Ticker]}
		if f, ok := a.fcaSecs[q.Ticker]; ok {
			sec.ListedFrom, sec.ListedTo = f.ListedFrom, f.ListedTo
		}
		if len(sec.ISIN) != 12 {
			sec.ISIN = ""
		}
		a.u.Securities = append(a.u.Securities, sec)
		a.u.Daily = append(a.u.Daily, a.quotes.Series[i])
	}
	if len(a.fcaLists)+len(a.fcaGeneral)+len(a.fcaAddr) > 0 {
		cos := a.companyList()
		cvm.ApplyListings(cos, a.fcaLists)
		cvm.ApplyGeneral(cos, a.fcaGeneral)
		cvm.ApplyAddresses(cos, a.fcaAddr, true)
		for i := range cos {
			*a.companies[cos[i].ID] = cos[i]
		}
		a.uniqueSymbols()
	}
	a.quotes.Series = nil
	return nil
}

// uniqueSymbols clears a symbol claimed by a second company (the first by
// company_id keeps it).
func (a *assembler) uniqueSymbols() {
	seen := map[string]bool{}
	for _, c := range a.companyList() {
		if c.Symbol == "" {
			continue
		}
		if seen[c.Symbol] {
			a.companies[c.ID].Symbol = ""
			continue
		}
		seen[c.Symbol] = true
	}
}

func (a *assembler) companyList() []engine.Company {
	ids := make([]string, 0, len(a.companies))
	for id := range a.companies {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]engine.Company, len(ids))
	for i, id := range ids {
		out[i] = *a.companies[id]
	}
	return out
}

// liquidityRanks ranks tickers by BRL volume over the last 21 sessions of
// the data (1 = most traded); tickers without trades then are absent (0).
func liquidityRanks(series []engine.Series) map[string]int {
	days := map[engine.Date]bool{}
	for _, s := range series {
		for _, d := range s.Dates {
			days[d] = true
		}
	}
	all := make([]engine.Date, 0, len(days))
	for d := range days {
		all = append(all, d)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return nil
	}
	from := all[max(0, len(all)-21)]
	type tv struct {
		t string
		v float64
	}
	var vols []tv
	for _, s := range series {
		var v float64
		for j, d := range s.Dates {
			if d >= from && s.Volume[j].Valid() {
				v += float64(s.Volume[j])
			}
		}
		if v > 0 && bundle.ValidTicker(s.Ticker) {
			vols = append(vols, tv{s.Ticker, v})
		}
	}
	sort.Slice(vols, func(i, j int) bool {
		if vols[i].v != vols[j].v {
			return vols[i].v > vols[j].v
		}
		return vols[i].t < vols[j].t
	})
	out := make(map[string]int, len(vols))
	for i, x := range vols {
		out[x.t] = i + 1
	}
	return out
}

func (a *assembler) readReports(ctx context.Context, prog progressFunc) error {
	var docs []cvm.DocEntry
	for _, set := range []struct {
		flag, kind string
		vals       []string
		keep       func(string) bool
	}{{"--dfp", "CVM DFP", a.cfg.DFP, isDFP}, {"--itr", "CVM ITR", a.cfg.ITR, isITR}} {
		files, err := expand(set.vals, set.keep)
		if err != nil {
			return fmt.Errorf("%s: %w", set.flag, err)
		}
		opt := a.withProgress(prog, set.kind)
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if strings.EqualFold(filepath.Ext(f), ".zip") {
				fl, err := cvm.ReadStatementsZip(f, opt)
				if err != nil {
					return err
				}
				a.u.Reports = append(a.u.Reports, fl.Reports...)
				a.u.Shares = append(a.u.Shares, fl.Shares...)
				continue
			}
			name := plainName(f)
			info, err := cvm.ParseFileName(name)
			if err != nil {
				return err
			}
			rc, err := datafile.Open(f)
			if err != nil {
				return err
			}
			switch info.Kind {
			case cvm.KindStatement:
				var rs []engine.Report
				rs, err = cvm.ReadStatements(rc, name, opt)
				a.u.Reports = append(a.u.Reports, rs...)
			case cvm.KindCapital:
				var sh []engine.SharesPoint
				sh, err = cvm.ReadCapital(rc, name, opt)
				a.u.Shares = append(a.u.Shares, sh...)
			case cvm.KindIndex:
				var d []cvm.DocEntry
				d, err = cvm.ReadDocIndex(rc, name, opt)
				docs = append(docs, d...)
			default:
				a.rep.notef("%s: not imported (no model for this table)", f)
			}
			rc.Close()
			if err != nil {
				return err
			}
		}
	}
	if len(docs) > 0 {
		if n := cvm.AttachIndex(a.u.Reports, docs); n > 0 {
			a.rep.notef("%d reports have no filing-index entry (no publish date)", n)
		}
	}
	// Keep what refers to a known company.
	var drop int
	rs := a.u.Reports[:0]
	for _, r := range a.u.Reports {
		if c := a.companies[r.CompanyID]; c != nil {
			rs = append(rs, r)
		} else {
			drop++
		}
	}
	a.u.Reports = rs
	sh := a.u.Shares[:0]
	for _, s := range a.u.Shares {
		if a.companies[s.CompanyID] != nil {
			sh = append(sh, s)
		} else {
			drop++
		}
	}
	a.u.Shares = sh
	if drop > 0 {
		a.rep.notef("%d reports and share counts of companies absent from the registry were dropped (give --cad)", drop)
	}
	cvm.SortReports(a.u.Reports)
	return nil
}

// indexNames are the display names of the B3 indexes seen in the files.
var indexNames = map[string]string{
	"IBOV": "Ibovespa", "IBRA": "Índice Brasil Amplo", "IBXX": "Índice Brasil 100", "IBXL": "Índice Brasil 50",
	"SMLL": "Índice Small Cap", "MLCX": "Índice MidLarge Cap", "IDIV": "Índice Dividendos", "IFIX": "Índice de Fundos de Investimentos Imobiliários",
	"IFIL": "Índice de Fundos Imobiliários de Alta Liquidez", "BDRX": "Índice de BDRs Não Patrocinados", "UTIL": "Índice Utilidade Pública",
	"IEEX": "Índice de Energia Elétrica", "IFNC": "Índice Financeiro", "IMAT": "Índice de Materiais Básicos", "IMOB": "Índice Imobiliário",
	"INDX": "Índice do Setor Industrial", "ICON": "Índice de Consumo", "ISEE": "Índice de Sustentabilidade Empresarial",
	"ICO2": "Índice Carbono Eficiente", "IGCT": "Índice de Governança Corporativa Trade", "IGCX": "Índice de Ações com Governança Corporativa Diferenciada",
	"IGNM": "Índice de Governança Corporativa – Novo Mercado", "ITAG": "Índice de Ações com Tag Along Diferenciado",
	"IVBX": "Índice Valor", "GPTW": "Índice GPTW",
}

func (a *assembler) readIndexes(context.Context, progressFunc) error {
	type cand struct {
		x        engine.Index
		weighted bool
	}
	best := map[string]cand{}
	// A portfolio dated after the last session of the quotes cannot be
	// ranked with them: one dated on or before it wins over any later one.
	quoted := func(d engine.Date) bool { return !a.lastSession.Valid() || d <= a.lastSession }
	offer := func(x engine.Index, weighted bool) {
		old, ok := best[x.Symbol]
		switch {
		case !ok, quoted(x.AsOf) && !quoted(old.x.AsOf):
		case quoted(x.AsOf) != quoted(old.x.AsOf):
			return
		case x.AsOf > old.x.AsOf, x.AsOf == old.x.AsOf && weighted && !old.weighted:
		default:
			return
		}
		best[x.Symbol] = cand{x, weighted}
	}
	for _, v := range a.cfg.Index {
		sym, p := symbolPath(v)
		files, err := expand([]string{p}, func(b string) bool { return isIndex(b) })
		if err != nil {
			return fmt.Errorf("--index: %w", err)
		}
		for _, f := range files {
			b, err := datafile.ReadFile(f)
			if err != nil {
				return err
			}
			trim := strings.TrimLeft(string(b[:min(len(b), 64)]), " \t\r\n\xef\xbb\xbf")
			switch {
			case strings.HasPrefix(trim, "{") && strings.Contains(string(b), `"indexes"`):
				s, err := b3.ReadStockIndexJSON(b, f)
				if err != nil {
					return err
				}
				for _, x := range s.Indexes() {
					offer(x, false)
				}
			case strings.HasPrefix(trim, "{"):
				if sym == "" {
					return fmt.Errorf("--index %s: a portfolio response names no index: give SYMBOL=%s", v, p)
				}
				asOf := a.asOf
				pf, err := b3.ReadPortfolioJSON(b, f, sym, asOf)
				if err != nil {
					return err
				}
				offer(pf.Index(indexNames[sym]), true)
			default:
				pf, err := b3.ReadIndexCSV(strings.NewReader(string(b)), f)
				if err != nil {
					return err
				}
				offer(pf.Index(indexNames[pf.Symbol]), true)
			}
		}
	}
	known := map[string]bool{}
	for _, s := range a.u.Securities {
		known[s.Ticker] = true
	}
	syms := make([]string, 0, len(best))
	for s := range best {
		syms = append(syms, s)
	}
	sort.Strings(syms)
	for _, s := range syms {
		x := best[s].x
		if x.Name == "" || x.Name == x.Symbol {
			if n := indexNames[s]; n != "" {
				x.Name = n
			}
		}
		ms := x.Members[:0:0]
		for _, m := range x.Members {
			if known[m.Ticker] {
				ms = append(ms, m)
			} else {
				a.rep.dropMembers++
			}
		}
		if len(ms) == 0 {
			a.rep.notef("index %s: no member among the quoted tickers, not imported", s)
			continue
		}
		x.Members = ms
		a.u.Indexes = append(a.u.Indexes, x)
	}
	return nil
}

func (a *assembler) readCash(context.Context, progressFunc) error {
	bySym := map[string][]engine.Security{}
	byISIN := map[string]engine.Security{}
	for _, s := range a.u.Securities {
		bySym[s.Ticker[:4]] = append(bySym[s.Ticker[:4]], s)
		if s.ISIN != "" {
			byISIN[s.ISIN] = s
		}
	}
	seen := map[string]bool{}
	for _, v := range a.cfg.Cash {
		sym, p := symbolPath(v)
		if sym == "" {
			return fmt.Errorf("--cash-dividends %s: the response names no company: give SYMBOL=%s (e.g. ABEV=...)", v, p)
		}
		secs := bySym[sym]
		if len(secs) == 0 {
			return fmt.Errorf("--cash-dividends %s: no quoted ticker of %s", v, sym)
		}
		ctx := b3.CashContext{CompanyID: secs[0].CompanyID, Symbol: sym, Tickers: map[string]string{}, ISINs: map[string]string{}, Retrieved: a.opt.Retrieved}
		for _, s := range secs {
			if s.CompanyID != ctx.CompanyID {
				continue
			}
			if _, dup := ctx.Tickers[s.StockType]; !dup {
				ctx.Tickers[s.StockType], ctx.ISINs[s.StockType] = s.Ticker, s.ISIN
			}
		}
		b, err := datafile.ReadFile(p)
		if err != nil {
			return err
		}
		cas, st, err := b3.ReadCashDividends(b, p, ctx)
		if err != nil {
			return err
		}
		for k, n := range st.NoTicker {
			a.rep.notef("%s: %d events of %s %s skipped (no quoted ticker)", p, n, sym, k)
		}
		for k, n := range st.UnknownLabel {
			a.rep.notef("%s: %d events labelled %q skipped", p, n, k)
		}
		for _, c := range cas {
			if !seen[c.ID] {
				seen[c.ID] = true
				a.u.CashActions = append(a.u.CashActions, c)
			}
		}
	}
	files, err := expand(a.cfg.Supplement, isJSON)
	if err != nil {
		return fmt.Errorf("--supplement: %w", err)
	}
	shareSeen := map[string]bool{}
	for _, s := range a.u.Shares {
		shareSeen[s.CompanyID+s.Date.String()] = true
	}
	for _, f := range files {
		b, err := datafile.ReadFile(f)
		if err != nil {
			return err
		}
		sup, err := b3.ReadSupplement(b, f)
		if err != nil {
			return err
		}
		secs := bySym[sup.Symbol]
		if len(secs) == 0 {
			a.rep.notef("%s: no quoted ticker of %s, ignored", f, sup.Symbol)
			continue
		}
		co := secs[0].CompanyID
		b3.ApplyPaymentDates(a.u.CashActions, sup)
		if sup.Common >= 0 && sup.Preferred >= 0 && !shareSeen[co+a.asOf.String()] {
			shareSeen[co+a.asOf.String()] = true
			a.u.Shares = append(a.u.Shares, engine.SharesPoint{CompanyID: co, Date: a.asOf, Common: sup.Common, Preferred: sup.Preferred})
		}
		for _, sa := range sup.ShareActions {
			s, ok := byISIN[sa.ISIN]
			if !ok || s.CompanyID != co {
				a.rep.notef("%s: share action on %s skipped (ISIN not quoted)", f, sa.ISIN)
				continue
			}
			sa.CompanyID, sa.Ticker = co, s.Ticker
			a.u.ShareActions = append(a.u.ShareActions, sa)
		}
	}
	return nil
}

// Unclassified sector chain: companies of unknown sector hang from it.
const (
	unclassified    = "UNCLASSIFIED"
	unclassifiedSub = "UNCLASSIFIED.G.I.S"
)

func (a *assembler) finish(context.Context, progressFunc) error {
	cos := a.companyList()
	need := false
	for i := range cos {
		if cos[i].SubIndustryID == "" {
			cos[i].SubIndustryID = unclassifiedSub
			need = true
		}
	}
	a.u.Sectors = append(a.u.Sectors, a.sectors...)
	if need {
		a.u.Sectors = append(a.u.Sectors,
			engine.Sector{ID: unclassified, Name: "Não classificado", Level: 1},
			engine.Sector{ID: unclassified + ".G", Name: "Não classificado", Level: 2, ParentID: unclassified},
			engine.Sector{ID: unclassified + ".G.I", Name: "Não classificado", Level: 3, ParentID: unclassified + ".G"},
			engine.Sector{ID: unclassifiedSub, Name: "Não classificado", Level: 4, ParentID: unclassified + ".G.I"},
		)
	}
	a.u.Companies = cos
	a.u.Meta.Description = "Imported from official open data: " + strings.Join(a.sourcesUsed(), ", ")
	a.u.Meta.Attribution = "Data: B3 S.A. – Brasil, Bolsa, Balcão (market data) and CVM – Comissão de Valores Mobiliários (dados.cvm.gov.br)"
	return nil
}

func (a *assembler) sourcesUsed() []string {
	var s []string
	add := func(ok bool, name string) {
		if ok {
			s = append(s, name)
		}
	}
	c := a.cfg
	add(len(c.Cotahist) > 0, "B3 COTAHIST quotes")
	add(len(c.Index) > 0, "B3 index portfolios")
	add(len(c.Cash)+len(c.Supplement)+len(c.Details) > 0, "B3 listed-company data")
	add(len(c.Listings) > 0, "B3 fund listings")
	add(c.Cad != "", "CVM company registry")
	add(len(c.FCA) > 0, "CVM FCA")
	add(len(c.DFP) > 0, "CVM DFP")
	add(len(c.ITR) > 0, "CVM ITR")
	add(len(c.FII) > 0, "CVM FII monthly reports")
	if len(s) == 0 {
		return []string{"none"}
	}
	return s
}

// runFetch implements "pregao fetch".
func runFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fl.SetOutput(stderr)
	from := fl.String("from", "", "first day, YYYY-MM-DD (required)")
	to := fl.String("to", "", "last day, YYYY-MM-DD (default: --from)")
	dir := fl.String("dir", "", "folder to download into (required)")
	sources := fl.String("sources", "cotahist", "comma-separated: "+strings.Join(fetch.Sources, ","))
	annual := fl.Bool("annual", false, "COTAHIST: download the annual files of the range's years instead of daily files")
	base := fl.String("base-url", "", "replace the official hosts' https://host prefix (for mirrors and tests)")
	retries := fl.Int("retries", 4, "attempts per file")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *from == "" || *dir == "" {
		fl.Usage()
		return errors.New("fetch: --from and --dir are required")
	}
	if *to == "" {
		*to = *from
	}
	f, err := engine.ParseDate(*from)
	if err != nil {
		return fmt.Errorf("fetch: --from: %w", err)
	}
	t, err := engine.ParseDate(*to)
	if err != nil {
		return fmt.Errorf("fetch: --to: %w", err)
	}
	var srcs []string
	for _, s := range strings.Split(*sources, ",") {
		if s = strings.TrimSpace(s); s != "" {
			srcs = append(srcs, s)
		}
	}
	plan, err := fetch.Plan(srcs, f, t, *annual)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	cl := &fetch.Client{BaseURL: *base, Attempts: *retries}
	if isTerminal(stdout) {
		cl.Progress = func(p fetch.Progress) {
			fmt.Fprintf(stdout, "\r\033[K%s: %.1f MB", p.Path, float64(p.Bytes)/1e6)
		}
	}
	res, err := cl.FetchAll(ctx, *dir, plan)
	if isTerminal(stdout) {
		fmt.Fprint(stdout, "\r\033[K")
	}
	fmt.Fprintf(stdout, "fetch: %d downloaded, %d already complete, %d absent (404: no session or not published)\n", res.Downloaded, res.Skipped, res.Missing)
	return err
}
