package snapshot

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// Column sections (format 6, docs/snapshot-format.md): bars laid out as
// fixed-width, little-endian columns that a load uses where they lie (a
// mapped file: internal/mapfile) instead of decoding them into the heap.
//
// A daily column section holds, series after series, each series'
// columns, every column starting at a multiple of 8 bytes from the
// section's start: compact series (engine.DailyColumns) as dates
// (int32), open, high, low, close (int32 cents), volume (int64 cents),
// quantity and trades (uint32); wide ones (values that do not fit
// cents) as dates (int32), open, high, low, close, volume (float64) and
// quantity and trades (int64). The section is cut into blocks of whole
// series of about blockTarget bytes (a larger series is a block of its
// own); its index (dailyIndex) gives each series its place and form and
// each block its place and xxhash64.

// blockTarget is the size a block of a column section is cut at. Tests
// set it lower (smallBlocks) so that a small file's series lie in
// blocks of their own, as a large file's do.
var blockTarget = 256 << 10

// colBlock is one block of a column section: bytes [Off, Off+N) of the
// section and their xxhash64.
type colBlock struct {
	Off, N int64
	Sum    uint64
}

// dailyCol is one daily series' place in a column section.
type dailyCol struct {
	Ticker string
	Rows   int
	Wide   bool
	Off    int64 // its first column, from the section's start
	Block  int   // the block that holds it
	// Tail is the series' summary as stored (summary.go): dailyTail or
	// intradayTail of its rows; "" for a series of no rows.
	Tail string
}

// dailyIndex is a daily column section's index: its series and blocks.
type dailyIndex struct {
	Series []dailyCol
	Blocks []colBlock
}

// pad8 rounds n up to a multiple of 8.
func pad8(n int64) int64 { return (n + 7) &^ 7 }

// dailyColBytes returns the bytes a series of n rows takes in a column
// section, wide or compact (its columns padded to 8).
func dailyColBytes(n int, wide bool) int64 {
	k := int64(n)
	if wide {
		return pad8(4*k) + 7*8*k
	}
	return pad8(4*k) + 4*pad8(4*k) + 8*k + 2*pad8(4*k)
}

// appendDailyColumns appends the column section of series to dst (which
// must be empty or end at a multiple of 8 bytes) and returns it with its
// index.
func appendDailyColumns(dst []byte, series []engine.Series) ([]byte, dailyIndex) {
	k := blocker{base: int64(len(dst))}
	for i := range series {
		s := &series[i]
		off := k.series(dst)
		b := s.Bars()
		c, compact := b.Columns()
		k.ix.Series = append(k.ix.Series, dailyCol{Ticker: s.Ticker, Rows: s.Len(), Wide: !compact, Off: off, Block: len(k.ix.Blocks), Tail: writeTails.daily(b)})
		dst = appendCol(dst, s.Dates)
		if compact {
			for _, col := range [...][]int32{c.Open, c.High, c.Low, c.Close} {
				dst = appendCol(dst, col)
			}
			dst = appendCol(dst, c.Volume)
			dst = appendCol(dst, c.Quantity)
			dst = appendCol(dst, c.Trades)
			continue
		}
		w := b.Wide()
		for _, col := range [...][]engine.Num{w.Open, w.High, w.Low, w.Close, w.Volume} {
			dst = appendCol(dst, col)
		}
		dst = appendCol(dst, w.Quantity)
		dst = appendCol(dst, w.Trades)
	}
	return k.finish(dst, len(series))
}

// blocker cuts a column section, from its start in dst (base), into
// blocks of about blockTarget bytes at series boundaries, each with its
// checksum in ix.Blocks; the section's writer adds the series to ix.
type blocker struct {
	base, start int64 // the section's start in dst; the open block's, from base
	ix          dailyIndex
}

// series returns where the next series begins, from the section's
// start, closing the open block first once it holds blockTarget bytes.
func (k *blocker) series(dst []byte) int64 {
	off := int64(len(dst)) - k.base
	if off-k.start >= int64(blockTarget) {
		k.flush(dst, off)
	}
	return off
}

// flush closes the open block at end (from the section's start).
func (k *blocker) flush(dst []byte, end int64) {
	if end > k.start {
		k.ix.Blocks = append(k.ix.Blocks, colBlock{Off: k.start, N: end - k.start, Sum: xxhash.Sum64(dst[k.base+k.start : k.base+end])})
		k.start = end
	}
}

