package engine

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
)

// Line is an interned account line of a report: its regulator code, its
// name and its ST_CONTA_FIXA flag. A Line is 4 bytes and holds no
// pointer, which is what keeps tens of millions of accounts compact and
// out of the collector's way: a report repeats the same few hundred lines
// across companies and periods, so each distinct line is stored once.
//
// Lines are interned process-wide and never freed: the table grows with
// the distinct lines ever seen (a few thousand for the demo market, tens
// of thousands for all of CVM's filings), not with the number of
// accounts or of snapshots loaded. The zero Line is the empty line (no
// code, no name, not fixed). Reading a Line is lock-free; InternLine
// takes a lock only for a line not seen before.
type Line uint32

// lineInfo is what a Line stands for.
type lineInfo struct {
	code, name string
	fixed      bool
}

var lines = newInternTable(func(k lineInfo) lineInfo {
	return lineInfo{strings.Clone(k.code), strings.Clone(k.name), k.fixed}
})

// InternLine returns the Line of an account line (see Line). It is safe
// for concurrent use.
func InternLine(code, name string, fixed bool) Line {
	return Line(lines.intern(lineInfo{code, name, fixed}))
}

// Code is the line's regulator code ("1.01.02").
func (l Line) Code() string { return lines.at(uint32(l)).code }

// Name is the line's name as filed.
func (l Line) Name() string { return lines.at(uint32(l)).name }

// Fixed reports ST_CONTA_FIXA: a standard line of the CVM model.
func (l Line) Fixed() bool { return lines.at(uint32(l)).fixed }

// Sym is an interned string: 4 bytes, no pointer. Ratio points use it
// for their company id and ticker, repeated across millions of points.
// Like Line, symbols are interned process-wide and never freed (the
// table holds each distinct id or ticker once). The zero Sym is "".
type Sym uint32

var syms = newInternTable(strings.Clone)

// Intern returns the Sym of s. It is safe for concurrent use.
func Intern(s string) Sym { return Sym(syms.intern(s)) }

// String returns the interned string.
func (s Sym) String() string { return *syms.at(uint32(s)) }

// internTable is a process-wide append-only table of distinct values of
// K, numbered from 0 (the zero K). Entries live in fixed-size chunks
// that never move; the slice of chunk pointers is replaced (copy on
// write) when a chunk is added, so readers load it atomically and never
// lock. An entry is written before its number is returned, so whoever
// holds a number (received through any synchronizing hand-off, such as a
// published Dataset) sees the entry.
type internTable[K comparable] struct {
	ids    sync.Map   // K -> uint32: lock-free for values seen before
	mu     sync.Mutex // serializes additions
	n      int        // entries in use; guarded by mu
	chunks atomic.Pointer[[]*[internChunk]K]
	clone  func(K) K // copies a new key out of its caller's memory
}

const (
	internChunkBits = 12
	internChunk     = 1 << internChunkBits
)

func newInternTable[K comparable](clone func(K) K) *internTable[K] {
	t := &internTable[K]{clone: clone}
	first := []*[internChunk]K{new([internChunk]K)}
	t.chunks.Store(&first)
	var zero K
	t.ids.Store(zero, uint32(0))
	t.n = 1
	return t
}

// intern returns the number of k, adding it when new. The key is
// cloned, so that the table does not keep alive the (possibly large)
// buffers its strings were sliced from.
func (t *internTable[K]) intern(k K) uint32 {
	if v, ok := t.ids.Load(k); ok {
		return v.(uint32)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.ids.Load(k); ok {
		return v.(uint32)
	}
	if t.n >= 1<<32-1 {
		panic("engine: more than 2^32-1 interned values")
	}
	k = t.clone(k)
	chunks := *t.chunks.Load()
	c, i := t.n>>internChunkBits, t.n&(internChunk-1)
	if c == len(chunks) {
		grown := make([]*[internChunk]K, c+1)
		copy(grown, chunks)
		grown[c] = new([internChunk]K)
		t.chunks.Store(&grown)
		chunks = grown
	}
	chunks[c][i] = k
	id := uint32(t.n)
	t.n++
	t.ids.Store(k, id)
	return id
}

// at returns the entry of number i (which intern returned).
func (t *internTable[K]) at(i uint32) *K {
	chunks := *t.chunks.Load()
	return &chunks[i>>internChunkBits][i&(internChunk-1)]
}

// NewAccount returns the account of value v on the line (code, name,
// fixed).
func NewAccount(code, name string, fixed bool, v Num) Account {
	return Account{Line: InternLine(code, name, fixed), Value: v}
}

// Code is the account's regulator code; see Line.
func (a Account) Code() string { return a.Line.Code() }

// Name is the account's name as filed.
func (a Account) Name() string { return a.Line.Name() }

// Fixed reports ST_CONTA_FIXA.
func (a Account) Fixed() bool { return a.Line.Fixed() }

// accountJSON is the JSON form of an Account.
type accountJSON struct {
	Code  string `json:"code"`
	Name  string `json:"name"`
	Value Num    `json:"value"`
	Fixed bool   `json:"fixed"`
}

// MarshalJSON encodes a as {"code","name","value","fixed"}, the bundle's
// account object.
func (a Account) MarshalJSON() ([]byte, error) {
	return json.Marshal(accountJSON{a.Code(), a.Name(), a.Value, a.Fixed()})
}

// UnmarshalJSON decodes the object MarshalJSON writes.
func (a *Account) UnmarshalJSON(b []byte) error {
	var v accountJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*a = NewAccount(v.Code, v.Name, v.Fixed, v.Value)
	return nil
}

// LineTable translates the line numbers of accounts read in place from
// a snapshot (the file's own numbering of its lines) into the process's
// Lines: the line numbered i is Lines[i]. It is built when the snapshot
// is opened (a few thousand lines), shared by its reports
// (Report.Lines), and not modified once the snapshot is loaded.
type LineTable struct {
	Lines []Line
}

// AccountList is a report's accounts as read (Report.AccountList): At
// gives each with the process's Line, whatever numbering the report's
// Accounts use. It is a value of two slices; the zero AccountList is
// empty.
type AccountList struct {
	acc   []Account
	lines []Line // nil: acc holds the process's Lines
}

// AccountList returns r's accounts (see Report.Lines).
func (r *Report) AccountList() AccountList {
	l := AccountList{acc: r.Accounts}
	if r.Lines != nil {
		l.lines = r.Lines.Lines
		if l.lines == nil {
			l.lines = []Line{}
		}
	}
	return l
}

// AccountsOf returns the AccountList of accounts holding the process's
// Lines.
func AccountsOf(acc []Account) AccountList { return AccountList{acc: acc} }

// Len returns the number of accounts.
func (l AccountList) Len() int { return len(l.acc) }

// At returns account i with the process's Line. A line number that its
// table does not hold (a damaged file's, whose block fails its checksum
// before any answer is made of it) reads as the empty line.
func (l AccountList) At(i int) Account {
	a := l.acc[i]
	if l.lines != nil {
		if n := uint32(a.Line); n < uint32(len(l.lines)) {
			a.Line = l.lines[n]
		} else {
			a.Line = 0
		}
	}
	return a
}
