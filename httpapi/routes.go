package httpapi

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pregao/pregao/engine"
)

// Route templates (relative to the prefix; the operational ones are at the
// root), used as the metrics' route label.
const (
	routeIndexes = "/indexes"
	routeIndex   = "/indexes/:symbol"
	routeHighs   = "/indexes/:symbol/highs"
	routeLows    = "/indexes/:symbol/lows"
	routeQuotes  = "/quotes"
	routeQuote   = "/quotes/:ticker"
	// The quote routes of one type each (addition): what GET
	// /quotes/{ticker} and POST /quotes answer for that type, as an
	// operation of its own.
	routeQuoteCurrent     = "/quotes/:ticker/current"
	routeQuoteHistorical  = "/quotes/:ticker/historical"
	routeQuoteChart       = "/quotes/:ticker/chart"
	routeQuotesCurrent    = "/quotes/current"
	routeQuotesHistorical = "/quotes/historical"
	routeQuotesChart      = "/quotes/chart"
	routeVariations       = "/stocks/variations"
	routeCompanies        = "/companies"
	routeCompany          = "/companies/:id"
	routeCash             = "/companies/cash-corporate-actions"
	routeRatios           = "/companies/:id/ratios"
	routeValuation        = "/companies/:id/ratios/valuation"
	routeRawReports       = "/companies/:id/raw-reports"
	routeReports          = "/companies/:id/reports"
	routeShareActions     = "/companies/:id/corporate-actions"
	routeInsider          = "/companies/:id/insider-transactions"
	routeDocuments        = "/companies/:id/documents"
	routeSharesHistory    = "/companies/:id/shares-history"
	routeScreener         = "/screener"
	routeFundRatios       = "/traded-funds/:fundIdentifier/ratios"
	routeCatalog          = "/ratios/catalog"
	routeHealthz          = "/healthz"
	routeReadyz           = "/readyz"
	routeMetricsPath      = "/metrics"
	routeUnmatched        = "(unmatched)"
	routeDocsFile         = docsPath + "/:file"
	routeCompanyCash      = "/companies/:id/cash-corporate-actions"
	routeSectors          = "/sectors"
	routeFundCash         = "/traded-funds/:fundIdentifier/cash-corporate-actions"
	cashActionsSegment    = "cash-corporate-actions"
)

// Parameters several routes share.
var (
	pathCompanyID = Param{Name: "id", In: InPath, Type: TypeString, Required: true, Example: "LITA3",
		Desc: "company identifier: a ticker (PETR4), a symbol (PETR), a company_id (CNPJ digits) or a CVM code, matched ignoring case"}
	pathFundID = Param{Name: "fundIdentifier", In: InPath, Type: TypeString, Required: true, Example: "AILO11",
		Desc: "fund identifier: a listed fund's ticker (AILO11), symbol or company_id, matched ignoring case"}
	pathQuoteTicker = Param{Name: "ticker", In: InPath, Type: TypeString, Required: true, Pattern: `^[A-Za-z0-9]{3,6}$`, Example: "ITAG3",
		Desc: "ticker (PETR4), macro series (SELIC, IPCA, CDI, or a currency's ISO code: USD, EUR...) or index with a portfolio (IBOV: its levels, addition), matched ignoring case"}
	pathIndexSymbol = Param{Name: "symbol", In: InPath, Type: TypeString, Required: true, Example: "IBOV",
		Desc: "index symbol (IBOV, IFIX…: the indexes of the snapshot), matched ignoring case"}
	rankingLimit = Param{Name: "limit", In: InQuery, Type: TypeInteger, Default: defaultRankingLimit, Min: 1, Max: MaxRankingLimit,
		Desc: "number of entries per list"}
	publishDate = Param{Name: "publish_date", In: InQuery, Type: TypeTimestamp,
		Desc: "keep only items published strictly after this instant"}
	retrievalDate = Param{Name: "retrieval_date", In: InQuery, Type: TypeTimestamp,
		Desc: "keep only items retrieved strictly after this instant"}
	latestByReference = Param{Name: "latest_by_reference_date", In: InQuery, Type: TypeBoolean, Default: false,
		Desc: "keep only the latest published item of each reference date (after the other filters)"}
	referenceDate = Param{Name: "reference_date", In: InQuery, Type: TypeDate,
		Desc: "keep only items of this reference date"}
	aggregation = Param{Name: "aggregation", In: InQuery, Type: TypeEnum, Enum: []string{engine.AggIndividual, engine.AggConsolidated},
		Desc: "keep only items of this aggregation (default both)"}
	reportYear = Param{Name: "year", In: InQuery, Type: TypeInteger, Min: 1900, Max: 2200,
		Desc: "keep only reports whose reference date is in this year"}
	reportQuarter = Param{Name: "quarter", In: InQuery, Type: TypeInteger, Min: 1, Max: 4,
		Desc: "keep only reports whose reference month is in this quarter"}
	showSector = Param{Name: "show_sector", In: InQuery, Type: TypeBoolean, Default: false,
		Desc: "add sector, industry_group, industry and subindustry ({id, name})"}
	showMarketCap = Param{Name: "show_market_cap", In: InQuery, Type: TypeBoolean, Default: false,
		Desc: "add market_cap and enterprise_value ({value, format: BRL}), the latest company-level points"}
	listOffset = Param{Name: "offset", In: InQuery, Type: TypeInteger, Default: 0, Min: 0, Max: 1<<31 - 1,
		Desc: "number of items to skip, in answer order"}
)

