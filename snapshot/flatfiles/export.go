package flatfiles

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// Formats.
const (
	Parquet = "parquet" // zstd-compressed Parquet, extension .parquet
	CSV     = "csv"     // gzip-compressed CSV with a header row, extension .csv.gz
)

// Formats lists the formats, in the order files are listed.
var Formats = []string{Parquet, CSV}

// ManifestName is the name of the manifest in an export's folder.
const ManifestName = "manifest.json"

// Datasets returns the names of the datasets, in the order of
// docs/files.md.
func Datasets() []string {
	out := make([]string, len(ourDatasets))
	for i, d := range ourDatasets {
		out[i] = d.name
	}
	return out
}

// Priced reports whether the dataset named name holds prices (bars,
// total return, macro series): what a plan's cut applies to (Options
// .Through), and what the API's eod plan does not get as files.
func Priced(name string) bool {
	for _, d := range ourDatasets {
		if d.name == name {
			return d.priced
		}
	}
	return false
}

// Options says what Export writes. The zero value writes every dataset
// in both formats, whole.
type Options struct {
	// Datasets are the datasets to write (names of Datasets); nil or
	// empty: every one.
	Datasets []string
	// Formats are the formats to write (Parquet, CSV); nil or empty: both.
	Formats []string
	// Through is the last session the priced datasets (daily and 1-minute
	// bars, total return, macro series) hold; NoDate, or 0 (the zero
	// value, 1970-01-01, a day without sessions): every session of the
	// Dataset. A plan's files are cut here (see the package doc).
	Through engine.Date
	// Snapshot is the id of the Dataset's snapshot, recorded in the
	// manifest ("" leaves it out).
	Snapshot string
	// Progress, when not nil, is called before each file is written and
	// once at the end (Done == Total), from Export's goroutine.
	Progress func(Progress)
	// NoSync skips the fsync of each file (tests that write many).
	NoSync bool
}

// Progress is how far an Export has gone: Done of Total files written,
// Rows and Bytes so far, and the file being written.
type Progress struct {
	Done, Total int
	Rows, Bytes int64
	File        string
}

// Version is the version of what the files hold (their schemas, values
// and layout), recorded in each manifest (Manifest.Version). It is
// raised with every change to the bytes a snapshot gives, so that a
// Cache drops the folders an earlier build of the server wrote instead
// of serving them as this one's: 2 since unknown counts are nulls
// (employees, liquidity_rank) and the footers record nulls first; the
// manifests of earlier builds have none (0).
const Version = 2

// Manifest is the content of manifest.json: what an export's folder
// holds.
type Manifest struct {
	Version  int       `json:"version"`            // the files' Version
	Snapshot string    `json:"snapshot,omitempty"` // the snapshot's id
	AsOf     time.Time `json:"as_of"`              // the Dataset's as_of
	// Through is the last session of the priced datasets (null: every
	// session of the snapshot).
	Through engine.Date `json:"through"`
	Files   []Entry     `json:"files"`
}

// Entry is one file of a Manifest.
type Entry struct {
	Dataset string `json:"dataset"`
	File    string `json:"file"`   // the name in the folder
	Format  string `json:"format"` // parquet or csv
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"` // hex
	// MinDate and MaxDate are the range of the dataset's date column
	// (null: the dataset has none, or no row has one).
	MinDate engine.Date `json:"min_date"`
	MaxDate engine.Date `json:"max_date"`
}

// Find returns the entry of the file named name.
func (m *Manifest) Find(name string) (*Entry, bool) {
	for i := range m.Files {
		if m.Files[i].File == name {
			return &m.Files[i], true
		}
	}
	return nil, false
}

// ForeignError is the error of an Export refused because its folder
// holds entries that are not an export's (files of the datasets, the
// manifest), which the export could overwrite or leave mixed with its
// own.
type ForeignError struct {
	Dir   string
	Names []string // sorted
}

func (e *ForeignError) Error() string {
	names, more := e.Names, ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(names)-10)
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("export: %s holds files that are not an export's: %s%s (write elsewhere, or move them)", e.Dir, strings.Join(q, ", "), more)
}

