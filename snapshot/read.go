package snapshot

import (
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

var (
	zrOnce sync.Once
	zr     *zstd.Decoder
	zrErr  error
)

// decoder returns the shared zstd decoder (DecodeAll is safe for
// concurrent use).
func decoder() (*zstd.Decoder, error) {
	zrOnce.Do(func() {
		zr, zrErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(maxSectionRaw),
			zstd.WithDecodeAllCapLimit(true),
			zstd.IgnoreChecksum(true))
	})
	return zr, zrErr
}

// ReadFile reads and decodes the snapshot at path, with the checks of
// Decode. A path that is not a regular file is refused (ErrNotRegular)
// without blocking. Sections are read from the file into per-worker buffers as
// they are verified and decoded, so the whole file is never held in
// memory. It leaves the garbage collector's settings alone.
func ReadFile(path string) (*engine.Universe, Header, error) {
	return readFile(path, false, false, 0, nil)
}

// readFile is ReadFile, with collection paused while the sections decode
// when pause is set (see pauseGC), and daily series compacted as they
// decode when compact is set (engine.CompactSeries: only for a Universe
// that goes straight to engine.Build).
func readFile(path string, pause, compact bool, workers int, prog *Progress) (*engine.Universe, Header, error) {
	u, h, _, err := openAndRead(path, pause, compact, false, workers, prog, nil, nil)
	return u, h, err
}

