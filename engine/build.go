package engine

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pregao/pregao/index"
)

// Build indexes u and computes every derived structure (joined histories,
// adjustment factors, latest quotes, rankings, screener columns)
// once. The Dataset owns u: neither u nor anything it references may be
// modified afterwards. Build never modifies u.
//
// Build checks the invariants it relies on and returns an error wrapping
// ErrInvalid naming the offending entity when one is broken: empty or
// duplicate ids, tickers, symbols or CVM codes; unknown company ids,
// tickers or sector ids; series whose columns differ in length or whose
// dates (times) are not strictly ascending; rename cycles; non-positive
// split, reverse-split or bonus factors; ratio points outside the catalog.
func Build(u *Universe) (d *Dataset, err error) {
	return BuildWith(u, BuildOptions{})
}

// BuildOptions are how Build spends the machine.
type BuildOptions struct {
	// Serial builds in the calling goroutine only. By default independent
	// steps run beside each other and row-wise steps over GOMAXPROCS
	// goroutines; a caller that runs Build on a thread of its own (a
	// reload on a low-priority thread, while requests are served) sets
	// Serial so that no step competes with the requests.
	Serial bool
	// OrderChecked skips Build's check that the daily series' dates and
	// the intraday series' times are valid and ascending, which reads
	// every bar's key: the caller has checked them, or checks them before
	// any use of the Dataset reads the series (a format 6 snapshot checks
	// each block's series with its checksum, Dataset.CheckAsset). The
	// columns' lengths are still checked.
	OrderChecked bool
	// RatiosChecked makes Build read no ratio point: the company points'
	// runs are Derived.RatioRuns, and each company's series are made on
	// its first use (Issuer.Ratios), as are the screener's ratio columns
	// (Dataset.Screener). The caller checks each company's points before
	// any use reads them (Dataset.CheckIssuer; a format 6 snapshot checks
	// a block's points with its checksum): in order, of one company,
	// their indicators in the catalog and their variables in RatioVars.
	RatiosChecked bool
	// FundRatiosChecked makes Build read no fund ratio point: the fund
	// points' runs are Derived.FundRuns, and each fund's series are made
	// on its first use (Issuer.FundRatios). The caller checks each fund's
	// points before any use reads them (Dataset.CheckIssuer; a format 6
	// snapshot checks a block's points with its checksum): in order, of
	// one fund, their indicators in the catalog and their sources in
	// FundSources.
	FundRatiosChecked bool
	// CashSorted skips Build's check that Universe.CashActions are in
	// CompareCashRows order, which compares every row with the next: the
	// caller has checked it (a format 6 snapshot stores them in that order
	// and its load refuses a file out of it). Rows out of that order with
	// CashSorted set are kept as they are: the cash lists and answers
	// built from them are then wrong.
	CashSorted bool
	// Deferred builds the Dataset without its deferred kinds (cash
	// actions, fund reports, insider reports and documents: see
	// Dataset.FinishDeferred), which the Universe need
	// not hold yet: they are added by FinishDeferred, and whatever reads
	// them waits until then.
	Deferred bool
}

// BuildWith is Build with options.
func BuildWith(u *Universe, opt BuildOptions) (d *Dataset, err error) {
	if u == nil {
		return nil, fmt.Errorf("build: nil universe: %w", ErrInvalid)
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("build: BUG: %v: %w", r, ErrInvalid)
		}
	}()
	b := &builder{u: u, d: &Dataset{u: u, lastSession: NoDate}, lastIssuer: -1, serial: opt.Serial, ordered: opt.OrderChecked, ratiosChecked: opt.RatiosChecked && u.Derived.RatioRuns != nil, fundsChecked: opt.FundRatiosChecked && u.Derived.FundRuns != nil, cashSorted: opt.CashSorted, deferKinds: opt.Deferred}
	if opt.Deferred {
		b.d.deferred = &deferredState{done: make(chan struct{}), opt: opt}
	}
	b.d.rules = readPriceRules(u.Derived.Catalog) // read by buildRatios and the Screener
	for _, step := range []func() error{b.buildSectors, b.buildIssuers} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	// buildRatios reads only the issuers and the catalog's price rules and
	// writes only the issuers' ratio and fund ratio series, which only the
	// screener reads: it runs beside every step before the screener.
	// (FirstPublished's pass is made on first use.) buildCash reads only the
	// issuers, assets and adjustment factors and writes only the cash
	// lists (and the ex-cash of the total return, ExCash), which no other
	// step reads: it runs beside every step after the adjustment factors.
	// Errors are reported in step order, as if the steps ran in sequence
	// (renames, assets, daily, intraday, adjustments, quotes, issuer
	// lists, cash, catalog, ratios, indexes).
	waitRatios := b.beside((*builder).buildRatios)
	for _, step := range []func() error{b.buildRenames, b.buildAssets, b.buildDaily, b.buildIntraday, b.buildAdjust} {
		if err := step(); err != nil {
			waitRatios()
			return nil, err
		}
	}
	waitCash := func() error { return nil }
	if !b.deferKinds {
		waitCash = b.beside((*builder).buildCash)
	}
	err = b.buildQuotes()
	if err == nil {
		err = b.buildIssuerLists()
	}
	if err != nil {
		waitRatios()
		waitCash()
		return nil, err
	}
	err = b.buildCatalog()
	var ixErr error
	if err == nil {
		if ixErr = b.buildIndexes(); ixErr == nil {
			b.buildRankings()
		}
	}
	if rerr := waitRatios(); err == nil {
		err = rerr
	}
	if err == nil {
		err = ixErr
	}
	if err == nil {
		b.buildScreener()
	}
	if cerr := waitCash(); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	// The Dataset holds the daily histories compactly (Asset.Daily); its
	// Universe leaves out the wide series, so that a caller that drops u
	// lets them be collected.
	uu := *u
	uu.Daily = nil
	b.d.u = &uu
	return b.d, nil
}

// beside runs step in its own goroutine on a copy of b (issuerIdx's cache
// is per builder) and returns a function that waits for it and returns
// its error; a panic of step becomes an ErrInvalid error, as in Build.
// A serial builder runs step at once and keeps its error for wait.
func (b *builder) beside(step func(*builder) error) (wait func() error) {
	cb := *b
	cb.lastIssuer = -1
	if b.serial {
		err := step(&cb) // a panic reaches Build's recover
		return func() error { return err }
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("build: BUG: %v: %w", r, ErrInvalid)
			}
		}()
		// A fault reading a mapped file (its snapshot cut in place
		// while it loads) is an error of the build, not the process's
		// end.
		debug.SetPanicOnFault(true)
		done <- step(&cb)
	}()
	return func() error { return <-done }
}

