package snapshot

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/pregao/pregao/engine"
)

// Report heads (format 6, docs/snapshot-format.md): each report's fields
// but its accounts and sources, as a fixed-width record in the column
// area, right after the account columns, so that a load decodes no head:
// a company's reports are read from their records on its first use
// (engine.Universe.LazyReports), after their blocks are verified.
//
// A record takes headBytes, little-endian:
//
//	 0 uint64 the report's first account (an index into the account columns)
//	 8 uint32 its accounts plus one (0: none, nil; 1: an empty list)
//	12 uint32 its sources: 0 nil, 1 an empty list, 2+k the part's list k
//	16 int64  publish date (engine.Stamp)
//	24 int64  retrieval date (engine.Stamp)
//	32 int64  version
//	40 int32  reference date, 44 start date, 48 end date (engine.Date)
//	52 uint32 company (its number in the heads' index)
//	56 uint8  statement, 57 aggregation, 58 form (numbers in the index's
//	          word table)
//	59 five zero bytes
//
// The records follow the Universe's order of the reports. The columns
// are cut into blocks (colBlock) between records. Their index, stored in
// the reports part: the records, the first publish date, the word table,
// the source lists' count and, per company, its id and its runs of
// consecutive records (first and count), then the blocks.

// headBytes is the bytes a report head takes in the columns.
const headBytes = 64

// headLayout opens the body of a format 6 reports part whose heads are
// columns; a part of an earlier layout opens with the account columns'
// offset, a multiple of 8, never this.
const headLayout = 1

// testHeadLayout is the tag written (headLayout; a test writes another
// to see it refused).
var testHeadLayout uint64 = headLayout

// headRun is a company's run of consecutive records.
type headRun struct {
	First, N int64
}

// headCompany is a company's runs of records, in record order.
type headCompany struct {
	ID   string
	Runs []headRun
}

// headIndex is the index of the report heads.
type headIndex struct {
	Reports        int64
	FirstPublished engine.Stamp
	Words          []string
	Lists          int64 // source lists in the part
	Companies      []headCompany
	Blocks         []colBlock
}

// headWriter numbers what the records refer to as they are written.
type headWriter struct {
	words   map[string]uint8
	comps   map[string]uint32
	lists   map[string]uint32
	key     *penc // sourcesKey's buffer
	ix      headIndex
	sources [][]engine.Source // the source lists, by number
}

// writeHeadColumns writes the head records of rs to put, a block at a
// time, each report's first account numbered in the order
// writeAccountColumns writes them, and returns their size, index and
// source lists (the reports part stores them).
func writeHeadColumns(rs []engine.Report, put func([]byte) error) (int64, headIndex, [][]engine.Source, error) {
	hw := headWriter{words: map[string]uint8{}, comps: map[string]uint32{}, lists: map[string]uint32{}, key: newPenc(0)}
	w := colStream{put: put}
	var acc int64
	var rec [headBytes]byte
	for i := range rs {
		r := &rs[i]
		n := uint32(0)
		if r.Accounts != nil {
			if int64(len(r.Accounts)) >= math.MaxUint32 {
				return 0, headIndex{}, nil, fmt.Errorf("report %d: %d accounts", i, len(r.Accounts))
			}
			n = uint32(len(r.Accounts)) + 1
		}
		src, err := hw.list(r.Sources.All())
		if err != nil {
			return 0, headIndex{}, nil, err
		}
		comp := hw.company(r.CompanyID, int64(i))
		var lab [3]uint8
		for k, l := range []engine.Label{r.Statement, r.Aggregation, r.Form} {
			if lab[k], err = hw.word(l.String()); err != nil {
				return 0, headIndex{}, nil, err
			}
		}
		le := binary.LittleEndian
		le.PutUint64(rec[0:], uint64(acc))
		le.PutUint32(rec[8:], n)
		le.PutUint32(rec[12:], src)
		le.PutUint64(rec[16:], uint64(r.PublishDate))
		le.PutUint64(rec[24:], uint64(r.RetrievalDate))
		le.PutUint64(rec[32:], uint64(r.Version))
		le.PutUint32(rec[40:], uint32(r.ReferenceDate))
		le.PutUint32(rec[44:], uint32(r.StartDate))
		le.PutUint32(rec[48:], uint32(r.EndDate))
		le.PutUint32(rec[52:], comp)
		rec[56], rec[57], rec[58] = lab[0], lab[1], lab[2]
		w.boundary()
		w.buf = append(w.buf, rec[:]...)
		acc += int64(len(r.Accounts))
		if p := r.PublishDate; p != 0 && (hw.ix.FirstPublished == 0 || p < hw.ix.FirstPublished) {
			hw.ix.FirstPublished = p
		}
	}
	hw.ix.Reports = int64(len(rs))
	hw.ix.Lists = int64(len(hw.sources))
	var size int64
	var blocks []colBlock
	if len(rs) > 0 {
		var cix dailyIndex
		var err error
		if size, cix, err = w.finish(0); err != nil {
			return 0, headIndex{}, nil, err
		}
		blocks = cix.Blocks
	}
	hw.ix.Blocks = blocks
	return size, hw.ix, hw.sources, nil
}

