package httpapi

import (
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/mapfile"
)

// dsInfo is what the API derives once per Dataset (on the first request
// that sees it): work done once per snapshot, never per request.
type dsInfo struct {
	ds *engine.Dataset
	// latestVisible is the unix time from which every asset's Latest quote
	// is what QuoteAt answers.
	latestVisible int64
	// daily caches the encoded recent daily datapoints of each asset.
	daily *dailyCache
	// delayed and eod cache the quote view of the last cut-off seen: the
	// current quote of every asset, encoded, and the index rankings.
	delayed atomic.Pointer[quoteView]
	eod     atomic.Pointer[quoteView]
	// companies and catalogBody cache whole answers that depend only on
	// the Dataset and the query, encoded on first use: the companies list
	// per flag set (see companiesSlot) and the catalog per kind (see
	// catalogKinds).
	companies   [8 * 4]atomic.Pointer[cachedAnswer] // flag set × status filter
	catalogBody [4]atomic.Pointer[cachedAnswer]
	// cutCompanies are the companies lists with market caps priced at
	// the quote view of a valuation cut (valuer), per flag set × status
	// filter as companies: each the list of the last view seen, made
	// once per view as the screener's columns are (screens).
	cutCompanies [8 * 4]atomic.Pointer[cutList]
	cashAll      atomic.Pointer[cachedAnswer]    // the unfiltered cash-action list
	sectorsBody  [5]atomic.Pointer[cachedAnswer] // GET /sectors per level (0: all)

	// seed starts the ETags of the Dataset's answers: its snapshot's id
	// (Prepare), else random; lastModified is the snapshot's build time
	// (else the Dataset's as_of) as an HTTP date.
	seed         string
	lastModified []string
	lastMod      int64                                // lastModified as unix seconds
	etags        [etagSlots]atomic.Pointer[etagEntry] // see etag
	searchIx     searchIndex                          // folded names, on the first search
	screen       screenOnce                           // the screener's encoded pieces (screenEnc)
	past         pastOnce                             // and those of its rows at an as_of (pastHeads)
	// screens are the screener at the last view of each plan (delayed,
	// eod) that does not show the build-time prices (screenView).
	screens [2]atomic.Pointer[screenView]
	answers answerCache // answers kept (answercache.go)
	// prepared holds the GET answers named at their view, by path and
	// query (conditional.go).
	prepared [preparedSlots]atomic.Pointer[prepared]
	// prep is closed once the quote views of prepare are made (nil: none
	// to make; see viewsMade). Set before the dsInfo is shared.
	prep chan struct{}
}

// newInfo is newDSInfo with the API's answer-cache bound.
func (a *API) newInfo(ds *engine.Dataset) *dsInfo {
	in := newDSInfo(ds)
	in.answers.limit = a.cfg.AnswerCacheBytes
	in.answers.pool = &a.chunks
	in.answers.pages = &a.pages
	in.answers.evictions = a.m.answerEvict
	return in
}

func newDSInfo(ds *engine.Dataset) *dsInfo {
	in := &dsInfo{ds: ds, daily: newDailyCache(ds), seed: newSeed(), lastModified: []string{ds.AsOf().UTC().Format(http.TimeFormat)}, lastMod: ds.AsOf().Unix()}
	assets := ds.Assets()
	for i := range assets {
		q := &assets[i].Latest
		if !q.Valid() {
			continue
		}
		in.latestVisible = max(in.latestVisible, q.VisibleFrom())
	}
	return in
}

// info returns the dsInfo of ds, computing it on first use.
func (a *API) info(ds *engine.Dataset) *dsInfo {
	if in := a.dsnext.Load(); in != nil && in.ds == ds && a.store.Current() == ds {
		a.setInfo(in) // the prepared Dataset is published: its info is current
		a.dsnext.CompareAndSwap(in, nil)
		return in
	}
	if in := a.dsinfo.Load(); in != nil && in.ds == ds {
		return in
	}
	in := a.dsnext.Load()
	if in == nil || in.ds != ds {
		in = a.newInfo(ds)
	}
	a.setInfo(in) // requests on a replaced Dataset keep the current info
	return in
}