// parallelFor runs f(0..n-1) on up to GOMAXPROCS goroutines (one, the
// caller's, for a serial builder) and returns when every call has. A
// panic of f (a fault reading a mapped file among them) stops the others
// and is raised again in the caller's goroutine.
func (b *builder) parallelFor(n int, f func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if b.serial {
		w = 1
	}
	if w <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[any] // the first panic of a goroutine
	for range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					failed.CompareAndSwap(nil, &r)
					next.Store(int64(n)) // the others stop
				}
			}()
			debug.SetPanicOnFault(true) // a fault reading a mapped file panics
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		}()
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		panic(*p) // in the caller's goroutine: Build's recover makes it an error
	}
}

type builder struct {
	u *Universe
	d *Dataset

	renameTo map[string]*TickerRename // former ticker -> its rename
	preds    map[string][]*TickerRename
	openRead map[int32]bool // assets whose daily bars Build read (readAtOpen)
	dailyOf  map[string]*Series
	intraOf  map[string]*Intraday

	lastIssuer int32 // issuerIdx's cache (inputs are grouped by company); -1 none
	serial     bool  // BuildOptions.Serial
	ordered    bool  // BuildOptions.OrderChecked
	// ratiosChecked is BuildOptions.RatiosChecked.
	ratiosChecked bool
	fundsChecked  bool // BuildOptions.FundRatiosChecked, with FundRuns
	cashSorted    bool // BuildOptions.CashSorted
	deferKinds    bool // BuildOptions.Deferred: the deferred kinds' steps are FinishDeferred's
}

func invalid(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrInvalid)...)
}

func upper(s string) string { return strings.ToUpper(strings.TrimSpace(s)) }

// cvmKey normalizes a CVM code: upper case, leading zeros dropped
// ("009512" and "9512" are one code).
func cvmKey(code string) string {
	k := strings.TrimLeft(upper(code), "0")
	if k == "" && strings.Contains(code, "0") {
		return "0"
	}
	return k
}

func (b *builder) buildIssuers() error {
	u, d := b.u, b.d
	d.issuers = make([]Issuer, len(u.Companies))
	for i := range u.Companies {
		d.issuers[i].Company = &u.Companies[i]
		d.issuers[i].deferred = d.deferred
	}
	slices.SortFunc(d.issuers, func(x, y Issuer) int { return strings.Compare(upper(x.ID), upper(y.ID)) })
	var byID, bySym, byCVM index.Builder[int32]
	for i := range d.issuers {
		is := &d.issuers[i]
		c := is.Company
		id := upper(c.ID)
		if id == "" {
			return invalid("company %q: empty company_id", c.Name)
		}
		byID.Add(id, int32(i))
		if c.Symbol != "" {
			bySym.Add(upper(c.Symbol), int32(i))
		}
		if cvm := cvmKey(c.CVMCode); cvm != "" && cvm != id {
			byCVM.Add(cvm, int32(i))
		}
		if c.SubIndustryID != "" {
			p, ok := d.SectorPath(c.SubIndustryID)
			if !ok {
				return invalid("company %s: unknown sub_industry_id %q", c.ID, c.SubIndustryID)
			}
			is.Sector = p
		}
	}
	var err error
	if d.issuerByID, err = byID.Build(); err != nil {
		return invalid("companies: company_id: %v", err)
	}
	if d.issuerBySymbol, err = bySym.Build(); err != nil {
		return invalid("companies: symbol: %v", err)
	}
	if d.issuerByCVM, err = byCVM.Build(); err != nil {
		return invalid("companies: cvm_code: %v", err)
	}
	return nil
}

// issuerIndex returns the issuer of a company id.
func (b *builder) issuerIndex(id string) (int32, bool) {
	i, ok := b.d.issuerByID.Get(id)
	if !ok {
		i, ok = b.d.issuerByID.Get(upper(id))
	}
	return i, ok
}

func (b *builder) buildRenames() error {
	b.renameTo = make(map[string]*TickerRename, len(b.u.Renames))
	b.preds = make(map[string][]*TickerRename)
	for i := range b.u.Renames {
		r := &b.u.Renames[i]
		if r.From == "" || r.To == "" || r.From == r.To || r.From != upper(r.From) || r.To != upper(r.To) {
			return invalid("rename %q -> %q: tickers must be non-empty, upper case and differ", r.From, r.To)
		}
		if !r.Date.Valid() {
			return invalid("rename %s -> %s: date missing", r.From, r.To)
		}
		if _, dup := b.renameTo[r.From]; dup {
			return invalid("rename %s: renamed twice", r.From)
		}
		b.renameTo[r.From] = r
		b.preds[r.To] = append(b.preds[r.To], r)
	}
	for _, ps := range b.preds {
		slices.SortFunc(ps, func(x, y *TickerRename) int { return cmp.Compare(x.Date, y.Date) })
	}
	// Reject cycles: every chain must end within len(Renames) steps.
	for from := range b.renameTo {
		t := from
		for n := 0; ; n++ {
			r, ok := b.renameTo[t]
			if !ok {
				break
			}
			if n > len(b.renameTo) {
				return invalid("rename %s: cycle", from)
			}
			t = r.To
		}
	}
	return nil
}

// current follows renames from t to the ticker it is traded as today.
func (b *builder) current(t string) string {
	for n := 0; n <= len(b.renameTo); n++ {
		r, ok := b.renameTo[t]
		if !ok {
			return t
		}
		t = r.To
	}
	return t
}

func (b *builder) buildAssets() error {
	u, d := b.u, b.d
	for i := range u.Securities {
		s := &u.Securities[i]
		if s.Ticker == "" || s.Ticker != upper(s.Ticker) {
			return invalid("security %q: ticker must be non-empty upper case", s.Ticker)
		}
		if _, former := b.renameTo[s.Ticker]; former {
			continue // resolves to the ticker it was renamed to
		}
		d.assets = append(d.assets, Asset{Security: s})
	}
	slices.SortFunc(d.assets, func(x, y Asset) int { return strings.Compare(x.Ticker, y.Ticker) })
	var byT index.Builder[int32]
	for i := range d.assets {
		a := &d.assets[i]
		if i > 0 && d.assets[i-1].Ticker == a.Ticker {
			return invalid("security %s: duplicate ticker", a.Ticker)
		}
		a.pos = int32(i)
		byT.Add(a.Ticker, int32(i))
		if a.CompanyID == "" {
			if a.StockType != ClassMacro {
				return invalid("security %s: company_id missing (only %s series have none)", a.Ticker, ClassMacro)
			}
		} else {
			ii, ok := b.issuerIndex(a.CompanyID)
			if !ok {
				return invalid("security %s: unknown company_id %q", a.Ticker, a.CompanyID)
			}
			a.Issuer = &d.issuers[ii]
			a.Issuer.Assets = append(a.Issuer.Assets, a)
		}
	}
	for from := range b.renameTo {
		cur := b.current(from)
		i, ok := slices.BinarySearchFunc(d.assets, cur, func(a Asset, t string) int { return strings.Compare(a.Ticker, t) })
		if !ok {
			return invalid("rename %s: target ticker %s is not a security", from, cur)
		}
		byT.Add(from, int32(i))
	}
	var err error
	if d.assetByTicker, err = byT.Build(); err != nil {
		return invalid("securities: %v", err)
	}
	for i := range d.assets {
		a := &d.assets[i]
		a.Former = b.formerOf(a.Ticker, nil)
		for _, f := range a.Former {
			a.renames = append(a.renames, b.renameTo[f])
		}
	}
	d.assetByISIN = make(map[string]int32, len(u.Securities))
	for i := range u.Securities {
		s := &u.Securities[i]
		if s.ISIN == "" {
			continue
		}
		ai, _ := d.assetByTicker.Get(s.Ticker)
		if prev, dup := d.assetByISIN[s.ISIN]; dup && prev != ai {
			return invalid("security %s: ISIN %s already used by %s", s.Ticker, s.ISIN, d.assets[prev].Ticker)
		}
		d.assetByISIN[s.ISIN] = ai
	}
	return nil
}

