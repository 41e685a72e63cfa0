package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	json "github.com/goccy/go-json"

	"github.com/pregao/pregao/snapshot"
	"github.com/pregao/pregao/snapshot/remote"
)

// buildConfig is one run of pregao build: runBuild parses its flags into
// it, pregao update fills it itself (run).
type buildConfig struct {
	From            string // source bundle folder
	Out             string // snapshot file, or s3://BUCKET/KEY
	Level           int    // zstd level, 1 (fastest) to 22 (smallest)
	RequireManifest bool   // refuse a bundle without manifest.json (false: --no-manifest)
	Format          int    // snapshot format version: 0 (the default, defaultFormat), 5 or 6
}

// runBuild implements "pregao build --from DIR --out FILE [--level N]
// [--format 5|6]":
// it parses the flags into a buildConfig and runs it.
func runBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "source bundle directory (required)")
	out := fs.String("out", "", "snapshot file to write (required)")
	level := fs.Int("level", snapshot.DefaultLevel, "zstd level, 1 (fastest) to 22 (smallest)")
	noManifest := fs.Bool("no-manifest", false, "accept a bundle without manifest.json (written by hand; generate and import always write one)")
	format := fs.Int("format", defaultFormat, formatUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("build: unexpected argument %q", fs.Arg(0))
	}
	if *from == "" || *out == "" {
		fs.Usage()
		return errors.New("build: --from and --out are required")
	}
	return buildConfig{From: *from, Out: *out, Level: *level, RequireManifest: !*noManifest, Format: *format}.run(ctx, stdout, stderr)
}

// defaultFormat is the snapshot format version that build, generate
// --snapshot and update write unless told otherwise: 6, whose bars,
// ratio points and report accounts and heads are columns the server uses
// where they lie (docs/snapshot-format.md, "Format 6"). --format 5 still
// writes format 5 (deprecated: docs/snapshot-format.md, "Deprecated
// formats"); the snapshot package's own zero value stays 5.
const defaultFormat = 6

// deprecatedFormat is the warning due to a snapshot of format v, "" when
// its format is current: formats 4 and 5 still load, in the release that
// made 6 the default and the next one (docs/snapshot-format.md,
// "Deprecated formats").
func deprecatedFormat(v uint16) string {
	if v >= defaultFormat {
		return ""
	}
	return fmt.Sprintf("snapshot format %d is deprecated: it loads in this release and the next, then may be refused; build the snapshot again (pregao build and pregao generate --snapshot write format %d)", v, defaultFormat)
}

// formatUsage describes the --format flag of build, generate and update.
const formatUsage = "snapshot format version: 6 (daily and intraday bars, ratio points and report accounts as columns served in place: docs/snapshot-format.md), or 5 (deprecated: every section decoded into memory at load; a file about 3.8 times smaller)"

// snapshotFormat checks a --format value and returns the version to
// write: 0 is the default, defaultFormat.
func snapshotFormat(cmd string, v int) (uint16, error) {
	switch v {
	case 0:
		return defaultFormat, nil
	case 5, 6:
		return uint16(v), nil
	}
	return 0, fmt.Errorf("%s: --format must be 5 or 6, got %d", cmd, v)
}

