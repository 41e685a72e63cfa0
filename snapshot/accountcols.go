package snapshot

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/pregao/pregao/engine"
)

// Account columns (format 6, docs/snapshot-format.md): the reports'
// accounts laid out in the column area, after the intraday columns and
// before the ratio points, as the engine holds them in memory, so that a
// load uses them where they lie instead of decoding 38 M of them into
// the heap (demo scale 10).
//
// An account takes accountBytes: its line (uint32, an index into the
// file's line table: code, name and fixed flag), four zero bytes and its
// value (float64 bits), the layout of engine.Account. The accounts of
// every report follow one another in report order; a reports part gives
// each of its reports only its account count, and the part its first
// account. The columns are cut into blocks (colBlock) between reports.
// The line table and the blocks are the accounts' index, stored in the
// first reports part; a load interns the table's lines into an
// engine.LineTable (Report.Lines) that translates the file's numbers.

// accountBytes is the bytes an account takes in the columns.
const accountBytes = 16

// accountInPlace reports whether engine.Account is laid out in memory
// as an account is in the columns: they are then used in place, else
// decoded.
var accountInPlace = littleEndian && func() bool {
	var a engine.Account
	return unsafe.Sizeof(a) == accountBytes && unsafe.Sizeof(a.Line) == 4 &&
		unsafe.Offsetof(a.Line) == 0 && unsafe.Offsetof(a.Value) == 8
}()

// accountLine is one line of the file's line table.
type accountLine struct {
	Code, Name string
	Fixed      bool
}

// accountIndex is the index of the account columns: the accounts'
// total, the line table and the blocks.
type accountIndex struct {
	Accounts int64
	Lines    []accountLine
	Blocks   []colBlock
}

// accountCols is what a writer of format 6 knows of the account
// columns: where they lie in the column area, their index (stored) and
// the first account of each reports part, by the part's first report.
type accountCols struct {
	base, size int64
	index      []byte
	first      map[int]int64
	// The report heads follow the accounts (reportheads.go): their size,
	// index and source lists.
	headSize  int64
	headIndex []byte
	lists     [][]engine.Source
}

// writeAccountColumns writes the account columns of rs to put, a block
// at a time (only the open block is held; put must not keep the slice
// it is given), and returns their size and index. Blocks are cut
// between reports.
func writeAccountColumns(rs []engine.Report, put func([]byte) error) (int64, accountIndex, error) {
	var ix accountIndex
	num := map[engine.Line]uint32{}
	w := colStream{put: put}
	for i := range rs {
		acc := rs[i].AccountList()
		if acc.Len() == 0 {
			continue
		}
		w.boundary()
		for j := range acc.Len() {
			a := acc.At(j)
			n, ok := num[a.Line]
			if !ok {
				if len(ix.Lines) == math.MaxUint32 {
					return 0, ix, fmt.Errorf("report accounts: more than %d lines", uint32(math.MaxUint32))
				}
				n = uint32(len(ix.Lines))
				num[a.Line] = n
				ix.Lines = append(ix.Lines, accountLine{a.Code(), a.Name(), a.Fixed()})
			}
			b := binary.LittleEndian.AppendUint64(w.buf, uint64(n))
			w.buf = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(a.Value)))
			ix.Accounts++
		}
	}
	size, cix, err := w.finish(0)
	ix.Blocks = cix.Blocks
	return size, ix, err
}

// The index of the account columns, as stored (in the first reports
// part): uvarint accounts; uvarint line count, then per line its code
// and name (uvarint length and bytes each) and one byte fixed (0 or 1);
// then the block list (appendBlockList).