// formerOf appends t's former tickers, oldest rename first.
func (b *builder) formerOf(t string, dst []string) []string {
	for _, r := range b.preds[t] {
		dst = b.formerOf(r.From, dst)
		dst = append(dst, r.From)
	}
	return dst
}

// assetOf finds an asset by ticker (renames resolved) or else by ISIN.
func (b *builder) assetOf(ticker, isin string) (int32, bool) {
	if ticker != "" {
		if i, ok := b.d.assetByTicker.Get(ticker); ok {
			return i, true
		}
	}
	if isin != "" {
		if i, ok := b.d.assetByISIN[isin]; ok {
			return i, true
		}
	}
	return 0, false
}

// checkSeriesLengths checks that a daily series' columns have one value
// a date each.
func checkSeriesLengths(s *Series) error {
	n := len(s.Dates)
	// A compacted series (CompactSeries) shares its dates with its bars.
	if s.bars == nil && (len(s.Open) != n || len(s.High) != n || len(s.Low) != n || len(s.Close) != n ||
		len(s.Volume) != n || len(s.Quantity) != n || len(s.Trades) != n) {
		return invalid("daily series %s: columns of different lengths (dates %d, open %d, high %d, low %d, close %d, volume %d, quantity %d, trades %d)",
			s.Ticker, n, len(s.Open), len(s.High), len(s.Low), len(s.Close), len(s.Volume), len(s.Quantity), len(s.Trades))
	}
	return nil
}

func checkSeries(s *Series) error {
	if err := checkSeriesLengths(s); err != nil {
		return err
	}
	n := len(s.Dates)
	for i := 0; i < n; i++ {
		if !s.Dates[i].Valid() {
			return invalid("daily series %s: row %d: date missing", s.Ticker, i)
		}
		if i > 0 && s.Dates[i] <= s.Dates[i-1] {
			return invalid("daily series %s: row %d: date %s not after %s", s.Ticker, i, s.Dates[i], s.Dates[i-1])
		}
	}
	return nil
}

// checkIntradayLengths checks that an intraday series' columns have one
// value a time each.
func checkIntradayLengths(s *Intraday) error {
	n := len(s.Times)
	// A compact series (CompactIntradayOf) shares its times with its bars.
	if s.bars == nil && (len(s.Open) != n || len(s.High) != n || len(s.Low) != n || len(s.Close) != n ||
		len(s.Volume) != n || len(s.Quantity) != n) {
		return invalid("intraday series %s: columns of different lengths (times %d, open %d, high %d, low %d, close %d, volume %d, quantity %d)",
			s.Ticker, n, len(s.Open), len(s.High), len(s.Low), len(s.Close), len(s.Volume), len(s.Quantity))
	}
	return nil
}

func checkIntraday(s *Intraday) error {
	if err := checkIntradayLengths(s); err != nil {
		return err
	}
	n := len(s.Times)
	for i := 1; i < n; i++ {
		if s.Times[i] <= s.Times[i-1] {
			return invalid("intraday series %s: row %d: time %d not after %d", s.Ticker, i, s.Times[i], s.Times[i-1])
		}
	}
	return nil
}

func (b *builder) buildDaily() error {
	u, d := b.u, b.d
	var err error
	check := checkSeries
	if b.ordered {
		check = checkSeriesLengths
	}
	if b.dailyOf, err = byTicker(b, "daily", u.Daily, func(s *Series) string { return s.Ticker }, check); err != nil {
		return err
	}
	h, memo := b.dailyHistory(), make(map[string]*Series)
	joined := make([]*Series, len(d.assets))
	for i := range d.assets {
		joined[i] = joinHistory(b, h, d.assets[i].Ticker, memo)
	}
	// Each distinct joined series once into its compact form (memo may
	// hand two assets the same one).
	pos := make(map[*Series]int, len(joined))
	var uniq []*Series
	for _, s := range joined {
		if _, ok := pos[s]; !ok {
			pos[s] = len(uniq)
			uniq = append(uniq, s)
		}
	}
	bars := make([]*DailyBars, len(uniq))
	b.parallelFor(len(uniq), func(i int) { bars[i] = NewDailyBars(uniq[i]) })
	for i, s := range joined {
		d.assets[i].Daily = bars[pos[s]]
	}
	return nil
}

// byTicker checks the series of one kind (each of a known ticker, once,
// and valid by check) and maps them by ticker.
func byTicker[S any](b *builder, kind string, ss []S, ticker func(*S) string, check func(*S) error) (map[string]*S, error) {
	m := make(map[string]*S, len(ss))
	for i := range ss {
		s := &ss[i]
		t := ticker(s)
		if _, ok := b.d.assetByTicker.Get(t); !ok {
			return nil, invalid("%s series %q: unknown ticker", kind, t)
		}
		if _, dup := m[t]; dup {
			return nil, invalid("%s series %s: given twice", kind, t)
		}
		if err := check(s); err != nil {
			return nil, err
		}
		m[t] = s
	}
	return m, nil
}

// span is the rows [lo, hi) of one history.
type span[S any] struct {
	s      *S
	lo, hi int
}

// history describes one kind of bar history (daily or 1-minute) to
// joinHistory: K is its row key (Date or unix seconds).
type history[K index.Integer, S any] struct {
	given  map[string]*S                                // histories given, by ticker
	empty  func(t string) *S                            // an empty history of t
	keys   func(*S) []K                                 // the row keys, ascending
	cut    func(Date) K                                 // the first key of a rename date
	concat func(t string, parts []span[S], rows int) *S // rows of parts, in order
}