// openAndRead is readFile; with mapCols, the column area of a format 6
// file is mapped (mapfile) and used in place, and the mapping returned
// (nil when there is none): the caller releases it once nothing uses
// the Universe (mapfile.ReleaseWith). Without it, the area is read into
// the heap. With lazy, the column blocks are not verified but recorded
// in lazy, to verify on first use.
func openAndRead(path string, pause, compact, mapCols bool, workers int, prog *Progress, lazy *colBlocks, def *deferredParts) (*engine.Universe, Header, *mapfile.File, error) {
	f, size, err := openFile(path)
	if err != nil {
		return nil, Header{}, nil, err
	}
	defer f.Close()
	var mf *mapfile.File
	cols := func(h *Header) ([]byte, error) {
		if !mapCols {
			return readAligned(f, h.ColumnsOffset, h.Columns)
		}
		m, err := mapColumns(f)
		if err != nil {
			return nil, err
		}
		if int64(m.Len()) != size {
			m.Close()
			return nil, fmt.Errorf("%w: the file changed while it was opened (%d bytes, then %d)", ErrTruncated, size, m.Len())
		}
		mf = m
		if lazy != nil && m.Mapped() {
			// The background pass reads the blocks from the file (its
			// own handle on the same file, which this one's Close does
			// not close). Not when the file was read into the heap
			// (mapfile's ReadAt fallback): the copy read is what
			// requests read, and what must be verified; the file may
			// hold other bytes by then.
			lazy.file = reopen(path, f)
		}
		return m.Bytes()[h.ColumnsOffset : h.ColumnsOffset+h.Columns], nil
	}
	u, h, err := readFrom(f, size, pause, compact, workers, prog, cols, lazy, def)
	if err != nil {
		if mf != nil {
			mf.Close()
		}
		if lazy != nil {
			lazy.closeFile()
		}
		return nil, Header{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	return u, h, mf, nil
}

// mapColumns maps the snapshot file f, or reads it into the heap where
// it cannot be mapped (mapfile.OpenFile); tests replace it to take the
// heap path.
var mapColumns = mapfile.OpenFile

// reopen opens path again for reading and returns it when it is still
// the file f (not replaced meanwhile), else nil.
func reopen(path string, f *os.File) *os.File {
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	g, err := os.Open(path)
	if err != nil {
		return nil
	}
	if gst, err := g.Stat(); err != nil || !os.SameFile(st, gst) {
		g.Close()
		return nil
	}
	return g
}

// readAligned reads n bytes of f at off into an 8-aligned heap buffer.
func readAligned(f io.ReaderAt, off, n int64) ([]byte, error) {
	b := alignedBytes(n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("%w: column area: %v", ErrTruncated, err)
	}
	return b, nil
}

// readFrom decodes the snapshot of size bytes held by f, pausing
// collection meanwhile when pause is set; cols gives the column area of
// a format 6 file and lazy takes its blocks (see openAndRead).
func readFrom(f io.ReaderAt, size int64, pause, compact bool, workers int, prog *Progress, cols func(*Header) ([]byte, error), lazy *colBlocks, def *deferredParts) (*engine.Universe, Header, error) {
	hb, err := readHeaderBytes(f, size)
	if err != nil {
		return nil, Header{}, err
	}
	h, err := parseHeader(hb, size)
	if err != nil {
		return nil, Header{}, err
	}
	var c []byte
	if h.Columns > 0 {
		pad := make([]byte, h.ColumnsOffset-sectionsEnd(&h))
		if _, err := f.ReadAt(pad, sectionsEnd(&h)); err != nil {
			return nil, Header{}, fmt.Errorf("%w: %v", ErrTruncated, err)
		}
		if err := checkPadding(pad); err != nil {
			return nil, Header{}, err
		}
		if c, err = cols(&h); err != nil {
			return nil, Header{}, err
		}
	}
	return decodeSections(h, c, size, pause, compact, workers, prog, lazy, def, func(s *Section, buf []byte) ([]byte, error) {
		if int64(cap(buf)) < s.Compressed {
			buf = make([]byte, s.Compressed)
		}
		buf = buf[:s.Compressed]
		if _, err := f.ReadAt(buf, s.Offset); err != nil {
			return buf, fmt.Errorf("%w: section %s: %v", ErrTruncated, s.Name, err)
		}
		return buf, nil
	})
}

// readHeaderBytes reads the header (prefix, body and checksum) of a
// snapshot of size bytes from f.
func readHeaderBytes(f io.ReaderAt, size int64) ([]byte, error) {
	prefix := make([]byte, min(int64(prefixLen), size))
	n, err := f.ReadAt(prefix, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	hl, err := headerLen(prefix[:n])
	if err != nil {
		return nil, err
	}
	if int64(hl) > size {
		return nil, fmt.Errorf("%w: header needs %d bytes, file has %d", ErrTruncated, hl, size)
	}
	b := make([]byte, hl)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTruncated, err)
	}
	return b, nil
}

// LoadOptions are the caller's choices for Load. The zero value changes
// nothing outside the load.
type LoadOptions struct {
	// PauseGC pauses garbage collection while the snapshot is read,
	// decoded and indexed, and restores the previous settings afterwards
	// (see pauseGC). The pause is process-wide: it sets the GC percent
	// to off and, unless the process runs under a memory limit, a limit
	// sized from the snapshot, so every goroutine of the process runs
	// without collection until the load ends. Snapshots under 16 MiB are
	// loaded without a pause. It suits a process that loads a large
	// dataset while little else allocates, as pregao serve does: the
	// collector's cycles during the load's heap growth are saved (see
	// gcpause.go).
	PauseGC bool
	// Workers bounds the goroutines that verify and decode sections; 0
	// means GOMAXPROCS. 1 also indexes in the calling goroutine only
	// (engine.BuildOptions.Serial). A server reloading while it answers
	// requests passes 1, leaving the other cores to the requests.
	Workers int
	// Progress, when not nil, is moved through the load's phases as it
	// goes (see Progress).
	Progress *Progress
	// LazyVerify, for a file of format 6, leaves the checksums of its
	// column blocks (the bars) unchecked at open: each block is verified
	// on its first use by a request (engine.Dataset.CheckAsset and
	// CheckAll) and by a background pass at VerifyRate that starts when
	// Load returns (docs/snapshot-format.md), but the blocks of the
	// tickers whose bars the index build read (engine.Dataset.OpenReads),
	// verified before Load returns: a bad one fails the Dataset
	// (engine.Dataset.BlockErr), as a request finding it would. Without
	// it every block is verified before Load returns. Other formats are
	// verified whole.
	LazyVerify bool
	// VerifyFirst, with LazyVerify, verifies every block before Load
	// returns, each read from the file rather than through the mapping
	// (whose pages stay untouched), unpaced on Workers goroutines: a
	// bad block refuses the file. A reload does this: the snapshot
	// serving keeps serving meanwhile, and a damaged file never replaces
	// it. No background pass follows; Verified is called before Load
	// returns.
	VerifyFirst bool
	// VerifyRate is the background pass's pace, bytes a second (0:
	// DefaultVerifyRate; negative: no pass, blocks are verified on use
	// only).
	VerifyRate int64
	// Verified, when not nil, is called (from the background pass's
	// goroutine) once every block is verified, with what was found.
	Verified func(engine.BlockStatus)
	// Deferred makes the Dataset usable before its deferred kinds (cash
	// actions, fund reports, insider reports and documents:
	// engine.BuildOptions.Deferred) are decoded: their
	// sections are verified with the others, then Load indexes the rest
	// and returns, and a goroutine of its own decodes them (on Workers
	// goroutines) and adds them (engine.Dataset.FinishDeferred). What
	// reads them waits meanwhile; if they cannot be added, the Dataset's
	// DeferredErr says why. Without it, Load returns a whole Dataset.
	Deferred bool
	// DeferredDone, when not nil, is called once the deferred kinds are
	// in (nil) or have failed (the error), from Load's goroutine: at most
	// once, and not when Load itself fails.
	DeferredDone func(error)
	// Go runs the deferred kinds' decoding (nil: in a goroutine of its
	// own), e.g. on a thread of low priority.
	Go func(func())
}

// Load reads and decodes the snapshot at path (see ReadFile) and indexes
// it with engine.Build: the way a server loads a snapshot. It touches the
// garbage collector's settings only when opt.PauseGC is set. A Build
// error is returned as Build returned it.
func Load(path string, opt LoadOptions) (*engine.Dataset, Header, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, Header{}, err
	}
	if err := regular(path, st); err != nil {
		return nil, Header{}, err
	}
	if opt.PauseGC {
		defer startPause(st.Size(), 0)()
	}
	var lazy *colBlocks
	if opt.LazyVerify {
		lazy = newColBlocks()
	}
	var def *deferredParts
	if opt.Deferred {
		def = &deferredParts{}
	}
	u, h, mf, err := openAndRead(path, opt.PauseGC, true, true, opt.Workers, opt.Progress, lazy, def)
	if err != nil {
		return nil, Header{}, err
	}
	deferred := def != nil && def.on
	opt.Progress.Begin("index", "", 0)
	// A format 6 file's blocks check their series' order and their ratio
	// points (blockChecks); its cash actions' order is checked as it is
	// read (checkCashOrder).
	ds, err := engine.BuildWith(u, engine.BuildOptions{Serial: opt.Workers == 1, OrderChecked: h.Columns > 0, RatiosChecked: h.Columns > 0, FundRatiosChecked: h.Columns > 0, CashSorted: h.FormatVersion >= columnsVersion, Deferred: deferred})
	if err != nil && lazy != nil {
		// Build read unverified bars: a bad block is the reason to give.
		if berr := lazy.All(); berr != nil {
			err = fmt.Errorf("%s: %w", path, berr)
		}
	}
	if err != nil {
		if mf != nil {
			mf.Close()
		}
		if lazy != nil {
			lazy.closeFile()
		}
		return nil, Header{}, err
	}
	if lazy != nil && opt.VerifyFirst && lazy.blocks > 0 {
		opt.Progress.Begin("verify blocks", "", 0)
		if verr := lazy.verifyFile(opt.Workers); verr != nil {
			if mf != nil {
				mf.Close()
			}
			lazy.closeFile()
			return nil, Header{}, fmt.Errorf("%s: %w", path, verr)
		}
		if opt.Verified != nil {
			opt.Verified(lazy.Status())
		}
	}
	if lazy != nil && !opt.VerifyFirst && lazy.blocks > 0 {
		// The bars the index build read (the adjustment factors' closes,
		// renamed tickers' joined histories) feed answers of routes that
		// verify no block: their blocks are verified now. A bad one fails
		// the Dataset (every request answers its error), as a request
		// finding it would.
		lazy.verifyOpenReads(ds.OpenReads())
	}
	if mf != nil {
		// The Dataset holds the columns: the mapping goes when it does.
		mapfile.ReleaseWith(mf, ds)
	}
	if lazy != nil {
		if lazy.blocks > 0 {
			ds.SetBlocks(lazy)
			if opt.VerifyRate >= 0 && !opt.VerifyFirst {
				lazy.background(ds, opt.VerifyRate, opt.Verified)
			}
		}
		lazy.closeFile() // unless the pass took it
	}
	if deferred {
		core := u.Derived // not u: its daily series are let go
		run := opt.Go
		if run == nil {
			run = func(f func()) { go f() }
		}
		run(func() {
			if beforeDeferred != nil {
				beforeDeferred()
			}
			lu, err := def.decode(opt.Workers, &core)
			if err != nil {
				err = fmt.Errorf("%s: %w", path, err)
			}
			err = ds.FinishDeferred(lu, err)
			if opt.DeferredDone != nil {
				opt.DeferredDone(err)
			}
		})
	}
	opt.Progress.Begin("done", "", 0)
	return ds, h, nil
}