// finish closes the last block and returns dst and the index. A section
// of n series that are all empty is one block of 8 zero bytes.
func (k *blocker) finish(dst []byte, n int) ([]byte, dailyIndex) {
	if n > 0 && int64(len(dst)) == k.base {
		dst = append(dst, make([]byte, 8)...)
	}
	k.flush(dst, int64(len(dst))-k.base)
	return dst, k.ix
}

// fixed are the types of column values: 4 or 8 bytes, no pointer.
type fixed interface {
	~int32 | ~uint32 | ~int64 | ~uint64 | ~float64
}

// appendCol appends col little-endian, padded with zeros to 8 bytes.
func appendCol[T fixed](dst []byte, col []T) []byte {
	var z T
	size := int(unsafe.Sizeof(z))
	for _, v := range col {
		if size == 4 {
			dst = binary.LittleEndian.AppendUint32(dst, *(*uint32)(unsafe.Pointer(&v)))
		} else {
			dst = binary.LittleEndian.AppendUint64(dst, *(*uint64)(unsafe.Pointer(&v)))
		}
	}
	for len(dst)%8 != 0 {
		dst = append(dst, 0)
	}
	return dst
}

// littleEndian reports whether the machine's byte order is the columns':
// they are then used in place, else copied.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// view returns the n values of type T at the start of b (which holds
// them, 8-aligned): b itself on a little-endian machine, else a decoded
// copy.
func view[T fixed](b []byte, n int) []T {
	if n == 0 {
		return []T{}
	}
	if littleEndian {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]T, n)
	var z T
	for i := range out {
		if unsafe.Sizeof(z) == 4 {
			u := binary.LittleEndian.Uint32(b[4*i:])
			out[i] = *(*T)(unsafe.Pointer(&u))
		} else {
			u := binary.LittleEndian.Uint64(b[8*i:])
			out[i] = *(*T)(unsafe.Pointer(&u))
		}
	}
	return out
}

// errColumns is wrapped by the errors of a column section whose index
// does not match its bytes.
var errColumns = errors.New("column section")

// checkBlocks checks that blocks cut a section of size bytes in order,
// without gaps or empty blocks.
func checkBlocks(blocks []colBlock, size int64) error {
	end := int64(0)
	for i, b := range blocks {
		if b.Off != end || b.N <= 0 || b.N > size-b.Off {
			return fmt.Errorf("%w: block %d at %d+%d, want it at %d within %d bytes", errColumns, i, b.Off, b.N, end, size)
		}
		end = b.Off + b.N
	}
	if end != size {
		return fmt.Errorf("%w: blocks end at %d, the section at %d", errColumns, end, size)
	}
	return nil
}

// openDailyColumns returns the series of a daily column section sec
// (8-aligned) described by ix, their columns used in place (copied on a
// big-endian machine): compact series as engine.CompactSeriesOf, wide
// ones with their wide columns. It checks that every series lies within
// its block, in order, without overlap, and nothing else: the values are
// the blocks' (see blockChecks).
func openDailyColumns(sec []byte, ix dailyIndex) ([]engine.Series, error) {
	if len(sec) > 0 && uintptr(unsafe.Pointer(&sec[0]))%8 != 0 {
		return nil, fmt.Errorf("%w: not 8-aligned in memory", errColumns)
	}
	size := int64(len(sec))
	if err := checkBlocks(ix.Blocks, size); err != nil {
		return nil, err
	}
	out := make([]engine.Series, len(ix.Series))
	next := int64(0)
	for i, c := range ix.Series {
		if c.Rows < 0 || c.Block < 0 || c.Block >= len(ix.Blocks) || c.Off < next || c.Off%8 != 0 {
			return nil, fmt.Errorf("%w: series %d (%q): rows %d, block %d, at %d (the previous ends at %d)", errColumns, i, c.Ticker, c.Rows, c.Block, c.Off, next)
		}
		b := ix.Blocks[c.Block]
		if int64(c.Rows) > math.MaxInt32 || c.Off < b.Off || dailyColBytes(c.Rows, c.Wide) > b.Off+b.N-c.Off {
			return nil, fmt.Errorf("%w: series %d (%q): %d rows at %d leave block %d (%d+%d)", errColumns, i, c.Ticker, c.Rows, c.Off, c.Block, b.Off, b.N)
		}
		out[i] = dailySeriesAt(sec, c)
		next = c.Off + dailyColBytes(c.Rows, c.Wide)
	}
	return out, nil
}