// joinHistory returns t's history with its former tickers' rows in front:
// a former ticker contributes the rows before its rename date, before t's
// own first row and after the previous former ticker's last row. Results
// are memoised, so a chain of renames is joined once.
func joinHistory[K index.Integer, S any](b *builder, h *history[K, S], t string, memo map[string]*S) *S {
	if s, ok := memo[t]; ok {
		return s
	}
	own := h.given[t]
	if own == nil {
		own = h.empty(t)
	}
	ownKeys := h.keys(own)
	var parts []span[S]
	var last K
	rows, joined := 0, false
	for _, r := range b.preds[t] {
		ps := joinHistory(b, h, r.From, memo)
		pk := h.keys(ps)
		end := h.cut(r.Date)
		if len(ownKeys) > 0 {
			end = min(end, ownKeys[0])
		}
		lo, hi := 0, index.FirstGE(pk, end)
		if joined {
			lo = index.FirstGT(pk, last)
		}
		if lo < hi {
			parts = append(parts, span[S]{ps, lo, hi})
			last, joined = pk[hi-1], true
			rows += hi - lo
		}
	}
	if rows == 0 {
		memo[t] = own
		return own
	}
	parts = append(parts, span[S]{own, 0, len(ownKeys)})
	out := h.concat(t, parts, rows+len(ownKeys))
	memo[t] = out
	return out
}

// dailyHistory joins daily series.
func (b *builder) dailyHistory() *history[Date, Series] {
	return &history[Date, Series]{
		given: b.dailyOf,
		empty: func(t string) *Series { return &Series{Ticker: t} },
		keys:  func(s *Series) []Date { return s.Dates },
		cut:   func(d Date) Date { return d },
		concat: func(t string, parts []span[Series], rows int) *Series {
			out := &Series{
				Ticker: t, Dates: make([]Date, 0, rows),
				Open: make([]Num, 0, rows), High: make([]Num, 0, rows), Low: make([]Num, 0, rows), Close: make([]Num, 0, rows),
				Volume: make([]Num, 0, rows), Quantity: make([]int64, 0, rows), Trades: make([]int64, 0, rows),
			}
			for _, g := range parts {
				s := g.s.wide()
				out.Dates = append(out.Dates, s.Dates[g.lo:g.hi]...)
				out.Open = append(out.Open, s.Open[g.lo:g.hi]...)
				out.High = append(out.High, s.High[g.lo:g.hi]...)
				out.Low = append(out.Low, s.Low[g.lo:g.hi]...)
				out.Close = append(out.Close, s.Close[g.lo:g.hi]...)
				out.Volume = append(out.Volume, s.Volume[g.lo:g.hi]...)
				out.Quantity = append(out.Quantity, s.Quantity[g.lo:g.hi]...)
				out.Trades = append(out.Trades, s.Trades[g.lo:g.hi]...)
			}
			return out
		},
	}
}

func (b *builder) buildIntraday() error {
	u, d := b.u, b.d
	var err error
	check := checkIntraday
	if b.ordered {
		check = checkIntradayLengths
	}
	if b.intraOf, err = byTicker(b, "intraday", u.Intraday, func(s *Intraday) string { return s.Ticker }, check); err != nil {
		return err
	}
	h, memo := b.intradayHistory(), make(map[string]*Intraday)
	joined := make([]*Intraday, len(d.assets))
	for i := range d.assets {
		joined[i] = joinHistory(b, h, d.assets[i].Ticker, memo)
	}
	// Each distinct joined series once into its compact form.
	pos := make(map[*Intraday]int, len(joined))
	var uniq []*Intraday
	for _, s := range joined {
		if _, ok := pos[s]; !ok {
			pos[s] = len(uniq)
			uniq = append(uniq, s)
		}
	}
	bars := make([]*IntradayBars, len(uniq))
	b.parallelFor(len(uniq), func(i int) { bars[i] = NewIntradayBars(uniq[i]) })
	for i, s := range joined {
		d.assets[i].Intraday = bars[pos[s]]
	}
	return nil
}

// intradayHistory joins 1-minute bars; a rename date's midnight UTC is the
// cut.
func (b *builder) intradayHistory() *history[int64, Intraday] {
	return &history[int64, Intraday]{
		given: b.intraOf,
		empty: func(t string) *Intraday { return &Intraday{Ticker: t} },
		keys:  func(s *Intraday) []int64 { return s.Times },
		cut:   func(d Date) int64 { return int64(d) * 86400 },
		concat: func(t string, parts []span[Intraday], rows int) *Intraday {
			out := &Intraday{
				Ticker: t, Times: make([]int64, 0, rows),
				Open: make([]Num, 0, rows), High: make([]Num, 0, rows), Low: make([]Num, 0, rows), Close: make([]Num, 0, rows),
				Volume: make([]Num, 0, rows), Quantity: make([]int64, 0, rows),
			}
			for _, g := range parts {
				s := g.s.wide()
				out.Times = append(out.Times, s.Times[g.lo:g.hi]...)
				out.Open = append(out.Open, s.Open[g.lo:g.hi]...)
				out.High = append(out.High, s.High[g.lo:g.hi]...)
				out.Low = append(out.Low, s.Low[g.lo:g.hi]...)
				out.Close = append(out.Close, s.Close[g.lo:g.hi]...)
				out.Volume = append(out.Volume, s.Volume[g.lo:g.hi]...)
				out.Quantity = append(out.Quantity, s.Quantity[g.lo:g.hi]...)
			}
			return out
		},
	}
}

func (b *builder) buildQuotes() error {
	for i := range b.d.assets {
		a := &b.d.assets[i]
		if a.Intraday.Len() > 0 {
			a.cum = new(lazyAgg)
		}
		a.Latest = a.latestQuote()
		a.latestFrom = minUnix
		if a.Latest.Valid() {
			a.latestFrom = a.Latest.VisibleFrom()
		}
		if a.StockType != ClassMacro && a.Latest.Valid() && a.Latest.Date > b.d.lastSession {
			b.d.lastSession = a.Latest.Date
		}
	}
	return nil
}

// liquidityCmp orders a company's tickers: LiquidityRank ascending with 0
// (unknown) last, then latest volume descending (missing last), then ticker.
func liquidityCmp(x, y *Asset) int { return liquidityCmpVol(x, x.Latest.Volume, y, y.Latest.Volume) }

// liquidityCmpVol is liquidityCmp with the volumes xv and yv (Screener.At:
// those of the last session before an instant).
func liquidityCmpVol(x *Asset, xv Num, y *Asset, yv Num) int {
	rx, ry := x.LiquidityRank, y.LiquidityRank
	if rx <= 0 {
		rx = math.MaxInt
	}
	if ry <= 0 {
		ry = math.MaxInt
	}
	if c := cmp.Compare(rx, ry); c != 0 {
		return c
	}
	return cmp.Or(cmpDescMissingLast(xv, yv), strings.Compare(x.Ticker, y.Ticker))
}

