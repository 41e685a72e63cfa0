// Package ratios computes the indicator catalog, the fundamental and
// valuation ratio points of companies and the ratio points of listed funds
// from the source entities of an engine.Universe, reading raw CVM reports
// through engine's standardized lines. Everything here runs once per
// snapshot, at build time; the functions are pure and deterministic (same
// Universe, same output, byte for byte once encoded). The API server does
// not import it: a snapshot carries its catalog.
//
// It imports only engine and the standard library: no I/O, no HTTP, no
// index, no snapshot.
//
// # Inputs
//
// Reports are CVM DFP (annual, period = fiscal year) and ITR (one
// three-month quarter) filings. The period is taken from the flow
// statements' start and end dates, not from the form: an ITR's flows are
// its three-month statement (its year-to-date one is left out); a DFP of
// twelve months is a fiscal year, a DFP of three months (filed by a
// company changing its fiscal year) is that quarter, never ANNUAL, and a
// DFP of another length is left out. A report whose reference date is
// after the snapshot's as-of day, or after the day it was retrieved
// (engine.Report.KnownOn), yields no point: it is never a current value. A company's CONSOLIDATED statements are used
// when it has any; otherwise its INDIVIDUAL ones. Lines are read by their
// CVM codes (engine.StandardLines): income lines from the DRE, balances from
// BPA/BPP, depreciation and amortization from the DVA (7.04.01, as a
// magnitude), or, when the DVA lacks it, the sum of the DFC lines under
// 6.01.01 whose name mentions depreciação or amortização; payout from DVA
// 7.08.04.01 (JCP) and 7.08.04.02 (dividends). Statements in the
// financial institutions' CVM model (banks: DRE 3.01 "Receitas da
// Intermediação Financeira") are read with that model's codes
// (engine.StandardLine.FinancialCodes); their lines without an equivalent (EBIT,
// current assets...) are null.
//
// # Frequencies
//
//   - QUARTERLY: the quarter's own flows; the fourth quarter is the annual
//     DFP minus the three ITR quarters of the same fiscal year.
//   - YTD: the sum of the fiscal year's quarters so far (the DFP itself at
//     the fiscal year end).
//   - TTM: the sum of the last four quarters (the DFP itself at the fiscal
//     year end).
//   - ANNUAL: the DFP.
//
// Balance-sheet lines are point in time: the balance at the reference date,
// never summed. Returns (ROE, ROA, ROIC) divide by the end-of-period balance
// and are not annualized. Growth compares with the same frequency one year
// earlier: (X - X_YEAR_AGO) / abs(X_YEAR_AGO). The fiscal year end month is
// the month of the company's DFPs (December when it has none).
//
// # Publication states
//
// Reports are re-filed with a higher Version and a later PublishDate. For
// every reference date and frequency one point is produced per distinct
// publication state of the filings it uses: the value as it could be
// computed right after each publication, with the publish_date of the
// newest input used and that publication's retrieval_date. A publication
// that an indicator does not use adds no point to it: growth ratios get a
// new point when the year-ago filing is re-filed, the others do not.
// A point exists from the first publication of the period's own filing.
//
// # Valuation
//
// Valuation ratios are computed at every quarter reference date for TTM and
// at every fiscal year end for ANNUAL, with the close on or before the
// reference date (at most 92 days earlier, else null), plus one TTM point at
// the last session of the data (the latest close across all tickers) that
// uses the newest TTM figures and that session's close. Per-class ratios are
// computed for one ticker per class (CS, PS, PSA..PSE, UNIT, BDR): the most
// liquid one (lowest non-zero LiquidityRank, then ticker) among the
// current tickers: a former ticker's security (renamed since) is its
// current ticker's, as engine.Build joins them. Per-share values
// divide by the total shares in effect at the date (SharesPoint: common +
// preferred - treasury, treasury as its source gives it: the CVM's
// composicao_capital does, B3's listed-company counts do not) and
// multiply by the unit factor for UNIT.
// DIVIDEND_YIELD is TTM only: the declared cash per share (DIVIDEND,
// INTEREST_ON_EQUITY, RENDIMENTO; the current version of each event,
// engine.CompareCashVersions: the highest, of one version number the
// later published) whose
// prior_ex_date lies in the twelve calendar months ending at the reference
// date, matched to the priced ticker (or a ticker renamed into it) or its
// ISIN, divided by the factors of the stock splits/bonuses between it and
// the reference date, over the price; no distribution is a real 0. Prices
// of a ticker include those of the tickers renamed into it.
// MARKET_CAP is company level: common shares x the CS price + preferred
// shares x the most liquid preferred price (the treasury shares the count
// gives removed pro rata); when a class with shares has no price, total shares x UNIT price /
// unit factor. ENTERPRISE_VALUE = MARKET_CAP + NET_DEBT, and the EV ratios
// are company level. MARKET_CAP and DIVIDEND_YIELD do not depend on reports:
// they get one point per reference date, published on that date (retrieved
// at Meta.AsOf). A company without a priced security gets no valuation and
// no per-class points. Only the companies of Universe.Companies are derived.
// Each valuation entry of the catalog declares its engine.PriceRule (its
// form and the company figure it divides or is divided by), which writes
// the entry's variables, class split and formula; its points are the
// rule's values (engine.PriceRule.Value over engine's PerShare,
// PriceMultiple, EarningsYield, DividendYield, MarketCap,
// EnterpriseValue, EVMultiple; MaxPriceAge). The screener's repricing at
// live quotes (engine.Screener.Priced) and the valuation at a past
// session (engine.Dataset.SessionValuationAt) read the rule back from
// the catalog and compute with it, so that the three give the same
// bits: a new valuation ratio is one catalog entry.
//
// # Suffixes
//
// By-class ids are shown with a class suffix (engine.ClassSuffix) when a
// company is queried by symbol or company_id: _CS, _PS, _PSA, _PSB, _PSC,
// _PSD, _PSE, _UNIT, _BDR.
// The specification does not show the preferred-E suffix; _PSE is used.
//
// # Nulls
//
// A missing input or a division by zero gives engine.Null, never 0 or an
// infinity. Percentages are fractions (0.25 = 25 %).
//
// # Volume
//
// About 100 to 120 points per company and filing period (24 fundamental
// indicators x 4 frequencies, two of them per class, and the valuation
// indicators at ANNUAL and TTM), plus re-filed states: about 2 million
// points for the demo universe at scale 1, derived in about one second of
// CPU (BenchmarkDerive).
//
// # Funds
//
// Listed-fund indicators are MONTHLY, one point per fund report version:
// P_NAV is the close of the fund's most liquid ticker on the last session of
// the reference month over NAV_PER_SHARE; the others are the report's own
// fields.
package ratios
