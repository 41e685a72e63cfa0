package flatfiles

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// dataset is one kind of file: its schema, and the files a Dataset gives
// (one, or one per year or session). A priced dataset holds quotes and
// is cut at the export's last session (Options.Through).
type dataset struct {
	name   string
	doc    string // one line for docs/files.md
	split  string // "", "year" or "session": how its files are split
	priced bool
	schema schema
	files  func(x *exporter) []file
}

// file is one file of a dataset: its name without extension and the
// function that hands its rows, in order, to r.
type file struct {
	name string
	emit func(r *rows)
}

// exporter is what the datasets' files read: the Dataset, the last
// session priced datasets hold and scratch space.
type exporter struct {
	ds      *engine.Dataset
	through engine.Date
	bars    []engine.Bar
}

// tradedAssets returns the assets whose quotes are a security's (not a
// macro series), sorted by ticker.
func (x *exporter) tradedAssets() []*engine.Asset {
	var out []*engine.Asset
	as := x.ds.Assets()
	for i := range as {
		if as[i].StockType != engine.ClassMacro {
			out = append(out, &as[i])
		}
	}
	return out
}

func (x *exporter) macroAssets() []*engine.Asset {
	var out []*engine.Asset
	as := x.ds.Assets()
	for i := range as {
		if as[i].StockType == engine.ClassMacro {
			out = append(out, &as[i])
		}
	}
	return out
}

// dailyBars returns a's daily bars dated within [from, to] and on or
// before the export's last session, unadjusted (each with its factor).
func (x *exporter) dailyBars(a *engine.Asset, from, to engine.Date) []engine.Bar {
	if x.through.Valid() {
		to = min(to, x.through)
	}
	lo, hi := a.DayRange(from, to)
	x.bars = a.AppendDaily(x.bars[:0], lo, hi, false)
	return x.bars
}

// years returns the calendar years of the daily bars of assets, ascending.
func (x *exporter) years(assets []*engine.Asset) []int {
	seen := map[int]bool{}
	for _, a := range assets {
		for _, b := range x.dailyBars(a, engine.Date(math.MinInt32+1), engine.Date(math.MaxInt32)) {
			seen[b.Date.Time().Year()] = true
		}
	}
	var ys []int
	for y := range seen {
		ys = append(ys, y)
	}
	slices.Sort(ys)
	return ys
}

func yearSpan(y int) (engine.Date, engine.Date) {
	return engine.MakeDate(y, time.January, 1), engine.MakeDate(y, time.December, 31)
}

// ourDatasets is every dataset, in the order of docs/files.md.
var ourDatasets = []*dataset{dailyBarsSet, minuteBarsSet, totalReturnSet, macroSet, cashSet, shareActionsSet,
	companiesSet, securitiesSet, portfoliosSet, levelsSet, reportsSet, ratiosSet, fundReportsSet, fundRatiosSet}

var dailyBarsSet = &dataset{
	name: "daily_bars", split: "year", priced: true,
	doc: "the daily bars of every share, unit, BDR and listed fund (macro series: macro_series), unadjusted, with the cumulative adjustment factor",
	schema: schema{cols: []column{
		{"ticker", tString, "the current ticker (the rows of former tickers are under it, as the API serves them)"},
		{"date", tDate, "the session"},
		{"open", tDecimal, "opening price, BRL per share, unadjusted; null when the session has none"},
		{"high", tDecimal, "highest price, BRL per share, unadjusted"},
		{"low", tDecimal, "lowest price, BRL per share, unadjusted"},
		{"close", tDecimal, "closing price, BRL per share, unadjusted"},
		{"volume", tDecimal, "BRL traded; null when unknown"},
		{"quantity", tCount, "shares traded; null when unknown"},
		{"trades", tInt, "number of trades"},
		{"adjustment_factor", tFloat, "the cumulative adjustment factor F of the session: adjusted price = price / adjustment_factor, adjusted quantity = quantity × adjustment_factor (the API's adjusted=true)"},
	}, sortBy: []string{"ticker", "date"}, date: "date"},
	files: func(x *exporter) []file {
		assets := x.tradedAssets()
		var fs []file
		for _, y := range x.years(assets) {
			from, to := yearSpan(y)
			fs = append(fs, file{name: fmt.Sprintf("daily_bars-%d", y), emit: func(r *rows) {
				for _, a := range assets {
					for _, b := range x.dailyBars(a, from, to) {
						r.str(a.Ticker)
						r.date(b.Date)
						r.decimal(b.Open)
						r.decimal(b.High)
						r.decimal(b.Low)
						r.decimal(b.Close)
						r.decimal(b.Volume)
						r.count(b.Quantity)
						r.int(b.Trades)
						r.float(b.Factor)
						r.end()
					}
				}
			}})
		}
		return fs
	},
}