// dailySeriesAt returns the series c of a daily column section sec, its
// columns used in place (c lies within sec: openDailyColumns checked).
func dailySeriesAt(sec []byte, c dailyCol) engine.Series {
	n, k := c.Rows, int64(c.Rows)
	p := c.Off
	take := func(width int64) []byte {
		col := sec[p:]
		p += pad8(width * k)
		return col
	}
	dates := view[engine.Date](take(4), n)
	if c.Wide {
		s := engine.Series{Ticker: c.Ticker, Dates: dates}
		s.Open, s.High, s.Low = view[engine.Num](take(8), n), view[engine.Num](take(8), n), view[engine.Num](take(8), n)
		s.Close, s.Volume = view[engine.Num](take(8), n), view[engine.Num](take(8), n)
		s.Quantity, s.Trades = view[int64](take(8), n), view[int64](take(8), n)
		return s
	}
	open, high, low, close := view[int32](take(4), n), view[int32](take(4), n), view[int32](take(4), n), view[int32](take(4), n)
	vol := view[int64](take(8), n)
	qty, trades := view[uint32](take(4), n), view[uint32](take(4), n)
	return engine.CompactSeriesOf(c.Ticker, dates, open, high, low, close, vol, qty, trades)
}

// blockChecks verifies the blocks of a column section on first use:
// each block's checksum is computed once, the first time it is asked
// for, and its result kept (safe for concurrent use).
type blockChecks struct {
	kind   string // "daily" or "intraday", for errors
	sec    []byte
	at     int64 // sec's offset in its file (-1: unknown), for a pass that reads it
	blocks []colBlock
	// series, when set, checks block i's series once its checksum
	// matches: their summaries against their bars, and in a load the
	// order of their keys (dates, times), which engine.Build leaves to
	// the blocks (engine.BuildOptions.OrderChecked). Its error wraps
	// errSummary or errOrder. blk is block i's bytes.
	series func(i int, blk []byte) error
	reason sync.Map        // block → the error of series for a block it found bad
	state  []atomic.Uint32 // blockUnknown, blockGood or blockBad
	done   atomic.Int64    // blocks verified, good or bad
	bad    atomic.Int64    // blocks found bad
	set    *colBlocks      // the load's blocks, told of a bad one (nil: none)
}

const (
	blockUnknown = iota
	blockGood
	blockBad
)

func newBlockChecks(sec []byte, blocks []colBlock) *blockChecks {
	return &blockChecks{sec: sec, at: -1, blocks: blocks, state: make([]atomic.Uint32, len(blocks))}
}

// errBlock is wrapped by the error of a block whose bytes do not match
// its checksum.
var errBlock = errors.New("block checksum mismatch")

// errOrder is wrapped by the error of a block whose checksum matches but
// whose series' dates or times are missing or not ascending (no writer
// makes one).
var errOrder = errors.New("block out of order")

// blockFormatErr reports whether a bad block's error is a format error
// (ErrFormat: its checksum matched, its keys are out of order or its
// ratio points not as indexed) rather than a checksum's (ErrChecksum).
func blockFormatErr(err error) bool {
	return errors.Is(err, errOrder) || errors.Is(err, errRatioPoint) || errors.Is(err, errFundPoint)
}

