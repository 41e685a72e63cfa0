// Package session keeps the live session: the 1-minute bars of the
// trading session under way, applied to an engine.Store beside its
// snapshot, from a feed of this process or from the live stream that
// replicas share. It owns the session's lifecycle: numbering, the
// durable log before acknowledgement, applying to the Store, the
// handover to the next snapshot, gaps, status and metrics. The commands
// only wire it: they build a Config from the flags it declares
// (Config.AddFlags: serve and pregao feed declare each flag once, with
// one default), call New, then Run, and tell it of each snapshot they
// publish (Published).
//
// # Parts
//
//   - The head (head.go) is the core: the session as applied to the
//     Store, its handover to the snapshot of its day, its gaps, the
//     State it publishes for /readyz and the gauges. Both drivers feed
//     it; no rule is written twice.
//   - The local driver (local.go, push.go, restore.go) runs a feed (a
//     replay, B3's trade files polled) or takes pushes (it is the push
//     endpoints' engine.LiveSink, and a calendar ends and starts the
//     push sessions). A batch is durable before it is acknowledged:
//     appended to the session log file in Config.Dir (package
//     snapshot/ingest/live's format, which pregao update reads) and
//     applied to the head; or, with a stream, published to it and
//     acknowledged by it, a copy of the log kept in Config.Dir.
//   - The stream driver (stream.go) applies the live stream (NATS
//     JetStream, transport in package bus) to the head in order, so that
//     replicas at one stream sequence answer identically; it starts at
//     the position its snapshot records, checked against the stream.
//
// # Concurrency
//
// The local driver's lock serializes the feed's steps, the pushes and
// the session's start and end; the head's lock serializes its writers
// (the local driver in a process without a stream, the stream driver
// otherwise, the handover loop). A driver takes its own lock before the
// head's, never after. Neither is held while a feed waits or fetches,
// and a snapshot reload takes neither: Published only signals the
// handover loop. Readers (/readyz, the gauges, requests through the
// Store's View) load published values and never block.
//
// # Imports
//
// It imports engine, engine/session/bus, snapshot/ingest/live (the
// feeds and the session-log format) and snapshot/ingest/negocios (B3's
// addresses); nothing of the HTTP layer, the snapshot format or cmd.
package session
