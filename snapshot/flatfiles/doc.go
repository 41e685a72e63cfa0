// Package flatfiles writes the datasets of a snapshot as flat files:
// zstd-compressed Parquet (through Apache Arrow's Go library) and
// gzip-compressed CSV, one schema per dataset, documented in
// docs/files.md. Daily bars and the total-return index have one file per
// year, 1-minute bars one per session, every other dataset one file.
//
// Export writes the files of an engine.Dataset into a folder, each
// replaced atomically, with a manifest.json listing them (dataset, rows,
// bytes, sha256, date range). The bytes of every file are a function of
// the Dataset and the Options alone: the same snapshot gives the same
// files, so that their sha256 serves as an ETag and mirrors can compare.
//
// Values are the API's: prices and other decimal amounts are written as
// DECIMAL(18, s), s the least scale from 2 to 8 that holds every value of
// the file's column exactly (read back as a double, a value is the API's
// number bit for bit); a column with a value no such scale holds is
// written as DOUBLE. CSV numbers are written as the API writes them (the
// shortest decimal that reads back as the number).
//
// Options.Through cuts the priced datasets (bars, total return, macro
// series, index levels) at a session: the files of a plan that may not
// see the current session.
//
// flatfiles imports engine, internal/atomicfile and internal/csvcell
// only (besides Arrow and the compression libraries); it must not import
// snapshot, httpapi or cmd.
package flatfiles