var minuteBarsSet = &dataset{
	name: "minute_bars", split: "session", priced: true,
	doc: "the 1-minute bars of every ticker, one file per session the snapshot holds, unadjusted, with the session's adjustment factor",
	schema: schema{cols: []column{
		{"ticker", tString, "the current ticker"},
		{"time", tTime, "the bar's start"},
		{"open", tDecimal, "first price of the minute, BRL per share, unadjusted"},
		{"high", tDecimal, "highest price of the minute"},
		{"low", tDecimal, "lowest price of the minute"},
		{"close", tDecimal, "last price of the minute"},
		{"volume", tDecimal, "BRL traded in the minute"},
		{"quantity", tCount, "shares traded in the minute; null when unknown"},
		{"adjustment_factor", tFloat, "the cumulative adjustment factor of the bar's session (as daily_bars)"},
	}, sortBy: []string{"ticker", "time"}, date: "time"},
	files: func(x *exporter) []file {
		as := x.ds.Assets()
		seen := map[engine.Date]bool{}
		for i := range as {
			lo, hi := as[i].MinuteRange(math.MinInt64, math.MaxInt64)
			x.bars = as[i].AppendIntraday(x.bars[:0], lo, hi, false)
			for _, b := range x.bars {
				if !x.through.Valid() || b.Date <= x.through {
					seen[b.Date] = true
				}
			}
		}
		var days []engine.Date
		for d := range seen {
			days = append(days, d)
		}
		slices.Sort(days)
		var fs []file
		for _, d := range days {
			fs = append(fs, file{name: "minute_bars-" + d.String(), emit: func(r *rows) {
				for i := range as {
					a := &as[i]
					lo, hi := a.MinuteRange(int64(d)*86400, int64(d)*86400+86399)
					x.bars = a.AppendIntraday(x.bars[:0], lo, hi, false)
					for _, b := range x.bars {
						r.str(a.Ticker)
						r.time(time.Unix(b.Time, 0))
						r.decimal(b.Open)
						r.decimal(b.High)
						r.decimal(b.Low)
						r.decimal(b.Close)
						r.decimal(b.Volume)
						r.count(b.Quantity)
						r.float(b.Factor)
						r.end()
					}
				}
			}})
		}
		return fs
	},
}

var totalReturnSet = &dataset{
	name: "total_return", split: "year", priced: true,
	doc: "the total-return index of every share, unit, BDR and listed fund, gross and net: the numbers of /quotes/{ticker}/total-return with start_date the ticker's first session",
	schema: schema{cols: []column{
		{"ticker", tString, "the current ticker"},
		{"date", tDate, "the session"},
		{"close", tDecimal, "closing price, BRL per share, unadjusted (as daily_bars)"},
		{"cash_gross", tDecimal, "cash per share going ex on this session, BRL (declared value + monetary correction); 0 when none"},
		{"cash_net", tDecimal, "the same, net of the income tax withheld (net_value)"},
		{"index_gross", tFloat, "the total-return index with the gross cash reinvested at the theoretical ex price: 1 on the ticker's first session with a close; null on a session without a close"},
		{"index_net", tFloat, "the same with the net cash (method=net)"},
	}, sortBy: []string{"ticker", "date"}, date: "date"},
	files: func(x *exporter) []file {
		assets := x.tradedAssets()
		var fs []file
		var gross, net []engine.TRPoint
		for _, y := range x.years(assets) {
			from, to := yearSpan(y)
			fs = append(fs, file{name: fmt.Sprintf("total_return-%d", y), emit: func(r *rows) {
				for _, a := range assets {
					bars := x.dailyBars(a, engine.Date(math.MinInt32+1), to)
					lo, _ := slices.BinarySearchFunc(bars, from, func(b engine.Bar, d engine.Date) int { return cmp.Compare(b.Date, d) })
					if lo == len(bars) {
						continue
					}
					gross = x.ds.AppendTotalReturn(gross[:0], a, bars, false)
					net = x.ds.AppendTotalReturn(net[:0], a, bars, true)
					for i := lo; i < len(bars); i++ {
						g, n := &gross[i], &net[i]
						r.str(a.Ticker)
						r.date(g.Date)
						r.decimal(g.Close)
						r.decimal(g.Cash)
						r.decimal(n.Cash)
						r.float(g.Index)
						r.float(n.Index)
						r.end()
					}
				}
			}})
		}
		return fs
	},
}

