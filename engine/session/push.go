package session

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// The push feed: the local driver is the push endpoints' sink
// (engine.LiveSink), and a calendar completes each session at its end and
// starts the next weekday's at its start.

var _ engine.LiveSink = (*local)(nil)

// runPushCalendar completes the push session at its end (a batch without
// bars, which takes a sequence number) and, unless Config.Day fixes it,
// starts the next weekday's at its start.
func (l *local) runPushCalendar(ctx context.Context) {
	for {
		l.mu.Lock()
		l.rollPush()
		until := live.SessionEnd(l.session)
		switch {
		case l.complete && l.cfg.session.Valid():
			until = time.Time{}
		case l.complete:
			until = live.SessionStart(live.NextWeekday(l.session))
		}
		l.mu.Unlock()
		if until.IsZero() {
			<-ctx.Done()
			return
		}
		if live.Sleep(ctx, max(until.Sub(l.now()), 0)+time.Second) != nil {
			return
		}
	}
}

// rollPush completes the push session once its end has passed, and
// starts the session of the calendar when it is a later one. The caller
// holds l.mu.
func (l *local) rollPush() {
	if l.stopped {
		return
	}
	now := l.now()
	if l.slog != nil && !l.complete && !now.Before(live.SessionEnd(l.session)) {
		b := &engine.LiveBatch{Seq: l.seq + 1, Session: l.session, Bars: []engine.LiveBar{}, Complete: true}
		if err := l.commit(b, nil, now); err == nil {
			l.log.Info("push session complete", "session", l.session.String(), "seq", b.Seq)
		}
	}
	if l.cfg.session.Valid() {
		return
	}
	if sd := live.CurrentSession(now); sd > l.session {
		if err := l.openSession(sd); err != nil {
			l.log.Error("live session not started: pushes are refused (503) until its log opens; trying again", "session", sd.String(), "err", err.Error())
			if l.unopened && l.ctx != nil {
				go l.recoverLog(l.ctx, sd)
			}
		}
	}
}

// NextSeq is the sequence number the next push must carry.
func (l *local) NextSeq() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rollPush()
	return l.seq + 1
}

// Applied returns the digest of the batch numbered seq of the push
// session under way (false: none).
func (l *local) Applied(seq uint64) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.digests[seq]
	return d, ok
}

// PushBars applies a pushed batch of whole 1-minute bars.
func (l *local) PushBars(seq uint64, bars []engine.LiveBar) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkPush(seq); err != nil {
		return err
	}
	now := l.now()
	for i := range bars {
		if err := l.checkTime(int64(bars[i].Time)*1000, now); err != nil {
			l.met.batches.WithLabelValues("refused").Inc()
			l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
			return fmt.Errorf("%w: bar %d (%s): minute %v", engine.ErrLiveBatch, i+1, bars[i].Ticker, err)
		}
	}
	return l.commit(&engine.LiveBatch{Seq: seq, Session: l.session, Bars: slices.Clone(bars)}, nil, now)
}

// pushAhead is how far past the server's clock a pushed trade or minute
// may lie: the feeder's clock and the server's are apart by less.
const pushAhead = time.Minute

// checkTime refuses the time ms (unix milliseconds) of a pushed trade or
// minute outside the hours of the push session (live.SessionStart to
// live.SessionEnd: 09:30 to 18:30 in São Paulo, within the session's
// day both there and in UTC) or more than pushAhead past now: a minute
// of another day, or a clock set wrong, would otherwise be taken into
// the session (and a minute ahead would move its watermark on, hiding
// the feed's lag). The caller holds l.mu.
func (l *local) checkTime(ms int64, now time.Time) error {
	t := time.UnixMilli(ms)
	from, to := live.SessionStart(l.session), live.SessionEnd(l.session)
	local := func(x time.Time) string { return x.In(saoPaulo).Format("15:04") }
	switch {
	case t.Before(from) || !t.Before(to):
		return fmt.Errorf("%s is outside session %s's hours (%s to %s in São Paulo, %s to %s UTC)", t.UTC().Format(time.RFC3339), l.session,
			local(from), local(to), from.UTC().Format("15:04"), to.UTC().Format("15:04"))
	case t.After(now.Add(pushAhead)):
		return fmt.Errorf("%s is ahead of the server's clock (%s) by more than %v", t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), pushAhead)
	}
	return nil
}

