package cvm

import (
	"errors"
	"time"
)

// Options control every reader of this package.
type Options struct {
	// Lenient skips malformed data rows and counts them in Stats.Skipped
	// instead of failing. Header errors and I/O errors always fail.
	Lenient bool
	// Retrieved is stamped as RetrievalDate/RetrievedAt on what is read:
	// the import time, passed in so that output is deterministic.
	Retrieved time.Time
	// Stats, when not nil, accumulates counters (it is not reset).
	Stats *Stats
}

// Stats counts what the readers did. Counters accumulate across calls
// sharing one *Stats; a Stats is not safe for concurrent use.
type Stats struct {
	Rows     int // data rows read (skipped rows included)
	Skipped  int // malformed rows skipped in Lenient mode
	Previous int // statement rows of the previous period (PENÚLTIMO), not imported
	Ignored  int // rows of tables that are read but not imported (DMPL)
	Files    int // files (or zip members) read
	Unused   int // zip members of no known table
}

func (o *Options) countRow() {
	if o.Stats != nil {
		o.Stats.Rows++
	}
}

// rowErr decides about a row error: in Lenient mode it counts the row as
// skipped and returns nil; otherwise it returns err. Only *ParseError
// values are row errors.
func (o *Options) rowErr(err error) error {
	var pe *ParseError
	if o.Lenient && errors.As(err, &pe) && pe.Line > 1 {
		if o.Stats != nil {
			o.Stats.Skipped++
		}
		return nil
	}
	return err
}

func (o *Options) add(f func(*Stats)) {
	if o.Stats != nil {
		f(o.Stats)
	}
}
