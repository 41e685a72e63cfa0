package cvm

import (
	"errors"
	"io"
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
	// Progress, when not nil, is told how far each file (or archive
	// member, "archive.zip:member.csv") has been read: rows is the number
	// of data rows read so far (malformed ones included, see Reader.Rows)
	// and bytes the bytes of the file's text consumed so far (see
	// Reader.Bytes). It is called once with rows 0 when the header has
	// been read, then every ProgressEvery rows, then once at the end of
	// the file with its totals (not when reading stops on an error).
	// Calls are made on the goroutine running the reader, between rows:
	// a slow Progress slows the import. Between calls the readers only
	// compare a row counter.
	Progress func(file string, rows, bytes int64)
	// ProgressEvery is the number of rows between Progress calls;
	// 0 means DefaultProgressEvery.
	ProgressEvery int64
}

// DefaultProgressEvery is the number of rows between Options.Progress
// calls when Options.ProgressEvery is 0.
const DefaultProgressEvery = 1 << 16

// Open returns a Reader of r (see NewReader; name is the file name used
// in errors) that reports to o.Progress, reads its header and counts the
// file in Stats.Files. Every reader of this package, and of the packages
// built on it, opens its file with it, then reads the rows with EachRow.
func (o *Options) Open(r io.Reader, name string) (*Reader, error) {
	rd := NewReader(r, name)
	if o.Progress != nil {
		rd.progress = o.Progress
		rd.every = o.ProgressEvery
		if rd.every <= 0 {
			rd.every = DefaultProgressEvery
		}
		rd.next = rd.every
	}
	if err := rd.ReadHeader(); err != nil {
		return nil, err
	}
	o.add(func(s *Stats) { s.Files++ })
	return rd, nil
}

// EachRow reads the data rows of rd (opened by Open) to the end of the
// file and calls row for each well-formed one, which reads it through
// rd's Field, String... Every row, malformed ones included, counts in
// Stats.Rows. A row error (a *ParseError past the header, from rd.Next
// or from row) is skipped and counted in Stats.Skipped in Lenient mode;
// otherwise, and for any other error, EachRow stops and returns it.
func (o *Options) EachRow(rd *Reader, row func() error) error {
	for {
		err := rd.Next()
		if err == io.EOF {
			return nil
		}
		o.countRow()
		if err == nil {
			err = row()
		}
		if err != nil {
			if err = o.rowErr(err); err != nil {
				return err
			}
		}
	}
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