// Published makes the info of the store's current Dataset the API's
// current one (the one Prepare made for it, if any) and closes the answer
// cache of the Dataset it replaces. Call it right after each
// engine.Store.Publish: until then, or until the first request that sees
// the new Dataset, the API holds the replaced Dataset, its answer cache
// and its quote views, and an idle server keeps two Datasets.
func (a *API) Published() {
	if ds := a.store.Current(); ds != nil {
		a.info(ds)
	}
}

// setInfo makes in the current dsInfo when its Dataset is the store's
// current one; the answer cache of the one it replaces, of another
// Dataset, is closed (its chunks go back to the pool). A request on a
// Dataset replaced meanwhile never puts its info back: the swap is a
// compare-and-swap against what was current when the store still had in's
// Dataset, so that an info set by Published after the publish stays.
func (a *API) setInfo(in *dsInfo) {
	for {
		old := a.dsinfo.Load()
		if old == in || a.store.Current() != in.ds {
			return
		}
		if a.dsinfo.CompareAndSwap(old, in) {
			if old != nil && old.ds != in.ds {
				old.answers.close()
			}
			return
		}
	}
}

// Prepare computes for ds, before it is published, what Warm computes for
// the current Dataset, and records the id and build time of its snapshot
// (the ETags' prefix and the answers' Last-Modified), so that the first requests after the publish find
// it ready; requests on the Dataset being replaced are not disturbed.
func (a *API) Prepare(ds *engine.Dataset, id string, built time.Time) {
	a.prepare(ds, id, built)()
}

// PrepareLater is Prepare, but the quote views of both plans (about
// 0.25 s of CPU at demo scale 10) are made in a goroutine of their own:
// it returns once the id and build time are recorded, so that a first
// snapshot is published (and the server ready) without waiting for them.
// A request that needs one of those views before it is made waits for it
// (dsInfo.viewsMade), so answers are those of Prepare's.
func (a *API) PrepareLater(ds *engine.Dataset, id string, built time.Time) {
	views := a.prepare(ds, id, built)
	go func() {
		// A fault reading the snapshot's mapped file (cut in place)
		// fails the Dataset instead of ending the process; the requests
		// waiting for the views are let go (prepare's views close its
		// channel however they end).
		debug.SetPanicOnFault(true)
		defer func() { mapfile.Catch(recover(), ds.Fail) }()
		views()
	}()
}

// prepare records what Prepare records and returns the function that
// makes the quote views; until it returns, requests that need them wait
// (dsInfo.viewsMade).
func (a *API) prepare(ds *engine.Dataset, id string, built time.Time) (views func()) {
	in := a.newInfo(ds)
	if id != "" {
		in.seed = id
	}
	if !built.IsZero() {
		in.lastModified, in.lastMod = []string{built.UTC().Format(http.TimeFormat)}, built.Unix()
	}
	// The clock is read now: the views are those of the clock at Prepare.
	now := a.clock.Now()
	if _, ok := a.clock.(SnapshotClock); ok {
		now = ds.AsOf()
	}
	done := make(chan struct{})
	in.prep = done
	a.dsnext.Store(in)
	return func() {
		defer close(done)
		if beforePrepViews != nil {
			beforePrepViews()
		}
		// The screener's rows (0.5 ms at demo scale 1); the search index is
		// left to the first search (13 ms there, ~0.2 s for ten times the
		// issuers: not worth a longer load). A snapshot whose blocks are
		// verified on first use leaves the rows to the first screener
		// request too: they read every company's ratio points
		// (Dataset.Screener), which that request verifies first.
		if ds.Blocks() == nil {
			in.screenEnc()
		}
		c := &call{ds: ds, now: now, key: KeyEntry{Plan: PlanDelayed}, s: new(scratch)}
		a.viewIn(c, in)
		c.key.Plan = PlanEOD
		a.viewIn(c, in)
	}
}

