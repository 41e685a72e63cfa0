package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
)

// runGenerate writes the deterministic demo universe as a source bundle:
// pregao generate --seed N --scale S --out DIR [--compression zstd|gzip|none].
// The same seed and scale always give a byte-identical bundle.
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 1, "random seed; the same seed gives the same bundle")
	scale := fs.Int("scale", 1, "size multiplier: 1 is about 450 companies, 300 FIIs, 80 ETFs and 80 BDR issuers")
	out := fs.String("out", "", "output bundle directory (required)")
	comp := fs.String("compression", "zstd", "file compression: zstd, gzip or none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("generate: unexpected argument %q", fs.Arg(0))
	}
	if *out == "" {
		fs.Usage()
		return errors.New("generate: --out is required")
	}
	if *scale < 1 || *scale > 1000 {
		return fmt.Errorf("generate: --scale must be between 1 and 1000, got %d", *scale)
	}
	switch *comp {
	case "zstd", "gzip", "none":
	default:
		return fmt.Errorf("generate: unknown --compression %q (want zstd, gzip or none)", *comp)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	memoryDefaults() // see build.go
	prog, stop := startMeter(stdout, "generate")
	defer stop()
	var meter interface {
		Begin(string, string, int64)
		Add(int64)
	}
	if prog != nil {
		meter = prog
	}
	t0 := time.Now()
	u := demo.GenerateMetered(*seed, demo.ScaleSize(*scale), meter)
	tGen := time.Since(t0)
	if err := ctx.Err(); err != nil {
		return err
	}
	t1 := time.Now()
	if err := bundle.Write(*out, u, bundle.WriteOptions{Compression: *comp, Meter: meter}); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	tWrite := time.Since(t1)
	stop()
	c := demo.Count(u)
	fmt.Fprintf(stdout, "demo universe seed=%d scale=%d as_of=%s\n", *seed, *scale, u.Meta.AsOf.Format(time.RFC3339))
	fmt.Fprintf(stdout, "  sectors %d, companies %d, securities %d, renames %d, indexes %d\n",
		c.Sectors, c.Companies, c.Securities, c.Renames, c.Indexes)
	fmt.Fprintf(stdout, "  daily series %d (%d rows), intraday series %d (%d rows)\n", c.Daily, c.DailyRows, c.Intraday, c.IntradayRows)
	fmt.Fprintf(stdout, "  reports %d (%d accounts), shares %d, cash actions %d, share actions %d\n",
		c.Reports, c.Accounts, c.Shares, c.CashActions, c.ShareActions)
	fmt.Fprintf(stdout, "  fund reports %d, insider reports %d, documents %d\n", c.FundReports, c.InsiderReports, c.Documents)
	fmt.Fprintf(stdout, "generated in %v, written to %s (%s) in %v\n",
		tGen.Round(time.Millisecond), *out, *comp, tWrite.Round(time.Millisecond))
	return nil
}