var macroSet = &dataset{
	name: "macro_series", priced: true,
	doc: "the macro series (SELIC, IPCA, CDI, currencies…): one value a day, as /quotes/{series} serves them",
	schema: schema{cols: []column{
		{"series", tString, "the series' ticker (SELIC, IPCA, USD…)"},
		{"date", tDate, "the day"},
		{"value", tDecimal, "the day's value, in the series' unit (docs/api.md, Macro series)"},
	}, sortBy: []string{"series", "date"}, date: "date"},
	files: func(x *exporter) []file {
		assets := x.macroAssets()
		if len(assets) == 0 {
			return nil
		}
		return []file{{name: "macro_series", emit: func(r *rows) {
			for _, a := range assets {
				for _, b := range x.dailyBars(a, engine.Date(math.MinInt32+1), engine.Date(math.MaxInt32)) {
					r.str(a.Ticker)
					r.date(b.Date)
					r.decimal(b.Close)
					r.end()
				}
			}
		}}}
	},
}

var cashSet = &dataset{
	name: "cash_actions",
	doc:  "every version of every cash corporate action (dividends, interest on equity, fund distributions…), each with its publication time, so that what was known at any instant can be rebuilt",
	schema: schema{cols: []column{
		{"ticker", tString, "the ticker of the share class"},
		{"prior_ex_date", tDate, "the last session with the right; null when not defined"},
		{"event_id", tString, "shared by every version of one event"},
		{"version", tInt, "the version; the highest is current"},
		{"current", tBool, "whether this is the event's current version (the API's current=true keeps these)"},
		{"id", tString, "unique per version"},
		{"company_id", tString, "the announcing company"},
		{"stock_type", tString, "the share class (CS, PS, UNIT, FUND_UNIT…)"},
		{"isin", tString, "the ISIN of the share class"},
		{"name", tString, "DIVIDEND, INTEREST_ON_EQUITY, RESTITUTION, AMORTIZATION, RENDIMENTO"},
		{"code", tString, "the event's code at the source"},
		{"approval_date", tDate, "the approval day"},
		{"payment_date", tDate, "the payment day; null when not defined"},
		{"publish_date", tTime, "when this version was published"},
		{"declared_value", tDecimal, "BRL per share, unadjusted"},
		{"monetary_correction", tDecimal, "BRL per share; 0 when not applicable"},
		{"net_value", tDecimal, "BRL per share after the income tax withheld"},
		{"currency", tString, "the currency of the amounts (ISO 4217): BRL when the source names none, as the API answers"},
		{"adjustment_factor", tFloat, "F(prior_ex_date) of the ticker: adjusted value = value / adjustment_factor (as the API's adjusted values); null without a prior_ex_date"},
		{"source_url", tString, "the document at the source"},
	}, sortBy: []string{"ticker", "prior_ex_date", "event_id", "version"}, date: "prior_ex_date"},
	files: func(x *exporter) []file {
		all := x.ds.CashActions()
		if len(all) == 0 {
			return nil
		}
		return []file{{name: "cash_actions", emit: func(r *rows) {
			order := make([]int32, len(all))
			for i := range order {
				order[i] = int32(i)
			}
			slices.SortStableFunc(order, func(i, j int32) int {
				a, b := &all[i], &all[j]
				if c := strings.Compare(a.Ticker.String(), b.Ticker.String()); c != 0 {
					return c
				}
				if c := cmp.Compare(a.PriorExDate, b.PriorExDate); c != 0 {
					return c
				}
				if c := cmp.Compare(a.EventID, b.EventID); c != 0 {
					return c
				}
				if c := cmp.Compare(a.Version, b.Version); c != 0 {
					return c
				}
				return cmp.Compare(a.ID, b.ID)
			})
			for _, i := range order {
				e := &all[i]
				r.str(e.Ticker.String())
				r.date(e.PriorExDate)
				r.str(e.EventID)
				r.int(int64(e.Version))
				r.bool(e.Current)
				r.str(e.ID)
				r.str(e.CompanyID.String())
				r.str(e.StockType.String())
				r.str(e.ISIN.String())
				r.str(e.Name.String())
				r.str(e.Code.String())
				r.date(e.ApprovalDate)
				r.date(e.PaymentDate)
				r.time(e.PublishDate.Time())
				r.decimal(e.DeclaredValue)
				r.decimal(e.MonetaryCorrection)
				r.decimal(e.NetValue)
				r.str(currencyOr(e.Currency.String()))
				r.float(e.Factor)
				r.str(sourceURL(e.SourceOrZero()))
				r.end()
			}
		}}}
	},
}