// run validates the source bundle c.From and writes its snapshot to
// c.Out, then the header's tables to stdout. A bad bundle writes nothing
// (an existing c.Out is left untouched) and returns the validation
// error; so does the end of ctx (a signal: see untilDone), which the
// build checks between its steps.
func (c buildConfig) run(ctx context.Context, stdout, stderr io.Writer) error {
	if c.Level < 1 || c.Level > 22 {
		return fmt.Errorf("build: --level must be between 1 and 22, got %d", c.Level)
	}
	version, err := snapshotFormat("build", c.Format)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return interrupted(ctx, "build", "nothing written")
	}
	memoryDefaults()
	start := time.Now()
	dest, out := c.Out, c.Out
	if remote.IsURL(dest) {
		// Built locally, then published by remote.Upload (verified, then
		// copied over the key: readers never see a part).
		if !strings.HasPrefix(dest, "s3://") {
			return fmt.Errorf("build: --out %q: a file or s3://BUCKET/KEY", dest)
		}
		tmp, err := os.MkdirTemp("", "pregao-build-")
		if err != nil {
			return fmt.Errorf("build: %w", err)
		}
		defer os.RemoveAll(tmp)
		out = filepath.Join(tmp, "snapshot.snap")
	}
	// The snapshot is renamed into place only when complete, so out is
	// never left half-written, also when a signal stops the build.
	prog, stop := startMeter(stdout, "build")
	defer stop()
	var h snapshot.Header
	err = untilDone(ctx, "build", "no snapshot written, "+c.Out+" is as it was", stopGrace, stderr, func(ctx context.Context) (err error) {
		h, err = snapshot.BuildFromBundleContext(ctx, c.From, out, snapshot.WriteOptions{Level: c.Level, RequireManifest: c.RequireManifest, Progress: prog, Version: version})
		if err != nil {
			return fmt.Errorf("build: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	stop()
	if dest != out {
		if err := remote.Upload(ctx, out, dest); err != nil {
			if ctx.Err() != nil {
				return interrupted(ctx, "build", "not uploaded, "+dest+" is as it was")
			}
			return fmt.Errorf("build: %w", err)
		}
		out = dest
	}
	fmt.Fprintf(stdout, "wrote %s in %s\n", out, time.Since(start).Round(time.Millisecond))
	printHeader(stdout, h)
	return nil
}

// runInspect prints a snapshot's header: pregao inspect FILE [--json]
// [--verify]. Without --verify it reads and verifies only the header, not
// the sections.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return inspect(ctx, "inspect", args, false, stdout, stderr)
}

// runVerify runs every check `pregao serve` runs when it loads a snapshot
// (checksums, decoding, and the dataset's own consistency) and exits
// non-zero on the first failure: pregao verify FILE [--json].
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return inspect(ctx, "verify", args, true, stdout, stderr)
}

func inspect(ctx context.Context, name string, args []string, verify bool, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the header as JSON")
	if !verify {
		fs.BoolVar(&verify, "verify", false, "also read and check every section as the server's loader does (as pregao verify)")
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("%s: want exactly one snapshot file", name)
	}
	if err := ctx.Err(); err != nil {
		return interrupted(ctx, name, "nothing read")
	}
	// Anything but a regular file is refused without blocking (a named
	// pipe without a writer); a signal stops the command at once, as it
	// writes nothing.
	var h snapshot.Header
	if verify {
		start := time.Now()
		prog, stop := startMeter(stderr, name)
		err = untilDone(ctx, name, "not verified", 0, stderr, func(context.Context) (err error) {
			_, h, err = snapshot.Load(pos[0], snapshot.LoadOptions{PauseGC: true, Progress: prog})
			if err != nil && !errors.Is(err, snapshot.ErrNotRegular) && !strings.HasPrefix(err.Error(), pos[0]+": ") {
				err = fmt.Errorf("%s: %w", pos[0], err) // the loader names the file in some errors only
			}
			return err
		})
		stop()
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Fprintf(stderr, "%s: every section verified and loaded in %s\n", pos[0], time.Since(start).Round(time.Millisecond))
	} else {
		err = untilDone(ctx, name, "nothing read", 0, stderr, func(context.Context) (err error) {
			h, err = snapshot.ReadHeader(pos[0])
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			return fmt.Errorf("inspect: %w", err)
		}
		_, err = stdout.Write(append(b, '\n'))
		return err
	}
	printHeader(stdout, h)
	return nil
}

// printHeader writes h as readable tables.
func printHeader(w io.Writer, h snapshot.Header) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "magic\t%s\n", snapshot.Magic)
	if deprecatedFormat(h.FormatVersion) != "" {
		fmt.Fprintf(tw, "format version\t%d (deprecated: build it again; docs/snapshot-format.md)\n", h.FormatVersion)
	} else {
		fmt.Fprintf(tw, "format version\t%d\n", h.FormatVersion)
	}
	fmt.Fprintf(tw, "id\t%s\n", h.ID)
	fmt.Fprintf(tw, "build time\t%s\n", fmtTime(h.BuildTime))
	fmt.Fprintf(tw, "as_of\t%s\n", fmtTime(h.AsOf))
	fmt.Fprintf(tw, "source\t%s\n", h.Source)
	if h.Attribution != "" {
		fmt.Fprintf(tw, "attribution\t%s\n", h.Attribution)
	}
	fmt.Fprintf(tw, "stream position\t%s\n", h.Stream.String())
	fmt.Fprintf(tw, "zstd level\t%d\n", h.Level)
	fmt.Fprintf(tw, "file size\t%s\n", fmtBytes(h.Size))
	tw.Flush()

	fmt.Fprintln(w, "\ncounts:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, name := range snapshot.CountNames() {
		fmt.Fprintf(tw, "  %s\t%d\t\n", name, h.Counts[name])
	}
	tw.Flush()

	// One row per kind: parts, items, raw and compressed bytes.
	type agg struct {
		parts, items int
		raw, comp    int64
	}
	byKind := map[string]*agg{}
	var names []string
	var total agg
	for _, s := range h.Sections {
		a := byKind[s.Name]
		if a == nil {
			a = &agg{}
			byKind[s.Name] = a
			names = append(names, s.Name)
		}
		a.parts++
		a.items += s.Items
		a.raw += s.Raw
		a.comp += s.Compressed
		total.parts++
		total.items += s.Items
		total.raw += s.Raw
		total.comp += s.Compressed
	}
	fmt.Fprintln(w, "\nsections:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  kind\tparts\titems\traw\tcompressed\tratio\t\n")
	row := func(name string, a *agg) {
		ratio := 0.0
		if a.comp > 0 {
			ratio = float64(a.raw) / float64(a.comp)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%.1fx\t\n", name, a.parts, a.items, fmtBytes(a.raw), fmtBytes(a.comp), ratio)
	}
	for _, n := range names {
		row(n, byKind[n])
	}
	row("total", &total)
	tw.Flush()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func fmtBytes(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// memoryDefaults sets the garbage collector of the memory-bound commands
// (build, generate), unless the environment already does (GOMEMLIMIT):
// a memory limit of buildHeapBudget, or, once the live heap nears it, of
// the live heap plus an eighth (at least 512 MiB), and never above half
// the machine's physical memory (MemTotal of /proc/meminfo; no ceiling
// where it cannot be read). The limit follows the live heap measured by
// each collection (followLiveHeap). With GOGC alone, the heap grows to
// twice what was live at the last collection: at demo scale 10 the
// generator's 3.3 GB while it assembles the universe let the heap reach
// 5.7 GB during the derivation, whose live heap is 2.4 GB. GOGC keeps the
// Go default, which rules below the limit (small inputs). Set GOMEMLIMIT
// (e.g. GOMEMLIMIT=12GiB, or off) to choose otherwise.
func memoryDefaults() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ceil := physicalMemory() / 2
	debug.SetMemoryLimit(heapLimit(0, ceil))
	go followLiveHeap(ceil, 100*time.Millisecond)
}

// buildHeapBudget is the memory limit of a build or generate while its
// live heap is well below it: the build's memory aim (4 GB resident at
// demo scale 10), less the runtime's and the mapped file's share.
const buildHeapBudget = 3584 << 20

// heapLimit returns the memory limit for a live heap of live bytes under
// the ceiling ceil (0: none): buildHeapBudget, or live plus an eighth of
// it (at least 512 MiB) when that is more, so that a heap larger than
// the budget is collected as often as GOGC=12 would, not continuously.
// (At demo scale 10 the generator's 3.3 GB live while it assembles the
// universe would otherwise set a 4.1 GB limit.)
func heapLimit(live, ceil int64) int64 {
	l := max(buildHeapBudget, live+max(live/8, 512<<20))
	if ceil > 0 {
		l = min(l, ceil)
	}
	return l
}

// followLiveHeap sets the memory limit from the live heap (heapLimit)
// every period, for the rest of the process.
func followLiveHeap(ceil int64, period time.Duration) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	set := heapLimit(0, ceil)
	for range time.Tick(period) {
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if l := heapLimit(int64(s[0].Value.Uint64()), ceil); l != set {
			debug.SetMemoryLimit(l)
			set = l
		}
	}
}

// physicalMemory returns MemTotal of /proc/meminfo in bytes, or 0.
func physicalMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 {
			return 0
		}
		return kb << 10
	}
	return 0
}