// beforePrepViews, when set (tests), runs before prepare makes the views.
var beforePrepViews func()

// viewsMade waits until the quote views Prepare or PrepareLater makes for
// the Dataset are made (at once when there are none to make).
func (in *dsInfo) viewsMade() {
	if in.prep != nil {
		<-in.prep
	}
}

// brt is the B3 market's time zone (UTC-3, no daylight saving since 2019).
var brt = time.FixedZone("BRT", -3*3600)

// sessionDate returns the market date of t (its calendar day in UTC-3).
func sessionDate(t time.Time) engine.Date {
	y, m, d := t.In(brt).Date()
	return engine.MakeDate(y, m, d)
}

// view is what a request's plan may see.
type view struct {
	eod bool
	// cutoff (delayed plans): data complete by this unix time is visible.
	cutoff int64
	// before (eod plans): only sessions strictly before this date.
	before engine.Date
	// qv is the precomputed view when there is one (else nil: compute);
	// eod views and views with a live session always have one.
	qv *quoteView
	// ev is what the request sees: the Dataset and the live session.
	ev engine.View
}

// viewKey names a quote view: the cut-off (delayed plans: the unix time
// of its minute; eod plans: the before date) and, when the live session
// shows there, its day and its revision at the cut-off (RevAt).
type viewKey struct {
	at      int64
	session engine.Date
	rev     uint64
}

// delayedKey returns the delayed plan's view key at the request's clock:
// the cut-off (now − QuoteDelay) as its minute, no later than the time
// from which everything is visible, and the live session's revision
// there. moving reports that answers at this key can still change with
// the clock or the feed: the cut-off is short of the data, or a live
// session is not complete.
func (a *API) delayedKey(c *call, in *dsInfo) (k viewKey, moving bool) {
	if c.vkOK { // once per request: the answer's key and the view share it
		return c.vk, c.vkMoving
	}
	defer func() { c.vk, c.vkMoving, c.vkOK = k, moving, true }()
	cutoff := c.now.Add(-QuoteDelay).Unix()
	visible := in.visible(c)
	at := min(cutoff, visible)
	k.at = at - (at%60+60)%60 // its minute: the bars complete by then are the same
	moving = cutoff < visible
	if l := c.live; l != nil {
		k.session, k.rev = l.Session, l.RevAt(k.at)
		moving = moving || !l.Complete
	}
	return k, moving
}

// eodKey returns the eod plan's view key: the market date of now, and a
// complete live session dated before it (its revision: its last batch).
func eodKey(c *call) viewKey {
	return cutKey(c, sessionDate(c.now))
}

// visible returns the unix time from which a delayed cut-off sees
// everything of c's view: the Dataset's latest quotes and the live
// session's watermark and close (engine.View.Visible).
func (in *dsInfo) visible(c *call) int64 {
	v := in.latestVisible
	if l := c.live; l != nil {
		ev := engine.View{Base: c.ds, Live: l}
		v = ev.Visible(v)
	}
	return v
}

// The valuations' cut: one rule for both plans.
//
// A valuation point (market cap, enterprise value, a price multiple,
// the dividend yield) at the session of D is D's close times a
// per-share figure: a key whose quote view does not show D's close yet
// must not see it. valuationCut says when a key's view leaves out the
// Dataset's last session; while it does, the valuation routes leave
// out the points dated on or after the cut, and their TTM series end
// at the session the view shows complete (the last before the cut),
// priced at that view's closes (valuer): the eod plan's quotes before
// the market date of now (the evening of the snapshot's last session),
// the delayed plan's within 15 minutes of the snapshot's last data (or
// of a live session's last trade, once the snapshot holds that
// session), when its cut-off is before that session's close. The
// routes that show valuations (Route.valued) name that view in their
// answers' keys (valuedKey), and the ratios file is withheld while the
// cut applies (valuationsHidden).