// cmpDescMissingLast orders valid values descending before missing ones.
func cmpDescMissingLast(x, y Num) int {
	switch {
	case x.Valid() && !y.Valid():
		return -1
	case !x.Valid() && y.Valid():
		return 1
	case x.Valid():
		return cmp.Compare(y, x)
	}
	return 0
}

// issuerIdx returns the index of the issuer of company id; what names the
// referencing entity in the error (formatted only on failure).
func (b *builder) issuerIdx(id string, what func() string) (int32, error) {
	if k := b.lastIssuer; k >= 0 && b.d.issuers[k].ID == id {
		return k, nil
	}
	i, ok := b.issuerIndex(id)
	if !ok {
		return 0, invalid("%s: unknown company_id %q", what(), id)
	}
	b.lastIssuer = i
	return i, nil
}

// issuerList says how buildIssuerLists files one kind of entity under
// its issuers.
type issuerList[T any] struct {
	owner func(*T) string     // the company id of an item
	what  func(*T) string     // names an item in the error of an unknown owner
	list  func(*Issuer) *[]*T // the issuer's list of such items
	order func(x, y *T) int   // the order of each list (stable sort)
	// at, when set, is the issuer's list of the items' positions in
	// items, index for index with its list.
	at func(*Issuer) *[]int32
}

// attach appends a pointer to every item of items, in items order, to the
// list of its issuer, then sorts every issuer's list (stably) by l.order;
// with l.at, the items' positions in items too, in the list's order.
// The first item of an unknown company id fails.
//
// The lists are cut from one array (each list's capacity capped), sized
// by a first pass that finds every item's issuer; a list already in
// order (a snapshot stores most so) is not sorted.
func attach[T any](b *builder, items []T, l issuerList[T]) error {
	if len(items) == 0 {
		return nil
	}
	owner := make([]int32, len(items))
	start := make([]int, len(b.d.issuers)+1) // counts, then each list's start
	for i := range items {
		x := &items[i]
		k, err := b.issuerIdx(l.owner(x), func() string { return l.what(x) })
		if err != nil {
			return err
		}
		owner[i] = k
		start[k+1]++
	}
	for k := range b.d.issuers {
		start[k+1] += start[k]
	}
	all := make([]*T, len(items))
	var ats []int32
	if l.at != nil {
		ats = make([]int32, len(items))
	}
	next := slices.Clone(start[:len(start)-1])
	for i, k := range owner {
		if l.at != nil {
			ats[next[k]] = int32(i)
		} else {
			all[next[k]] = &items[i]
		}
		next[k]++
	}
	for k := range b.d.issuers {
		lo, hi := start[k], start[k+1]
		if lo == hi {
			continue
		}
		is := &b.d.issuers[k]
		list := all[lo:hi:hi]
		if l.at == nil {
			if !sortedBy(list, l.order) {
				slices.SortStableFunc(list, l.order)
			}
			*l.list(is) = list
			continue
		}
		// The positions sorted as the pointers would be (the same stable
		// sort of the same sequence), then the pointers from them.
		at := ats[lo:hi:hi]
		slices.SortStableFunc(at, func(x, y int32) int { return l.order(&items[x], &items[y]) })
		for j, i := range at {
			list[j] = &items[i]
		}
		*l.list(is), *l.at(is) = list, at
	}
	return nil
}

// sortedBy reports whether list is in order by cmp.
func sortedBy[T any](list []*T, cmp func(x, y *T) int) bool {
	for i := 1; i < len(list); i++ {
		if cmp(list[i-1], list[i]) > 0 {
			return false
		}
	}
	return true
}

func (b *builder) buildIssuerLists() error {
	u, d := b.u, b.d
	for i := range d.issuers {
		slices.SortFunc(d.issuers[i].Assets, liquidityCmp)
	}
	if err := attach(b, u.Reports, issuerList[Report]{
		owner: func(r *Report) string { return r.CompanyID },
		what: func(r *Report) string {
			return fmt.Sprintf("report %s %s %s", r.Statement, r.Aggregation, r.ReferenceDate)
		},
		list:  func(is *Issuer) *[]*Report { return &is.reports },
		order: compareReports,
	}); err != nil {
		return err
	}
	if err := b.lazyReportLists(); err != nil {
		return err
	}
	if err := attach(b, u.Shares, issuerList[SharesPoint]{
		owner: func(p *SharesPoint) string { return p.CompanyID },
		what:  func(p *SharesPoint) string { return fmt.Sprintf("shares point %s", p.Date) },
		list:  func(is *Issuer) *[]*SharesPoint { return &is.Shares },
		order: func(x, y *SharesPoint) int { return cmp.Compare(y.Date, x.Date) },
	}); err != nil {
		return err
	}
	if err := attach(b, u.ShareActions, issuerList[ShareAction]{
		owner: func(a *ShareAction) string { return a.CompanyID },
		what: func(a *ShareAction) string {
			return fmt.Sprintf("share action %s %s %s", a.Type, a.Ticker, a.PriorExDate)
		},
		list: func(is *Issuer) *[]*ShareAction { return &is.ShareActions },
		at:   func(is *Issuer) *[]int32 { return &is.shareActionAt },
		order: func(x, y *ShareAction) int {
			if c := cmp.Compare(y.PriorExDate, x.PriorExDate); c != 0 {
				return c
			}
			if c := strings.Compare(x.ISIN, y.ISIN); c != 0 {
				return c
			}
			return strings.Compare(x.Type, y.Type)
		},
	}); err != nil {
		return err
	}
	if b.deferKinds {
		return nil // FinishDeferred's
	}
	return b.buildDeferredLists()
}

// buildDeferredLists files the insider reports, documents and fund
// reports (deferred kinds) under their issuers, after the other lists.
func (b *builder) buildDeferredLists() error {
	u := b.u
	if err := attach(b, u.InsiderReports, issuerList[InsiderReport]{
		owner: func(r *InsiderReport) string { return r.CompanyID },
		what:  func(r *InsiderReport) string { return fmt.Sprintf("insider report %s", r.ReferenceDate) },
		list:  func(is *Issuer) *[]*InsiderReport { return &is.insider },
		order: func(x, y *InsiderReport) int {
			if c := cmp.Compare(x.ReferenceDate, y.ReferenceDate); c != 0 {
				return c
			}
			if c := strings.Compare(x.Aggregation, y.Aggregation); c != 0 {
				return c
			}
			return cmp.Compare(x.Version, y.Version)
		},
	}); err != nil {
		return err
	}
	if err := attach(b, u.Documents, issuerList[Document]{
		owner: func(doc *Document) string { return doc.CompanyID },
		what:  func(doc *Document) string { return fmt.Sprintf("document %s", doc.ID) },
		list:  func(is *Issuer) *[]*Document { return &is.documents },
		order: func(x, y *Document) int {
			if c := y.PublishDate.Compare(x.PublishDate); c != 0 {
				return c
			}
			return strings.Compare(x.ID, y.ID)
		},
	}); err != nil {
		return err
	}
	return attach(b, u.FundReports, issuerList[FundReport]{
		owner: func(r *FundReport) string { return r.FundID },
		what:  func(r *FundReport) string { return fmt.Sprintf("fund report %s", r.ReferenceDate) },
		list:  func(is *Issuer) *[]*FundReport { return &is.fundReports },
		order: func(x, y *FundReport) int {
			return cmp.Or(cmp.Compare(x.ReferenceDate, y.ReferenceDate), cmp.Compare(x.Version, y.Version))
		},
	})
}