// oneIssuerCashParams are the query parameters of the cash actions of one
// company or fund: those of the all-companies list but bdr.
var oneIssuerCashParams = []Param{
	{Name: "current", In: InQuery, Type: TypeBoolean, Default: true, Desc: "only the highest version of each event"},
	{Name: "start_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events paid on or after this day (events without a payment date are left out)"},
	{Name: "end_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events paid on or before this day (events without a payment date are left out)"},
	{Name: "stock_type", In: InQuery, Type: TypeEnum, Enum: append(cashClasses[:len(cashClasses):len(cashClasses)], engine.ClassFundUnit), Desc: "keep events of this share class (by ticker: the ticker's class)"},
	listLimit, listOffset, formatParam, asOfParam,
}

// reportSections are the sections of the standardized reports.
var reportSections = []string{engine.SectionBalanceSheet, engine.SectionIncomeStatement, engine.SectionComprehensiveIncome, engine.SectionCashFlow, engine.SectionValueAdded}

// ratiosParams are the parameters of both company ratio routes.
var ratiosParams = []Param{
	pathCompanyID,
	{Name: "ids", In: InQuery, Type: TypeList,
		Desc: "indicator ids (see /ratios/catalog), comma-separated; a per-class id may carry a class suffix (PRICE_TO_EARNINGS_PS); default every indicator of the route's kind"},
	{Name: "frequency", In: InQuery, Type: TypeEnum, Enum: companyFreqs, Desc: "keep only points of this frequency (default every frequency)"},
	referenceDate, publishDate, retrievalDate,
	{Name: "show_calculation", In: InQuery, Type: TypeBoolean, Default: false, Desc: "add calculation and variables ([{id, value}])"},
	latestByReference, formatParam, asOfParam,
}

