// Package bus carries the live session's batches through NATS JetStream
// (issue 28): one ordered, replicated log that a feed publishes to and
// every replica applies from, so that replicas at the same stream
// sequence hold the same session.
//
// # The stream
//
// One stream, PREGAO_LIVE, holds every session: the subject of a batch
// is pregao.live.YYYY-MM-DD (its session). A message is one batch:
//
//   - its body is the batch's record line of the session log (package
//     live, log.go: a CRC-32C, the JSON object, a line feed), so that a
//     message is checked as a log record is;
//   - header Pregao-Session is the session (YYYY-MM-DD), Pregao-Seq the
//     batch's sequence number in its session (the feed's Seq);
//   - header Nats-Msg-Id, the deduplication id, is
//     SESSION/SEQ/CRC: the same batch published again (a retried
//     publish, a feed restarted before it saw its ack) is dropped by the
//     stream within its duplicate window (Config.Duplicates), and a
//     different batch under a sequence number a replica refused is not.
//
// Decode refuses a message whose headers, subject and record do not
// agree, whatever it holds: a replica counts it and never applies part
// of it.
//
// The record in a message never carries its stream sequence (the
// "stream" field of the session log copy a feed keeps): Encode leaves it
// out, and the read paths (ReadSession, LastOfSession, Message, Consume)
// set Record.Stream from the message's metadata. Message gets one
// message by stream sequence and Bounds the stream's first and last: a
// replica checks with them the position in the stream its snapshot
// records.
//
// # Servers
//
// Open with URL "embedded" starts a JetStream server in the process
// (nats-server, its store in Config.Dir), without a listener unless
// Config.Listen asks for one; with a nats:// URL it connects to an
// external cluster (the stream is created with Config.Replicas
// replicas: 3 on a 3-node cluster), with a user's credentials file
// (Config.Creds) and TLS (Config.TLSCA, TLSCert, TLSKey) when the
// cluster asks for them; credentials or TLS the servers refuse fail
// Open at once, and Redact is what may be logged of a URL. The stream
// keeps batches for Config.MaxAge and at most Config.MaxBytes; an
// existing stream's limits are updated only on the embedded server
// (EnsureStream). The connection reconnects forever;
// an ordered consumer (Consume) resumes after the last message it
// delivered, so a replica that loses the bus goes on without a gap when
// it returns.
//
// It imports engine, snapshot/ingest/live, the NATS client and server,
// and the standard library.
package bus
