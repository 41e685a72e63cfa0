package engine

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pregao/pregao/index"
)

// The live session: the 1-minute bars of the session under way, applied
// by one writer (LiveWriter) beside the immutable Dataset and published
// with it as one View (store.go). A feed aggregates trades into whole
// minutes; each LiveBatch carries the minutes it changed, and a minute is
// replaced whole (last writer wins per ticker and minute), so applying a
// batch again changes nothing.
//
// Memory. Each ticker's bars are a tail of rows; a published Live holds
// one header per ticker (a length and the arrays). A new bar is appended
// beyond every published length, in the same arrays (or a new chunk of
// rows), so readers holding an older Live never see it; a bar that
// corrects an earlier minute (a cancelled trade, a late one) copies that
// ticker's tail first. The running session aggregates (high, low, close,
// volume, quantity so far) are computed as bars are appended, so a quote
// at any minute is one search and one row.
//
// What the Dataset already covers wins: a ticker whose daily or 1-minute
// history in the base reaches the live session's day is not overlaid (the
// base is the full session, as after the roll); a ticker the base does not
// know (an IPO's first day) is held aside, counted, and served from the
// next base.

// LiveBar is one ticker's 1-minute bar of the live session: the whole
// minute as the feed knows it.
type LiveBar struct {
	Ticker string
	// Time is unix seconds, UTC: the minute's start (a multiple of 60).
	Time     int64
	Open     Num   // BRL per share
	High     Num   // BRL per share
	Low      Num   // BRL per share
	Close    Num   // BRL per share
	Volume   Num   // BRL traded in the minute (exact to the cent when the trades are)
	Quantity int64 // shares traded in the minute
	Trades   int64 // trades in the minute
	// Removed says the minute has no trade left (every one cancelled): it
	// is taken out of the session.
	Removed bool
}

// LiveBatch is what a feed applies at once.
type LiveBatch struct {
	// Seq numbers the batches of a session, strictly increasing: a batch
	// whose Seq is not above the applied one is a redelivery and changes
	// nothing.
	Seq     uint64
	Session Date // the session's day
	Bars    []LiveBar
	// Complete says the feed has nothing more for the session (the
	// recording ended, or the feed's day is over).
	Complete bool
	// At is the feed's clock when the batch was made, unix milliseconds
	// (0: unknown): the time its changes are dated (Live.RevTime). It is
	// the batch's own, the same on every replica.
	At int64
}

// ErrLiveBatch wraps the reasons a batch is refused whole.
var ErrLiveBatch = errors.New("live batch refused")

// Check reports whether Store.ApplyLive would take b into session sd
// whole (nil), or refuse it, with the error it would return: a feed
// that hands its batches to other processes (the live stream) checks
// them first, as they will.
func (b *LiveBatch) Check(sd Date) error { return b.check(sd) }

// check validates b for session sd: every bar of that day, on a minute,
// with prices a bar can have. It returns the first problem.
func (b *LiveBatch) check(sd Date) error {
	if b.Session != sd {
		return fmt.Errorf("%w: batch %d is for session %s, the live session is %s", ErrLiveBatch, b.Seq, b.Session, sd)
	}
	for i := range b.Bars {
		if err := b.Bars[i].check(sd); err != nil {
			return fmt.Errorf("%w: batch %d, bar %d (%s): %v", ErrLiveBatch, b.Seq, i, b.Bars[i].Ticker, err)
		}
	}
	return nil
}

