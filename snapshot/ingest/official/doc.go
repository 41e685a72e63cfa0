// Package official writes a Universe (in practice the demo universe of
// package demo) as B3 and the CVM publish their open data, so that
// "pregao import" can be proved at real size on a market whose every
// figure is known: Write lays the files out as "pregao fetch" stores
// them (the official hosts' paths; B3's services under their service
// path), which "pregao update --no-fetch" imports (cmd/pregao
// officialArgs).
//
// What is written, under the output directory:
//
//	InstDados/SerHist/COTAHIST_AYYYY.ZIP          one annual COTAHIST per year of quotes
//	dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv  the company registry (kind COMPANY)
//	dados/CIA_ABERTA/DOC/DFP/DADOS/dfp_cia_aberta_YYYY.zip
//	dados/CIA_ABERTA/DOC/ITR/DADOS/itr_cia_aberta_YYYY.zip
//	dados/CIA_ABERTA/DOC/FCA/DADOS/fca_cia_aberta_YYYY.zip   (the as-of year)
//	dados/FII/DOC/INF_MENSAL/DADOS/inf_mensal_fii_YYYY.zip
//	.../dfp_cia_aberta_YYYY.YYYYMMDDT230000Z.zip, ...      earlier downloads (below)
//	indexProxy/indexCall/GetPortfolioDay/SYMBOL/YYYY-MM-DD.json        one portfolio per index
//	listedCompaniesProxy/CompanyCall/GetListedCashDividends/SYMBOL.json per issuer root
//	listedCompaniesProxy/CompanyCall/GetListedSupplementCompany/SYMBOL.json
//	listedCompaniesProxy/CompanyCall/GetDetail/SYMBOL.json             (companies)
//	fundsProxy/fundsCall/GetListFundDownload/etfsListados.csv, fundosListados.csv
//
// Formats follow the official layouts the importers read (package
// cotahist, cvm, fii and b3 name every field): COTAHIST is fixed-width,
// 245 bytes a record plus CRLF, ISO-8859-1, with its header and trailer
// records; CVM tables are ';'-separated ISO-8859-1 with CRLF; B3
// responses are JSON with Brazilian numbers and dd/mm/yyyy dates. Beside
// the rows that become data, the COTAHIST files carry rows the import
// skips (odd lot, options, forwards, rights: Stats counts them) and the
// DFP/ITR tables carry the previous period's comparatives (PENÚLTIMO),
// as the official files do.
//
// The yearly DFP, ITR and FII archives are written as the CVM publishes
// them and pregao fetch keeps them: each download holds, of each filing,
// the latest version published by its day, so a restated filing's
// earlier version is only in an earlier download. A year with
// restatements is written as several downloads (publications): one the
// day before each restatement (named as fetch keeps an earlier download,
// fetch.KeptName, at 20:00 in São Paulo that day) and the newest under
// the official name, holding the latest version of every filing.
//
// What the formats cannot carry is listed, with the reason, in
// docs/data-format.md ("Official files of the demo universe"); the
// package's test imports what Write wrote and compares it with the
// Universe field by field, minus that list.
//
// Output is deterministic: the same Universe gives byte-identical files
// (ZIP entries carry a fixed modification time).
//
// It imports engine, internal/atomicfile and package fetch (for the
// service paths). No importer may import it, nor any other package of
// snapshot/ingest: cmd/pregao's TestImportRules holds the rule (only
// cmd, for generate --official, and this package's tests use it).
package official