// appendAccountIndex appends ix as stored to dst.
func appendAccountIndex(dst []byte, ix accountIndex) []byte {
	dst = binary.AppendUvarint(dst, uint64(ix.Accounts))
	dst = binary.AppendUvarint(dst, uint64(len(ix.Lines)))
	for _, l := range ix.Lines {
		dst = binary.AppendUvarint(dst, uint64(len(l.Code)))
		dst = append(dst, l.Code...)
		dst = binary.AppendUvarint(dst, uint64(len(l.Name)))
		dst = append(dst, l.Name...)
		if l.Fixed {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return appendBlockList(dst, ix.Blocks)
}

// readAccountIndex reads what appendAccountIndex wrote, refusing
// (errColumns) anything else: a count larger than the bytes left can
// hold, a number out of range, a fixed byte other than 0 or 1, or bytes
// left over. It does not check the index against its columns.
func readAccountIndex(b []byte) (accountIndex, error) {
	i := 0
	fail := func(what string) (accountIndex, error) {
		return accountIndex{}, fmt.Errorf("%w: account index: %s at byte %d", errColumns, what, i)
	}
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	var ix accountIndex
	na, ok := uv(maxColumnBytes / accountBytes)
	if !ok {
		return fail("accounts")
	}
	ix.Accounts = int64(na)
	nl, ok := uv(math.MaxUint32)
	if !ok || nl > uint64(len(b)-i)/3 { // a line takes 3 bytes at least
		return fail("line count")
	}
	ix.Lines = make([]accountLine, nl)
	str := func() (string, bool) {
		l, ok := uv(uint64(len(b)))
		if !ok || l > uint64(len(b)-i) {
			return "", false
		}
		s := string(b[i : i+int(l)])
		i += int(l)
		return s, true
	}
	for k := range ix.Lines {
		code, ok1 := str()
		if !ok1 {
			return fail("line code")
		}
		name, ok2 := str()
		if !ok2 {
			return fail("line name")
		}
		if i >= len(b) || b[i] > 1 {
			return fail("line fixed flag")
		}
		ix.Lines[k] = accountLine{code, name, b[i] == 1}
		i++
	}
	blocks, what, at := readBlockList(b, i)
	if what != "" {
		i = at
		return fail(what)
	}
	ix.Blocks = blocks
	return ix, nil
}

// accountsPart is what the reports parts of one load share: the
// process's table of the file's lines (filled by the first part, read
// once every part is decoded) and each part's accounts, checked then.
type accountsPart struct {
	table  engine.LineTable
	mu     sync.Mutex
	seen   bool  // the first part's index was read
	total  int64 // accounts the index declares
	ranges []accountRange
	// heads, when set, are the report heads of ReadFile and Decode, read
	// into the Universe by finishAccounts.
	heads *fileHeads
}

// accountRange is the accounts of one reports part: its first report,
// its first account and how many.
type accountRange struct {
	lo       int
	first, n int64
}

// accounts returns the load's accountsPart.
func (ls *loadState) accounts() *accountsPart {
	ls.accOnce.Do(func() { ls.acc = &accountsPart{} })
	return ls.acc
}

// decReportAccounts decodes the head of a reports part of a format 6
// file (after its string table and nested totals, of which accounts is
// nacc): where the account columns lie in the column area (uvarint
// offset and length; 8-aligned, within the area), the part's first
// account (uvarint) and, in the part of the kind's first report (lo ==
// 0), the columns' index (uvarint length and bytes). It returns the
// part's accounts and where the account columns end in the area: in place (a load, accountInPlace), else decoded into
// the heap, their lines the file's numbers either way (see
// finishAccounts).
func decReportAccounts(d *pdec, lo int, nacc uint64) ([]engine.Account, uint64) {
	base, size, first := d.uv(), d.uv(), d.uv()
	if d.err != nil {
		return nil, 0
	}
	cols := d.ls.cols
	if base%8 != 0 || size%accountBytes != 0 || base > uint64(len(cols)) || size > uint64(len(cols))-base {
		d.fail("report accounts at %d+%d, outside the column area of %d bytes", base, size, len(cols))
		return nil, 0
	}
	total := size / accountBytes
	if first > total || nacc > total-first {
		d.fail("report accounts %d+%d beyond the %d of the columns", first, nacc, total)
		return nil, 0
	}
	sec := cols[base : base+size : base+size]
	ap := d.ls.accounts()
	if lo == 0 {
		n := d.uv()
		if d.err != nil || n > uint64(d.remaining()) {
			d.fail("account index of %d bytes beyond the remaining %d", n, d.remaining())
			return nil, 0
		}
		ix, err := readAccountIndex(d.b[d.i : d.i+int(n)])
		d.i += int(n)
		if err != nil {
			d.fail("%v", err)
			return nil, 0
		}
		if uint64(ix.Accounts) != total {
			d.fail("account index of %d accounts, the columns hold %d", ix.Accounts, total)
			return nil, 0
		}
		if err := checkBlocks(ix.Blocks, int64(size)); err != nil {
			d.fail("report accounts: %v", err)
			return nil, 0
		}
		lines := make([]engine.Line, len(ix.Lines))
		for k, l := range ix.Lines {
			lines[k] = engine.InternLine(l.Code, l.Name, l.Fixed)
		}
		ap.mu.Lock()
		ap.table.Lines, ap.seen, ap.total = lines, true, int64(total)
		ap.mu.Unlock()
		if size > 0 {
			d.ls.addColumns("accounts", sec, dailyIndex{Blocks: ix.Blocks})
		}
	}
	ap.mu.Lock()
	ap.ranges = append(ap.ranges, accountRange{lo: lo, first: int64(first), n: int64(nacc)})
	ap.mu.Unlock()
	if nacc == 0 {
		return nil, base + size
	}
	b := sec[accountBytes*first : accountBytes*(first+nacc)]
	if d.ls.compactDaily && accountInPlace {
		return unsafe.Slice((*engine.Account)(unsafe.Pointer(&b[0])), nacc), base + size
	}
	out := make([]engine.Account, nacc)
	for k := range out {
		p := b[accountBytes*k:]
		out[k] = engine.Account{Line: engine.Line(binary.LittleEndian.Uint32(p)),
			Value: engine.Num(math.Float64frombits(binary.LittleEndian.Uint64(p[8:])))}
	}
	return out, base + size
}

// finishAccounts checks, once every part is decoded and the columns'
// blocks verified, that the reports parts' accounts cut the account
// columns in order, reads the report heads into the Universe when they
// are not read on first use (decReports6), and, unless the
// accounts are used in place, translates their lines into the
// process's (the Universe of ReadFile and Decode holds the process's
// Lines, Report.Lines nil), refusing a number the line table lacks.
func (ls *loadState) finishAccounts(u *engine.Universe) error {
	ap := ls.acc
	if ap == nil {
		return nil
	}
	if !ap.seen {
		return fmt.Errorf("%w: reports: no account index", errColumns)
	}
	slices.SortFunc(ap.ranges, func(a, b accountRange) int { return cmp.Compare(a.lo, b.lo) })
	next := int64(0)
	for _, r := range ap.ranges {
		if r.first != next {
			return fmt.Errorf("%w: the reports part of report %d starts at account %d, want %d", errColumns, r.lo, r.first, next)
		}
		next += r.n
	}
	if next != ap.total {
		return fmt.Errorf("%w: the reports parts hold %d accounts, the columns %d", errColumns, next, ap.total)
	}
	if ap.heads != nil {
		rs, err := ap.heads.all()
		if err != nil {
			return err
		}
		u.Reports = rs
	}
	if ls.compactDaily && accountInPlace {
		return nil
	}
	lines := ap.table.Lines
	for i := range u.Reports {
		r := &u.Reports[i]
		if r.Lines == nil {
			continue
		}
		for j := range r.Accounts {
			a := &r.Accounts[j]
			if uint64(a.Line) >= uint64(len(lines)) {
				return fmt.Errorf("%w: report %d, account %d: line %d of a table of %d", errColumns, i, j, a.Line, len(lines))
			}
			a.Line = lines[a.Line]
		}
		r.Lines = nil
	}
	return nil
}

// accountPartFirsts returns the first account of each reports part of
// jobs, by the part's first report.
func accountPartFirsts(u *engine.Universe, jobs []job) map[int]int64 {
	m := map[int]int64{}
	ki := kindIndex("reports")
	next, at := int64(0), 0
	for _, j := range jobs {
		if j.k != ki {
			continue
		}
		for ; at < j.lo; at++ {
			next += int64(len(u.Reports[at].Accounts))
		}
		m[j.lo] = next
	}
	return m
}

// newAccountCols returns the accountCols of columns of size bytes at
// base in the column area, indexed by ix.
func newAccountCols(base, size int64, ix accountIndex) *accountCols {
	return &accountCols{base: base, size: size, index: appendAccountIndex(nil, ix)}
}

// writeAccountsAndHeads writes the account columns of rs, then their
// head columns, to put, and returns their accountCols at base and the
// head blocks (offsets from the heads' start).
func writeAccountsAndHeads(rs []engine.Report, base int64, put func([]byte) error) (*accountCols, []colBlock, []colBlock, error) {
	n, ix, err := writeAccountColumns(rs, put)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	hn, hix, lists, err := writeHeadColumns(rs, put)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	a := newAccountCols(base, n, ix)
	a.headSize, a.headIndex, a.lists = hn, appendHeadIndex(nil, hix), lists
	return a, ix.Blocks, hix.Blocks, nil
}

// appendAccountColumns appends the account and head columns of u's
// reports to the column area cols (ending at a multiple of 8) and
// records them in c.
func (c *encoder) appendAccountColumns(cols []byte, u *engine.Universe) ([]byte, error) {
	a, _, _, err := writeAccountsAndHeads(u.Reports, int64(len(cols)), func(b []byte) error {
		cols = append(cols, b...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.accounts = a
	return cols, nil
}

// streamAccountColumns writes the account columns of u's reports to the
// spill file a block at a time, at base bytes into the column area,
// records them in c and returns their piece of the spill file.
func (c *encoder) streamAccountColumns(u *engine.Universe, base int64) (piece, error) {
	start := c.spill.n
	a, ablocks, hblocks, err := writeAccountsAndHeads(u.Reports, base, func(b []byte) error {
		_, err := c.spill.put(b)
		return err
	})
	if err != nil {
		return piece{}, err
	}
	n := a.size + a.headSize
	if c.spill.n-start != n {
		return piece{}, fmt.Errorf("snapshot: spill file: %d bytes of account and head columns written, %d made", c.spill.n-start, n)
	}
	c.accounts = a
	c.addBlocks(base, ablocks)
	c.addBlocks(base+a.size, hblocks)
	if n == 0 {
		return piece{b: []byte{}}, nil
	}
	return piece{off: start, n: n}, nil
}

// encReportAccounts writes the head of a format 6 reports part of
// reports [lo, ...) (see decReportAccounts).
func (e *penc) encReportAccounts(lo int) {
	a := e.acc
	e.uv(uint64(a.base))
	e.uv(uint64(a.size))
	e.uv(uint64(a.first[lo]))
	if lo == 0 {
		e.uv(uint64(len(a.index)))
		e.body = append(e.body, a.index...)
	}
}