// word returns the number of a label's word.
func (hw *headWriter) word(s string) (uint8, error) {
	if k, ok := hw.words[s]; ok {
		return k, nil
	}
	if len(hw.ix.Words) > math.MaxUint8 {
		return 0, fmt.Errorf("report heads: more than %d words", math.MaxUint8+1)
	}
	k := uint8(len(hw.ix.Words))
	hw.words[s] = k
	hw.ix.Words = append(hw.ix.Words, s)
	return k, nil
}

// company returns the number of company id, adding record i to its
// runs.
func (hw *headWriter) company(id string, i int64) uint32 {
	k, ok := hw.comps[id]
	if !ok {
		k = uint32(len(hw.ix.Companies))
		hw.comps[id] = k
		hw.ix.Companies = append(hw.ix.Companies, headCompany{ID: id})
	}
	c := &hw.ix.Companies[k]
	if n := len(c.Runs); n > 0 && c.Runs[n-1].First+c.Runs[n-1].N == i {
		c.Runs[n-1].N++
	} else {
		c.Runs = append(c.Runs, headRun{First: i, N: 1})
	}
	return k
}

// list returns a record's number of its sources: lists that read back
// the same (sourcesKey) share a number.
func (hw *headWriter) list(s []engine.Source) (uint32, error) {
	switch {
	case s == nil:
		return 0, nil
	case len(s) == 0:
		return 1, nil
	}
	key := sourcesKey(hw.key, s)
	if k, ok := hw.lists[key]; ok {
		return k, nil
	}
	if len(hw.sources) >= math.MaxUint32-2 {
		return 0, fmt.Errorf("report heads: more than %d source lists", uint32(math.MaxUint32-2))
	}
	k := uint32(len(hw.sources)) + 2
	hw.lists[key] = k
	hw.sources = append(hw.sources, s)
	return k, nil
}

// appendHeadIndex appends ix as stored: uvarint reports, varint first
// publish date, uvarint word count then each word (uvarint length and
// bytes), uvarint source lists, uvarint company count then per company
// its id (uvarint length and bytes), uvarint run count and per run the
// uvarint gap from the end of the company's run before (from 0 for its
// first) and uvarint count; then the block list (appendBlockList).
func appendHeadIndex(dst []byte, ix headIndex) []byte {
	dst = binary.AppendUvarint(dst, uint64(ix.Reports))
	dst = binary.AppendVarint(dst, int64(ix.FirstPublished))
	dst = binary.AppendUvarint(dst, uint64(len(ix.Words)))
	for _, w := range ix.Words {
		dst = binary.AppendUvarint(dst, uint64(len(w)))
		dst = append(dst, w...)
	}
	dst = binary.AppendUvarint(dst, uint64(ix.Lists))
	dst = binary.AppendUvarint(dst, uint64(len(ix.Companies)))
	for _, c := range ix.Companies {
		dst = binary.AppendUvarint(dst, uint64(len(c.ID)))
		dst = append(dst, c.ID...)
		dst = binary.AppendUvarint(dst, uint64(len(c.Runs)))
		end := int64(0)
		for _, r := range c.Runs {
			dst = binary.AppendUvarint(dst, uint64(r.First-end))
			dst = binary.AppendUvarint(dst, uint64(r.N))
			end = r.First + r.N
		}
	}
	return appendBlockList(dst, ix.Blocks)
}

