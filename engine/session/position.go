package session

import (
	"context"
	"fmt"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// A snapshot's position in the live stream (engine.Meta.Stream) is the
// first stream sequence it does not cover: a replica that starts with
// it consumes from there (stream.start). pregao import and update take
// it from the session logs they read, or from the stream itself.

// PositionFromLogs returns the position in the live stream of u, whose
// intraday history took the session logs rep describes: the stream
// sequence after the last batch of the last session u covers, when that
// session's log is a stream feed's copy (its records carry stream
// sequences) and complete (its last record says so). Otherwise it
// returns the zero position and why: a replica that consumed from a
// position in the middle of a session, or after a session the snapshot
// has no data of, would serve it incomplete.
func PositionFromLogs(u *engine.Universe, rep *live.IntradayReport) (engine.StreamPosition, string) {
	if len(rep.Sessions) == 0 {
		return engine.StreamPosition{}, "no session log up to the as-of day"
	}
	last := rep.Sessions[len(rep.Sessions)-1]
	daily := lastSessionOf(u)
	info := rep.Logs[last]
	switch {
	case daily.Valid() && daily > last:
		return engine.StreamPosition{}, fmt.Sprintf("no session log of the last session %s, the last log is of %s", daily, last)
	case info.Records == 0:
		return engine.StreamPosition{}, fmt.Sprintf("the session log of %s holds no batch", last)
	case info.LastStream == 0:
		return engine.StreamPosition{}, fmt.Sprintf("the session log of %s carries no stream sequences (not the copy of a --live feed)", last)
	case !info.LastComplete:
		return engine.StreamPosition{}, fmt.Sprintf("the session log of %s is not complete (batch %d is its last)", last, info.Last)
	case len(info.Missing) > 0:
		m := info.Missing[0]
		return engine.StreamPosition{}, fmt.Sprintf("the session log of %s lacks damaged batches (%d to %d): ask the stream (--live)", last, m.First, m.Last)
	}
	return engine.StreamPosition{Next: info.LastStream + 1, Name: bus.StreamName, Session: last, Batch: info.Last}, ""
}

// PositionInStream asks the live stream cfg names (cfg.Stream, a
// cluster's nats:// URLs, with its credentials and TLS files; version
// names the connection) where u stands in it: after the last batch of
// u's last session, when that batch is the session's complete one.
// Otherwise, or when the stream cannot be reached before ctx ends, it
// returns the zero position and why (the URL's password redacted).
func PositionInStream(ctx context.Context, cfg Config, version string, u *engine.Universe) (engine.StreamPosition, string) {
	last := lastSessionOf(u)
	if !last.Valid() {
		return engine.StreamPosition{}, "no session in the data"
	}
	bc, err := cfg.importStream(version)
	if err != nil {
		return engine.StreamPosition{}, err.Error()
	}
	b, err := bus.Open(bc)
	if err != nil {
		return engine.StreamPosition{}, fmt.Sprintf("the live stream: %v", err)
	}
	defer b.Close()
	seq, bt, err := b.LastOfSession(ctx, last)
	switch {
	case err != nil:
		return engine.StreamPosition{}, fmt.Sprintf("the live stream at %s did not answer: %v", bus.Redact(cfg.Stream), err)
	case seq == 0:
		return engine.StreamPosition{}, fmt.Sprintf("the live stream holds no batch of the last session %s", last)
	case bt == nil:
		return engine.StreamPosition{}, fmt.Sprintf("the last message of session %s in the live stream (%d) is not a batch", last, seq)
	case !bt.Record.Complete:
		return engine.StreamPosition{}, fmt.Sprintf("the live stream's session %s is not complete (batch %d is its last)", last, bt.Record.Seq)
	}
	return engine.StreamPosition{Next: seq + 1, Name: bus.StreamName, Session: last, Batch: bt.Record.Seq}, ""
}

// lastSessionOf returns the last session of u's quotes (daily rows and
// intraday bars of securities that are not macro series), as the
// engine's Dataset.LastSession, NoDate when there is none.
func lastSessionOf(u *engine.Universe) engine.Date {
	macro := make(map[string]bool)
	for i := range u.Securities {
		if u.Securities[i].StockType == engine.ClassMacro {
			macro[u.Securities[i].Ticker] = true
		}
	}
	last := engine.NoDate
	note := func(d engine.Date) {
		if !last.Valid() || d > last {
			last = d
		}
	}
	for i := range u.Daily {
		if s := &u.Daily[i]; len(s.Dates) > 0 && !macro[s.Ticker] {
			note(s.Dates[len(s.Dates)-1])
		}
	}
	for i := range u.Intraday {
		if s := &u.Intraday[i]; len(s.Times) > 0 && !macro[s.Ticker] {
			note(engine.Date(s.Times[len(s.Times)-1] / 86400))
		}
	}
	return last
}
