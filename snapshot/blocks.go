package snapshot

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// colBlocks are the column blocks of a format 6 file loaded with
// LoadOptions.LazyVerify, verified on first use (engine.Blocks): a
// request verifies the blocks of the tickers it reads
// (engine.Dataset.CheckAsset), or all of them (CheckAll), and a
// background pass (background) verifies the rest.
type colBlocks struct {
	mu       sync.Mutex
	kinds    []*blockChecks
	byTicker map[string]tickerBlocks
	// byCompany gives the blocks of each company's ratio points and
	// their variables (by company id).
	byCompany map[string][]blockRef
	// heads, when set, reads the report heads (reportheads.go): a
	// company's blocks are also those of its heads (kind headKind) and
	// of their accounts.
	heads    *fileHeads
	headKind int16
	blocks   int64 // blocks of every kind
	bytes    int64 // their bytes

	allMu sync.Mutex            // held by All while it verifies
	first atomic.Pointer[error] // the first bad block's error
	all   atomic.Bool           // every block verified good

	// file, when set, is the mapped file, open for the background pass,
	// which reads each block from it (pread into a buffer) instead of
	// through the mapping, so that the pass leaves the mapping's pages
	// unmapped (a request's read maps only what it touches); the pass
	// closes it. fromFile counts the blocks it hashed that way.
	file     *os.File
	fromFile atomic.Int64
	// passEnded, once a background pass started, is closed when it
	// returns (tests wait for it).
	passEnded chan struct{}
}

// closeFile closes the file kept for a background pass (none runs).
func (x *colBlocks) closeFile() {
	if x.file != nil {
		x.file.Close()
		x.file = nil
	}
}

// tickerBlocks gives the blocks of one ticker's series: a kind (index
// into colBlocks.kinds) and a block, for its daily and its intraday
// series (kind -1: none).
type tickerBlocks struct {
	daily, intraday blockRef
}

type blockRef struct {
	kind  int16
	block int32
}

var noBlock = blockRef{kind: -1}

func newColBlocks() *colBlocks {
	return &colBlocks{byTicker: make(map[string]tickerBlocks)}
}

// add records the blocks of kind's columns c, described by ix, and
// returns the kind's number.
func (x *colBlocks) add(c *blockChecks, kind string, ix dailyIndex) int16 {
	x.mu.Lock()
	defer x.mu.Unlock()
	c.set = x
	k := int16(len(x.kinds))
	x.kinds = append(x.kinds, c)
	x.blocks += int64(len(c.blocks))
	x.bytes += int64(len(c.sec))
	for _, s := range ix.Series {
		tb, ok := x.byTicker[s.Ticker]
		if !ok {
			tb = tickerBlocks{noBlock, noBlock}
		}
		r := blockRef{kind: k, block: int32(s.Block)}
		if kind == "intraday" {
			tb.intraday = r
		} else {
			tb.daily = r
		}
		x.byTicker[s.Ticker] = tb
	}
	return k
}

// addCompanies records the blocks of each company's run of ratio
// columns ix, kind k: its points' block and its variables' block.
func (x *colBlocks) addCompanies(k int16, ix ratioIndex) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byCompany == nil {
		x.byCompany = make(map[string][]blockRef, len(ix.Runs))
	}
	for _, r := range ix.Runs {
		id := ix.Syms[r.Company]
		bs := append(x.byCompany[id], blockRef{kind: k, block: int32(r.PointBk)})
		if r.Vars > 0 {
			bs = append(bs, blockRef{kind: k, block: int32(r.VarsBlk)})
		}
		x.byCompany[id] = bs
	}
}

// setHeads records the report heads fh, their blocks kind k.
func (x *colBlocks) setHeads(fh *fileHeads, k int16) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.heads, x.headKind = fh, k
}

// Company verifies the blocks of company id's ratio points and their
// variables, then those of its report heads and their accounts.
func (x *colBlocks) Company(id string) error {
	for _, r := range x.byCompany[id] {
		if err := x.verify(r); err != nil {
			return x.wrap(err)
		}
	}
	if x.heads != nil {
		var acc *blockChecks
		for _, c := range x.kinds {
			if c.kind == "accounts" {
				acc = c
			}
		}
		if err := x.heads.companyBlocks(id, x.kinds[x.headKind], acc); err != nil {
			return x.wrap(err)
		}
	}
	return nil
}

// noteBad records a bad block's error, the first one kept.
func (x *colBlocks) noteBad(err error) {
	x.first.CompareAndSwap(nil, &err)
}

// verify verifies block r (nothing for noBlock).
func (x *colBlocks) verify(r blockRef) error {
	if r.kind < 0 {
		return nil
	}
	return x.kinds[r.kind].verify(int(r.block))
}