func (r *LiveBar) check(sd Date) error {
	switch {
	case !ValidTicker(r.Ticker):
		return fmt.Errorf("ticker %q is not a ticker", r.Ticker)
	case r.Time%60 != 0:
		return fmt.Errorf("time %d is not the start of a minute", r.Time)
	case DateOfUnix(r.Time) != sd:
		return fmt.Errorf("time %s is not in session %s", time.Unix(r.Time, 0).UTC().Format(time.RFC3339), sd)
	case r.Removed:
		return nil
	case !positive(r.Open) || !positive(r.High) || !positive(r.Low) || !positive(r.Close):
		return errors.New("open, high, low and close must be positive prices")
	case r.High < r.Low || r.High < r.Open || r.High < r.Close || r.Low > r.Open || r.Low > r.Close:
		return errors.New("high and low must bound open and close")
	case !(r.Volume >= 0) || math.IsInf(float64(r.Volume), 0) || r.Quantity < 0 || r.Trades < 0:
		return errors.New("volume, quantity and trades must not be negative")
	}
	return nil
}

func positive(n Num) bool { return n > 0 && !math.IsInf(float64(n), 0) }

// liveRow is one bar of a tail and the session's running aggregates up to
// and including it.
type liveRow struct {
	open, high, low, close, vol Num
	qty, trades                 int64
	// The running aggregates: the session's high, low and last close so
	// far, its volume (BRL) and quantity.
	aHigh, aLow, aClose, aVol Num
	aQty, aTrades             int64
}

// liveTail is one ticker's bars of the session, ascending Time. A
// published tail is immutable within its length (see the package comment
// on appends).
//
// The rows are in chunks of tailChunk that never move: a tail grows by a
// new chunk, not by copying its rows. The times, searched, are one array
// (an eighth of a row a bar) that grows by copying. A session's tickers
// trade in step (a bar each, every minute); to keep them from all
// growing in the same batch (the p99 of an apply), the first chunk holds
// a varying number of rows (tailChunk-off) and the times grow to varying
// capacities, both from the spread appendRow is given.
type liveTail struct {
	times  []int64
	chunks [][]liveRow // tailChunk rows each, but the first: tailChunk-off
	off    int         // where the first row would be in a whole chunk
	open   Num         // the session's open: the first bar's
	acc    moneySum    // the volume sum at the last row, to continue exactly
}

// tailChunk is the rows of a chunk: 4,056 bytes, in a 4 KiB size class
// (TestLiveTailChunkSize).
const tailChunk = 39

// Len returns the number of bars.
func (t *liveTail) Len() int { return len(t.times) }

// row returns bar i's row.
func (t *liveTail) row(i int) *liveRow {
	k := i + t.off
	c, j := k/tailChunk, k%tailChunk
	if c == 0 {
		j -= t.off
	}
	return &t.chunks[c][j]
}

// appendRow returns a new header with bar r after the last one, in the
// same arrays when they have room. spread is any number (the bar's place
// in its batch) that varies the first row's offset and the times'
// capacities from ticker to ticker.
func (t *liveTail) appendRow(tm int64, r *LiveBar, spread int) liveTail {
	spread = max(spread, 0)
	k := len(t.times)
	n := liveTail{times: t.times, chunks: t.chunks, off: t.off, open: t.open, acc: t.acc}
	if k == cap(t.times) {
		c := 16 + spread%32
		if k > 0 {
			c = k + k/2 + spread%k
		}
		n.times = make([]int64, k, c)
		copy(n.times, t.times)
	}
	n.times = append(n.times, tm)
	switch {
	case k == 0:
		n.off = spread % tailChunk
		n.chunks = [][]liveRow{make([]liveRow, tailChunk-n.off)}
	case (k+n.off)%tailChunk == 0:
		n.chunks = append(n.chunks, make([]liveRow, tailChunk))
	}
	row := liveRow{open: r.Open, high: r.High, low: r.Low, close: r.Close, vol: r.Volume, qty: r.Quantity, trades: r.Trades}
	if k == 0 {
		n.open = r.Open
		n.acc.start(r.Volume)
		row.aHigh, row.aLow, row.aClose, row.aQty, row.aTrades = r.High, r.Low, r.Close, r.Quantity, r.Trades
	} else {
		p := t.row(k - 1)
		n.acc.add(r.Volume)
		row.aHigh, row.aLow = maxNum(p.aHigh, r.High), minNum(p.aLow, r.Low)
		row.aClose, row.aQty, row.aTrades = r.Close, p.aQty+r.Quantity, p.aTrades+r.Trades
	}
	row.aVol = n.acc.value()
	*n.row(k) = row
	return n
}