// routeTable is every operation of the API: the router is built from it
// (see routes) and each handler reads its parameters through its route's
// declarations, so a parameter a handler accepts is necessarily here.
var routeTable = csvRoutes([]Route{
	{Method: http.MethodGet, Path: routeIndexes, Summary: "Every index of the snapshot: symbol, name, portfolio date and member count (addition)",
		Params: []Param{listLimit, listOffset}, Response: "IndexList", Blocks: BlocksNone, serve: (*API).indexList},
	{Method: http.MethodGet, Path: routeIndex, Summary: "An index's portfolio: members with weight and theoretical quantity (addition)",
		Params: []Param{pathIndexSymbol}, Response: "IndexPortfolio", Blocks: BlocksNone, serve: (*API).indexPortfolio},
	{Method: http.MethodGet, Path: routeHighs, Summary: "Members of an index with the highest variation of the session the plan sees",
		Params: []Param{pathIndexSymbol, rankingLimit}, Response: "Ranking", Priced: true, blocksFor: pricedBlocks, serve: (*API).indexHighs},
	{Method: http.MethodGet, Path: routeLows, Summary: "Members of an index with the lowest variation of the session the plan sees",
		Params: []Param{pathIndexSymbol, rankingLimit}, Response: "Ranking", Priced: true, blocksFor: pricedBlocks, serve: (*API).indexLows},
	{Method: http.MethodPost, Path: routeQuotes, Summary: "Quotes of up to 500 tickers: current, historical series or chart presets",
		Body: &quotesBody, CSV: csvQuotes, Priced: true, Untyped: true, Blocks: BlocksOwn, serve: (*API).quotesBatch},
	{Method: http.MethodGet, Path: routeQuote, Summary: "Quotes of one ticker, with the options of POST /quotes",
		Params: []Param{
			{Name: "ticker", In: InPath, Type: TypeString, Required: true, Pattern: tickerListPattern, Example: "ITAG3",
				Desc: "ticker (PETR4), macro series (SELIC, IPCA, CDI, or a currency's ISO code: USD, EUR...) or index with a portfolio (IBOV: its levels, addition), matched ignoring case; several, comma-separated (PETR4,VALE3, at most 500), answer as POST /quotes does: an object keyed by ticker (addition)"},
			quoteType, quoteInterval,
			{Name: "start_date", In: InQuery, Type: TypeDate, Desc: quoteStartDesc},
			{Name: "end_date", In: InQuery, Type: TypeDate, Desc: quoteEndDesc},
			quoteAdjusted, formatParam,
		}, CSV: csvQuotes, Priced: true, Untyped: true, Blocks: BlocksOwn, serve: (*API).quoteSingle},
	{Method: http.MethodGet, Path: routeQuoteCurrent, Summary: "A ticker's current quote: GET /quotes/{ticker}?type=current (addition)",
		Params:   []Param{pathQuoteTicker, quoteAdjusted, formatParam},
		Response: "Quote", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quoteTyped(TypeCurrent)},
	{Method: http.MethodGet, Path: routeQuoteHistorical, Summary: "A ticker's historical series: GET /quotes/{ticker}?type=historical (addition)",
		Params: []Param{pathQuoteTicker, quoteInterval,
			{Name: "start_date", In: InQuery, Type: TypeDate, Desc: quoteStartDesc},
			{Name: "end_date", In: InQuery, Type: TypeDate, Desc: quoteEndDesc},
			quoteAdjusted, formatParam},
		Response: "QuoteSeries", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quoteTyped(TypeHistorical)},
	{Method: http.MethodGet, Path: routeQuoteChart, Summary: "A ticker's chart presets (1d, 5d, 1M, 6M, 1Y, 5Y): GET /quotes/{ticker}?type=chart (addition)",
		Params:   []Param{pathQuoteTicker, quoteAdjusted, formatParam},
		Response: "Chart", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quoteTyped(TypeChart)},
	{Method: http.MethodPost, Path: routeQuotesCurrent, Summary: "Current quotes of up to 500 tickers: POST /quotes with type current (addition)",
		Body: &currentQuotesBody, Response: "CurrentQuotesByTicker", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quotesTyped(TypeCurrent, &currentQuotesBody)},
	{Method: http.MethodPost, Path: routeQuotesHistorical, Summary: "Historical series of up to 500 tickers: POST /quotes with type historical (addition)",
		Body: &historicalQuotesBody, Response: "HistoricalQuotesByTicker", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quotesTyped(TypeHistorical, &historicalQuotesBody)},
	{Method: http.MethodPost, Path: routeQuotesChart, Summary: "Chart presets of up to 500 tickers: POST /quotes with type chart (addition)",
		Body: &chartQuotesBody, Response: "ChartsByTicker", CSV: csvQuotes, Priced: true, Blocks: BlocksOwn, serve: quotesTyped(TypeChart, &chartQuotesBody)},
	{Method: http.MethodPost, Path: routeTotalReturnBatch, Summary: "Total-return series of up to 500 tickers: dividends reinvested at the theoretical ex price (addition)",
		Body: &totalReturnBody, Response: "TotalReturnByTicker", CSV: csvTotalReturn, Priced: true, Deferred: true, serve: (*API).totalReturnBatch},
	{Method: http.MethodGet, Path: routeTotalReturn, Summary: "A ticker's total-return series: its index, 1.0 on the first session, with dividends reinvested at the theoretical ex price (addition)",
		Params: trParams, Response: "TotalReturnSeries", CSV: csvTotalReturn, Priced: true, Deferred: true, serve: (*API).totalReturnSingle},
	{Method: http.MethodGet, Path: routeVariations, Summary: "Gainers and losers of the previous session among every listed ticker",
		Params: []Param{rankingLimit}, Response: "Variations", Priced: true, blocksFor: pricedBlocks, serve: (*API).variations},
	{Method: http.MethodGet, Path: routeCompanies, Summary: "Brazilian companies (and BDR issuers with bdr=true), by company_id",
		Params: []Param{
			{Name: "bdr", In: InQuery, Type: TypeBoolean, Default: false, Desc: "add the BDR issuers"},
			showSector, showMarketCap,
			{Name: "status", In: InQuery, Type: TypeEnum, Enum: companyStatuses, Default: "ACTIVE", Fold: true,
				Desc: "registry status to list: ACTIVE (and companies of unknown status), CANCELLED, SUSPENDED or ALL (addition)"},
			{Name: "search", In: InQuery, Type: TypeString,
				Desc: "find companies, BDR issuers and listed funds by ticker, symbol, trading name or name, ignoring case and accents; ranked, at most 50 (addition)"},
			listLimit, listOffset,
		}, Response: "CompanyList", blocksFor: noBlocksUnless("show_market_cap"), valued: true, serve: (*API).companies},
	{Method: http.MethodGet, Path: routeCompany, Summary: "One company's detail; optional blocks are absent unless asked for",
		Params: []Param{
			pathCompanyID,
			showMarketCap,
			{Name: "show_logo", In: InQuery, Type: TypeBoolean, Default: false, Desc: "add logo and icon ({svg, png_1024 … png_64})"},
			{Name: "show_company_details", In: InQuery, Type: TypeBoolean, Default: false, Desc: "add website, address, founding_date and ipo_date"},
			showSector, asOfParam,
		}, Response: "Company", blocksFor: marketCapBlocks, valued: true, serve: (*API).company},
	{Method: http.MethodGet, Path: routeCash, Summary: "Cash corporate actions of every Brazilian company, prior_ex_date descending",
		Params: []Param{
			{Name: "current", In: InQuery, Type: TypeBoolean, Default: true, Desc: "only the highest version of each event"},
			{Name: "start_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events paid on or after this day (events without a payment date are left out)"},
			{Name: "end_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events paid on or before this day (events without a payment date are left out)"},
			{Name: "stock_type", In: InQuery, Type: TypeEnum, Enum: cashClasses, Desc: "keep events of this share class (BDR needs bdr=true)"},
			{Name: "bdr", In: InQuery, Type: TypeBoolean, Default: false, Desc: "add the events of BDR issuers"},
			listLimit, listOffset, formatParam, asOfParam,
		}, Response: "CashCorporateActions", CSV: csvCash, Blocks: BlocksNone, Deferred: true, serve: (*API).cashActions},
	{Method: http.MethodGet, Path: routeCompanyCash, Summary: "One company's cash corporate actions, prior_ex_date descending; by ticker, its class's (addition)",
		Params: append([]Param{pathCompanyID}, oneIssuerCashParams...), Response: "CashCorporateActions", CSV: csvCash, Blocks: BlocksNone, Deferred: true, serve: (*API).companyCash},
	{Method: http.MethodGet, Path: routeFundCash, Summary: "A listed fund's distributions (FII, ETF), prior_ex_date descending (addition)",
		Params: append([]Param{pathFundID}, oneIssuerCashParams...), Response: "CashCorporateActions", CSV: csvCash, Blocks: BlocksNone, Deferred: true, serve: (*API).fundCash},
	{Method: http.MethodGet, Path: routeRatios, Summary: "A company's fundamental ratios, keyed by indicator id and frequency",
		Params: ratiosParams, Response: "Ratios", CSV: csvRatios, blocksFor: companyBlocks, serve: (*API).ratiosFundamental},
	{Method: http.MethodGet, Path: routeValuation, Summary: "A company's valuation ratios, keyed by indicator id and frequency",
		Params: ratiosParams, Response: "Ratios", CSV: csvRatios, blocksFor: companyBlocks, valued: true, serve: (*API).ratiosValuation},
	{Method: http.MethodGet, Path: routeRawReports, Summary: "A company's financial statements as filed with the CVM, as trees or flat",
		Params: []Param{
			pathCompanyID,
			{Name: "report_type", In: InQuery, Type: TypeEnum, Enum: engine.Statements, Desc: "keep only this statement (default every one)"},
			aggregation, referenceDate, reportYear, reportQuarter,
			{Name: "flat", In: InQuery, Type: TypeBoolean, Default: false, Desc: "data keyed by account path instead of tree_data"},
			publishDate, retrievalDate, latestByReference, listLimit, listOffset, asOfParam,
		}, Response: "RawReports", blocksFor: companyBlocks, serve: (*API).rawReports},
	{Method: http.MethodGet, Path: routeReports, Summary: "A company's standardized statements, one item per filed report",
		Params: []Param{
			pathCompanyID,
			{Name: "section", In: InQuery, Type: TypeEnum, Enum: reportSections, Desc: "keep only this section (default every one)"},
			{Name: "frequency", In: InQuery, Type: TypeEnum, Enum: []string{engine.FreqAnnual, engine.FreqQuarterly, engine.FreqYTD},
				Desc: "keep only reports of this period, taken from their start and end dates: ANNUAL twelve months, QUARTERLY three, YTD another length (default every one)"},
			aggregation, referenceDate, reportYear, reportQuarter, publishDate, retrievalDate, latestByReference, listLimit, listOffset, asOfParam,
		}, Response: "StandardizedReports", blocksFor: companyBlocks, serve: (*API).reports},
	{Method: http.MethodGet, Path: routeShareActions, Summary: "A company's share corporate actions (splits, bonuses, spin-offs…), prior_ex_date descending",
		Params: []Param{
			pathCompanyID,
			{Name: "start_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events whose prior_ex_date is on or after this day"},
			{Name: "end_date", In: InQuery, Type: TypeTimestamp, Desc: "keep events whose prior_ex_date is on or before this day"},
			{Name: "stock_type", In: InQuery, Type: TypeEnum, Enum: shareActionClasses, Desc: "keep events of this share class (UNIT and FUND_UNIT match each other)"},
			listLimit, listOffset, asOfParam,
		}, Response: "ShareCorporateActions", Blocks: BlocksNone, serve: (*API).shareActions},
	{Method: http.MethodGet, Path: routeInsider, Summary: "A company's monthly insider-trading reports, newest reference month first",
		Params: []Param{
			pathCompanyID, aggregation,
			{Name: "start_date", In: InQuery, Type: TypeDate, Desc: "keep reports of this reference month or later"},
			{Name: "end_date", In: InQuery, Type: TypeDate, Desc: "keep reports of this reference month or earlier"},
			publishDate, retrievalDate,
			{Name: "month", In: InQuery, Type: TypeString, Pattern: `^\d{4}-\d{2}$`, Desc: "keep the reports of this reference month, YYYY-MM (addition, as Partnr's)"},
			{Name: "trade", In: InQuery, Type: TypeEnum, Enum: []string{"BUY", "SELL"}, Fold: true, Desc: "keep only movements of this operation; reports left without one are left out (addition, as Partnr's)"},
			{Name: "group_id", In: InQuery, Type: TypeString, Desc: "keep only movements of this group (CONTROLLER, TREASURY, SUBSIDIARY, BOARD, EXECUTIVE_BOARD, AUDIT_COUNCIL…), matched ignoring case; reports left without one are left out (addition, as Partnr's)"},
			listLimit, listOffset,
		}, Response: "InsiderTransactions", Blocks: BlocksNone, Deferred: true, serve: (*API).insider},
	{Method: http.MethodGet, Path: routeDocuments, Summary: "A company's regulatory documents, newest publication first",
		Params: []Param{
			pathCompanyID,
			{Name: "category", In: InQuery, Type: TypeString, Desc: "keep documents of this category, matched ignoring case"},
			{Name: "start_date", In: InQuery, Type: TypeDate, Desc: "keep documents published on or after this day"},
			{Name: "end_date", In: InQuery, Type: TypeDate, Desc: "keep documents published on or before this day"},
			publishDate,
			{Name: "limit", In: InQuery, Type: TypeInteger, Default: 100, Min: 1, Max: 500, Desc: "number of documents"},
			listOffset,
		}, Response: "Documents", Blocks: BlocksNone, Deferred: true, serve: (*API).documents},
	{Method: http.MethodGet, Path: routeSharesHistory, Summary: "A company's share counts, newest first",
		Params: []Param{pathCompanyID,
			{Name: "start_date", In: InQuery, Type: TypeDate, Desc: "keep counts dated on or after this day (addition, as Partnr's)"},
			{Name: "end_date", In: InQuery, Type: TypeDate, Desc: "keep counts dated on or before this day (addition, as Partnr's)"},
			listLimit, listOffset,
		}, Response: "SharesHistory", Blocks: BlocksNone, serve: (*API).sharesHistory},
	{Method: http.MethodPost, Path: routeScreener, Summary: "Tickers filtered and sorted by price, volume, employees, sector and ratios",
		Body: &screenerBody, Response: "ScreenerResult", Priced: true, serve: (*API).screener},
	{Method: http.MethodGet, Path: routeFunds, Summary: "Listed funds (FIIs, ETFs), by company_id: filtered by kind, sector, status or a search, paged (addition)",
		Params: fundListParams, Response: "FundList", Blocks: BlocksNone, serve: (*API).fundsList},
	{Method: http.MethodGet, Path: routeFund, Summary: "One listed fund: registry data, tickers, taxonomy and the latest point of each indicator (addition)",
		Params: []Param{pathFundID}, Response: "Fund", Blocks: BlocksCompany, serve: (*API).fundDetail},
	{Method: http.MethodGet, Path: routeFundRatios, Summary: "A listed fund's indicators, keyed by indicator id and frequency",
		Params: []Param{
			pathFundID,
			{Name: "ids", In: InQuery, Type: TypeList, Desc: "fund indicator ids (see /ratios/catalog), comma-separated, matched ignoring case; default every one"},
			{Name: "id", In: InQuery, Type: TypeString, Desc: "one fund indicator id (the same as ids with one value; not with ids)"},
			{Name: "reference_date", In: InQuery, Type: TypeTimestamp, Desc: "keep only points of this reference day"},
			publishDate, retrievalDate,
			{Name: "frequency", In: InQuery, Type: TypeEnum, Enum: fundFreqs, Fold: true, Desc: "keep only points of this frequency, matched ignoring case"},
			latestByReference,
			{Name: "limit", In: InQuery, Type: TypeInteger, Default: 500, Min: 1, Max: 500, Desc: "number of points, in answer order (indicator, frequency, reference date)"},
			listOffset, formatParam, asOfParam,
		}, Response: "FundRatios", CSV: csvFundRatios, Blocks: BlocksCompany, Deferred: true, serve: (*API).fundRatios},
	{Method: http.MethodGet, Path: routeSectors, Summary: "The sector taxonomy: every node with its level, parent and number of issuers; the ids the screener's sector filter takes (addition)",
		Params: []Param{
			{Name: "level", In: InQuery, Type: TypeInteger, Min: 1, Max: 4, Desc: "keep one level: 1 sector, 2 industry group, 3 industry, 4 sub-industry (default every level)"},
			listLimit, listOffset,
		}, Response: "Sectors", Blocks: BlocksNone, serve: (*API).sectors},
	{Method: http.MethodGet, Path: routeCatalog, Summary: "Every indicator the ratio routes and the screener know, in catalog order",
		Params: []Param{
			{Name: "kind", In: InQuery, Type: TypeEnum, Enum: catalogKinds[1:], Fold: true, Desc: "keep indicators of this kind, matched ignoring case"},
			listLimit, listOffset,
		}, Response: "Catalog", Blocks: BlocksNone, serve: (*API).catalog},
	{Method: http.MethodGet, Path: routeFiles, Summary: "The snapshot's datasets as Parquet and CSV files, as the key's plan sees them: name, rows, bytes, sha256, date range and url of each (addition)",
		Response: "FileList", Priced: true, Deferred: true, serve: (*API).filesList},
	{Method: http.MethodGet, Path: routeFile, Summary: "One file of GET /files, with ETag and Range (addition)",
		Params: []Param{{Name: "name", In: InPath, Type: TypeString, Required: true, Example: "companies.parquet", Desc: "a file's name, as GET /files lists it"}},
		Media:  mediaFile, Deferred: true, raw: (*API).fileServe},
	{Method: http.MethodGet, Path: routeStreamQuotes, Summary: "The live session as it happens, as the key's plan sees it: a stream of Server-Sent Events (addition)",
		Params: []Param{
			{Name: "tickers", In: InQuery, Type: TypeList, Example: "ITAG3,LITA3", Desc: "the tickers to stream, comma-separated (up to 500); or index"},
			{Name: "index", In: InQuery, Type: TypeString, Example: "IBOV", Desc: "an index whose members and level to stream (its symbol, matched ignoring case); or tickers"},
		},
		Response: "StreamBar", Stream: true, serve: (*API).streamQuotes},
	{Method: http.MethodPost, Path: routeLiveTrades, Summary: "Push a batch of trades (and cancellations) of the live session: admin keys only (addition)",
		Params: []Param{seqParam}, Lines: &liveTradeLine, Admin: true, Response: "LivePushResult", serve: (*API).liveTrades},
	{Method: http.MethodPost, Path: routeLiveBars, Summary: "Push a batch of whole 1-minute bars of the live session: admin keys only (addition)",
		Params: []Param{seqParam}, Lines: &liveBarLine, Admin: true, Response: "LivePushResult", serve: (*API).liveBars},
	{Method: http.MethodGet, Path: routeHealthz, Summary: "200 while the process runs", Root: true, Response: "Health", serve: (*API).healthz},
	{Method: http.MethodGet, Path: routeReadyz, Summary: "200 once a verified snapshot is published, 503 before", Root: true, Response: "Readiness", serve: (*API).readyz},
	{Method: http.MethodGet, Path: routeMetricsPath, Summary: "Prometheus metrics (text exposition format)", Root: true},
	{Method: http.MethodGet, Path: OpenAPIPath, Summary: "This document: the OpenAPI 3.1 description of the API (addition)", Root: true},
	{Method: http.MethodGet, Path: docsPath, Summary: "The API reference page, rendered from this document, with Try it out (addition)", Root: true},
	{Method: http.MethodGet, Path: routeDocsFile, Summary: "Files of the API reference page (addition)", Root: true,
		Params: []Param{{Name: "file", In: InPath, Type: TypeString, Required: true, Example: "init.js", Desc: "swagger-ui-bundle.js, swagger-ui.css, init.js or favicon.svg"}}},
})