func (b *builder) buildCatalog() error {
	var bl index.Builder[int32]
	for i, ind := range b.u.Derived.Catalog {
		if ind.ID == "" {
			return invalid("catalog entry %d: empty id", i)
		}
		bl.Add(upper(ind.Kind)+"/"+upper(ind.ID), int32(i))
	}
	if len(b.u.Derived.Catalog) > math.MaxUint16+1 {
		return invalid("catalog: %d indicators (max %d)", len(b.u.Derived.Catalog), math.MaxUint16+1)
	}
	m, err := bl.Build()
	if err != nil {
		return invalid("catalog: %v", err)
	}
	b.d.catalogByID = m
	return nil
}

func (b *builder) buildRatios() error {
	u, d := b.u, b.d
	ncat := len(u.Derived.Catalog)
	ps := u.Derived.Ratios
	if b.ratiosChecked {
		if err := b.lazyRatioRuns(); err != nil {
			return err
		}
		return b.buildFundRatios()
	}
	nvars := uint64(len(u.Derived.RatioVars))
	// One pass checks every point and finds the runs of its companies and
	// series (the checks report as if made in turn: symbols, then
	// indicators and variables, then the order).
	bad, runs := scanRatios(&u.Derived, ncat, nvars, true)
	if i := bad.sym; i >= 0 {
		return invalid("ratio point %d: company or ticker %d, %d outside the %d symbols", i, ps[i].CompanyID, ps[i].Ticker, len(u.Derived.RatioSyms))
	}
	if i := bad.indicator; i >= 0 {
		p := &ps[i]
		if int(p.Indicator) >= ncat {
			return invalid("ratio point of %s: indicator %d outside the catalog (%d entries)", u.Derived.SymOf(p.CompanyID), p.Indicator, ncat)
		}
		return invalid("ratio point of %s: variables [%d, %d) beyond the %d stored", u.Derived.SymOf(p.CompanyID), p.VarsAt, uint64(p.VarsAt)+uint64(p.NVars), nvars)
	}
	if !bad.sorted {
		// Snapshots store points in this order (see CompareRatioPoints);
		// a Universe built by hand may not: serve a sorted copy.
		compare := compareRatioPointsIn(&u.Derived)
		ps = slices.Clone(ps)
		slices.SortStableFunc(ps, func(x, y RatioPoint) int { return compare(&x, &y) })
		runs = ratioRuns(ps)
	}
	for ci := 0; ci+1 < len(runs.company); ci++ {
		lo, hi := runs.company[ci], runs.company[ci+1]
		id := ps[lo].CompanyID
		k, err := b.issuerIdx(u.Derived.SymOf(id).String(), func() string { return "ratio point " + u.Derived.Catalog[ps[lo].Indicator].ID })
		if err != nil {
			return err
		}
		is := &d.issuers[k]
		if is.ratios != nil {
			return invalid("ratio points of company_id %q: company seen under two ids", u.Derived.SymOf(id))
		}
		is.ratios = ratioSeriesOf(ps[lo:hi:hi], runs.series[runs.first[ci]:runs.first[ci+1]], lo)
		setKnownFrom(is.ratios, u.Derived.Catalog, d.rules.of)
	}
	return b.buildFundRatios()
}

// buildFundRatios files the fund ratio points under their funds (with
// BuildOptions.FundRatiosChecked, their runs, to be split into series on
// each fund's first use).
func (b *builder) buildFundRatios() error {
	u, d := b.u, b.d
	dv := &u.Derived
	if b.fundsChecked {
		return b.lazyFundRuns()
	}
	ncat := len(dv.Catalog)
	fs := dv.FundRatios
	for i := range fs {
		if int(fs[i].Indicator) >= ncat {
			return invalid("fund ratio point of %s: indicator %d outside the catalog (%d entries)", dv.FundSymOf(fs[i].FundID), fs[i].Indicator, ncat)
		}
		if uint64(fs[i].Sources) > uint64(len(dv.FundSources)) {
			return invalid("fund ratio point of %s: sources %d beyond the %d lists", dv.FundSymOf(fs[i].FundID), fs[i].Sources, len(dv.FundSources))
		}
		if dv.FundSyms != nil && uint64(fs[i].FundID) >= uint64(len(dv.FundSyms)) {
			return invalid("fund ratio point %d: fund %d outside the %d symbols", i, fs[i].FundID, len(dv.FundSyms))
		}
	}
	compare := compareFundPointsIn(dv)
	if !isSorted(fs, compare) {
		fs = slices.Clone(fs)
		slices.SortStableFunc(fs, func(x, y FundRatioPoint) int { return compare(&x, &y) })
	}
	for lo := 0; lo < len(fs); {
		sym := fs[lo].FundID
		id := dv.FundSymOf(sym).String()
		k, err := b.issuerIdx(id, func() string { return "fund ratio point " + dv.Catalog[fs[lo].Indicator].ID })
		if err != nil {
			return err
		}
		is := &d.issuers[k]
		if is.fundRatios != nil || is.lazyFundRatios != nil {
			return invalid("fund ratio points of %q: fund seen under two ids", id)
		}
		hi := lo + 1
		for hi < len(fs) && fs[hi].FundID == sym {
			hi++
		}
		is.fundRatios = fundSeriesOf(fs[lo:hi])
		lo = hi
	}
	return nil
}

// fundSeriesOf returns the series of one fund's points ps (in order).
func fundSeriesOf(ps []FundRatioPoint) []FundRatioSeries {
	return appendSeries(nil, ps, func(x, y *FundRatioPoint) bool {
		return x.Indicator == y.Indicator && x.Frequency == y.Frequency
	}, func(g []FundRatioPoint) FundRatioSeries {
		return FundRatioSeries{Indicator: g[0].Indicator, Frequency: g[0].Frequency.String(), Points: g}
	})
}

