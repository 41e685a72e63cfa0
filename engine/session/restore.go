package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/engine/session/bus"
	"github.com/pregao/pregao/snapshot/ingest/live"
)

// restoreFile opens session sd's log in the live folder (created when
// absent) and applies its records to the head again (a restart), a torn
// tail cut and counted. A file that is not a session log, or is another
// session's, is moved aside (counted) and a new one started; on any
// other error it is left as it is. The session is restoring meanwhile,
// and stays so when the process's first session cannot be read back
// (its log may hold the day's batches: not ready until it opens, at a
// retry). The caller holds l.mu.
func (l *local) restoreFile(sd engine.Date) (err error) {
	h := l.head
	h.restoring.Store(true)
	defer func() {
		if err == nil || l.started && !l.unrestored {
			h.restoring.Store(false)
		}
	}()
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.start(sd); err != nil {
		return err
	}
	path := filepath.Join(l.cfg.dir, live.LogName(sd))
	start := time.Now()
	restored, refused := 0, 0
	var lastAt int64
	apply := func(rec *live.Record) error {
		lastAt = rec.At
		if _, err := h.apply(&engine.LiveBatch{Seq: rec.Seq, Session: sd, Bars: rec.Bars, Complete: rec.Complete, At: rec.At}, true); err != nil {
			// A batch refused (logged by an older version, or by a crash
			// before it was taken out): neither its trades nor its
			// digest, so that its retry is not told "applied already".
			refused++
			return nil
		}
		if rec.Trades != nil && l.trades != nil {
			l.trades.Apply(rec.Trades)
		}
		if l.digests != nil {
			l.digests[rec.Seq] = engine.LiveDigest(rec.Bars, rec.Trades)
		}
		restored++
		return nil
	}
	lg, info, err := live.OpenLog(path, sd, apply)
	if errors.Is(err, live.ErrLogHeader) || errors.Is(err, live.ErrOtherSession) {
		// Not this session's log: set aside whole. Any other failure
		// (a full disk rewriting a damaged log, a read error) keeps the
		// log where it is, and its records, for the next try.
		aside := fmt.Sprintf("%s.bad-%d", path, time.Now().Unix())
		l.met.feedErrors.WithLabelValues(reasonLog).Inc()
		l.log.Error("session log unreadable: moved aside, the session starts empty", "file", path, "moved_to", aside, "err", err.Error())
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("session log %s: %w (and it cannot be moved aside: %v)", path, err, rerr)
		}
		if err := h.start(sd); err != nil {
			return err
		}
		restored, refused = 0, 0
		l.newTrades()
		lg, info, err = live.OpenLog(path, sd, apply)
	}
	if err != nil {
		return err
	}
	l.slog = lg
	l.seq, l.complete = lg.Last(), h.complete
	if l.seq > 0 {
		l.lastAt = time.UnixMilli(lastAt)
		if l.virtual {
			// The feed's own clock (a replay's) is where the last batch
			// restored left it, not at the recording's start: a replay
			// already complete sends no batch to move it on.
			l.clock.set(l.lastAt, true)
		}
	}
	h.seq = lg.Last()
	if info.Cut > 0 {
		l.met.feedErrors.WithLabelValues(reasonLogCut).Inc()
		l.log.Warn("session log: torn tail cut", "file", path, "bytes_cut", info.Cut, "reason", info.CutReason.Error())
	}
	l.noteDamage(sd, path, &info)
	h.countDeltas()
	l.log.Info("live session started", "session", sd.String(), "log", path, "batches_restored", restored, "refused", refused,
		"seq", l.seq, "restore_seconds", time.Since(start).Seconds())
	h.checkRolled()
	h.publishState()
	return nil
}

