package snapshot

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
)

// DefaultLevel is the zstd level used when WriteOptions.Level is 0.
const DefaultLevel = 3

// partTarget is the estimated raw size at which a kind's items are cut
// into a new section part (bytes). Parts bound decode memory and let
// sections load in parallel.
var partTarget = 4 << 20

// WriteOptions controls Write. The zero value is valid.
type WriteOptions struct {
	// Level is the zstd level, 1 (fastest) to 22; 0 means DefaultLevel.
	Level int
	// BuildTime is stored in the header; zero means Meta.AsOf, so the same
	// Universe always gives the same bytes.
	BuildTime time.Time
	// RequireManifest makes BuildFromBundle refuse a bundle without
	// manifest.json (bundle.ErrNoManifest), one whose writer may have been
	// stopped midway. Hand-written bundles have none.
	RequireManifest bool
	// Progress, when not nil, follows BuildFromBundle through its phases
	// (see Progress).
	Progress *Progress
	// Version is the format version Write and WriteFile write: 0 means
	// FormatVersion; 6 writes the daily bars as a column section used in
	// place (see docs/snapshot-format.md, "Format 6"), which this package
	// reads. BuildFromBundle and BuildFromUniverseContext write either.
	Version uint16
	// Daily, when not nil, holds the daily bars' columns written ahead
	// (see DailySpill): BuildFromUniverseContext then reads of
	// Universe.Daily only the tickers, dates and closes. Format 6 only;
	// Write, WriteFile and BuildFromBundle refuse it.
	Daily *DailySpill
}

// encoded is a snapshot ready to be written: header bytes then parts
// (the last ones, in format 6, the column area's padding and bytes),
// each in memory or in the spill file.
type encoded struct {
	header []byte
	parts  []piece
	spill  *spillFile // holds the parts not in memory (nil: none)
	// freeCopied frees each piece's bytes of the spill file once copied
	// (each piece is written once: a build's).
	freeCopied bool
	freed      []piece // copied stretches not yet freed (see free)
	freedN     int64
	h          Header
}

// piece is bytes of a snapshot being written: b, or when b is nil, n
// bytes at off of the spill file.
type piece struct {
	b      []byte
	off, n int64
}

func (p piece) len() int64 {
	if p.b != nil {
		return int64(len(p.b))
	}
	return p.n
}

// spillFile holds a build's compressed sections and columns on disk as
// they are made, instead of in memory until the file is assembled: its
// pieces are then copied after the header (by copy_file_range where the
// system has it). It is unlinked once created, so it leaves nothing
// behind however the build ends (where an open file cannot be removed,
// Close removes it).
type spillFile struct {
	mu   sync.Mutex
	f    *os.File
	n    int64
	name string // to remove after closing ("": unlinked already)
}

// newSpill creates the spill file of a build writing path, in path's
// folder (the same file system as the output, not a tmpfs /tmp).
func newSpill(path string) (*spillFile, error) {
	path, err := atomicfile.Target(path)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".spill-*")
	if err != nil {
		return nil, err
	}
	s := &spillFile{f: f}
	if os.Remove(f.Name()) != nil {
		s.name = f.Name() // a system that keeps an open file's name: removed by Close
	}
	return s, nil
}

// put appends b and returns its piece.
func (s *spillFile) put(b []byte) (piece, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(b); err != nil {
		return piece{}, fmt.Errorf("snapshot: spill file: %w", err)
	}
	p := piece{off: s.n, n: int64(len(b))}
	s.n += p.n
	return p, nil
}