// ownName reports whether name is one an export writes: the manifest or
// a dataset's file in a format, named as the dataset's files are (its
// name, then a year or a session's date when it is split so). Another
// name that merely starts as a dataset's (a researcher's
// daily_bars-2025-adjusted.parquet) is not an export's: CheckDir refuses
// it, and an export never removes it.
func ownName(name string) bool {
	if name == ManifestName {
		return true
	}
	base, ok := strings.CutSuffix(name, ".parquet")
	if !ok {
		base, ok = strings.CutSuffix(name, ".csv.gz")
	}
	if !ok {
		return false
	}
	for _, d := range ourDatasets {
		rest, ok := strings.CutPrefix(base, d.name)
		if !ok {
			continue
		}
		switch d.split {
		case "year":
			ok = yearSuffix.MatchString(rest)
		case "session":
			ok = sessionSuffix.MatchString(rest)
		default:
			ok = rest == ""
		}
		if ok {
			return true
		}
	}
	return false
}

// The suffixes of a split dataset's file names: -YYYY (fmt's %d of a
// year), -YYYY-MM-DD (engine.Date's String).
var (
	yearSuffix    = regexp.MustCompile(`^-[0-9]+$`)
	sessionSuffix = regexp.MustCompile(`^-[0-9]{4,}-[0-9]{2}-[0-9]{2}$`)
)

// CheckDir returns nil when Export may write into dir: it does not
// exist, or it is a folder holding only an export's files (those of an
// earlier export, replaced or removed). Anything else in it is refused
// with a *ForeignError naming it; a dir that is not a folder, with an
// error.
func CheckDir(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("export: %s exists and is not a folder", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	var foreign []string
	for _, e := range ents {
		name := e.Name()
		if e.Type().IsRegular() && ownName(name) {
			continue
		}
		if strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") {
			continue // a temporary file of a killed export: atomicfile removes it
		}
		if e.IsDir() {
			name += "/"
		}
		foreign = append(foreign, name)
	}
	if len(foreign) > 0 {
		slices.Sort(foreign)
		return &ForeignError{Dir: dir, Names: foreign}
	}
	return nil
}

// plan is one file to write in each format.
type plan struct {
	set *dataset
	f   file
}

func (o *Options) plans(x *exporter) ([]plan, error) {
	want := map[string]bool{}
	for _, n := range o.Datasets {
		if !slices.Contains(Datasets(), n) {
			return nil, fmt.Errorf("export: unknown dataset %q (the datasets: %s)", n, strings.Join(Datasets(), ", "))
		}
		want[n] = true
	}
	var ps []plan
	for _, d := range ourDatasets {
		if len(want) > 0 && !want[d.name] {
			continue
		}
		for _, f := range d.files(x) {
			ps = append(ps, plan{d, f})
		}
	}
	return ps, nil
}

func (o *Options) formats() ([]string, error) {
	if len(o.Formats) == 0 {
		return Formats, nil
	}
	var out []string
	for _, f := range Formats {
		if slices.Contains(o.Formats, f) {
			out = append(out, f)
		}
	}
	for _, f := range o.Formats {
		if !slices.Contains(Formats, f) {
			return nil, fmt.Errorf("export: unknown format %q (the formats: %s)", f, strings.Join(Formats, ", "))
		}
	}
	return out, nil
}