// noteDamage counts and logs the damaged records a session log's open
// set aside, and notes the batches they took as gaps of the session
// (/readyz's last_gap, pregao_live_session_gaps). The caller holds l.mu
// and l.head.mu.
func (l *local) noteDamage(sd engine.Date, path string, info *live.LogInfo) {
	if len(info.Damaged) == 0 {
		return
	}
	l.met.feedErrors.WithLabelValues(reasonLogDamaged).Add(float64(len(info.Damaged)))
	reasons := make([]string, len(info.Damaged))
	for i, d := range info.Damaged {
		reasons[i] = d.Reason.Error()
	}
	gaps := info.Missing
	if n := trailingDamage(info); n > 0 {
		// Damaged lines after the last record kept: the batch after it
		// (one a line, at least) was made durable and is lost; the next
		// batches take its number again.
		gaps = append(gaps[:len(gaps):len(gaps)], live.SeqRange{First: info.Last + 1, Last: info.Last + uint64(n)})
	}
	missing := make([]string, len(gaps))
	for i, m := range gaps {
		missing[i] = fmt.Sprintf("%d-%d", m.First, m.Last)
		l.head.noteGap(&engine.LiveGap{Kind: "log", Session: sd, First: m.First, Last: m.Last})
	}
	l.log.Error("session log: damaged records set aside, every valid record kept; the batches they held are missing", "file", path,
		"set_aside_in", info.Aside, "records", len(info.Damaged), "bytes", info.DamagedBytes(), "missing_batches", strings.Join(missing, ","),
		"reasons", strings.Join(reasons, "; "))
}

// trailingDamage returns how many of info's damaged lines lie after its
// last record kept (every one when none was kept).
func trailingDamage(info *live.LogInfo) int {
	var before int64 // the bytes of the damaged lines before d
	for i, d := range info.Damaged {
		if d.Offset-before >= info.Kept {
			return len(info.Damaged) - i
		}
		before += d.Length
	}
	return 0
}

// errBus wraps a failure to reach the stream (the batch may be published
// again).
var errBus = fmt.Errorf("live stream unreachable: %w", engine.ErrLiveUnavailable)

// streamLog is the session log of a feed that publishes to the stream:
// an append is a publish acknowledged by the stream. A copy of the
// session log file is kept in the live folder beside it (file), for
// pregao update --session-log (the roll), each record with its stream
// sequence (live.Record.Stream: the snapshot's position in the stream);
// the stream is the log of record: the copy is completed from it when
// the feed starts.
type streamLog struct {
	bus     *bus.Bus
	session engine.Date
	last    uint64
	timeout time.Duration
	dups    *atomic.Int64 // batches the stream already held
	virtual bool          // the feed's clock is its own (bus.Batch.Virtual)
	file    *live.Log     // nil: no copy (it could not be opened)
	fileErr func(error)   // a failed append to the copy
}

func (s *streamLog) Append(rec *live.Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	seq, dup, err := s.bus.Publish(ctx, s.session, rec, s.virtual)
	if err != nil {
		if errors.Is(err, bus.ErrMessage) {
			return err
		}
		return fmt.Errorf("%w: %v", errBus, err)
	}
	if dup {
		s.dups.Add(1)
	}
	s.last = rec.Seq
	rec.Stream = seq // the copy keeps it: pregao update --session-log's position
	s.appendCopy(rec)
	return nil
}

// appendCopy appends rec to the copy of the session log unless it holds
// it already.
func (s *streamLog) appendCopy(rec *live.Record) {
	if s.file != nil && rec.Seq > s.file.Last() {
		if err := s.file.Append(rec); err != nil {
			s.fileErr(err)
		}
	}
}

// Undo does nothing: the feed side checks a batch before it publishes
// it (engine.LiveBatch.Check), so a batch is never taken back.
func (s *streamLog) Undo() error { return nil }

func (s *streamLog) Close() error {
	if s.file != nil {
		return s.file.Close()
	}
	return nil
}

func (s *streamLog) Last() uint64 { return s.last }