// knownCount returns n as a count, null when it is below least: the
// sentinel the engine keeps for an unknown count (employees -1,
// liquidity rank 0), which a reader would take for a value.
func knownCount(n, least int64) engine.Num {
	if n < least {
		return engine.Null
	}
	return engine.Num(n)
}

// currencyOr returns c, or BRL when the source names no currency: the
// API's currency of a cash action (money is BRL unless a currency says
// otherwise, docs/data-format.md).
func currencyOr(c string) string {
	if c == "" {
		return "BRL"
	}
	return c
}

func sourceURL(s *engine.Source) string {
	if !s.DownloadURL.IsZero() {
		return s.DownloadURL.String()
	}
	return s.VisualizationURL.String()
}

var shareActionsSet = &dataset{
	name: "share_actions",
	doc:  "every share corporate action (splits, bonuses, spin-offs, mergers…), one row per leg of the events that have legs",
	schema: schema{cols: []column{
		{"ticker", tString, "the ticker of the asset the event applies to"},
		{"prior_ex_date", tDate, "the last session with the right: the event adjusts sessions on or before it"},
		{"type", tString, "STOCK_SPLIT, REVERSE_STOCK_SPLIT, STOCK_BONUS, SPIN_OFF_CAPITAL_REDUCTION…"},
		{"company_id", tString, "the company"},
		{"isin", tString, "the ISIN of the asset"},
		{"issued_isin", tString, "the ISIN of the asset issued, when another"},
		{"approval_date", tDate, "the approval day"},
		{"label", tString, "the event's label at the source"},
		{"factor", tFloat, "multiplies the holder's share count (split 1:10 = 10); null on events with legs"},
		{"leg_type", tString, "ORIGINAL_ASSET or RECEIVED_ASSET; null on events without legs"},
		{"leg_ticker", tString, "the leg's ticker"},
		{"leg_isin", tString, "the leg's ISIN"},
		{"leg_factor", tFloat, "the leg's factor"},
		{"remarks", tString, "remarks at the source"},
	}, sortBy: []string{"ticker", "prior_ex_date", "type"}, date: "prior_ex_date"},
	files: func(x *exporter) []file {
		var all []*engine.ShareAction
		for _, is := range x.ds.Issuers() {
			all = append(all, is.ShareActions...)
		}
		if len(all) == 0 {
			return nil
		}
		slices.SortStableFunc(all, func(a, b *engine.ShareAction) int {
			return cmp.Or(cmp.Compare(a.Ticker, b.Ticker), cmp.Compare(a.PriorExDate, b.PriorExDate), cmp.Compare(a.Type, b.Type), cmp.Compare(a.ISIN, b.ISIN))
		})
		return []file{{name: "share_actions", emit: func(r *rows) {
			for _, sa := range all {
				legs := sa.Legs
				if len(legs) == 0 {
					legs = []engine.Leg{{Factor: engine.Null}}
				}
				for _, l := range legs {
					r.str(sa.Ticker)
					r.date(sa.PriorExDate)
					r.str(sa.Type)
					r.str(sa.CompanyID)
					r.str(sa.ISIN)
					r.str(sa.IssuedISIN)
					r.date(sa.ApprovalDate)
					r.str(sa.Label)
					r.float(sa.Factor)
					r.str(l.LegType)
					r.str(l.Ticker)
					r.str(l.ISIN)
					r.float(l.Factor)
					r.str(sa.Remarks)
					r.end()
				}
			}
		}}}
	},
}

