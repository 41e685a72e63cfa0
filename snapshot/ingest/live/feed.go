package live

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/negocios"
)

// Feed delivers the batches of a live session. Its methods are called
// from one goroutine.
type Feed interface {
	// Session returns the session the feed starts with.
	Session() engine.Date
	// Clock returns the feed's clock before its first Step, and whether
	// the feed's clock is its own (a replay's virtual time: the server
	// takes Step.At as "now") rather than the wall clock.
	Clock() (start time.Time, virtual bool)
	// Resume tells the feed that its batches up to seq were applied
	// before (the session log of a restarted server), batch seq at the
	// feed's time at (Step.At; zero: unknown): a replay goes on from
	// there without walking the batches again (or, with at unknown,
	// through them without waiting), a polling feed numbers its next
	// batch seq+1. Called before the first Next, and after a step that
	// starts a new session (with that session's log's last Seq).
	Resume(seq uint64, at time.Time)
	// Next waits for the feed's next step and returns it. It returns
	// io.EOF once the feed has nothing more, ever, and ctx's error when
	// ctx ends; any other error is transient (counted, and Next called
	// again later).
	Next(ctx context.Context) (Step, error)
	// Errors returns the bad input counted so far by reason (Reason*),
	// cumulative.
	Errors() map[string]int64
}

// Step is how far a feed got.
type Step struct {
	// Session is the session the step belongs to. A feed moving to a new
	// session (a polling feed, the next day) first returns a step of it
	// without a batch: the server starts the session and Resumes the
	// feed before it numbers batches.
	Session engine.Date
	// Batch is what changed, nil when nothing did. Its Seq is above every
	// earlier batch's of the session.
	Batch *engine.LiveBatch
	// At is the feed's time reached: every trade before it is in this
	// batch or an earlier one (as far as the source has published it).
	At time.Time
}

// The reasons bad input is counted under (Feed.Errors, and the server's
// pregao_live_feed_errors_total).
const (
	ReasonMalformed     = "malformed"      // a row that does not parse
	ReasonWrongDay      = "wrong_day"      // a trade dated another day than the session
	ReasonBadPrice      = "bad_price"      // a price that is not positive
	ReasonBadQuantity   = "bad_quantity"   // a quantity that is not positive, or a notional out of range
	ReasonBadCode       = "bad_code"       // an update action or session code B3 does not publish
	ReasonBadTicker     = "bad_ticker"     // an instrument code that is not a ticker
	ReasonDuplicate     = "duplicate"      // a trade id or cancellation seen before
	ReasonUnknownCancel = "unknown_cancel" // the cancellation of a trade not seen (yet)
	ReasonOutOfOrder    = "out_of_order"   // a trade older than one before it
	ReasonTooMany       = "too_many"       // trades beyond negocios.MaxTradesPerTicker
	ReasonFetch         = "fetch"          // a file that could not be fetched or opened
	ReasonState         = "state"          // the feed's state could not be saved
)

// Reasons lists every Reason*.
var Reasons = []string{ReasonMalformed, ReasonWrongDay, ReasonBadPrice, ReasonBadQuantity, ReasonBadCode, ReasonBadTicker,
	ReasonDuplicate, ReasonUnknownCancel, ReasonOutOfOrder, ReasonTooMany, ReasonFetch, ReasonState}

// addAggStats adds an Aggregator's counts of bad input to m (out of
// order excluded: the feeds count it themselves, as the file orders the
// rows).
func addAggStats(m map[string]int64, st negocios.Stats) {
	m[ReasonWrongDay] += st.WrongDay
	m[ReasonBadPrice] += st.BadPrice
	m[ReasonBadQuantity] += st.BadQuantity
	m[ReasonBadCode] += st.BadAction + st.BadSession
	m[ReasonBadTicker] += st.Ignored
	m[ReasonDuplicate] += st.Duplicates
	m[ReasonUnknownCancel] += st.UnknownCancels
	m[ReasonTooMany] += st.TooMany
}

// LiveBar returns b in the engine's units: prices and volume in BRL (the
// floats nearest the decimals), its trade count kept.
func LiveBar(b *negocios.MinuteBar) engine.LiveBar {
	if b.Removed {
		return engine.LiveBar{Ticker: b.Ticker, Time: b.Time, Removed: true}
	}
	return engine.LiveBar{Ticker: b.Ticker, Time: b.Time, Open: negocios.PriceNum(b.Open), High: negocios.PriceNum(b.High),
		Low: negocios.PriceNum(b.Low), Close: negocios.PriceNum(b.Close), Volume: negocios.VolumeNum(b.Volume),
		Quantity: b.Quantity, Trades: b.Trades}
}

// The session calendar of the feeds, at B3's local time (UTC−03:00,
// negocios.LocalOffset). The regular session runs 10:00-17:00 with its
// calls, the after-market 17:30-18:00.
const (
	// sessionStart is when a feed that follows the calendar moves to a
	// new session (09:30 local, before the pre-opening).
	sessionStart = 12*time.Hour + 30*time.Minute
	// sessionEnd is when a session is over for the feeds (18:30 local):
	// the after-market closed at 18:00 and B3's per-ticker files, about
	// 15 minutes late, hold it whole. The demo's snapshots are dated then.
	sessionEnd = 21*time.Hour + 30*time.Minute
)

// SessionStart returns when a feed following the calendar starts session
// d: 09:30 local.
func SessionStart(d engine.Date) time.Time { return d.Time().Add(sessionStart) }

// SessionEnd returns when session d is over for the feeds: 18:30 local.
// A replay's clock moves on to it when the recording ends; the server
// completes a push session then.
func SessionEnd(d engine.Date) time.Time { return d.Time().Add(sessionEnd) }

// NextWeekday returns the first weekday after d.
func NextWeekday(d engine.Date) engine.Date {
	for d++; ; d++ {
		if wd := d.Time().Weekday(); wd != time.Saturday && wd != time.Sunday {
			return d
		}
	}
}

// PrevWeekday returns the last weekday before d.
func PrevWeekday(d engine.Date) engine.Date {
	for d--; ; d-- {
		if wd := d.Time().Weekday(); wd != time.Saturday && wd != time.Sunday {
			return d
		}
	}
}

// LocalDate returns the day of t at B3's local time.
func LocalDate(t time.Time) engine.Date { return engine.DateOf(t.Add(negocios.LocalOffset)) }

// CurrentSession returns the session a feed that follows the calendar
// serves at t: the local day's from its SessionStart on a weekday, the
// previous weekday's before then and on weekends (so that a session stays
// live overnight, until the snapshot of its day replaces it or the next
// one starts). Holidays are not known: a feed finds no trade then.
func CurrentSession(t time.Time) engine.Date {
	d := LocalDate(t)
	if wd := d.Time().Weekday(); wd != time.Saturday && wd != time.Sunday && !t.Before(SessionStart(d)) {
		return d
	}
	return PrevWeekday(d)
}

// sortBars orders bars by ticker, then minute.
func sortBars(bars []engine.LiveBar) {
	slices.SortFunc(bars, func(a, b engine.LiveBar) int {
		if c := cmp.Compare(a.Ticker, b.Ticker); c != 0 {
			return c
		}
		return cmp.Compare(a.Time, b.Time)
	})
}

// Sleep waits d or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// errorf is fmt.Errorf prefixed with the package's name.
func errorf(format string, args ...any) error { return fmt.Errorf("live: "+format, args...) }