// valuationCut returns the first session date whose valuation points
// c's answers leave out, 0 (no cut) when its key's view shows the
// Dataset's last session: for an eod key, the market date of now, when
// the Dataset holds a session of that date or a later one; for a
// delayed key, the Dataset's last session while its cut-off (now − 15
// min) is before that session's close and short of the data. 0 for a
// key without a plan.
func (a *API) valuationCut(c *call) engine.Date {
	switch c.key.Plan {
	case PlanEOD:
		today := sessionDate(c.now)
		if c.ds.LastSession() < today {
			return 0
		}
		return today
	case PlanDelayed:
		last := c.ds.LastSession()
		if !last.Valid() || c.now.Unix() >= a.delayedCutEnds(c, last) {
			return 0
		}
		return last
	}
	return 0
}

// delayedCutEnds returns when a delayed key's valuation cut at the
// Dataset's last session (last) ends, in unix seconds: QuoteDelay after
// the session's close (engine.SessionComplete) or after the end of the
// view's data (visible), whichever comes first: a snapshot whose last
// session holds 1-minute bars ending before the close shows that
// session's quotes 15 minutes after its last bar.
func (a *API) delayedCutEnds(c *call, last engine.Date) int64 {
	return min(engine.SessionComplete(last), a.info(c.ds).visible(c)) + int64(QuoteDelay/time.Second)
}

// cutKey returns the key of the quote view of every ticker's last daily
// session before the date cut (the eod plan's view of that market date,
// eodKey; the view a valuation cut at cut is priced at, valuer): the
// date, and a complete live session dated before it (its revision: its
// last batch).
func cutKey(c *call, cut engine.Date) viewKey {
	k := viewKey{at: int64(cut)}
	if l := c.live; l != nil && l.Session < cut {
		k.session, k.rev = l.Session, l.Seq
	}
	return k
}

// valuedKey returns the view key of an answer of a route that shows
// valuations (Route.valued) for c's key, and whether it may change with
// the clock at that key: an eod key's is its plan's (eodKey); a delayed
// key's names the cut while one applies (the answer changes once the
// cut-off passes the session's close), else none (the Dataset's
// points).
func (a *API) valuedKey(c *call) (k viewKey, moving bool) {
	switch c.key.Plan {
	case PlanEOD:
		return eodKey(c), false
	case PlanDelayed:
		if cut := a.valuationCut(c); cut != 0 {
			return cutKey(c, cut), true
		}
	}
	return viewKey{}, false
}

// valuer prices a key's valuations while its answers leave out the
// Dataset's last session (valuationCut): at the session before the cut,
// the one its quote view shows complete. nil: no cut (the Dataset's own
// points).
type valuer struct {
	cut     engine.Date // the first session left out
	session engine.Date // the session priced: the last before cut
	closeOf func(ticker string) engine.Num
}

// cutView returns the quote view the valuations of c are priced at
// while cut applies: every ticker's last daily session before cut, kept
// in the eod plan's slot (for an eod key it is its plan's quote view;
// for a delayed key within its delay, the same view of the market date
// of the session cut). With build unset it is only looked up (nil when
// not made); the one pinned on c (valuedBlocks) comes first.
func (in *dsInfo) cutView(c *call, cut engine.Date, build bool) *quoteView {
	ev := engine.View{Base: c.ds, Live: c.live}
	return in.cached(c, &in.eod, cutKey(c, cut), build, func(as *engine.Asset) (engine.Quote, bool) {
		return ev.QuoteBefore(as, cut), c.live == nil && as.QuoteBeforeReadsNoBar(cut)
	})
}