// kindChecks returns the checks of the blocks of kind's columns sec,
// described by ix: each block's checksum, then its series' summaries
// and, with order (a load, whose engine.Build leaves that check to the
// blocks), their order. Ratio blocks have neither here: a load adds
// their points' check (ratioBlockCheck).
func kindChecks(kind string, sec []byte, ix dailyIndex, order bool) *blockChecks {
	c := newBlockChecks(sec, ix.Blocks)
	c.kind = kind
	var checks []func(blk []byte, c dailyCol) error
	switch kind {
	case "daily":
		checks = append(checks, dailyTailOf)
		if order {
			checks = append(checks, dailyOrder)
		}
	case "intraday":
		checks = append(checks, intradayTailOf)
		if order {
			checks = append(checks, intradayOrder)
		}
	}
	if len(checks) > 0 {
		in := blockSeries(ix)
		c.series = func(i int, blk []byte) error {
			at := ix.Blocks[i].Off
			for _, s := range ix.Series[in[i][0]:in[i][1]] {
				s.Off -= at // within blk
				for _, f := range checks {
					if err := f(blk, s); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	return c
}

// blockSeries returns, for each of the blocks of ix, the range [lo, hi)
// of ix.Series it holds (series lie in order, each within its block, as
// openDailyColumns and openIntradayColumns checked).
func blockSeries(ix dailyIndex) [][2]int {
	out := make([][2]int, len(ix.Blocks))
	for i, c := range ix.Series {
		r := &out[c.Block]
		if r[1] == 0 {
			r[0] = i
		}
		r[1] = i + 1
	}
	return out
}

// dailyOrder checks that daily series c of sec has valid, ascending
// dates (engine.Build's check of a daily series, made here on its
// block's first use).
func dailyOrder(sec []byte, c dailyCol) error {
	dates := view[engine.Date](sec[c.Off:], c.Rows)
	for r, d := range dates {
		if !d.Valid() {
			return fmt.Errorf("%w: daily series %s: row %d: date missing", errOrder, c.Ticker, r)
		}
		if r > 0 && d <= dates[r-1] {
			return fmt.Errorf("%w: daily series %s: row %d: date %s not after %s", errOrder, c.Ticker, r, d, dates[r-1])
		}
	}
	return nil
}

// intradayOrder checks that intraday series c of sec has ascending
// times.
func intradayOrder(sec []byte, c dailyCol) error {
	times := view[int64](sec[c.Off:], c.Rows)
	for r := 1; r < len(times); r++ {
		if times[r] <= times[r-1] {
			return fmt.Errorf("%w: intraday series %s: row %d: time %d not after %d", errOrder, c.Ticker, r, times[r], times[r-1])
		}
	}
	return nil
}

// verify returns nil when block i's bytes match its checksum, computing
// it on the first call only, and an error naming the block otherwise.
func (c *blockChecks) verify(i int) error { return c.verifyBytes(i, nil) }

// verifyBytes is verify, with the block's bytes read from data instead of
// the section when data is not nil (a copy of them: the background pass
// reads the file into a buffer instead of faulting the mapping's pages
// in); data must be 8-aligned.
func (c *blockChecks) verifyBytes(i int, data []byte) error {
	st := c.state[i].Load()
	if st == blockUnknown {
		b := c.blocks[i]
		if data == nil {
			data = c.sec[b.Off : b.Off+b.N]
		}
		st = blockGood
		if xxhash.Sum64(data) != b.Sum {
			st = blockBad
		} else if c.series != nil {
			if err := c.series(i, data); err != nil {
				c.reason.Store(i, err)
				st = blockBad
			}
		}
		if c.state[i].CompareAndSwap(blockUnknown, st) {
			c.done.Add(1)
			if st == blockBad {
				c.bad.Add(1)
				if c.set != nil {
					c.set.noteBad(c.blockErr(i))
				}
			}
		}
	}
	if st == blockBad {
		return c.blockErr(i)
	}
	return nil
}

// blockErr returns the error of bad block i.
func (c *blockChecks) blockErr(i int) error {
	b := c.blocks[i]
	kind := c.kind
	if kind == "" {
		kind = "column"
	}
	if r, ok := c.reason.Load(i); ok {
		// r wraps errOrder, errSummary or errRatioPoint, and names the
		// series or run.
		return fmt.Errorf("%s block %d (bytes %d+%d of its columns): %w", kind, i, b.Off, b.N, r.(error))
	}
	return fmt.Errorf("%w: %s block %d (bytes %d+%d of its columns)", errBlock, kind, i, b.Off, b.N)
}

// verifyAll verifies every block not yet verified (the background pass)
// and returns the blocks found bad, in order.
func (c *blockChecks) verifyAll() []int {
	var bad []int
	for i := range c.blocks {
		if c.verify(i) != nil {
			bad = append(bad, i)
		}
	}
	return bad
}

// The index of a daily column section, as stored (in a compressed
// section beside it): uvarint series count, then per series its ticker
// (uvarint length and bytes), uvarint rows, one byte form (0 compact,
// 1 wide), uvarint offset and uvarint block; then uvarint block count,
// then per block uvarint offset, uvarint length and its xxhash64 (8
// bytes, little-endian).

// appendDailyIndex appends ix as stored to dst.
func appendDailyIndex(dst []byte, ix dailyIndex) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ix.Series)))
	for _, c := range ix.Series {
		dst = binary.AppendUvarint(dst, uint64(len(c.Ticker)))
		dst = append(dst, c.Ticker...)
		dst = binary.AppendUvarint(dst, uint64(c.Rows))
		if c.Wide {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
		dst = binary.AppendUvarint(dst, uint64(c.Off))
		dst = binary.AppendUvarint(dst, uint64(c.Block))
		dst = append(dst, c.Tail...)
	}
	return appendBlockList(dst, ix.Blocks)
}

// appendBlockList appends a column index's block list as stored: uvarint
// block count, then per block uvarint offset, uvarint length and its
// xxhash64 (8 bytes, little-endian). It ends the index.
func appendBlockList(dst []byte, blocks []colBlock) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(blocks)))
	for _, b := range blocks {
		dst = binary.AppendUvarint(dst, uint64(b.Off))
		dst = binary.AppendUvarint(dst, uint64(b.N))
		dst = binary.LittleEndian.AppendUint64(dst, b.Sum)
	}
	return dst
}

