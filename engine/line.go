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
// takes a lock.
type Line uint32

// lineInfo is what a Line stands for.
type lineInfo struct {
	code, name string
	fixed      bool
}

const (
	lineChunkBits = 12
	lineChunk     = 1 << lineChunkBits
)

// lineTable is the process-wide table behind Line. Entries live in
// fixed-size chunks that never move; the slice of chunk pointers is
// replaced (copy on write) when a chunk is added, so readers load it
// atomically and never lock. An entry is written before its Line is
// returned, so whoever holds a Line (received through any
// synchronizing hand-off, such as a published Dataset) sees it.
type lineTable struct {
	ids    sync.Map   // lineInfo -> Line: lock-free for lines seen before
	mu     sync.Mutex // serializes additions
	n      int        // entries in use; guarded by mu
	chunks atomic.Pointer[[]*[lineChunk]lineInfo]
}

var lines = newLineTable()

func newLineTable() *lineTable {
	t := &lineTable{}
	first := []*[lineChunk]lineInfo{new([lineChunk]lineInfo)}
	t.chunks.Store(&first)
	t.ids.Store(lineInfo{}, Line(0))
	t.n = 1
	return t
}

// intern returns the Line of (code, name, fixed), adding it when new.
// The strings are copied, so that the table does not keep alive the
// (possibly large) buffers they were sliced from.
func (t *lineTable) intern(code, name string, fixed bool) Line {
	k := lineInfo{code, name, fixed}
	if l, ok := t.ids.Load(k); ok {
		return l.(Line)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, ok := t.ids.Load(k); ok {
		return l.(Line)
	}
	if t.n >= 1<<32-1 {
		panic("engine: more than 2^32-1 distinct account lines")
	}
	k = lineInfo{strings.Clone(code), strings.Clone(name), fixed}
	chunks := *t.chunks.Load()
	c, i := t.n>>lineChunkBits, t.n&(lineChunk-1)
	if c == len(chunks) {
		grown := make([]*[lineChunk]lineInfo, c+1)
		copy(grown, chunks)
		grown[c] = new([lineChunk]lineInfo)
		t.chunks.Store(&grown)
		chunks = grown
	}
	chunks[c][i] = k
	l := Line(t.n)
	t.n++
	t.ids.Store(k, l)
	return l
}

func (t *lineTable) info(l Line) *lineInfo {
	chunks := *t.chunks.Load()
	return &chunks[l>>lineChunkBits][l&(lineChunk-1)]
}

// InternLine returns the Line of an account line (see Line). It is safe
// for concurrent use.
func InternLine(code, name string, fixed bool) Line { return lines.intern(code, name, fixed) }

// Code is the line's regulator code ("1.01.02").
func (l Line) Code() string { return lines.info(l).code }

// Name is the line's name as filed.
func (l Line) Name() string { return lines.info(l).name }

// Fixed reports ST_CONTA_FIXA: a standard line of the CVM model.
func (l Line) Fixed() bool { return lines.info(l).fixed }

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
