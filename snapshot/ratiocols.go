package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// Ratio columns (format 6, docs/snapshot-format.md): the ratio points
// laid out in the column area, after the intraday columns, as the
// engine holds them in memory, so that a load uses them where they lie.
//
// The kind's columns are the points, 48 bytes each (ratioPointBytes, the
// layout of engine.RatioPoint), then every point's variables as one
// float64 column, in point order. A point's company and ticker are
// indexes into the part's symbol table (ratioIndex.Syms, interned at
// open into engine.Derived.RatioSyms) and its VarsAt the index of its
// first variable in the kind's variables. The points are cut into runs
// of one company each (ratioRun); the blocks (colBlock, as the daily
// columns') fall between runs: a run's points lie in one block and its
// variables in one block.

// ratioPointBytes is the bytes a point takes in the columns: value
// (float64 bits), publication and retrieval (int64 Stamps), reference
// date (int32), company and ticker (uint32 symbol indexes), VarsAt
// (uint32), indicator (uint16), class, frequency and variable count (one
// byte each), three zero bytes.
const ratioPointBytes = 48

// ratioInPlace reports whether engine.RatioPoint is laid out in memory
// as a point is in the columns (a little-endian machine, the expected
// field offsets): the points are then used in place, else decoded.
var ratioInPlace = littleEndian && func() bool {
	var p engine.RatioPoint
	return unsafe.Sizeof(p) == ratioPointBytes &&
		unsafe.Offsetof(p.Value) == 0 && unsafe.Offsetof(p.PublishDate) == 8 &&
		unsafe.Offsetof(p.RetrievalDate) == 16 && unsafe.Offsetof(p.ReferenceDate) == 24 &&
		unsafe.Offsetof(p.CompanyID) == 28 && unsafe.Offsetof(p.Ticker) == 32 &&
		unsafe.Offsetof(p.VarsAt) == 36 && unsafe.Offsetof(p.Indicator) == 40 &&
		unsafe.Offsetof(p.Class) == 42 && unsafe.Offsetof(p.Frequency) == 43 &&
		unsafe.Offsetof(p.NVars) == 44 &&
		unsafe.Sizeof(p.ReferenceDate) == 4 && unsafe.Sizeof(p.PublishDate) == 8
}()

// ratioRun is one company's points in the columns: its company (a
// symbol index), how many points and variables it has, and the blocks
// that hold them.
type ratioRun struct {
	Company          uint32
	Points, Vars     int64
	PointBk, VarsBlk int
}

// ratioIndex is the index of the ratio columns: the points' and
// variables' totals, the symbol table, the runs and the blocks.
type ratioIndex struct {
	Points, Vars int64
	Syms         []string
	Runs         []ratioRun
	Blocks       []colBlock
}

// ratioColBytes returns the bytes of the columns of p points and v
// variables.
func ratioColBytes(p, v int64) int64 { return ratioPointBytes*p + 8*v }

// appendRatioColumns appends the ratio columns of dv's points to dst
// (empty or ending at a multiple of 8) and returns it with their index.
func appendRatioColumns(dst []byte, dv *engine.Derived) ([]byte, ratioIndex, error) {
	_, ix, err := writeRatioColumns(dv, func(b []byte) error {
		dst = append(dst, b...)
		return nil
	})
	if err != nil {
		return nil, ix, err
	}
	return dst, ix, nil
}

// writeRatioColumns writes the ratio columns of dv's points to put, a
// block at a time (only the open block is held; put must not keep the
// slice it is given), and returns their size and index. Variables are
// written in point order (VarsAt counts from the kind's first variable).
// Blocks are cut between runs as colStream cuts them between series.
func writeRatioColumns(dv *engine.Derived, put func([]byte) error) (int64, ratioIndex, error) {
	r := newRatioWriter(put)
	if err := r.points(dv); err != nil {
		return 0, r.ix, err
	}
	// The variables, run after run (their blocks fall between runs; a
	// run without variables names the open block, never empty here).
	ps, next := dv.Ratios, 0
	for ri := range r.ix.Runs {
		r.runVars(ri, func(b []byte) []byte {
			for i := next; i < next+int(r.ix.Runs[ri].Points); i++ {
				for _, v := range dv.Vars(&ps[i]) {
					b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(v)))
				}
			}
			return b
		})
		next += int(r.ix.Runs[ri].Points)
	}
	return r.finish()
}