// Close closes (and so removes) the spill file.
func (s *spillFile) Close() error {
	if s == nil {
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	return err
}

// writeTo writes p to w: from memory, or copied from the spill file (by
// w.ReadFrom when w has it, copy_file_range for a file).
func (e *encoded) writePiece(w io.Writer, p piece) error {
	if p.b != nil || p.n == 0 {
		_, err := w.Write(p.b)
		return err
	}
	e.spill.mu.Lock()
	defer e.spill.mu.Unlock()
	if _, err := e.spill.f.Seek(p.off, io.SeekStart); err != nil {
		return err
	}
	// Copied a chunk at a time when freed as copied, so that the copy
	// and the spill file never hold a large piece twice on disk.
	chunk := p.n
	if e.freeCopied {
		chunk = min(chunk, spillChunk)
	}
	for off := p.off; off < p.off+p.n; off += chunk {
		k := min(chunk, p.off+p.n-off)
		n, err := io.Copy(w, &io.LimitedReader{R: e.spill.f, N: k})
		if err == nil && n != k {
			err = fmt.Errorf("snapshot: spill file: %d bytes of %d copied", n, k)
		}
		if err != nil {
			return err
		}
		if e.freeCopied {
			e.free(off, k)
		}
	}
	return nil
}

// free frees bytes [off, off+n) of the spill file, copied: a large
// stretch at once, small ones (the daily columns' series, copied in
// the file's order, not the spill file's) gathered until they add up to
// spillChunk, then freed as the fewest ranges.
func (e *encoded) free(off, n int64) {
	if n >= spillChunk {
		freeSpill(e.spill.f, off, n)
		return
	}
	e.freed = append(e.freed, piece{off: off, n: n})
	if e.freedN += n; e.freedN >= spillChunk {
		e.flushFreed()
	}
}

// flushFreed frees the stretches free gathered.
func (e *encoded) flushFreed() {
	fs := e.freed
	slices.SortFunc(fs, func(a, b piece) int { return cmp.Compare(a.off, b.off) })
	for i := 0; i < len(fs); {
		j, end := i+1, fs[i].off+fs[i].n
		for j < len(fs) && fs[j].off <= end {
			end = max(end, fs[j].off+fs[j].n)
			j++
		}
		freeSpill(e.spill.f, fs[i].off, end-fs[i].off)
		i = j
	}
	e.freed, e.freedN = fs[:0], 0
}

// spillChunk is the most a build copies from its spill file before it
// frees what it copied.
const spillChunk = 64 << 20

// Write encodes u as a snapshot to w. The output depends only on u and
// opt (byte-identical for equal inputs). u is not modified.
func Write(w io.Writer, u *engine.Universe, opt WriteOptions) error {
	enc, err := encode(u, opt, false)
	if err != nil {
		return err
	}
	if _, err := w.Write(enc.header); err != nil {
		return err
	}
	for _, p := range enc.parts {
		if err := enc.writePiece(w, p); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes u as a snapshot to path atomically: a temporary file in
// the same directory is written, synced and renamed over path, so readers
// see the old file or the new one, never a partial one. When path is a
// symbolic link, the file it names is replaced, in its own directory, and
// the link stays (atomicfile.Target).
func WriteFile(path string, u *engine.Universe, opt WriteOptions) error {
	enc, err := encode(u, opt, false)
	if err != nil {
		return err
	}
	return writeEncoded(context.Background(), path, enc, nil)
}

// servableWith loads the snapshot at path as pregao serve does (every
// check of the format, then engine.Build's), reporting the load to prog:
// a file is published only if a server would accept it. One validation,
// shared by build and serve.
func servableWith(path string, prog *Progress) error {
	return servableChecked(path, prog, false)
}

// servableChecked is servableWith for a file whose column blocks, when
// verified is set, were verified already (verifyColumns): the load
// leaves them unchecked, as serve's does (LoadOptions.LazyVerify),
// without a background pass, so that it maps only the pages it reads.
func servableChecked(path string, prog *Progress, verified bool) error {
	opt := LoadOptions{Progress: prog}
	if verified {
		opt.LazyVerify, opt.VerifyRate = true, -1
	}
	if _, _, err := Load(path, opt); err != nil {
		return fmt.Errorf("snapshot: a server would refuse this snapshot: %w", err)
	}
	return nil
}

// verifyColumns verifies the column blocks of the snapshot at path,
// whose column area starts at off, against the checksums of blocks
// (offsets from the area's start) by reading the file, not mapping it:
// the pages read are the system's cache, not the process's memory. The
// blocks must cut the area's size bytes in order, without gaps: a kind
// whose blocks were not listed is an error, not a block left unchecked.
func verifyColumns(path string, off, size int64, blocks []colBlock) error {
	if err := checkBlocks(blocks, size); err != nil {
		return fmt.Errorf("snapshot: the build's column blocks: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Blocks in runs of about 8 MiB, on every core.
	var runs [][2]int
	for lo := 0; lo < len(blocks); {
		hi, n := lo, int64(0)
		for hi < len(blocks) && (hi == lo || n < 8<<20) {
			n += blocks[hi].N
			hi++
		}
		runs = append(runs, [2]int{lo, hi})
		lo = hi
	}
	return parallel(len(runs), func(r int) error {
		var buf []byte
		for i := runs[r][0]; i < runs[r][1]; i++ {
			b := blocks[i]
			if int64(cap(buf)) < b.N {
				buf = make([]byte, b.N)
			}
			if _, err := f.ReadAt(buf[:b.N], off+b.Off); err != nil {
				return fmt.Errorf("snapshot: column block %d: %w", i, err)
			}
			if xxhash.Sum64(buf[:b.N]) != b.Sum {
				return fmt.Errorf("snapshot: a server would refuse this snapshot: %w: column block %d (bytes %d+%d of the column area)", ErrChecksum, i, b.Off, b.N)
			}
		}
		return nil
	})
}

// writeEncoded writes enc to path (through its symbolic links: to the file
// they name, atomicfile.Target) through an atomicfile.File, which check
// (when not nil) must accept, read back from the temporary file, before
// Commit renames it over path. ctx is checked between parts and before
// the commit: once it ends, the temporary file is removed and path left
// as it was.
func writeEncoded(ctx context.Context, path string, enc *encoded, check func(string) error) error {
	path, err := atomicfile.Target(path)
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.Write(enc.header); err != nil {
		return err
	}
	for _, p := range enc.parts {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.b == nil && p.n > 0 {
			// Copied file to file: bw's bytes go first.
			if err := bw.Flush(); err != nil {
				return err
			}
			if err := enc.writePiece(f, p); err != nil {
				return err
			}
			continue
		}
		if _, err := bw.Write(p.b); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if enc.spill != nil && len(enc.freed) > 0 {
		enc.spill.mu.Lock()
		enc.flushFreed()
		enc.spill.mu.Unlock()
	}
	if check != nil {
		if err := check(f.Name()); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return f.Commit()
}

// job is one section part: items [lo,hi) of kinds[k].
type job struct {
	k, lo, hi int
}

// splitParts cuts the kinds of index from..to-1 into parts.
func splitParts(u *engine.Universe, from, to int) []job {
	var jobs []job
	for ki := from; ki < to; ki++ {
		k := &kinds[ki]
		n := k.count(u)
		lo, w := 0, 0
		for i := 0; i < n; i++ {
			w += k.weight(u, i)
			if w >= partTarget {
				jobs = append(jobs, job{ki, lo, i + 1})
				lo, w = i+1, 0
			}
		}
		if lo < n {
			jobs = append(jobs, job{ki, lo, n})
		}
	}
	return jobs
}

// encoder compresses section parts of one snapshot.
type encoder struct {
	level int
	zw    *zstd.Encoder
	// colParts, in format 6, holds the one part of each kind whose
	// columns are in the column area (daily, intraday): the rows' total
	// (its nested count) and its body (see columnPart).
	colParts map[string]colPart
	// accounts, in format 6, is where the reports' accounts are in the
	// column area (nil: format 5, the accounts in the reports parts).
	accounts *accountCols
	// fund, in format 6, is the fund ratios part (its points in the
	// column area, after the ratio points'; nil: none, or format 5).
	fund *fundPart
	// orders, in format 6, holds the file order of a kind whose items are
	// stored in another order than the Universe's (see penc.order).
	orders  map[string][]int32
	version uint16          // the format version written
	spill   *spillFile      // where run puts the compressed parts (nil: kept in memory)
	daily   *DailySpill     // the daily columns written ahead (nil: from the Universe)
	blocks  []colBlock      // the column area's blocks streamed so far, from the area's start
	prog    *Progress       // counts the sections encoded by run (nil: none)
	ctx     context.Context // checked by run before each section (nil: never ends)
}

func newEncoder(opt WriteOptions) (*encoder, error) {
	level := opt.Level
	if level == 0 {
		level = DefaultLevel
	}
	if level < 1 || level > 22 {
		return nil, fmt.Errorf("snapshot: zstd level %d out of range 1..22", opt.Level)
	}
	zw, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithConcurrentBlocks(false))
	if err != nil {
		return nil, fmt.Errorf("snapshot: zstd: %w", err)
	}
	return &encoder{level: level, zw: zw, prog: opt.Progress}, nil
}

// run encodes and compresses jobs in parallel and returns their bytes
// and sections in job order. done(k), when not nil, is called once all
// the jobs of kinds[k] are finished.
func (c *encoder) run(u *engine.Universe, jobs []job, done func(k int)) ([]piece, []Section, error) {
	left := make([]atomic.Int64, len(kinds)) // jobs of each kind not yet finished
	for _, j := range jobs {
		left[j.k].Add(1)
	}
	parts := make([]piece, len(jobs))
	secs := make([]Section, len(jobs))
	err := parallel(len(jobs), func(i int) error {
		if c.ctx != nil {
			if err := c.ctx.Err(); err != nil {
				return err
			}
		}
		j := jobs[i]
		k := &kinds[j.k]
		e := newPenc(len(k.nests))
		if k.name == "reports" {
			e.acc = c.accounts
		}
		if k.name == "fund_ratios" {
			e.fund = c.fund
		}
		e.order, e.version = c.orders[k.name], c.version
		if cp, ok := c.colParts[k.name]; ok {
			// The kind's bars are in the column area (and may be
			// released from u already): the part is their index.
			e.nests[0] = cp.rows
			e.body = append(e.body, cp.body...)
		} else {
			est := 0
			for i := j.lo; i < j.hi; i++ {
				est += k.weight(u, i)
			}
			e.body = make([]byte, 0, est+est/4+64)
			k.enc(e, u, j.lo, j.hi)
		}
		if e.err != nil {
			return fmt.Errorf("snapshot: %s items %d..%d: %w", k.name, j.lo, j.hi-1, e.err)
		}
		raw := e.finish()
		if len(raw) > maxSectionRaw {
			return fmt.Errorf("snapshot: %s items %d..%d: section of %d bytes exceeds the limit %d", k.name, j.lo, j.hi-1, len(raw), maxSectionRaw)
		}
		comp := c.zw.EncodeAll(raw, make([]byte, 0, len(raw)/3+64))
		parts[i] = piece{b: comp}
		if c.spill != nil {
			p, err := c.spill.put(comp)
			if err != nil {
				return err
			}
			parts[i] = p
		}
		secs[i] = Section{
			Name: k.name, Items: j.hi - j.lo,
			Compressed: int64(len(comp)), Raw: int64(len(raw)),
			Checksum: xxhash.Sum64(comp), RawChecksum: xxhash.Sum64(raw),
		}
		c.prog.Add(1)
		if left[j.k].Add(-1) == 0 && done != nil {
			done(j.k)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return parts, secs, nil
}

// encode encodes u. With drop, u belongs to the caller no more: each
// kind's slice is set to nil as soon as all its parts are encoded.
func encode(u *engine.Universe, opt WriteOptions, drop bool) (*encoded, error) {
	if opt.Daily != nil {
		return nil, errSpilledDaily
	}
	u, err := withReports(u)
	if err != nil {
		return nil, err
	}
	c, err := newEncoder(opt)
	if err != nil {
		return nil, err
	}
	defer c.zw.Close()
	if err := checkSeries(u); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkIndicators(u, true); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	version := opt.Version
	if version == 0 {
		version = FormatVersion
	}
	if version != FormatVersion && version != columnsVersion {
		return nil, fmt.Errorf("snapshot: format version %d is not written (%d or %d)", version, FormatVersion, columnsVersion)
	}
	c.version = version
	jobs := splitParts(u, 0, len(kinds))
	counts := countsOf(u)
	var cols []byte
	if version == columnsVersion {
		if err := c.orderCash(u); err != nil {
			return nil, err
		}
		cols = c.columns(u, counts)
		if cols, err = c.appendAccountColumns(cols, u); err != nil {
			return nil, err
		}
		// The reports part is the heads' index and the source lists.
		jobs = onePart(jobs, "reports")
		c.accounts.first = accountPartFirsts(u, jobs)
		if len(u.Derived.Ratios) > 0 {
			if cols, err = appendRatioPart(c, cols, &u.Derived); err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
		if len(u.Derived.FundRatios) > 0 {
			if cols, err = appendFundPart(c, cols, &u.Derived); err != nil {
				return nil, fmt.Errorf("snapshot: %w", err)
			}
		}
		jobs = onePart(jobs, "daily")
		jobs = onePart(jobs, "intraday")
		jobs = onePart(jobs, "ratios")
		jobs = onePart(jobs, "fund_ratios")
	}
	var done func(k int)
	if drop {
		done = func(k int) { dropKind(u, kinds[k].name) }
	}
	parts, secs, err := c.run(u, jobs, done)
	if err != nil {
		return nil, err
	}
	return assemble(u.Meta, opt, version, c.level, counts, parts, secs, piece{b: cols})
}

// cashOrderOf is cashOrder (a variable so that a test can write a file
// out of order).
var cashOrderOf = cashOrder

// orderCash records the order in which format 6 stores u's cash actions
// (cashOrder).
func (c *encoder) orderCash(u *engine.Universe) error {
	order, err := cashOrderOf(u.CashActions)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if order != nil {
		c.orders = map[string][]int32{"cash_actions": order}
	}
	return nil
}

// columns returns the column area of u's daily and intraday bars (format
// 6) and records their parts (the rows' totals and indexes) in c.
func (c *encoder) columns(u *engine.Universe, counts map[string]int) []byte {
	var cols []byte
	c.colParts = map[string]colPart{}
	if len(u.Daily) > 0 {
		var ix dailyIndex
		cols, ix = appendDailyColumns(cols, u.Daily)
		c.colParts["daily"] = newColPart(counts[countDailyRows], 0, len(cols), ix)
	}
	if len(u.Intraday) > 0 {
		base := len(cols)
		var ix dailyIndex
		cols, ix = appendIntradayColumns(cols, u.Intraday)
		c.colParts["intraday"] = newColPart(counts[countIntradayRows], base, len(cols)-base, ix)
	}
	return cols
}

// streamColumns is columns writing the area to the spill file as it is
// made, a block at a time: its pieces of the spill file, in order (the
// daily columns written ahead, c.daily, are their own pieces).
func (c *encoder) streamColumns(u *engine.Universe, counts map[string]int) ([]piece, error) {
	c.colParts = map[string]colPart{}
	put := func(b []byte) error {
		_, err := c.spill.put(b)
		return err
	}
	var area []piece
	var size int64
	if len(u.Daily) > 0 {
		var (
			n   int64
			ix  dailyIndex
			err error
		)
		if c.daily != nil {
			area, n, ix, err = c.daily.area(u.Daily)
		} else {
			start := c.spill.n
			n, ix, err = streamDailyColumns(u.Daily, put)
			if err == nil && c.spill.n-start != n {
				err = fmt.Errorf("snapshot: spill file: %d bytes of daily columns written, %d made", c.spill.n-start, n)
			}
			area = append(area, piece{off: start, n: n})
		}
		if err != nil {
			return nil, err
		}
		c.colParts["daily"] = newColPart(counts[countDailyRows], 0, int(n), ix)
		c.addBlocks(0, ix.Blocks)
		size = n
	}
	if len(u.Intraday) > 0 {
		start := c.spill.n
		n, ix, err := streamIntradayColumns(u.Intraday, put)
		if err != nil {
			return nil, err
		}
		if c.spill.n-start != n {
			return nil, fmt.Errorf("snapshot: spill file: %d bytes of intraday columns written, %d made", c.spill.n-start, n)
		}
		c.colParts["intraday"] = newColPart(counts[countIntradayRows], int(size), int(n), ix)
		c.addBlocks(size, ix.Blocks)
		area = append(area, piece{off: start, n: n})
	}
	return area, nil
}

// addBlocks records the blocks of a kind's columns at base in the column
// area (see verifyColumns).
func (c *encoder) addBlocks(base int64, blocks []colBlock) {
	for _, b := range blocks {
		b.Off += base
		c.blocks = append(c.blocks, b)
	}
}

// piecesLen returns the bytes of ps.
func piecesLen(ps []piece) int64 {
	var n int64
	for _, p := range ps {
		n += p.len()
	}
	return n
}

// colPart is a format 6 part whose columns are in the column area.
type colPart struct {
	rows int
	body []byte
}

// newColPart returns the part of a kind of rows rows whose columns lie at
// [base, base+size) of the column area, with index ix.
func newColPart(rows, base, size int, ix dailyIndex) colPart {
	b := binary.AppendUvarint(nil, uint64(base))
	b = binary.AppendUvarint(b, uint64(size))
	return colPart{rows: rows, body: appendDailyIndex(b, ix)}
}

// onePart returns jobs with the parts of the named kind joined into one
// (format 6: the part of a kind in the column area is its index).
func onePart(jobs []job, kind string) []job {
	d := kindIndex(kind)
	out := jobs[:0:0]
	for _, j := range jobs {
		if n := len(out); j.k == d && n > 0 && out[n-1].k == d {
			out[n-1].hi = j.hi
			continue
		}
		out = append(out, j)
	}
	return out
}

// assemble returns the snapshot of the given sections (in file order)
// and column area (the pieces cols, in order).
func assemble(meta engine.Meta, opt WriteOptions, version uint16, level int, counts map[string]int, parts []piece, secs []Section, cols ...piece) (*encoded, error) {
	var ncols int64
	for _, p := range cols {
		ncols += p.len()
	}
	bt := opt.BuildTime
	if bt.IsZero() {
		bt = meta.AsOf
	}
	h := Header{
		FormatVersion: version,
		BuildTime:     bt.UTC(),
		AsOf:          meta.AsOf,
		Source:        meta.Description,
		Attribution:   meta.Attribution,
		Stream:        meta.Stream,
		Level:         level,
		Counts:        counts,
		Sections:      secs,
		Columns:       ncols,
	}
	if version >= columnsVersion {
		h.Layout = int(writeLayout)
	}
	var rel int64
	for i := range h.Sections {
		h.Sections[i].Offset = rel
		rel += h.Sections[i].Compressed
	}
	body, err := encodeHeader(&h)
	if err != nil {
		return nil, fmt.Errorf("snapshot: header: %w", err)
	}
	out := &encoded{header: assembleHeader(version, body), parts: parts}
	off := int64(len(out.header))
	h.DataOffset = off
	for i := range h.Sections {
		h.Sections[i].Offset = off
		off += h.Sections[i].Compressed
	}
	if h.Columns > 0 {
		h.ColumnsOffset = (off + columnAlign - 1) / columnAlign * columnAlign
		out.parts = append(out.parts, piece{b: make([]byte, h.ColumnsOffset-off)})
		out.parts = append(out.parts, cols...)
		off = h.ColumnsOffset + h.Columns
	}
	h.Size = off
	h.ID = contentID(&h)
	out.h = h
	return out, nil
}

// dropKind sets u's slice of the named kind to nil (the catalog, small
// and read by the checks of other kinds, is kept).
func dropKind(u *engine.Universe, name string) {
	switch name {
	case "sectors":
		u.Sectors = nil
	case "companies":
		u.Companies = nil
	case "securities":
		u.Securities = nil
	case "renames":
		u.Renames = nil
	case "daily":
		u.Daily = nil
	case "intraday":
		u.Intraday = nil
	case "indexes":
		u.Indexes = nil
	case "reports":
		u.Reports = nil
	case "shares":
		u.Shares = nil
	case "cash_actions":
		u.CashActions = nil
	case "share_actions":
		u.ShareActions = nil
	case "fund_reports":
		u.FundReports = nil
	case "insider_reports":
		u.InsiderReports = nil
	case "documents":
		u.Documents = nil
	case "ratios":
		u.Derived.Ratios = nil
	case "fund_ratios":
		u.Derived.FundRatios, u.Derived.FundSources = nil, nil
	}
}

func countsOf(u *engine.Universe) map[string]int {
	m := make(map[string]int, len(kinds)+3)
	for _, k := range kinds {
		m[k.name] = k.count(u)
	}
	rows := 0
	for i := range u.Daily {
		rows += u.Daily[i].Len()
	}
	m[countDailyRows] = rows
	rows = 0
	for i := range u.Intraday {
		rows += u.Intraday[i].Len()
	}
	m[countIntradayRows] = rows
	rows = 0
	for i := range u.Reports {
		rows += len(u.Reports[i].Accounts)
	}
	m[countAccounts] = rows
	m[countRatioVars] = ratioVarsOf(u)
	return m
}

// ratioVarsOf counts the variables the ratio points encode.
func ratioVarsOf(u *engine.Universe) int {
	n := 0
	for i := range u.Derived.Ratios {
		n += len(u.Derived.Vars(&u.Derived.Ratios[i]))
	}
	return n
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines. After a failure no
// new index starts; it returns the error of the lowest failed index.
func parallel(n int, fn func(i int) error) error {
	return parallelOrder(nil, n, fn)
}

// parallelOrder is parallel with the indexes started in the given order
// (nil: ascending).
func parallelOrder(order []int, n int, fn func(i int) error) error {
	return parallelWorkers(0, order, n, fn)
}

// parallelWorkers is parallelOrder on at most workers goroutines (0:
// GOMAXPROCS). One worker is the calling goroutine itself: a reload runs
// on a thread whose priority it lowered, and its work stays there.
func parallelWorkers(workers int, order []int, n int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	size := n // errs by item: order may name items beyond n
	for _, i := range order[:min(n, len(order))] {
		size = max(size, i+1)
	}
	errs := make([]error, size)
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		for !failed.Load() {
			j := int(next.Add(1) - 1)
			if j >= n {
				return
			}
			i := j
			if order != nil {
				i = order[j]
			}
			if err := fn(i); err != nil {
				errs[i] = err
				failed.Store(true)
			}
		}
	}
	if workers == 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// largestFirst returns section indexes by decreasing size, so parallel
// workers finish together.
func largestFirst(secs []Section) []int {
	order := make([]int, len(secs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return secs[order[a]].Raw > secs[order[b]].Raw })
	return order
}