var companiesSet = &dataset{
	name: "companies",
	doc:  "every company, BDR issuer and listed fund, with its registry status and its sector path",
	schema: schema{cols: []column{
		{"company_id", tString, "CNPJ digits (or the CVM code)"},
		{"cvm_code", tString, "the CVM code"},
		{"symbol", tString, "the root symbol (PETR)"},
		{"name", tString, "the registered name"},
		{"trading_name", tString, "the trading name"},
		{"kind", tString, "COMPANY, BDR, FII or ETF"},
		{"status", tString, "ACTIVE, CANCELLED or SUSPENDED: the registry status as of the snapshot"},
		{"status_date", tDate, "when the status began (a cancellation's date); null when unknown"},
		{"listing_segment", tString, "B3's listing segment"},
		{"sector_id", tString, "level 1 of the taxonomy (GET /sectors)"},
		{"sector", tString, "its name"},
		{"industry_group_id", tString, "level 2"},
		{"industry_group", tString, "its name"},
		{"industry_id", tString, "level 3"},
		{"industry", tString, "its name"},
		{"sub_industry_id", tString, "level 4"},
		{"sub_industry", tString, "its name"},
		{"free_float", tFloat, "fraction 0..1; null when unknown"},
		{"employees", tCount, "the employee count; null when unknown (the API's employee_count)"},
		{"founding_date", tDate, "null when unknown"},
		{"ipo_date", tDate, "null when unknown"},
		{"website", tString, "the company's site"},
	}, sortBy: []string{"company_id"}},
	files: func(x *exporter) []file {
		iss := x.ds.Issuers()
		if len(iss) == 0 {
			return nil
		}
		return []file{{name: "companies", emit: func(r *rows) {
			for i := range iss {
				is := &iss[i]
				r.str(is.ID)
				r.str(is.CVMCode)
				r.str(is.Symbol)
				r.str(is.Name)
				r.str(is.TradingName)
				r.str(is.Kind)
				r.str(is.Status)
				r.date(is.StatusDate)
				r.str(is.ListingSegment)
				for _, s := range is.Sector {
					if s == nil {
						r.str("")
						r.str("")
						continue
					}
					r.str(s.ID)
					r.str(s.Name)
				}
				r.float(is.FreeFloat)
				r.count(knownCount(int64(is.Employees), 0))
				r.date(is.FoundingDate)
				r.date(is.IPODate)
				r.str(is.Website)
				r.end()
			}
		}}}
	},
}

var securitiesSet = &dataset{
	name: "securities",
	doc:  "every current ticker: its company, class, listing dates and former tickers",
	schema: schema{cols: []column{
		{"ticker", tString, "the current ticker"},
		{"company_id", tString, "the company; null for macro series"},
		{"isin", tString, "the ISIN"},
		{"stock_type", tString, "CS, PS, PSA…, UNIT, BDR, FUND_UNIT or MACRO"},
		{"currency", tString, "BRL"},
		{"unit_factor", tFloat, "units: shares per unit; else null"},
		{"listed_from", tDate, "the first listed day; null when unknown"},
		{"listed_to", tDate, "the last listed day; null while listed"},
		{"liquidity_rank", tCount, "1 = the most liquid of the market; null when unknown"},
		{"former_tickers", tString, "the tickers renamed into this one, oldest first, comma-separated; null when none"},
	}, sortBy: []string{"ticker"}},
	files: func(x *exporter) []file {
		as := x.ds.Assets()
		if len(as) == 0 {
			return nil
		}
		return []file{{name: "securities", emit: func(r *rows) {
			for i := range as {
				a := &as[i]
				r.str(a.Ticker)
				r.str(a.CompanyID)
				r.str(a.ISIN)
				r.str(a.StockType)
				r.str(a.Currency)
				r.float(a.UnitFactor)
				r.date(a.ListedFrom)
				r.date(a.ListedTo)
				r.count(knownCount(int64(a.LiquidityRank), 1))
				r.str(strings.Join(a.Former, ","))
				r.end()
			}
		}}}
	},
}

