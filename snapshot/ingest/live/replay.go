package live

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// ReplayConfig configures a Replay.
type ReplayConfig struct {
	// Dir holds the recording: B3 trade files (zip, text, .gz, .zst),
	// every file of the folder (not below it). Files that are not trade
	// files are counted (ReasonFetch) and skipped.
	Dir string
	// Session is the session replayed; NoDate (or 0): the trade date
	// most rows of the recording carry. Rows of other days are counted
	// (ReasonWrongDay) and left out.
	Session engine.Date
	// Speed is how many times faster than real time the virtual clock
	// runs; 0 or less: as fast as the batches are taken.
	Speed float64
	// From, when above 0, plays the recording as fast as it is applied
	// up to that time of the session's day in São Paulo (UTC−03:00, from
	// midnight), and at Speed from there: a session joined at an hour of
	// the day.
	From time.Duration
	// Step is the virtual time between two steps (default 5 s): a
	// correction of an earlier minute waits at most that long.
	Step time.Duration
	// AfterMarket puts after-market trades in the bars
	// (negocios.Config.AfterMarket).
	AfterMarket bool
	// Now and Sleep replace the wall clock (tests).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// replayRow is one row of the recording, compact.
type replayRow struct {
	ms, price, qty, id int64
	tk                 int32 // index into Replay.tickers
	ref, day           engine.Date
	action             negocios.Action
	session            negocios.Session
}

// Replay plays a recorded session on a virtual clock (see the package
// documentation). Its batches depend only on the recording and the
// configuration's Session, Step and AfterMarket.
type Replay struct {
	cfg     ReplayConfig
	day     engine.Date
	tickers []string
	rows    []replayRow // sorted by time, file order kept among equals
	agg     *negocios.Aggregator
	errs    map[string]int64 // counted while reading (malformed, out of order, fetch)

	start, end int64 // the virtual clock's first and last instants, unix ms
	vt         int64 // the time reached, unix ms
	pos        int   // rows fed to agg
	pending    map[barKey]negocios.MinuteBar
	seq        uint64
	done       bool

	resume          uint64 // batches up to it go without waiting
	resumeAt        int64  // the virtual time of batch resume (unix ms; 0: unknown)
	anchored        bool
	anchorV         int64 // virtual ms ...
	anchorW         time.Time
	buf             []negocios.Trade
	files, rowsRead int
	endErrs         map[string]int64 // the counts once played (rows and aggregation released)
}

type barKey struct {
	ticker string
	minute int64
}

// NewReplay reads the recording in cfg.Dir. It fails when the folder
// cannot be read or holds no row of the session.
func NewReplay(cfg ReplayConfig) (*Replay, error) {
	if cfg.Step <= 0 {
		cfg.Step = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = Sleep
	}
	if math.IsNaN(cfg.Speed) || math.IsInf(cfg.Speed, 0) {
		return nil, errorf("replay: speed %v", cfg.Speed)
	}
	ents, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, errorf("replay: %w", err)
	}
	r := &Replay{cfg: cfg, errs: map[string]int64{}, pending: map[barKey]negocios.MinuteBar{}}
	tk := map[string]int32{}
	days := map[engine.Date]int{}
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		f, err := negocios.Open(filepath.Join(cfg.Dir, e.Name()), negocios.Options{Lenient: true})
		if err != nil {
			r.errs[ReasonFetch]++
			continue
		}
		r.files++
		for f.Next() {
			t := f.Trade()
			i, ok := tk[t.Ticker]
			if !ok {
				i = int32(len(r.tickers))
				tk[t.Ticker] = i
				r.tickers = append(r.tickers, t.Ticker)
			}
			days[t.TradeDate]++
			r.rows = append(r.rows, replayRow{ms: t.Time, price: t.Price, qty: t.Quantity, id: t.ID, tk: i,
				ref: t.RefDate, day: t.TradeDate, action: t.Action, session: t.Session})
		}
		st := f.Stats()
		r.errs[ReasonMalformed] += st.Skipped
		err = f.Err()
		f.Close()
		if err != nil {
			r.errs[ReasonFetch]++
		}
	}
	r.rowsRead = len(r.rows)
	r.day = cfg.Session
	if r.day == 0 || !r.day.Valid() {
		best := 0
		for d, n := range days {
			if n > best || n == best && d > r.day {
				r.day, best = d, n
			}
		}
	}
	if !r.day.Valid() || days[r.day] == 0 {
		return nil, errorf("replay: %s holds no trade of session %s (%d files read)", cfg.Dir, r.day, r.files)
	}
	// Rows of other days are counted and left out of the time line;
	// trades older than one before them in the files are counted (the
	// time line puts them in their place).
	kept := r.rows[:0]
	newest := make([]int64, len(r.tickers))
	for i := range newest {
		newest[i] = math.MinInt64
	}
	for _, x := range r.rows {
		if x.day != r.day {
			r.errs[ReasonWrongDay]++
			continue
		}
		if x.action == negocios.ActionNew {
			if x.ms < newest[x.tk] {
				r.errs[ReasonOutOfOrder]++
			}
			newest[x.tk] = max(newest[x.tk], x.ms)
		}
		kept = append(kept, x)
	}
	r.rows = slices.Clip(kept)
	slices.SortStableFunc(r.rows, func(a, b replayRow) int { return cmp.Compare(a.ms, b.ms) })
	r.agg = negocios.NewAggregator(r.day, negocios.Config{AfterMarket: cfg.AfterMarket, Accept: engine.ValidTicker})
	// The clock runs from the first minute of the session's rows to the
	// end of the day, or to the minute after its last row when later.
	first, last := r.rows[0].ms, r.rows[len(r.rows)-1].ms
	r.start = floorTo(first, 60000)
	r.end = max(SessionEnd(r.day).UnixMilli(), floorTo(last, 60000)+60000)
	r.vt = r.start
	return r, nil
}

