// Package b3 reads B3's index and listed-company downloads: the index
// portfolio CSV files (IBOVDia_dd-mm-yy.csv, SMLLDia_...), the JSON
// responses of B3's index service (GetTheoricalPortfolio, GetPortfolioDay,
// GetStockIndex) and listed-companies service (GetListedCashDividends,
// GetListedSupplementCompany, GetDetailsCompany), and the ETF and FII
// listing exports. It turns them into engine.Index, engine.CashAction,
// engine.ShareAction and engine.SharesPoint values and ticker lists.
//
// Files may be ISO-8859-1 or UTF-8, with CRLF or LF; numbers use Brazilian
// decimal commas and thousands dots (GetPortfolioDay in English answers
// with the English forms, detected from the response); dates are
// dd/mm/yyyy.
//
// It imports engine and snapshot/ingest/datafile only; it must not import the
// snapshot format, the bundle package or other importers.
package b3