// readBlockList reads what appendBlockList wrote at b[i:], which must
// end b. Not ok: what is wrong ("block count", "block", "trailing
// bytes") and the byte it was found at.
func readBlockList(b []byte, i int) (blocks []colBlock, what string, at int) {
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	nb, ok := uv(uint64(len(b)))
	if !ok || nb > uint64(len(b)-i)/10 { // a block takes 10 bytes at least
		return nil, "block count", i
	}
	blocks = make([]colBlock, nb)
	for k := range blocks {
		off, ok1 := uv(maxColumnBytes)
		n, ok2 := uv(maxColumnBytes)
		if !ok1 || !ok2 || len(b)-i < 8 {
			return nil, "block", i
		}
		blocks[k] = colBlock{Off: int64(off), N: int64(n), Sum: binary.LittleEndian.Uint64(b[i:])}
		i += 8
	}
	if i != len(b) {
		return nil, "trailing bytes", i
	}
	return blocks, "", i
}

// maxColumnBytes bounds a column section's size and the offsets its
// index gives (1 TiB).
const maxColumnBytes = 1 << 40

// readDailyIndex reads what appendDailyIndex wrote, each series of rows
// with a summary of tail bytes (tailBytes of the kind), refusing
// (errColumns) anything else: a count larger than the bytes left can
// hold, a number out of range, a form byte other than 0 or 1, a cut
// summary, or bytes left over. It does not check the index against its
// section (openDailyColumns does) nor the summaries against the bars
// (the blocks' checks do).
func readDailyIndex(b []byte, tail int) (dailyIndex, error) {
	i := 0
	fail := func(what string) (dailyIndex, error) {
		return dailyIndex{}, fmt.Errorf("%w: index: %s at byte %d", errColumns, what, i)
	}
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	ns, ok := uv(uint64(len(b)))
	if !ok || ns > uint64(len(b)-i)/5 { // a series takes 5 bytes at least
		return fail("series count")
	}
	ix := dailyIndex{Series: make([]dailyCol, ns)}
	for k := range ix.Series {
		c := &ix.Series[k]
		tl, ok := uv(uint64(len(b)))
		if !ok || tl > uint64(len(b)-i) {
			return fail("ticker length")
		}
		c.Ticker = string(b[i : i+int(tl)])
		i += int(tl)
		rows, ok := uv(math.MaxInt32)
		if !ok {
			return fail("rows")
		}
		if i >= len(b) || b[i] > 1 {
			return fail("form")
		}
		c.Rows, c.Wide = int(rows), b[i] == 1
		i++
		off, ok := uv(maxColumnBytes)
		if !ok {
			return fail("offset")
		}
		blk, ok := uv(maxColumnBytes)
		if !ok {
			return fail("block")
		}
		c.Off, c.Block = int64(off), int(blk)
		if c.Rows > 0 {
			if len(b)-i < tail {
				return fail("summary")
			}
			c.Tail = string(b[i : i+tail])
			i += tail
		}
	}
	blocks, what, at := readBlockList(b, i)
	if what != "" {
		i = at
		return fail(what)
	}
	ix.Blocks = blocks
	return ix, nil
}