// Export writes the datasets of ds that opt names into the folder dir
// (created when missing; refused as CheckDir says when it holds other
// files), each file replaced atomically (internal/atomicfile), then
// manifest.json, and returns the manifest. Files of an earlier export
// that this one does not write are removed once the manifest is in
// place. Every file is a function of ds and opt alone: the same
// snapshot gives the same bytes. It stops at ctx's end, leaving the
// files it finished (and the previous manifest) in place.
func Export(ctx context.Context, ds *engine.Dataset, dir string, opt Options) (*Manifest, error) {
	if err := CheckDir(dir); err != nil {
		return nil, err
	}
	formats, err := opt.formats()
	if err != nil {
		return nil, err
	}
	if opt.Through == 0 {
		opt.Through = engine.NoDate
	}
	// The files are read from ds in place (a format 6 snapshot's bars and
	// report accounts are in its mapped file, released with it): ds is
	// held until they are written, whoever else drops it meanwhile (a
	// reload).
	defer runtime.KeepAlive(ds)
	x := &exporter{ds: ds, through: opt.Through}
	ps, err := opt.plans(x)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	m := &Manifest{Version: Version, Snapshot: opt.Snapshot, AsOf: ds.AsOf(), Through: engine.NoDate, Files: []Entry{}}
	if opt.Through.Valid() {
		m.Through = opt.Through
	}
	prog := Progress{Total: len(ps)}
	for _, p := range ps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if opt.Progress != nil {
			prog.File = p.f.name
			opt.Progress(prog)
		}
		es, err := writeFile(ctx, x, dir, p, formats, opt.NoSync)
		if err != nil {
			return nil, fmt.Errorf("export: %s: %w", p.f.name, err)
		}
		for _, e := range es {
			prog.Rows += e.Rows
			prog.Bytes += e.Bytes
		}
		m.Files = append(m.Files, es...)
		prog.Done++
	}
	if err := writeManifest(dir, m, opt.NoSync); err != nil {
		return nil, err
	}
	removeOthers(dir, m)
	if opt.Progress != nil {
		prog.File = ""
		opt.Progress(prog)
	}
	return m, nil
}

// writeFile writes one file of p in each format: a scan pass (rows, the
// date range, decimal scales), then the write pass. A file without rows
// is not written.
func writeFile(ctx context.Context, x *exporter, dir string, p plan, formats []string, noSync bool) ([]Entry, error) {
	s := &p.set.schema
	scan := &rows{s: s, scan: true, scale: make([]int8, len(s.cols)), dateCol: s.dateCol(), min: engine.NoDate, max: engine.NoDate}
	for i := range scan.scale {
		scan.scale[i] = minScale
	}
	p.f.emit(scan)
	if scan.n == 0 {
		return nil, nil
	}
	var out []Entry
	for _, format := range formats {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := p.f.name + ext(format)
		af, err := atomicfile.Create(filepath.Join(dir, name), 0o644)
		if err != nil {
			return nil, err
		}
		if noSync {
			af.SkipSync()
		}
		cw := newCounter(af)
		w := &rows{s: s, scale: scan.scale}
		switch format {
		case Parquet:
			err = w.startParquet(cw)
			if err == nil {
				p.f.emit(w)
				err = w.finishParquet()
			}
		case CSV:
			zw := gzipWriter(cw)
			w.csv = bufio.NewWriterSize(zw, 256<<10)
			_, err = w.csv.Write(w.csvHeader())
			if err == nil {
				p.f.emit(w)
				err = w.err
			}
			if err == nil {
				err = w.csv.Flush()
			}
			if err == nil {
				err = zw.Close()
			}
		}
		if err == nil && w.n != scan.n {
			err = fmt.Errorf("BUG: %d rows written, %d scanned", w.n, scan.n)
		}
		if err != nil {
			af.Abort()
			return nil, err
		}
		if err := af.Commit(); err != nil {
			return nil, err
		}
		out = append(out, Entry{Dataset: p.set.name, File: name, Format: format, Rows: w.n, Bytes: cw.n, SHA256: cw.sum(),
			MinDate: scan.min, MaxDate: scan.max})
	}
	return out, nil
}

func ext(format string) string {
	if format == CSV {
		return ".csv.gz"
	}
	return ".parquet"
}

func writeManifest(dir string, m *Manifest, noSync bool) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	af, err := atomicfile.Create(filepath.Join(dir, ManifestName), 0o644)
	if err != nil {
		return err
	}
	defer af.Abort()
	if noSync {
		af.SkipSync()
	}
	if _, err := af.Write(b); err != nil {
		return err
	}
	return af.Commit()
}

// removeOthers removes the export files of dir that m does not list
// (those of an earlier export of other datasets, years or sessions).
func removeOthers(dir string, m *Manifest) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); n != ManifestName && e.Type().IsRegular() && ownName(n) {
			if _, ok := m.Find(n); !ok {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
}

// ReadManifest reads the manifest of an export's folder.
func ReadManifest(dir string) (*Manifest, error) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(f, 64<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestName), err)
	}
	return &m, nil
}
