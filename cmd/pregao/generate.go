package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/bundle"
	"github.com/pregao/pregao/snapshot/ingest/demo"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// runGenerate writes the deterministic demo universe as a source bundle:
// pregao generate --seed N --scale S --out DIR [--compression zstd|gzip|none]
// [--force] [--hold-back-session DIR2], or --snapshot FILE [--format 5|6]
// instead of --out. The same seed and scale always
// give a byte-identical bundle. An existing DIR holding anything but a
// bundle's files is refused unless --force (bundle.Write). With
// --hold-back-session the bundle lacks the universe's last session,
// written into DIR2 instead as B3's 2026 trade file carries it
// (demo.HoldBack, negocios.WriteDay): the replay feed's recording, whose
// aggregation is the full bundle's last session. With
// --official DIR it writes the same universe as B3 and the CVM publish it
// instead (package official), in the layout pregao update imports:
// pregao import $(official args of DIR) then gives the demo back, minus
// what the official formats cannot carry (docs/data-format.md).
func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", 1, "random seed; the same seed gives the same bundle")
	scale := fs.Int("scale", 1, "size multiplier: 1 is about 450 companies, 300 FIIs, 80 ETFs and 80 BDR issuers")
	out := fs.String("out", "", "output bundle directory (required unless --official)")
	off := fs.String("official", "", "write the official B3 and CVM files of the universe into this directory instead of a bundle (then: pregao update --no-fetch --dir DIR)")
	comp := fs.String("compression", "zstd", "file compression: zstd, gzip or none")
	force := fs.Bool("force", false, "with --out: "+forceUsage)
	snap := fs.String("snapshot", "", "write the universe straight into this snapshot file (derived ratios included, as build would), without a bundle")
	format := fs.Int("format", defaultFormat, "with --snapshot: "+formatUsage)
	isess := fs.Int("intraday-sessions", -1, "sessions of 1-minute bars of the --intraday-tickers most liquid tickers, the last one's included (default 10; 63 is a quarter)")
	itick := fs.String("intraday-tickers", "", "how many of the most liquid tickers have 1-minute bars of --intraday-sessions sessions, or all (default 150 a scale; every ticker has the last session's)")
	hold := fs.String("hold-back-session", "", "write the bundle without its last session, and that session into this directory as B3's trade file (YYYYMMDD_NEGOCIOSAVISTA.zip), for the replay feed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("generate: unexpected argument %q", fs.Arg(0))
	}
	given := 0
	for _, v := range []string{*out, *off, *snap} {
		if v != "" {
			given++
		}
	}
	if given == 0 {
		fs.Usage()
		return errors.New("generate: --out, --official or --snapshot is required")
	}
	if given > 1 {
		return errors.New("generate: give one of --out, --official and --snapshot")
	}
	if *hold != "" && *out == "" {
		return errors.New("generate: --hold-back-session needs --out (the bundle without the session)")
	}
	if *scale < 1 || *scale > 1000 {
		return fmt.Errorf("generate: --scale must be between 1 and 1000, got %d", *scale)
	}
	version, err := snapshotFormat("generate", *format)
	if err != nil {
		return err
	}
	formatSet := false
	fs.Visit(func(f *flag.Flag) { formatSet = formatSet || f.Name == "format" })
	if formatSet && *snap == "" {
		return errors.New("generate: --format needs --snapshot (a bundle has no format version)")
	}
	sz := scaleSize(*scale)
	if *isess >= 0 {
		if *isess > maxIntradaySessions {
			return fmt.Errorf("generate: --intraday-sessions must be between 0 and %d, got %d", maxIntradaySessions, *isess)
		}
		sz.IntradaySessions = *isess
	} else if *isess != -1 {
		return fmt.Errorf("generate: --intraday-sessions must be between 0 and %d, got %d", maxIntradaySessions, *isess)
	}
	switch n, err := strconv.Atoi(*itick); {
	case *itick == "":
	case *itick == "all":
		sz.IntradayTickers = math.MaxInt32
	case err != nil || n < 0:
		return fmt.Errorf("generate: --intraday-tickers must be a count or all, got %q", *itick)
	default:
		sz.IntradayTickers = n
	}
	switch *comp {
	case "zstd", "gzip", "none":
	default:
		return fmt.Errorf("generate: unknown --compression %q (want zstd, gzip or none)", *comp)
	}
	wopt := bundle.WriteOptions{Compression: *comp, Force: *force}
	if *out != "" {
		if err := bundle.CheckDir(*out, wopt); err != nil {
			return fmt.Errorf("generate: %w", forceHint(err))
		}
	}
	if err := ctx.Err(); err != nil {
		return interrupted(ctx, "generate", "nothing written")
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
	// A signal stops the command during the generation (nothing written
	// yet) or the write (see bundle.WriteContext, official.WriteContext):
	// the bundle folder is left as it was, official files are each
	// written whole or not at all.
	what := "no bundle written, " + *out + " is as it was"
	if *snap != "" {
		what = "no snapshot written, " + *snap + " is as it was"
	}
	if *off != "" {
		what = "the official files written so far are whole, the others not written"
	}
	var (
		u            *engine.Universe
		sess         *demo.Session
		tGen, tWrite time.Duration
		st           *official.Stats
		held         string
		counts       *demo.Counts
		asOf         time.Time
	)
	err = untilDone(ctx, "generate", what, stopGrace, stderr, func(ctx context.Context) (err error) {
		t0 := time.Now()
		var daily *snapshot.DailySpill
		switch {
		case *hold != "":
			u, sess = demo.GenerateSession(*seed, sz, meter)
			u = demo.HoldBack(u, sess)
		case *snap != "" && version == 6:
			// Each daily series is written to the snapshot's spill as
			// soon as the generation is done with its bars: the bars of
			// the universe are never in memory together.
			if daily, err = snapshot.NewDailySpill(*snap); err != nil {
				return err
			}
			defer daily.Close()
			if u, err = demo.GenerateSpilled(*seed, sz, meter, daily.Add); err != nil {
				return err
			}
		default:
			u = demo.GenerateMetered(*seed, sz, meter)
		}
		tGen = time.Since(t0)
		if err := ctx.Err(); err != nil {
			return err
		}
		t1 := time.Now()
		defer func() { tWrite = time.Since(t1) }()
		if *off != "" {
			st, err = official.WriteContext(ctx, *off, u, official.Options{Meter: meter})
			return err
		}
		if *snap != "" {
			// The bundle's checks, derivation and bytes, without writing
			// and reading it back (see snapshot.BuildFromUniverseContext).
			c := demo.Count(u)
			counts, asOf = &c, u.Meta.AsOf
			_, err = snapshot.BuildFromUniverseContext(ctx, u, *snap, snapshot.WriteOptions{Level: snapshot.DefaultLevel, Progress: prog, Version: version, Daily: daily})
			u = nil
			return err
		}
		wopt.Meter = meter
		if err := forceHint(bundle.WriteContext(ctx, *out, u, wopt)); err != nil || sess == nil {
			return err
		}
		t2 := time.Now()
		path, rows, err := negocios.WriteDay(*hold, sess.Day, sess.Each)
		if err != nil {
			return err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		held = fmt.Sprintf("held back session %s: %d rows of %d tickers, %s (%.1f MB) in %v\n", sess.Day, rows, len(sess.Tickers()),
			path, float64(fi.Size())/1e6, time.Since(t2).Round(time.Millisecond))
		return nil
	})
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("generate: %w", err)
	}
	if *off != "" {
		printOfficial(stdout, *off, *seed, *scale, u, st, tGen, tWrite)
		return nil
	}
	if counts == nil {
		c := demo.Count(u)
		counts = &c
		asOf = u.Meta.AsOf
	}
	c := *counts
	fmt.Fprintf(stdout, "demo universe seed=%d scale=%d as_of=%s\n", *seed, *scale, asOf.Format(time.RFC3339))
	fmt.Fprintf(stdout, "  sectors %d, companies %d, securities %d, renames %d, indexes %d\n",
		c.Sectors, c.Companies, c.Securities, c.Renames, c.Indexes)
	fmt.Fprintf(stdout, "  daily series %d (%d rows), intraday series %d (%d rows)\n", c.Daily, c.DailyRows, c.Intraday, c.IntradayRows)
	fmt.Fprintf(stdout, "  reports %d (%d accounts), shares %d, cash actions %d, share actions %d\n",
		c.Reports, c.Accounts, c.Shares, c.CashActions, c.ShareActions)
	fmt.Fprintf(stdout, "  fund reports %d, insider reports %d, documents %d\n", c.FundReports, c.InsiderReports, c.Documents)
	if *snap != "" {
		fmt.Fprintf(stdout, "generated in %v, snapshot %s written in %v\n",
			tGen.Round(time.Millisecond), *snap, tWrite.Round(time.Millisecond))
		return nil
	}
	fmt.Fprintf(stdout, "generated in %v, written to %s (%s) in %v\n",
		tGen.Round(time.Millisecond), *out, *comp, tWrite.Round(time.Millisecond))
	fmt.Fprint(stdout, held)
	return nil
}

