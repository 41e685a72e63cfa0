// Package demo generates the deterministic, clearly fictional demo universe:
// a B3-like market of invented companies, real-estate funds, ETFs and BDRs
// with daily and intraday bars, CVM-shaped reports, corporate actions,
// indexes, fund monthly reports, insider reports and documents.
//
// Every name, CNPJ, CVM code, ticker, ISIN, address and figure is invented
// (CNPJs and ISINs carry valid check digits; URLs point at the reserved
// ".invalid" and ".example" domains). The Universe's Meta says so.
//
// Determinism: Generate(seed, scale) returns the same Universe for the same
// arguments on every run and machine. All randomness comes from
// math/rand/v2 PCG generators seeded from the seed and an entity index;
// nothing depends on map iteration order, the clock or scheduling (work
// runs in parallel but every worker writes only its own slot).
//
// Conventions of the generated data:
//   - Sectors are the shared taxonomy of package sectors (FINANCIALS >
//     FINANCIAL_INTERMEDIARIES > BANKS > TRADITIONAL_BANKS...), the same
//     ids as imports of official files; every company is on a
//     sub-industry B3's classification can carry.
//   - Tickers: ON ends in 3, PN in 4, PNA in 5, PNB in 6, units in 11;
//     sponsored BDRs end in 32 (Level II) or 33 (Level III),
//     unsponsored BDRs in 34 or 35; FIIs and ETFs end in 11.
//   - Company ids are 14-digit CNPJs; BDR issuers, which have none, use
//     their CVM-style code.
//   - Macro series are securities of stock_type MACRO with no company:
//     SELIC is the Copom's target rate in percent per year, one point per
//     session; IPCA is the index's change in its month in percent
//     (fictional values, two decimals, negative in some months) dated on
//     the first day of its reference month, up to the last month
//     published; USD is BRL per US dollar, one point per session. Their
//     volume is null. They mean what the Banco Central's series that
//     pregao import --bcb reads mean (package bcb: SGS 432, SGS 433, the
//     PTAX sell rate).
//   - The market calendar is B3's: weekdays minus Brazilian national
//     holidays (Carnival Monday and Tuesday, Good Friday and Corpus Christi
//     from Easter), December 24 and December 31.
//   - The last session is the last business day on or before 2026-11-20
//     (2026-11-19: November 20 is a national holiday since 2024); as_of is
//     its 18:30 (UTC-3) close expressed in UTC.
//   - Daily bars start on 2000-01-03 or the listing day. Prices are
//     unadjusted BRL: on an ex-date the price opens near the previous close
//     minus the cash amount, divided by the split/bonus factor, or reduced
//     by the value of shares handed over (spin-offs and capital restitutions
//     in shares, as the engine adjusts them: see package engine,
//     "Adjustment factors"), so adjusted series are continuous. Share
//     counts change by the same factors.
//   - CVM reports run from Size.ReportsFrom (2016): DFP yearly and ITR for
//     Q1-Q3, statements BPA, BPP, DRE, DRA, DVA and one of DFC_MI/DFC_MD,
//     each CONSOLIDATED and INDIVIDUAL, with real CVM account codes and
//     names. Banks file their DRE in CVM's model of financial institutions
//     (3.01 "Receitas da Intermediação Financeira", pre-tax income 3.05,
//     taxes 3.06, continuing result 3.07, the period's result 3.09). ITR DRE and DRA cover the quarter; ITR DVA and DFC are
//     year-to-date, as filed. About 5% of filings have a version 2.
//   - Cash actions: about 3% of events have a version 2 (a
//     "retificação"), published three days after the approval, except
//     that 40% are published late, 10 to 90 days after the
//     prior_ex_date (and before as_of): a quarter of those change the
//     declared value, the others the payment date or, for a company, add
//     a monetary correction. So an as_of between an ex date and its
//     correction sees the first version in the cash routes and in
//     DIVIDEND_YIELD.
//   - The last session is made of trades (GenerateSession returns them
//     as B3's trade file carries them; package negocios reads, writes and
//     aggregates that file): every listed ticker trades, with an opening
//     call at 10:00:00, continuous trading, a closing call uncrossed in
//     the session's last second (16:59:59), a few trades cancelled later
//     (about one ticker in twenty) and, on the liquid tickers,
//     after-market trades (17:30-18:00, within 2 % of the close). Its
//     daily bar and 1-minute bars are the aggregation of the regular
//     session's trades that are not cancelled, exactly: open, high, low,
//     close and quantity as simulated, volume the sum of price x quantity
//     in cents, trades the number drawn (the simulated count up to 50,
//     its square root above, at most 2,000 a ticker, so that the day
//     stays small: about 340,000 rows at scale 1). HoldBack removes that
//     session from a universe (the replay feed's base).
//   - Intraday bars: the last session's of every listed ticker (the
//     minutes with trades, 10:00-16:59 local time), and every minute of
//     10:00-17:00 local time (13:00-20:00 UTC) of the
//     Size.IntradaySessions-1 sessions before it for the
//     Size.IntradayTickers most liquid tickers, drawn to add up to the
//     daily bar (open, close, high, low, quantity; volume to the cent).
//
// It imports engine, package negocios (the trade rows it hands out) and
// the standard library only; it must not import any other snapshot
// package, httpapi or cmd.
package demo
