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
	"github.com/pregao/pregao/snapshot/ingest/fetch"
	"github.com/pregao/pregao/snapshot/ingest/official"
)

// runUpdate turns "yesterday's files" into a new snapshot in one command:
// pregao update --dir DIR --out FILE|s3://B/K [--from DAY] [--to DAY]
// [--sources ...]. It fetches the range into DIR (official layout;
// resumable, idempotent: files already complete are not downloaded
// again), imports every official file DIR holds (officialArgs), and builds
// the snapshot, which replaces FILE atomically: a server with --watch on
// FILE (or on the s3:// location) picks it up. The bundle is written to a
// temporary folder and removed unless --bundle names one.
func runUpdate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("update", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("dir", "", "folder of the official files, in their official layout (required; pregao fetch's --dir)")
	out := fl.String("out", "", "snapshot to write: a file or s3://BUCKET/KEY (required)")
	from := fl.String("from", "", "first day to fetch, YYYY-MM-DD (default: --to)")
	to := fl.String("to", "", "last day to fetch, YYYY-MM-DD (default: the last weekday before today in São Paulo)")
	sources := fl.String("sources", "cotahist,cad,dfp,itr,fca,fii", "comma-separated: "+strings.Join(fetch.Sources, ","))
	base := fl.String("base-url", "", "replace the official hosts' https://host prefix (for mirrors and tests)")
	bundleDir := fl.String("bundle", "", "keep the source bundle in this folder (default: a temporary one, removed)")
	lenient := fl.Bool("lenient", false, "import: skip malformed rows, counted in the summary")
	noFetch := fl.Bool("no-fetch", false, "do not download: import and build what DIR holds")
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
	if *to == "" {
		*to = lastWeekday(time.Now()).String()
	}
	if *from == "" {
		*from = *to
	}
	if !*noFetch {
		fargs := []string{"--from", *from, "--to", *to, "--dir", *dir, "--sources", *sources}
		if *base != "" {
			fargs = append(fargs, "--base-url", *base)
		}
		if err := runFetch(ctx, fargs, stdout, stderr); err != nil {
			return fmt.Errorf("update: %w", err)
		}
	}
	iargs, err := officialArgs(*dir)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	bd := *bundleDir
	if bd == "" {
		tmp, err := os.MkdirTemp("", "pregao-update-")
		if err != nil {
			return fmt.Errorf("update: %w", err)
		}
		defer os.RemoveAll(tmp)
		bd = filepath.Join(tmp, "bundle")
	}
	iargs = append(iargs, "--out", bd)
	if *lenient {
		iargs = append(iargs, "--lenient")
	}
	if err := runImport(ctx, iargs, stdout, stderr); err != nil {
		return fmt.Errorf("update: import: %w", err)
	}
	if err := runBuild(ctx, []string{"--from", bd, "--out", *out}, stdout, stderr); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

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

// officialArgs returns the import flags that take in the files of dir,
// laid out as pregao fetch writes them (the official hosts' paths): the
// COTAHIST files, the CVM registry, DFP, ITR and FCA archives and the FII
// monthly reports. Folders that are absent are left out; a dir holding
// none is an error.
func officialArgs(dir string) ([]string, error) {
	var args []string
	for _, x := range []struct{ flag, rel string }{
		{"--cotahist", "InstDados/SerHist"},
		{"--cad", "dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"},
		{"--dfp", "dados/CIA_ABERTA/DOC/DFP/DADOS"},
		{"--itr", "dados/CIA_ABERTA/DOC/ITR/DADOS"},
		{"--fca", "dados/CIA_ABERTA/DOC/FCA/DADOS"},
		{"--fii", "dados/FII/DOC/INF_MENSAL/DADOS"},
	} {
		p := filepath.Join(dir, filepath.FromSlash(x.rel))
		if _, err := os.Stat(p); err == nil {
			args = append(args, x.flag, p)
		}
	}
	b3, err := b3Args(dir)
	if err != nil {
		return nil, err
	}
	args = append(args, b3...)
	if len(args) == 0 {
		return nil, fmt.Errorf("%s holds no official file (fetch first, or check --dir)", dir)
	}
	return args, nil
}

// b3Args returns the import flags of the B3 files under dir/b3, laid out
// as pregao generate --official writes them (package official): index
// portfolios, listed-company responses (cash dividends as
// SYMBOL=b3/cash-dividends/SYMBOL.json, since the response names no
// company), supplements, details and fund listings. Folders that are
// absent are left out.
func b3Args(dir string) ([]string, error) {
	var args []string
	for _, x := range []struct{ flag, rel string }{
		{"--index", official.IndexDir},
		{"--supplement", official.SuppDir},
		{"--details", official.DetailsDir},
		{"--listings", official.ListingDir},
	} {
		p := filepath.Join(dir, filepath.FromSlash(x.rel))
		if _, err := os.Stat(p); err == nil {
			args = append(args, x.flag, p)
		}
	}
	cash := filepath.Join(dir, filepath.FromSlash(official.CashDir))
	ents, err := os.ReadDir(cash)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, e := range ents {
		if sym, ok := strings.CutSuffix(e.Name(), ".json"); ok && !e.IsDir() {
			args = append(args, "--cash-dividends", sym+"="+filepath.Join(cash, e.Name()))
		}
	}
	return args, nil
}