// maxIntradaySessions bounds --intraday-sessions: a year of sessions.
const maxIntradaySessions = 252

// scaleSize is the demo size of a --scale (tests make it smaller).
var scaleSize = demo.ScaleSize

// printOfficial writes the summary of the official files st counts,
// written into dir from u in tWrite after tGen of generation.
func printOfficial(stdout io.Writer, dir string, seed int64, scale int, u *engine.Universe, st *official.Stats, tGen, tWrite time.Duration) {
	fmt.Fprintf(stdout, "demo universe seed=%d scale=%d as_of=%s, as official files\n", seed, scale, u.Meta.AsOf.Format(time.RFC3339))
	fmt.Fprintf(stdout, "  COTAHIST: %d lines, %d quote rows kept by import, skipped rows %v\n", st.CotahistLines, st.QuoteRows, st.Skipped)
	fmt.Fprintf(stdout, "  DFP/ITR: %d reports in %d statement rows; FII: %d monthly reports\n", st.Reports, st.StatementRows, st.FundReports)
	fmt.Fprintf(stdout, "  B3: %d cash events, %d share events, %d index portfolios\n", st.CashEvents, st.ShareEvents, st.Indexes)
	fmt.Fprintf(stdout, "generated in %v, %d files (%.1f MB) written to %s in %v\n",
		tGen.Round(time.Millisecond), st.Files, float64(st.Bytes)/1e6, dir, tWrite.Round(time.Millisecond))
	fmt.Fprintf(stdout, "import it: pregao update --no-fetch --dir %s --out FILE (or pregao import with the same flags)\n", dir)
}
