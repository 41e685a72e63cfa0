package snapshot

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
)

// DefaultLevel is the zstd level used when WriteOptions.Level is 0.
const DefaultLevel = 3

// partTarget is the estimated raw size at which a kind's items are cut
// into a new section part (bytes). Parts bound decode memory and let
// sections load in parallel.
var partTarget = 4 << 20

// WriteOptions controls Write. The zero value is valid.
type WriteOptions struct {
	// Level is the zstd level, 1 (fastest) to 22; 0 means DefaultLevel.
	Level int
	// BuildTime is stored in the header; zero means Meta.AsOf, so the same
	// Universe always gives the same bytes.
	BuildTime time.Time
}

// encoded is a snapshot ready to be written: header bytes then parts.
type encoded struct {
	header []byte
	parts  [][]byte
	h      Header
}

// Write encodes u as a snapshot to w. The output depends only on u and
// opt (byte-identical for equal inputs). u is not modified.
func Write(w io.Writer, u *engine.Universe, opt WriteOptions) error {
	enc, err := encode(u, opt)
	if err != nil {
		return err
	}
	if _, err := w.Write(enc.header); err != nil {
		return err
	}
	for _, p := range enc.parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// WriteFile writes u as a snapshot to path atomically: a temporary file in
// the same directory is written, synced and renamed over path, so readers
// see the old file or the new one, never a partial one.
func WriteFile(path string, u *engine.Universe, opt WriteOptions) error {
	enc, err := encode(u, opt)
	if err != nil {
		return err
	}
	return writeEncoded(path, enc)
}

// writeEncoded writes enc to path through a synced temporary file.
func writeEncoded(path string, enc *encoded) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err = bw.Write(enc.header); err != nil {
		return err
	}
	for _, p := range enc.parts {
		if _, err = bw.Write(p); err != nil {
			return err
		}
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // best effort: make the rename durable
		d.Close()
	}
	return nil
}

// job is one section part: items [lo,hi) of kinds[k].
type job struct {
	k, lo, hi int
}

func splitParts(u *engine.Universe) []job {
	var jobs []job
	for ki, k := range kinds {
		n := k.count(u)
		lo, w := 0, 0
		for i := 0; i < n; i++ {
			w += k.weight(u, i)
			if w >= partTarget {
				jobs = append(jobs, job{ki, lo, i + 1})
				lo, w = i+1, 0
			}
		}
		if lo < n {
			jobs = append(jobs, job{ki, lo, n})
		}
	}
	return jobs
}

func encode(u *engine.Universe, opt WriteOptions) (*encoded, error) {
	level := opt.Level
	if level == 0 {
		level = DefaultLevel
	}
	if level < 1 || level > 22 {
		return nil, fmt.Errorf("snapshot: zstd level %d out of range 1..22", opt.Level)
	}
	if err := checkSeries(u); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if err := checkIndicators(u); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	workers := runtime.GOMAXPROCS(0)
	zw, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)),
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(workers),
		zstd.WithConcurrentBlocks(false))
	if err != nil {
		return nil, fmt.Errorf("snapshot: zstd: %w", err)
	}
	defer zw.Close()

	jobs := splitParts(u)
	out := &encoded{parts: make([][]byte, len(jobs))}
	secs := make([]Section, len(jobs))
	err = parallel(len(jobs), func(i int) error {
		j := jobs[i]
		k := &kinds[j.k]
		e := newPenc(len(k.nests))
		est := 0
		for i := j.lo; i < j.hi; i++ {
			est += k.weight(u, i)
		}
		e.body = make([]byte, 0, est+est/4+64)
		k.enc(e, u, j.lo, j.hi)
		if e.err != nil {
			return fmt.Errorf("snapshot: %s items %d..%d: %w", k.name, j.lo, j.hi-1, e.err)
		}
		raw := e.finish()
		if len(raw) > maxSectionRaw {
			return fmt.Errorf("snapshot: %s items %d..%d: section of %d bytes exceeds the limit %d", k.name, j.lo, j.hi-1, len(raw), maxSectionRaw)
		}
		comp := zw.EncodeAll(raw, make([]byte, 0, len(raw)/3+64))
		out.parts[i] = comp
		secs[i] = Section{
			Name: k.name, Items: j.hi - j.lo,
			Compressed: int64(len(comp)), Raw: int64(len(raw)),
			Checksum: xxhash.Sum64(comp), RawChecksum: xxhash.Sum64(raw),
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	bt := opt.BuildTime
	if bt.IsZero() {
		bt = u.Meta.AsOf
	}
	h := Header{
		FormatVersion: FormatVersion,
		BuildTime:     bt.UTC(),
		AsOf:          u.Meta.AsOf,
		Source:        u.Meta.Description,
		Attribution:   u.Meta.Attribution,
		Level:         level,
		Counts:        countsOf(u),
		Sections:      secs,
	}
	var rel int64
	for i := range h.Sections {
		h.Sections[i].Offset = rel
		rel += h.Sections[i].Compressed
	}
	body, err := encodeHeader(&h)
	if err != nil {
		return nil, fmt.Errorf("snapshot: header: %w", err)
	}
	out.header = assembleHeader(body)
	off := int64(len(out.header))
	h.DataOffset = off
	for i := range h.Sections {
		h.Sections[i].Offset = off
		off += h.Sections[i].Compressed
	}
	h.Size = off
	h.ID = contentID(&h)
	out.h = h
	return out, nil
}

func countsOf(u *engine.Universe) map[string]int {
	m := make(map[string]int, len(kinds)+3)
	for _, k := range kinds {
		m[k.name] = k.count(u)
	}
	rows := 0
	for i := range u.Daily {
		rows += u.Daily[i].Len()
	}
	m[countDailyRows] = rows
	rows = 0
	for i := range u.Intraday {
		rows += u.Intraday[i].Len()
	}
	m[countIntradayRows] = rows
	rows = 0
	for i := range u.Reports {
		rows += len(u.Reports[i].Accounts)
	}
	m[countAccounts] = rows
	return m
}

// parallel runs fn(0..n-1) on GOMAXPROCS goroutines. After a failure no
// new index starts; it returns the error of the lowest failed index.
func parallel(n int, fn func(i int) error) error {
	return parallelOrder(nil, n, fn)
}

// parallelOrder is parallel with the indexes started in the given order
// (nil: ascending).
func parallelOrder(order []int, n int, fn func(i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n)
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				j := int(next.Add(1) - 1)
				if j >= n {
					return
				}
				i := j
				if order != nil {
					i = order[j]
				}
				if err := fn(i); err != nil {
					errs[i] = err
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// largestFirst returns section indexes by decreasing size, so parallel
// workers finish together.
func largestFirst(secs []Section) []int {
	order := make([]int, len(secs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return secs[order[a]].Raw > secs[order[b]].Raw })
	return order
}
