// Package bundle reads and writes source bundles: the directory of JSON
// Lines and CSV files (each optionally zstd- or gzip-compressed) through
// which a user, a pipeline or an importer hands data to Pregão.
//
// Read validates a bundle completely (syntax, values, references) and
// returns a Universe in canonical order, or an error naming file, line and
// field of every problem found (up to MaxErrors); a bad bundle never yields
// a partial Universe. Write produces a byte-deterministic bundle from a
// Universe; Read(Write(u)) equals u for a canonical u (see Canonicalize).
// The format is documented in docs/data-format.md.
//
// Besides Read and Write, Create, NewDailyWriter, NewIntradayWriter and
// NewJSONLWriter write one bundle file at a time, ticker by ticker or
// entity by entity, so that importers need not hold every row in memory.
//
// bundle imports engine, internal/atomicfile (temporary names, the swap,
// symbolic links) and the compression and JSON libraries only; it must
// not import snapshot, httpapi, cmd or any importer.
package bundle