var portfoliosSet = &dataset{
	name: "index_portfolios",
	doc:  "the current theoretical portfolio of every index, with weights and theoretical quantities",
	schema: schema{cols: []column{
		{"index", tString, "the index symbol (IBOV…)"},
		{"ticker", tString, "the member (a former ticker resolved to the current one when the snapshot has it)"},
		{"name", tString, "the index name"},
		{"as_of", tDate, "the portfolio's date"},
		{"weight", tFloat, "fraction of the index, 0..1"},
		{"theoretical_qty", tFloat, "shares"},
		{"reductor", tFloat, "the index divisor: points = sum of quantity × price / reductor; null when not published"},
	}, sortBy: []string{"index", "ticker"}, date: "as_of"},
	files: func(x *exporter) []file {
		ixs := x.ds.Indexes()
		if len(ixs) == 0 {
			return nil
		}
		return []file{{name: "index_portfolios", emit: func(r *rows) {
			for i := range ixs {
				ix := &ixs[i]
				type m struct {
					ticker string
					k      int
				}
				ms := make([]m, len(ix.Index.Members))
				for k := range ix.Index.Members {
					t := ix.Index.Members[k].Ticker
					if k < len(ix.Members) && ix.Members[k] != nil {
						t = ix.Members[k].Ticker
					}
					ms[k] = m{t, k}
				}
				slices.SortStableFunc(ms, func(a, b m) int { return cmp.Compare(a.ticker, b.ticker) })
				for _, e := range ms {
					src := &ix.Index.Members[e.k]
					r.str(ix.Symbol)
					r.str(e.ticker)
					r.str(ix.Name)
					r.date(ix.AsOf)
					r.float(src.Weight)
					r.float(src.TheoreticalQty)
					r.float(ix.Reductor)
					r.end()
				}
			}
		}}}
	},
}

var levelsSet = &dataset{
	name: "index_levels", priced: true,
	doc: "the daily level of every index with a reductor, in index points, from its current portfolio: the points of /quotes/{index} (type=historical, daily)",
	schema: schema{cols: []column{
		{"symbol", tString, "the index symbol (IBOV…)"},
		{"date", tDate, "the session"},
		{"open", tFloat, "the opening level, points: Σ theoretical_qty × the member's adjusted open (its last close when it has no bar that session) ÷ reductor (index_portfolios)"},
		{"level", tFloat, "the closing level, points: Σ theoretical_qty × the member's adjusted close ÷ reductor (the API's close_price)"},
		{"as_of", tDate, "the date of the portfolio the level is computed from (index_portfolios' as_of): before it, what that portfolio was worth, not B3's historical index"},
	}, sortBy: []string{"symbol", "date"}, date: "date"},
	files: func(x *exporter) []file {
		var ixs []*engine.IndexData
		all := x.ds.Indexes()
		for i := range all {
			if all[i].HasLevel() {
				ixs = append(ixs, &all[i])
			}
		}
		if len(ixs) == 0 {
			return nil
		}
		slices.SortStableFunc(ixs, func(a, b *engine.IndexData) int { return cmp.Compare(a.Symbol, b.Symbol) })
		to := engine.Date(math.MaxInt32)
		if x.through.Valid() {
			to = x.through
		}
		return []file{{name: "index_levels", emit: func(r *rows) {
			for _, ix := range ixs {
				x.bars = ix.AppendDailyLevels(x.bars[:0], engine.Date(math.MinInt32+1), to)
				for _, b := range x.bars {
					r.str(ix.Symbol)
					r.date(b.Date)
					r.float(b.Open)
					r.float(b.Close)
					r.date(ix.AsOf)
					r.end()
				}
			}
		}}}
	},
}