// readHeadIndex reads what appendHeadIndex wrote, refusing (errColumns)
// anything else: a count larger than the bytes left can hold, more than
// 256 words, a company twice, an empty run, runs that do not cut the
// records [0, reports) exactly, or bytes left over. It does not check
// the index against its columns.
func readHeadIndex(b []byte) (headIndex, error) {
	i := 0
	fail := func(what string) (headIndex, error) {
		return headIndex{}, fmt.Errorf("%w: report head index: %s at byte %d", errColumns, what, i)
	}
	uv := func(limit uint64) (uint64, bool) { return readUvarint(b, &i, limit) }
	str := func() (string, bool) {
		l, ok := uv(uint64(len(b)))
		if !ok || l > uint64(len(b)-i) {
			return "", false
		}
		s := string(b[i : i+int(l)])
		i += int(l)
		return s, true
	}
	var ix headIndex
	nr, ok := uv(maxColumnBytes / headBytes)
	if !ok {
		return fail("reports")
	}
	ix.Reports = int64(nr)
	fp, n := binary.Varint(b[i:])
	if n <= 0 {
		return fail("first publish date")
	}
	i += n
	ix.FirstPublished = engine.Stamp(fp)
	nw, ok := uv(math.MaxUint8 + 1)
	if !ok || nw > uint64(len(b)-i) {
		return fail("word count")
	}
	ix.Words = make([]string, nw)
	for k := range ix.Words {
		if ix.Words[k], ok = str(); !ok {
			return fail("word")
		}
	}
	nl, ok := uv(math.MaxUint32 - 2)
	if !ok {
		return fail("source lists")
	}
	ix.Lists = int64(nl)
	nc, ok := uv(math.MaxUint32)
	if !ok || nc > uint64(len(b)-i)/3 { // a company takes 3 bytes at least
		return fail("company count")
	}
	ix.Companies = make([]headCompany, nc)
	seen := make(map[string]bool, nc)
	var all []headRun
	for k := range ix.Companies {
		c := &ix.Companies[k]
		if c.ID, ok = str(); !ok || seen[c.ID] {
			return fail("company id")
		}
		seen[c.ID] = true
		nrun, ok := uv(uint64(len(b)-i) / 2) // a run takes 2 bytes at least
		if !ok || nrun == 0 {
			return fail("run count")
		}
		c.Runs = make([]headRun, nrun)
		end := int64(0)
		for j := range c.Runs {
			gap, ok1 := uv(uint64(ix.Reports))
			cnt, ok2 := uv(uint64(ix.Reports))
			if !ok1 || !ok2 || cnt == 0 || int64(gap) > ix.Reports-end || int64(cnt) > ix.Reports-end-int64(gap) || j > 0 && gap == 0 {
				return fail("run")
			}
			c.Runs[j] = headRun{First: end + int64(gap), N: int64(cnt)}
			end = c.Runs[j].First + c.Runs[j].N
			all = append(all, c.Runs[j])
		}
	}
	slices.SortFunc(all, func(x, y headRun) int { return cmp.Compare(x.First, y.First) })
	next := int64(0)
	for _, r := range all {
		if r.First != next {
			return fail("runs that do not cut the records")
		}
		next += r.N
	}
	if next != ix.Reports {
		return fail("runs that do not cut the records")
	}
	blocks, what, at := readBlockList(b, i)
	if what != "" {
		i = at
		return fail(what)
	}
	ix.Blocks = blocks
	return ix, nil
}

// fileHeads reads the reports of a load from their head records
// (engine.LazyReports, and every report for ReadFile and Decode).
type fileHeads struct {
	sec      []byte // the records
	ix       headIndex
	labels   []engine.Label      // by word number
	lists    []engine.SourceList // by number (2+k: lists[k])
	accounts []engine.Account    // every account of the file, lines numbered by table
	table    *engine.LineTable
	byID     map[string]int // company number by id
	runs     []ownedRun     // every run, in record order
	ids      []string
}

