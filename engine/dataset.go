package engine

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pregao/pregao/index"
)

// Dataset is the immutable, indexed, read-only view of one Universe,
// made by Build. Every method is safe for concurrent use without locks;
// the Dataset and everything it returns must not be modified. Slices and
// pointers returned by accessors are owned by the Dataset, and live no
// longer than it: a Dataset loaded from a snapshot of format 6 holds its
// bars, its reports' accounts and its ratio points in the mapped file,
// which is unmapped once the Dataset is unreachable, so a caller that
// keeps an asset's bars or a report's accounts (or anything read from
// them in place) keeps the Dataset reachable while it reads them
// (runtime.KeepAlive), as the API does by holding its view.
type Dataset struct {
	u *Universe

	sectors    []*Sector // sorted by ID
	sectorByID *index.Map[int32]
	sectorDesc [][]string // per sectors[i]: the ids of i and its descendants, sorted

	issuers        []Issuer // sorted by company ID
	issuerByID     *index.Map[int32]
	issuerBySymbol *index.Map[int32]
	issuerByCVM    *index.Map[int32]

	assets        []Asset           // current tickers, sorted by ticker
	assetByTicker *index.Map[int32] // current and former tickers
	assetByISIN   map[string]int32

	cash      []CashEvent                // every cash action, prior_ex_date desc
	cashByPay []int32                    // rows of cash with a payment date, by (payment date, row)
	exCash    []ExCash                   // per asset, prior_ex_date ascending (see ExCash)
	exCashAt  []int32                    // exCash[exCashAt[i]:exCashAt[i+1]] is asset i's
	trMarks   []atomic.Pointer[[]trMark] // per asset, row ascending: the total-return index (trMark), made on first use

	catalogByID *index.Map[int32] // upper-case "KIND/ID" -> Catalog index
	rules       valuationRules    // the catalog's price rules

	indexes       []IndexData // sorted by symbol
	indexBySymbol *index.Map[int32]

	lastSession Date

	firstOnce      sync.Once
	firstPublished time.Time // see FirstPublished: made on first use (firstOnce)

	screener Screener

	sessionsState // see SessionAt

	openDaily, openIntraday []string // tickers whose bars Build read (OpenReads)

	blocks *blockState           // SetBlocks (nil: the bars are verified)
	fault  atomic.Pointer[error] // Fail's first error (nil: none)

	deferred *deferredState // BuildOptions.Deferred (nil: none; see FinishDeferred)
}

// Issuer is the derived view of one Company: its tickers and every
// per-company list, sorted once at Build. It embeds the source Company.
type Issuer struct {
	*Company

	// Assets are the company's tickers, most liquid first (LiquidityRank
	// ascending with 0 = unknown last, then latest volume descending, then
	// ticker).
	Assets []*Asset
	// Sector is the taxonomy path: Sector[0] level 1 (sector) ...
	// Sector[3] level 4 (sub_industry); nil entries when unknown.
	Sector [4]*Sector
	// reports sorted by reference_date, statement, aggregation, version
	// (see Reports).
	reports []*Report
	// lazyReports, when not nil, makes reports on Reports' first call
	// from the Universe's LazyReports.
	lazyReports *lazyReports
	// Shares is the share-count history, newest first.
	Shares []*SharesPoint
	// deferred is the Dataset's (nil: built whole): the deferred kinds'
	// lists below wait for it (see CashActions).
	deferred *deferredState
	// cashActions: see CashActions.
	cashActions []*CashEvent
	// ShareActions sorted by prior_ex_date descending (then ISIN, type).
	ShareActions []*ShareAction
	// shareActionAt[i] is the position of ShareActions[i] in the
	// Universe's ShareActions (the derivation's order of a company's
	// splits, cashAt).
	shareActionAt []int32
	insider       []*InsiderReport // see Insider
	documents     []*Document      // see Documents
	// ratios groups the company's ratio points by indicator, class and
	// frequency (in that order); points inside a group are sorted by
	// reference_date then publish_date (see Ratios).
	ratios []RatioSeries
	// lazyRatios, when not nil, makes ratios on Ratios' first call from
	// the company's run of points (Derived.RatioRuns).
	lazyRatios  *lazyRatios
	fundReports []*FundReport // see FundReports
	// fundRatios (funds only) grouped by indicator and frequency; points
	// sorted by reference_date then publish_date (see FundRatios).
	fundRatios []FundRatioSeries
	// lazyFundRatios, when not nil, makes fundRatios on FundRatios' first
	// call from the fund's run of points (Derived.FundRuns).
	lazyFundRatios *lazyRatios
}