// ratioWriter writes ratio columns through a colStream: the points of
// one or more consecutive groups of companies (points, once for each
// group, in order), then every run's variables (runVars, run after run),
// then finish. A build hands it the points of each group of companies
// as they are derived, so that the whole kind is never in memory.
type ratioWriter struct {
	w     colStream
	ix    ratioIndex
	symOf map[string]uint32
	at    uint64 // the next point's first variable
}

func newRatioWriter(put func([]byte) error) *ratioWriter {
	return &ratioWriter{w: colStream{put: put}, ix: ratioIndex{Syms: []string{""}}, symOf: map[string]uint32{"": 0}}
}

// sym returns the index of s (a symbol of dv) in the symbol table,
// adding it on first use.
func (r *ratioWriter) sym(dv *engine.Derived, s engine.Sym) uint32 {
	str := dv.SymOf(s).String()
	i, ok := r.symOf[str]
	if !ok {
		i = uint32(len(r.ix.Syms))
		r.symOf[str] = i
		r.ix.Syms = append(r.ix.Syms, str)
	}
	return i
}

// points writes dv's points, which follow the points written so far
// (companies of their own, in order), one run per company.
func (r *ratioWriter) points(dv *engine.Derived) error {
	ps, w, first := dv.Ratios, &r.w, r.ix.Points
	for lo := 0; lo < len(ps); {
		hi := lo + 1
		for hi < len(ps) && ps[hi].CompanyID == ps[lo].CompanyID {
			hi++
		}
		w.boundary()
		run := ratioRun{Company: r.sym(dv, ps[lo].CompanyID), Points: int64(hi - lo), PointBk: len(w.ix.Blocks)}
		for i := lo; i < hi; i++ {
			p := &ps[i]
			if n := len(dv.Vars(p)); n != int(p.NVars) {
				return fmt.Errorf("ratio point %d: variables [%d, +%d) beyond the %d stored", first+int64(i), p.VarsAt, p.NVars, len(dv.RatioVars))
			}
			if r.at+uint64(p.NVars) > math.MaxUint32 {
				return fmt.Errorf("ratio point %d: more than %d variables", first+int64(i), uint32(math.MaxUint32))
			}
			b := binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(float64(p.Value)))
			b = binary.LittleEndian.AppendUint64(b, uint64(p.PublishDate))
			b = binary.LittleEndian.AppendUint64(b, uint64(p.RetrievalDate))
			b = binary.LittleEndian.AppendUint32(b, uint32(p.ReferenceDate))
			b = binary.LittleEndian.AppendUint32(b, r.sym(dv, p.CompanyID))
			b = binary.LittleEndian.AppendUint32(b, r.sym(dv, p.Ticker))
			b = binary.LittleEndian.AppendUint32(b, uint32(r.at))
			b = binary.LittleEndian.AppendUint16(b, p.Indicator)
			w.buf = append(b, byte(p.Class), byte(p.Frequency), p.NVars, 0, 0, 0)
			r.at += uint64(p.NVars)
			run.Vars += int64(p.NVars)
		}
		r.ix.Runs = append(r.ix.Runs, run)
		lo = hi
	}
	r.ix.Points += int64(len(ps))
	return nil
}

// runVars writes the variables of run ri (the runs in order, once every
// point is written): add appends their 8*Vars bytes to the buffer it is
// given and returns it.
func (r *ratioWriter) runVars(ri int, add func([]byte) []byte) {
	if r.ix.Runs[ri].Vars > 0 {
		r.w.boundary()
	}
	r.ix.Runs[ri].VarsBlk = len(r.w.ix.Blocks)
	r.w.buf = add(r.w.buf)
}

// finish closes the last block and returns the columns' size and index.
func (r *ratioWriter) finish() (int64, ratioIndex, error) {
	r.ix.Vars = int64(r.at)
	r.w.flush()
	r.ix.Blocks = r.w.ix.Blocks
	return r.w.start, r.ix, r.w.err
}

