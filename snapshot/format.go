package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// Magic opens every snapshot file.
const Magic = "PREGAOSN"

// FormatVersion is the version Write, WriteFile and the builds write when
// WriteOptions.Version is 0 (the pregao commands write 6 unless told
// otherwise); MaxReadVersion is the newest read.
//
// Version 2 added the header count ratio_vars (the variables of every
// ratio point, loaded into one array); version 3 the companies'
// status_date; version 4 the indexes' reductor (after as_of); version 5
// (this one) the header's position in the live stream (Header.Stream).
// Version 4 files are read with the position unknown (their sections are
// version 5's); older files are refused with ErrVersion: rebuild them
// with pregao build.
const FormatVersion uint16 = 5

// minReadVersion is the oldest version read.
const minReadVersion uint16 = 4

// columnsVersion is the version whose daily bars are a column section
// used in place (docs/snapshot-format.md, "Format 6"): read, and written
// when WriteOptions.Version asks for it, while its design is completed.
const columnsVersion uint16 = 6

// columnsLayout is the revision of format 6's layout that this build
// writes and reads, stored after the column area's size in the header;
// a change of format 6's layout bumps it, so that a file written before
// is refused with ErrVersion instead of misread. Files without one (0)
// predate the revisions. 1: sources' addresses packed (engine.URL).
// 2: fund ratio points in the column area (fundcols.go). 3: intraday
// bars compact (whole cents, engine.IntradayBars) or wide per series; a
// revision 2 file, whose intraday series are all in the wide form, still
// loads (minLayout).
const columnsLayout = 3

// minLayout is the oldest revision of format 6's layout read.
const minLayout = 2

// compactIntradayLayout is the first revision whose intraday series may
// be compact (flagged wide in the index when not); before it every one
// is wide and flagged compact.
const compactIntradayLayout = 3

// writeLayout is the revision written: columnsLayout, or minLayout for
// the tests that make a file of the revision before.
var writeLayout uint64 = columnsLayout

// maxReadVersion is the newest version read.
const maxReadVersion = columnsVersion

// MinReadVersion and MaxReadVersion are the oldest and the newest format
// versions a load reads (4 and 5 are deprecated: docs/snapshot-format.md,
// "Deprecated formats").
const (
	MinReadVersion = minReadVersion
	MaxReadVersion = maxReadVersion
)

// columnAlign is the alignment, from the start of the file, of the
// column area of a columnsVersion file: the first multiple of it at or
// after the end of the last section (zero bytes between).
const columnAlign = 4096

// maxStreamName bounds the stream name of a header's position (bytes;
// JetStream names are at most 255).
const maxStreamName = 255

// Fixed layout: magic (8), version (uint16 LE), header body length
// (uint32 LE), body, xxhash64 of everything before it (uint64 LE).
const (
	prefixLen     = len(Magic) + 2 + 4
	maxHeaderBody = 16 << 20
	// maxSectionRaw bounds one section's decompressed size (bytes).
	maxSectionRaw = 64 << 20
	// maxRatio bounds raw/compressed: zstd cannot exceed it (a 128 KiB
	// block takes at least 4 bytes), so a larger claim is corrupt.
	maxRatio = 1 << 15
	// maxTotalRatio bounds the raw bytes of all sections against the file
	// size (plus one section's worth); real snapshots compress 2-5x.
	maxTotalRatio = 64
)

// Errors a load may wrap; messages carry the detail.
var (
	ErrFormat    = errors.New("snapshot: invalid file")
	ErrChecksum  = errors.New("snapshot: checksum mismatch")
	ErrVersion   = errors.New("snapshot: unsupported format version")
	ErrTruncated = errors.New("snapshot: truncated file")
)