// IsFund reports whether the issuer is a listed fund (FII or ETF).
func (is *Issuer) IsFund() bool { return is.Kind == KindFII || is.Kind == KindETF }

// LatestShares returns the newest share-count point and true, or false
// when the company has no share history.
func (is *Issuer) LatestShares() (SharesPoint, bool) {
	if len(is.Shares) == 0 {
		return SharesPoint{}, false
	}
	return *is.Shares[0], true
}

// Total returns Common + Preferred (treasury shares are included in both).
func (p SharesPoint) Total() int64 { return p.Common + p.Preferred }

// RatioSeries is one indicator of one company for one class and frequency.
type RatioSeries struct {
	Indicator uint16 // index into Catalog
	Class     string // "" for company-level indicators
	Frequency string
	Points    []RatioPoint // reference_date, then publish_date ascending; shared, read-only
	// KnownFrom, when not nil, is when each point of Points became known
	// (RatioFilter.KnownAt), where that is later than its publish_date:
	// see setKnownFrom.
	KnownFrom []Stamp
}

// FundRatioSeries is one indicator of one fund for one frequency.
type FundRatioSeries struct {
	Indicator uint16 // index into Catalog
	Frequency string
	Points    []FundRatioPoint // reference_date, then publish_date ascending; shared, read-only
}

// Asset is the derived view of one current ticker: its Security, joined
// price history (former tickers' rows first), adjustment factors and
// latest quote. It embeds the source Security.
type Asset struct {
	*Security

	// Issuer is the company; nil for macro series.
	Issuer *Issuer
	// Former lists the tickers renamed into this one, oldest rename first.
	Former []string
	// renames are the renames of Former's tickers (TickerOn).
	renames []*TickerRename
	// Daily is the continuous daily history (never nil; may be empty),
	// held compactly.
	Daily *DailyBars
	// Intraday is the continuous 1-minute history (never nil; may be empty).
	Intraday *IntradayBars
	// Latest is the quote of the last session (daily or intraday,
	// whichever is newer); Latest.Valid() is false without data.
	Latest Quote

	// latestFrom is the earliest unix time from which QuoteAt answers
	// Latest (every later bar is complete by then).
	latestFrom int64
	// pos is the asset's position in Dataset.Assets (see Pos).
	pos int32

	adj    steps      // cumulative adjustment factors
	cum    *lazyAgg   // running session aggregates of Intraday, built on first use (see cumulative)
	events []AdjEvent // the factor events, ascending date
}

// Pos returns the asset's position in the Assets slice of the Dataset
// that built it: &ds.Assets()[a.Pos()] == a. Callers keep per-asset data
// in slices parallel to Assets and index them with Pos.
func (a *Asset) Pos() int { return int(a.pos) }

// Universe returns the source Universe without its daily series (the
// Assets' Daily hold them, compactly). It must not be modified.
func (d *Dataset) Universe() *Universe {
	d.deferred.wait()
	return d.u
}

// Meta returns the dataset's metadata.
func (d *Dataset) Meta() Meta { return d.u.Meta }

// AsOf returns the data's "now": the end of the last session covered.
func (d *Dataset) AsOf() time.Time { return d.u.Meta.AsOf }

// LastSession returns the market's last session: the newest Latest.Date
// of any non-macro asset (NoDate when there is none).
func (d *Dataset) LastSession() Date { return d.lastSession }

// Issuers returns every company and fund, sorted by company ID.
func (d *Dataset) Issuers() []Issuer { return d.issuers }

// Issuer returns the company with the given company ID (exact, or
// upper-cased, or with punctuation stripped).
func (d *Dataset) Issuer(companyID string) (*Issuer, bool) {
	if i, ok := d.issuerByID.Get(companyID); ok {
		return &d.issuers[i], true
	}
	if n := normID(companyID); n != companyID {
		if i, ok := d.issuerByID.Get(n); ok {
			return &d.issuers[i], true
		}
	}
	return nil, false
}

// Assets returns every current ticker, sorted by ticker.
func (d *Dataset) Assets() []Asset { return d.assets }