// The index of the ratio columns, as stored (in the ratios part, after
// the columns' place): uvarint points and variables; uvarint symbol
// count, then per symbol its uvarint length and bytes; uvarint run
// count, then per run uvarint company, points, variables, points' block
// and variables' block; uvarint block count, then per block uvarint
// offset, uvarint length and its xxhash64 (8 bytes, little-endian).

// appendRatioIndex appends ix as stored to dst.
func appendRatioIndex(dst []byte, ix ratioIndex) []byte {
	dst = binary.AppendUvarint(dst, uint64(ix.Points))
	dst = binary.AppendUvarint(dst, uint64(ix.Vars))
	dst = binary.AppendUvarint(dst, uint64(len(ix.Syms)))
	for _, s := range ix.Syms {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(len(ix.Runs)))
	for _, r := range ix.Runs {
		for _, v := range [...]uint64{uint64(r.Company), uint64(r.Points), uint64(r.Vars), uint64(r.PointBk), uint64(r.VarsBlk)} {
			dst = binary.AppendUvarint(dst, v)
		}
	}
	return appendBlockList(dst, ix.Blocks)
}

// readRatioIndex reads what appendRatioIndex wrote, refusing
// (errColumns) anything else: a count larger than the bytes left can
// hold, a number out of range, or bytes left over. It does not check the
// index against its columns (openRatioColumns does).
func readRatioIndex(b []byte) (ratioIndex, error) {
	i := 0
	fail := func(what string) (ratioIndex, error) {
		return ratioIndex{}, fmt.Errorf("%w: ratio index: %s at byte %d", errColumns, what, i)
	}
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	var ix ratioIndex
	np, ok1 := uv(maxColumnBytes / ratioPointBytes)
	nv, ok2 := uv(math.MaxUint32)
	if !ok1 || !ok2 {
		return fail("totals")
	}
	ix.Points, ix.Vars = int64(np), int64(nv)
	ns, ok := uv(math.MaxUint32)
	if !ok || ns > uint64(len(b)-i) { // a symbol takes a byte at least
		return fail("symbol count")
	}
	ix.Syms = make([]string, ns)
	for k := range ix.Syms {
		l, ok := uv(uint64(len(b)))
		if !ok || l > uint64(len(b)-i) {
			return fail("symbol length")
		}
		ix.Syms[k] = string(b[i : i+int(l)])
		i += int(l)
	}
	nr, ok := uv(uint64(len(b)))
	if !ok || nr > uint64(len(b)-i)/5 { // a run takes 5 bytes at least
		return fail("run count")
	}
	ix.Runs = make([]ratioRun, nr)
	for k := range ix.Runs {
		c, ok1 := uv(math.MaxUint32)
		p, ok2 := uv(maxColumnBytes)
		v, ok3 := uv(maxColumnBytes)
		pb, ok4 := uv(maxColumnBytes)
		vb, ok5 := uv(maxColumnBytes)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return fail("run")
		}
		ix.Runs[k] = ratioRun{Company: uint32(c), Points: int64(p), Vars: int64(v), PointBk: int(pb), VarsBlk: int(vb)}
	}
	blocks, what, at := readBlockList(b, i)
	if what != "" {
		i = at
		return fail(what)
	}
	ix.Blocks = blocks
	return ix, nil
}

// validClass and validFrequency report whether a stored byte names a
// share class or a frequency.
func validClass(c engine.ShareClass) bool    { return c == engine.ShareClassNone || c.String() != "" }
func validFrequency(f engine.Frequency) bool { return f == engine.FrequencyNone || f.String() != "" }