// Ticker verifies the blocks of t's daily and intraday series.
func (x *colBlocks) Ticker(t string) error {
	tb, ok := x.byTicker[t]
	if !ok {
		return nil
	}
	if err := x.verify(tb.daily); err != nil {
		return x.wrap(err)
	}
	if err := x.verify(tb.intraday); err != nil {
		return x.wrap(err)
	}
	return nil
}

// verifyOpenReads verifies the blocks of the daily series of tickers
// daily and of the intraday series of tickers intraday
// (engine.Dataset.OpenReads: the bars the index build read at open),
// each read from the file kept for the pass (pread: the mapping's pages
// stay as they are), through the mapping where there is none or the
// read fails, and returns the first bad block's error. A bad block
// fails the snapshot as on a request's first use. A fault reading the
// mapping is recorded as the snapshot's error.
func (x *colBlocks) verifyOpenReads(daily, intraday []string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if x.catchFault(recover()) {
			err = x.Err()
		}
	}()
	var buf []byte
	verify := func(r blockRef) {
		if r.kind < 0 {
			return
		}
		c, i := x.kinds[r.kind], int(r.block)
		if c.state[i].Load() != blockUnknown {
			return
		}
		if n := c.blocks[i].N; x.file != nil && int64(len(buf)) < n {
			buf = alignedBytes(n)
		}
		if !x.readVerify(c, i, x.file, buf) {
			c.verify(i)
		}
	}
	for _, t := range daily {
		if tb, ok := x.byTicker[t]; ok {
			verify(tb.daily)
		}
	}
	for _, t := range intraday {
		if tb, ok := x.byTicker[t]; ok {
			verify(tb.intraday)
		}
	}
	return x.Err()
}

// All verifies every block not yet verified, in parallel, and returns
// the first bad block's error. Concurrent callers wait for one
// verification instead of each hashing the blocks.
func (x *colBlocks) All() error {
	if x.all.Load() {
		return nil
	}
	if p := x.first.Load(); p != nil {
		return x.wrap(*p)
	}
	x.allMu.Lock()
	defer x.allMu.Unlock()
	if x.all.Load() {
		return nil
	}
	var wg sync.WaitGroup
	n := runtime.GOMAXPROCS(0)
	for w := range n {
		wg.Go(func() {
			// A fault reading the mapping (its file cut in place) is
			// the snapshot's error, not the process's end.
			defer func() { x.catchFault(recover()) }()
			debug.SetPanicOnFault(true)
			for _, c := range x.kinds {
				for i := w; i < len(c.blocks); i += n {
					c.verify(i)
				}
			}
		})
	}
	wg.Wait()
	return x.finished()
}

// verifyFile verifies every block not yet verified on workers
// goroutines (0: GOMAXPROCS; 1: the calling goroutine alone, so that a
// reload's low-priority thread does it), unpaced, each read from the file
// kept for the pass (pread: the mapping's pages stay untouched, as the
// pass leaves them) or through the mapping when there is none, and
// returns the first bad block's error. The file stays open.
func (x *colBlocks) verifyFile(workers int) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var most int64
	for _, c := range x.kinds {
		for _, b := range c.blocks {
			most = max(most, b.N)
		}
	}
	if workers == 1 {
		x.verifyShare(0, 1, most)
		return x.finished()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { x.verifyShare(w, workers, most) })
	}
	wg.Wait()
	return x.finished()
}

// verifyShare verifies blocks w, w+n, w+2n… of each kind not yet
// verified, read into a buffer of most bytes (verifyFile). A fault
// reading the mapping is recorded as the snapshot's error; the calling
// goroutine's fault setting is restored.
func (x *colBlocks) verifyShare(w, n int, most int64) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { x.catchFault(recover()) }()
	var buf []byte
	if x.file != nil {
		buf = alignedBytes(most)
	}
	for _, c := range x.kinds {
		for i := w; i < len(c.blocks); i += n {
			if c.state[i].Load() == blockUnknown && !x.readVerify(c, i, x.file, buf) {
				c.verify(i)
			}
		}
	}
}

// catchFault takes p, what a goroutine of x's that set
// debug.SetPanicOnFault recovered (nil: none), and reports whether it
// was a fault reading the mapping (the file was cut or changed in
// place), which it records as x's error: the snapshot is failed rather
// than the process ended. Any other panic goes on.
func (x *colBlocks) catchFault(p any) bool {
	caught := false
	mapfile.Catch(p, func(err error) {
		x.noteBad(err)
		caught = true
	})
	return caught
}

