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

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/flatfiles"
)

// exportConfig is what pregao export writes.
type exportConfig struct {
	Snapshot string   // the snapshot file
	Out      string   // the folder
	Datasets []string // nil: every dataset
	Formats  []string // nil: both
}

const exportUsage = `usage: pregao export --snapshot FILE --out DIR [--datasets a,b,...] [--format parquet,csv]

Write the snapshot's datasets as files (docs/files.md): zstd Parquet and
gzip CSV, one file per dataset (daily bars and total return per year, 1-minute
bars per session) and manifest.json (dataset, file, rows, bytes, sha256, date
range). Each file is replaced atomically; a DIR that holds anything but an
export's files is refused, naming them.

`

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("export", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprint(stderr, exportUsage)
		fl.PrintDefaults()
	}
	var c exportConfig
	var datasets, formats string
	fl.StringVar(&c.Snapshot, "snapshot", "", "the snapshot file to export")
	fl.StringVar(&c.Out, "out", "", "the folder to write the files and manifest.json into (created when missing)")
	fl.StringVar(&datasets, "datasets", "", "comma-separated datasets to write (default every one: "+strings.Join(flatfiles.Datasets(), ", ")+")")
	fl.StringVar(&formats, "format", "parquet,csv", "comma-separated formats: parquet, csv")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return fmt.Errorf("export: unexpected argument %q", fl.Arg(0))
	}
	if c.Snapshot == "" || c.Out == "" {
		fl.Usage()
		return errors.New("export: --snapshot and --out are required")
	}
	c.Datasets = splitList(datasets)
	c.Formats = splitList(formats)
	return c.run(ctx, stdout, stderr)
}

func (c exportConfig) run(ctx context.Context, stdout, stderr io.Writer) error {
	// Bad names and a folder holding other files are refused before the
	// snapshot's load.
	for _, d := range c.Datasets {
		if !slices.Contains(flatfiles.Datasets(), d) {
			return fmt.Errorf("export: unknown dataset %q (the datasets: %s)", d, strings.Join(flatfiles.Datasets(), ", "))
		}
	}
	for _, f := range c.Formats {
		if !slices.Contains(flatfiles.Formats, f) {
			return fmt.Errorf("export: unknown format %q (the formats: %s)", f, strings.Join(flatfiles.Formats, ", "))
		}
	}
	if err := flatfiles.CheckDir(c.Out); err != nil {
		return err
	}
	start := time.Now()
	var m *flatfiles.Manifest
	err := untilDone(ctx, "export", "the files finished are in "+c.Out+", the manifest is as it was", stopGrace, stderr, func(ctx context.Context) error {
		ds, h, err := snapshot.Load(c.Snapshot, snapshot.LoadOptions{PauseGC: true})
		if err != nil {
			return fmt.Errorf("%s: %w", c.Snapshot, err)
		}
		opt := flatfiles.Options{Datasets: c.Datasets, Formats: c.Formats, Snapshot: h.ID}
		if isTerminal(stdout) {
			opt.Progress = func(p flatfiles.Progress) {
				if p.Done == p.Total {
					fmt.Fprint(stdout, "\r\033[K")
					return
				}
				fmt.Fprintf(stdout, "\r\033[Kexport: %d/%d files, %d rows, %s: %s", p.Done, p.Total, p.Rows, fmtBytes(p.Bytes), p.File)
			}
		}
		m, err = flatfiles.Export(ctx, ds, c.Out, opt)
		return err
	})
	if err != nil {
		return err
	}
	var rows, bytes int64
	for _, e := range m.Files {
		rows += e.Rows
		bytes += e.Bytes
	}
	fmt.Fprintf(stdout, "export: %d files (%d rows, %s) and %s in %s in %s\n", len(m.Files), rows, fmtBytes(bytes),
		flatfiles.ManifestName, c.Out, time.Since(start).Round(time.Millisecond))
	return nil
}