// openRatioColumns returns the points and variables of the ratio columns
// sec (8-aligned) described by ix. With inPlace (and ratioInPlace) they
// are sec itself, the points naming their company and ticker by symbol
// index, and nothing of sec is read: the points are checked with their
// blocks' checksums (ratioBlockCheck). Else they are decoded into the
// heap with syms (ix.Syms interned, when not nil) in place of the
// indexes, and checked here as the blocks check them. It checks that the
// runs and blocks cut sec exactly and that every run lies in its blocks.
func openRatioColumns(sec []byte, ix ratioIndex, inPlace bool, syms []engine.Sym) ([]engine.RatioPoint, []engine.Num, error) {
	if len(sec) > 0 && uintptr(unsafe.Pointer(&sec[0]))%8 != 0 {
		return nil, nil, fmt.Errorf("%w: not 8-aligned in memory", errColumns)
	}
	size := int64(len(sec))
	if err := checkBlocks(ix.Blocks, size); err != nil {
		return nil, nil, err
	}
	if ix.Points <= 0 || ratioColBytes(ix.Points, ix.Vars) != size {
		return nil, nil, fmt.Errorf("%w: %d ratio points and %d variables in %d bytes", errColumns, ix.Points, ix.Vars, size)
	}
	nsym := uint64(len(ix.Syms))
	varsBase := ratioPointBytes * ix.Points
	var p, v int64 // the next run's first point and variable
	for k, r := range ix.Runs {
		if uint64(r.Company) >= nsym || r.Points <= 0 || r.Points > ix.Points-p || r.Vars < 0 || r.Vars > ix.Vars-v ||
			r.PointBk < 0 || r.PointBk >= len(ix.Blocks) || r.VarsBlk < 0 || r.VarsBlk >= len(ix.Blocks) {
			return nil, nil, fmt.Errorf("%w: ratio run %d: company %d, %d points, %d variables, blocks %d and %d", errColumns, k, r.Company, r.Points, r.Vars, r.PointBk, r.VarsBlk)
		}
		if !within(ix.Blocks[r.PointBk], ratioPointBytes*p, ratioPointBytes*r.Points) || (r.Vars > 0 && !within(ix.Blocks[r.VarsBlk], varsBase+8*v, 8*r.Vars)) {
			return nil, nil, fmt.Errorf("%w: ratio run %d leaves its blocks", errColumns, k)
		}
		p, v = p+r.Points, v+r.Vars
	}
	if p != ix.Points || v != ix.Vars {
		return nil, nil, fmt.Errorf("%w: ratio runs hold %d points and %d variables, the index %d and %d", errColumns, p, v, ix.Points, ix.Vars)
	}
	if inPlace && ratioInPlace {
		ps := unsafe.Slice((*engine.RatioPoint)(unsafe.Pointer(&sec[0])), ix.Points)
		return ps, view[engine.Num](sec[varsBase:], int(ix.Vars)), nil
	}
	ps := decodeRatioPoints(sec, ix.Points)
	var at uint64
	i := 0
	for k, r := range ix.Runs {
		if err := checkRatioRun(ps[i:i+int(r.Points)], r, k, at, nsym, -1); err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errColumns, err)
		}
		i += int(r.Points)
		at += uint64(r.Vars)
	}
	vars := append([]engine.Num(nil), view[engine.Num](sec[varsBase:], int(ix.Vars))...)
	if syms != nil {
		for i := range ps {
			ps[i].CompanyID, ps[i].Ticker = syms[ps[i].CompanyID], syms[ps[i].Ticker]
		}
	}
	return ps, vars, nil
}

// decodeRatioPoints decodes the first n points of b into the heap.
func decodeRatioPoints(b []byte, n int64) []engine.RatioPoint {
	ps := make([]engine.RatioPoint, n)
	le := binary.LittleEndian
	for i := range ps {
		b := b[ratioPointBytes*i:]
		ps[i] = engine.RatioPoint{
			Value:       engine.Num(math.Float64frombits(le.Uint64(b))),
			PublishDate: engine.Stamp(le.Uint64(b[8:])), RetrievalDate: engine.Stamp(le.Uint64(b[16:])),
			ReferenceDate: engine.Date(int32(le.Uint32(b[24:]))),
			CompanyID:     engine.Sym(le.Uint32(b[28:])), Ticker: engine.Sym(le.Uint32(b[32:])),
			VarsAt: le.Uint32(b[36:]), Indicator: le.Uint16(b[40:]),
			Class: engine.ShareClass(b[42]), Frequency: engine.Frequency(b[43]), NVars: b[44],
		}
	}
	return ps
}

// errRatioPoint is wrapped by the error of a ratio block whose checksum
// matches but one of whose points is not as its run says (no writer
// makes one).
var errRatioPoint = errors.New("ratio points not as indexed")