// finished returns the first bad block's error once every block is
// verified, and marks them all good when none is bad.
func (x *colBlocks) finished() error {
	if p := x.first.Load(); p != nil {
		return x.wrap(*p)
	}
	x.all.Store(true)
	return nil
}

// wrap makes a bad block's error the snapshot's: ErrChecksum, or
// ErrFormat for a block whose keys are out of order or whose ratio
// points are not as indexed (blockFormatErr).
func (x *colBlocks) wrap(err error) error {
	if blockFormatErr(err) {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	return fmt.Errorf("%w: %w", ErrChecksum, err)
}

// Err returns the first bad block's error (ErrChecksum), nil while none
// is known.
func (x *colBlocks) Err() error {
	if p := x.first.Load(); p != nil {
		return x.wrap(*p)
	}
	return nil
}

// Status reports the blocks verified and found bad so far.
func (x *colBlocks) Status() engine.BlockStatus {
	s := engine.BlockStatus{Blocks: x.blocks, Bytes: x.bytes}
	if x.all.Load() {
		s.Verified = x.blocks
		return s
	}
	for _, c := range x.kinds {
		s.Verified += c.done.Load()
		s.Bad += c.bad.Load()
	}
	if p := x.first.Load(); p != nil {
		s.Err = x.wrap(*p)
	}
	return s
}

// DefaultVerifyRate is the pace of the background pass over a lazily
// verified snapshot's blocks (LoadOptions.VerifyRate): 128 MiB a second,
// a few percent of a core, so that the 3 GB of columns (bars and ratio
// points) of the scale 10 demo are verified within about 22 seconds of
// the load (the machine's load permitting).
const DefaultVerifyRate = 128 << 20

// readVerify verifies block i of c from the file f into buf (the
// block's bytes read with pread), and reports whether it did: false when
// there is no file or the read fails. It never reads the mapping.
func (x *colBlocks) readVerify(c *blockChecks, i int, f *os.File, buf []byte) bool {
	b := c.blocks[i]
	if f == nil || c.at < 0 {
		return false
	}
	data := buf[:b.N]
	if _, err := f.ReadAt(data, c.at+b.Off); err != nil {
		return false
	}
	c.verifyBytes(i, data)
	x.fromFile.Add(1)
	return true
}

// background verifies, at rate bytes a second, every block of ds's
// not yet verified, and returns when it is done or ds is no longer
// reachable (a reload replaced it). It holds ds only while it verifies a
// block through the mapping (no file to read, or its read failed), which
// ds's release unmaps (mapfile.ReleaseWith); a block read from the file
// needs no hold. A cleanup on ds tells it that ds is gone, also while it
// waits for its pace. It does not ask its weak pointer for each block: a
// weak pointer's Value during a collection's mark phase keeps its object
// for that cycle, and a pass asking every few milliseconds kept a
// replaced Dataset, its heap parts included, until the pass ended (about
// 30 s at scale 10). done, when not nil, is called with the final status
// once every block is verified.
func (x *colBlocks) background(ds *engine.Dataset, rate int64, done func(engine.BlockStatus)) {
	if rate <= 0 {
		rate = DefaultVerifyRate
	}
	wp := weak.Make(ds)
	gone := make(chan struct{})
	runtime.AddCleanup(ds, func(gone chan struct{}) { close(gone) }, gone)
	f := x.file
	x.file = nil
	x.passEnded = make(chan struct{})
	go func() {
		defer close(x.passEnded)
		if f != nil {
			defer f.Close()
		}
		defer func() {
			if x.catchFault(recover()) && done != nil {
				done(x.Status())
			}
		}()
		debug.SetPanicOnFault(true)
		var wait *time.Timer
		var buf []byte
		if f != nil {
			n := int64(0)
			for _, c := range x.kinds {
				for _, b := range c.blocks {
					n = max(n, b.N)
				}
			}
			buf = alignedBytes(n)
		}
		start := time.Now()
		var sent int64
		for _, c := range x.kinds {
			for i := range c.blocks {
				select {
				case <-gone:
					return
				default:
				}
				if c.state[i].Load() == blockUnknown && !x.readVerify(c, i, f, buf) {
					ds := wp.Value()
					if ds == nil {
						return
					}
					c.verify(i)
					runtime.KeepAlive(ds)
				}
				sent += c.blocks[i].N
				if ahead := time.Duration(float64(sent)/float64(rate)*float64(time.Second)) - time.Since(start); ahead > 0 {
					if wait == nil {
						wait = time.NewTimer(ahead)
					} else {
						wait.Reset(ahead)
					}
					select {
					case <-gone:
						return
					case <-wait.C:
					}
				}
			}
		}
		x.finished()
		if done != nil {
			done(x.Status())
		}
	}()
}
