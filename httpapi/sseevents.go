package httpapi

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// The events of the session stream (GET /stream/quotes, sse.go), made
// from the published view and nothing else.
//
// A cursor is how far a plan's view of the live session has gone: the
// session, its state (open, closed, handed over), the cut-off's minute
// (the delayed plan: the bars of earlier minutes are visible) and the
// last batch applied then. Every field only grows, so cursors are
// ordered. The events between two cursors are a function of the two
// cursors and the view at the later one (diff): the session's state
// changes, the bars of the minutes that became visible, the minutes
// already visible that a batch after the first cursor changed
// (corrections: the bar as it is now, or none when every trade of the
// minute was cancelled), and the quote of every ticker with such an
// event. Any replica, before or after a restart, computes the same events
// from the same cursors and view; a client that names the last event it
// received (Last-Event-ID: the cursors of its step and how far into the
// step it got, an sseMark) is sent what it has not seen, each minute once.

// Session states, in order.
const (
	sseNone     = iota // no live session seen
	sseOpen            // the session runs
	sseClosed          // complete, and the plan sees its end
	sseHandover        // the snapshot of its day took it over
)

var sseStateNames = [...]string{"none", "open", "close", "handover"}

// sseCursor is a point of a plan's view of the live session.
type sseCursor struct {
	session engine.Date // NoDate: none yet
	state   int         // sseNone...sseHandover
	at      int64       // delayed: the cut-off's minute (unix s): earlier minutes are visible; eod: 0
	seq     uint64      // the live session's last batch at the point
}

// after reports whether c is past d (ordered field by field).
func (c sseCursor) after(d sseCursor) bool {
	switch {
	case c.session != d.session:
		return c.session > d.session
	case c.state != d.state:
		return c.state > d.state
	case c.at != d.at:
		return c.at > d.at
	}
	return c.seq > d.seq
}

// appendCursor appends c as text: DAY.STATE.AT.SEQ (DAY as YYYYMMDD, 0
// for none).
func appendCursor(dst []byte, c sseCursor) []byte {
	day := 0
	if c.session.Valid() {
		y, m, d := c.session.Time().Date()
		day = y*10000 + int(m)*100 + d
	}
	dst = strconv.AppendInt(dst, int64(day), 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, int64(c.state), 10)
	dst = append(dst, '.')
	dst = strconv.AppendInt(dst, c.at, 10)
	dst = append(dst, '.')
	return strconv.AppendUint(dst, c.seq, 10)
}