// checkRatioRun checks the points ps of run r (number k), whose first
// variable is at, against a symbol table of nsym symbols: every point's
// company is the run's, its ticker a symbol, its class and frequency
// valid, its variables the next ones of the run (r.Vars in all), and,
// with ncat >= 0, its indicator one of ncat and the points in
// engine.CompareRatioPoints order (engine.Build's checks of a company's
// points, which a load leaves to the blocks: BuildOptions.RatiosChecked).
// Its error wraps errRatioPoint.
func checkRatioRun(ps []engine.RatioPoint, r ratioRun, k int, at, nsym uint64, ncat int) error {
	runVars := uint64(0)
	for i := range ps {
		q := &ps[i]
		if uint32(q.CompanyID) != r.Company || uint64(q.Ticker) >= nsym || !validClass(q.Class) || !validFrequency(q.Frequency) || uint64(q.VarsAt) != at+runVars {
			return fmt.Errorf("%w: ratio point %d of run %d: company %d, ticker %d, class %d, frequency %d, variables at %d (want %d)",
				errRatioPoint, i, k, q.CompanyID, q.Ticker, q.Class, q.Frequency, q.VarsAt, at+runVars)
		}
		runVars += uint64(q.NVars)
		if ncat < 0 {
			continue
		}
		if int(q.Indicator) >= ncat {
			return fmt.Errorf("%w: ratio point %d of run %d: indicator %d outside the catalog (%d entries)", errRatioPoint, i, k, q.Indicator, ncat)
		}
		if i == 0 {
			continue
		}
		// engine.CompareRatioPoints within one company (scanRatios).
		p := &ps[i-1]
		if p.Indicator != q.Indicator || p.Class != q.Class || p.Frequency != q.Frequency {
			if p.Indicator > q.Indicator || p.Indicator == q.Indicator && (p.Class > q.Class || p.Class == q.Class && p.Frequency > q.Frequency) {
				return fmt.Errorf("%w: ratio point %d of run %d: series out of order", errRatioPoint, i, k)
			}
		} else if p.ReferenceDate > q.ReferenceDate || p.ReferenceDate == q.ReferenceDate && p.PublishDate.Compare(q.PublishDate) > 0 {
			return fmt.Errorf("%w: ratio point %d of run %d: points out of order", errRatioPoint, i, k)
		}
	}
	if runVars != uint64(r.Vars) {
		return fmt.Errorf("%w: ratio run %d: its points hold %d variables, the index %d", errRatioPoint, k, runVars, r.Vars)
	}
	return nil
}

// ratioBlockCheck returns the check of the points in a ratio block
// (blockChecks.series) of columns indexed by ix: the runs whose points
// lie in the block (checkRatioRun), ncat giving the catalog's size at
// the time of the check (every part is decoded by then).
func ratioBlockCheck(ix ratioIndex, ncat func() int) func(i int, blk []byte) error {
	type runAt struct {
		k        int
		off      int64 // the run's first point, in the columns
		firstVar uint64
	}
	in := make([][]runAt, len(ix.Blocks))
	var p int64
	var v uint64
	for k, r := range ix.Runs {
		in[r.PointBk] = append(in[r.PointBk], runAt{k, ratioPointBytes * p, v})
		p += r.Points
		v += uint64(r.Vars)
	}
	nsym := uint64(len(ix.Syms))
	return func(i int, blk []byte) error {
		if len(in[i]) == 0 {
			return nil
		}
		at := ix.Blocks[i].Off
		n := ncat()
		aligned := len(blk) > 0 && uintptr(unsafe.Pointer(&blk[0]))%8 == 0
		for _, ra := range in[i] {
			r := ix.Runs[ra.k]
			b := blk[ra.off-at : ra.off-at+ratioPointBytes*r.Points]
			var ps []engine.RatioPoint
			if ratioInPlace && aligned {
				ps = unsafe.Slice((*engine.RatioPoint)(unsafe.Pointer(&b[0])), r.Points)
			} else {
				ps = decodeRatioPoints(b, r.Points)
			}
			if err := checkRatioRun(ps, r, ra.k, ra.firstVar, nsym, n); err != nil {
				return err
			}
		}
		return nil
	}
}

// within reports whether bytes [off, off+n) lie in block b.
func within(b colBlock, off, n int64) bool { return off >= b.Off && n <= b.Off+b.N-off }

