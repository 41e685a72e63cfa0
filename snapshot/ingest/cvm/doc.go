// Package cvm imports the open data of the CVM (Comissão de Valores
// Mobiliários, dados.cvm.gov.br) about listed companies into engine
// entities:
//
//   - ReadCad, ReadCadRows: the company registry cad_cia_aberta.csv ->
//     []engine.Company (company_id = CNPJ digits) and a sector taxonomy
//     ([]engine.Sector) built from its "sector of activity".
//   - ReadStatements, ReadStatementsZip (ReadFilingZip): DFP (annual) and
//     ITR (quarterly) statement tables, per-statement CSVs or the yearly
//     archives -> []engine.Report, one per filing version; ReadDocIndex
//     and AttachIndex add publish dates and source links from the filing
//     index; ReadCapital reads composicao_capital -> []engine.SharesPoint.
//   - ReadValorMobiliario: the FCA securities table -> []Listing, the
//     ticker <-> CNPJ map (TickerMap), listing segment and dates
//     (ApplyListings) and securities (Securities); ReadEndereco and
//     ApplyAddresses read the FCA address table.
//
// Reader is the CSV reader shared by every CVM importer (also the FII
// monthly reports of package fii): ';' separated, UTF-8 or ISO-8859-1,
// CRLF or LF, header checked by name, streaming in constant memory.
// ParseNum, ParseInt and ParseDate read the number and date forms of the
// official files.
//
// Every reader takes an Options: Lenient skips malformed rows and counts
// them (Stats.Skipped) instead of failing with a *ParseError that names
// file, line and column; Retrieved stamps the retrieval date so that
// output is deterministic.
//
// Missing values are engine.Null / engine.NoDate, never 0. Output slices
// are sorted deterministically.
//
// This package imports only the standard library, engine and
// snapshot/ingest/datafile (Latin-1 decoding); it must not
// import other snapshot packages, httpapi or cmd.
package cvm