// compareFundPointsIn is CompareFundRatioPoints for points of
// dv.FundRatios.
func compareFundPointsIn(dv *Derived) func(x, y *FundRatioPoint) int {
	if dv.FundSyms == nil {
		return CompareFundRatioPoints
	}
	return func(x, y *FundRatioPoint) int {
		if x.FundID != y.FundID {
			if c := strings.Compare(dv.FundSymOf(x.FundID).String(), dv.FundSymOf(y.FundID).String()); c != 0 {
				return c
			}
		}
		a, b := *x, *y
		a.FundID, b.FundID = 0, 0
		return CompareFundRatioPoints(&a, &b)
	}
}

// lazyFundRuns files each run of Derived.FundRuns under its fund, to be
// split into series on the fund's first use (Issuer.FundRatios), reading
// no point.
func (b *builder) lazyFundRuns() error {
	u, d := b.u, b.d
	n := len(u.Derived.FundRatios)
	for _, r := range u.Derived.FundRuns {
		if r.Lo < 0 || r.Hi <= r.Lo || r.Hi > n {
			return invalid("fund ratio run [%d, %d) outside the %d points", r.Lo, r.Hi, n)
		}
		id := u.Derived.FundSymOf(r.Company).String()
		k, err := b.issuerIdx(id, func() string { return "fund ratio points" })
		if err != nil {
			return err
		}
		is := &d.issuers[k]
		if is.lazyFundRatios != nil {
			return invalid("fund ratio points of %q: fund seen under two ids", id)
		}
		is.lazyFundRatios = &lazyRatios{d: d, lo: r.Lo, hi: r.Hi}
	}
	return nil
}

// FundRatios returns the fund's ratio points (funds only) grouped by
// indicator and frequency; points inside a group are sorted by
// reference_date then publish_date. The slice is shared, read-only.
//
// A Dataset whose fund points are checked on first use (a mapped
// snapshot's, BuildOptions.FundRatiosChecked) makes them on the first
// call, from points the caller has verified (Dataset.CheckIssuer).
func (is *Issuer) FundRatios() []FundRatioSeries {
	if l := is.lazyFundRatios; l != nil {
		l.once.Do(func() { is.fundRatios = l.fundSeries() })
	}
	return is.fundRatios
}

// fundSeries splits the run of fund points into series. The points'
// block check (BuildOptions.FundRatiosChecked) has found them in order,
// with indicators in the catalog; points that are not (a bad block,
// whose requests are refused) give no series rather than a panic.
func (l *lazyRatios) fundSeries() []FundRatioSeries {
	dv := &l.d.u.Derived
	ps := dv.FundRatios[l.lo:l.hi:l.hi]
	for i := range ps {
		if int(ps[i].Indicator) >= len(dv.Catalog) {
			return nil
		}
	}
	return fundSeriesOf(ps)
}

// ratioSeriesOf returns the series of one company's points ps (in
// order), whose series start at the points starts (indexes counted from
// base, ps's first).
func ratioSeriesOf(ps []RatioPoint, starts []int, base int) []RatioSeries {
	out := make([]RatioSeries, len(starts))
	for j, at := range starts {
		end := len(ps)
		if j+1 < len(starts) {
			end = starts[j+1] - base
		}
		g := ps[at-base : end : end]
		out[j] = RatioSeries{Indicator: g[0].Indicator, Class: g[0].Class.String(), Frequency: g[0].Frequency.String(), Points: g}
	}
	return out
}

// RatioRun is one company's run of ratio points, Derived.Ratios[Lo:Hi]
// (see Derived.RatioRuns).
type RatioRun struct {
	Company Sym // as the points name it (see Derived.SymOf)
	Lo, Hi  int
}

// lazyRatios makes an issuer's ratio series on first use from its run
// of points (BuildOptions.RatiosChecked).
type lazyRatios struct {
	once   sync.Once
	d      *Dataset
	lo, hi int
}

// lazyRatioRuns files each run of Derived.RatioRuns under its company,
// to be split into series on the company's first use (Issuer.Ratios),
// reading no point.
func (b *builder) lazyRatioRuns() error {
	u, d := b.u, b.d
	n := len(u.Derived.Ratios)
	for _, r := range u.Derived.RatioRuns {
		if r.Lo < 0 || r.Hi <= r.Lo || r.Hi > n {
			return invalid("ratio run [%d, %d) outside the %d points", r.Lo, r.Hi, n)
		}
		id := u.Derived.SymOf(r.Company).String()
		k, err := b.issuerIdx(id, func() string { return "ratio points" })
		if err != nil {
			return err
		}
		is := &d.issuers[k]
		if is.lazyRatios != nil {
			return invalid("ratio points of company_id %q: company seen under two ids", id)
		}
		is.lazyRatios = &lazyRatios{d: d, lo: r.Lo, hi: r.Hi}
	}
	return nil
}

// compareReports orders a company's reports: by reference_date,
// statement, aggregation and version (Issuer.Reports).
func compareReports(x, y *Report) int {
	if c := cmp.Compare(x.ReferenceDate, y.ReferenceDate); c != 0 {
		return c
	}
	if c := x.Statement.Compare(y.Statement); c != 0 {
		return c
	}
	if c := x.Aggregation.Compare(y.Aggregation); c != 0 {
		return c
	}
	return cmp.Compare(x.Version, y.Version)
}

// lazyReports makes an issuer's report list on first use from the
// Universe's LazyReports.
type lazyReports struct {
	once sync.Once
	src  LazyReports
	id   string
}

// lazyReportLists files each company of the Universe's LazyReports
// under its issuer, its reports to be read on first use
// (Issuer.Reports).
func (b *builder) lazyReportLists() error {
	src := b.u.LazyReports
	if src == nil {
		return nil
	}
	for _, id := range src.Companies() {
		k, err := b.issuerIdx(id, func() string { return "reports" })
		if err != nil {
			return err
		}
		is := &b.d.issuers[k]
		if is.lazyReports != nil || len(is.reports) > 0 {
			return invalid("reports of company_id %q: company given twice", id)
		}
		is.lazyReports = &lazyReports{src: src, id: id}
	}
	return nil
}

// Reports returns the company's reports sorted by reference_date,
// statement, aggregation and version (every version is kept). The slice
// is shared, read-only.
//
// A Dataset whose reports are read on first use (a mapped snapshot's,
// Universe.LazyReports) reads them on the first call, from blocks the
// caller has verified (Dataset.CheckIssuer).
func (is *Issuer) Reports() []*Report {
	if l := is.lazyReports; l != nil {
		l.once.Do(func() { is.reports = l.list() })
	}
	return is.reports
}

// list reads the company's reports and sorts them as attach does (a
// stable sort of the Universe's order).
func (l *lazyReports) list() []*Report {
	rs := l.src.Reports(l.id)
	if len(rs) == 0 {
		return nil
	}
	list := make([]*Report, len(rs))
	for i := range rs {
		list[i] = &rs[i]
	}
	if !sortedBy(list, compareReports) {
		slices.SortStableFunc(list, compareReports)
	}
	return list
}

