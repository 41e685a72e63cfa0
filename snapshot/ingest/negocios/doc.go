// Package negocios reads B3's trade-by-trade files ("Negócio a negócio –
// Listados", NEGOCIOSAVISTA) and aggregates their trades into 1-minute
// bars and a provisional daily bar per ticker: the trade-file side of the
// live session (issue 24), shared by the b3 feed (which downloads the
// files) and the replay feed (which plays a recorded day), and the writer
// of the demo's held-back session.
//
// # The files
//
// Three generations of the layout, all read by Scanner, which maps the
// columns by their header names (case-insensitive), not by position:
//
//   - 2020-2021, TradeIntraday_YYYYMMDD_1.txt: RptDt;TckrSymb;UpdActn;
//     GrssTradAmt;TradQty;NtryTm;TradId;TradgSsnId;TradDt.
//   - about 2022-2025, DD-MM-YYYY_NEGOCIOSAVISTA.txt in a zip, the whole
//     listed segment: DataReferencia;CodigoInstrumento;AcaoAtualizacao;
//     PrecoNegocio;QuantidadeNegociada;HoraFechamento;
//     CodigoIdentificadorNegocio;TipoSessaoPregao;DataNegocio;
//     CodigoParticipanteComprador;CodigoParticipanteVendedor.
//   - 2026, split: equities DD-MM-YYYY_NEGOCIOSAVISTA_RV.txt in
//     YYYYMMDD_NEGOCIOSAVISTA.zip (the same 11 columns), derivatives
//     ..._DRV.txt (a 12th column, TipoDoCanal, ignored here).
//
// Fields are ';'-separated; a metadata line (a row count) may come before
// the header (up to 5 such lines are skipped); text is ISO-8859-1 or
// UTF-8 with an optional byte order mark; lines end in CRLF or LF; blank
// lines are skipped. Prices have a decimal comma and three decimals
// (Price is in thousandths of BRL, so sums are exact integers); times are
// HHMMSSfff at a fixed UTC−03:00; a trade's timestamp is its time on
// DataNegocio (TradDt), which can differ from DataReferencia. The update
// action is 0 (a new trade) or 2 (the cancellation of the trade of the
// same id, which repeats the trade's price and comes later); the session
// is 1 (regular) or 6 (after-market). Trade ids are unique per instrument
// and trade date only. Open reads a plain, .zst or .gz text file or a zip
// holding one .txt; OpenBytes the same from memory; NewScanner any text
// stream. Memory does not grow with the file: a whole-market day (529 MB
// of text, 7 M rows) is streamed row by row.
//
// Bad rows: in strict mode (the default) the Scanner stops at the first
// malformed row with a *LineError naming the file, the line, the field (as
// the header spells it) and the text. Options.Lenient skips and counts
// malformed rows instead (Stats.Skipped, the first MaxErrors kept): the
// feeds read lenient, because one bad row of a day's file must not stop
// a live session, and report the counts; tests and one-off imports read
// strict. A missing header or required column is fatal in both modes.
// The Scanner checks syntax only (a negative price, an unknown session
// or action code are read as they are: derivatives have them); what
// makes sense for a bar is the Aggregator's business.
//
// # The aggregation
//
// Aggregator takes rows in batches (Apply) and returns, per batch, every
// (ticker, minute) bar whose value changed, with its full new value, and
// the provisional daily bar of every ticker that changed, so that a
// consumer can apply them "last writer wins per ticker and minute". A
// bar is its trades' open (earliest time, then lowest id), high, low,
// close (latest time, then highest id), volume (the exact sum of price x
// quantity, in thousandths of BRL), quantity and trade count; the daily
// bar is the fold of the minute bars. The result depends only on the set
// of rows applied, whatever their order and batching:
//
//   - A cancellation (action 2) is matched on (trade date, instrument,
//     trade id); the trade leaves its minute, which is reported again
//     (as Removed when no trade is left in it). A cancellation of a trade
//     not seen yet is counted (Stats.UnknownCancels), not fatal, and
//     remembered: the trade, if it comes later, is recorded as cancelled.
//   - Out-of-order trades are put in their place and counted; a repeated
//     trade id or cancellation is counted and ignored.
//   - Refused and counted: trades dated (DataNegocio) another day than
//     the Aggregator's, prices <= 0 (every instrument aggregated is a
//     cash-market one: the derivatives' negative prices are not),
//     quantities <= 0, unknown action or session codes, and the
//     instruments Config.Accept refuses.
//
// Which sessions the bars hold. COTAHIST's daily bar (PREABE, PREMAX,
// PREMIN, PREULT, TOTNEG, QUATOT, VOLTOT) is the one a snapshot built the
// next day shows, so the provisional bar must be made the same way. The
// official layout describes those fields as the session's ("no pregão")
// without saying whether the after-market counts, and no public source
// we could find settles it. We take the regular session only, opening
// and closing calls included: B3's closing price is set by the regular
// session's closing call, the after-market (17:30-18:00) trades only
// within a band of 2 % around that close and is not a price-forming
// session, and a bar whose close could come from the after-market would
// differ from the close every B3 publication shows. The 1-minute bars
// follow the same rule, so that the daily bar is their fold and the last
// 1-minute bar of a session ends at 17:00, when engine.SessionCloseUTC
// makes the daily bar visible. Config.AfterMarket switches both to all
// sessions; after-market rows are recorded either way (their
// cancellations match) and counted.
//
// # Polling
//
// Poller fetches a session's files from B3 (URLs holds the address
// scheme: per ticker during the session, or the whole day's file), at a
// polite pace, with conditional requests, and applies what each poll
// brings: trades above their ticker's watermark (the highest trade id
// applied) and cancellations not applied before, returning the bars that
// changed. Its state (the watermarks) survives a restart; a restarted
// Poller rebuilds its bars from the files without reporting them again.
// It does not touch the engine or the server: the live layer consumes
// its batches. docs/operations.md says what an operator must check
// before relying on B3's endpoint.
//
// The demo generator (package demo) writes its last session with Writer
// and WriteDay as the 2026 equities file carries it; aggregating that
// file gives back the demo's last session bar for bar, which is how the
// replay feed is tested against a full snapshot.
//
// It imports engine, snapshot/ingest/datafile (Latin-1, compressed files)
// and the standard library; it must not import the snapshot format, the
// bundle package, httpapi, cmd or the demo generator.
package negocios