// Header is what a snapshot says about itself, readable without decoding
// the sections (ReadHeader).
type Header struct {
	// ID identifies the content: 16 hex digits of a hash of the format
	// version, Meta, counts and every section's raw bytes. It ignores the
	// build time and compression level.
	ID            string    `json:"id"`
	FormatVersion uint16    `json:"format_version"`
	BuildTime     time.Time `json:"build_time"`
	AsOf          time.Time `json:"as_of"`
	Source        string    `json:"source"` // Meta.Description
	Attribution   string    `json:"attribution"`
	Level         int       `json:"zstd_level"`
	// Counts holds the number of entities of every kind by section name
	// (sectors, companies, daily...), plus daily_rows, intraday_rows and
	// report_accounts.
	Counts map[string]int `json:"counts"`
	// Stream is the snapshot's position in the live stream: the first
	// stream sequence it does not cover and the batch before it (Meta.Stream;
	// absent: unknown, as in every version 4 file).
	Stream   engine.StreamPosition `json:"stream,omitzero"`
	Sections []Section             `json:"sections"`
	Size     int64                 `json:"file_size"` // bytes of the whole file
	// DataOffset is where the first section starts (bytes).
	DataOffset int64 `json:"data_offset"`
	// Columns is the size of the column area (format 6: the daily bars'
	// columns, used in place) and ColumnsOffset where it starts (bytes;
	// 0 and 0 when there is none).
	Columns       int64 `json:"columns,omitempty"`
	ColumnsOffset int64 `json:"columns_offset,omitempty"`
	// Layout is format 6's layout revision (0 for other formats).
	Layout int `json:"-"`
}

// Section is one compressed part of a kind's entities.
type Section struct {
	Name        string `json:"name"`
	Items       int    `json:"items"`
	Offset      int64  `json:"offset"`     // from the start of the file
	Compressed  int64  `json:"compressed"` // bytes in the file
	Raw         int64  `json:"raw"`        // bytes once decompressed
	Checksum    uint64 `json:"checksum"`   // xxhash64 of the compressed bytes
	RawChecksum uint64 `json:"raw_checksum"`
}

// CountNames returns the keys of Header.Counts in display order.
func CountNames() []string {
	out := make([]string, 0, len(kinds)+4)
	for _, k := range kinds {
		out = append(out, k.name)
	}
	return append(out, countDailyRows, countIntradayRows, countAccounts, countRatioVars)
}

// hbuf writes a header body.
type hbuf struct{ b []byte }

func (h *hbuf) uv(v uint64) { h.b = binary.AppendUvarint(h.b, v) }
func (h *hbuf) str(s string) {
	h.uv(uint64(len(s)))
	h.b = append(h.b, s...)
}
func (h *hbuf) time(t time.Time) error {
	if t.IsZero() {
		h.uv(0)
		return nil
	}
	s := t.Unix()
	if s <= -maxSec || s >= maxSec {
		return fmt.Errorf("time %v out of the encodable range", t)
	}
	h.uv(zig(s) + 1)
	h.uv(uint64(t.Nanosecond()))
	return nil
}
func (h *hbuf) u64(v uint64) { h.b = binary.LittleEndian.AppendUint64(h.b, v) }

// stream writes a stream position: uvarint Next, then, when above 0, the
// stream name, zigzag(session)+1 (0: no session) and the batch sequence.
func (h *hbuf) stream(p engine.StreamPosition) {
	h.uv(p.Next)
	if p.Next == 0 {
		return
	}
	h.str(p.Name)
	if p.Session.Valid() {
		h.uv(zig(int64(p.Session)) + 1)
	} else {
		h.uv(0)
	}
	h.uv(p.Batch)
}

// checkStream returns why p cannot be written (nil when it can).
func checkStream(p engine.StreamPosition) error {
	switch {
	case p.Next == 0 && p != engine.StreamPosition{}:
		return errors.New("stream position: next is 0 (unknown) but the batch is given")
	case p.Next == 0:
		return nil
	case p.Name == "" || len(p.Name) > maxStreamName:
		return fmt.Errorf("stream position: stream name of %d bytes, want 1 to %d", len(p.Name), maxStreamName)
	case !p.Session.Valid() || p.Batch == 0:
		return errors.New("stream position: the session and batch (from 1) of the last batch covered are required")
	}
	return nil
}

// encodeHeader returns the header body of h; section offsets are stored
// relative to h.DataOffset (the first section).
func encodeHeader(h *Header) ([]byte, error) {
	if err := checkStream(h.Stream); err != nil {
		return nil, err
	}
	var b hbuf
	if err := b.time(h.BuildTime); err != nil {
		return nil, fmt.Errorf("build time: %w", err)
	}
	if err := b.time(h.AsOf); err != nil {
		return nil, fmt.Errorf("as_of: %w", err)
	}
	b.str(h.Source)
	b.str(h.Attribution)
	b.stream(h.Stream)
	b.uv(uint64(h.Level))
	names := CountNames()
	b.uv(uint64(len(names)))
	for _, n := range names {
		b.str(n)
		b.uv(uint64(h.Counts[n]))
	}
	b.uv(uint64(len(h.Sections)))
	for _, s := range h.Sections {
		b.str(s.Name)
		b.uv(uint64(s.Offset - h.DataOffset))
		b.uv(uint64(s.Items))
		b.uv(uint64(s.Compressed))
		b.uv(uint64(s.Raw))
		b.u64(s.Checksum)
		b.u64(s.RawChecksum)
	}
	if h.FormatVersion >= columnsVersion {
		b.uv(uint64(h.Columns))
		b.uv(uint64(h.Layout))
	}
	return b.b, nil
}