// ownedRun is a run and its company's number.
type ownedRun struct {
	headRun
	company uint32
}

// newFileHeads returns the reader of the records sec indexed by ix.
func newFileHeads(sec []byte, ix headIndex, labels []engine.Label, lists []engine.SourceList, accounts []engine.Account, table *engine.LineTable) *fileHeads {
	h := &fileHeads{sec: sec, ix: ix, labels: labels, lists: lists, accounts: accounts, table: table,
		byID: make(map[string]int, len(ix.Companies)), ids: make([]string, len(ix.Companies))}
	for k, c := range ix.Companies {
		h.byID[c.ID] = k
		h.ids[k] = c.ID
		for _, r := range c.Runs {
			h.runs = append(h.runs, ownedRun{r, uint32(k)})
		}
	}
	slices.SortFunc(h.runs, func(x, y ownedRun) int { return cmp.Compare(x.First, y.First) })
	return h
}

// Companies returns the ids of the companies with reports.
func (h *fileHeads) Companies() []string { return h.ids }

// FirstPublished returns the earliest publish date of the reports.
func (h *fileHeads) FirstPublished() engine.Stamp { return h.ix.FirstPublished }

// Reports returns company id's reports in record order, those whose
// record cannot be read left out.
func (h *fileHeads) Reports(id string) []engine.Report {
	k, ok := h.byID[id]
	if !ok {
		return nil
	}
	var n int64
	for _, r := range h.ix.Companies[k].Runs {
		n += r.N
	}
	out := make([]engine.Report, 0, n)
	for _, run := range h.ix.Companies[k].Runs {
		for j := run.First; j < run.First+run.N; j++ {
			var r engine.Report
			if h.read(j, uint32(k), &r) == nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// owner returns the company of record j by its runs.
func (h *fileHeads) owner(j int64) uint32 {
	k := sort.Search(len(h.runs), func(i int) bool { return h.runs[i].First+h.runs[i].N > j })
	if k == len(h.runs) {
		return math.MaxUint32
	}
	return h.runs[k].company
}

// read reads record j, of company comp, into r, or says why it cannot.
func (h *fileHeads) read(j int64, comp uint32, r *engine.Report) error {
	if j < 0 || j >= h.ix.Reports || (j+1)*headBytes > int64(len(h.sec)) {
		return fmt.Errorf("record %d beyond the columns", j)
	}
	return h.decode(h.sec[j*headBytes:(j+1)*headBytes], comp, r)
}

// decode reads the record b of company comp into r (r may be nil: the
// record is only checked).
func (h *fileHeads) decode(b []byte, comp uint32, r *engine.Report) error {
	le := binary.LittleEndian
	first, n, src := le.Uint64(b[0:]), le.Uint32(b[8:]), le.Uint32(b[12:])
	if c := le.Uint32(b[52:]); c != comp {
		return fmt.Errorf("company %d in a run of company %d", c, comp)
	}
	nw := len(h.labels)
	if int(b[56]) >= nw || int(b[57]) >= nw || int(b[58]) >= nw {
		return fmt.Errorf("a word beyond the %d of the table", nw)
	}
	if b[59]|b[60]|b[61]|b[62]|b[63] != 0 {
		return fmt.Errorf("padding not zero")
	}
	if src >= 2 && uint64(src-2) >= uint64(len(h.lists)) {
		return fmt.Errorf("source list %d of %d", src-2, len(h.lists))
	}
	total := uint64(len(h.accounts))
	if n > 0 && (first > total || uint64(n-1) > total-first) {
		return fmt.Errorf("accounts %d+%d beyond the %d of the columns", first, n-1, total)
	}
	if r == nil {
		return nil
	}
	r.CompanyID = h.ids[comp]
	r.PublishDate = engine.Stamp(le.Uint64(b[16:]))
	r.RetrievalDate = engine.Stamp(le.Uint64(b[24:]))
	r.Version = int(int64(le.Uint64(b[32:])))
	r.ReferenceDate = engine.Date(int32(le.Uint32(b[40:])))
	r.StartDate = engine.Date(int32(le.Uint32(b[44:])))
	r.EndDate = engine.Date(int32(le.Uint32(b[48:])))
	r.Statement, r.Aggregation, r.Form = h.labels[b[56]], h.labels[b[57]], h.labels[b[58]]
	switch {
	case n == 0:
	case n == 1:
		r.Accounts = []engine.Account{}
	default:
		r.Accounts = h.accounts[first : first+uint64(n-1) : first+uint64(n-1)]
		r.Lines = h.table
	}
	switch src {
	case 0:
	case 1:
		r.Sources = emptySources
	default:
		r.Sources = h.lists[src-2]
	}
	return nil
}

// checkBlock checks the records of block blk (the block's bytes, at
// offset off in the columns): each read as it would be for its run's
// company. It wraps errColumns (a block that matches its checksum but
// not its index is a damaged one).
func (h *fileHeads) checkBlock(off int64, blk []byte) error {
	if off%headBytes != 0 || len(blk)%headBytes != 0 {
		return fmt.Errorf("%w: report heads: a block at %d of %d bytes cuts a record", errColumns, off, len(blk))
	}
	for k := 0; k < len(blk); k += headBytes {
		j := (off + int64(k)) / headBytes
		if err := h.decode(blk[k:k+headBytes], h.owner(j), nil); err != nil {
			return fmt.Errorf("%w: report head %d: %v", errColumns, j, err)
		}
	}
	return nil
}

// all reads every record, in order (ReadFile and Decode; a Universe
// loaded with its reports read on first use, written again).
func (h *fileHeads) all() ([]engine.Report, error) {
	out := make([]engine.Report, h.ix.Reports)
	for _, run := range h.runs {
		for j := run.First; j < run.First+run.N; j++ {
			if err := h.read(j, run.company, &out[j]); err != nil {
				return nil, fmt.Errorf("%w: report head %d: %v", errColumns, j, err)
			}
		}
	}
	return out, nil
}

// blockSpan returns the blocks of blocks holding bytes [lo, hi).
func blockSpan(blocks []colBlock, lo, hi int64) (int, int) {
	if lo >= hi {
		return 0, 0
	}
	a := sort.Search(len(blocks), func(i int) bool { return blocks[i].Off+blocks[i].N > lo })
	b := sort.Search(len(blocks), func(i int) bool { return blocks[i].Off >= hi })
	return a, b
}

// companyBlocks verifies the blocks holding company id's records (heads)
// and then those holding their accounts (acc).
func (h *fileHeads) companyBlocks(id string, heads, acc *blockChecks) error {
	k, ok := h.byID[id]
	if !ok {
		return nil
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, run := range h.ix.Companies[k].Runs {
		a, b := blockSpan(heads.blocks, run.First*headBytes, (run.First+run.N)*headBytes)
		for i := a; i < b; i++ {
			if err := heads.verify(i); err != nil {
				return err
			}
		}
		for j := run.First; j < run.First+run.N; j++ {
			rec := h.sec[j*headBytes:]
			first, n := binary.LittleEndian.Uint64(rec), binary.LittleEndian.Uint32(rec[8:])
			if n > 1 {
				lo, hi = min(lo, first), max(hi, first+uint64(n-1))
			}
		}
	}
	if acc == nil || lo >= hi {
		return nil
	}
	a, b := blockSpan(acc.blocks, int64(lo)*accountBytes, int64(hi)*accountBytes)
	for i := a; i < b; i++ {
		if err := acc.verify(i); err != nil {
			return err
		}
	}
	return nil
}

// withReports returns u, or when its reports are read on first use (a
// loaded Universe written again), a copy of u holding them all: in
// their order from a snapshot's heads, else company by company.
func withReports(u *engine.Universe) (*engine.Universe, error) {
	if u.LazyReports == nil || len(u.Reports) > 0 {
		return u, nil
	}
	var rs []engine.Report
	if fh, ok := u.LazyReports.(*fileHeads); ok {
		var err error
		if rs, err = fh.all(); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
	} else {
		for _, id := range u.LazyReports.Companies() {
			rs = append(rs, u.LazyReports.Reports(id)...)
		}
	}
	cu := *u
	cu.Reports, cu.LazyReports = rs, nil
	return &cu, nil
}