// readUvarint reads the minimal uvarint at b[*i:], at most limit, and
// moves *i past it; not ok (and *i unmoved) for anything else: a cut or
// overlong encoding, or a value over limit. The column indexes' readers
// read every number through it.
func readUvarint(b []byte, i *int, limit uint64) (uint64, bool) {
	v, n := binary.Uvarint(b[*i:])
	if n <= 0 || v > limit || n != uvarintLen(v) {
		return 0, false
	}
	*i += n
	return v, true
}

// uvarintLen returns the bytes of v's minimal uvarint (an overlong
// encoding is refused).
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// decDailyColumns decodes the daily part of a format 6 file: the rows'
// total, then the index of the column area (d.ls.cols), whose series
// become u.Daily[lo:hi], used in place by a load (compactDaily), else
// expanded to their wide columns; their blocks are verified by
// d.ls.dailyChecks once every part is decoded.
func decDailyColumns(d *pdec, u *engine.Universe, lo, hi int) partStats {
	sec, ix, total, ok := d.columnPart("daily", hi-lo)
	if !ok {
		return partStats{}
	}
	ss, err := openDailyColumns(sec, ix)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if !d.ls.compactDaily {
		// Outside a load the Universe's readers take the wide columns
		// (engine.CompactSeries): compact series are expanded.
		for i := range ss {
			if ss[i].Len() > 0 && ss[i].Open == nil {
				ss[i] = *ss[i].Bars().Wide()
			}
		}
	}
	if d.ls.compactDaily {
		// Build reads the summaries instead of the bars; wide series stay
		// wide without a look at their values.
		for i, c := range ix.Series {
			if c.Rows > 0 {
				ss[i].SetSummary(readDailyTail(c.Tail))
				engine.KeepWide(&ss[i])
			}
		}
	}
	copy(u.Daily[lo:hi], ss)
	d.ls.addColumns("daily", sec, ix)
	return partStats{dailyRows: int(total)}
}

// columnPart reads the head of a format 6 part of a kind held in the
// column area: the rows' total, where the kind's columns lie in the area
// (uvarint offset and length; 8-aligned, within the area) and their
// index, which must list n series whose rows add up to the total. It
// returns the kind's columns and index.
func (d *pdec) columnPart(kind string, n int) (sec []byte, ix dailyIndex, total uint64, ok bool) {
	total = d.uv()
	base, size := d.uv(), d.uv()
	if d.err != nil {
		return nil, ix, 0, false
	}
	cols := d.ls.cols
	if base%8 != 0 || base > uint64(len(cols)) || size > uint64(len(cols))-base {
		d.fail("%s columns at %d+%d, outside the column area of %d bytes", kind, base, size, len(cols))
		return nil, ix, 0, false
	}
	ix, err := readDailyIndex(d.b[d.i:], tailBytes(kind))
	d.i = len(d.b)
	if err != nil {
		d.fail("%v", err)
		return nil, ix, 0, false
	}
	if len(ix.Series) != n {
		d.fail("%s index of %d series, the part holds %d", kind, len(ix.Series), n)
		return nil, ix, 0, false
	}
	if kind == "intraday" && d.ls.layout < compactIntradayLayout {
		// Layout revision 2: every intraday series is wide (56 bytes a
		// bar), its index flag unset.
		for i := range ix.Series {
			if ix.Series[i].Wide {
				d.fail("intraday series %d (%q) flagged wide in a layout revision %d file", i, ix.Series[i].Ticker, d.ls.layout)
				return nil, ix, 0, false
			}
			ix.Series[i].Wide = true
		}
	}
	rows := uint64(0)
	for _, c := range ix.Series {
		rows += uint64(c.Rows)
	}
	if rows != total {
		d.fail("%s rows: declared total %d, the index holds %d", kind, total, rows)
		return nil, ix, 0, false
	}
	return cols[base : base+size : base+size], ix, total, true
}

// addColumns records a kind's columns (a part of the column area) and
// their index, whose blocks are verified once every part is decoded
// (checkColumns), or on first use (ls.lazy).
func (ls *loadState) addColumns(kind string, sec []byte, ix dailyIndex) {
	ls.addColumnsWith(kind, sec, ix, nil, nil)
}

