package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// defaultRetries is the attempts per file or service request of pregao
// fetch and update (--retries).
const defaultRetries = 4

// fetchConfig is one run of pregao fetch: runFetch parses its flags into
// it, pregao update fills it itself (run).
type fetchConfig struct {
	From, To  engine.Date   // the days of the official files, inclusive
	Dir       string        // folder to download into, in the official layout
	Sources   []string      // of fetch.Sources: official files, then B3's services
	Annual    bool          // COTAHIST: the range's annual files instead of daily ones
	BaseURL   string        // replaces the official hosts' https://host prefix; "": the hosts
	Retries   int           // attempts per file or service request
	Indexes   []string      // indexes source: the symbols whose portfolio of the day is fetched
	Companies []string      // companies source: issuer codes; nil: those the range's COTAHIST quotes
	Pace      time.Duration // least time between two requests to B3's services
}

// runFetch implements "pregao fetch": it parses the flags into a
// fetchConfig and runs it.
func runFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fl.SetOutput(stderr)
	from := fl.String("from", "", "first day, YYYY-MM-DD (required)")
	to := fl.String("to", "", "last day, YYYY-MM-DD (default: --from)")
	dir := fl.String("dir", "", "folder to download into (required)")
	sources := fl.String("sources", "cotahist", "comma-separated: "+strings.Join(fetch.Sources, ","))
	annual := fl.Bool("annual", false, "COTAHIST: download the annual files of the range's years instead of daily files")
	base := fl.String("base-url", "", "replace the official hosts' https://host prefix (for mirrors and tests)")
	retries := fl.Int("retries", defaultRetries, "attempts per file or service request")
	indexes := fl.String("indexes", strings.Join(fetch.DefaultIndexes, ","), "indexes source: the index portfolios to fetch, comma-separated symbols")
	companies := fl.String("companies", "", "companies source: issuer codes to fetch (ABEV,PETR...); default: every company whose shares the range's COTAHIST files quote (about 330 a day, 3 requests or more each)")
	pace := fl.Duration("pace", 200*time.Millisecond, "least time between two requests to B3's services")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("fetch: unexpected argument %q", fl.Arg(0))
	}
	srcs := splitList(*sources)
	if *from == "" && *dir != "" && datesUnused(srcs, *companies) {
		*from = lastWeekday(time.Now()).String() // unused: today's answers
	}
	if *from == "" || *dir == "" {
		fl.Usage()
		return errors.New("fetch: --from and --dir are required (--from may be left out when only indexes, listings or named --companies are fetched)")
	}
	if *to == "" {
		*to = *from
	}
	cfg := fetchConfig{Dir: *dir, Sources: srcs, Annual: *annual, BaseURL: *base, Retries: *retries,
		Indexes: splitList(*indexes), Companies: splitList(*companies), Pace: *pace}
	var err error
	if cfg.From, err = engine.ParseDate(*from); err != nil {
		return fmt.Errorf("fetch: --from: %w", err)
	}
	if cfg.To, err = engine.ParseDate(*to); err != nil {
		return fmt.Errorf("fetch: --to: %w", err)
	}
	return cfg.run(ctx, stdout, stderr)
}

