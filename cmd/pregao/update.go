package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/assemble"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// runUpdate turns "yesterday's files" into a new snapshot in one command:
// pregao update --dir DIR --out FILE|s3://B/K [--from DAY] [--to DAY]
// [--sources ...] [--format 6|5]. It fetches the range into DIR (official layout;
// resumable, idempotent: files already complete are not downloaded
// again), imports every official file DIR holds (officialInputs), and
// builds the snapshot, which replaces FILE atomically: a server with
// --watch on FILE (or on the s3:// location) picks it up. The bundle is
// written to a temporary folder and removed unless --bundle names one.
// The three steps are fetch's, import's and build's own runs, given their
// configurations (fetchConfig, importConfig, buildConfig). With
// --session-log (files, or serve's --live-dir) the live sessions' logs
// become the 1-minute history of their days (see importConfig).
func runUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("update", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "folder of the official files, in their official layout (required; pregao fetch's --dir)")
	out := fl.String("out", "", "snapshot to write: a file or s3://BUCKET/KEY (required)")
	from := fl.String("from", "", "first day to fetch, YYYY-MM-DD (default: --to)")
	to := fl.String("to", "", "last day to fetch, YYYY-MM-DD (default: the last weekday before today in São Paulo)")
	sources := fl.String("sources", defaultUpdateSources, "comma-separated: "+strings.Join(fetch.Sources, ",")+" (companies: about 330 companies, 3 requests or more each)")
	indexes := fl.String("indexes", strings.Join(fetch.DefaultIndexes, ","), "indexes source: the index portfolios to fetch")
	companies := fl.String("companies", "", "companies source: issuer codes (default: the companies the fetched COTAHIST quotes)")
	pace := fl.Duration("pace", 200*time.Millisecond, "least time between two requests to B3's services")
	base := fl.String("base-url", "", "replace the official hosts' https://host prefix (for mirrors and tests)")
	bundleDir := fl.String("bundle", "", "keep the source bundle in this folder (default: a temporary one, removed)")
	force := fl.Bool("force", false, "with --bundle: "+forceUsage)
	lenient := fl.Bool("lenient", false, "import: skip malformed rows, counted in the summary")
	noFetch := fl.Bool("no-fetch", false, "do not download: import and build what DIR holds")
	format := fl.Int("format", defaultFormat, formatUsage)
	var liveCfg session.Config
	liveCfg.AddFlags(fl, session.RoleImport)
	var sessionLogs listFlag
	fl.Var(&sessionLogs, "session-log", "live session logs, or folders of them (serve's --live-dir): their 1-minute bars become the intraday history of their sessions up to the as-of day")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("update: unexpected argument %q", fl.Arg(0))
	}
	if *dir == "" || *out == "" {
		fl.Usage()
		return errors.New("update: --dir and --out are required")
	}
	if _, err := snapshotFormat("update", *format); err != nil {
		return err // before the fetch
	}
	if err := liveCfg.CheckImport(); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	if *bundleDir != "" {
		if err := bundle.CheckDir(*bundleDir, bundle.WriteOptions{Force: *force}); err != nil {
			return fmt.Errorf("update: --bundle: %w", forceHint(err)) // before the fetch
		}
	}
	if !*noFetch {
		fc := fetchConfig{Dir: *dir, Sources: splitList(*sources), BaseURL: *base, Retries: defaultRetries,
			Indexes: splitList(*indexes), Companies: splitList(*companies), Pace: *pace}
		fc.To = lastWeekday(time.Now())
		if *to != "" {
			d, err := engine.ParseDate(*to)
			if err != nil {
				return fmt.Errorf("update: --to: %w", err)
			}
			fc.To = d
		}
		fc.From = fc.To
		if *from != "" {
			d, err := engine.ParseDate(*from)
			if err != nil {
				return fmt.Errorf("update: --from: %w", err)
			}
			fc.From = d
		}
		if err := fc.run(ctx, stdout, stderr); err != nil {
			return fmt.Errorf("update: %w", err)
		}
	}
	ic := importConfig{Compression: bundle.CompressZstd, Assemble: assemble.DefaultConfig()}
	if err := officialInputs(*dir, &ic.Assemble); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	ic.Assemble.Lenient = *lenient
	ic.SessionLogs, ic.Live = sessionLogs, liveCfg
	ic.Out, ic.Force = *bundleDir, *force
	if ic.Out == "" {
		tmp, err := os.MkdirTemp("", "pregao-update-")
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		defer os.RemoveAll(tmp)
		ic.Out = filepath.Join(tmp, "bundle")
	}
	if err := ic.run(ctx, stdout, stderr); err != nil {
		return fmt.Errorf("update: import: %w", err)
	}
	bc := buildConfig{From: ic.Out, Out: *out, Level: snapshot.DefaultLevel, RequireManifest: true, Format: *format}
	if err := bc.run(ctx, stdout, stderr); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