// addColumnsWith is addColumns with check (when not nil) as the blocks'
// check after their checksum (blockChecks.series), and more (when not
// nil) called with the lazy load's blocks and the kind's number in it.
func (ls *loadState) addColumnsWith(kind string, sec []byte, ix dailyIndex, check func(int, []byte) error, more func(*colBlocks, int16)) {
	c := kindChecks(kind, sec, ix, ls.compactDaily)
	if check != nil {
		c.series = check
	}
	if len(sec) > 0 && len(ls.cols) > 0 {
		c.at = ls.colsAt + int64(uintptr(unsafe.Pointer(&sec[0]))-uintptr(unsafe.Pointer(&ls.cols[0])))
	}
	ls.colMu.Lock()
	defer ls.colMu.Unlock()
	ls.colChecks = append(ls.colChecks, c)
	if ls.lazy != nil {
		k := ls.lazy.add(c, kind, ix)
		if more != nil {
			more(ls.lazy, k)
		}
	}
}

// checkColumns verifies that the kinds' columns cut the column area
// without gaps or overlap, and every block's checksum (ErrChecksum)
// unless they are verified on first use (ls.lazy).
func (ls *loadState) checkColumns() error {
	cs := ls.colChecks
	slices.SortFunc(cs, func(a, b *blockChecks) int {
		return cmp.Compare(uintptr(unsafe.Pointer(unsafe.SliceData(a.sec))), uintptr(unsafe.Pointer(unsafe.SliceData(b.sec))))
	})
	end := 0
	for _, c := range cs {
		if len(c.sec) > 0 && unsafe.SliceData(c.sec) != unsafe.SliceData(ls.cols[end:]) {
			return fmt.Errorf("%w: %w: the kinds' columns overlap or leave a gap at byte %d", ErrFormat, errColumns, end)
		}
		end += len(c.sec)
	}
	if end != len(ls.cols) {
		return fmt.Errorf("%w: %w: the kinds' columns hold %d bytes of the area's %d", ErrFormat, errColumns, end, len(ls.cols))
	}
	if ls.lazy != nil {
		return nil
	}
	for _, c := range cs {
		if bad := c.verifyAll(); len(bad) > 0 {
			err := c.verify(bad[0])
			if blockFormatErr(err) {
				return fmt.Errorf("%w: columns: %v", ErrFormat, err)
			}
			return fmt.Errorf("%w: columns: %v", ErrChecksum, err)
		}
	}
	return nil
}

