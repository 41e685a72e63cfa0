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

// runFetch implements "pregao fetch": the official files of --sources for
// the days --from..--to (cotahist, cad, dfp, itr, fca, fii: see
// fetch.Plan), then the answers of B3's listed-data services
// (fetch.FetchServices): indexes, the portfolios of the day of --indexes;
// companies, the supplement, details and cash dividends of --companies or
// else of every company the range's COTAHIST files quote (taken from the
// files in --dir: name cotahist too, or fetch it first); listings, the
// FII and ETF lists. Without --sources only COTAHIST is fetched.
func runFetch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("fetch", flag.ContinueOnError)
	fl.SetOutput(stderr)
	from := fl.String("from", "", "first day, YYYY-MM-DD (required)")
	to := fl.String("to", "", "last day, YYYY-MM-DD (default: --from)")
	dir := fl.String("dir", "", "folder to download into (required)")
	sources := fl.String("sources", "cotahist", "comma-separated: "+strings.Join(fetch.Sources, ","))
	annual := fl.Bool("annual", false, "COTAHIST: download the annual files of the range's years instead of daily files")
	base := fl.String("base-url", "", "replace the official hosts' https://host prefix (for mirrors and tests)")
	retries := fl.Int("retries", 4, "attempts per file or service request")
	indexes := fl.String("indexes", strings.Join(fetch.DefaultIndexes, ","), "indexes source: the index portfolios to fetch, comma-separated symbols")
	companies := fl.String("companies", "", "companies source: issuer codes to fetch (ABEV,PETR...); default: every company whose shares the range's COTAHIST files quote (about 330 a day, 3 requests or more each)")
	pace := fl.Duration("pace", 200*time.Millisecond, "least time between two requests to B3's services")
	if err := fl.Parse(args); err != nil {
		return err
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
	f, err := engine.ParseDate(*from)
	if err != nil {
		return fmt.Errorf("fetch: --from: %w", err)
	}
	t, err := engine.ParseDate(*to)
	if err != nil {
		return fmt.Errorf("fetch: --to: %w", err)
	}
	plan, err := fetch.Plan(srcs, f, t, *annual)
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	var svc fetch.Services
	wantSvc := false
	for _, s := range srcs {
		switch s {
		case "indexes":
			svc.Indexes, wantSvc = splitList(*indexes), true
		case "companies":
			wantSvc = true
			if *companies != "" {
				svc.Companies = splitList(*companies)
			}
		case "listings":
			svc.Listings, wantSvc = true, true
		}
	}
	cl := &fetch.Client{BaseURL: *base, Attempts: *retries, Pace: *pace}
	if isTerminal(stdout) {
		cl.Progress = func(p fetch.Progress) {
			fmt.Fprintf(stdout, "\r\033[K%s: %.1f MB", p.Path, float64(p.Bytes)/1e6)
		}
	}
	if len(plan) > 0 {
		res, err := cl.FetchAll(ctx, *dir, plan)
		if isTerminal(stdout) {
			fmt.Fprint(stdout, "\r\033[K")
		}
		fmt.Fprintf(stdout, "fetch: %d downloaded, %d already complete, %d absent (404: no session or not published)\n", res.Downloaded, res.Skipped, res.Missing)
		if err != nil {
			return err
		}
	}
	if !wantSvc {
		return nil
	}
	if slices.Contains(srcs, "companies") && svc.Companies == nil {
		// The companies the range's quotes name: the importer can join
		// their cash dividends to a quoted ticker.
		days, err := fetch.Plan([]string{"cotahist"}, f, t, *annual)
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		if svc.Companies, err = fetch.CompanyCodes(*dir, days); err != nil {
			return fmt.Errorf("fetch: companies: %w", err)
		}
	}
	start := time.Now()
	sres, err := cl.FetchServices(ctx, *dir, svc)
	if isTerminal(stdout) {
		fmt.Fprint(stdout, "\r\033[K")
	}
	fmt.Fprintf(stdout, "fetch: B3 services: %s in %.1fs\n", sres, time.Since(start).Seconds())
	if err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}

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