// TickerOn returns the ticker a was traded under at session day: its
// current ticker, or the former one of its rename chain whose rename took
// effect after day (a rename's Date is the first session under the new
// ticker), the ticker a snapshot of then names it by.
func (a *Asset) TickerOn(day Date) string {
	t := a.Ticker
	for range len(a.renames) + 1 {
		var into *TickerRename // the latest rename into t after day
		for _, r := range a.renames {
			if r.To == t && r.Date > day && (into == nil || r.Date > into.Date) {
				into = r
			}
		}
		if into == nil {
			break
		}
		t = into.From
	}
	return t
}

// Asset returns the asset of a current or former ticker (case-insensitive).
// It does not allocate when ticker is already upper-case.
func (d *Dataset) Asset(ticker string) (*Asset, bool) {
	if i, ok := d.assetByTicker.Get(ticker); ok {
		return &d.assets[i], true
	}
	if n := strings.ToUpper(strings.TrimSpace(ticker)); n != ticker {
		if i, ok := d.assetByTicker.Get(n); ok {
			return &d.assets[i], true
		}
	}
	return nil, false
}

// AssetsWithPrefix calls fn, in ticker order, for each current or former
// ticker that starts with prefix (upper case) and its asset, until fn
// returns false. It walks the ordered ticker index (a B-tree range scan):
// the cost is the matches', not the dataset's.
func (d *Dataset) AssetsWithPrefix(prefix string, fn func(ticker string, a *Asset) bool) {
	d.assetByTicker.Prefix(prefix, func(t string, i int32) bool { return fn(t, &d.assets[i]) })
}

// AssetByISIN returns the current asset of an ISIN.
func (d *Dataset) AssetByISIN(isin string) (*Asset, bool) {
	i, ok := d.assetByISIN[isin]
	if !ok {
		return nil, false
	}
	return &d.assets[i], true
}

// CashActions returns every cash action of every company with its
// adjustment factor, sorted by prior_ex_date descending, then company,
// ticker, event and version descending.
func (d *Dataset) CashActions() []CashEvent {
	d.deferred.wait()
	return d.cash
}

// Catalog returns the indicator catalog (Derived.Catalog); RatioPoint.Indicator
// indexes it.
func (d *Dataset) Catalog() []Indicator { return d.u.Derived.Catalog }

// RatioVars returns the variables of p, a point of one of the Dataset's
// series (see Derived.Vars). The slice is shared: read only.
func (d *Dataset) RatioVars(p *RatioPoint) []Num { return d.u.Derived.Vars(p) }

// FundSources returns the sources of p, a point of one of the Dataset's
// fund series (see Derived.FundSourcesOf). The slice is shared: read
// only.
func (d *Dataset) FundSources(p *FundRatioPoint) []Source {
	d.deferred.wait()
	return d.u.Derived.FundSourcesOf(p)
}

// IndicatorIndex returns the index in d.Catalog() of the indicator of the
// given kind (IndFundamental, IndValuation, IndFund) and id, both matched
// case-insensitively, id without class suffix (EBITDA_MARGIN). It is the
// lookup to use against this Dataset's ratio points: the catalog is the
// snapshot's own, which need not be in the order of the catalog compiled
// into the running binary. It does not allocate. Catalog ids
// are unique per kind only (DIVIDEND_YIELD is both VALUATION and FUND).
// An empty kind looks for a company indicator: FUNDAMENTAL, then
// VALUATION.
func (d *Dataset) IndicatorIndex(kind, id string) (int, bool) {
	if kind == "" {
		if i, ok := d.IndicatorIndex(IndFundamental, id); ok {
			return i, true
		}
		return d.IndicatorIndex(IndValuation, id)
	}
	var buf [64]byte
	k := append(append(append(buf[:0], upper(kind)...), '/'), upper(id)...)
	if i, ok := d.catalogByID.Get(string(k)); ok {
		return int(i), true
	}
	return 0, false
}

// Indexes returns every market index, sorted by symbol.
func (d *Dataset) Indexes() []IndexData { return d.indexes }

// Index returns the market index with the given symbol (case-insensitive).
func (d *Dataset) Index(symbol string) (*IndexData, bool) {
	if i, ok := d.indexBySymbol.Get(symbol); ok {
		return &d.indexes[i], true
	}
	if n := strings.ToUpper(strings.TrimSpace(symbol)); n != symbol {
		if i, ok := d.indexBySymbol.Get(n); ok {
			return &d.indexes[i], true
		}
	}
	return nil, false
}