// alignedBytes returns n zero bytes, 8-aligned.
func alignedBytes(n int64) []byte {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// Intraday column sections hold, series after series, each series'
// columns, every column starting at a multiple of 8 bytes from the
// section's start: compact series (engine.IntradayColumns) as times
// (int64 unix seconds), open, high, low, close (int32 cents), volume
// (int64 cents) and quantity (uint32), 36 bytes a bar; wide ones (values
// that do not fit cents) as times, open, high, low, close, volume
// (float64) and quantity (int64), 56 bytes a bar. Blocks and index are
// the daily sections'. In a file of layout revision 2 every series is
// wide and its index says compact (Wide false): columnPart reads it so.

// intradayColBytes returns the bytes a series of n bars takes, wide or
// compact.
func intradayColBytes(n int, wide bool) int64 {
	k := int64(n)
	if wide {
		return 7 * 8 * k
	}
	return 8*k + 4*pad8(4*k) + 8*k + pad8(4*k)
}

// appendIntradayColumns appends the column section of series to dst
// (empty or ending at a multiple of 8) and returns it with its index,
// whose offsets count from the section's start.
func appendIntradayColumns(dst []byte, series []engine.Intraday) ([]byte, dailyIndex) {
	k := blocker{base: int64(len(dst))}
	buf := intradayScratch.Get().(*engine.IntradayColumns)
	defer intradayScratch.Put(buf)
	for i := range series {
		s := &series[i]
		off := k.series(dst)
		c, compact := s.CompactColumns(buf)
		legacy := writeLayout < compactIntradayLayout // every series wide, flagged compact
		compact = compact && !legacy
		k.ix.Series = append(k.ix.Series, dailyCol{Ticker: s.Ticker, Rows: s.Len(), Wide: !compact && !legacy, Off: off,
			Block: len(k.ix.Blocks), Tail: writeTails.intraday(s)})
		dst = appendCol(dst, s.Times)
		if compact {
			for _, col := range [...][]int32{c.Open, c.High, c.Low, c.Close} {
				dst = appendCol(dst, col)
			}
			dst = appendCol(dst, c.Volume)
			dst = appendCol(dst, c.Quantity)
			continue
		}
		w := s.Expanded()
		for _, col := range [...][]engine.Num{w.Open, w.High, w.Low, w.Close, w.Volume} {
			dst = appendCol(dst, col)
		}
		dst = appendCol(dst, w.Quantity)
	}
	return k.finish(dst, len(series))
}

// intradayScratch holds the buffers appendIntradayColumns makes a
// series' compact columns in (engine.Intraday.CompactColumns), so that
// a build does not allocate them once a series.
var intradayScratch = sync.Pool{New: func() any { return new(engine.IntradayColumns) }}

// openIntradayColumns returns the series of an intraday column section
// sec (8-aligned) described by ix, their columns used in place (copied
// on a big-endian machine), with the checks of openDailyColumns.
func openIntradayColumns(sec []byte, ix dailyIndex) ([]engine.Intraday, error) {
	if len(sec) > 0 && uintptr(unsafe.Pointer(&sec[0]))%8 != 0 {
		return nil, fmt.Errorf("%w: not 8-aligned in memory", errColumns)
	}
	if err := checkBlocks(ix.Blocks, int64(len(sec))); err != nil {
		return nil, err
	}
	out := make([]engine.Intraday, len(ix.Series))
	next := int64(0)
	for i, c := range ix.Series {
		if c.Rows < 0 || c.Block < 0 || c.Block >= len(ix.Blocks) || c.Off < next || c.Off%8 != 0 {
			return nil, fmt.Errorf("%w: intraday series %d (%q): rows %d, block %d, at %d (the previous ends at %d)", errColumns, i, c.Ticker, c.Rows, c.Block, c.Off, next)
		}
		b := ix.Blocks[c.Block]
		if int64(c.Rows) > math.MaxInt32 || c.Off < b.Off || intradayColBytes(c.Rows, c.Wide) > b.Off+b.N-c.Off {
			return nil, fmt.Errorf("%w: intraday series %d (%q): %d rows at %d leave block %d (%d+%d)", errColumns, i, c.Ticker, c.Rows, c.Off, c.Block, b.Off, b.N)
		}
		out[i] = intradaySeriesAt(sec, c)
		next = c.Off + intradayColBytes(c.Rows, c.Wide)
	}
	return out, nil
}

// intradaySeriesAt returns the series c of an intraday column section
// sec, its columns used in place (c lies within sec): compact series as
// engine.CompactIntradayOf, wide ones with their wide columns.
func intradaySeriesAt(sec []byte, c dailyCol) engine.Intraday {
	n, k := c.Rows, int64(c.Rows)
	p := c.Off
	take := func(width int64) []byte {
		col := sec[p:]
		p += pad8(width * k)
		return col
	}
	times := view[int64](take(8), n)
	if c.Wide {
		return engine.Intraday{Ticker: c.Ticker, Times: times,
			Open: view[engine.Num](take(8), n), High: view[engine.Num](take(8), n), Low: view[engine.Num](take(8), n),
			Close: view[engine.Num](take(8), n), Volume: view[engine.Num](take(8), n), Quantity: view[int64](take(8), n)}
	}
	open, high, low, close := view[int32](take(4), n), view[int32](take(4), n), view[int32](take(4), n), view[int32](take(4), n)
	vol := view[int64](take(8), n)
	qty := view[uint32](take(4), n)
	return engine.CompactIntradayOf(c.Ticker, times, open, high, low, close, vol, qty)
}

// decIntradayColumns decodes the intraday part of a format 6 file: as
// decDailyColumns, into u.Intraday[lo:hi].
func decIntradayColumns(d *pdec, u *engine.Universe, lo, hi int) partStats {
	sec, ix, total, ok := d.columnPart("intraday", hi-lo)
	if !ok {
		return partStats{}
	}
	ss, err := openIntradayColumns(sec, ix)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if d.ls.compactDaily {
		// Build reads the summaries instead of the bars; wide series stay
		// wide without a look at their values.
		for i, c := range ix.Series {
			if c.Rows > 0 {
				ss[i].SetSummary(readIntradayTail(c.Tail))
				engine.KeepWideIntraday(&ss[i])
			}
		}
	} else {
		// Outside a load the Universe's readers take the wide columns:
		// compact series are expanded.
		for i, c := range ix.Series {
			if !c.Wide {
				ss[i] = *ss[i].Expanded()
			}
		}
	}
	copy(u.Intraday[lo:hi], ss)
	d.ls.addColumns("intraday", sec, ix)
	return partStats{intradayRows: int(total)}
}
