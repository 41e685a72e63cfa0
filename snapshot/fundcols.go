package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// Fund ratio columns (format 6, docs/snapshot-format.md): the fund ratio
// points laid out in the column area, after the ratio columns, as the
// engine holds them in memory, so that a load uses them where they lie
// and reads a fund's points on its first use.
//
// A point takes fundPointBytes, little-endian (engine.FundRatioPoint's
// layout):
//
//	 0 float64 value
//	 8 int64   publish date (engine.Stamp)
//	16 int64   retrieval date (engine.Stamp)
//	24 int32   reference date (engine.Date)
//	28 uint32  fund (its number in the index)
//	32 uint32  sources: 0 none (nil), else 1 + the number of a list of the
//	           part (one of the fund's own)
//	36 uint16  indicator (an index into the catalog)
//	38 uint8   frequency
//	39 one zero byte
//
// The points are in engine.CompareFundRatioPoints order, one run per
// fund; the blocks (colBlock) fall between runs, so a fund's points lie
// in one block. The fund ratios part holds the columns' place, their
// index (per fund its id, points, source lists and block; the blocks)
// and the source lists, each fund's in a range of its own.

// fundPointBytes is the bytes a fund point takes in the columns.
const fundPointBytes = 40

// fundInPlace reports whether engine.FundRatioPoint is laid out in
// memory as a point is in the columns: the points are then used in
// place, else decoded.
var fundInPlace = littleEndian && func() bool {
	var p engine.FundRatioPoint
	return unsafe.Sizeof(p) == fundPointBytes &&
		unsafe.Offsetof(p.Value) == 0 && unsafe.Offsetof(p.PublishDate) == 8 &&
		unsafe.Offsetof(p.RetrievalDate) == 16 && unsafe.Offsetof(p.ReferenceDate) == 24 &&
		unsafe.Offsetof(p.FundID) == 28 && unsafe.Offsetof(p.Sources) == 32 &&
		unsafe.Offsetof(p.Indicator) == 36 && unsafe.Offsetof(p.Frequency) == 38 &&
		unsafe.Sizeof(p.ReferenceDate) == 4 && unsafe.Sizeof(p.FundID) == 4 && unsafe.Sizeof(p.Frequency) == 1
}()

// fundRun is one fund's points in the columns: how many, how many source
// lists it has (the next ones), and the block that holds its points.
type fundRun struct {
	ID            string
	Points, Lists int64
	Block         int
}

// fundIndex is the index of the fund ratio columns.
type fundIndex struct {
	Points, Lists int64
	Runs          []fundRun // one per fund, by id ascending
	Blocks        []colBlock
}

// errFundPoint is wrapped by the error of a fund ratio block whose
// checksum matches but one of whose points is not as its run says (no
// writer makes one).
var errFundPoint = errors.New("fund ratio points not as indexed")

// fundPart is a format 6 fund ratios part as written: the columns'
// place and index, as stored, and the source lists, by number.
type fundPart struct {
	body  []byte
	lists [][]engine.Source
}

// sortedFundPoints returns dv's fund points in CompareFundRatioPoints
// order (dv's own when they are).
func sortedFundPoints(dv *engine.Derived) []engine.FundRatioPoint {
	compare := func(x, y *engine.FundRatioPoint) int {
		if x.FundID != y.FundID {
			if c := strings.Compare(dv.FundSymOf(x.FundID).String(), dv.FundSymOf(y.FundID).String()); c != 0 {
				return c
			}
		}
		a, b := *x, *y
		a.FundID, b.FundID = 0, 0
		return engine.CompareFundRatioPoints(&a, &b)
	}
	ps := dv.FundRatios
	for i := 1; i < len(ps); i++ {
		if compare(&ps[i-1], &ps[i]) > 0 {
			ps = slices.Clone(ps)
			slices.SortStableFunc(ps, func(x, y engine.FundRatioPoint) int { return compare(&x, &y) })
			break
		}
	}
	return ps
}

// fundPointsOf is sortedFundPoints (a variable so that a test can write
// points out of order).
var fundPointsOf = sortedFundPoints