// routes builds the router from routeTable. It panics only on a
// declaration or route conflict (a setup mistake that the tests catch).
// It records the method and pattern of every registration in a.patterns.
func (a *API) routes(g prometheus.Gatherer) *httprouter.Router {
	r := httprouter.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	// OPTIONS on any known path: 204 with Allow (set by the router; CORS
	// preflights are answered before routing, see cors.go).
	r.HandleOPTIONS = true
	r.GlobalOPTIONS = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	var cash, cashCSV httprouter.Handle
	for i := range routeTable {
		switch rt := &routeTable[i]; rt.Path {
		case routeCash:
			checkRoute(rt)
			cash = a.wrap(rt)
		case routeCash + ".csv":
			checkRoute(rt)
			cashCSV = a.wrap(rt)
		}
	}
	for i := range routeTable {
		rt := &routeTable[i]
		checkRoute(rt)
		path := a.cfg.Prefix + rt.Path
		if rt.Root {
			path = rt.Path
		}
		var h httprouter.Handle
		switch rt.Path {
		case routeCash, routeCash + ".csv":
			// httprouter refuses a static segment and a parameter at the
			// same position, so /companies/cash-corporate-actions (and its
			// .csv) is dispatched inside the /companies/:id handle; the
			// public paths are unchanged.
			continue
		case routeCompany:
			detail := a.wrap(rt)
			h = func(w http.ResponseWriter, req *http.Request, ps httprouter.Params) {
				switch ps.ByName("id") {
				case cashActionsSegment:
					cash(w, req, ps)
				case cashActionsSegment + ".csv":
					cashCSV(w, req, ps)
				default:
					detail(w, req, ps)
				}
			}
		case OpenAPIPath:
			h = a.serveStatic(a.openapi, rt.Path, nil)
		case docsPath:
			h = a.serveStatic(a.docs[""], rt.Path, docsCSP)
		case routeDocsFile:
			h = a.docsFile()
		case routeMetricsPath:
			if g == nil {
				continue
			}
			mh := promhttp.HandlerFor(g, promhttp.HandlerOpts{})
			rm := a.m.route(routeMetricsPath)
			a.metrics = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				sw := &statusWriter{ResponseWriter: w, status: 200}
				mh.ServeHTTP(sw, req)
				rm.observe(sw.status, 0)
			})
			if a.cfg.MetricsApart {
				continue
			}
			h = func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) { a.metrics.ServeHTTP(w, req) }
		default:
			h = a.wrap(rt)
		}
		r.Handle(rt.Method, path, h)
		if rt.Method == http.MethodGet {
			// HEAD on every GET route: the same answer's status and
			// headers; the server sends no body for HEAD.
			r.Handle(http.MethodHead, path, h)
		}
		a.patterns = append(a.patterns, rt.Method+" "+path)
	}

	unmatched := a.m.route(routeUnmatched)
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == docsPath+"/" && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
			// Relative, so that it holds behind a proxy's path prefix: the
			// page's links are relative to /docs.
			w.Header().Set("Location", "../docs")
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		a.plainError(w, http.StatusNotFound, fmt.Sprintf("no operation at %s %s", req.Method, req.URL.Path)+prefixHint(r, a.cfg.Prefix, req.Method, req.URL.Path))
		unmatched.observe(http.StatusNotFound, 0)
	})
	r.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		a.plainError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s (allowed: %s)", req.Method, req.URL.Path, w.Header().Get("Allow")))
		unmatched.observe(http.StatusMethodNotAllowed, 0)
	})
	r.PanicHandler = func(w http.ResponseWriter, req *http.Request, v any) {
		if v == http.ErrAbortHandler {
			// A deliberate cut (wrap, endStream): the server closes the
			// connection, so that the client cannot take the part of the
			// answer it got for a whole one.
			panic(v)
		}
		a.m.panics.Inc()
		a.log.Error("panic outside a handler", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(v))
		a.plainError(w, http.StatusInternalServerError, "internal server error")
		unmatched.observe(http.StatusInternalServerError, 0)
	}
	return r
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// healthz answers 200 while the process is alive, with the server's
// version: {"status":"ok","version":"..."}.
func (a *API) healthz(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	dst = append(dst, `{"status":"ok","version":`...)
	dst = appendString(dst, a.cfg.Version)
	return append(dst, '}'), nil
}