// defaultUpdateSources are the sources pregao update fetches unless told:
// every official file, the Banco Central's (its SGS series: 3 requests a
// day for the current decade; the PTAX closing rates of each weekday), and
// the B3 index portfolios and fund lists (10 answers, about 14 requests). B3's listed-company data is asked for by
// naming companies: about 330 companies a day, 3 requests or more each,
// some 1,000 requests, at least 3.3 minutes at the 200 ms pace (more with
// B3's answer time); once a day at most.
const defaultUpdateSources = "cotahist,cad,dfp,itr,fca,fii,bcb,indexes,listings"

// lastWeekday is the last weekday before now's day in São Paulo (UTC-3):
// the last session whose files B3 and CVM may have published.
func lastWeekday(now time.Time) engine.Date {
	y, m, day := now.In(time.FixedZone("BRT", -3*3600)).Date()
	d := engine.MakeDate(y, m, day) - 1
	for {
		switch d.Time().Weekday() {
		case time.Saturday, time.Sunday:
			d--
			continue
		}
		return d
	}
}

// officialInputs adds to cfg the files of dir, laid out as pregao fetch
// writes them (the official hosts' paths): the COTAHIST files, the CVM
// registry, DFP, ITR and FCA archives, the FII monthly reports, the
// Banco Central's SGS answers and PTAX closing rates; the B3
// service answers: every index portfolio ("SYMBOL=FILE", SYMBOL the
// folder under GetPortfolioDay), the companies' supplements and details
// (their folders), their cash dividends ("CODE=FILE", CODE the file's
// name) and the fund lists. Folders that are absent or hold no file of
// their kind are left out; a dir holding none is an error.
func officialInputs(dir string, cfg *assemble.Config) error {
	n := 0
	p := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	for _, x := range []struct {
		list *[]string
		rel  string
	}{
		{&cfg.Cotahist, "InstDados/SerHist"},
		{nil, "dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"},
		{&cfg.DFP, "dados/CIA_ABERTA/DOC/DFP/DADOS"},
		{&cfg.ITR, "dados/CIA_ABERTA/DOC/ITR/DADOS"},
		{&cfg.FCA, "dados/CIA_ABERTA/DOC/FCA/DADOS"},
		{&cfg.FII, "dados/FII/DOC/INF_MENSAL/DADOS"},
	} {
		if _, err := os.Stat(p(x.rel)); err != nil {
			continue
		}
		if x.list == nil {
			cfg.Cad = p(x.rel)
		} else {
			*x.list = append(*x.list, p(x.rel))
		}
		n++
	}
	// The Banco Central's folders, when they hold an answer: fetch makes
	// the closing-rates folder before a holiday's 404.
	for _, rel := range []string{"dados/serie", "Download/fechamento"} {
		if holdsFile(p(rel), ".json", ".csv") {
			cfg.BCB = append(cfg.BCB, p(rel))
			n++
		}
	}
	syms, _ := os.ReadDir(p(fetch.SvcPortfolioDay))
	for _, sym := range syms {
		if !sym.IsDir() || !fetch.ValidIndex(sym.Name()) {
			continue
		}
		for _, f := range filesWithSuffix(filepath.Join(p(fetch.SvcPortfolioDay), sym.Name()), ".json") {
			cfg.Index = append(cfg.Index, sym.Name()+"="+f)
			n++
		}
	}
	for _, f := range filesWithSuffix(p(fetch.SvcCashDividends), ".json") {
		if code := strings.TrimSuffix(filepath.Base(f), ".json"); fetch.ValidCompany(code) {
			cfg.Cash = append(cfg.Cash, code+"="+f)
			n++
		}
	}
	for _, x := range []struct {
		list        *[]string
		rel, suffix string
	}{
		{&cfg.Supplement, fetch.SvcSupplement, ".json"},
		{&cfg.Details, fetch.SvcDetail, ".json"},
		{&cfg.Listings, fetch.SvcFundList, ".csv"},
		{&cfg.Instruments, fetch.InstrumentsDir, ".csv"},
	} {
		if len(filesWithSuffix(p(x.rel), x.suffix)) > 0 {
			*x.list = append(*x.list, p(x.rel))
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("%s holds no official file (fetch first, or check --dir)", dir)
	}
	return nil
}

// holdsFile reports whether folder d, or a folder below it, holds a
// regular file whose name ends with one of suffixes.
func holdsFile(d string, suffixes ...string) bool {
	found := false
	filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
		if err != nil || found {
			return filepath.SkipAll
		}
		if e.Type().IsRegular() {
			for _, s := range suffixes {
				if strings.HasSuffix(e.Name(), s) {
					found = true
					return filepath.SkipAll
				}
			}
		}
		return nil
	})
	return found
}

// filesWithSuffix returns the regular files of folder d (not below it)
// whose names end with suffix, sorted; none when d is absent.
func filesWithSuffix(d, suffix string) []string {
	es, _ := os.ReadDir(d)
	var out []string
	for _, e := range es {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), suffix) {
			out = append(out, filepath.Join(d, e.Name()))
		}
	}
	return out
}
