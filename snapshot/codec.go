package snapshot

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
)

// This file holds the primitive codec of a section: varints, interned
// strings, Nums, Dates, times and the column encodings. A section's raw
// bytes are: string table, nested totals, then the kind's items.

// canonicalNaN is the bit pattern of math.NaN() and engine.Null.
var canonicalNaN = math.Float64bits(math.NaN())

// pow10 holds the decimal scales a Num may be encoded with.
var pow10 = [...]float64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// maxExactInt bounds the scaled integer of a decimal-coded Num.
const maxExactInt = 1 << 52

func zig(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzig(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// decimalOf reports whether v is exactly float64(k)/10^e, returning k.
func decimalOf(v float64, e int) (int64, bool) {
	p := pow10[e]
	r := math.Round(v * p)
	if !(r > -maxExactInt && r < maxExactInt) {
		return 0, false
	}
	k := int64(r)
	return k, math.Float64bits(float64(k)/p) == math.Float64bits(v)
}

// Row Num tags (low 3 bits of the varint): 0..4 decimal scale, then:
const (
	numTagMaxScale = 4
	numTagNaN      = 5 // canonical NaN
	numTagRaw      = 6 // 8 bytes of float64 bits follow
)

// Column Num tags (low 2 bits): delta of the scaled integer, raw bits, NaN.
const (
	colTagDelta = 0
	colTagRaw   = 1
	colTagNaN   = 2
)

// penc encodes one section part: items go to body while strings are
// interned into a table written in front of it.
type penc struct {
	body  []byte
	strs  map[string]uint32
	list  []string
	nests []int // totals of nested items, one slot per nested slice kind
	err   error
	// Dates and times are delta-coded against the previous one of the part.
	prevDate int64
	prevSec  int64
	// acc, in a format 6 reports part, is where the accounts are (in the
	// column area, not the part).
	acc *accountCols
	// fund, in a format 6 fund ratios part, is the part as written
	// (its points are in the column area).
	fund *fundPart
	// order, when not nil, is the kind's items in file order: a part's
	// item i is the kind's item order[i] (see item).
	order []int32
	// version is the format version written; lists and keyBuf are
	// encSourceRefs' (the lists of sources written, by what they read
	// back as).
	version uint16
	lists   map[string]int
	keyBuf  []byte
}

// item returns the position in its kind's slice of the item stored i-th.
func (e *penc) item(i int) int {
	if e.order != nil {
		return int(e.order[i])
	}
	return i
}

// badEnum marks a string that names no value in an enum cache.
const badEnum = math.MaxUint8

func newPenc(nslots int) *penc {
	return &penc{strs: make(map[string]uint32), nests: make([]int, nslots)}
}

func (e *penc) uv(v uint64) { e.body = binary.AppendUvarint(e.body, v) }
func (e *penc) iv(v int64)  { e.uv(zig(v)) }

// date encodes 0 for NoDate, else zig(d - previous date)+1.
func (e *penc) date(d engine.Date) {
	if d == engine.NoDate {
		e.uv(0)
		return
	}
	e.uv(zig(int64(d)-e.prevDate) + 1)
	e.prevDate = int64(d)
}

func (e *penc) boolean(b bool) {
	if b {
		e.body = append(e.body, 1)
	} else {
		e.body = append(e.body, 0)
	}
}

func (e *penc) str(s string) {
	idx, ok := e.strs[s]
	if !ok {
		idx = uint32(len(e.list))
		e.strs[s] = idx
		e.list = append(e.list, s)
	}
	e.uv(uint64(idx))
}

// stamp encodes s exactly as time encodes s.Time().
func (e *penc) stamp(s engine.Stamp) {
	if s.IsZero() {
		e.uv(0)
		return
	}
	sec, ns := s.Unix()
	if sec <= -maxSec || sec >= maxSec {
		if e.err == nil {
			e.err = fmt.Errorf("time %v out of the encodable range", s.Time())
		}
		sec = 0
	}
	flag := uint64(0)
	if ns != 0 {
		flag = 1
	}
	e.uv((zig(sec-e.prevSec)<<1 | flag) + 1)
	e.prevSec = sec
	if ns != 0 {
		e.uv(uint64(ns))
	}
}

// maxSec bounds the unix seconds of an encodable time (about 36 billion
// years), so that deltas and their flags fit in a uvarint.
const maxSec = 1 << 60

// time encodes 0 for the zero time, else 1 + (zig(seconds - previous
// seconds) << 1 | has-nanoseconds), then the nanoseconds if any.
func (e *penc) time(t time.Time) {
	if t.IsZero() {
		e.uv(0)
		return
	}
	s := t.Unix()
	if s <= -maxSec || s >= maxSec {
		if e.err == nil {
			e.err = fmt.Errorf("time %v out of the encodable range", t)
		}
		s = 0
	}
	ns := uint64(t.Nanosecond())
	flag := uint64(0)
	if ns != 0 {
		flag = 1
	}
	e.uv((zig(s-e.prevSec)<<1 | flag) + 1)
	e.prevSec = s
	if ns != 0 {
		e.uv(ns)
	}
}

// num encodes a Num with the smallest exact decimal scale, else raw bits.
func (e *penc) num(n engine.Num) {
	v := float64(n)
	bits := math.Float64bits(v)
	if bits == canonicalNaN {
		e.uv(numTagNaN)
		return
	}
	if v == v {
		for s := 0; s <= numTagMaxScale; s++ {
			if k, ok := decimalOf(v, s); ok {
				e.uv(zig(k)<<3 | uint64(s))
				return
			}
		}
	}
	e.uv(numTagRaw)
	e.body = binary.LittleEndian.AppendUint64(e.body, bits)
}

// slen encodes the length of a nested slice: 0 for nil, else len+1.
func (e *penc) slen(n int, isNil bool, slot int) {
	if isNil {
		e.uv(0)
		return
	}
	e.uv(uint64(n) + 1)
	e.nests[slot] += n
}

// numCol encodes a float column: a decimal scale byte, then per value the
// zigzag delta of the scaled integer, or a NaN or raw-bits escape.
func (e *penc) numCol(col []engine.Num) {
	s := pickScale(col)
	e.body = append(e.body, byte(s))
	p := pow10[s]
	var prev int64
	b := e.body
	for _, n := range col {
		v := float64(n)
		bits := math.Float64bits(v)
		if bits == canonicalNaN {
			b = append(b, colTagNaN)
			continue
		}
		r := math.Round(v * p)
		if r > -maxExactInt && r < maxExactInt {
			k := int64(r)
			if math.Float64bits(float64(k)/p) == bits {
				b = binary.AppendUvarint(b, zig(k-prev)<<2|colTagDelta)
				prev = k
				continue
			}
		}
		b = append(b, colTagRaw)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	e.body = b
}

// pickScale returns the smallest decimal scale that codes the first
// valid values of col exactly (the best one if none codes all).
func pickScale(col []engine.Num) int {
	const sample = 64
	var hits [len(pow10)]int
	seen := 0
	for _, n := range col {
		v := float64(n)
		if v != v || math.IsInf(v, 0) {
			continue
		}
		for s := range pow10 {
			if _, ok := decimalOf(v, s); ok {
				hits[s]++
			}
		}
		if seen++; seen == sample {
			break
		}
	}
	best := 0
	for s := range hits {
		if hits[s] == seen {
			return s
		}
		if hits[s] > hits[best] {
			best = s
		}
	}
	return best
}

// intCol encodes an int64 column as zigzag varints, delta-coded if delta.
func (e *penc) intCol(col []int64, delta bool) {
	b := e.body
	var prev int64
	for _, v := range col {
		if delta {
			b = binary.AppendUvarint(b, zig(v-prev))
			prev = v
		} else {
			b = binary.AppendUvarint(b, zig(v))
		}
	}
	e.body = b
}

// dateCol encodes a Date column delta-coded.
func (e *penc) dateCol(col []engine.Date) {
	b := e.body
	var prev int64
	for _, d := range col {
		b = binary.AppendUvarint(b, zig(int64(d)-prev))
		prev = int64(d)
	}
	e.body = b
}

// finish returns the section's raw bytes: string table, nested totals, body.
func (e *penc) finish() []byte {
	size := 0
	for _, s := range e.list {
		size += len(s)
	}
	out := make([]byte, 0, len(e.body)+size+len(e.list)*2+len(e.nests)*4+16)
	out = binary.AppendUvarint(out, uint64(len(e.list)))
	for _, s := range e.list {
		out = binary.AppendUvarint(out, uint64(len(s)))
	}
	for _, s := range e.list {
		out = append(out, s...)
	}
	for _, n := range e.nests {
		out = binary.AppendUvarint(out, uint64(n))
	}
	return append(out, e.body...)
}

// pdec decodes one section part. Errors are sticky: after the first one
// every read returns a zero value, so decoders stay linear and check err
// at loop boundaries.
type pdec struct {
	b        []byte
	i        int
	err      error
	strs     []string
	prevDate int64
	prevSec  int64
	// freqs and classes cache frequency and shareClass (see enum), one
	// slot per string-table index.
	freqs, classes []uint8
	// labels caches label (engine.LabelOf), as enum's caches.
	labels []uint8
	// syms caches sym: the engine.Sym of each string-table index, plus
	// one (0: not interned yet).
	syms []engine.Sym
	// ls is what the parts of one load share; nil when a part is decoded
	// alone.
	ls *loadState
}

// loadState is what the parts of one load share.
type loadState struct {
	// compactDaily has daily series made compact as each part decodes
	// (engine.CompactSeries), so that a load never holds every series in
	// both forms.
	compactDaily bool
	// version is the file's format version; from columnsVersion the
	// daily and intraday parts index their columns in the column area
	// cols (8-aligned), whose parts and blocks colChecks verifies
	// (addColumns, checkColumns).
	version   uint16
	layout    int // format 6's layout revision
	cols      []byte
	colsAt    int64 // cols' offset in the file
	colMu     sync.Mutex
	colChecks []*blockChecks
	// lazy, when set, takes the column blocks to verify on first use
	// instead of verifying them all before the load ends.
	lazy *colBlocks
	// acc is what the reports parts of a format 6 file share
	// (accounts, finishAccounts).
	accOnce sync.Once
	acc     *accountsPart
	// ratioVars counts the entries of Derived.RatioVars reserved so far
	// (see reserveRatioVars).
	ratioVars atomic.Int64
	// catalogLen, when a ratios part set it (under colMu), is given the
	// length of Derived.Catalog once every part is decoded: the ratio
	// blocks' check reads it (ratioBlockCheck).
	catalogLen *atomic.Int64
	// fundMu guards Derived.FundSources, which the fund ratios parts
	// append to (addFundSources).
	fundMu sync.Mutex
	// fundLists, set by a format 6 fund ratios part, is each fund's range
	// of Derived.FundSources (shareFundLists).
	fundLists []fundLists
}

// reserveRatioVars reserves n entries of u.Derived.RatioVars for this
// part and returns the first. Parts decode in parallel: each takes the
// next free range, so ranges never overlap whatever the parts claim, and
// a load whose parts reserve more (or, checked at the end, fewer) than
// the header's ratio_vars is refused. A part decoded alone gets an
// array of its own.
func (d *pdec) reserveRatioVars(u *engine.Universe, n int) int {
	if d.ls == nil {
		u.Derived.RatioVars = make([]engine.Num, n)
		return 0
	}
	end := d.ls.ratioVars.Add(int64(n))
	if end > int64(len(u.Derived.RatioVars)) {
		d.fail("vars: %d reserved, beyond the header's %s %d", end, countRatioVars, len(u.Derived.RatioVars))
		return 0
	}
	return int(end) - n
}

// sym reads a string-table index as an interned engine.Sym (interned
// once per distinct string of the part).
func (d *pdec) sym() engine.Sym {
	idx := d.strIdx()
	if d.err != nil {
		return 0
	}
	if d.syms == nil {
		d.syms = make([]engine.Sym, len(d.strs))
	}
	if s := d.syms[idx]; s != 0 {
		return s - 1
	}
	s := engine.Intern(d.strs[idx])
	d.syms[idx] = s + 1
	return s
}

func (d *pdec) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("byte %d: %s", d.i, fmt.Sprintf(format, args...))
	}
	d.i = len(d.b)
}

func (d *pdec) remaining() int { return len(d.b) - d.i }

func (d *pdec) uv() uint64 {
	b, i := d.b, d.i
	if i < len(b) && b[i] < 0x80 {
		d.i = i + 1
		return uint64(b[i])
	}
	return d.uvSlow()
}

// uvSlow reads a minimal uvarint of any length.
func (d *pdec) uvSlow() uint64 {
	b := d.b
	if i := d.i; i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
		d.i = i + 2
		return uint64(b[i]&0x7f) | uint64(b[i+1])<<7
	}
	if i := d.i; len(b)-i >= 8 {
		// Up to 8 bytes at once (56 bits: every volume in cents,
		// quantity and delta the columns hold): the first byte without
		// the continuation bit ends the varint.
		x := binary.LittleEndian.Uint64(b[i:])
		if stop := ^x & 0x8080808080808080; stop != 0 {
			n := bits.TrailingZeros64(stop)/8 + 1 // bytes, 1..8
			x &= ^uint64(0) >> (64 - 8*n)
			if n > 1 && x>>(8*(n-1)) == 0 {
				d.fail("non-minimal varint")
				return 0
			}
			// Pack the 7-bit groups: pairs into 14 bits, fours into 28,
			// all eight into 56.
			x &= 0x7f7f7f7f7f7f7f7f
			x = x&0x007f007f007f007f | x&0x7f007f007f007f00>>1
			x = x&0x00003fff00003fff | x&0x3fff00003fff0000>>2
			x = x&0x000000000fffffff | x&0x0fffffff00000000>>4
			d.i = i + n
			return x
		}
	}
	var x uint64
	var s uint
	for j := d.i; j < len(b) && j < d.i+binary.MaxVarintLen64; j++ {
		c := b[j]
		if c < 0x80 {
			if j == d.i+binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			if c == 0 && j > d.i {
				d.fail("non-minimal varint")
				return 0
			}
			d.i = j + 1
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	if d.i >= len(b) {
		d.fail("unexpected end of section")
	} else {
		d.fail("truncated or overflowing varint")
	}
	return 0
}

func (d *pdec) iv() int64 { return unzig(d.uv()) }

func (d *pdec) integer() int {
	v := d.iv()
	if int64(int(v)) != v {
		d.fail("integer %d out of range", v)
		return 0
	}
	return int(v)
}

func (d *pdec) date() engine.Date {
	u := d.uv()
	if u == 0 {
		return engine.NoDate
	}
	v := d.prevDate + unzig(u-1)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail("date %d out of range", v)
		return engine.NoDate
	}
	d.prevDate = v
	return engine.Date(v)
}

func (d *pdec) boolean() bool {
	if d.i >= len(d.b) {
		d.fail("unexpected end of section")
		return false
	}
	c := d.b[d.i]
	if c > 1 {
		d.fail("invalid boolean %d", c)
		return false
	}
	d.i++
	return c == 1
}

// strIdx reads a string-table index, checked against the table (0 after
// an error).
func (d *pdec) strIdx() int {
	idx := d.uv()
	if idx >= uint64(len(d.strs)) {
		if d.err == nil {
			d.fail("string index %d beyond table of %d", idx, len(d.strs))
		}
		return 0
	}
	return int(idx)
}

func (d *pdec) str() string {
	idx := d.uv()
	if idx >= uint64(len(d.strs)) {
		if d.err == nil {
			d.fail("string index %d beyond table of %d", idx, len(d.strs))
		}
		return ""
	}
	return d.strs[idx]
}

func (d *pdec) time() time.Time {
	u := d.uv()
	if u == 0 {
		return time.Time{}
	}
	u--
	sec := d.prevSec + unzig(u>>1)
	if sec <= -maxSec || sec >= maxSec {
		d.fail("time %d out of range", sec)
		return time.Time{}
	}
	d.prevSec = sec
	var ns uint64
	if u&1 == 1 {
		ns = d.uv()
		if ns == 0 || ns >= 1e9 {
			d.fail("nanoseconds %d out of range", ns)
			return time.Time{}
		}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

// stamp reads a time (see penc.time) as an engine.Stamp.
func (d *pdec) stamp() engine.Stamp {
	u := d.uv()
	if u == 0 {
		return 0
	}
	u--
	sec := d.prevSec + unzig(u>>1)
	if sec <= -maxSec || sec >= maxSec {
		d.fail("time %d out of range", sec)
		return 0
	}
	d.prevSec = sec
	var ns uint64
	if u&1 == 1 {
		ns = d.uv()
		if ns == 0 || ns >= 1e9 {
			d.fail("nanoseconds %d out of range", ns)
			return 0
		}
	}
	return engine.MakeStamp(sec, int64(ns))
}

// frequency reads a string that must name an engine.Frequency.
func (d *pdec) frequency() engine.Frequency {
	return engine.Frequency(d.enum(&d.freqs, "frequency", func(s string) (uint8, bool) {
		f, ok := engine.ParseFrequency(s)
		return uint8(f), ok
	}))
}

// shareClass reads a string that must name an engine.ShareClass.
func (d *pdec) shareClass() engine.ShareClass {
	return engine.ShareClass(d.enum(&d.classes, "share class", func(s string) (uint8, bool) {
		c, ok := engine.ParseShareClass(s)
		return uint8(c), ok
	}))
}

// enum reads a string index and returns parse of that string, parsing
// each index of the table once (cache holds the value plus one, badEnum
// when parse rejects it); 0 after a failure.
func (d *pdec) enum(cache *[]uint8, what string, parse func(string) (uint8, bool)) uint8 {
	idx := d.uv()
	if idx >= uint64(len(d.strs)) {
		if d.err == nil {
			d.fail("string index %d beyond table of %d", idx, len(d.strs))
		}
		return 0
	}
	if *cache == nil {
		*cache = make([]uint8, len(d.strs))
	}
	c := (*cache)[idx]
	if c == 0 {
		c = badEnum
		if v, ok := parse(d.strs[idx]); ok && v < badEnum-1 {
			c = v + 1
		}
		(*cache)[idx] = c
	}
	if c == badEnum {
		d.fail("unknown %s %q", what, d.strs[idx])
		return 0
	}
	return c - 1
}

// label reads a string as an engine.Label (a report's statement,
// aggregation or form); a word beyond the process's Labels is an error.
func (d *pdec) label() engine.Label {
	return engine.Label(d.enum(&d.labels, "label (more distinct words than a process holds)", func(s string) (uint8, bool) {
		l, ok := engine.LabelOf(s)
		return uint8(l), ok
	}))
}

// htime reads a header time: 0 for the zero time, else zig(unix
// seconds)+1 then nanoseconds (see hbuf.time).
func (d *pdec) htime() time.Time {
	u := d.uv()
	if u == 0 {
		return time.Time{}
	}
	sec := unzig(u - 1)
	if sec <= -maxSec || sec >= maxSec {
		d.fail("time %d out of range", sec)
		return time.Time{}
	}
	ns := d.uv()
	if ns >= 1e9 {
		d.fail("nanoseconds %d out of range", ns)
		return time.Time{}
	}
	return time.Unix(sec, int64(ns)).UTC()
}

func (d *pdec) u64() uint64 {
	if d.remaining() < 8 {
		d.fail("unexpected end of section")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.i:])
	d.i += 8
	return v
}

func (d *pdec) num() engine.Num {
	u := d.uv()
	switch tag := u & 7; {
	case tag <= numTagMaxScale:
		return engine.Num(float64(unzig(u>>3)) / pow10[tag])
	case tag == numTagNaN && u == numTagNaN:
		return engine.Num(math.Float64frombits(canonicalNaN))
	case tag == numTagRaw && u == numTagRaw:
		return engine.Num(math.Float64frombits(d.u64()))
	default:
		d.fail("invalid number tag %d", u)
		return engine.Null
	}
}

// count reads a length and checks that n items of at least min bytes each
// fit in the remaining input, so hostile lengths never allocate.
func (d *pdec) count(min int) int {
	n := d.uv()
	if n > uint64(d.remaining()/min) {
		if d.err == nil {
			d.fail("length %d beyond the remaining %d bytes", n, d.remaining())
		}
		return 0
	}
	return int(n)
}

// slen reads a nested slice length written by penc.slen.
func (d *pdec) slen() (n int, isNil bool) {
	u := d.uv()
	if u == 0 {
		return 0, true
	}
	if u-1 > uint64(d.remaining()) {
		d.fail("length %d beyond the remaining %d bytes", u-1, d.remaining())
		return 0, true
	}
	return int(u - 1), false
}

// strtab reads the string table: one allocation holds every string.
func (d *pdec) strtab() {
	n := d.count(1)
	if d.err != nil {
		return
	}
	lens := make([]int, n)
	total := 0
	for i := range lens {
		l := d.uv()
		if l > uint64(d.remaining()) {
			d.fail("string length %d beyond the remaining %d bytes", l, d.remaining())
			return
		}
		lens[i] = int(l)
		total += int(l)
		if total > d.remaining() {
			d.fail("string table of %d bytes beyond the remaining %d bytes", total, d.remaining())
			return
		}
	}
	if d.err != nil {
		return
	}
	blob := string(d.b[d.i : d.i+total])
	d.i += total
	d.strs = make([]string, n)
	d.freqs, d.classes, d.labels, d.syms = nil, nil, nil, nil
	off := 0
	for i, l := range lens {
		d.strs[i] = blob[off : off+l]
		off += l
	}
}

// pool is the one backing array of a nested slice kind in a part.
type pool[T any] struct {
	s    []T
	used int
	name string
}

// newPool reads a nested total and allocates it, each item needing at
// least min bytes of input.
func newPool[T any](d *pdec, name string, min int) pool[T] {
	n := d.count(min)
	return pool[T]{s: make([]T, n), name: name}
}

func take[T any](d *pdec, p *pool[T], n int, isNil bool) []T {
	if isNil {
		return nil
	}
	if n == 0 {
		return []T{}
	}
	if n > len(p.s)-p.used {
		if d.err == nil {
			d.fail("%s: %d items beyond the declared total %d", p.name, p.used+n, len(p.s))
		}
		return nil
	}
	r := p.s[p.used : p.used+n : p.used+n]
	p.used += n
	return r
}

func (p *pool[T]) check(d *pdec) {
	if d.err == nil && p.used != len(p.s) {
		d.fail("%s: declared total %d, used %d", p.name, len(p.s), p.used)
	}
}

// numCol decodes a column written by penc.numCol into dst.
func (d *pdec) numCol(dst []engine.Num) {
	if d.i >= len(d.b) {
		d.fail("unexpected end of section")
		return
	}
	s := int(d.b[d.i])
	if s >= len(pow10) {
		d.fail("invalid decimal scale %d", s)
		return
	}
	d.i++
	p := pow10[s]
	var prev int64
	b, i := d.b, d.i
	for j := range dst {
		var u uint64
		if i+1 < len(b) && b[i] < 0x80 {
			u = uint64(b[i])
			i++
		} else if i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
			u = uint64(b[i]&0x7f) | uint64(b[i+1])<<7
			i += 2
		} else {
			d.i = i
			u = d.uvSlow()
			if d.err != nil {
				return
			}
			i = d.i
		}
		switch u & 3 {
		case colTagDelta:
			prev += unzig(u >> 2)
			dst[j] = engine.Num(float64(prev) / p)
		case colTagRaw:
			if u != colTagRaw || len(b)-i < 8 {
				d.i = i
				d.fail("invalid column tag %d", u)
				return
			}
			dst[j] = engine.Num(math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
			i += 8
		case colTagNaN:
			if u != colTagNaN {
				d.i = i
				d.fail("invalid column tag %d", u)
				return
			}
			dst[j] = engine.Num(math.Float64frombits(canonicalNaN))
		default:
			d.i = i
			d.fail("invalid column tag %d", u)
			return
		}
	}
	d.i = i
}

// centsCol decodes a number column written by penc.numCol as whole
// hundredths into dst (a missing value is null) when its scale is at most
// 2 and every value is a decimal of it within [lo, hi] hundredths: the
// hundredths k then give back exactly the number numCol would
// (float64(k)/100 and float64(m)/10^s are the same correctly rounded
// quotient of one exact value; |lo| and |hi| are at most 2^52). It
// reports false, consuming nothing, for any other column.
func centsCol[T int32 | int64](d *pdec, dst []T, null T, lo, hi int64) bool {
	start := d.i
	if d.i >= len(d.b) || d.b[d.i] > 2 {
		return false
	}
	mul := [...]int64{100, 10, 1}[d.b[d.i]]
	// The bounds of the unscaled value, divided once (a division per
	// value was 8 % of a scale-10 load's CPU); Go's division truncates
	// toward zero, so k*mul >= lo exactly when k >= lo/mul for lo <= 0,
	// and k*mul <= hi when k <= hi/mul for hi >= 0.
	klo, khi := lo/mul, hi/mul
	d.i++
	var prev int64
	b, i := d.b, d.i
	for j := range dst {
		var u uint64
		if i+1 < len(b) && b[i] < 0x80 {
			u = uint64(b[i])
			i++
		} else if i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
			u = uint64(b[i]&0x7f) | uint64(b[i+1])<<7
			i += 2
		} else {
			d.i = i
			u = d.uvSlow()
			if d.err != nil {
				return false
			}
			i = d.i
		}
		switch {
		case u&3 == colTagDelta:
			prev += unzig(u >> 2)
			if prev > khi || prev < klo {
				d.i = start
				return false
			}
			dst[j] = T(prev * mul)
		case u == colTagNaN:
			dst[j] = null
		default: // a raw float: left to numCol
			d.i = start
			return false
		}
	}
	d.i = i
	return true
}

// countCol decodes a column written by penc.intCol without deltas into
// dst when every value is within [0, 2^32-1]; it reports false otherwise
// (d.err is set when the bytes are not a column). Like every column
// decoder it reads one- and two-byte varints in its own loop: as a
// function that read costs 140 against the inliner's budget of 80, a call
// per value.
func (d *pdec) countCol(dst []uint32) bool {
	b, i := d.b, d.i
	for j := range dst {
		var u uint64
		if i+1 < len(b) && b[i] < 0x80 {
			u = uint64(b[i])
			i++
		} else if i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
			u = uint64(b[i]&0x7f) | uint64(b[i+1])<<7
			i += 2
		} else {
			d.i = i
			u = d.uvSlow()
			if d.err != nil {
				return false
			}
			i = d.i
		}
		// unzig(u) in [0, 2^32-1] is u even and u/2 < 2^32.
		if u&1 != 0 || u>>1 > math.MaxUint32 {
			return false
		}
		dst[j] = uint32(u >> 1)
	}
	d.i = i
	return true
}