// decRatioColumns decodes the ratios part of a format 6 file: the
// variables' total, where the kind's columns lie in the column area
// (as columnPart reads them) and their index. A load (compactDaily)
// uses the points in place, their symbols in u.Derived.RatioSyms;
// otherwise they are decoded with Syms of the process.
func decRatioColumns(d *pdec, u *engine.Universe, lo, hi int) partStats {
	total := d.uv()
	base, size := d.uv(), d.uv()
	if d.err != nil {
		return partStats{}
	}
	cols := d.ls.cols
	if base%8 != 0 || base > uint64(len(cols)) || size > uint64(len(cols))-base {
		d.fail("ratios columns at %d+%d, outside the column area of %d bytes", base, size, len(cols))
		return partStats{}
	}
	ix, err := readRatioIndex(d.b[d.i:])
	d.i = len(d.b)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if ix.Points != int64(hi-lo) || uint64(ix.Vars) != total {
		d.fail("ratios index of %d points and %d variables, the part holds %d and %d", ix.Points, ix.Vars, hi-lo, total)
		return partStats{}
	}
	sec := cols[base : base+size : base+size]
	syms := make([]engine.Sym, len(ix.Syms))
	for i, s := range ix.Syms {
		syms[i] = engine.Intern(s)
	}
	inPlace := d.ls.compactDaily
	ps, vars, err := openRatioColumns(sec, ix, inPlace, syms)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if lo != 0 || hi != len(ps) {
		d.fail("ratios part of points %d..%d, not the whole kind", lo, hi)
		return partStats{}
	}
	u.Derived.Ratios, u.Derived.RatioVars = ps, vars
	var check func(int, []byte) error
	if inPlace && ratioInPlace {
		u.Derived.RatioSyms = syms
		// Build reads the runs, not the points (BuildOptions.RatiosChecked);
		// each block checks its points on first use.
		runs := make([]engine.RatioRun, len(ix.Runs))
		p := 0
		for k, r := range ix.Runs {
			runs[k] = engine.RatioRun{Company: engine.Sym(r.Company), Lo: p, Hi: p + int(r.Points)}
			p += int(r.Points)
		}
		u.Derived.RatioRuns = runs
		// The catalog's length, known once every part is decoded
		// (readFrom sets it). The check outlives the load (the
		// background pass holds it): it must not hold u, whose parts
		// would then outlive the Dataset replacing them.
		check = ratioBlockCheck(ix, d.ls.catalogCell())
	}
	d.ls.ratioVars.Store(int64(len(vars)))
	d.ls.addRatioColumns(sec, ix, check)
	return partStats{}
}

// addRatioColumns records the ratio columns and their blocks as the
// bars' are (addColumns), check (when not nil) checking a block's points
// once its checksum matches: verified before the snapshot is used, or,
// for a lazy load, by the first request that reads a company's points
// (engine.Dataset.CheckIssuer verifies the blocks of its run), or all of
// them (CheckAll), and by the background pass. No ticker's blocks
// include them: the quote routes read no ratio point.
func (ls *loadState) addRatioColumns(sec []byte, ix ratioIndex, check func(int, []byte) error) {
	ls.addColumnsWith("ratios", sec, dailyIndex{Blocks: ix.Blocks}, check, func(x *colBlocks, k int16) {
		x.addCompanies(k, ix)
	})
}

// appendRatioPart appends the ratio columns of dv to the column area
// cols (ending at a multiple of 8) and records the ratios part that
// indexes them in c.
func appendRatioPart(c *encoder, cols []byte, dv *engine.Derived) ([]byte, error) {
	base := len(cols)
	cols, ix, err := appendRatioColumns(cols, dv)
	if err != nil {
		return nil, err
	}
	c.colParts["ratios"] = ratioPart(int64(base), int64(len(cols)-base), ix)
	return cols, nil
}

// ratioPart is the ratios part of ratio columns of n bytes at base in
// the column area, indexed by ix.
func ratioPart(base, n int64, ix ratioIndex) colPart {
	b := binary.AppendUvarint(nil, uint64(base))
	b = binary.AppendUvarint(b, uint64(n))
	return colPart{rows: int(ix.Vars), body: appendRatioIndex(b, ix)}
}