// saoPaulo is B3's local time, UTC−03:00, for messages.
var saoPaulo = time.FixedZone("-03", -3*3600)

// PushTrades aggregates a pushed batch of trades and applies the bars
// that changed. A batch holding a trade no bar can come from is refused
// whole, before anything is aggregated. Should its commit fail, the
// aggregation is rebuilt from the log (reopen), so that it holds exactly
// the batches applied.
func (l *local) PushTrades(seq uint64, trades []engine.LiveTrade) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkPush(seq); err != nil {
		return err
	}
	if err := l.trades.Check(trades); err != nil {
		l.met.batches.WithLabelValues("refused").Inc()
		l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
		return err
	}
	now := l.now()
	for i := range trades {
		if err := l.checkTime(trades[i].Time, now); err != nil {
			l.met.batches.WithLabelValues("refused").Inc()
			l.met.feedErrors.WithLabelValues(reasonRefused).Inc()
			return fmt.Errorf("%w: trade %d (%s %s): time %v", engine.ErrLiveBatch, i+1, trades[i].Ticker, trades[i].ID, err)
		}
	}
	bars := l.trades.Apply(trades)
	err := l.commit(&engine.LiveBatch{Seq: seq, Session: l.session, Bars: bars}, trades, now)
	l.countErrors(l.trades.Errors(), l.tradeErrs)
	switch {
	case err == nil || l.broken != nil:
		// (A broken log rebuilds the aggregation as it reopens.)
	case l.head == nil:
		// The stream did not take the batch: the session is read back
		// from it.
		if oerr := l.openSession(l.session); oerr != nil {
			l.log.Error("live session could not be started again after a failed push; trying again", "err", oerr.Error())
			if l.unopened && l.ctx != nil {
				go l.recoverLog(l.ctx, l.session)
			}
		}
	case l.slog != nil:
		// The engine refused the bars: the aggregation took trades that
		// are not applied.
		if rerr := l.reopen(); rerr != nil {
			l.log.Error("session log could not be read again after a refused push; it is reopened", "err", rerr.Error())
			if l.ctx != nil {
				go l.recoverLog(l.ctx, l.session)
			}
		}
	}
	return err
}

// Closed returns, when the push session is over, an error wrapping
// engine.ErrLiveClosed that says so (nil while it takes batches, or
// will once its log is writable again or the server restarted: a
// broken log, a shutdown).
func (l *local) Closed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rollPush()
	if l.closed() {
		return fmt.Errorf("%w: %s", engine.ErrLiveClosed, l.over())
	}
	return nil
}

// closed reports whether the push session is over: complete, or its log
// closed once the snapshot of its day took it over; not a log that is
// broken (reopened with backoff) or closed by a shutdown. The caller
// holds l.mu.
func (l *local) closed() bool {
	return !l.stopped && l.broken == nil && (l.complete || l.slog == nil)
}

// over says why a push into the session that is over is refused. The
// caller holds l.mu.
func (l *local) over() string {
	return fmt.Sprintf("the live session %s is over (complete at batch %d); a later batch belongs to the next session", l.session, l.seq)
}

// checkPush moves the push calendar on and refuses a push into a session
// that is over (complete, or handed over to its snapshot:
// engine.ErrLiveClosed) or numbered another way than the next
// (engine.ErrLiveSeq). The caller holds l.mu.
func (l *local) checkPush(seq uint64) error {
	l.rollPush()
	switch {
	case l.stopped:
		return fmt.Errorf("%w: batch %d not taken: the server is shutting down; send it again", engine.ErrLiveUnavailable, seq)
	case l.broken != nil:
		return fmt.Errorf("%w: batch %d not taken: the session log is unavailable (%v); it is reopened, send the batch again", engine.ErrLiveUnavailable, seq, l.broken)
	case l.closed():
		return fmt.Errorf("%w: batch %d: %s", engine.ErrLiveClosed, seq, l.over())
	case seq != l.seq+1:
		l.met.feedErrors.WithLabelValues(reasonSeq).Inc()
		return fmt.Errorf("%w: batch %d, the next is %d", engine.ErrLiveSeq, seq, l.seq+1)
	}
	return nil
}
