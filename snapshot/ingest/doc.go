// Package ingest is the root of everything that produces a source bundle's
// contents from outside data: one package per official format and the
// tools around them.
//
//   - datafile: opens plain, zstd and gzip data files and decodes ISO-8859-1
//     text (the one Latin-1 routine of the tree); locates testdata/real.
//   - cotahist: B3 COTAHIST daily quotes (fixed-width records).
//   - cvm: CVM open data: cad_cia_aberta, DFP/ITR statements, FCA; the
//     CSV reader every CVM importer shares.
//   - fii: CVM FII monthly reports.
//   - b3: B3 index portfolios, listed-company data (cash dividends,
//     supplements, company details) and instrument listings.
//   - fetch: downloads the official files into their official layout.
//   - negocios: B3's trade-by-trade files (NEGOCIOSAVISTA, all three
//     layout generations): a streaming reader, the 2026 writer, and the
//     aggregation of trades into 1-minute and provisional daily bars that
//     the live session's feeds share.
//   - live: the live session's feeds (a replay of recorded trade files,
//     B3's polled trade files, pushed trades) and its session log, the
//     durable record of every batch applied, read back by import as
//     1-minute history.
//   - demo: the deterministic synthetic demo universe.
//   - assemble: the import join: reads the official files of a Config
//     through the packages above and joins them into one engine.Universe
//     (tickers linked to companies, synthetic issuer ids, liquidity
//     ranks, the as-of day, index portfolios, cash and supplement data);
//     pregao import is flags around it.
//
// Import rule for the whole tree: a package under snapshot/ingest may
// import engine, internal/atomicfile (temporary names and locks) and other
// packages of this tree, never snapshot (the file format),
// snapshot/bundle, httpapi or cmd. cmd/pregao's TestImportRules
// enforces it.
package ingest