func floorTo(ms, unit int64) int64 {
	q := ms / unit
	if ms%unit != 0 && ms < 0 {
		q--
	}
	return q * unit
}

// Session returns the session replayed.
func (r *Replay) Session() engine.Date { return r.day }

// Clock returns the virtual clock's start: the first minute of the
// recording's session.
func (r *Replay) Clock() (time.Time, bool) { return time.UnixMilli(r.start).UTC(), true }

// End returns the virtual time the replay ends at.
func (r *Replay) End() time.Time { return time.UnixMilli(r.end).UTC() }

// Rows returns the number of rows the recording holds (all days).
func (r *Replay) Rows() int { return r.rowsRead }

// Resume goes on after batch seq, applied before at virtual time at:
// the next Next feeds every row before at to the aggregation at once and
// numbers its batch seq+1, as the replay would have at that step; with
// at zero, the batches up to seq are walked again without waiting (see
// Feed).
func (r *Replay) Resume(seq uint64, at time.Time) {
	r.resume, r.resumeAt = seq, 0
	if seq > 0 && !at.IsZero() {
		r.resumeAt = at.UnixMilli()
	}
}

// rowsBefore returns the rows not fed yet whose time is before vt (unix
// ms) as trades, in r.buf, and counts them fed.
func (r *Replay) rowsBefore(vt int64) []negocios.Trade {
	r.buf = r.buf[:0]
	for n := len(r.rows); r.pos < n && r.rows[r.pos].ms < vt; r.pos++ {
		x := &r.rows[r.pos]
		r.buf = append(r.buf, negocios.Trade{RefDate: x.ref, TradeDate: x.day, Ticker: r.tickers[x.tk], Action: x.action,
			Session: x.session, Price: x.price, Quantity: x.qty, Time: x.ms, ID: x.id})
	}
	return r.buf
}

// fastForward takes the replay to the virtual time of the resumed batch
// without making its batches again: every row before it is aggregated
// at once; the bars of the minutes not ended by then are pending, as
// they would be at that step; the batches up to it were applied. Done
// when the resumed batch was the last (it ended the recording).
func (r *Replay) fastForward() {
	for _, b := range r.agg.Apply(r.rowsBefore(r.resumeAt)).Bars {
		if (b.Time+60)*1000 > r.resumeAt {
			r.pending[barKey{b.Ticker, b.Time}] = b
		}
	}
	r.vt, r.seq = r.resumeAt, r.resume
	if r.pos == len(r.rows) && r.resumeAt >= r.end {
		r.done = true
		r.endErrs = r.Errors()
		r.rows, r.agg, r.pending, r.buf = nil, nil, nil, nil
	}
}

