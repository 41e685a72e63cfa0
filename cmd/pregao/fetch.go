package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

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
