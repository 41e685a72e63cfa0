package cotahist

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// LineError is an error at one line of one file. Column is 1-based, 0 when
// the whole line is at fault.
type LineError struct {
	File   string
	Line   int64
	Column int
	Err    error
}

func (e *LineError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// ErrTrailer is wrapped by the error of a file whose trailer is missing or
// whose record count differs from the number of lines.
var ErrTrailer = errors.New("cotahist: trailer check failed")

// Scanner streams the quote records of one COTAHIST text file. It checks the
// header (first line), the length of every line and the trailer's record
// count. In lenient mode malformed quote records and trailer problems are
// counted (Malformed, TrailerProblem) instead of stopping the scan.
// A Scanner is not safe for concurrent use.
type Scanner struct {
	r       *bufio.Reader
	name    string
	lenient bool

	line      int64 // lines read so far (non-empty)
	bytes     int64 // bytes read so far
	header    Header
	hasHeader bool
	trailer   int64 // record count in the trailer; -1 before it
	rec       Record
	err       error
	done      bool

	// Malformed counts quote records skipped in lenient mode.
	Malformed int64
	// FirstMalformed is the first malformed record's error in lenient mode.
	FirstMalformed error
	// TrailerProblem describes a missing or mismatched trailer seen in
	// lenient mode ("" when the trailer was right).
	TrailerProblem string
}

// NewScanner returns a Scanner reading r; name is used in errors.
func NewScanner(r io.Reader, name string, lenient bool) *Scanner {
	return &Scanner{r: bufio.NewReaderSize(r, 1<<20), name: name, lenient: lenient, trailer: -1}
}

// Header returns the file's header (valid after the first Next).
func (s *Scanner) Header() Header { return s.header }

// Lines returns the number of lines read so far; Bytes the bytes.
func (s *Scanner) Lines() int64 { return s.line }

// Bytes returns the number of bytes read so far.
func (s *Scanner) Bytes() int64 { return s.bytes }

// Record returns the current quote record; it is overwritten by Next.
func (s *Scanner) Record() *Record { return &s.rec }

// Err returns the error that stopped the scan, nil at a clean end.
func (s *Scanner) Err() error { return s.err }

func (s *Scanner) fail(col int, err error) bool {
	s.err = &LineError{File: s.name, Line: s.line, Column: col, Err: err}
	s.done = true
	return false
}

// readLine returns the next line without its line end; nil at EOF.
func (s *Scanner) readLine() ([]byte, error) {
	b, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A line longer than the buffer: certainly malformed. Skip
		// the rest of it so that lenient mode resumes at the next line.
		s.bytes += int64(len(b))
		for err == bufio.ErrBufferFull {
			b, err = s.r.ReadSlice('\n')
			s.bytes += int64(len(b))
		}
		s.line++
		return nil, &LineError{File: s.name, Line: s.line, Err: fmt.Errorf("line longer than %d bytes", s.r.Size())}
	}
	s.bytes += int64(len(b))
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	if len(b) == 0 && err == io.EOF {
		return nil, nil
	}
	line := b
	for n := len(line); n > 0 && (line[n-1] == '\n' || line[n-1] == '\r'); n = len(line) {
		line = line[:n-1]
	}
	if len(line) == 0 || (len(line) == 1 && line[0] == 0x1a) {
		// Blank line or DOS end-of-file mark: only tolerated at the end.
		if err == io.EOF {
			return nil, nil
		}
		s.line++
		return nil, &LineError{File: s.name, Line: s.line, Err: errors.New("empty line")}
	}
	s.line++
	return line, nil
}

// Next advances to the next quote record and reports whether there is one.
func (s *Scanner) Next() bool {
	if s.done {
		return false
	}
	for {
		line, err := s.readLine()
		if err != nil {
			var le *LineError
			if errors.As(err, &le) && s.lenient && s.hasHeader && s.trailer < 0 {
				s.malformed(err)
				continue
			}
			s.err = err
			s.done = true
			return false
		}
		if line == nil {
			return s.finish()
		}
		if !s.hasHeader {
			h, err := ParseHeader(line)
			if err != nil {
				return s.fail(column(err), fmt.Errorf("header: %w", err))
			}
			s.header, s.hasHeader = h, true
			continue
		}
		if s.trailer >= 0 {
			return s.fail(0, errors.New("record after the trailer"))
		}
		switch RecordType(line) {
		case TypeQuote:
			if err := ParseRecord(line, &s.rec); err != nil {
				if s.lenient {
					s.malformed(&LineError{File: s.name, Line: s.line, Column: column(err), Err: err})
					continue
				}
				return s.fail(column(err), err)
			}
			return true
		case TypeTrailer:
			n, err := ParseTrailer(line)
			if err != nil {
				return s.fail(column(err), fmt.Errorf("trailer: %w", err))
			}
			s.trailer = n
		case TypeHeader:
			return s.fail(1, errors.New("second header record"))
		default:
			err := &FieldError{Column: 1, Field: "TIPREG", Value: string(line[:min(2, len(line))]), Reason: "unknown record type"}
			if s.lenient {
				s.malformed(&LineError{File: s.name, Line: s.line, Column: 1, Err: err})
				continue
			}
			return s.fail(1, err)
		}
	}
}

func (s *Scanner) malformed(err error) {
	s.Malformed++
	if s.FirstMalformed == nil {
		s.FirstMalformed = err
	}
}

func (s *Scanner) finish() bool {
	s.done = true
	if !s.hasHeader {
		s.err = fmt.Errorf("%s: empty file: no header record", s.name)
		return false
	}
	var problem string
	switch {
	case s.trailer < 0:
		problem = "no trailer record (file truncated?)"
	case s.trailer != s.line:
		problem = fmt.Sprintf("trailer counts %d records but the file has %d lines", s.trailer, s.line)
	}
	if problem != "" {
		if s.lenient {
			s.TrailerProblem = problem
			return false
		}
		s.err = fmt.Errorf("%s: %s: %w", s.name, problem, ErrTrailer)
	}
	return false
}

func column(err error) int {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Column
	}
	return 0
}
