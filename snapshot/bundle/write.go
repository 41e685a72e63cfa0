package bundle

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// WriteOptions configures Write.
type WriteOptions struct {
	// Compression of every file but meta.json: "zstd" (the default when
	// empty; level "fastest", about zstd level 1, suffix .zst), "gzip"
	// (level 6, no name or time in the header, suffix .gz) or "none".
	Compression string
	// Meter, when not nil, follows the write: phase "write bundle", in
	// rows (a daily or intraday bar, or one entity, is a row).
	Meter Meter
	// Force lets Write replace a folder that holds entries other than a
	// bundle's, deleting them. false (default): such a folder is refused
	// with a *ForeignError naming them, and nothing is written.
	Force bool
}

// ForeignError is the error of a Write refused because its folder holds
// entries that are not a bundle's, which replacing the folder would
// delete (WriteOptions.Force allows it).
type ForeignError struct {
	Dir   string   // the folder
	Names []string // the entries, sorted; a folder's name ends with "/"
}

func (e *ForeignError) Error() string {
	names, more := e.Names, ""
	if len(names) > 10 {
		names, more = names[:10], fmt.Sprintf(" and %d more", len(names)-10)
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("bundle: %s holds files that are not a bundle's, which replacing it would delete: %s%s", e.Dir, strings.Join(q, ", "), more)
}

// ownEntry reports whether e is an entry of a bundle folder that Write may
// replace: a data file (Files, plain or .zst or .gz), manifest.json, or a
// README, LICENSE, NOTICE or PROVENANCE file, which Write carries over.
// Anything else is the user's: other and hidden files, folders, links.
func ownEntry(e fs.DirEntry) bool {
	name := e.Name()
	if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
		return false
	}
	if name == FileManifest || ignoredFile(name) {
		return true
	}
	base, _ := splitName(name)
	return slices.Contains(Files, base)
}

// CheckDir returns the error Write(dir, u, opt) would return at once
// because of dir (see Write): a *ForeignError when dir holds entries that
// are not a bundle's and opt.Force is not set, an error when dir is not a
// folder. A caller that computes its Universe for long (an import) checks
// first, so as not to fail at the end.
func CheckDir(dir string, opt WriteOptions) error {
	dir, err := atomicfile.Target(filepath.Clean(dir))
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return checkFolder(dir, opt.Force)
}

