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
//   - demo: the deterministic synthetic demo universe.
//
// Import rule for the whole tree: a package under snapshot/ingest may
// import engine and other packages of this tree, never snapshot (the file
// format), snapshot/bundle, httpapi or cmd. cmd/pregao's TestImportRules
// enforces it.
package ingest