// rebuilt returns a tail with fresh arrays holding t's bars with bar r
// replacing (or inserted at) its minute, or its minute removed.
func (t *liveTail) rebuilt(r *LiveBar) liveTail {
	i, found := slices.BinarySearch(t.times, r.Time)
	var bars []LiveBar
	for j := range t.times {
		if j == i && !r.Removed {
			bars = append(bars, *r)
		}
		if j == i && found {
			continue
		}
		row := t.row(j)
		bars = append(bars, LiveBar{Time: t.times[j], Open: row.open, High: row.high, Low: row.low, Close: row.close, Volume: row.vol, Quantity: row.qty, Trades: row.trades})
	}
	if i == len(t.times) && !r.Removed {
		bars = append(bars, *r)
	}
	n := liveTail{times: make([]int64, 0, len(bars)+16)}
	for k := range bars {
		n = n.appendRow(bars[k].Time, &bars[k], 0)
	}
	return n
}

// Live is one published state of the live session: immutable, shared by
// every request that loaded it.
type Live struct {
	Session Date   // the session's day
	Seq     uint64 // the last batch applied
	// Watermark is the end (unix seconds) of the latest minute holding a
	// bar: every bar ends by then.
	Watermark int64
	Complete  bool // the feed has nothing more for the session
	// At is the feed's clock of the last batch applied (LiveBatch.At),
	// unix milliseconds (0: unknown).
	At int64
	// Bars counts the bars applied (corrections included), Corrections
	// those that changed or removed a minute already held, Covered those
	// of tickers whose history in the base already covers the session,
	// Aside those of tickers the base does not know.
	Bars, Corrections, Covered, Aside int64

	base *Dataset // the Dataset the tails are indexed by
	// tails are by asset position in base, nil times: no bar. Headers by
	// value: a batch copies them in one block, not one new header for
	// each ticker it changes.
	tails []liveTail
	// held are the tails of tickers base does not know, served from the
	// next base that knows them.
	held map[string]liveTail
	// revMin, revSeq and revAt are the steps of RevAt and RevTime: the
	// earliest minute (unix seconds) a batch changed, its Seq and its At,
	// all ascending.
	revMin []int64
	revSeq []uint64
	revAt  []int64
	// changes lists, in batch order, each minute of a known ticker that a
	// batch changed after it was held (a correction, a removal, a late
	// minute before the last): what a reader that saw the session up to
	// a batch has missed of the minutes it had (ChangesSince).
	changes []LiveChange
}

// LiveChange is a minute of Ticker (Minute: unix seconds, its start)
// that batch Seq changed, removed or inserted before the ticker's last
// minute.
type LiveChange struct {
	Seq    uint64
	Ticker string
	Minute int64
}

// ChangesSince returns the changes of the batches after seq, in batch
// order (shared: not to be modified).
func (l *Live) ChangesSince(seq uint64) []LiveChange {
	if l == nil {
		return nil
	}
	i, _ := slices.BinarySearchFunc(l.changes, seq+1, func(c LiveChange, s uint64) int { return cmp.Compare(c.Seq, s) })
	return l.changes[i:]
}

// Base returns the Dataset l is bound to.
func (l *Live) Base() *Dataset { return l.base }

// covers reports whether a's history in the base reaches session sd.
func covers(a *Asset, sd Date) bool {
	if n := a.Daily.Len(); n > 0 && a.Daily.Dates[n-1] >= sd {
		return true
	}
	if n := a.Intraday.Len(); n > 0 && a.Intraday.Times[n-1] >= int64(sd)*86400 {
		return true
	}
	return false
}