// contentID hashes what the data is, not how it was written.
func contentID(h *Header) string {
	var b hbuf
	b.uv(uint64(h.FormatVersion))
	_ = b.time(h.AsOf)
	b.str(h.Source)
	b.str(h.Attribution)
	if h.FormatVersion >= 5 {
		b.stream(h.Stream)
	}
	for _, n := range CountNames() {
		b.str(n)
		b.uv(uint64(h.Counts[n]))
	}
	for _, s := range h.Sections {
		b.str(s.Name)
		b.uv(uint64(s.Items))
		b.uv(uint64(s.Raw))
		b.u64(s.RawChecksum)
	}
	if h.FormatVersion >= columnsVersion {
		b.uv(uint64(h.Columns)) // the columns' blocks are hashed in the daily index
	}
	return fmt.Sprintf("%016x", xxhash.Sum64(b.b))
}

// assembleHeader returns the full header bytes: prefix, body, checksum.
func assembleHeader(version uint16, body []byte) []byte {
	out := make([]byte, 0, prefixLen+len(body)+8)
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint16(out, version)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	return binary.LittleEndian.AppendUint64(out, xxhash.Sum64(out))
}

// headerLen checks the fixed prefix of b and returns the length of the
// whole header (prefix, body and checksum). b may be just the prefix.
func headerLen(b []byte) (int, error) {
	if len(b) < len(Magic) || string(b[:len(Magic)]) != Magic {
		if len(b) < len(Magic) && string(b) == Magic[:len(b)] {
			return 0, fmt.Errorf("%w: %d bytes, shorter than the magic", ErrTruncated, len(b))
		}
		return 0, fmt.Errorf("%w: bad magic (not a snapshot file)", ErrFormat)
	}
	if len(b) < len(Magic)+2 {
		return 0, fmt.Errorf("%w: %d bytes, shorter than the header prefix", ErrTruncated, len(b))
	}
	v := binary.LittleEndian.Uint16(b[len(Magic):])
	if v > maxReadVersion {
		return 0, fmt.Errorf("%w: format version %d is newer than the supported %d", ErrVersion, v, maxReadVersion)
	}
	if v == 0 {
		return 0, fmt.Errorf("%w: format version 0", ErrVersion)
	}
	if v < minReadVersion {
		return 0, fmt.Errorf("%w: format version %d is older than the oldest supported %d: rebuild the snapshot (pregao build)", ErrVersion, v, minReadVersion)
	}
	if len(b) < prefixLen {
		return 0, fmt.Errorf("%w: %d bytes, shorter than the header prefix", ErrTruncated, len(b))
	}
	n := binary.LittleEndian.Uint32(b[len(Magic)+2:])
	if n > maxHeaderBody {
		return 0, fmt.Errorf("%w: header length %d exceeds the limit %d", ErrFormat, n, maxHeaderBody)
	}
	return prefixLen + int(n) + 8, nil
}