// writeFundColumns writes the fund ratio columns of dv's points to put, a
// block at a time, and returns their size, index and source lists.
func writeFundColumns(dv *engine.Derived, put func([]byte) error) (int64, fundIndex, [][]engine.Source, error) {
	ps := fundPointsOf(dv)
	w := colStream{put: put}
	var ix fundIndex
	var lists [][]engine.Source
	var rec [fundPointBytes]byte
	le := binary.LittleEndian
	keyBuf := newPenc(0)
	for lo := 0; lo < len(ps); {
		fund := dv.FundSymOf(ps[lo].FundID)
		hi := lo + 1
		for hi < len(ps) && dv.FundSymOf(ps[hi].FundID) == fund {
			hi++
		}
		if uint64(len(ix.Runs)) >= math.MaxUint32 {
			return 0, ix, nil, fmt.Errorf("fund ratio points: more than %d funds", uint32(math.MaxUint32))
		}
		w.boundary()
		run := fundRun{ID: fund.String(), Points: int64(hi - lo), Block: len(w.ix.Blocks)}
		// The fund's lists, each once: by the point's number, and by what
		// it reads back as (sourcesKey).
		num, byKey := map[uint32]uint32{}, map[string]uint32{}
		for i := lo; i < hi; i++ {
			p := &ps[i]
			var src uint32
			if p.Sources != 0 {
				if uint64(p.Sources) > uint64(len(dv.FundSources)) {
					return 0, ix, nil, fmt.Errorf("fund ratio point of %s: sources %d beyond the %d lists", fund, p.Sources, len(dv.FundSources))
				}
				k, ok := num[p.Sources]
				if !ok {
					l := dv.FundSources[p.Sources-1]
					key := "n" // nil
					if l != nil {
						key = "l" + sourcesKey(keyBuf, l)
					}
					if k, ok = byKey[key]; !ok {
						if uint64(len(lists)) >= math.MaxUint32-1 {
							return 0, ix, nil, fmt.Errorf("fund ratio points: more than %d source lists", uint32(math.MaxUint32-1))
						}
						lists = append(lists, l)
						k = uint32(len(lists))
						byKey[key] = k
						run.Lists++
					}
					num[p.Sources] = k
				}
				src = k
			}
			le.PutUint64(rec[0:], math.Float64bits(float64(p.Value)))
			le.PutUint64(rec[8:], uint64(p.PublishDate))
			le.PutUint64(rec[16:], uint64(p.RetrievalDate))
			le.PutUint32(rec[24:], uint32(p.ReferenceDate))
			le.PutUint32(rec[28:], uint32(len(ix.Runs)))
			le.PutUint32(rec[32:], src)
			le.PutUint16(rec[36:], p.Indicator)
			rec[38], rec[39] = byte(p.Frequency), 0
			w.buf = append(w.buf, rec[:]...)
		}
		ix.Runs = append(ix.Runs, run)
		lo = hi
	}
	w.flush()
	ix.Points, ix.Lists, ix.Blocks = int64(len(ps)), int64(len(lists)), w.ix.Blocks
	return w.start, ix, lists, w.err
}

// newFundPart returns the fund ratios part of fund columns of size bytes
// at base in the column area, indexed by ix, and their lists.
func newFundPart(base, size int64, ix fundIndex, lists [][]engine.Source) *fundPart {
	b := binary.AppendUvarint(nil, uint64(base))
	b = binary.AppendUvarint(b, uint64(size))
	x := appendFundIndex(nil, ix)
	b = binary.AppendUvarint(b, uint64(len(x)))
	return &fundPart{body: append(b, x...), lists: lists}
}

