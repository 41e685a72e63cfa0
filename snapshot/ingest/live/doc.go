// Package live is the feed side of the live session (issue 24): the
// feeds that turn B3's trades into engine.LiveBatch values, and the
// session log that makes every applied batch durable. The server
// (cmd/pregao) applies the batches to the engine.Store, appends them to
// the log and serves the API from the result; this package does no HTTP
// serving and holds no engine.Store.
//
// # Feeds
//
// A Feed yields Steps: how far its clock has reached (Step.At) and,
// when something changed, a batch of whole 1-minute bars numbered by a
// strictly increasing Seq. Three feeds share the interface:
//
//   - Replay plays a recorded session (B3 trade files in a folder, as
//     pregao generate --hold-back-session writes the demo's) on a
//     virtual clock, K times real time or as fast as it can. Its trades
//     go through a negocios.Aggregator in time order; every Step (5
//     virtual seconds by default) releases the bars of the minutes that
//     ended by then and the corrections of earlier minutes. Its batches
//     depend only on the recording: the same folder gives the same
//     batches with the same Seq, which is how a restarted replay skips
//     what the session log already holds. When the recording ends its
//     clock moves on to the end of the day (SessionEnd) and the last
//     batch is Complete.
//   - B3 polls B3's public trade files with a negocios.Poller (per
//     ticker during the session, or the whole day's file the next
//     morning), at a polite pace, its watermarks saved in a state folder
//     so that a restart resumes. Its clock is the wall clock.
//   - The push endpoints have no Feed: the server applies what clients
//     send (Trades aggregates pushed trades as the other feeds do).
//
// Bad input is counted by reason, never fatal: malformed rows, trades
// of another day, prices or quantities that are not positive, repeated
// trades, cancellations of unknown trades, out-of-order trades,
// instrument codes that are not tickers (Feed.Errors, Reason*).
//
// # The session log
//
// Log appends each applied batch to a file per session, with a checksum
// per record, made durable (fsync) before the batch is acknowledged;
// ReadLog and OpenLog read it back, cutting a torn or corrupt tail. Its
// format is documented in log.go. pregao import and update read session
// logs as 1-minute history (AddIntraday).
//
// It imports engine, internal/atomicfile, snapshot/ingest/negocios and
// the standard library.
package live