// parseHeader parses and verifies the header at the start of b; size is
// the whole file's size (to place and bound the sections).
func parseHeader(b []byte, size int64) (Header, error) {
	hl, err := headerLen(b)
	if err != nil {
		return Header{}, err
	}
	if len(b) < hl {
		return Header{}, fmt.Errorf("%w: header needs %d bytes, file has %d", ErrTruncated, hl, len(b))
	}
	want := binary.LittleEndian.Uint64(b[hl-8:])
	if got := xxhash.Sum64(b[:hl-8]); got != want {
		return Header{}, fmt.Errorf("%w: header checksum %016x, stored %016x", ErrChecksum, got, want)
	}
	h := Header{FormatVersion: binary.LittleEndian.Uint16(b[len(Magic):]), Size: size, DataOffset: int64(hl)}
	d := &pdec{b: b[prefixLen : hl-8]}
	h.BuildTime = d.htime()
	h.AsOf = d.htime()
	h.Source = d.hstr()
	h.Attribution = d.hstr()
	if h.FormatVersion >= 5 {
		h.Stream = d.hstream()
	}
	lvl := d.uv()
	if lvl > 22 {
		d.fail("invalid zstd level %d", lvl)
	}
	h.Level = int(lvl)
	names := CountNames()
	if n := d.uv(); d.err == nil && n != uint64(len(names)) {
		d.fail("%d counts, want %d", n, len(names))
	}
	h.Counts = make(map[string]int, len(names))
	for _, name := range names {
		if got := d.hstr(); d.err == nil && got != name {
			d.fail("count %q, want %q", got, name)
		}
		c := d.uv()
		if c > 1<<40 && d.err == nil {
			d.fail("count %s = %d out of range", name, c)
		}
		h.Counts[name] = int(c)
	}
	nsec := d.count(21)
	if d.err != nil {
		return Header{}, fmt.Errorf("%w: header: %v", ErrFormat, d.err)
	}
	h.Sections = make([]Section, 0, nsec)
	off := int64(hl)
	last := -1
	for i := 0; i < nsec && d.err == nil; i++ {
		s := Section{Name: d.hstr(), Offset: off}
		ki := kindIndex(s.Name)
		switch {
		case d.err != nil:
		case ki < 0:
			d.fail("section %d: unknown kind %q", i, s.Name)
		case ki < last:
			d.fail("section %d: kind %q out of order", i, s.Name)
		}
		last = ki
		if rel := d.uv(); d.err == nil && rel != uint64(off-int64(hl)) {
			d.fail("section %d (%s): offset %d, expected %d (sections are contiguous)", i, s.Name, rel, off-int64(hl))
		}
		items := d.uv()
		clen := d.uv()
		rlen := d.uv()
		s.Checksum = d.u64()
		s.RawChecksum = d.u64()
		if d.err != nil {
			break
		}
		switch {
		case clen == 0 || clen > uint64(size):
			d.fail("section %d (%s): compressed length %d out of range", i, s.Name, clen)
		case rlen > maxSectionRaw || rlen > clen*maxRatio:
			d.fail("section %d (%s): raw length %d out of range", i, s.Name, rlen)
		case items == 0 || ki >= 0 && items > rlen/uint64(kinds[ki].min) && !(h.FormatVersion >= columnsVersion && (s.Name == "ratios" || s.Name == "reports" || s.Name == "fund_ratios")):
			// (format 6's ratio points, report heads and fund ratio
			// points are in the column area: bounded by it below, by
			// decReports6 and by decFundColumns)
			d.fail("section %d (%s): %d items out of range", i, s.Name, items)
		}
		s.Items, s.Compressed, s.Raw = int(items), int64(clen), int64(rlen)
		off += s.Compressed
		h.Sections = append(h.Sections, s)
	}
	if h.FormatVersion >= columnsVersion && d.err == nil {
		if c := d.uv(); c > uint64(size) {
			d.fail("column area of %d bytes in a %d-byte file", c, size)
		} else {
			h.Columns = int64(c)
		}
		if d.err == nil {
			// Files written before the layout revisions have none.
			var rev uint64
			if d.remaining() > 0 {
				rev = d.uv()
			}
			if d.err == nil && (rev < minLayout || rev > columnsLayout) {
				return Header{}, fmt.Errorf("%w: format 6 layout revision %d, this build reads %d to %d: build the snapshot again (pregao build --format 6)", ErrVersion, rev, minLayout, columnsLayout)
			}
			h.Layout = int(rev)
		}
	}
	if d.err == nil && d.remaining() != 0 {
		d.fail("%d trailing bytes in the header", d.remaining())
	}
	if d.err != nil {
		return Header{}, fmt.Errorf("%w: header: %v", ErrFormat, d.err)
	}
	// Sections may not claim more raw bytes than a generous compression
	// ratio allows: a small hostile file cannot make a load hold gigabytes.
	var rawTotal int64
	for _, s := range h.Sections {
		rawTotal += s.Raw
	}
	if limit := maxTotalRatio*size + maxSectionRaw; rawTotal > limit {
		return Header{}, fmt.Errorf("%w: header: sections claim %d raw bytes from a %d-byte file (limit %d)", ErrFormat, rawTotal, size, limit)
	}
	// Every kind's count is the sum of its sections' items.
	sums := make(map[string]int, len(kinds))
	for _, s := range h.Sections {
		sums[s.Name] += s.Items
	}
	for _, k := range kinds {
		if sums[k.name] != h.Counts[k.name] {
			return Header{}, fmt.Errorf("%w: header: count %s = %d but sections hold %d", ErrFormat, k.name, h.Counts[k.name], sums[k.name])
		}
	}
	if h.FormatVersion >= columnsVersion {
		// The kinds in the column area have one part each (their index).
		n := map[string]int{}
		for _, s := range h.Sections {
			n[s.Name]++
		}
		if n["daily"] > 1 || n["intraday"] > 1 || n["ratios"] > 1 || n["fund_ratios"] > 1 {
			return Header{}, fmt.Errorf("%w: header: %d daily, %d intraday, %d ratios and %d fund_ratios sections, want at most 1 each", ErrFormat, n["daily"], n["intraday"], n["ratios"], n["fund_ratios"])
		}
	}
	if h.FormatVersion >= columnsVersion && uint64(sums["ratios"]) > uint64(h.Columns)/ratioPointBytes {
		return Header{}, fmt.Errorf("%w: header: %d ratio points beyond a column area of %d bytes", ErrFormat, sums["ratios"], h.Columns)
	}
	if h.FormatVersion >= columnsVersion && uint64(sums["fund_ratios"]) > uint64(h.Columns)/fundPointBytes {
		return Header{}, fmt.Errorf("%w: header: %d fund ratio points beyond a column area of %d bytes", ErrFormat, sums["fund_ratios"], h.Columns)
	}
	if h.Columns > 0 {
		if sums["daily"]+sums["intraday"]+sums["ratios"]+sums["fund_ratios"]+h.Counts[countAccounts] == 0 {
			return Header{}, fmt.Errorf("%w: header: a column area of %d bytes without daily or intraday series, report accounts or ratio points", ErrFormat, h.Columns)
		}
		h.ColumnsOffset = (off + columnAlign - 1) / columnAlign * columnAlign
		off = h.ColumnsOffset + h.Columns
	}
	if off > size {
		return Header{}, fmt.Errorf("%w: sections end at byte %d, file has %d bytes", ErrTruncated, off, size)
	}
	if off < size {
		return Header{}, fmt.Errorf("%w: trailing garbage: %d bytes after the last section (byte %d)", ErrFormat, size-off, off)
	}
	h.ID = contentID(&h)
	return h, nil
}