// intCol decodes an int64 column written by penc.intCol.
func (d *pdec) intCol(dst []int64, delta bool) {
	var prev int64
	b, i := d.b, d.i
	for j := range dst {
		var u uint64
		if i+1 < len(b) && b[i] < 0x80 {
			u = uint64(b[i])
			i++
		} else if i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
			u = uint64(b[i]&0x7f) | uint64(b[i+1])<<7
			i += 2
		} else {
			d.i = i
			u = d.uvSlow()
			if d.err != nil {
				return
			}
			i = d.i
		}
		if delta {
			prev += unzig(u)
			dst[j] = prev
		} else {
			dst[j] = unzig(u)
		}
	}
	d.i = i
}

// dateCol decodes a Date column written by penc.dateCol.
func (d *pdec) dateCol(dst []engine.Date) {
	var prev int64
	b, i := d.b, d.i
	for j := range dst {
		var u uint64
		if i+1 < len(b) && b[i] < 0x80 {
			u = uint64(b[i])
			i++
		} else if i+1 < len(b) && b[i+1] < 0x80 && b[i+1] != 0 {
			u = uint64(b[i]&0x7f) | uint64(b[i+1])<<7
			i += 2
		} else {
			d.i = i
			u = d.uvSlow()
			if d.err != nil {
				return
			}
			i = d.i
		}
		prev += unzig(u)
		if prev < math.MinInt32 || prev > math.MaxInt32 {
			d.i = i
			d.fail("date %d out of range", prev)
			return
		}
		dst[j] = engine.Date(prev)
	}
	d.i = i
}