// checkFolder returns nil when Write may replace dir: it does not exist,
// or it is a folder holding only a bundle's entries (any entries with
// force). A dir that is not a folder is refused too.
func checkFolder(dir string, force bool) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("bundle: %s exists and is not a folder", dir)
	}
	if force {
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	var foreign []string
	for _, e := range ents {
		if ownEntry(e) {
			continue
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		foreign = append(foreign, n)
	}
	if len(foreign) > 0 {
		return &ForeignError{Dir: dir, Names: foreign}
	}
	return nil
}

func (o WriteOptions) compression() (string, error) {
	switch o.Compression {
	case "", CompressZstd:
		return CompressZstd, nil
	case CompressGzip, CompressNone:
		return o.Compression, nil
	}
	return "", fmt.Errorf("bundle: unknown compression %q (want zstd, gzip or none)", o.Compression)
}

func suffix(comp string) string {
	switch comp {
	case CompressZstd:
		return ".zst"
	case CompressGzip:
		return ".gz"
	}
	return ""
}

// Write writes u as a bundle into directory dir. The entities are written
// in canonical order (u itself is not modified); u.Derived is not written.
// meta.json, companies and securities are always written, other files only
// when they have rows. The output depends on u only: the same Universe
// gives the same bytes.
//
// The bundle is written into a temporary sibling folder (see package
// atomicfile) and replaces dir as a whole, in one step, only once every
// file and then the manifest (manifest.json: files, sizes, rows and
// checksums) are written and synced. A Write that fails or is killed
// leaves dir as it was; the temporary folders of killed writers are
// removed by the next Write of the same dir. Of a previous dir, only files
// that are not data (README, LICENSE, NOTICE, PROVENANCE) are carried over.
//
// A dir that exists must be a bundle's folder: one that holds anything but
// a bundle's data files, manifest.json and those carried-over files
// (notes, subfolders, hidden files, links) is refused with a
// *ForeignError naming them, before anything is written and again just
// before the swap, unless opt.Force is set. A dir that is a symbolic link
// is written through: the folder it names is replaced and the link stays
// (atomicfile.Target).
func Write(dir string, u *engine.Universe, opt WriteOptions) error {
	return WriteContext(context.Background(), dir, u, opt)
}

// WriteContext is Write stopped by ctx: the files are written through a
// writer that fails once ctx ends, and ctx is checked again before the
// manifest and before the swap; then the temporary folder is removed,
// dir is left as it was and ctx's error is returned.
func WriteContext(ctx context.Context, dir string, u *engine.Universe, opt WriteOptions) error {
	comp, err := opt.compression()
	if err != nil {
		return err
	}
	if u == nil {
		return errors.New("bundle: nil Universe")
	}
	if dir, err = atomicfile.Target(filepath.Clean(dir)); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := checkFolder(dir, opt.Force); err != nil {
		return err
	}
	parent, name := filepath.Split(dir)
	if parent == "" {
		parent = "."
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	atomicfile.RemoveStale(parent, name)
	stage, err := os.MkdirTemp(parent, atomicfile.TempPattern(name))
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	defer os.RemoveAll(stage) // after a successful swap it no longer exists
	if err := os.Chmod(stage, 0o755); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := carryOver(dir, stage); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	c := canonicalCopy(u)

	type job struct {
		base  string
		comp  string
		write func(w io.Writer) error
	}
	var jobs []job
	add := func(base string, n int, required bool, write func(w io.Writer) error) {
		if n > 0 || required {
			jobs = append(jobs, job{base, comp, write})
		}
	}
	m := meterOr(opt.Meter)
	add(FileDaily, len(c.Daily), false, func(w io.Writer) error {
		dw := NewDailyWriter(w)
		for i := range c.Daily {
			if err := dw.WriteSeries(&c.Daily[i]); err != nil {
				return err
			}
			m.Add(int64(len(c.Daily[i].Dates)))
		}
		return dw.Flush()
	})
	add(FileReports, len(c.Reports), false, reportsJob(c.Reports, m))
	add(FileIntraday, len(c.Intraday), false, func(w io.Writer) error {
		iw := NewIntradayWriter(w)
		for i := range c.Intraday {
			if err := iw.WriteIntraday(&c.Intraday[i]); err != nil {
				return err
			}
			m.Add(int64(len(c.Intraday[i].Times)))
		}
		return iw.Flush()
	})
	add(FileFundReports, len(c.FundReports), false, jsonlJob(c.FundReports, m))
	add(FileCashActions, len(c.CashActions), false, jsonlJob(c.CashActions, m))
	add(FileInsiderReports, len(c.InsiderReports), false, jsonlJob(c.InsiderReports, m))
	add(FileDocuments, len(c.Documents), false, jsonlJob(c.Documents, m))
	add(FileShares, len(c.Shares), false, jsonlJob(c.Shares, m))
	add(FileShareActions, len(c.ShareActions), false, jsonlJob(c.ShareActions, m))
	add(FileIndexes, len(c.Indexes), false, jsonlJob(c.Indexes, m))
	add(FileSecurities, len(c.Securities), true, jsonlJob(c.Securities, m))
	add(FileCompanies, len(c.Companies), true, jsonlJob(c.Companies, m))
	add(FileRenames, len(c.Renames), false, jsonlJob(c.Renames, m))
	add(FileSectors, len(c.Sectors), false, jsonlJob(c.Sectors, m))
	jobs = append(jobs, job{FileMeta, CompressNone, func(w io.Writer) error {
		b, err := json.Marshal(&c.Meta)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}})

	rows := int64(len(c.Reports) + len(c.FundReports) + len(c.CashActions) + len(c.InsiderReports) + len(c.Documents) +
		len(c.Shares) + len(c.ShareActions) + len(c.Indexes) + len(c.Securities) + len(c.Companies) + len(c.Renames) + len(c.Sectors))
	for i := range c.Daily {
		rows += int64(len(c.Daily[i].Dates))
	}
	for i := range c.Intraday {
		rows += int64(len(c.Intraday[i].Times))
	}
	m.Begin("write bundle", "rows", rows)
	work := make(chan job)
	errs := make([]error, len(jobs))
	man := &Manifest{Version: ManifestVersion, Files: make([]ManifestFile, len(jobs))}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				i := slices.IndexFunc(jobs, func(x job) bool { return x.base == j.base })
				man.Files[i], errs[i] = writeFile(stage, j.base, j.comp, func(w io.Writer) error {
					return j.write(ctxWriter{ctx, w})
				})
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := writeManifest(stage, man); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if err := syncDir(stage); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	if testHookBeforeSwap != nil {
		if err := testHookBeforeSwap(stage); err != nil {
			return err
		}
	}
	if err := checkFolder(dir, opt.Force); err != nil {
		return err // the user's files appeared meanwhile
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := atomicfile.SwapDir(stage, dir); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}

// ctxWriter is a writer that fails with ctx's error once ctx ends.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// testHookBeforeSwap, when set by a test, runs with the complete staging
// folder just before it replaces the bundle; an error stops Write there.
var testHookBeforeSwap func(stage string) error

// carryOver copies the files of the folder old that are not data
// (ignoredFile: README, LICENSE, NOTICE, PROVENANCE; not hidden files)
// into stage. A missing old folder carries nothing.
func carryOver(old, stage string) error {
	ents, err := os.ReadDir(old)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !ignoredFile(e.Name()) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(old, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(stage, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// syncDir syncs the directory entries of dir (when syncFiles is set).
func syncDir(dir string) error {
	if !syncFiles {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// canonicalCopy returns a shallow copy of u whose entity slices are fresh
// and in canonical order.
func canonicalCopy(u *engine.Universe) *engine.Universe {
	c := &engine.Universe{
		Meta:           u.Meta,
		Sectors:        slices.Clone(u.Sectors),
		Companies:      slices.Clone(u.Companies),
		Securities:     slices.Clone(u.Securities),
		Renames:        slices.Clone(u.Renames),
		Daily:          slices.Clone(u.Daily),
		Intraday:       slices.Clone(u.Intraday),
		Indexes:        slices.Clone(u.Indexes),
		Reports:        slices.Clone(u.Reports),
		Shares:         slices.Clone(u.Shares),
		CashActions:    slices.Clone(u.CashActions),
		ShareActions:   slices.Clone(u.ShareActions),
		FundReports:    slices.Clone(u.FundReports),
		InsiderReports: slices.Clone(u.InsiderReports),
		Documents:      slices.Clone(u.Documents),
	}
	Canonicalize(c)
	return c
}

func jsonlJob[T any](vs []T, m Meter) func(w io.Writer) error {
	return func(w io.Writer) error {
		jw := NewJSONLWriter(w)
		for i := range vs {
			if err := jw.Write(&vs[i]); err != nil {
				return err
			}
			m.Add(1)
		}
		return jw.Flush()
	}
}

// reportOut is a report as written: its words and times spelled out,
// its accounts as code, name, value and fixed (engine keeps them as
// Labels, Stamps and interned lines), in reportIn's order.
type reportOut struct {
	CompanyID     string          `json:"company_id"`
	Statement     string          `json:"statement"`
	Aggregation   string          `json:"aggregation"`
	Form          string          `json:"form"`
	ReferenceDate engine.Date     `json:"reference_date"`
	StartDate     engine.Date     `json:"start_date"`
	EndDate       engine.Date     `json:"end_date"`
	PublishDate   time.Time       `json:"publish_date"`
	RetrievalDate time.Time       `json:"retrieval_date"`
	Version       int             `json:"version"`
	Accounts      []accountOut    `json:"accounts"`
	Sources       []engine.Source `json:"sources"`
}

type accountOut struct {
	Code  string     `json:"code"`
	Name  string     `json:"name"`
	Value engine.Num `json:"value"`
	Fixed bool       `json:"fixed"`
}

func reportsJob(rs []engine.Report, m Meter) func(w io.Writer) error {
	return func(w io.Writer) error {
		jw := NewJSONLWriter(w)
		buf := make([]accountOut, 0, 64) // non-nil: an empty list stays []
		for i := range rs {
			r := &rs[i]
			out := reportOut{
				CompanyID:     r.CompanyID,
				Statement:     r.Statement.String(),
				Aggregation:   r.Aggregation.String(),
				Form:          r.Form.String(),
				ReferenceDate: r.ReferenceDate,
				StartDate:     r.StartDate,
				EndDate:       r.EndDate,
				PublishDate:   r.PublishDate.Time(),
				RetrievalDate: r.RetrievalDate.Time(),
				Version:       r.Version,
				Sources:       r.Sources.All(),
			}
			if r.Accounts != nil {
				buf = buf[:0]
				acc := r.AccountList()
				for j := range acc.Len() {
					a := acc.At(j)
					buf = append(buf, accountOut{a.Code(), a.Name(), a.Value, a.Fixed()})
				}
				out.Accounts = buf
			}
			if err := jw.Write(&out); err != nil {
				return err
			}
			m.Add(1)
		}
		return jw.Flush()
	}
}

// syncFiles makes Close sync each file before renaming it. Tests that
// write many bundles turn it off.
var syncFiles = true

// writeFile writes dir/base+suffix through a temporary file and returns
// its manifest entry.
func writeFile(dir, base, comp string, write func(w io.Writer) error) (ManifestFile, error) {
	wc, err := Create(dir, base, comp)
	if err != nil {
		return ManifestFile{}, err
	}
	fw := wc.(*fileWriter)
	if err := write(wc); err != nil {
		fw.abort()
		return ManifestFile{}, fmt.Errorf("bundle: %s: %w", base, err)
	}
	if err := wc.Close(); err != nil {
		return ManifestFile{}, err
	}
	return fw.stats.entry(fw.name), nil
}

// Create returns a writer of the bundle file base (one of Files) in dir,
// compressed with comp ("zstd", "gzip" or "none"; "" is zstd) and named
// with the matching suffix. The content goes to an atomicfile.File that
// Close commits into place; without Close nothing appears. It lets an
// importer stream a big file (see NewDailyWriter, NewJSONLWriter). Any
// file of the same base name with another suffix is removed by Close.
func Create(dir, base, comp string) (io.WriteCloser, error) {
	if !slices.Contains(Files, base) {
		return nil, fmt.Errorf("bundle: unknown file %q", base)
	}
	comp, err := WriteOptions{Compression: comp}.compression()
	if err != nil {
		return nil, err
	}
	name := base + suffix(comp)
	f, err := atomicfile.Create(filepath.Join(dir, name), 0o644)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	if !syncFiles {
		f.SkipSync()
	}
	fw := &fileWriter{f: f, dir: dir, base: base, name: name, stats: newFileStats()}
	fw.bw = bufio.NewWriterSize(fw.stats.stored(f), 1<<20)
	switch comp {
	case CompressZstd:
		z, err := zstd.NewWriter(fw.bw, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if err != nil {
			fw.abort()
			return nil, err
		}
		fw.w, fw.close = z, z.Close
	case CompressGzip:
		g, err := gzip.NewWriterLevel(fw.bw, 6)
		if err != nil {
			fw.abort()
			return nil, err
		}
		fw.w, fw.close = g, g.Close
	default:
		fw.w, fw.close = fw.bw, func() error { return nil }
	}
	return fw, nil
}

type fileWriter struct {
	f         *atomicfile.File
	bw        *bufio.Writer
	w         io.Writer
	close     func() error
	dir, base string
	name      string
	done      bool
	stats     *fileStats
}

func (fw *fileWriter) Write(p []byte) (int, error) {
	fw.stats.content(p)
	return fw.w.Write(p)
}

func (fw *fileWriter) abort() {
	if !fw.done {
		fw.done = true
		fw.f.Abort()
	}
}

// Close finishes the compressed stream, removes the base's files of other
// suffixes and commits the file.
func (fw *fileWriter) Close() error {
	if fw.done {
		return errors.New("bundle: file already closed")
	}
	err := fw.close()
	if err == nil {
		err = fw.bw.Flush()
	}
	if err != nil {
		fw.abort()
		return fmt.Errorf("bundle: %s: %w", fw.name, err)
	}
	for _, s := range []string{"", ".zst", ".gz"} {
		if n := fw.base + s; n != fw.name {
			if err := os.Remove(filepath.Join(fw.dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				fw.abort()
				return fmt.Errorf("bundle: %w", err)
			}
		}
	}
	fw.done = true
	if err := fw.f.Commit(); err != nil {
		return fmt.Errorf("bundle: %s: %w", fw.name, err)
	}
	return nil
}

// JSONLWriter writes entities as JSON Lines (one object per line, the
// JSON tags of engine's model as field names). It is not safe for
// concurrent use; call Flush when done.
type JSONLWriter struct{ lines }

// NewJSONLWriter returns a JSONLWriter writing to w.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	return &JSONLWriter{newLines(w, "")}
}

// Write appends v (a pointer to an entity, e.g. *engine.Company) as one
// line.
func (j *JSONLWriter) Write(v any) error {
	if j.err != nil {
		return j.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		j.err = err
		return err
	}
	j.buf = append(j.buf, b...)
	return j.end()
}