// Ratios returns the company's ratio points grouped by indicator, class
// and frequency (in that order); points inside a group are sorted by
// reference_date then publish_date. The slice is shared, read-only.
//
// A Dataset whose points are checked on first use (a mapped snapshot's,
// BuildOptions.RatiosChecked) makes them on the first call, from points
// the caller has verified (Dataset.CheckIssuer).
func (is *Issuer) Ratios() []RatioSeries {
	if l := is.lazyRatios; l != nil {
		l.once.Do(func() { is.ratios = l.series() })
	}
	return is.ratios
}

// series splits the run into series. The points' block check
// (BuildOptions.RatiosChecked) has found them in order, with indicators
// in the catalog; points that are not (a bad block, whose requests are
// refused) give no series rather than a panic.
func (l *lazyRatios) series() []RatioSeries {
	dv := &l.d.u.Derived
	ps := dv.Ratios[l.lo:l.hi:l.hi]
	cat := dv.Catalog
	for i := range ps {
		if int(ps[i].Indicator) >= len(cat) {
			return nil
		}
	}
	_, sp := scanRatios(&Derived{Ratios: ps}, math.MaxInt, math.MaxUint64, false)
	ss := ratioSeriesOf(ps, sp.series, 0)
	setKnownFrom(ss, cat, l.d.rules.of)
	return ss
}

// isSorted is slices.IsSortedFunc comparing by pointer (points are
// large).
func isSorted[P any](ps []P, cmp func(x, y *P) int) bool {
	for i := 1; i < len(ps); i++ {
		if cmp(&ps[i-1], &ps[i]) > 0 {
			return false
		}
	}
	return true
}

// ratioScan is what scanRatios found wrong with ratio points: the first
// point naming a symbol outside RatioSyms and the first with an
// indicator outside the catalog or variables beyond those stored (-1:
// none), and whether the points are in order (compareRatioPointsIn).
type ratioScan struct {
	sym, indicator int
	sorted         bool
}

// ratioSplit is where ratio points (in order) split: company[i] is the
// first point of the i-th company's run (runs of one CompanyID), with
// len(points) last; series[first[i]:first[i+1]] are the first points of
// its series (runs of one indicator, class and frequency).
type ratioSplit struct {
	company, first, series []int
}

// scanRatios checks dv's ratio points against ncat catalog entries and
// nvars variables and finds their runs (meaningful when they are in
// order), in one pass over the points: at scale 10 they are 20 M points,
// 0.95 GB read in place from the file, which every pass reads whole.
// With !order the order is not checked (sorted is false).
func scanRatios(dv *Derived, ncat int, nvars uint64, order bool) (ratioScan, ratioSplit) {
	ps := dv.Ratios
	scan := ratioScan{sym: -1, indicator: -1, sorted: order}
	var sp ratioSplit
	nsym := uint64(len(dv.RatioSyms))
	compare := compareRatioPointsIn(dv)
	for i := range ps {
		p := &ps[i]
		if dv.RatioSyms != nil && (uint64(p.CompanyID) >= nsym || uint64(p.Ticker) >= nsym) && scan.sym < 0 {
			scan.sym = i
		}
		if (int(p.Indicator) >= ncat || uint64(p.VarsAt)+uint64(p.NVars) > nvars) && scan.indicator < 0 {
			scan.indicator = i
		}
		if i == 0 {
			sp.company, sp.first, sp.series = append(sp.company, 0), append(sp.first, 0), append(sp.series, 0)
			continue
		}
		q := &ps[i-1]
		if q.CompanyID != p.CompanyID {
			if scan.sorted && scan.sym < 0 && compare(q, p) > 0 {
				scan.sorted = false
			}
			sp.company, sp.first, sp.series = append(sp.company, i), append(sp.first, len(sp.series)), append(sp.series, i)
			continue
		}
		// One company: CompareRatioPoints from the indicator on.
		if q.Indicator != p.Indicator || q.Class != p.Class || q.Frequency != p.Frequency {
			sp.series = append(sp.series, i)
			if scan.sorted && (q.Indicator > p.Indicator || q.Indicator == p.Indicator && (q.Class > p.Class || q.Class == p.Class && q.Frequency > p.Frequency)) {
				scan.sorted = false
			}
		} else if scan.sorted && (q.ReferenceDate > p.ReferenceDate || q.ReferenceDate == p.ReferenceDate && q.PublishDate.Compare(p.PublishDate) > 0) {
			scan.sorted = false
		}
	}
	sp.company, sp.first = append(sp.company, len(ps)), append(sp.first, len(sp.series))
	return scan, sp
}

// ratioRuns returns the runs of ratio points in order (see ratioSplit).
func ratioRuns(ps []RatioPoint) ratioSplit {
	_, sp := scanRatios(&Derived{Ratios: ps}, math.MaxInt, math.MaxUint64, false)
	return sp
}

// appendSeries appends to dst one series per run of points that same
// says belong together (points is sorted so that they are adjacent);
// each series' points are a sub-slice of points (capacity capped).
func appendSeries[P, S any](dst []S, points []P, same func(x, y *P) bool, series func([]P) S) []S {
	for lo := 0; lo < len(points); {
		hi := lo + 1
		for hi < len(points) && same(&points[hi], &points[lo]) {
			hi++
		}
		dst = append(dst, series(points[lo:hi:hi]))
		lo = hi
	}
	return dst
}

func (b *builder) buildIndexes() error {
	u, d := b.u, b.d
	d.indexes = make([]IndexData, len(u.Indexes))
	for i := range u.Indexes {
		d.indexes[i].Index = &u.Indexes[i]
	}
	slices.SortFunc(d.indexes, func(x, y IndexData) int { return strings.Compare(upper(x.Symbol), upper(y.Symbol)) })
	var bl index.Builder[int32]
	for i := range d.indexes {
		ix := &d.indexes[i]
		ix.pos = int32(i)
		if ix.Symbol == "" {
			return invalid("index %q: empty symbol", ix.Name)
		}
		bl.Add(upper(ix.Symbol), int32(i))
		for _, m := range ix.Index.Members {
			if m.Ticker == "" {
				return invalid("index %s: a member without a ticker", ix.Symbol)
			}
			// A member without a security (no quote yet: a portfolio
			// announced before its first trade) stays in the portfolio,
			// with a nil asset; it is not ranked.
			var as *Asset
			if ai, ok := d.assetByTicker.Get(m.Ticker); ok {
				as = &d.assets[ai]
			}
			ix.Members = append(ix.Members, as)
		}
	}
	m, err := bl.Build()
	if err != nil {
		return invalid("indexes: %v", err)
	}
	d.indexBySymbol = m
	return nil
}