var reportsSet = &dataset{
	name: "reports",
	doc:  "every financial statement as filed with the CVM (DFP, ITR), every version, in long form: one row per account line",
	schema: schema{cols: []column{
		{"company_id", tString, "the company"},
		{"reference_date", tDate, "the period's reference date"},
		{"statement", tString, "BPA, BPP, DRE, DRA, DVA, DFC_MI or DFC_MD"},
		{"aggregation", tString, "INDIVIDUAL or CONSOLIDATED"},
		{"version", tInt, "the filing's version, 1…"},
		{"form", tString, "DFP (annual) or ITR (quarterly)"},
		{"start_date", tDate, "the period's first day; null for balance sheets"},
		{"end_date", tDate, "the period's last day"},
		{"publish_date", tTime, "when this version was published"},
		{"retrieval_date", tTime, "when it was retrieved"},
		{"code", tString, "the account's dotted code (1.01.02)"},
		{"name", tString, "the account's name"},
		{"fixed", tBool, "whether the code is fixed by the CVM (ST_CONTA_FIXA)"},
		{"value", tDecimal, "BRL (per-share lines 3.99…: BRL per share); null when not filed"},
	}, sortBy: []string{"company_id", "reference_date", "statement", "aggregation", "version"}, date: "reference_date"},
	files: func(x *exporter) []file {
		iss := x.ds.Issuers()
		return []file{{name: "reports", emit: func(r *rows) {
			for i := range iss {
				for _, rep := range iss[i].Reports() {
					acc := rep.AccountList()
					for j := range acc.Len() {
						ac := acc.At(j)
						r.str(rep.CompanyID)
						r.date(rep.ReferenceDate)
						r.str(rep.Statement.String())
						r.str(rep.Aggregation.String())
						r.int(int64(rep.Version))
						r.str(rep.Form.String())
						r.date(rep.StartDate)
						r.date(rep.EndDate)
						r.time(rep.PublishDate.Time())
						r.time(rep.RetrievalDate.Time())
						r.str(ac.Code())
						r.str(ac.Name())
						r.bool(ac.Fixed())
						r.decimal(ac.Value)
						r.end()
					}
				}
			}
		}}}
	},
}

var ratiosSet = &dataset{
	name: "ratios",
	doc:  "every point of every company indicator (fundamental and valuation), every publication, as the ratio routes serve them",
	schema: schema{cols: []column{
		{"company_id", tString, "the company"},
		{"indicator", tString, "the indicator id (GET /ratios/catalog), without class suffix"},
		{"class", tString, "the share class of a per-class indicator (CS, PS, UNIT…: the API's id suffix); null for company-level ones"},
		{"frequency", tString, "ANNUAL, QUARTERLY, TTM, YTD or DAILY"},
		{"reference_date", tDate, "the period's reference date"},
		{"publish_date", tTime, "when the point's inputs were published (a valuation point's: the filing it divides by, published before the session that prices it)"},
		{"known_at", tTime, "when the point became known, the earliest as_of that sees it: its publication, and for a valuation point not before the close of its reference date's session (18:00 in São Paulo); filter on it, not on publish_date, for a point-in-time view without look-ahead"},
		{"kind", tString, "FUNDAMENTAL or VALUATION"},
		{"ticker", tString, "the ticker priced, for per-class points"},
		{"value", tFloat, "the value, in the indicator's format; null when undefined"},
		{"format", tString, "PERCENTAGE (a fraction), MULTIPLE, BRL or SCORE"},
		{"retrieval_date", tTime, "when the inputs were retrieved"},
	}, sortBy: []string{"company_id", "indicator", "class", "frequency", "reference_date", "publish_date"}, date: "reference_date"},
	files: func(x *exporter) []file {
		iss := x.ds.Issuers()
		cat := x.ds.Catalog()
		return []file{{name: "ratios", emit: func(r *rows) {
			for i := range iss {
				for _, si := range seriesOrder(len(iss[i].Ratios()), func(k int) (string, string, string) {
					s := &iss[i].Ratios()[k]
					return cat[s.Indicator].ID, s.Class, s.Frequency
				}) {
					s := &iss[i].Ratios()[si]
					ind := &cat[s.Indicator]
					for pi := range s.Points {
						p := &s.Points[pi]
						r.str(iss[i].ID)
						r.str(ind.ID)
						r.str(s.Class)
						r.str(s.Frequency)
						r.date(p.ReferenceDate)
						r.time(p.PublishDate.Time())
						r.time(s.KnownAt(pi))
						r.str(ind.Kind)
						r.str(tickerOf(x.ds.RatioTicker(p), s.Class))
						r.float(p.Value)
						r.str(ind.Format)
						r.time(p.RetrievalDate.Time())
						r.end()
					}
				}
			}
		}}}
	},
}