// run downloads the official files of c.Sources for the days
// c.From..c.To (cotahist, cad, dfp, itr, fca, fii, and bcb's PTAX
// closing-rates files: see fetch.Plan), bcb's SGS series in windows of at
// most 10 years (fetch.FetchSGS), then
// the answers of B3's listed-data services (fetch.FetchServices):
// indexes, the portfolios of the day of c.Indexes; companies, the
// supplement, details and cash dividends of c.Companies or else of every
// company the range's COTAHIST files quote (taken from the files in
// c.Dir: name cotahist too, or fetch it first); listings, the FII and ETF
// lists; instruments, B3's listed-instruments file of c.To (or of the
// latest weekday before it B3 has published one for). It writes its summary lines to stdout, and its progress when
// stdout is a terminal. It stops at ctx's end (a signal): files are
// renamed into place only when complete, and a download cut short is
// kept as FILE.part, which the next fetch resumes. CVM's yearly archives
// keep every download of other content (fetch.Item.Keep).
func (c fetchConfig) run(ctx context.Context, stdout, stderr io.Writer) error {
	plan, err := fetch.Plan(c.Sources, c.From, c.To, c.Annual)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	var svc fetch.Services
	wantSvc := false
	for _, s := range c.Sources {
		switch s {
		case "indexes":
			svc.Indexes, wantSvc = c.Indexes, true
		case "companies":
			wantSvc = true
			svc.Companies = c.Companies
		case "listings":
			svc.Listings, wantSvc = true, true
		case "instruments":
			svc.Instruments, svc.InstrumentsDay, wantSvc = true, c.To, true
		}
	}
	cl := &fetch.Client{BaseURL: c.BaseURL, Attempts: c.Retries, Pace: c.Pace}
	if isTerminal(stdout) {
		cl.Progress = func(p fetch.Progress) {
			fmt.Fprintf(stdout, "\r\033[K%s: %.1f MB", p.Path, float64(p.Bytes)/1e6)
		}
	}
	if len(plan) > 0 {
		res, err := cl.FetchAll(ctx, c.Dir, plan)
		if isTerminal(stdout) {
			fmt.Fprint(stdout, "\r\033[K")
		}
		fmt.Fprintf(stdout, "fetch: %d downloaded, %d already complete, %d absent (404: no session or not published)\n", res.Downloaded, res.Skipped, res.Missing)
		if res.Kept > 0 || res.Unchanged > 0 {
			fmt.Fprintf(stdout, "fetch: CVM yearly files republished: %d with other content (the earlier download kept beside, as NAME.<UTC time>.zip: import reads both), %d with the same content (not kept twice)\n", res.Kept, res.Unchanged)
		}
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(ctx, "fetch", fetchStopped)
			}
			return err
		}
	}
	if slices.Contains(c.Sources, "bcb") {
		start := time.Now()
		res, err := cl.FetchSGS(ctx, c.Dir, c.From, c.To, nil)
		if isTerminal(stdout) {
			fmt.Fprint(stdout, "\r\033[K")
		}
		fmt.Fprintf(stdout, "fetch: BCB SGS series: %d answers stored (%.1f MB), %d already fetched today or final, %d windows without values, %d requests in %.1fs\n",
			res.Downloaded, float64(res.Bytes)/1e6, res.Skipped, res.Missing, res.Requests, time.Since(start).Seconds())
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(ctx, "fetch", fetchStopped)
			}
			return fmt.Errorf("fetch: %w", err)
		}
	}
	if !wantSvc {
		return nil
	}
	if slices.Contains(c.Sources, "companies") && svc.Companies == nil {
		// The companies the range's quotes name: the importer can join
		// their cash dividends to a quoted ticker.
		days, err := fetch.Plan([]string{"cotahist"}, c.From, c.To, c.Annual)
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		if svc.Companies, err = fetch.CompanyCodes(c.Dir, days); err != nil {
			return fmt.Errorf("fetch: companies: %w", err)
		}
	}
	start := time.Now()
	sres, err := cl.FetchServices(ctx, c.Dir, svc)
	if isTerminal(stdout) {
		fmt.Fprint(stdout, "\r\033[K")
	}
	fmt.Fprintf(stdout, "fetch: B3 services: %s in %.1fs\n", sres, time.Since(start).Seconds())
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "fetch", fetchStopped)
		}
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

// fetchStopped says what an interrupted fetch leaves.
const fetchStopped = "the files downloaded whole are in place, one cut short is kept as .part for the next fetch to resume"

// datesUnused reports whether sources need no date range: B3's services
// answer today's data, and only the companies source without named
// companies reads the range's COTAHIST files.
func datesUnused(sources []string, companies string) bool {
	for _, s := range sources {
		if !fetch.IsService(s) || s == "companies" && companies == "" {
			return false
		}
	}
	return len(sources) > 0
}

// splitList splits a comma-separated flag value, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
