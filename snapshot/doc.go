// Package snapshot reads and writes Pregão snapshot files: one file that
// holds a whole engine.Universe (every source entity plus Derived: the
// indicator catalog and every ratio point), compressed and checksummed,
// built once by "pregao build" and loaded by "pregao serve".
//
// # File layout (format version 5, FormatVersion)
//
// All integers are little-endian; "uvarint" is encoding/binary's unsigned
// varint (minimal form only), "svarint" its zigzag form.
//
//	offset 0   "PREGAOSN"                      magic, 8 bytes
//	offset 8   uint16 format version           5; 4 is read, others refused
//	offset 10  uint32 L                        header body length (<= 16 MiB)
//	offset 14  header body, L bytes
//	14+L       uint64 xxhash64 of bytes [0, 14+L)
//	22+L       sections, back to back in table order, then end of file
//
// The header body holds: build time, Meta.AsOf (times: uvarint 0 for the
// zero time, else zigzag(unix seconds)+1 then uvarint nanoseconds),
// Meta.Description and Meta.Attribution (uvarint length + UTF-8), the
// position in the live stream (Meta.Stream, version 5: uvarint Next, the
// first stream sequence not covered, 0 for unknown; when above 0, the
// stream name, uvarint zigzag(session)+1 and uvarint batch sequence of
// the message at Next-1), the zstd level, the counts (uvarint n, then n pairs of name and uvarint: one
// per entity kind, plus daily_rows, intraday_rows, report_accounts and
// ratio_vars, the last added in version 2), and the section table
// (uvarint n, then per section: kind name, offset from the first section,
// items, compressed length, raw length, xxhash64 of the compressed bytes
// and xxhash64 of the raw bytes). Sections start right after the header
// and follow each other without gaps; bytes after the last one are
// refused.
//
// A kind's items (sectors, companies, securities, renames, daily,
// intraday, indexes, reports, shares, cash_actions, share_actions,
// fund_reports, insider_reports, documents, catalog, ratios, fund_ratios,
// in that order) are cut into parts of about 4 MiB raw, one section each,
// so that loading decompresses and decodes them in parallel. Each section
// is one zstd frame (github.com/klauspost/compress/zstd) whose raw bytes
// are:
//
//	string table   uvarint count, uvarint length of each, then the bytes
//	nested totals  one uvarint per nested slice kind of the entity
//	               (accounts, sources, rows...), so each is allocated once
//	items          fields in declaration order
//
// Strings are uvarint indexes into the table (every string of a part is
// interned once). Dates are a uvarint 0 for NoDate, else 1 + the zigzag
// delta from the previous date of the part; times a uvarint 0 for the
// zero time, else 1 + (zigzag delta of unix seconds from the previous time
// of the part << 1 | has-nanoseconds), then the nanoseconds if any; ints
// svarints; bools one byte 0 or 1; nested slices a uvarint 0 for nil, else
// length+1.
// A Num is a uvarint whose low 3 bits are a decimal scale 0..4 (value =
// svarint(rest) / 10^scale, used only when exact), 5 for the canonical NaN
// (engine.Null) or 6 followed by the 8 bytes of the float64: every value,
// NaN payloads included, round-trips bit for bit.
//
// Daily and intraday parts are columnar: a directory (ticker, rows) of the
// part's series, then each series' columns: dates (or unix-second times)
// as delta svarints, prices and volumes as a scale byte then per value the
// delta of the scaled integer (svarint<<2), 1 then 8 raw bytes, or 2 for
// NaN; quantities and trade counts as svarints.
//
// # Guarantees
//
// The same Universe and WriteOptions give byte-identical files. Loading
// verifies everything (magic, version, checksums, zstd frames, lengths,
// enums, counts, catalog indexes, trailing bytes) and answers an error,
// never a panic. Every length is bounded by the input that must hold it
// before anything is allocated; a section decompresses to at most 64 MiB
// and all sections to at most 64 times the file size plus 64 MiB.
// Zero-length top-level slices decode as nil; nested slices keep nil
// versus empty. Times decode in UTC with the same instant.
//
// The package imports engine, engine/ratios, snapshot/bundle and
// internal/atomicfile (its tests also use snapshot/ingest/demo); it must
// not import httpapi, cmd or the ingest tree (snapshot/ingest/...).
// cmd/pregao's TestImportRules checks these rules.
package snapshot