// readyz answers 200 once a verified snapshot is published (and, with a
// live session, once it is restored from its log; with a live stream,
// once the replica has caught it up), 503 before and once the server is
// draining (SetDraining).
func (a *API) readyz(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	if a.draining.Load() {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: shutting down")
	}
	ds := a.store.Current()
	if ds == nil {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: %s", a.notLoaded())
	}
	if why := a.liveNotReady(); why != "" {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: %s", why)
	}
	if err := ds.BlockErr(); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: the snapshot is damaged: %v", err)
	}
	bl := ds.Blocks()
	var bs engine.BlockStatus
	if bl != nil {
		if bs = bl.Status(); bs.Err != nil {
			return nil, errorf(http.StatusServiceUnavailable, "not ready: the snapshot is damaged: %v", bs.Err)
		}
	}
	if err := ds.DeferredErr(); err != nil {
		return nil, errorf(http.StatusServiceUnavailable, "not ready: the snapshot could not be loaded whole: %v", err)
	}
	dst = append(dst, `{"status":"ready","as_of":`...)
	dst = appendTime(dst, ds.AsOf())
	if ds.Deferred() {
		// Served: requests that read what is still loading wait for it.
		dst = append(dst, `,"deferred":"loading"`...)
	}
	if bl != nil {
		dst = append(dst, `,"blocks":{"total":`...)
		dst = strconv.AppendInt(dst, bs.Blocks, 10)
		dst = append(dst, `,"verified":`...)
		dst = strconv.AppendInt(dst, bs.Verified, 10)
		dst = append(dst, `,"bad":0,"complete":`...)
		dst = strconv.AppendBool(dst, bs.Complete())
		dst = append(dst, '}')
	}
	dst = a.appendLiveStatus(dst)
	return append(dst, '}'), nil
}