// appendFundPart appends the fund ratio columns of dv to the column area
// cols (ending at a multiple of 8) and records the part that indexes
// them in c.
func appendFundPart(c *encoder, cols []byte, dv *engine.Derived) ([]byte, error) {
	base := len(cols)
	_, ix, lists, err := writeFundColumns(dv, func(b []byte) error {
		cols = append(cols, b...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.fund = newFundPart(int64(base), int64(len(cols)-base), ix, lists)
	return cols, nil
}

// encFundCols writes the one fund ratios part of a format 6 file: the
// columns' place, the index's length and the index, then the source
// lists (see decFundColumns).
func (e *penc) encFundCols(p *fundPart) {
	e.body = append(e.body, p.body...)
	for _, l := range p.lists {
		encSources(e, l, 0)
	}
}

// The index of the fund ratio columns, as stored: uvarint points and
// source lists; uvarint fund count, then per fund its id (uvarint length
// and bytes), uvarint points, uvarint source lists and uvarint block;
// then the block list (appendBlockList).

// appendFundIndex appends ix as stored to dst.
func appendFundIndex(dst []byte, ix fundIndex) []byte {
	dst = binary.AppendUvarint(dst, uint64(ix.Points))
	dst = binary.AppendUvarint(dst, uint64(ix.Lists))
	dst = binary.AppendUvarint(dst, uint64(len(ix.Runs)))
	for _, r := range ix.Runs {
		dst = binary.AppendUvarint(dst, uint64(len(r.ID)))
		dst = append(dst, r.ID...)
		dst = binary.AppendUvarint(dst, uint64(r.Points))
		dst = binary.AppendUvarint(dst, uint64(r.Lists))
		dst = binary.AppendUvarint(dst, uint64(r.Block))
	}
	return appendBlockList(dst, ix.Blocks)
}

// readFundIndex reads what appendFundIndex wrote, refusing (errColumns)
// anything else: a count larger than the bytes left can hold, funds not
// in ascending order of id (each once), a run of no point, runs whose
// points or lists do not add up to the totals, or bytes left over. It
// does not check the index against its columns (openFundColumns does).
func readFundIndex(b []byte) (fundIndex, error) {
	i := 0
	fail := func(what string) (fundIndex, error) {
		return fundIndex{}, fmt.Errorf("%w: fund ratio index: %s at byte %d", errColumns, what, i)
	}
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	var ix fundIndex
	np, ok1 := uv(maxColumnBytes / fundPointBytes)
	nl, ok2 := uv(math.MaxUint32 - 1)
	if !ok1 || !ok2 {
		return fail("totals")
	}
	ix.Points, ix.Lists = int64(np), int64(nl)
	nf, ok := uv(math.MaxUint32)
	if !ok || nf > uint64(len(b)-i)/4 { // a fund takes 4 bytes at least
		return fail("fund count")
	}
	ix.Runs = make([]fundRun, nf)
	var p, l int64
	for k := range ix.Runs {
		n, ok := uv(uint64(len(b)))
		if !ok || n > uint64(len(b)-i) {
			return fail("fund id")
		}
		id := string(b[i : i+int(n)])
		i += int(n)
		if k > 0 && id <= ix.Runs[k-1].ID {
			return fail("funds out of order")
		}
		pts, ok1 := uv(uint64(ix.Points - p))
		ls, ok2 := uv(uint64(ix.Lists - l))
		blk, ok3 := uv(maxColumnBytes)
		if !ok1 || !ok2 || !ok3 || pts == 0 {
			return fail("run")
		}
		ix.Runs[k] = fundRun{ID: id, Points: int64(pts), Lists: int64(ls), Block: int(blk)}
		p, l = p+int64(pts), l+int64(ls)
	}
	if p != ix.Points || l != ix.Lists {
		return fail("runs that do not add up to the totals")
	}
	blocks, what, at := readBlockList(b, i)
	if what != "" {
		i = at
		return fail(what)
	}
	ix.Blocks = blocks
	return ix, nil
}

// openFundColumns checks that the runs and blocks of ix cut the fund
// columns sec (8-aligned) exactly and that every run lies in its block,
// and returns the points: with inPlace (and fundInPlace) sec itself,
// naming their fund by its number, else decoded into the heap with syms
// (the funds' Syms, by number) in place of the numbers. It reads no
// point's fields but to copy them: their blocks' check, after their
// checksum, checks them (fundBlockCheck).
func openFundColumns(sec []byte, ix fundIndex, inPlace bool, syms []engine.Sym) ([]engine.FundRatioPoint, error) {
	if len(sec) > 0 && uintptr(unsafe.Pointer(&sec[0]))%8 != 0 {
		return nil, fmt.Errorf("%w: not 8-aligned in memory", errColumns)
	}
	size := int64(len(sec))
	if err := checkBlocks(ix.Blocks, size); err != nil {
		return nil, err
	}
	if ix.Points <= 0 || fundPointBytes*ix.Points != size {
		return nil, fmt.Errorf("%w: %d fund ratio points in %d bytes", errColumns, ix.Points, size)
	}
	var p int64
	for k, r := range ix.Runs {
		if r.Block < 0 || r.Block >= len(ix.Blocks) || !within(ix.Blocks[r.Block], fundPointBytes*p, fundPointBytes*r.Points) {
			return nil, fmt.Errorf("%w: fund ratio run %d (%s) leaves its block", errColumns, k, r.ID)
		}
		p += r.Points
	}
	if inPlace && fundInPlace {
		return unsafe.Slice((*engine.FundRatioPoint)(unsafe.Pointer(&sec[0])), ix.Points), nil
	}
	ps := make([]engine.FundRatioPoint, ix.Points)
	var at int64
	for k, r := range ix.Runs {
		b := sec[fundPointBytes*at : fundPointBytes*(at+r.Points)]
		for j := range r.Points {
			ps[at+j] = decodeFundPoint(b[fundPointBytes*j:])
			ps[at+j].FundID = syms[k]
		}
		at += r.Points
	}
	return ps, nil
}

// decodeFundPoint decodes the point at the start of b.
func decodeFundPoint(b []byte) engine.FundRatioPoint {
	le := binary.LittleEndian
	return engine.FundRatioPoint{
		Value:       engine.Num(math.Float64frombits(le.Uint64(b))),
		PublishDate: engine.Stamp(le.Uint64(b[8:])), RetrievalDate: engine.Stamp(le.Uint64(b[16:])),
		ReferenceDate: engine.Date(int32(le.Uint32(b[24:]))),
		FundID:        engine.Sym(le.Uint32(b[28:])), Sources: le.Uint32(b[32:]),
		Indicator: le.Uint16(b[36:]), Frequency: engine.Frequency(b[38]),
	}
}

// checkFundRun checks the points b (bytes) of the run of fund k, whose
// source lists are [lo, hi) of the part's: each names fund k and no list
// or one of its own, a valid frequency and a zero last byte, and, with
// ncat >= 0, an indicator of the ncat of the catalog, the points in
// engine.CompareFundRatioPoints order (engine.Build's checks, which a
// load leaves to the blocks: BuildOptions.FundRatiosChecked). Its error
// wraps errFundPoint.
func checkFundRun(b []byte, k uint32, lo, hi int64, ncat int) error {
	le := binary.LittleEndian
	for j := 0; j+fundPointBytes <= len(b); j += fundPointBytes {
		q := b[j : j+fundPointBytes]
		fund, src := le.Uint32(q[28:]), le.Uint32(q[32:])
		if fund != k || src != 0 && (int64(src)-1 < lo || int64(src)-1 >= hi) || !validFrequency(engine.Frequency(q[38])) || q[39] != 0 {
			return fmt.Errorf("%w: fund ratio point %d of run %d: fund %d, sources %d (the run's lists %d..%d), frequency %d",
				errFundPoint, j/fundPointBytes, k, fund, src, lo, hi, q[38])
		}
		if ncat < 0 {
			continue
		}
		if ind := le.Uint16(q[36:]); int(ind) >= ncat {
			return fmt.Errorf("%w: fund ratio point %d of run %d: indicator %d outside the catalog (%d entries)", errFundPoint, j/fundPointBytes, k, ind, ncat)
		}
		if j == 0 {
			continue
		}
		x, y := decodeFundPoint(b[j-fundPointBytes:]), decodeFundPoint(q)
		if engine.CompareFundRatioPoints(&x, &y) > 0 {
			return fmt.Errorf("%w: fund ratio point %d of run %d: points out of order", errFundPoint, j/fundPointBytes, k)
		}
	}
	return nil
}

// fundBlockCheck returns the check of the points in a fund ratio block
// (blockChecks.series) of columns indexed by ix: the runs in the block
// (checkFundRun), ncat giving the catalog's size at the time of the
// check.
func fundBlockCheck(ix fundIndex, ncat func() int) func(i int, blk []byte) error {
	type runAt struct {
		k      int
		off    int64 // the run's first point, in the columns
		lo, hi int64 // its lists
	}
	in := make([][]runAt, len(ix.Blocks))
	var p, l int64
	for k, r := range ix.Runs {
		in[r.Block] = append(in[r.Block], runAt{k, fundPointBytes * p, l, l + r.Lists})
		p += r.Points
		l += r.Lists
	}
	return func(i int, blk []byte) error {
		if len(in[i]) == 0 {
			return nil
		}
		at, n := ix.Blocks[i].Off, ncat()
		for _, ra := range in[i] {
			b := blk[ra.off-at : ra.off-at+fundPointBytes*ix.Runs[ra.k].Points]
			if err := checkFundRun(b, uint32(ra.k), ra.lo, ra.hi, n); err != nil {
				return err
			}
		}
		return nil
	}
}

// fundLists is a fund's range of source lists, [lo, hi) of
// Derived.FundSources (shareFundLists).
type fundLists struct {
	id     string
	lo, hi int
}

// decFundColumns decodes the fund ratios part of a format 6 file (see
// encFundCols). A load (compact) uses the points in place, naming their
// fund by its number in u.Derived.FundSyms, and leaves Build their runs
// (Derived.FundRuns); otherwise they are decoded with Syms of the
// process.
func decFundColumns(d *pdec, u *engine.Universe, lo, hi int) partStats {
	sources := newSourcePool(d)
	base, size, n := d.uv(), d.uv(), d.uv()
	if d.err != nil {
		return partStats{}
	}
	cols := d.ls.cols
	if base%8 != 0 || base > uint64(len(cols)) || size > uint64(len(cols))-base || n > uint64(d.remaining()) {
		d.fail("fund ratio columns at %d+%d, outside the column area of %d bytes, or an index beyond the part", base, size, len(cols))
		return partStats{}
	}
	ix, err := readFundIndex(d.b[d.i : d.i+int(n)])
	d.i += int(n)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if lo != 0 || ix.Points != int64(hi-lo) {
		d.fail("fund ratio index of %d points, the part holds %d..%d", ix.Points, lo, hi)
		return partStats{}
	}
	if ix.Lists > int64(d.remaining()) {
		d.fail("fund ratio index of %d source lists beyond the part", ix.Lists)
		return partStats{}
	}
	lists := make([][]engine.Source, ix.Lists)
	for k := range lists {
		if d.err != nil {
			return partStats{}
		}
		lists[k] = sources.takeDistinct(d)
	}
	sources.done(d)
	if d.err != nil {
		return partStats{}
	}
	syms := make([]engine.Sym, len(ix.Runs))
	for k, r := range ix.Runs {
		syms[k] = engine.Intern(r.ID)
	}
	sec := cols[base : base+size : base+size]
	inPlace := d.ls.compactDaily && fundInPlace
	ps, err := openFundColumns(sec, ix, inPlace, syms)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	ranges := make([]fundLists, len(ix.Runs))
	l := 0
	for k, r := range ix.Runs {
		ranges[k] = fundLists{r.ID, l, l + int(r.Lists)}
		l += int(r.Lists)
	}
	dv := &u.Derived
	dv.FundRatios, dv.FundSources = ps, lists
	// Each block's points are checked after its checksum (before the
	// snapshot is used, or on first use and by the background pass).
	check := fundBlockCheck(ix, d.ls.catalogCell())
	if inPlace {
		dv.FundSyms = syms
		runs := make([]engine.RatioRun, len(ix.Runs))
		p := 0
		for k, r := range ix.Runs {
			runs[k] = engine.RatioRun{Company: engine.Sym(k), Lo: p, Hi: p + int(r.Points)}
			p += int(r.Points)
		}
		dv.FundRuns = runs
	}
	d.ls.fundLists = ranges
	d.ls.addColumnsWith("fund ratios", sec, dailyIndex{Blocks: ix.Blocks}, check, func(x *colBlocks, k int16) {
		x.addFunds(k, ix)
	})
	return partStats{}
}

// catalogCell returns the cell that is given the catalog's length once
// every part is decoded (readFrom sets it), made on the first call: the
// ratio and fund ratio blocks' checks read it. A check outlives the load
// (the background pass holds it): it must not hold the Universe.
func (ls *loadState) catalogCell() func() int {
	ls.colMu.Lock()
	if ls.catalogLen == nil {
		ls.catalogLen = new(atomic.Int64)
	}
	c := ls.catalogLen
	ls.colMu.Unlock()
	return func() int { return int(c.Load()) }
}

// addFunds records the block of each fund's points (fund columns ix,
// kind k) as that fund's (a fund is a company: Company verifies them).
func (x *colBlocks) addFunds(k int16, ix fundIndex) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byCompany == nil {
		x.byCompany = make(map[string][]blockRef, len(ix.Runs))
	}
	for _, r := range ix.Runs {
		x.byCompany[r.ID] = append(x.byCompany[r.ID], blockRef{kind: k, block: int32(r.Block)})
	}
}

// shareFundLists is shareFundSources for a format 6 file, which gives
// each fund's range of lists: each list equal to the sources of one of
// the fund's reports becomes that report's slice, sought from the report
// after the one found last. It reads no point.
func shareFundLists(u *engine.Universe, funds []fundLists) {
	d := &u.Derived
	if len(d.FundSources) == 0 || len(u.FundReports) == 0 {
		return
	}
	runs := fundReportRuns(u.FundReports)
	for _, f := range funds {
		sp, ok := runs[f.id]
		if !ok {
			continue
		}
		run, cur := u.FundReports[sp.lo:sp.hi], 0
		for li := f.lo; li < f.hi && li < len(d.FundSources); li++ {
			l := d.FundSources[li]
			if len(l) == 0 {
				continue
			}
			for j := range run {
				at := (cur + j) % len(run)
				if slices.Equal(run[at].Sources, l) {
					d.FundSources[li] = run[at].Sources
					cur = at + 1
					break
				}
			}
		}
	}
}