// tail returns the live bars of a, nil when it has none or its base
// history covers the session.
func (l *Live) tail(a *Asset) *liveTail {
	if l == nil || a.pos < 0 || int(a.pos) >= len(l.tails) || &l.base.assets[a.pos] != a || l.tails[a.pos].times == nil {
		return nil
	}
	return &l.tails[a.pos]
}

// RevAt returns the revision of what a cut-off at unix time cutoff sees of
// the session: the Seq of the last batch that changed a bar complete by
// then (0: none). Two cut-offs with the same minute and revision see the
// same bars; a correction of a visible bar changes it, a bar ahead of the
// cut-off does not.
func (l *Live) RevAt(cutoff int64) uint64 {
	if l == nil {
		return 0
	}
	i := index.LastLE(l.revMin, cutoff-60)
	if i < 0 {
		return 0
	}
	return l.revSeq[i]
}

// RevTime returns when the revision RevAt(cutoff) was made: the At of
// its batch (unix milliseconds; 0: no revision, or a batch without At).
// It only grows as batches come and the cut-off moves.
func (l *Live) RevTime(cutoff int64) int64 {
	if l == nil {
		return 0
	}
	i := index.LastLE(l.revMin, cutoff-60)
	if i < 0 {
		return 0
	}
	return l.revAt[i]
}

// quote returns a's quote as of unix time t from the live session, and
// false when the session has no bar of a complete by t (the base answers
// then). From the session's close (SessionCloseUTC) on, the quote of its
// last bar is the daily bar a snapshot of the day holds, as a snapshot
// shows it from then on.
func (l *Live) quote(a *Asset, t int64) (Quote, bool) {
	tl := l.tail(a)
	if tl == nil {
		return Quote{}, false
	}
	i := index.LastLE(tl.times, t-60)
	if i < 0 {
		return Quote{}, false
	}
	sd := l.Session
	r := tl.row(i)
	q := Quote{Time: tl.times[i], Date: sd, Factor: a.adj.at(sd), Intraday: true,
		Open: tl.open, High: r.aHigh, Low: r.aLow, Close: r.aClose, Volume: r.aVol, Quantity: Num(r.aQty)}
	if t >= SessionComplete(sd) && i == tl.Len()-1 {
		q.Time, q.Intraday = int64(sd)*86400, false
	}
	k := index.LastLT(a.Daily.Dates, sd)
	q.PrevClose = a.prevClose(k, q.Factor)
	q.setVariation()
	return q, true
}

// dailyBar returns the session's daily bar of a: the aggregate of all its
// bars so far (the caller shows it once the session is over).
func (l *Live) dailyBar(a *Asset, adjusted bool) (Bar, bool) {
	tl := l.tail(a)
	if tl == nil || tl.Len() == 0 {
		return Bar{}, false
	}
	sd := l.Session
	r := tl.row(tl.Len() - 1)
	b := Bar{Time: int64(sd) * 86400, Date: sd, Open: tl.open, High: r.aHigh, Low: r.aLow, Close: r.aClose,
		Volume: r.aVol, Quantity: Num(r.aQty), Trades: r.aTrades, Factor: a.adj.at(sd)}
	if adjusted {
		b.adjust()
	}
	return b, true
}

// newLive returns an empty session sd bound to base.
func newLive(base *Dataset, sd Date) *Live {
	l := &Live{Session: sd, base: base}
	if base != nil {
		l.tails = make([]liveTail, len(base.assets))
	}
	return l
}

