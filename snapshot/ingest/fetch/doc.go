// Package fetch downloads the official B3, CVM and Banco Central files for a date range
// into a local folder that mirrors the official directory layout (the URL
// path: InstDados/SerHist/COTAHIST_D26032021.ZIP,
// dados/CIA_ABERTA/DOC/DFP/DADOS/dfp_cia_aberta_2023.zip...).
//
// Downloads are resumable (an interrupted file is kept as NAME.part and
// continued with an HTTP Range request, guarded by If-Range), idempotent
// (a manifest, .pregao-fetch.json, records the size and ETag of every
// complete file: immutable files are then skipped without a request, the
// others are revalidated with If-None-Match), and retried with exponential
// backoff on network errors and 5xx/429 answers. A daily COTAHIST file that
// answers 404 is a day without a session, not an error.
//
// CVM's yearly archives (DFP, ITR, FCA, FII monthly reports) are
// republished under one name with the latest version of each filing of
// the day, so the earlier version of a restated filing is only in an
// earlier download. Their downloads are all kept (Item.Keep): the newest
// under the official name, each earlier one of other content beside it
// as KeptName (dfp_cia_aberta_2023.20261130T220619Z.zip, the time it was
// stored), and a download of the content already held (a ZIP of the same
// members) is dropped. Every file is complete and synced before a link
// or rename gives it a name the import reads (keep.go, settle).
//
// FetchSGS stores the Banco Central's SGS series (SGSCodes: Selic
// target, IPCA, CDI) in windows of at most 10 years, the service's cap
// on a daily series since March 2025: one answer per series and decade
// (dados/serie/bcdata.sgs.432/dados/2020-2029.json), cut at today, asked
// at most once a São Paulo day and never again once fetched
// SGSSettleDays after its window; a window without values (404) is
// recorded absent, and an answer that is no JSON array (the firewall's
// HTML page) is retried, never stored. Its PTAX closing-rates files
// (Download/fechamento/YYYYMMDD.csv, one per weekday, 404 on a holiday)
// are Plan's items. bcb.go cites the evidence.
//
// FetchServices stores the answers of B3's listed-data services
// (sistemaswebb3-listados.b3.com.br: index portfolios, listed-company
// supplement, details and cash dividends, listed-fund exports), whose
// parameter is the base64 of a JSON object in the URL's last path
// segment. The folder keeps the service path and names each answer
// readably (indexProxy/indexCall/GetPortfolioDay/IBOV/2026-11-26.json,
// listedCompaniesProxy/CompanyCall/GetDetail/ABEV.json); paginated
// answers are fetched to page.totalPages and stored merged, as one page.
// An answer is asked at most once a São Paulo day (the manifest records
// when it was fetched); an answer cut between two pages is asked again
// from its first page. services.go and b3api.go cite the evidence each
// URL follows. Package fetchtest is a local stand-in for the official
// hosts.
//
// It imports engine (for dates), internal/atomicfile (the folder's lock)
// and the standard library only; it must not import the snapshot format,
// the bundle package or the importers.
package fetch