// valuer returns c's valuer, nil when its answers leave nothing out.
func (a *API) valuer(c *call) *valuer {
	cut := a.valuationCut(c)
	if cut == 0 {
		return nil
	}
	// The view's quotes: made from the series' summaries (Prepare makes
	// the eod plan's before the snapshot is served), so that a company
	// route reads no bar block, and pinned on c by valuedBlocks; else
	// made here, the request having verified every block (valuedBlocks
	// declared BlocksAll). The session priced is the view's last (its
	// movers'); the Dataset's calendar would read every ticker's dates.
	in := a.info(c.ds)
	in.viewsMade()
	qv := in.cutView(c, cut, true)
	if !qv.session.Valid() || qv.session >= cut {
		return &valuer{cut: cut}
	}
	ds, L := c.ds, qv.session
	return &valuer{cut: cut, session: L, closeOf: func(tk string) engine.Num {
		as, ok := ds.Asset(tk)
		if !ok {
			return engine.Null
		}
		q := qv.quotes[qv.index(as)]
		if !q.Valid() || q.Date > L || q.Date < L-engine.MaxPriceAge {
			return engine.Null
		}
		return q.Close
	}}
}

// cutDate returns the first session e leaves out, 0 for none.
func (e *valuer) cutDate() engine.Date {
	if e == nil {
		return 0
	}
	return e.cut
}

// valuation returns the TTM valuation of is that a key's answers end its
// valuation series with while a cut applies (nil when e is nil or there
// is none): the company's valuation at e's session from everything the
// Dataset holds, priced at the view's quotes
// (engine.Dataset.SessionValuationOn), as the eod plan's screener prices
// it. Its dividend yield counts the cash actions: the route that calls
// it waits for the deferred kinds (readsDeferred, valuing).
func (e *valuer) valuation(ds *engine.Dataset, is *engine.Issuer) *engine.SessionValuation {
	if e == nil || e.closeOf == nil {
		return nil
	}
	return ds.SessionValuationOn(is, e.session, e.closeOf)
}

