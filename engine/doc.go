// Package engine holds Pregão's domain model and its read-optimized,
// immutable in-memory Dataset.
//
// The source model (model.go, num.go) is a Universe: every entity a bundle
// carries plus the Derived ratio data. Build turns a Universe into a
// Dataset once per snapshot: B-tree indexes (package index) by ticker,
// symbol, company_id, CVM code and dates; former tickers joined into one
// continuous history; adjustment factors; latest quotes, variations and
// per-minute running session aggregates; index rankings;
// the screener's column-wise table. Nothing of that is recomputed per
// request: queries are lookups, binary searches and scans of precomputed
// columns. A Store publishes Datasets through an atomic.Pointer: readers
// never lock, and a request keeps one Dataset for its whole life.
//
// # Compact layout
//
// The bulkiest entities hold no pointer, so that tens of millions of them
// cost their bytes and nothing at each collection: an Account is an
// interned Line (code, name, fixed flag) and a value (16 bytes); a
// RatioPoint (48 bytes) names its company and ticker by interned Syms
// (or, for points used where a snapshot file lies, by indexes into
// Derived.RatioSyms: read them with Dataset.RatioCompany and
// RatioTicker) and its variables by an offset into Derived.RatioVars. Lines and Syms
// are interned process-wide (InternLine, Intern) and never freed: their
// tables grow with the distinct values ever seen, not with snapshots.
// Ratio points are kept in CompareRatioPoints order, so each company's
// series are sub-slices of the Universe's own array.
//
// engine does no I/O and no HTTP. It imports only the standard library,
// index and internal/yieldpoint (its long loops give way to requests);
// it must never import snapshot, httpapi, cmd or any importer.
//
// # Units and missing data
//
// Prices are BRL per share, volumes BRL, quantities shares, variations
// decimal fractions (0.0621 = +6.21%). Num NaN (Null) is missing data and
// answers null, never 0; Date NoDate is an absent date. Times are UTC.
// Sums of BRL amounts (aggregated and running volumes) are kept in whole
// cents and differences of prices (variation values) go through Diff, so
// both are exact to the cent whenever their inputs are (see Cents).
// CivilDate and DaysIn are the allocation-free calendar arithmetic shared
// by the importers' and the bundle reader's date parsers.
//
// # Accessors
//
// Identification:
//   - Dataset.Resolve(id) (Resolved, error): ticker (current or former),
//     symbol, company_id (punctuation allowed) or CVM code in one call;
//     allocation-free for upper-case input.
//   - Dataset.ResolveFund(id): Resolve restricted to FII/ETF issuers.
//   - Dataset.Issuer(companyID), Dataset.Issuers(): companies and funds.
//   - Dataset.Asset(ticker), Dataset.AssetByISIN(isin), Dataset.Assets():
//     current tickers (former tickers resolve to current ones).
//
// Per company (Issuer fields and methods): Assets (most liquid first),
// Sector (4 levels), Reports(), Shares (newest first; LatestShares,
// SharesPoint.Total), CashActions,
// ShareActions (prior_ex_date descending), Insider, Documents, Ratios()
// (RatioGroup(indicator, class, frequency)), FundReports, FundRatios();
// IsFund.
//
// Per ticker (Asset fields and methods): Daily and Intraday (joined
// histories, DailyBars and IntradayBars: whole-cent columns with
// accessors, or the given columns when a series does not fit), Former, Latest (Quote of the last session); DayIndex(d),
// DayRange(from, to), MinuteRange(from, to) (allocation-free searches);
// DailyBar(i, adjusted), AppendDaily(dst, lo, hi, adjusted),
// AppendIntraday(dst, lo, hi, adjusted), AppendDailyBuckets and
// AppendIntradayBuckets(dst, lo, hi, seconds, adjusted) and
// Aggregate(bars, seconds) (caller-owned buffers, no per-row allocation); AdjustmentFactor(d), AdjustmentSteps(),
// AdjustmentEvents(); QuoteAt(t) (the delayed quote: one binary search
// per series), DailyQuote(i), QuoteBefore(d) (previous-day view); Pos()
// (the position in Dataset.Assets, for the caller's parallel slices).
//
// Market-wide:
//   - Dataset.QuoteAt(ticker, t), Dataset.AdjustmentFactor(ticker, d).
//   - Dataset.CashActions(): every cash action version (CashEvent: Factor,
//     Current, Value(), Adjust(v)), prior_ex_date descending;
//     Dataset.CashPaidBetween(dst, from, to): the rows paid within a
//     date range, from an index by payment date.
//   - Dataset.Index(symbol), Dataset.Indexes(): IndexData with Members,
//     precomputed Highs/Lows and UpdatedAt; IndexData.RankAt(t, lows, dst)
//     ranks as of another time; both leave out stale members (a quote
//     older than the market session before the newest among the members),
//     and IndexData.KeepCurrent(entries) applies that rule to a caller's
//     own ranking; IndexData.Pos() is the position in Dataset.Indexes.
//   - Dataset.Screener(): column-wise screener table (Close, Volume,
//     Employees, LiquidityRank, Primary, SectorID per level, Ratios per
//     catalog indicator, ByVolume order), built at the last session's
//     closes; Screener.Priced(quote): its price-dependent columns at other
//     quotes (see "Screener repricing"), Screener.Prices() the build's.
//   - Dataset.Sectors(), Sector(id), SectorDescendants(id), SectorPath(id).
//   - Dataset.Catalog(), Dataset.IndicatorIndex(kind, id) (ids are unique
//     per kind only; the snapshot's own catalog), ScreenerClass(class),
//     Dataset.RatioVars(point) (a ratio point's variables); ClassSuffix and
//     SplitClassSuffix (by-class ids: PRICE_TO_EARNINGS_PS);
//     SelectRatioPoints(points, filter): an iterator over the points of
//     one company or fund series that a RatioFilter keeps (reference date,
//     published or retrieved after, latest by reference date).
//   - Standardized reports: LinesFor(statement), Standardize(report),
//     AppendStandardized(dst, report), StandardLines(); the Section*
//     names.
//   - Dataset.Meta(), AsOf(), LastSession(), Universe().
//
// # Screener repricing
//
// The screener's Close and Volume are each row's last session, and its
// valuation columns are the ratio points the derivation priced at that
// session's closes. Screener.Priced(quote) returns the columns that
// depend on the price at any quote vector (a live session's cut-off:
// quote is View.QuoteAt at that minute): Close and Volume from each
// row's quote, ByVolume sorted again, Primary with the quotes' volumes
// breaking ties of LiquidityRank, and the price-derived indicators
// recomputed from the point each row shows, with the price rule the
// derivation itself computes with (PriceRule.Value over the formulas of
// valuation.go), so that a quote at the close the point used gives the
// stored value bit for bit. The price-derived indicators are the
// catalog's VALUATION ones: each catalog entry of engine/ratios declares
// its PriceRule, which writes the entry's variables, and the Dataset
// reads it back from them (Dataset.PriceRule, ParsePriceRule); a
// VALUATION entry that reads as no rule keeps its values. Everything
// else (fundamental and listed-fund indicators, Employees, sectors) is
// the Screener's own slice, shared. For the point a row shows (its
// reference date, TTM figures, share counts, cash per share and unit
// factor kept as its variables hold them) and a price P, the close of
// the ticker the point was priced with (its class's most liquid ticker,
// RatioPoint.Ticker), by the form of its rule:
//
//   - PriceToItem (by class: PRICE_TO_EARNINGS, PRICE_TO_BOOK,
//     PRICE_TO_SALES, PRICE_TO_EBITDA, PRICE_TO_EBIT): PriceMultiple(P, X,
//     SHARES_OUTSTANDING, SHARE_FACTOR) = P / (X / SHARES_OUTSTANDING x
//     SHARE_FACTOR), X the rule's Item.
//   - ItemToPrice (by class: EARNINGS_YIELD): EarningsYield = (X /
//     SHARES_OUTSTANDING x SHARE_FACTOR) / P.
//   - CashToPrice (by class: DIVIDEND_YIELD): DividendYield =
//     CASH_PER_SHARE_12M / P.
//   - MarketCapSum (company: MARKET_CAP): MarketCap with the point's net
//     COMMON_SHARES, PREFERRED_SHARES and UNIT_FACTOR and the closes of
//     the company's CS ticker, its most liquid preferred class's ticker
//     and its UNIT ticker (the unit case takes the total outstanding from
//     the company's by-class points of the same date).
//   - EVSum (company: ENTERPRISE_VALUE): that market cap + the point's
//     NET_DEBT.
//   - EVToItem (company: EV_TO_EBITDA, EV_TO_EBIT, EV_TO_SALES): (that
//     market cap + the NET_DEBT of the EVSum point of the same date) / X.
//
// A close prices a valuation dated D (the newest quote's session, or the
// point's reference date when later) when it is of a session on or
// before D and at most MaxPriceAge days earlier, else it is null, as in
// the derivation. A TTM point dated before the session stands for the
// valuation the derivation would make at the session with the same
// figures; it is repriced when one of the company's classes has a close
// within MaxPriceAge days of the session (the derivation makes that
// point then), and keeps its value otherwise, as does an ANNUAL point.
// A repriced by-class point dated before the session counts, as that
// valuation does, the declared cash of the twelve months before the
// session, not before the point (a distribution whose last day with is
// the session itself counts, one a year old that day no longer does),
// computed once per session. Not recomputed: the share count is the one
// in effect on the point's date; RatioPublished stays the point's
// publish date.
//
// # Adjustment factors
//
// Every share action of an asset (matched by its ticker, renames resolved,
// else by its ISIN; the ORIGINAL_ASSET leg's ticker/ISIN when the action
// names neither) is one event on its prior_ex_date p (the last session
// "with") with a factor f:
//
//   - STOCK_SPLIT, REVERSE_STOCK_SPLIT, STOCK_BONUS: f is the root factor
//     (split 1:10 = 10, reverse 10:1 = 0.1, 5% bonus = 1.05). A missing or
//     non-positive factor is an error at Build.
//   - leg-bearing events (SPIN_OFF_CAPITAL_REDUCTION[_QUANTITY],
//     MERGER_INCORPORATION, CAPITAL_RESTITUTION_*): f = the ORIGINAL_ASSET
//     leg's factor (the leg naming the asset, else the first one; 1 when
//     absent or not positive). Events where holders receive another asset
//     and keep the original (both SPIN_OFF types and
//     CAPITAL_RESTITUTION_IN_SHARES, as B3 adjusts them) also remove the
//     value of the RECEIVED_ASSET legs: f is multiplied by
//     P / (P - sum(r_i * P_i)), where P is the original's close on the last
//     session on or before p, r_i a received leg's factor and P_i the
//     received asset's first close after p. When a price or leg factor is
//     missing, or the denominator is not positive, the value part is 1.
//     A leg-bearing type given without legs uses its root factor when
//     positive, else 1.
//   - SUBSCRIPTION and TOTAL_EQUITY_REDEMPTION do not adjust (f = 1).
//
// The cumulative factor of a session d is F(d) = product of f over the
// asset's events with p >= d (1 after the last event). Adjusted price =
// price / F(d); adjusted quantity = quantity * F(d); volumes in BRL are
// never adjusted. A cash action's adjustment factor is F(prior_ex_date) of
// its ticker, and its adjusted values are value / factor.
//
// F is stored per asset as a step function: the distinct event dates
// ascending and, for each, the product of the factors of that date and
// all later ones. F(d) is the value at the first event date >= d.
//
// # Total return
//
// Dataset.ExCash(asset) is, per asset, the cash per share going ex after
// each prior_ex_date (gross and net sums of the current versions of the
// ticker's cash events), built once per Dataset with the cash lists.
// Dataset.AppendTotalReturn(dst, asset, bars, net) chains B3's index
// convention over a window of unadjusted daily bars: on an ex-date t,
// index_t = index_{t-1} × close_t × F_{t-1} / ((close_{t-1} − D_t) × F_t),
// the cash reinvested at the theoretical ex price and the share events
// applied through F as the adjusted series applies them; without cash
// events and share events it is close_t / close_0 exactly. The index is
// also kept with the Dataset, built once at load: per asset, the daily
// rows where cash goes ex and where the base steps (gross and net).
// Dataset.AppendTotalReturnRows(dst, asset, lo, hi, live, net) answers a
// window of rows from it, bit for bit what AppendTotalReturn gives for
// the same bars, without making them.
//
// # Index levels
//
// An index with a reductor and a theoretical quantity for each member
// (IndexData.HasLevel) has a level in index points: Σ quantity (shares) ×
// adjusted price (BRL per share) ÷ reductor (BRL per point), from its one
// portfolio (indexlevel.go). IndexData.LevelOn(d) is the closing level of
// a session; AppendLevels computes the points of given member bars (daily
// or 1-minute), AppendDailyLevels those of the snapshot's daily bars.
package engine