// parseCursor reads appendCursor's text.
func parseCursor(s string) (sseCursor, bool) {
	f := strings.Split(s, ".")
	if len(f) != 4 {
		return sseCursor{}, false
	}
	day, err1 := strconv.Atoi(f[0])
	st, err2 := strconv.Atoi(f[1])
	at, err3 := strconv.ParseInt(f[2], 10, 64)
	seq, err4 := strconv.ParseUint(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || st < sseNone || st > sseHandover || day < 0 || at < 0 || at%60 != 0 {
		return sseCursor{}, false
	}
	c := sseCursor{session: engine.NoDate, state: st, at: at, seq: seq}
	if day != 0 {
		y, m, d := day/10000, day/100%100, day%100
		if y < 2000 || y > 2200 || m < 1 || m > 12 || d < 1 || d > 31 {
			return sseCursor{}, false
		}
		c.session = engine.MakeDate(y, time.Month(m), d)
	}
	if c.session.Valid() != (st != sseNone) {
		return sseCursor{}, false
	}
	return c, true
}

// sseMark is a place in the stream: the step from..to, and within it
// every event before ticker and those of ticker up to part: a minute
// (unix s) of a bar or correction, partQuote (its quote too), or, with
// ticker "", -state (the session's event of that state).
type sseMark struct {
	from, to sseCursor
	ticker   string
	part     int64
}

// partQuote is the part of a ticker's quote: its last event in a step.
const partQuote = 1 << 62

// at returns the mark at the end of step from..to: everything seen.
func markAt(c sseCursor) sseMark { return sseMark{from: c, to: c, ticker: "\xff", part: partQuote} }

// appendID appends the id of the event at m: FROM/TO/TICKER/PART.
func appendID(dst []byte, m *sseMark) []byte {
	dst = appendCursor(dst, m.from)
	dst = append(dst, '/')
	dst = appendCursor(dst, m.to)
	dst = append(dst, '/')
	dst = append(dst, m.ticker...)
	dst = append(dst, '/')
	switch {
	case m.ticker == "":
		// The session's event: sSTATE (s0 is the state none's, part 0).
		dst = append(dst, 's')
		return strconv.AppendInt(dst, -m.part, 10)
	case m.part == partQuote:
		return append(dst, 'q')
	}
	return strconv.AppendInt(dst, m.part, 10)
}

// parseID reads an event id (Last-Event-ID).
func parseID(s string) (sseMark, error) {
	bad := badRequest("Last-Event-ID %q: not an event id of this stream (FROM/TO/TICKER/PART, as the events carry)", s)
	f := strings.Split(s, "/")
	if len(f) != 4 {
		return sseMark{}, bad
	}
	var m sseMark
	var ok bool
	if m.from, ok = parseCursor(f[0]); !ok {
		return sseMark{}, bad
	}
	if m.to, ok = parseCursor(f[1]); !ok || m.from.after(m.to) {
		return sseMark{}, bad
	}
	m.ticker = f[2]
	switch p := f[3]; {
	case m.ticker == "" && len(p) == 2 && p[0] == 's' && p[1] >= '0' && p[1] <= '3':
		m.part = -int64(p[1] - '0')
	case m.ticker == "":
		return sseMark{}, bad
	case !engine.ValidTicker(m.ticker) && !validSymbol(m.ticker):
		return sseMark{}, bad
	case p == "q":
		m.part = partQuote
	default:
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 || n%60 != 0 {
			return sseMark{}, bad
		}
		m.part = n
	}
	return m, nil
}

// validSymbol reports whether s may be an index symbol (IBOV).
func validSymbol(s string) bool {
	if len(s) < 2 || len(s) > 12 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// sseEvent is one event of a step, encoded once: "id: …\nevent:
// …\ndata: …\n\n".
type sseEvent struct {
	ticker string // "" for the session's
	kind   eventKind
	msg    []byte
}

// sseView is a plan's view of the live session at one point: the
// published view, the plan's view of prices, and the cursor.
type sseView struct {
	ev  engine.View
	v   view
	cur sseCursor
}

// sseViewOf returns the plan's view of ev at now, and its cursor; prev
// is the cursor before (a session whose live state went away is handed
// over).
func (a *API) sseViewOf(plan string, ev engine.View, now time.Time, prev sseCursor) *sseView {
	c := &call{ds: ev.Base, live: ev.Live, now: now, key: KeyEntry{Plan: plan}}
	sv := &sseView{ev: ev, v: a.view(c)}
	cur := sseCursor{session: engine.NoDate}
	switch l := ev.Live; {
	case l == nil:
		if prev.session.Valid() && ev.Base.LastSession() >= prev.session {
			cur = prev
			cur.state = sseHandover
		} else {
			cur = prev
		}
	case plan == PlanEOD:
		if l.Complete && l.Session < sv.v.before {
			cur = sseCursor{session: l.Session, state: sseClosed, seq: l.Seq}
		}
	default:
		k, _ := a.delayedKey(c, a.info(c.ds))
		cur = sseCursor{session: l.Session, state: sseOpen, at: k.at, seq: l.Seq}
		if l.Complete && k.at >= ev.Visible(0) {
			cur.state = sseClosed
		}
	}
	if prev.after(cur) {
		cur = prev // a view behind what was shown (a reload racing a batch): nothing goes back
	}
	sv.cur = cur
	return sv
}

// knowledge is what a client knows of one ticker: everything as of
// cursor k, and (partial) of the step k..to its events up to minute
// upTo, as of to.
type knowledge struct {
	k, to   sseCursor
	partial bool
	upTo    int64
}

// knowledgeOf returns what a client at mark m knows of ticker t.
func knowledgeOf(m *sseMark, t string) knowledge {
	switch {
	case t < m.ticker || t == m.ticker && m.part == partQuote:
		return knowledge{k: m.to}
	case t == m.ticker:
		return knowledge{k: m.from, to: m.to, partial: true, upTo: m.part}
	}
	return knowledge{k: m.from}
}

// stepper appends the events of one step to an event list, each with its
// id.
type stepper struct {
	dst  []sseEvent
	mark sseMark
	buf  []byte
	data []byte
	// sink, when set, takes the events made so far each time they reach
	// sinkEvents, and dst starts again: a catch-up of a whole session
	// (500 tickers' minutes: some 200,000 events, tens of MB) is sent as
	// it is made instead of held whole. It returns false when no more
	// are wanted (the client left): gone is set, and the step ends at
	// its next ticker instead of making the rest for nobody.
	sink func([]sseEvent) bool
	gone bool
}

// sinkEvents is how many events a stepper with a sink holds at most
// (about 170 KB of a session's bars).
const sinkEvents = 512

// emit appends an event of ticker (part: its place, sseMark.part).
func (s *stepper) emit(ticker string, kind eventKind, part int64, data []byte) {
	s.mark.ticker, s.mark.part = ticker, part
	b := append(s.buf[:0], "id: "...)
	b = appendID(b, &s.mark)
	b = append(b, "\nevent: "...)
	b = append(b, eventKinds[kind]...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	s.buf = b
	s.dst = append(s.dst, sseEvent{ticker: ticker, kind: kind, msg: slices.Clone(b)})
	if s.sink != nil && len(s.dst) >= sinkEvents && !s.gone {
		s.gone = !s.sink(s.dst)
		clear(s.dst) // the messages go with the collector
		s.dst = s.dst[:0]
	}
}

// diff appends to dst the events a client at mark m has not seen of the
// view sv: within a step, the rest of that step first (its events after
// m's place, with that step's ids), then the step from its end to sv's
// cursor. A step's events: the session's state changes, then, by ticker
// of assets (sorted; nil: every asset of the view), the bars and
// corrections by minute and the quote, and the levels of index ix (nil:
// none) in its place among them. The bars are sv's: a minute changed
// since its step shows as it is now, and as a correction in the next.
// With sink set, the events are handed to it in order as they are made,
// at most sinkEvents at a time, and what is returned is the rest; once
// the sink returns false, the events not made yet are left unmade.
func (a *API) diff(dst []sseEvent, m *sseMark, sv *sseView, assets []*engine.Asset, ix *engine.IndexData, sink func([]sseEvent) bool) []sseEvent {
	if assets == nil {
		assets = viewAssets(sv.ev.Base)
	}
	if m.ticker != "\xff" {
		var gone bool
		if dst, gone = a.step(dst, m, m.to, sv, assets, ix, sink); gone {
			return dst
		}
		end := markAt(m.to)
		m = &end
	}
	if !sv.cur.after(m.to) {
		return dst // nothing new: a step the client has seen whole, or ahead of sv
	}
	dst, _ = a.step(dst, m, sv.cur, sv, assets, ix, sink)
	return dst
}

// step appends the events of the step to `to` that a client at mark m
// has not seen (m is within the step m.from..to, or at its start); with
// sink set, as diff does, and reports whether the sink wants no more.
func (a *API) step(dst []sseEvent, m *sseMark, to sseCursor, sv *sseView, assets []*engine.Asset, ix *engine.IndexData, sink func([]sseEvent) bool) ([]sseEvent, bool) {
	s := &stepper{dst: dst, mark: sseMark{from: m.to, to: to}, sink: sink}
	if m.ticker != "\xff" {
		s.mark.from = m.from
	}
	// The session's state changes since the state the client knows: at
	// a step's end, its end's; within a step past the session's events,
	// all of the step's; within them, the last it got.
	kn, kst := m.to.session, m.to.state
	if m.ticker == "" {
		kst = int(-m.part)
	}
	first := kst + 1
	if kn != to.session {
		first = sseOpen
	}
	if sv.v.eod {
		first = max(first, sseClosed) // the eod plan sees a session once it is over
	}
	if to.session.Valid() {
		for st := first; st <= to.state; st++ {
			s.emit("", kindSession, -int64(st), appendSessionEvent(s.data[:0], to.session, st))
		}
	}
	if !to.session.Valid() || to.state == sseNone {
		return s.dst, s.gone
	}
	symbol := ""
	if ix != nil {
		symbol = ix.Index.Symbol
	}
	done := false
	for _, as := range assets {
		if s.gone {
			return s.dst, true
		}
		if !done && symbol != "" && symbol < as.Ticker {
			a.levelEvents(s, m, to, sv, ix)
			done = true
		}
		a.tickerEvents(s, to, sv, as, knowledgeOf(m, as.Ticker))
	}
	if !done && symbol != "" && !s.gone {
		a.levelEvents(s, m, to, sv, ix)
	}
	return s.dst, s.gone
}

// viewAssets returns the assets of ds that trade (no macro series), by
// ticker.
func viewAssets(ds *engine.Dataset) []*engine.Asset {
	all := ds.Assets()
	out := make([]*engine.Asset, 0, len(all))
	for i := range all {
		if all[i].StockType != engine.ClassMacro {
			out = append(out, &all[i])
		}
	}
	slices.SortFunc(out, func(x, y *engine.Asset) int { return cmp.Compare(x.Ticker, y.Ticker) })
	return out
}

// sessionStart is the first instant of session sd's day (unix s).
func sessionStart(sd engine.Date) int64 { return int64(sd) * 86400 }

// changedMinutes returns the minutes before `before` of ticker t that a
// batch in (after, upto] of live changed, ascending, once each, with the
// latest batch that changed each.
func changedMinutes(l *engine.Live, t string, after, upto uint64, before int64) map[int64]uint64 {
	var out map[int64]uint64
	for _, c := range l.ChangesSince(after) {
		if c.Seq > upto {
			break
		}
		if c.Ticker != t || c.Minute >= before {
			continue
		}
		if out == nil {
			out = map[int64]uint64{}
		}
		out[c.Minute] = max(out[c.Minute], c.Seq)
	}
	return out
}

// tickerEvents appends the events of asset as a client with knowledge k
// has not seen: the new minutes' bars and the changed minutes'
// corrections, by minute, then its quote when any was sent (or due).
func (a *API) tickerEvents(s *stepper, to sseCursor, sv *sseView, as *engine.Asset, k knowledge) {
	l := sv.ev.Live
	if l == nil || l.Session != to.session {
		return // handed over: the snapshot has the session
	}
	if sv.v.eod {
		a.eodEvents(s, to, sv, as, k)
		return
	}
	from, partial := k.k, k.partial && k.to.session == to.session
	day := sessionStart(to.session)
	if from.session != to.session {
		from = sseCursor{session: to.session, at: day} // nothing of this session known before
	}
	// The minutes to send, and which are corrections.
	type minute struct {
		t    int64
		corr bool
	}
	var ms []minute
	// known reports whether the client saw minute m as of k.to (in the
	// part of its step it got).
	known := func(m int64) bool { return partial && m <= k.upTo && m < k.to.at }
	bars := sv.v.ev.AppendMinutes(nil, as, max(from.at, day), to.at-60, false)
	for i := range bars {
		if m := bars[i].Time; !known(m) {
			ms = append(ms, minute{t: m})
		}
	}
	if from.at > day {
		// Minutes the client had before from.at, changed since.
		after := changedMinutes(l, as.Ticker, from.seq, to.seq, from.at)
		var inStep, afterStep map[int64]uint64
		if partial {
			inStep = changedMinutes(l, as.Ticker, from.seq, k.to.seq, from.at)
			afterStep = changedMinutes(l, as.Ticker, k.to.seq, to.seq, k.to.at)
		}
		for m := range after {
			if _, seen := inStep[m]; seen && m <= k.upTo {
				if _, again := afterStep[m]; !again {
					continue // seen as of k.to, unchanged since
				}
			}
			ms = append(ms, minute{t: m, corr: true})
		}
	}
	if partial {
		// The step's new minutes the client saw, changed since.
		for m := range changedMinutes(l, as.Ticker, k.to.seq, to.seq, k.to.at) {
			if m >= from.at && known(m) {
				ms = append(ms, minute{t: m, corr: true})
			}
		}
	}
	if len(ms) == 0 && !partial {
		return
	}
	slices.SortFunc(ms, func(x, y minute) int { return cmp.Compare(x.t, y.t) })
	ms = slices.CompactFunc(ms, func(x, y minute) bool { return x.t == y.t })
	ref, prevF := prevClose(as, to.session)
	var cur [64]byte
	curr := appendStringOrNull(cur[:0], as.Currency)
	for _, m := range ms {
		bs := sv.v.ev.AppendMinutes(nil, as, m.t, m.t, false)
		kind := kindBar
		if m.corr {
			kind = kindCorrection
		}
		if len(bs) == 0 {
			if !m.corr {
				continue
			}
			s.data = appendRemoved(s.data[:0], as.Ticker, m.t)
		} else {
			b := &bs[0]
			r := ref
			if r.Valid() && prevF.Valid() && prevF != 0 {
				r = r * b.Factor / prevF
			}
			s.data = appendTickerBar(s.data[:0], as.Ticker, b, r, curr)
		}
		s.emit(as.Ticker, kind, m.t, s.data)
	}
	q := sv.v.quote(as)
	s.data = appendTickerQuote(s.data[:0], as.Ticker, &q, as.Currency)
	s.emit(as.Ticker, kindQuote, partQuote, s.data)
}

// eodEvents appends the eod plan's events of a session it sees whole: the
// day's bar and the quote, unless the client has them.
func (a *API) eodEvents(s *stepper, to sseCursor, sv *sseView, as *engine.Asset, k knowledge) {
	if to.state < sseClosed || k.k.session == to.session && k.k.state >= sseClosed {
		return
	}
	day := sessionStart(to.session)
	if !(k.partial && k.upTo >= day) {
		b, ok := sv.ev.LiveDaily(as, false)
		if !ok {
			return
		}
		ref, _ := prevClose(as, to.session)
		var cur [64]byte
		s.data = appendTickerBar(s.data[:0], as.Ticker, &b, ref, appendStringOrNull(cur[:0], as.Currency))
		s.emit(as.Ticker, kindBar, day, s.data)
	}
	q := sv.v.quote(as)
	s.data = appendTickerQuote(s.data[:0], as.Ticker, &q, as.Currency)
	s.emit(as.Ticker, kindQuote, partQuote, s.data)
}

// prevClose returns as's close of the session before sd, unadjusted, and
// its adjustment factor (Null when none): the reference of a bar's
// variation, as the intraday series have it.
func prevClose(as *engine.Asset, sd engine.Date) (engine.Num, engine.Num) {
	if k := as.DayIndex(sd - 1); k >= 0 {
		b := as.DailyBar(k, false)
		return b.Close, b.Factor
	}
	return engine.Null, engine.Null
}

// levelEvents appends the events of index ix's level the client at m has
// not seen: the levels of the new minutes (bars), of the minutes a
// member's change moved (corrections), and the current level (quote).
func (a *API) levelEvents(s *stepper, m *sseMark, to sseCursor, sv *sseView, ix *engine.IndexData) {
	l := sv.ev.Live
	sym := ix.Index.Symbol
	if l == nil || l.Session != to.session || sv.v.eod && to.state < sseClosed {
		return
	}
	k := knowledgeOf(m, sym)
	o := quoteOpts{typ: TypeHistorical, interval: 60, start: to.session, end: to.session, v: sv.v}
	if sv.v.eod {
		o.interval = dailyInterval
	}
	levels := indexBars(ix, &o)
	from := k.k
	day := sessionStart(to.session)
	if from.session != to.session {
		from = sseCursor{session: to.session, at: day}
	}
	changed := map[int64]bool{}
	partial := k.partial && k.to.session == to.session
	if from.session == to.session && from.at > day && !sv.v.eod {
		for _, c := range l.ChangesSince(from.seq) {
			if c.Seq <= to.seq && c.Minute < from.at {
				changed[c.Minute] = true
			}
		}
	}
	ref := ix.LevelOn(to.session - 1)
	sent := false
	for i := range levels {
		b := &levels[i]
		t := b.Time
		if sv.v.eod {
			t = day
		}
		var kind eventKind
		send := false
		switch {
		case sv.v.eod:
			if k.k.session != to.session || k.k.state < sseClosed {
				kind, send = kindBar, true
			}
		case t >= from.at && t < to.at:
			kind, send = kindBar, true
		case changed[t]:
			kind, send = kindCorrection, true
		}
		if !send || partial && t <= k.upTo && t < k.to.at {
			continue
		}
		s.data = appendTickerBar(s.data[:0], sym, b, ref, nullJSON)
		s.emit(sym, kind, t, s.data)
		sent = true
	}
	if sent || k.partial {
		o.typ = TypeCurrent
		s.data = append(s.data[:0], `{"ticker":`...)
		s.data = appendString(s.data, sym)
		s.data = append(s.data, `,"quote":`...)
		s.data = appendIndexCurrent(s.data, ix, &o)
		s.data = append(s.data, '}')
		s.emit(sym, kindQuote, partQuote, s.data)
	}
}

// appendSessionEvent appends a session event's data:
// {"session":"YYYY-MM-DD","state":"open"|"close"|"handover"}, or
// {"session":null,"state":"none"} before any.
func appendSessionEvent(dst []byte, sd engine.Date, state int) []byte {
	dst = append(dst, `{"session":`...)
	dst = appendDate(dst, sd)
	dst = append(dst, `,"state":"`...)
	dst = append(dst, sseStateNames[state]...)
	return append(dst, `"}`...)
}

// appendTickerBar appends a bar event's data: {"ticker":T,"bar":{…}}, the
// bar as an intraday historical quote's datapoint (unadjusted; ref the
// reference close of its variation, currency encoded).
func appendTickerBar(dst []byte, ticker string, b *engine.Bar, ref engine.Num, currency []byte) []byte {
	dst = append(dst, `{"ticker":`...)
	dst = appendString(dst, ticker)
	dst = append(dst, `,"bar":`...)
	dst = appendBar(dst, b, ref, currency, false)
	return append(dst, '}')
}

// appendRemoved appends the data of a correction that took minute m of
// ticker out (every trade cancelled): {"ticker":T,"date":…,"bar":null}.
func appendRemoved(dst []byte, ticker string, m int64) []byte {
	dst = append(dst, `{"ticker":`...)
	dst = appendString(dst, ticker)
	dst = append(dst, `,"date":`...)
	dst = appendUnix(dst, m)
	return append(dst, `,"bar":null}`...)
}

// appendTickerQuote appends a quote event's data: {"ticker":T,"quote":{…}},
// the current quote as GET /quotes/{ticker}?type=current has it
// (unadjusted).
func appendTickerQuote(dst []byte, ticker string, q *engine.Quote, currency string) []byte {
	dst = append(dst, `{"ticker":`...)
	dst = appendString(dst, ticker)
	dst = append(dst, `,"quote":`...)
	dst = appendQuote(dst, q, currency)
	return append(dst, '}')
}