// apply returns the state after batch b (checked), sharing what b does
// not change. It does not modify l.
func (l *Live) apply(b *LiveBatch) *Live {
	n := *l
	n.Seq, n.Complete, n.At = b.Seq, b.Complete || l.Complete, max(l.At, b.At)
	n.tails = slices.Clone(l.tails) // the headers: copy on write
	if l.held != nil {
		n.held = make(map[string]liveTail, len(l.held))
		for k, v := range l.held {
			n.held[k] = v
		}
	}
	// Bars by ticker, then minute, so that each tail is appended to in
	// order and copied at most once. Feeds send them so (b is not
	// modified); others are sorted in a copy.
	bars := b.Bars
	if !slices.IsSortedFunc(bars, byTickerMinute) {
		bars = slices.Clone(bars)
		slices.SortStableFunc(bars, byTickerMinute)
	}
	earliest := int64(math.MaxInt64)
	for i := range bars {
		r := &bars[i]
		n.Bars++
		var a *Asset
		if l.base != nil {
			a, _ = l.base.Asset(r.Ticker)
		}
		var t liveTail
		switch {
		case a == nil:
			n.Aside++
			t = n.held[r.Ticker]
		case covers(a, n.Session):
			n.Covered++
			continue
		default:
			t = n.tails[a.pos]
		}
		switch last := t.Len() - 1; {
		case r.Removed && !hasMinute(&t, r.Time):
			continue // nothing to remove
		case !r.Removed && (last < 0 || r.Time > t.times[last]):
			t = t.appendRow(r.Time, r, i)
		case !r.Removed && sameRow(&t, r):
			continue // a redelivered minute
		default:
			n.Corrections++
			t = t.rebuilt(r)
			if a != nil {
				n.changes = append(n.changes, LiveChange{Seq: b.Seq, Ticker: a.Ticker, Minute: r.Time})
			}
		}
		if a == nil {
			if n.held == nil {
				n.held = map[string]liveTail{}
			}
			n.held[r.Ticker] = t
		} else {
			n.tails[a.pos] = t
		}
		earliest = min(earliest, r.Time)
		n.Watermark = max(n.Watermark, r.Time+60)
	}
	if earliest != math.MaxInt64 {
		// RevAt's steps: every step at or after the earliest minute changed
		// is dominated by this batch.
		k := index.FirstGE(l.revMin, earliest)
		at := max(l.At, b.At)
		if k == len(l.revMin) {
			n.revMin, n.revSeq, n.revAt = append(l.revMin, earliest), append(l.revSeq, b.Seq), append(l.revAt, at)
		} else {
			n.revMin = append(slices.Clip(l.revMin[:k]), earliest)
			n.revSeq = append(slices.Clip(l.revSeq[:k]), b.Seq)
			n.revAt = append(slices.Clip(l.revAt[:k]), at)
		}
	}
	return &n
}

// byTickerMinute orders bars by ticker, then minute.
func byTickerMinute(x, y LiveBar) int {
	if c := cmp.Compare(x.Ticker, y.Ticker); c != 0 {
		return c
	}
	return cmp.Compare(x.Time, y.Time)
}

func hasMinute(t *liveTail, tm int64) bool {
	_, ok := slices.BinarySearch(t.times, tm)
	return ok
}

// sameRow reports whether t holds bar r's minute with r's values.
func sameRow(t *liveTail, r *LiveBar) bool {
	i, ok := slices.BinarySearch(t.times, r.Time)
	if !ok {
		return false
	}
	w := t.row(i)
	return w.open == r.Open && w.high == r.High && w.low == r.Low && w.close == r.Close && w.vol == r.Volume && w.qty == r.Quantity && w.trades == r.Trades
}

// rebind returns l bound to base d: each tail at its asset's position in
// d, held tails of tickers d knows placed, tails of tickers whose history
// in d covers the session dropped (d is the session's roll).
func (l *Live) rebind(d *Dataset) *Live {
	n := *l
	n.base = d
	n.tails = make([]liveTail, len(d.assets))
	n.held = nil
	place := func(ticker string, t liveTail) {
		a, ok := d.Asset(ticker)
		switch {
		case !ok:
			if n.held == nil {
				n.held = map[string]liveTail{}
			}
			n.held[ticker] = t
		case !covers(a, n.Session):
			n.tails[a.pos] = t
		}
	}
	if l.base != nil {
		for i, t := range l.tails {
			if t.times != nil {
				place(l.base.assets[i].Ticker, t)
			}
		}
	}
	for k, t := range l.held {
		place(k, t)
	}
	return &n
}
