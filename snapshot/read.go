package snapshot

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/pregao/pregao/engine"
)

var (
	zrOnce sync.Once
	zr     *zstd.Decoder
	zrErr  error
)

// decoder returns the shared zstd decoder (DecodeAll is safe for
// concurrent use).
func decoder() (*zstd.Decoder, error) {
	zrOnce.Do(func() {
		zr, zrErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(maxSectionRaw),
			zstd.WithDecodeAllCapLimit(true),
			zstd.IgnoreChecksum(true))
	})
	return zr, zrErr
}

// ReadFile reads and decodes the snapshot at path (see Decode).
func ReadFile(path string) (*engine.Universe, Header, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, Header{}, err
	}
	u, h, err := Decode(b)
	if err != nil {
		return nil, Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return u, h, nil
}

// ReadHeader reads and verifies only the header of the snapshot at path;
// it checks that the file size matches the section table but does not
// read the sections.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Header{}, err
	}
	prefix := make([]byte, prefixLen)
	n, err := io.ReadFull(f, prefix)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return Header{}, err
	}
	hl, err := headerLen(prefix[:n])
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	if int64(hl) > st.Size() {
		return Header{}, fmt.Errorf("%s: %w: header needs %d bytes, file has %d", path, ErrTruncated, hl, st.Size())
	}
	b := make([]byte, hl)
	copy(b, prefix)
	if _, err := io.ReadFull(f, b[prefixLen:]); err != nil {
		return Header{}, fmt.Errorf("%s: %w: %v", path, ErrTruncated, err)
	}
	h, err := parseHeader(b, st.Size())
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Decode verifies and decodes a whole snapshot. Every check is made:
// magic, version, header and section checksums (compressed and raw),
// zstd framing, lengths, enums, counts and trailing bytes; any failure is
// an error naming the section, never a panic. Sections decode in
// parallel on GOMAXPROCS goroutines. The Universe does not alias b.
func Decode(b []byte) (*engine.Universe, Header, error) {
	h, err := parseHeader(b, int64(len(b)))
	if err != nil {
		return nil, Header{}, err
	}
	zd, err := decoder()
	if err != nil {
		return nil, Header{}, fmt.Errorf("snapshot: zstd: %w", err)
	}
	secs := h.Sections
	order := largestFirst(secs)

	// Phase 1: verify and decompress every section, so that no count read
	// from the file is trusted before the bytes behind it exist.
	raws := make([][]byte, len(secs))
	err = parallelOrder(order, len(secs), func(i int) error {
		s := &secs[i]
		comp := b[s.Offset : s.Offset+s.Compressed]
		if got := xxhash.Sum64(comp); got != s.Checksum {
			return fmt.Errorf("%w: section %d (%s): checksum %016x, stored %016x", ErrChecksum, i, s.Name, got, s.Checksum)
		}
		var fh zstd.Header
		if err := fh.Decode(comp); err != nil {
			return fmt.Errorf("%w: section %d (%s): bad zstd frame: %v", ErrFormat, i, s.Name, err)
		}
		if fh.HasFCS && fh.FrameContentSize != uint64(s.Raw) {
			return fmt.Errorf("%w: section %d (%s): bad zstd frame: content size %d, table says %d", ErrFormat, i, s.Name, fh.FrameContentSize, s.Raw)
		}
		raw, err := zd.DecodeAll(comp, make([]byte, 0, s.Raw))
		if err != nil {
			return fmt.Errorf("%w: section %d (%s): bad zstd data: %v", ErrFormat, i, s.Name, err)
		}
		if int64(len(raw)) != s.Raw {
			return fmt.Errorf("%w: section %d (%s): %d raw bytes, table says %d", ErrFormat, i, s.Name, len(raw), s.Raw)
		}
		if got := xxhash.Sum64(raw); got != s.RawChecksum {
			return fmt.Errorf("%w: section %d (%s): raw checksum %016x, stored %016x", ErrChecksum, i, s.Name, got, s.RawChecksum)
		}
		raws[i] = raw
		return nil
	})
	if err != nil {
		return nil, Header{}, err
	}

	// Phase 2: allocate every kind's slice once, then decode parts into
	// their ranges in parallel.
	u := &engine.Universe{Meta: metaOf(&h)}
	starts := make([]int, len(secs))
	next := make([]int, len(kinds))
	for i, s := range secs {
		ki := kindIndex(s.Name)
		starts[i] = next[ki]
		next[ki] += s.Items
	}
	for ki, k := range kinds {
		if next[ki] > 0 {
			k.alloc(u, next[ki])
		}
	}
	stats := make([]partStats, len(secs))
	err = parallelOrder(order, len(secs), func(i int) error {
		s := &secs[i]
		ps, err := decodePart(raws[i], kindIndex(s.Name), u, starts[i], starts[i]+s.Items)
		raws[i] = nil
		if err != nil {
			return fmt.Errorf("%w: section %d (%s): %v", ErrFormat, i, s.Name, err)
		}
		stats[i] = ps
		return nil
	})
	if err != nil {
		return nil, Header{}, err
	}
	var tot partStats
	for _, ps := range stats {
		tot.dailyRows += ps.dailyRows
		tot.intradayRows += ps.intradayRows
		tot.accounts += ps.accounts
	}
	for _, c := range []struct {
		name string
		n    int
	}{{countDailyRows, tot.dailyRows}, {countIntradayRows, tot.intradayRows}, {countAccounts, tot.accounts}} {
		if h.Counts[c.name] != c.n {
			return nil, Header{}, fmt.Errorf("%w: header count %s = %d, sections hold %d", ErrFormat, c.name, h.Counts[c.name], c.n)
		}
	}
	if err := checkIndicators(u); err != nil {
		return nil, Header{}, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return u, h, nil
}

// decodePart decodes the raw bytes of one part of kinds[ki] into items
// [lo,hi) of u.
func decodePart(raw []byte, ki int, u *engine.Universe, lo, hi int) (partStats, error) {
	d := &pdec{b: raw}
	d.strtab()
	ps := kinds[ki].dec(d, u, lo, hi)
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d trailing bytes", d.remaining())
	}
	return ps, d.err
}