// VerifyFile verifies the snapshot at path whole without indexing it:
// its header, every section's checksum and contents, and every column
// block of a format 6 file (checksum, then its series' order and
// summaries), the blocks read from the file on one goroutine, not
// mapped. Its heap is the decoded sections' (the columns are not
// decoded), held until it returns. It is what a
// file must pass before it may replace a snapshot that serves (a
// download's local copy); Load verifies the same and more (the indexes
// engine.Build makes).
func VerifyFile(path string) error {
	lazy := newColBlocks()
	_, _, mf, err := openAndRead(path, false, true, true, 1, nil, lazy, nil)
	if err != nil {
		return err
	}
	if mf != nil {
		defer mf.Close()
	}
	defer lazy.closeFile()
	if lazy.blocks == 0 {
		return nil
	}
	if err := lazy.verifyFile(1); err != nil { // one core: the server answers meanwhile
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// beforeDeferred, when set (tests), runs first in a load's goroutine of
// the deferred kinds: a test holds them there.
var beforeDeferred func()

// ReadHeader reads and verifies only the header of the snapshot at path;
// it checks that the file size matches the section table but does not
// read the sections. A path that is not a regular file is refused
// (ErrNotRegular) without blocking.
func ReadHeader(path string) (Header, error) {
	f, size, err := openFile(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	prefix := make([]byte, prefixLen)
	n, err := io.ReadFull(f, prefix)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Header{}, err
	}
	hl, err := headerLen(prefix[:n])
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	if int64(hl) > size {
		return Header{}, fmt.Errorf("%s: %w: header needs %d bytes, file has %d", path, ErrTruncated, hl, size)
	}
	b := make([]byte, hl)
	copy(b, prefix)
	if _, err := io.ReadFull(f, b[prefixLen:]); err != nil {
		return Header{}, fmt.Errorf("%s: %w: %v", path, ErrTruncated, err)
	}
	h, err := parseHeader(b, size)
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Decode verifies and decodes a whole snapshot. Every check is made:
// magic, version, header and section checksums (compressed and raw),
// zstd framing, lengths, enums, counts and trailing bytes; any failure is
// an error naming the section, never a panic. Sections decode in
// parallel on GOMAXPROCS goroutines. It leaves the garbage collector's
// settings alone. The Universe does not alias b.
func Decode(b []byte) (*engine.Universe, Header, error) {
	return decode(b, false)
}

// decode is Decode, with collection paused while the sections decode
// when pause is set (see pauseGC).
func decode(b []byte, pause bool) (*engine.Universe, Header, error) {
	h, err := parseHeader(b, int64(len(b)))
	if err != nil {
		return nil, Header{}, err
	}
	var cols []byte
	if h.Columns > 0 { // a copy: the Universe does not alias b
		if err := checkPadding(b[sectionsEnd(&h):h.ColumnsOffset]); err != nil {
			return nil, Header{}, err
		}
		cols = alignedBytes(h.Columns)
		copy(cols, b[h.ColumnsOffset:])
	}
	return decodeSections(h, cols, int64(len(b)), pause, false, 0, nil, nil, nil, func(s *Section, _ []byte) ([]byte, error) {
		return b[s.Offset : s.Offset+s.Compressed], nil
	})
}

// decodeSections verifies and decodes the sections of a snapshot of size
// bytes whose parsed header is h, with collection paused meanwhile when
// pause is set (see pauseGC), on workers goroutines (0: GOMAXPROCS).
// fetch returns the compressed bytes of a
// section, read into buf when it needs a buffer (its result is then
// passed back as buf for a later section of the same worker). With
// lazy, the column blocks are recorded in it instead of verified. With
// def, the deferred kinds are verified (phase 1) but not decoded: their
// compressed bytes are kept in def, which decodes them later
// (deferredParts.decode), unless def.on is false on return.
func decodeSections(h Header, cols []byte, size int64, pause, compact bool, workers int, prog *Progress, lazy *colBlocks, def *deferredParts, fetch func(s *Section, buf []byte) ([]byte, error)) (*engine.Universe, Header, error) {
	zd, err := decoder()
	if err != nil {
		return nil, Header{}, fmt.Errorf("snapshot: zstd: %w", err)
	}
	secs := h.Sections
	order := largestFirst(secs)
	var rawTotal int64
	for _, s := range secs {
		rawTotal += s.Raw
	}
	if pause {
		defer startPause(size, rawTotal)()
	}

	// Phase 1: verify every section's compressed bytes and zstd frame
	// header, so that no count read from the file is trusted before the
	// bytes behind it exist and match the checksum written with them.
	// When the sections claim more raw bytes than real snapshots hold
	// (pipelineRatio times the file), phase 1 also decompresses and
	// verifies every section, so that an implausible claim costs no
	// allocation beyond the raw bytes themselves before it is proven.
	var compTotal int64
	for _, s := range secs {
		compTotal += s.Compressed
	}
	prog.Begin("verify", "bytes", compTotal)
	var raws [][]byte
	if rawTotal > pipelineRatio*size {
		raws = make([][]byte, len(secs))
	}
	// A load whose phase 1 decompresses every section decodes them all
	// now; otherwise the deferred kinds' compressed bytes, once verified,
	// are kept for their decoding after Load.
	later := func(int) bool { return false }
	if def != nil && raws == nil {
		def.on, def.comp = true, make([][]byte, len(secs))
		later = func(i int) bool { return deferredKind(secs[i].Name) }
	}
	cbufs := make(chan []byte, len(secs))
	getBuf := func(ch chan []byte) []byte {
		select {
		case buf := <-ch:
			return buf
		default:
			return nil
		}
	}
	err = parallelWorkers(workers, order, len(secs), func(i int) error {
		s := &secs[i]
		comp, err := fetch(s, getBuf(cbufs))
		defer func() { cbufs <- comp }()
		if err != nil {
			return err
		}
		if got := xxhash.Sum64(comp); got != s.Checksum {
			return fmt.Errorf("%w: section %d (%s): checksum %016x, stored %016x", ErrChecksum, i, s.Name, got, s.Checksum)
		}
		var fh zstd.Header
		if err := fh.Decode(comp); err != nil {
			return fmt.Errorf("%w: section %d (%s): bad zstd frame: %v", ErrFormat, i, s.Name, err)
		}
		if fh.HasFCS && fh.FrameContentSize != uint64(s.Raw) {
			return fmt.Errorf("%w: section %d (%s): bad zstd frame: content size %d, table says %d", ErrFormat, i, s.Name, fh.FrameContentSize, s.Raw)
		}
		if raws != nil {
			raw, err := decompress(zd, s, i, comp, make([]byte, 0, s.Raw))
			if err != nil {
				return err
			}
			raws[i] = raw
		}
		if later(i) {
			// Kept, and not given back as a buffer: the bytes verified
			// are the bytes decoded later.
			def.comp[i], comp = comp, nil
		}
		prog.Add(s.Compressed)
		return nil
	})
	if err != nil {
		return nil, Header{}, err
	}

	// Phase 2: allocate every kind's slice once, then decompress each
	// part, verify its raw checksum and decode it into its range, in
	// parallel. A worker reuses its raw buffer for its next part, so a
	// load holds at most one raw part per worker (largest first) rather
	// than every raw section at once.
	u := &engine.Universe{Meta: metaOf(&h)}
	starts := make([]int, len(secs))
	next := make([]int, len(kinds))
	for i, s := range secs {
		ki := kindIndex(s.Name)
		starts[i] = next[ki]
		next[ki] += s.Items
	}
	for ki, k := range kinds {
		if next[ki] > 0 && !(h.FormatVersion >= columnsVersion && (k.name == "ratios" || k.name == "reports" || k.name == "fund_ratios")) && !(def != nil && def.on && deferredKind(k.name)) {
			// format 6's ratio points, report heads and fund ratio
			// points are columns (decRatioColumns, decReports6,
			// decFundColumns)
			k.alloc(u, next[ki])
		}
	}
	// Every ratio point's variables share one array, sized from the
	// header; each variable takes at least one raw byte of a ratios part.
	ls := loadState{compactDaily: compact, version: h.FormatVersion, layout: h.Layout, cols: cols, colsAt: h.ColumnsOffset, lazy: lazy}
	nvars, ratioRaw := int64(h.Counts[countRatioVars]), int64(0)
	for _, s := range secs {
		if s.Name == "ratios" {
			ratioRaw += s.Raw
		}
	}
	if h.FormatVersion >= columnsVersion {
		ratioRaw = nvars // the ratios part holds its variables' place, not the variables
	}
	if nvars > ratioRaw || nvars > math.MaxUint32 {
		return nil, Header{}, fmt.Errorf("%w: header count %s = %d, more than the ratios sections' %d raw bytes can hold", ErrFormat, countRatioVars, nvars, ratioRaw)
	}
	if nvars > 0 && h.FormatVersion < columnsVersion {
		u.Derived.RatioVars = make([]engine.Num, nvars)
	}
	stats := make([]partStats, len(secs))
	bufs := make(chan []byte, len(secs))
	prog.Begin("decode", "bytes", rawTotal)
	now := order
	if def != nil && def.on {
		now = slices.DeleteFunc(slices.Clone(order), later)
		def.prepare(h, secs, starts, next, zd, &ls)
	}
	err = parallelWorkers(workers, now, len(now), func(i int) error {
		s := &secs[i]
		var raw []byte
		if raws != nil {
			raw, raws[i] = raws[i], nil
		} else {
			buf := getBuf(bufs)
			if int64(cap(buf)) < s.Raw {
				buf = make([]byte, 0, s.Raw)
			}
			defer func() { bufs <- buf }()
			comp, err := fetch(s, getBuf(cbufs))
			defer func() { cbufs <- comp }()
			if err != nil {
				return err
			}
			if raw, err = decompress(zd, s, i, comp, buf[:0:s.Raw]); err != nil {
				return err
			}
		}
		ps, err := decodePart(raw, kindIndex(s.Name), u, starts[i], starts[i]+s.Items, &ls)
		if err != nil {
			return fmt.Errorf("%w: section %d (%s): %v", ErrFormat, i, s.Name, err)
		}
		stats[i] = ps
		prog.Add(s.Raw)
		return nil
	})
	if err != nil {
		return nil, Header{}, err
	}
	if ls.catalogLen != nil {
		ls.catalogLen.Store(int64(len(u.Derived.Catalog)))
	}
	if ls.version >= columnsVersion {
		// The column area's parts, and every block (unless lazy), before
		// the snapshot is used.
		if err := ls.checkColumns(); err != nil {
			return nil, Header{}, err
		}
		if err := ls.finishAccounts(u); err != nil {
			return nil, Header{}, fmt.Errorf("%w: %w", ErrFormat, err)
		}
	}
	var tot partStats
	for _, ps := range stats {
		tot.dailyRows += ps.dailyRows
		tot.intradayRows += ps.intradayRows
		tot.accounts += ps.accounts
	}
	for _, c := range []struct {
		name string
		n    int
	}{{countDailyRows, tot.dailyRows}, {countIntradayRows, tot.intradayRows}, {countAccounts, tot.accounts},
		{countRatioVars, int(ls.ratioVars.Load())}} {
		if h.Counts[c.name] != c.n {
			return nil, Header{}, fmt.Errorf("%w: header count %s = %d, sections hold %d", ErrFormat, c.name, h.Counts[c.name], c.n)
		}
	}
	// The cash actions' order (format 6 stores them in the engine's
	// order, cashOrder: checked, not sorted) is checked beside the ratio
	// points' indicators and the sharing of fund sources, which read and
	// write no cash action; errors are given in this order.
	cashErr := func() error { return nil }
	if ls.version >= columnsVersion && (def == nil || !def.on) {
		cashErr = beside(workers, func() error { return checkCashOrder(u.CashActions) })
	}
	if err := checkIndicators(u, u.Derived.RatioRuns == nil); err != nil {
		cashErr()
		return nil, Header{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	shareFundSources(u, &ls)
	if err := cashErr(); err != nil {
		return nil, Header{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return u, h, nil
}

// beside runs f in a goroutine of its own, or at once when workers is 1
// (a load that keeps to the calling goroutine), and returns a function
// that waits for it and returns its error.
func beside(workers int, f func() error) (wait func() error) {
	if workers == 1 {
		err := f()
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() { done <- f() }()
	return func() error { return <-done }
}

// pipelineRatio bounds raw/file bytes for a load that decodes each
// section as soon as it decompresses (see decodeSections); real
// snapshots compress 2-5x. A variable so that tests can take each path.
var pipelineRatio int64 = 8

// decompress decompresses section i (compressed bytes comp) into dst,
// whose capacity is s.Raw, and verifies its length and raw checksum.
func decompress(zd *zstd.Decoder, s *Section, i int, comp, dst []byte) ([]byte, error) {
	raw, err := zd.DecodeAll(comp, dst)
	if err != nil {
		return nil, fmt.Errorf("%w: section %d (%s): bad zstd data: %v", ErrFormat, i, s.Name, err)
	}
	if int64(len(raw)) != s.Raw {
		return nil, fmt.Errorf("%w: section %d (%s): %d raw bytes, table says %d", ErrFormat, i, s.Name, len(raw), s.Raw)
	}
	if got := xxhash.Sum64(raw); got != s.RawChecksum {
		return nil, fmt.Errorf("%w: section %d (%s): raw checksum %016x, stored %016x", ErrChecksum, i, s.Name, got, s.RawChecksum)
	}
	return raw, nil
}

// decodePart decodes the raw bytes of one part of kinds[ki] into items
// [lo,hi) of u.
func decodePart(raw []byte, ki int, u *engine.Universe, lo, hi int, ls *loadState) (partStats, error) {
	d := &pdec{b: raw, ls: ls}
	d.strtab()
	ps := kinds[ki].dec(d, u, lo, hi)
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d trailing bytes", d.remaining())
	}
	return ps, d.err
}

// sectionsEnd returns where h's last section ends (bytes).
func sectionsEnd(h *Header) int64 {
	if n := len(h.Sections); n > 0 {
		return h.Sections[n-1].Offset + h.Sections[n-1].Compressed
	}
	return h.DataOffset
}

// checkPadding refuses padding (before a column area) that is not zeros:
// a file has one form.
func checkPadding(p []byte) error {
	for i, c := range p {
		if c != 0 {
			return fmt.Errorf("%w: byte %d of the padding before the column area is %d, not 0", ErrFormat, i, c)
		}
	}
	return nil
}