// seriesOrder returns the indexes 0..n-1 of an issuer's ratio series in
// the order of their indicator id, class and frequency (key).
func seriesOrder(n int, key func(int) (string, string, string)) []int {
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		a1, a2, a3 := key(a)
		b1, b2, b3 := key(b)
		return cmp.Or(cmp.Compare(a1, b1), cmp.Compare(a2, b2), cmp.Compare(a3, b3))
	})
	return order
}

func tickerOf(t engine.Sym, class string) string {
	if class == "" {
		return ""
	}
	return t.String()
}

var fundReportsSet = &dataset{
	name: "fund_reports",
	doc:  "every monthly report of every listed fund, every version",
	schema: schema{cols: []column{
		{"fund_id", tString, "the fund's company_id (CNPJ)"},
		{"reference_date", tDate, "the month (its first day)"},
		{"version", tInt, "the report's version"},
		{"publish_date", tTime, "when this version was published"},
		{"retrieval_date", tTime, "when it was retrieved"},
		{"net_assets", tDecimal, "BRL"},
		{"shares_outstanding", tFloat, "quotas issued"},
		{"nav_per_share", tFloat, "BRL per quota"},
		{"investors", tFloat, "number of quota holders"},
		{"dividend_yield", tFloat, "the month's, a fraction"},
		{"monthly_return", tFloat, "the month's return, a fraction"},
		{"total_assets", tDecimal, "BRL"},
	}, sortBy: []string{"fund_id", "reference_date", "version"}, date: "reference_date"},
	files: func(x *exporter) []file {
		iss := x.ds.Issuers()
		return []file{{name: "fund_reports", emit: func(r *rows) {
			for i := range iss {
				for _, f := range iss[i].FundReports() {
					r.str(f.FundID)
					r.date(f.ReferenceDate)
					r.int(int64(f.Version))
					r.time(f.PublishDate)
					r.time(f.RetrievalDate)
					r.decimal(f.NetAssets)
					r.float(f.SharesOut)
					r.float(f.NAVPerShare)
					r.float(f.Investors)
					r.float(f.DividendYield)
					r.float(f.MonthlyReturn)
					r.decimal(f.TotalAssets)
					r.end()
				}
			}
		}}}
	},
}

var fundRatiosSet = &dataset{
	name: "fund_ratios",
	doc:  "every point of every listed-fund indicator, every publication, as GET /traded-funds/{fundIdentifier}/ratios serves them",
	schema: schema{cols: []column{
		{"fund_id", tString, "the fund's company_id"},
		{"indicator", tString, "the indicator id (GET /ratios/catalog?kind=FUND)"},
		{"frequency", tString, "DAILY, MONTHLY, QUARTERLY, ANNUAL…"},
		{"reference_date", tDate, "the point's reference date"},
		{"publish_date", tTime, "when the point became known"},
		{"value", tFloat, "the value, in the indicator's format"},
		{"format", tString, "PERCENTAGE (a fraction), MULTIPLE, BRL or SCORE"},
		{"retrieval_date", tTime, "when the inputs were retrieved"},
	}, sortBy: []string{"fund_id", "indicator", "frequency", "reference_date", "publish_date"}, date: "reference_date"},
	files: func(x *exporter) []file {
		iss := x.ds.Issuers()
		cat := x.ds.Catalog()
		return []file{{name: "fund_ratios", emit: func(r *rows) {
			for i := range iss {
				fs := iss[i].FundRatios()
				for _, si := range seriesOrder(len(fs), func(k int) (string, string, string) {
					s := &fs[k]
					return cat[s.Indicator].ID, "", s.Frequency
				}) {
					s := &fs[si]
					ind := &cat[s.Indicator]
					for pi := range s.Points {
						p := &s.Points[pi]
						r.str(iss[i].ID)
						r.str(ind.ID)
						r.str(s.Frequency)
						r.date(p.ReferenceDate)
						r.time(p.PublishDate.Time())
						r.float(p.Value)
						r.str(ind.Format)
						r.time(p.RetrievalDate.Time())
						r.end()
					}
				}
			}
		}}}
	},
}