// Errors returns the bad input counted so far, by reason.
func (r *Replay) Errors() map[string]int64 {
	if r.endErrs != nil {
		return maps.Clone(r.endErrs)
	}
	m := make(map[string]int64, len(Reasons))
	for k, v := range r.errs {
		m[k] += v
	}
	addAggStats(m, r.agg.Stats())
	return m
}

// Next advances the virtual clock by one step (at the configured speed)
// and returns the bars of the minutes that ended by then and the
// corrections of earlier ones. Once the recording is played, the clock
// moves on to End and the batch is Complete; then io.EOF.
func (r *Replay) Next(ctx context.Context) (Step, error) {
	if r.done {
		return Step{}, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return Step{}, err
	}
	if r.resumeAt > r.vt && r.seq == 0 {
		if r.fastForward(); r.done {
			return Step{}, io.EOF
		}
	}
	vt := r.vt + r.cfg.Step.Milliseconds()
	// Feed every row before vt.
	r.buf = r.rowsBefore(vt)
	final := r.pos == len(r.rows)
	if final {
		vt = max(vt, r.end)
	}
	ch := r.agg.Apply(r.buf)
	for _, b := range ch.Bars {
		r.pending[barKey{b.Ticker, b.Time}] = b
	}
	var out []negocios.MinuteBar
	for k, b := range r.pending {
		if (k.minute+60)*1000 <= vt {
			out = append(out, b)
			delete(r.pending, k)
		}
	}
	prev := r.seq
	step := Step{Session: r.day, At: time.UnixMilli(vt).UTC()}
	if len(out) > 0 || final {
		bars := make([]engine.LiveBar, len(out))
		for i := range out {
			bars[i] = LiveBar(&out[i])
		}
		sortBars(bars)
		r.seq++
		step.Batch = &engine.LiveBatch{Seq: r.seq, Session: r.day, Bars: bars, Complete: final}
	}
	if err := r.pace(ctx, prev, vt, final); err != nil {
		// The step is not taken: its bars go back to pending and its
		// Seq is given again; the rows stay fed (never twice).
		for _, b := range out {
			r.pending[barKey{b.Ticker, b.Time}] = b
		}
		r.seq = prev
		return Step{}, err
	}
	r.vt = vt
	if r.done = final; final {
		// The recording is played: its rows and the aggregation go (about
		// 60 MB at scale 1); the counts stay.
		r.endErrs = r.Errors()
		r.rows, r.agg, r.pending, r.buf = nil, nil, nil, nil
	}
	return step, nil
}

// pace waits until the wall clock reaches virtual time vt at the
// configured speed. Steps up to the resumed Seq or before From, the final
// jump to the end of the day, and every step at speed max do not wait.
func (r *Replay) pace(ctx context.Context, prev uint64, vt int64, final bool) error {
	if r.cfg.Speed <= 0 || prev < r.resume || r.cfg.From > 0 && vt < r.day.Time().Add(3*time.Hour+r.cfg.From).UnixMilli() {
		return nil
	}
	if !r.anchored {
		r.anchored, r.anchorV, r.anchorW = true, r.vt, r.cfg.Now()
	}
	if final {
		return nil
	}
	due := r.anchorW.Add(time.Duration(float64(vt-r.anchorV) * float64(time.Millisecond) / r.cfg.Speed))
	if d := due.Sub(r.cfg.Now()); d > 0 {
		return r.cfg.Sleep(ctx, d)
	}
	return nil
}

// String describes the recording.
func (r *Replay) String() string {
	return fmt.Sprintf("replay of %s: session %s, %d rows in %d files, %s to %s", r.cfg.Dir, r.day, r.rowsRead, r.files,
		time.UnixMilli(r.start).UTC().Format(time.RFC3339), time.UnixMilli(r.end).UTC().Format(time.RFC3339))
}

var _ Feed = (*Replay)(nil)