// hstream reads a stream position of the header (hbuf.stream).
func (d *pdec) hstream() engine.StreamPosition {
	var p engine.StreamPosition
	if p.Next = d.uv(); p.Next == 0 || d.err != nil {
		return engine.StreamPosition{}
	}
	p.Name = d.hstr()
	p.Session = engine.NoDate
	if s := d.uv(); s > 0 && d.err == nil {
		v := unzig(s - 1)
		if v < math.MinInt32+1 || v > math.MaxInt32 {
			d.fail("stream position: session %d out of range", v)
		}
		p.Session = engine.Date(v)
	}
	p.Batch = d.uv()
	if d.err == nil {
		if err := checkStream(p); err != nil {
			d.fail("%v", err)
		}
	}
	return p
}

// hstr reads a length-prefixed string of the header.
func (d *pdec) hstr() string {
	n := d.uv()
	if n > uint64(d.remaining()) {
		if d.err == nil {
			d.fail("string length %d beyond the remaining %d bytes", n, d.remaining())
		}
		return ""
	}
	s := string(d.b[d.i : d.i+int(n)])
	d.i += int(n)
	return s
}

func kindIndex(name string) int {
	for i, k := range kinds {
		if k.name == name {
			return i
		}
	}
	return -1
}

// metaOf returns the Meta a header describes.
func metaOf(h *Header) engine.Meta {
	return engine.Meta{AsOf: h.AsOf, Description: h.Source, Attribution: h.Attribution, Stream: h.Stream}
}

// String returns a one-line summary of the header.
func (h Header) String() string {
	return "snapshot " + h.ID + " v" + strconv.Itoa(int(h.FormatVersion)) + " as_of " + h.AsOf.UTC().Format(time.RFC3339) +
		" (" + strconv.Itoa(len(h.Sections)) + " sections, " + strconv.FormatInt(h.Size, 10) + " bytes)"
}