// restoreStream is restoreFile for a feed that publishes to the stream:
// session sd's batches already there are read back (the trades a push
// aggregated, the last sequence number). Nothing is applied to a Store:
// the replicas apply from the stream. The caller holds l.mu.
func (l *local) restoreStream(sd engine.Date) error {
	start := time.Now()
	sl := &streamLog{bus: l.bus, session: sd, timeout: 10 * time.Second, dups: &l.dups, virtual: l.virtual, file: l.openCopy(sd),
		fileErr: func(err error) {
			l.met.feedErrors.WithLabelValues(reasonLog).Inc()
			l.log.Error("session log copy: append failed (the stream has the batch)", "err", err.Error())
		}}
	restored := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		bad, err := l.bus.ReadSession(ctx, sd, func(rec *live.Record) error {
			if rec.Seq <= l.seq {
				return nil
			}
			sl.appendCopy(rec)
			if rec.Trades != nil && l.trades != nil {
				l.trades.Apply(rec.Trades)
			}
			l.noteDurable(rec)
			restored++
			return nil
		})
		cancel()
		if bad > 0 {
			l.met.feedErrors.WithLabelValues(reasonMessage).Add(float64(bad))
		}
		// The first session waits for the stream as long as it takes; a
		// later one (a push's rebuild, the next day) gives up after a
		// while rather than hold the session's lock.
		if err == nil || l.ctx == nil || l.ctx.Err() != nil || l.started && time.Since(start) > 30*time.Second {
			if err != nil {
				sl.Close()
				return err
			}
			break
		}
		// Not read whole: start again from nothing once the stream answers.
		l.met.feedErrors.WithLabelValues(reasonBus).Inc()
		l.log.Warn("live stream: the session could not be read back; retrying", "session", sd.String(), "err", err.Error())
		l.seq, l.complete, restored = 0, false, 0
		l.newTrades()
		if err := live.Sleep(l.ctx, l.cfg.retry); err != nil {
			sl.Close()
			return err
		}
	}
	sl.last = l.seq
	l.slog = sl
	l.log.Info("live session started on the stream", "session", sd.String(), "batches_in_stream", restored, "seq", l.seq,
		"read_seconds", time.Since(start).Seconds(), "log_copy", filepath.Join(l.cfg.dir, live.LogName(sd)))
	return nil
}

// openCopy opens the copy of session sd's log a feed that publishes to
// the stream keeps (what the stream holds beyond it is appended as it is
// read back); nil when it cannot be opened (logged and counted).
func (l *local) openCopy(sd engine.Date) *live.Log {
	path := filepath.Join(l.cfg.dir, live.LogName(sd))
	none := func(*live.Record) error { return nil }
	file, _, err := live.OpenLog(path, sd, none)
	if err != nil && !errors.Is(err, os.ErrPermission) {
		aside := fmt.Sprintf("%s.bad-%d", path, time.Now().Unix())
		l.log.Error("session log copy unreadable: moved aside, written again from the stream", "file", path, "moved_to", aside, "err", err.Error())
		if os.Rename(path, aside) == nil {
			file, _, err = live.OpenLog(path, sd, none)
		}
	}
	if err != nil {
		l.met.feedErrors.WithLabelValues(reasonLog).Inc()
		l.log.Error("no copy of the session log in --live-dir: pregao update --session-log will lack this session", "err", err.Error())
		return nil
	}
	return file
}

// prune removes the session logs (and b3 states) in dir of all but the
// newest keep sessions, session cur counted (its log may not exist yet)
// and never removed.
func prune(dir string, keep int, cur engine.Date, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	days := []engine.Date{cur}
	for _, e := range ents {
		if d, ok := live.ParseLogName(e.Name()); ok && d != cur {
			days = append(days, d)
		}
	}
	slices.Sort(days)
	if len(days) <= keep {
		return
	}
	oldest := days[len(days)-keep]
	for _, e := range ents {
		d, ok := sessionOfFile(e.Name())
		if ok && d < oldest && d != cur {
			if err := os.Remove(filepath.Join(dir, e.Name())); err == nil {
				log.Info("pruned a session's files", "file", e.Name())
			}
		}
	}
}

// sessionOfFile returns the session of a session log's or a b3 state's
// file name, and false for other names.
func sessionOfFile(name string) (engine.Date, bool) {
	if d, ok := live.ParseLogName(name); ok {
		return d, true
	}
	name, isB3 := strings.CutPrefix(name, "b3-")
	name, isJSON := strings.CutSuffix(name, ".json")
	d, err := engine.ParseDate(name)
	return d, isB3 && isJSON && err == nil
}
