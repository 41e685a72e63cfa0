package bundle

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxErrors is the number of problems Read collects before it stops.
const MaxErrors = 20

// Error is one problem of a bundle: the file (as named in the directory),
// the 1-based line (0 when the problem is the file itself), the field or
// column ("" when none applies) and a message.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats e as `file:line: field "f": message`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString("field ")
		b.WriteString(strconv.Quote(e.Field))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem Read found, sorted by file and line. Read
// returns it as its error; use errors.As to reach the items.
type ErrorList struct {
	Errors    []*Error
	Truncated bool // Read stopped at MaxErrors problems: more may exist
}

// Error joins the problems, one per line.
func (l *ErrorList) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid bundle: %d problem(s)", len(l.Errors))
	if l.Truncated {
		fmt.Fprintf(&b, " (stopped after %d)", MaxErrors)
	}
	for _, e := range l.Errors {
		b.WriteString("\n")
		b.WriteString(e.Error())
	}
	return b.String()
}

// collector gathers problems from concurrent readers. Its methods are safe
// for concurrent use.
type collector struct {
	mu    sync.Mutex
	errs  []*Error
	trunc bool
	full  atomic.Bool
}

func (c *collector) add(e *Error) {
	c.mu.Lock()
	if len(c.errs) >= MaxErrors {
		c.trunc = true
	} else {
		c.errs = append(c.errs, e)
		if len(c.errs) >= MaxErrors {
			c.trunc = true
			c.full.Store(true)
		}
	}
	c.mu.Unlock()
}

func (c *collector) addf(file string, line int, field, format string, args ...any) {
	c.add(&Error{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// stop reports whether readers should stop: MaxErrors were collected.
func (c *collector) stop() bool { return c.full.Load() }

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.errs)
}

// err returns the problems as an *ErrorList, or nil when there are none.
// order ranks file names (canonical file order); unknown names sort last.
func (c *collector) err(order func(string) int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) == 0 {
		return nil
	}
	errs := append([]*Error(nil), c.errs...)
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if oa, ob := order(a.File), order(b.File); oa != ob {
			return oa < ob
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		return a.Msg < b.Msg
	})
	return &ErrorList{Errors: errs, Truncated: c.trunc}
}

// lineCtx reports problems of one line of one file.
type lineCtx struct {
	c    *collector
	file string
	line int
	bad  bool      // a problem was reported for this line
	in   *interner // shares repeated strings; nil: none
}

func (l *lineCtx) errf(field, format string, args ...any) {
	l.bad = true
	l.c.addf(l.file, l.line, field, format, args...)
}