// marketCap is valuation with the MARKET_CAP and ENTERPRISE_VALUE
// points only (show_market_cap): no cash counted, no deferred kind read.
func (e *valuer) marketCap(ds *engine.Dataset, is *engine.Issuer) *engine.SessionValuation {
	if e == nil || e.closeOf == nil {
		return nil
	}
	var ids []uint16
	for _, id := range []string{"MARKET_CAP", "ENTERPRISE_VALUE"} {
		if k, ok := ds.IndicatorIndex(engine.IndValuation, id); ok {
			ids = append(ids, uint16(k))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return ds.SessionValuationOn(is, e.session, e.closeOf, ids...)
}

// valuing reports whether c's answer may count cash actions in a
// valuation of the session before a cut (valuer.valuation): the
// valuation ratios, while its key's view leaves out the Dataset's last
// session. (show_market_cap's points count none: valuer.marketCap.)
func (a *API) valuing(c *call) bool {
	return strings.HasPrefix(c.route.Path, routeValuation) && a.valuationCut(c) != 0
}

// valuedBlocks is what the valuations of a request of a route that
// shows them (Route.valued) read of the column blocks beyond the
// company's ratio points: none when no cut applies, or when the view
// they are priced at (cutView) is made and was made reading no block
// (then pinned on c, so that the handler prices at it though another
// request may replace the kept one); else any (the view is made from
// the bars, by the handler).
func (a *API) valuedBlocks(c *call) BlockScope {
	cut := a.valuationCut(c)
	if cut == 0 {
		return BlocksNone
	}
	in := a.info(c.ds)
	in.viewsMade()
	qv := in.cutView(c, cut, false)
	if qv == nil || !qv.noBlock {
		return BlocksAll
	}
	c.pin = qv
	return BlocksNone
}

// quoteView is the current quote of every asset as seen at one cut-off,
// with the encoded datapoints and the index rankings. Immutable.
type quoteView struct {
	key    viewKey
	assets []engine.Asset
	quotes []engine.Quote
	raw    [][]byte // encoded current datapoint, unadjusted
	adj    [][]byte // encoded current datapoint, adjusted
	highs  [][]engine.RankEntry
	lows   [][]engine.RankEntry
	// movers: the last session of the view and its gainers and losers.
	session        engine.Date
	gainers, loser []engine.RankEntry
	// noBlock: making the view read no column block of a mapped snapshot
	// (its quotes came from the series' summaries, verified at open, or
	// from the heap), so that a ranking answers from it with no block
	// verified (pricedBlocks).
	noBlock bool
}

// view returns what the request's plan sees. The quote view of a cut-off
// is computed once and kept (one per plan, the last one asked): at the
// snapshot clock's cut-off, past the data (the steady state of the wall
// clock), and at every minute of a live session, so that a live answer
// for a given minute and revision is computed once, not per request.
func (a *API) view(c *call) view {
	in := a.info(c.ds)
	in.viewsMade()
	return a.viewIn(c, in)
}

// viewIn is view, with the Dataset's dsInfo in.
func (a *API) viewIn(c *call, in *dsInfo) view {
	ev := engine.View{Base: c.ds, Live: c.live}
	if c.key.Plan == PlanEOD {
		v := view{eod: true, before: sessionDate(c.now), ev: ev}
		v.qv = in.cached(c, &in.eod, eodKey(c), true, func(as *engine.Asset) (engine.Quote, bool) {
			return ev.QuoteBefore(as, v.before), c.live == nil && as.QuoteBeforeReadsNoBar(v.before)
		})
		return v
	}
	k, _ := a.delayedKey(c, in)
	v := view{cutoff: c.now.Add(-QuoteDelay).Unix(), ev: ev}
	build := c.live != nil || k.at == in.latestVisible || c.now.Equal(c.ds.AsOf())
	v.qv = in.cached(c, &in.delayed, k, build, func(as *engine.Asset) (engine.Quote, bool) {
		if c.live == nil && k.at == in.latestVisible {
			return as.Latest, true // from the summaries
		}
		return ev.QuoteAt(as, k.at), false
	})
	return v
}

// cached returns the quote view of key: the one pricedBlocks pinned on c,
// else the one of slot, built when build is set and the slot holds
// another key; nil when it is not built. quote gives an asset's quote in
// the view, and whether it read no column block.
func (in *dsInfo) cached(c *call, slot *atomic.Pointer[quoteView], key viewKey, build bool, quote func(*engine.Asset) (engine.Quote, bool)) *quoteView {
	if qv := c.pin; qv != nil && qv.key == key {
		return qv
	}
	if qv := slot.Load(); qv != nil && qv.key == key {
		return qv
	}
	if !build {
		return nil
	}
	qv := newQuoteView(in.ds, key, quote)
	slot.Store(qv)
	return qv
}

// pricedBlocks is Route.blocksFor of the rankings (index highs and lows,
// variations), which answer from the plan's quote view: BlocksNone when
// that view is made already and was made reading no column block (the
// latest quotes, or an end-of-day view the summaries hold, as Prepare
// makes them before the snapshot is ready, or PrepareLater just after:
// until then, this waits for them). The view is pinned on c, so
// that the handler answers from it though another request may replace
// the kept one meanwhile. BlocksAll when the view is still to be made
// (another cut-off or day), or was made from the bars (a live session, a
// session older than the summaries hold).
func pricedBlocks(a *API, c *call, _ *http.Request) BlockScope {
	in := a.info(c.ds)
	in.viewsMade()
	var qv *quoteView
	var key viewKey
	if c.key.Plan == PlanEOD {
		qv, key = in.eod.Load(), eodKey(c)
	} else {
		qv = in.delayed.Load()
		key, _ = a.delayedKey(c, in)
	}
	if qv == nil || qv.key != key || !qv.noBlock {
		return BlocksAll
	}
	c.pin = qv
	return BlocksNone
}

func newQuoteView(ds *engine.Dataset, key viewKey, quote func(*engine.Asset) (engine.Quote, bool)) *quoteView {
	assets := ds.Assets()
	qv := &quoteView{key: key, assets: assets, quotes: make([]engine.Quote, len(assets)),
		raw: make([][]byte, len(assets)), adj: make([][]byte, len(assets)), session: engine.NoDate, noBlock: true}
	var buf []byte
	for i := range assets {
		q, noBlock := quote(&assets[i])
		// The movers' complete session of a running one (completeQuote).
		qv.noBlock = qv.noBlock && noBlock && (!q.Valid() || !q.Intraday || assets[i].QuoteBeforeReadsNoBar(q.Date))
		qv.quotes[i] = q
		start := len(buf)
		buf = appendQuote(buf, &q, assets[i].Currency)
		mid := len(buf)
		aq := q.Adjusted()
		buf = appendQuote(buf, &aq, assets[i].Currency)
		qv.raw[i] = buf[start:mid:mid]
		qv.adj[i] = buf[mid:len(buf):len(buf)]
		if len(buf) > 1<<20 {
			buf = nil // start a new block; the slices keep the old one
		}
	}
	ixs := ds.Indexes()
	qv.highs = make([][]engine.RankEntry, len(ixs))
	qv.lows = make([][]engine.RankEntry, len(ixs))
	for i := range ixs {
		var es []engine.RankEntry
		for _, m := range ixs[i].Members {
			if m == nil {
				continue // no security: no quote to rank
			}
			if q := qv.quotes[qv.index(m)]; q.Variation.Valid() {
				es = append(es, engine.RankEntry{Asset: m, Quote: q})
			}
		}
		es = ixs[i].KeepCurrent(es) // stale members (delisted...) are not ranked
		sortRanks(es, false)
		qv.highs[i] = es
		qv.lows[i] = slices.Clone(es)
		sortRanks(qv.lows[i], true)
	}
	qv.session, qv.gainers = appendMovers(nil, assets, func(i int) engine.Quote { return qv.quotes[i] })
	sortRanks(qv.gainers, false)
	qv.loser = slices.Clone(qv.gainers)
	sortRanks(qv.loser, true)
	return qv
}

// completeQuote returns q when it is a complete daily session, else (a
// session still running, from 1-minute bars) the asset's previous daily
// session.
func completeQuote(as *engine.Asset, q engine.Quote) engine.Quote {
	if q.Valid() && q.Intraday {
		return as.QuoteBefore(q.Date)
	}
	return q
}

// appendMovers appends to dst the movers of the previous session: the last
// complete session among the non-macro assets' quotes (quote(i) is asset
// i's quote in the view), and every such asset whose complete quote is of
// that session with a valid variation, unsorted.
func appendMovers(dst []engine.RankEntry, assets []engine.Asset, quote func(i int) engine.Quote) (engine.Date, []engine.RankEntry) {
	session := engine.NoDate
	start := len(dst)
	for i := range assets {
		as := &assets[i]
		if as.StockType == engine.ClassMacro {
			continue
		}
		q := completeQuote(as, quote(i))
		if !q.Valid() || q.Date < session {
			continue
		}
		if q.Date > session {
			session = q.Date
			dst = dst[:start]
		}
		if q.Variation.Valid() {
			dst = append(dst, engine.RankEntry{Asset: as, Quote: q})
		}
	}
	return session, dst
}

// index returns the position of as in the Dataset's assets (as must be
// one of them).
func (qv *quoteView) index(as *engine.Asset) int {
	i := as.Pos()
	if i >= len(qv.assets) || &qv.assets[i] != as {
		panic("BUG: asset outside the dataset")
	}
	return i
}

// quote returns the asset's quote in view v.
func (v view) quote(as *engine.Asset) engine.Quote {
	switch {
	case v.qv != nil:
		return v.qv.quotes[v.qv.index(as)]
	case v.eod:
		return v.ev.QuoteBefore(as, v.before)
	}
	return v.ev.QuoteAt(as, v.cutoff)
}

// cutList is a whole answer made at the quote view of key (cutKey).
type cutList struct {
	key viewKey
	a   *cachedAnswer
}

// screenView is the screener at one plan's view: the prices it shows
// (engine.Screener.Priced) and their encoding.
type screenView struct {
	key viewKey
	e   *screenEnc
}

// screenView returns the screener as the request's plan sees it: the
// build-time columns when the view's quotes are the Dataset's latest (the
// delayed plan past the data, without a live session), else the columns
// repriced at the view's quotes, computed once per view key (a minute and
// a live revision) and plan.
func (a *API) screenView(c *call) *screenEnc {
	in := a.info(c.ds)
	var k viewKey
	slot := &in.screens[0]
	if c.key.Plan == PlanEOD {
		k, slot = eodKey(c), &in.screens[1]
	} else if k, _ = a.delayedKey(c, in); c.live == nil && k.at == in.latestVisible {
		return in.screenEnc()
	}
	if sv := slot.Load(); sv != nil && sv.key == k {
		return sv.e
	}
	v := a.view(c)
	s := c.ds.Screener()
	sv := &screenView{key: k, e: newScreenEnc(s, s.Priced(v.quote))}
	slot.Store(sv)
	return sv.e
}

// liveDay returns the live session's daily bar of as when v shows it: the
// session is complete, over (its date is within lastDate) and within
// [from, to].
func (v view) liveDay(as *engine.Asset, from, to engine.Date, adjusted bool) (engine.Bar, bool) {
	l := v.ev.Live
	if l == nil || l.Session > v.lastDate() || from.Valid() && l.Session < from || to.Valid() && l.Session > to {
		return engine.Bar{}, false
	}
	return v.ev.LiveDaily(as, adjusted)
}

// lastDate returns the last session date visible in v.
func (v view) lastDate() engine.Date {
	if v.eod {
		return v.before - 1
	}
	d := engine.Date(v.cutoff / 86400)
	if v.cutoff < engine.SessionComplete(d) {
		d--
	}
	return d
}

// The eod plan's history: one rule for every route that shows prices.
//
// An eod key sees the prices of one session per ticker: its last session
// before the market date of now (D-1; the live session's once it is a
// previous session), the one its current quote shows. Quotes, index
// levels and rankings answer that session; a total return is the window
// of that one session; a CSV is the same answer as text; a file or a
// stream of prices (routes to come) holds that session only. An option
// that asks for another session (start_date, end_date, a quote type or
// interval, the screener's as_of) is a 403 that names what was sent
// (eodHistory), never a silently longer answer. Every priced route calls
// eodHistory with the options it was sent, and shows an eod key the
// sessions eodSession gives, or none.

// eodHistory applies the eod plan's rule to the request of c, which sent
// the options named in sent (those that would show another session than
// D-1): nil when its key's plan is not eod or nothing was sent, else the
// 403 naming them.
func eodHistory(c *call, sent []string) error {
	if c.key.Plan != PlanEOD || len(sent) == 0 {
		return nil
	}
	return errorf(http.StatusForbidden, "your plan (%s) does not include %s: it gives previous-session (D-1) prices only (on quote routes, only adjusted)", PlanEOD, joinAnd(sent))
}

// eodSession returns the one session of as an eod view shows (its last
// session before v.before, live or not), or NoDate when it has none. v
// must be an eod view.
func (v view) eodSession(as *engine.Asset) engine.Date {
	q := v.quote(as)
	if !q.Valid() {
		return engine.NoDate
	}
	return q.Date
}

// indexPos returns the position of ix in ixs, the indexes of its Dataset.
func indexPos(ixs []engine.IndexData, ix *engine.IndexData) int {
	i := ix.Pos()
	if i >= len(ixs) || &ixs[i] != ix {
		panic("BUG: index outside the dataset")
	}
	return i
}
