package snapshot

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/pregao/pregao/engine"
)

// kind is the codec of one entity kind: a Universe slice stored in one or
// more section parts named after it. enc writes items [lo,hi) of the
// slice; dec reads them back into the already allocated slice.
type kind struct {
	name   string
	min    int      // fewest raw bytes an item takes (bounds counts)
	nests  []string // nested slice kinds, in the order of their totals
	count  func(u *engine.Universe) int
	alloc  func(u *engine.Universe, n int)
	weight func(u *engine.Universe, i int) int // estimated raw bytes of item i
	enc    func(e *penc, u *engine.Universe, lo, hi int)
	dec    func(d *pdec, u *engine.Universe, lo, hi int) partStats
}

// partStats are row counts a part contributes to the header counts.
type partStats struct {
	dailyRows, intradayRows, accounts int
}

// Row counts stored in the header next to the entity counts.
const (
	countDailyRows    = "daily_rows"
	countIntradayRows = "intraday_rows"
	countAccounts     = "report_accounts"
	countRatioVars    = "ratio_vars"
)

// kinds lists every entity kind in file order. Changing it changes the
// format: bump FormatVersion.
var kinds = []kind{
	{
		name:   "sectors",
		min:    4,
		count:  func(u *engine.Universe) int { return len(u.Sectors) },
		alloc:  func(u *engine.Universe, n int) { u.Sectors = make([]engine.Sector, n) },
		weight: func(u *engine.Universe, i int) int { return 16 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for _, s := range u.Sectors[lo:hi] {
				e.str(s.ID)
				e.str(s.Name)
				e.iv(int64(s.Level))
				e.str(s.ParentID)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			for i := lo; i < hi && d.err == nil; i++ {
				s := &u.Sectors[i]
				s.ID = d.str()
				s.Name = d.str()
				s.Level = d.integer()
				s.ParentID = d.str()
			}
			return partStats{}
		},
	},
	{
		name:   "companies",
		min:    25,
		nests:  []string{"characteristics"},
		count:  func(u *engine.Universe) int { return len(u.Companies) },
		alloc:  func(u *engine.Universe, n int) { u.Companies = make([]engine.Company, n) },
		weight: func(u *engine.Universe, i int) int { return 64 + 8*len(u.Companies[i].Characteristics) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				c := &u.Companies[i]
				e.str(c.ID)
				e.str(c.CVMCode)
				e.str(c.Symbol)
				e.str(c.Name)
				e.str(c.TradingName)
				e.str(c.Kind)
				e.boolean(c.BDRSponsored)
				e.str(c.SubIndustryID)
				e.str(c.Description)
				e.str(c.CEOName)
				e.iv(c.Employees)
				e.num(c.FreeFloat)
				e.str(c.Website)
				e.str(c.LogoURL)
				a := &c.Address
				e.str(a.Line1)
				e.str(a.Line2)
				e.str(a.City)
				e.str(a.State)
				e.str(a.PostalCode)
				e.str(a.Country)
				e.date(c.FoundingDate)
				e.date(c.IPODate)
				e.str(c.Status)
				e.date(c.StatusDate)
				e.str(c.ListingSegment)
				e.slen(len(c.Characteristics), c.Characteristics == nil, 0)
				for _, ch := range c.Characteristics {
					e.str(ch.ID)
					e.str(ch.Name)
					e.str(ch.Type)
					e.str(ch.Description)
				}
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			chars := newPool[engine.Characteristic](d, "characteristics", 4)
			for i := lo; i < hi && d.err == nil; i++ {
				c := &u.Companies[i]
				c.ID = d.str()
				c.CVMCode = d.str()
				c.Symbol = d.str()
				c.Name = d.str()
				c.TradingName = d.str()
				c.Kind = d.str()
				c.BDRSponsored = d.boolean()
				c.SubIndustryID = d.str()
				c.Description = d.str()
				c.CEOName = d.str()
				c.Employees = d.iv()
				c.FreeFloat = d.num()
				c.Website = d.str()
				c.LogoURL = d.str()
				a := &c.Address
				a.Line1 = d.str()
				a.Line2 = d.str()
				a.City = d.str()
				a.State = d.str()
				a.PostalCode = d.str()
				a.Country = d.str()
				c.FoundingDate = d.date()
				c.IPODate = d.date()
				c.Status = d.str()
				c.StatusDate = d.date()
				c.ListingSegment = d.str()
				c.Characteristics = takeLen(d, &chars)
				for j := range c.Characteristics {
					ch := &c.Characteristics[j]
					ch.ID = d.str()
					ch.Name = d.str()
					ch.Type = d.str()
					ch.Description = d.str()
				}
			}
			chars.check(d)
			return partStats{}
		},
	},
	{
		name:   "securities",
		min:    9,
		count:  func(u *engine.Universe) int { return len(u.Securities) },
		alloc:  func(u *engine.Universe, n int) { u.Securities = make([]engine.Security, n) },
		weight: func(u *engine.Universe, i int) int { return 24 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				s := &u.Securities[i]
				e.str(s.Ticker)
				e.str(s.CompanyID)
				e.str(s.ISIN)
				e.str(s.StockType)
				e.str(s.Currency)
				e.num(s.UnitFactor)
				e.date(s.ListedFrom)
				e.date(s.ListedTo)
				e.iv(int64(s.LiquidityRank))
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			for i := lo; i < hi && d.err == nil; i++ {
				s := &u.Securities[i]
				s.Ticker = d.str()
				s.CompanyID = d.str()
				s.ISIN = d.str()
				s.StockType = d.str()
				s.Currency = d.str()
				s.UnitFactor = d.num()
				s.ListedFrom = d.date()
				s.ListedTo = d.date()
				s.LiquidityRank = d.integer()
			}
			return partStats{}
		},
	},
	{
		name:   "renames",
		min:    3,
		count:  func(u *engine.Universe) int { return len(u.Renames) },
		alloc:  func(u *engine.Universe, n int) { u.Renames = make([]engine.TickerRename, n) },
		weight: func(u *engine.Universe, i int) int { return 8 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for _, r := range u.Renames[lo:hi] {
				e.str(r.From)
				e.str(r.To)
				e.date(r.Date)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			for i := lo; i < hi && d.err == nil; i++ {
				r := &u.Renames[i]
				r.From = d.str()
				r.To = d.str()
				r.Date = d.date()
			}
			return partStats{}
		},
	},
	{
		name:   "daily",
		min:    2,
		nests:  []string{"rows"},
		count:  func(u *engine.Universe) int { return len(u.Daily) },
		alloc:  func(u *engine.Universe, n int) { u.Daily = make([]engine.Series, n) },
		weight: func(u *engine.Universe, i int) int { return 8 + 16*u.Daily[i].Len() },
		enc:    encDaily,
		dec:    decDaily,
	},
	{
		name:   "intraday",
		min:    2,
		nests:  []string{"rows"},
		count:  func(u *engine.Universe) int { return len(u.Intraday) },
		alloc:  func(u *engine.Universe, n int) { u.Intraday = make([]engine.Intraday, n) },
		weight: func(u *engine.Universe, i int) int { return 8 + 14*u.Intraday[i].Len() },
		enc:    encIntraday,
		dec:    decIntraday,
	},
	{
		name:   "indexes",
		min:    5,
		nests:  []string{"members"},
		count:  func(u *engine.Universe) int { return len(u.Indexes) },
		alloc:  func(u *engine.Universe, n int) { u.Indexes = make([]engine.Index, n) },
		weight: func(u *engine.Universe, i int) int { return 16 + 8*len(u.Indexes[i].Members) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				x := &u.Indexes[i]
				e.str(x.Symbol)
				e.str(x.Name)
				e.date(x.AsOf)
				e.num(x.Reductor)
				e.slen(len(x.Members), x.Members == nil, 0)
				for _, m := range x.Members {
					e.str(m.Ticker)
					e.num(m.Weight)
					e.num(m.TheoreticalQty)
				}
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			members := newPool[engine.IndexMember](d, "members", 3)
			for i := lo; i < hi && d.err == nil; i++ {
				x := &u.Indexes[i]
				x.Symbol = d.str()
				x.Name = d.str()
				x.AsOf = d.date()
				x.Reductor = d.num()
				x.Members = takeLen(d, &members)
				for j := range x.Members {
					m := &x.Members[j]
					m.Ticker = d.str()
					m.Weight = d.num()
					m.TheoreticalQty = d.num()
				}
			}
			members.check(d)
			return partStats{}
		},
	},
	{
		name:  "reports",
		min:   13,
		nests: []string{"accounts", "sources"},
		count: func(u *engine.Universe) int { return len(u.Reports) },
		alloc: func(u *engine.Universe, n int) { u.Reports = make([]engine.Report, n) },
		weight: func(u *engine.Universe, i int) int {
			return 32 + 8*len(u.Reports[i].Accounts) + 16*u.Reports[i].Sources.Len()
		},
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			if e.acc != nil {
				// Format 6: the accounts and heads are in the column area.
				e.encReportHeads(u, lo, hi)
				return
			}
			for i := lo; i < hi; i++ {
				r := &u.Reports[i]
				e.str(r.CompanyID)
				e.str(r.Statement.String())
				e.str(r.Aggregation.String())
				e.str(r.Form.String())
				e.date(r.ReferenceDate)
				e.date(r.StartDate)
				e.date(r.EndDate)
				e.time(r.PublishDate.Time())
				e.time(r.RetrievalDate.Time())
				e.iv(int64(r.Version))
				e.slen(len(r.Accounts), r.Accounts == nil, 0)
				if e.acc != nil {
					encSources(e, r.Sources.All(), 1)
					continue
				}
				acc := r.AccountList()
				for j := range acc.Len() {
					a := acc.At(j)
					e.str(a.Code())
					e.str(a.Name())
					e.num(a.Value)
					e.boolean(a.Fixed())
				}
				encSources(e, r.Sources.All(), 1)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			if d.ls != nil && d.ls.version >= columnsVersion {
				return decReports6(d, u, lo, hi)
			}
			accounts := newPool[engine.Account](d, "accounts", 4)
			sources := newSourcePool(d)
			lines := newLineCache(d)
			for i := lo; i < hi && d.err == nil; i++ {
				r := &u.Reports[i]
				decReportHead(d, r)
				r.Accounts = takeLen(d, &accounts)
				for j := range r.Accounts {
					a := &r.Accounts[j]
					code, name := d.strIdx(), d.strIdx()
					a.Value = d.num()
					a.Line = lines.line(d, code, name, d.boolean())
				}
				r.Sources = sources.takeList(d)
			}
			accounts.check(d)
			sources.done(d)
			return partStats{accounts: len(accounts.s)}
		},
	},
	{
		name:   "shares",
		min:    5,
		count:  func(u *engine.Universe) int { return len(u.Shares) },
		alloc:  func(u *engine.Universe, n int) { u.Shares = make([]engine.SharesPoint, n) },
		weight: func(u *engine.Universe, i int) int { return 16 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for _, s := range u.Shares[lo:hi] {
				e.str(s.CompanyID)
				e.date(s.Date)
				e.iv(s.Common)
				e.iv(s.Preferred)
				e.iv(s.Treasury)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			for i := lo; i < hi && d.err == nil; i++ {
				s := &u.Shares[i]
				s.CompanyID = d.str()
				s.Date = d.date()
				s.Common = d.iv()
				s.Preferred = d.iv()
				s.Treasury = d.iv()
			}
			return partStats{}
		},
	},
	{
		name:   "cash_actions",
		min:    26,
		nests:  []string{"installments"},
		count:  func(u *engine.Universe) int { return len(u.CashActions) },
		alloc:  func(u *engine.Universe, n int) { u.CashActions = make([]engine.CashAction, n) },
		weight: func(u *engine.Universe, i int) int { return 64 + 12*u.CashActions[i].Installments.Len() },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				c := &u.CashActions[e.item(i)] // (format 6: cashOrder)
				e.str(c.ID)
				e.str(c.EventID)
				e.iv(int64(c.Version))
				e.str(c.CompanyID.String())
				e.str(c.Ticker.String())
				e.str(c.StockType.String())
				e.str(c.ISIN.String())
				e.date(c.ApprovalDate)
				e.date(c.PriorExDate)
				e.stamp(c.PublishDate)
				e.date(c.PaymentDate)
				e.str(c.Protocol)
				e.str(c.Name.String())
				e.str(c.Code.String())
				e.num(c.DeclaredValue)
				e.num(c.MonetaryCorrection)
				e.date(c.CorrectionStart)
				e.date(c.CorrectionEnd)
				e.num(c.NetValue)
				e.str(c.Currency.String())
				insts := c.Installments.All()
				e.slen(len(insts), insts == nil, 0)
				for _, in := range insts {
					e.num(in.DeclaredValue)
					e.num(in.MonetaryCorrection)
					e.num(in.NetValue)
					e.str(in.Currency)
					e.date(in.PaymentDate)
				}
				encSource(e, c.SourceOrZero())
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			inst := newPool[engine.Installment](d, "installments", 5)
			var srcs cashSources
			for i := lo; i < hi && d.err == nil; i++ {
				c := &u.CashActions[i]
				c.ID = d.str()
				c.EventID = d.str()
				c.Version = d.integer()
				// Interned (engine.Sym): each id and ticker is then one
				// string, whose lookups engine.Build remembers.
				c.CompanyID = d.sym()
				c.Ticker = d.sym()
				c.StockType = d.label()
				c.ISIN = d.sym()
				c.ApprovalDate = d.date()
				c.PriorExDate = d.date()
				c.PublishDate = d.stamp()
				c.PaymentDate = d.date()
				c.Protocol = d.str()
				c.Name = d.label()
				c.Code = d.label()
				c.DeclaredValue = d.num()
				c.MonetaryCorrection = d.num()
				c.CorrectionStart = d.date()
				c.CorrectionEnd = d.date()
				c.NetValue = d.num()
				c.Currency = d.label()
				insts := takeLen(d, &inst)
				for j := range insts {
					in := &insts[j]
					in.DeclaredValue = d.num()
					in.MonetaryCorrection = d.num()
					in.NetValue = d.num()
					in.Currency = d.str()
					in.PaymentDate = d.date()
				}
				c.Installments = engine.InstallmentsOf(insts)
				c.Source = srcs.take(d)
			}
			inst.check(d)
			return partStats{}
		},
	},
	{
		name:   "share_actions",
		min:    11,
		nests:  []string{"legs"},
		count:  func(u *engine.Universe) int { return len(u.ShareActions) },
		alloc:  func(u *engine.Universe, n int) { u.ShareActions = make([]engine.ShareAction, n) },
		weight: func(u *engine.Universe, i int) int { return 32 + 8*len(u.ShareActions[i].Legs) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				s := &u.ShareActions[i]
				e.str(s.CompanyID)
				e.str(s.ISIN)
				e.str(s.IssuedISIN)
				e.str(s.Ticker)
				e.date(s.ApprovalDate)
				e.date(s.PriorExDate)
				e.str(s.Type)
				e.str(s.Label)
				e.num(s.Factor)
				e.slen(len(s.Legs), s.Legs == nil, 0)
				for _, l := range s.Legs {
					e.str(l.LegType)
					e.str(l.ISIN)
					e.str(l.Ticker)
					e.num(l.Factor)
				}
				e.str(s.Remarks)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			legs := newPool[engine.Leg](d, "legs", 4)
			for i := lo; i < hi && d.err == nil; i++ {
				s := &u.ShareActions[i]
				s.CompanyID = d.str()
				s.ISIN = d.str()
				s.IssuedISIN = d.str()
				s.Ticker = d.str()
				s.ApprovalDate = d.date()
				s.PriorExDate = d.date()
				s.Type = d.str()
				s.Label = d.str()
				s.Factor = d.num()
				s.Legs = takeLen(d, &legs)
				for j := range s.Legs {
					l := &s.Legs[j]
					l.LegType = d.str()
					l.ISIN = d.str()
					l.Ticker = d.str()
					l.Factor = d.num()
				}
				s.Remarks = d.str()
			}
			legs.check(d)
			return partStats{}
		},
	},
	{
		name:   "fund_reports",
		min:    13,
		nests:  []string{"sources"},
		count:  func(u *engine.Universe) int { return len(u.FundReports) },
		alloc:  func(u *engine.Universe, n int) { u.FundReports = make([]engine.FundReport, n) },
		weight: func(u *engine.Universe, i int) int { return 48 + 16*len(u.FundReports[i].Sources) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				f := &u.FundReports[i]
				e.str(f.FundID)
				e.date(f.ReferenceDate)
				e.iv(int64(f.Version))
				e.time(f.PublishDate)
				e.time(f.RetrievalDate)
				e.num(f.NetAssets)
				e.num(f.SharesOut)
				e.num(f.NAVPerShare)
				e.num(f.Investors)
				e.num(f.DividendYield)
				e.num(f.MonthlyReturn)
				e.num(f.TotalAssets)
				encSourceRefs(e, f.Sources, 0)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			sources := newSourcePool(d)
			for i := lo; i < hi && d.err == nil; i++ {
				f := &u.FundReports[i]
				f.FundID = d.str()
				f.ReferenceDate = d.date()
				f.Version = d.integer()
				f.PublishDate = d.time()
				f.RetrievalDate = d.time()
				f.NetAssets = d.num()
				f.SharesOut = d.num()
				f.NAVPerShare = d.num()
				f.Investors = d.num()
				f.DividendYield = d.num()
				f.MonthlyReturn = d.num()
				f.TotalAssets = d.num()
				f.Sources = sources.takeRef(d)
			}
			sources.done(d)
			return partStats{}
		},
	},
	{
		name:   "insider_reports",
		min:    8,
		nests:  []string{"movements", "sources"},
		count:  func(u *engine.Universe) int { return len(u.InsiderReports) },
		alloc:  func(u *engine.Universe, n int) { u.InsiderReports = make([]engine.InsiderReport, n) },
		weight: func(u *engine.Universe, i int) int { return 32 + 16*len(u.InsiderReports[i].Movements) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				r := &u.InsiderReports[i]
				e.str(r.CompanyID)
				e.date(r.ReferenceDate)
				e.str(r.Aggregation)
				e.iv(int64(r.Version))
				e.time(r.PublishDate)
				e.time(r.RetrievalDate)
				e.slen(len(r.Movements), r.Movements == nil, 0)
				for _, m := range r.Movements {
					e.str(m.Group)
					e.str(m.Operation)
					e.str(m.Ticker)
					e.str(m.StockType)
					e.date(m.Date)
					e.iv(m.Quantity)
					e.num(m.Price)
					e.num(m.Volume)
				}
				encSourceRefs(e, r.Sources, 1)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			moves := newPool[engine.InsiderMove](d, "movements", 8)
			sources := newSourcePool(d)
			for i := lo; i < hi && d.err == nil; i++ {
				r := &u.InsiderReports[i]
				r.CompanyID = d.str()
				r.ReferenceDate = d.date()
				r.Aggregation = d.str()
				r.Version = d.integer()
				r.PublishDate = d.time()
				r.RetrievalDate = d.time()
				r.Movements = takeLen(d, &moves)
				for j := range r.Movements {
					m := &r.Movements[j]
					m.Group = d.str()
					m.Operation = d.str()
					m.Ticker = d.str()
					m.StockType = d.str()
					m.Date = d.date()
					m.Quantity = d.iv()
					m.Price = d.num()
					m.Volume = d.num()
				}
				r.Sources = sources.takeRef(d)
			}
			moves.check(d)
			sources.done(d)
			return partStats{}
		},
	},
	{
		name:   "documents",
		min:    14,
		count:  func(u *engine.Universe) int { return len(u.Documents) },
		alloc:  func(u *engine.Universe, n int) { u.Documents = make([]engine.Document, n) },
		weight: func(u *engine.Universe, i int) int { return 64 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				x := &u.Documents[i]
				e.str(x.ID)
				e.str(x.CompanyID)
				e.str(x.Category)
				e.str(x.Type)
				e.str(x.Title)
				e.date(x.ReferenceDate)
				e.time(x.PublishDate)
				e.time(x.RetrievalDate)
				e.iv(int64(x.Version))
				encSource(e, &x.Source)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			for i := lo; i < hi && d.err == nil; i++ {
				x := &u.Documents[i]
				x.ID = d.str()
				x.CompanyID = d.str()
				x.Category = d.str()
				x.Type = d.str()
				x.Title = d.str()
				x.ReferenceDate = d.date()
				x.PublishDate = d.time()
				x.RetrievalDate = d.time()
				x.Version = d.integer()
				decSource(d, &x.Source)
			}
			return partStats{}
		},
	},
	{
		name:   "catalog",
		min:    8,
		nests:  []string{"strings"},
		count:  func(u *engine.Universe) int { return len(u.Derived.Catalog) },
		alloc:  func(u *engine.Universe, n int) { u.Derived.Catalog = make([]engine.Indicator, n) },
		weight: func(u *engine.Universe, i int) int { return 64 },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				x := &u.Derived.Catalog[i]
				e.str(x.ID)
				e.str(x.Name)
				e.str(x.Kind)
				e.str(x.Format)
				e.str(x.Formula)
				e.slen(len(x.Variables), x.Variables == nil, 0)
				for _, s := range x.Variables {
					e.str(s)
				}
				e.slen(len(x.Frequencies), x.Frequencies == nil, 0)
				for _, s := range x.Frequencies {
					e.str(s)
				}
				e.boolean(x.ByClass)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			strs := newPool[string](d, "strings", 1)
			for i := lo; i < hi && d.err == nil; i++ {
				x := &u.Derived.Catalog[i]
				x.ID = d.str()
				x.Name = d.str()
				x.Kind = d.str()
				x.Format = d.str()
				x.Formula = d.str()
				x.Variables = takeLen(d, &strs)
				for j := range x.Variables {
					x.Variables[j] = d.str()
				}
				x.Frequencies = takeLen(d, &strs)
				for j := range x.Frequencies {
					x.Frequencies[j] = d.str()
				}
				x.ByClass = d.boolean()
			}
			strs.check(d)
			return partStats{}
		},
	},
	{
		name:   "ratios",
		min:    10,
		nests:  []string{"vars"},
		count:  func(u *engine.Universe) int { return len(u.Derived.Ratios) },
		alloc:  func(u *engine.Universe, n int) { u.Derived.Ratios = make([]engine.RatioPoint, n) },
		weight: func(u *engine.Universe, i int) int { return 24 + 4*int(u.Derived.Ratios[i].NVars) },
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			for i := lo; i < hi; i++ {
				p := &u.Derived.Ratios[i]
				e.str(u.Derived.SymOf(p.CompanyID).String()) // (a load's points index RatioSyms)
				e.uv(uint64(p.Indicator))
				e.str(p.Class.String())
				e.str(u.Derived.SymOf(p.Ticker).String())
				e.str(p.Frequency.String())
				e.date(p.ReferenceDate)
				e.stamp(p.PublishDate)
				e.stamp(p.RetrievalDate)
				e.num(p.Value)
				vars := u.Derived.Vars(p)
				if len(vars) != int(p.NVars) && e.err == nil {
					e.err = fmt.Errorf("ratio point %d: variables [%d, +%d) beyond the %d stored", i, p.VarsAt, p.NVars, len(u.Derived.RatioVars))
				}
				e.slen(len(vars), false, 0)
				for _, v := range vars {
					e.num(v)
				}
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			if d.ls != nil && d.ls.version >= columnsVersion {
				return decRatioColumns(d, u, lo, hi)
			}
			// The part's variables go to one range of Derived.RatioVars,
			// reserved at once (parts decode in parallel; see loadState).
			total := d.count(1)
			if d.err != nil {
				return partStats{}
			}
			base := d.reserveRatioVars(u, total)
			used := 0
			for i := lo; i < hi && d.err == nil; i++ {
				p := &u.Derived.Ratios[i]
				p.CompanyID = d.sym()
				p.Indicator = d.indicator()
				p.Class = d.shareClass()
				p.Ticker = d.sym()
				p.Frequency = d.frequency()
				p.ReferenceDate = d.date()
				p.PublishDate = d.stamp()
				p.RetrievalDate = d.stamp()
				p.Value = d.num()
				n, _ := d.slen() // nil and empty alike: no variables
				if n > math.MaxUint8 || n > total-used {
					if d.err == nil {
						d.fail("vars: %d more beyond the part's %d (or over %d per point)", n, total-used, math.MaxUint8)
					}
					break
				}
				p.VarsAt, p.NVars = uint32(base+used), uint8(n)
				for j := range n {
					u.Derived.RatioVars[base+used+j] = d.num()
				}
				used += n
			}
			if d.err == nil && used != total {
				d.fail("vars: declared total %d, used %d", total, used)
			}
			return partStats{}
		},
	},
	{
		name:  "fund_ratios",
		min:   8,
		nests: []string{"sources"},
		count: func(u *engine.Universe) int { return len(u.Derived.FundRatios) },
		alloc: func(u *engine.Universe, n int) { u.Derived.FundRatios = make([]engine.FundRatioPoint, n) },
		weight: func(u *engine.Universe, i int) int {
			return 24 + 16*len(u.Derived.FundSourcesOf(&u.Derived.FundRatios[i]))
		},
		enc: func(e *penc, u *engine.Universe, lo, hi int) {
			if e.version >= columnsVersion {
				if e.fund == nil {
					e.err = fmt.Errorf("fund ratio points %d..%d: format 6 writes them as columns", lo, hi)
					return
				}
				e.encFundCols(e.fund)
				return
			}
			for i := lo; i < hi; i++ {
				p := &u.Derived.FundRatios[i]
				if uint64(p.Sources) > uint64(len(u.Derived.FundSources)) && e.err == nil {
					e.err = fmt.Errorf("fund ratio point %d: sources %d beyond the %d lists", i, p.Sources, len(u.Derived.FundSources))
				}
				e.str(u.Derived.FundSymOf(p.FundID).String())
				e.uv(uint64(p.Indicator))
				e.str(p.Frequency.String())
				e.date(p.ReferenceDate)
				e.stamp(p.PublishDate)
				e.stamp(p.RetrievalDate)
				e.num(p.Value)
				encSourceRefs(e, u.Derived.FundSourcesOf(p), 0)
			}
		},
		dec: func(d *pdec, u *engine.Universe, lo, hi int) partStats {
			if d.ls != nil && d.ls.version >= columnsVersion {
				return decFundColumns(d, u, lo, hi)
			}
			sources := newSourcePool(d)
			var nums fundSourceNums
			for i := lo; i < hi && d.err == nil; i++ {
				p := &u.Derived.FundRatios[i]
				p.FundID = d.sym()
				p.Indicator = d.indicator()
				p.Frequency = d.frequency()
				p.ReferenceDate = d.date()
				p.PublishDate = d.stamp()
				p.RetrievalDate = d.stamp()
				p.Value = d.num()
				p.Sources = nums.num(sources.takeRefAt(d))
			}
			sources.done(d)
			if d.err == nil {
				d.addFundSources(u, nums.lists, u.Derived.FundRatios[lo:hi])
			}
			return partStats{}
		},
	},
}

// decReports6 decodes the one reports part of a format 6 file
// (encReportHeads): the layout's tag, the account columns
// (decReportAccounts), the head columns and their index, and the source
// lists the heads name. A load (compact, accounts in place) leaves the
// heads where they lie, read company by company on first use
// (Universe.LazyReports); ReadFile and Decode read them all.
func decReports6(d *pdec, u *engine.Universe, lo, hi int) partStats {
	nacc := d.uv()
	sources := newSourcePool(d)
	if tag := d.uv(); d.err == nil && tag != headLayout {
		d.fail("a reports part of an earlier layout of format 6 (report heads in the part): build the file again")
		return partStats{}
	}
	if lo != 0 {
		d.fail("reports part from report %d: format 6 has one", lo)
		return partStats{}
	}
	accs, end := decReportAccounts(d, lo, nacc)
	hsize, n := d.uv(), d.uv()
	if d.err != nil {
		return partStats{}
	}
	cols := d.ls.cols
	if n > uint64(d.remaining()) || hsize > uint64(len(cols))-end {
		d.fail("report heads of %d bytes at %d, index of %d bytes: beyond the part or the column area", hsize, end, n)
		return partStats{}
	}
	hix, err := readHeadIndex(d.b[d.i : d.i+int(n)])
	d.i += int(n)
	if err != nil {
		d.fail("%v", err)
		return partStats{}
	}
	if hix.Reports != int64(hi-lo) || uint64(hix.Reports)*headBytes != hsize {
		d.fail("report heads: %d records in %d bytes for %d reports", hix.Reports, hsize, hi-lo)
		return partStats{}
	}
	if err := checkBlocks(hix.Blocks, int64(hsize)); err != nil {
		d.fail("report heads: %v", err)
		return partStats{}
	}
	if hix.Lists > int64(d.remaining()) {
		d.fail("report heads: %d source lists beyond the part", hix.Lists)
		return partStats{}
	}
	lists := make([]engine.SourceList, hix.Lists)
	for k := range lists {
		if d.err != nil {
			return partStats{}
		}
		lists[k] = engine.SourcesOf(sources.take(d))
	}
	sources.done(d)
	labels := make([]engine.Label, len(hix.Words))
	for k, w := range hix.Words {
		l, ok := engine.LabelOf(w)
		if !ok {
			d.fail("report heads: word %q (more distinct words than a process holds)", w)
			return partStats{}
		}
		labels[k] = l
	}
	if d.err != nil {
		return partStats{}
	}
	sec := cols[end : end+hsize : end+hsize]
	fh := newFileHeads(sec, hix, labels, lists, accs, &d.ls.accounts().table)
	if hsize > 0 {
		d.ls.addColumnsWith("report heads", sec, dailyIndex{Blocks: hix.Blocks},
			func(i int, blk []byte) error { return fh.checkBlock(hix.Blocks[i].Off, blk) },
			func(x *colBlocks, k int16) { x.setHeads(fh, k) })
	}
	if d.ls.compactDaily && accountInPlace {
		u.LazyReports = fh
		return partStats{accounts: int(nacc)}
	}
	// Read once the blocks are verified (finishAccounts).
	d.ls.accounts().heads = fh
	return partStats{accounts: int(nacc)}
}

// encReportHeads writes the one reports part of a format 6 file of
// reports [lo, hi) (see decReports6).
func (e *penc) encReportHeads(u *engine.Universe, lo, hi int) {
	a := e.acc
	e.uv(testHeadLayout)
	e.encReportAccounts(lo)
	for i := lo; i < hi; i++ {
		e.nests[0] += len(u.Reports[i].Accounts)
	}
	e.uv(uint64(a.headSize))
	e.uv(uint64(len(a.headIndex)))
	e.body = append(e.body, a.headIndex...)
	for _, l := range a.lists {
		encSources(e, l, 1)
	}
}

// lineCache turns the (code, name, fixed) triples of one part's
// accounts, as string-table indexes, into interned engine.Lines, so that
// the part calls engine.InternLine once per distinct line rather than
// once per account. last remembers, per code index, the line last seen
// with that code (the usual case: one name per code in a part); other
// triples go through m.
type lineCache struct {
	last []lineSlot
	m    map[uint64]engine.Line
}

type lineSlot struct {
	key  uint64 // (code, name, fixed) packed, plus one; 0 = empty
	line engine.Line
}

func newLineCache(d *pdec) *lineCache {
	return &lineCache{last: make([]lineSlot, len(d.strs)), m: map[uint64]engine.Line{}}
}

func (c *lineCache) line(d *pdec, code, name int, fixed bool) engine.Line {
	if d.err != nil {
		return 0
	}
	key := uint64(code)<<33 | uint64(name)<<1 // indexes < 2^31: a part is far smaller
	if fixed {
		key |= 1
	}
	key++ // slots hold key+1: 0 is empty
	s := &c.last[code]
	if s.key == key {
		return s.line
	}
	l, ok := c.m[key]
	if !ok {
		l = engine.InternLine(d.strs[code], d.strs[name], fixed)
		c.m[key] = l
	}
	*s = lineSlot{key, l}
	return l
}

// takeLen reads a nested slice length and takes that many items from p.
func takeLen[T any](d *pdec, p *pool[T]) []T {
	n, isNil := d.slen()
	return take(d, p, n, isNil)
}

// indicator reads a catalog index; the range against the catalog is
// checked once every part is decoded.
func (d *pdec) indicator() uint16 {
	v := d.uv()
	if v > math.MaxUint16 {
		d.fail("indicator index %d out of range", v)
		return 0
	}
	return uint16(v)
}

// cashSources gives the cash actions of a part their sources: an action
// whose source reads as the one before it shares that one's (a source
// file's actions cite one document), others take the next of a block.
type cashSources struct {
	free []engine.Source
	last *engine.Source
}

// take reads a source (decSource) and returns it, shared with the last
// one when they are equal.
func (p *cashSources) take(d *pdec) *engine.Source {
	var s engine.Source
	decSource(d, &s)
	if p.last != nil && *p.last == s {
		return p.last
	}
	if len(p.free) == 0 {
		p.free = make([]engine.Source, sourceBlock)
	}
	p.last = &p.free[0]
	*p.last, p.free = s, p.free[1:]
	return p.last
}

func encSource(e *penc, s *engine.Source) {
	e.url(s.VisualizationURL)
	e.url(s.DownloadURL)
	e.time(s.PublishedAt)
	e.time(s.RetrievedAt)
	e.str(s.Name)
}

func decSource(d *pdec, s *engine.Source) {
	s.VisualizationURL = d.url()
	s.DownloadURL = d.url()
	s.PublishedAt = d.time()
	s.RetrievedAt = d.time()
	s.Name = d.str()
}

// url writes a source's address: from format 6 its packed form
// (engine.URL.Packed: a template number and its part, so that the part's
// string table holds no template's text), earlier formats the whole
// address, each as a string.
func (e *penc) url(u engine.URL) {
	if e.version < columnsVersion {
		e.str(u.String())
		return
	}
	e.str(u.Packed())
}

// url reads what penc.url wrote. A packed address that is not what
// engine.URLOf makes of its address (a template beyond the table, a
// split other than URLOf's) is an error.
func (d *pdec) url() engine.URL {
	s := d.str()
	if d.ls == nil || d.ls.version < columnsVersion {
		return engine.URLOf(s)
	}
	u, ok := engine.UnpackURL(s)
	if !ok && d.err == nil {
		d.fail("source address %q: not a packed address", s)
	}
	return u
}

func encSources(e *penc, src []engine.Source, slot int) {
	e.slen(len(src), src == nil, slot)
	for i := range src {
		encSource(e, &src[i])
	}
}

// encSourceRefs is encSources for the kinds whose format 6 parts name a
// list of sources already written in the part by its number (fund
// reports, insider reports, fund ratio points, whose items cite the
// same documents over and over): a uvarint 0 for nil, 1 then the
// uvarint number of a list written before (the lists of at least one
// source, numbered from 0 in the part), or 2 + the length then the
// sources. Only the sources written count in the part's total. A list
// is named when it reads back the same (its strings, and its times to
// the nanosecond, absent alike). Earlier formats write encSources'.
func encSourceRefs(e *penc, src []engine.Source, slot int) {
	if e.version < columnsVersion {
		encSources(e, src, slot)
		return
	}
	if src == nil {
		e.uv(0)
		return
	}
	var key string
	if len(src) > 0 {
		key = sourcesKey(e, src)
		if k, ok := e.lists[key]; ok {
			e.uv(1)
			e.uv(uint64(k))
			return
		}
	}
	e.uv(uint64(len(src)) + 2)
	e.nests[slot] += len(src)
	for i := range src {
		encSource(e, &src[i])
	}
	if len(src) > 0 {
		if e.lists == nil {
			e.lists = map[string]int{}
		}
		e.lists[key] = len(e.lists)
	}
}

// sourcesKey returns what a list of sources reads back as, as a string.
func sourcesKey(e *penc, src []engine.Source) string {
	b := e.keyBuf[:0]
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	url := func(u engine.URL) { str(u.Packed()) }
	tm := func(t time.Time) {
		if t.IsZero() {
			b = append(b, 0)
			return
		}
		b = append(b, 1)
		b = binary.AppendVarint(b, t.Unix())
		b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
	}
	for i := range src {
		x := &src[i]
		url(x.VisualizationURL)
		url(x.DownloadURL)
		tm(x.PublishedAt)
		tm(x.RetrievedAt)
		str(x.Name)
	}
	e.keyBuf = b
	return string(b)
}

// sourcePool hands out the source lists of one part. The items of a part
// often cite the same documents (every statement of a CVM filing, every
// indicator computed from one fund report), so a list whose encoded bytes
// were already read in the part is given the slice decoded then: each
// distinct list is held once (at demo scale 10, 0.1 GB instead of 0.5
// GB). The lists are immutable once loaded, and each has len == cap.
type sourcePool struct {
	total, used int             // sources the part declares, and read so far
	free        []engine.Source // the rest of the current block
	seen        map[uint64][]engine.Source
	scratch     []engine.Source
	last        []engine.Source // the last list read with a source
	lastEnc     []byte          // its encoded bytes (in the part's raw bytes)
	// lastIn and lastOut are the decoder's time before and after last:
	// its times are deltas from lastIn (pdec.prevSec).
	lastIn, lastOut int64
	// lists are the lists of at least one source read so far by takeRef
	// (format 6), by number.
	lists [][]engine.Source
	// shared and lastList are takeList's: the SourceList of each list
	// given so far (by its first source), and the last one.
	shared   map[*engine.Source]engine.SourceList
	lastList engine.SourceList
}

// sourceBlock is the number of sources allocated at once for the distinct
// lists of a part (at most what the part declares).
const sourceBlock = 256

// seenPool recycles the parts' maps: a load decodes hundreds of parts
// with collection paused, and each map would otherwise stay as garbage.
var seenPool = sync.Pool{New: func() any { return map[uint64][]engine.Source{} }}

// sourceHash keys the lists seen in a part (a variable so that a test can
// make every list collide).
var sourceHash = xxhash.Sum64

// newSourcePool reads a part's declared total of sources.
func newSourcePool(d *pdec) *sourcePool {
	return &sourcePool{total: d.count(5), seen: seenPool.Get().(map[uint64][]engine.Source)}
}

// take reads one list (what encSources wrote).
func (p *sourcePool) take(d *pdec) []engine.Source {
	start, in := d.i, d.prevSec
	if len(p.lastEnc) > 0 && in == p.lastIn && bytes.HasPrefix(d.b[start:], p.lastEnc) {
		// The bytes of the list before, read from the same time: the
		// same list (a reading depends only on the bytes, the part's
		// string table and the time its deltas start from). Items citing
		// one document are mostly next to each other.
		if n := len(p.last); n <= p.total-p.used {
			p.used += n
			d.i += len(p.lastEnc)
			d.prevSec = p.lastOut
			return p.last
		}
	}
	n, list, done := p.claim(d)
	if done {
		return list
	}
	if cap(p.scratch) < n {
		p.scratch = make([]engine.Source, n)
	}
	sc := p.scratch[:n]
	for j := range sc {
		decSource(d, &sc[j])
	}
	if d.err != nil {
		return nil
	}
	p.lastEnc, p.lastIn, p.lastOut = d.b[start:d.i], in, d.prevSec
	h := sourceHash(p.lastEnc)
	if s, ok := p.seen[h]; ok && slices.Equal(s, sc) {
		p.last = s
		return s
	}
	s := p.carve(n)
	copy(s, sc)
	if _, ok := p.seen[h]; !ok { // a hash collision keeps the first list
		p.seen[h] = s
	}
	p.last = s
	return s
}

// claim reads a list's length and counts it against the pool's total:
// done, with list (nil: absent, or past the total, which fails d; empty),
// when there is nothing to decode; else the n items to decode.
func (p *sourcePool) claim(d *pdec) (n int, list []engine.Source, done bool) {
	n, isNil := d.slen()
	if isNil {
		return 0, nil, true
	}
	if n > p.total-p.used {
		if d.err == nil {
			d.fail("sources: %d items beyond the declared total %d", p.used+n, p.total)
		}
		return 0, nil, true
	}
	p.used += n
	if n == 0 {
		return 0, []engine.Source{}, true
	}
	return n, nil, false
}

// carve returns n items of the pool's current block, starting a new
// block (sized for what the total still holds) when it is short.
func (p *sourcePool) carve(n int) []engine.Source {
	if len(p.free) < n {
		p.free = make([]engine.Source, max(n, min(sourceBlock, p.total-p.used+n)))
	}
	s := p.free[:n:n]
	p.free = p.free[n:]
	return s
}

// takeDistinct is take for a part whose lists are distinct (a writer
// wrote each once): each is decoded into the pool's blocks, with no
// lookup of the lists before.
func (p *sourcePool) takeDistinct(d *pdec) []engine.Source {
	n, list, done := p.claim(d)
	if done {
		return list
	}
	s := p.carve(n)
	for j := range s {
		decSource(d, &s[j])
	}
	if d.err != nil {
		return nil
	}
	return s
}

// emptySources is the SourceList of every empty list a load reads.
var emptySources = engine.SourcesOf([]engine.Source{})

// takeList is take as an engine.SourceList: the reports given one list
// share one SourceList too (its slice header allocated once).
func (p *sourcePool) takeList(d *pdec) engine.SourceList {
	s := p.take(d)
	switch {
	case s == nil:
		return engine.SourceList{}
	case len(s) == 0:
		return emptySources
	}
	if l := p.lastList.All(); len(l) > 0 && &l[0] == &s[0] {
		return p.lastList
	}
	if p.shared == nil {
		p.shared = sharedPool.Get().(map[*engine.Source]engine.SourceList)
	}
	l, ok := p.shared[&s[0]]
	if !ok {
		l = engine.SourcesOf(s)
		p.shared[&s[0]] = l
	}
	p.lastList = l
	return l
}

// sharedPool recycles takeList's maps, as seenPool.
var sharedPool = sync.Pool{New: func() any { return map[*engine.Source]engine.SourceList{} }}

// takeRef reads one list written by encSourceRefs: in a part of format
// 6, a list written before is the slice it was read into, with no
// lookup; earlier formats read as take.
func (p *sourcePool) takeRef(d *pdec) []engine.Source {
	l, _ := p.takeRefAt(d)
	return l
}

// takeRefAt is takeRef also returning the number of the list in the
// part (p.lists) when it has one (a list of at least one source in a
// part of format 6), else -1.
func (p *sourcePool) takeRefAt(d *pdec) ([]engine.Source, int) {
	if d.ls == nil || d.ls.version < columnsVersion {
		return p.take(d), -1
	}
	u := d.uv()
	switch {
	case d.err != nil || u == 0:
		return nil, -1
	case u == 1:
		k := d.uv()
		if k >= uint64(len(p.lists)) {
			if d.err == nil {
				d.fail("sources: list %d named, %d read before", k, len(p.lists))
			}
			return nil, -1
		}
		return p.lists[k], int(k)
	}
	n := u - 2
	if n > uint64(p.total-p.used) {
		d.fail("sources: %d items beyond the declared total %d", uint64(p.used)+n, p.total)
		return nil, -1
	}
	if n == 0 {
		return []engine.Source{}, -1
	}
	p.used += int(n)
	if len(p.free) < int(n) {
		p.free = make([]engine.Source, max(int(n), min(sourceBlock, p.total-p.used+int(n))))
	}
	l := p.free[:n:n]
	p.free = p.free[n:]
	for j := range l {
		decSource(d, &l[j])
	}
	if d.err != nil {
		return nil, -1
	}
	p.lists = append(p.lists, l)
	return l, len(p.lists) - 1
}

// fundSourceNums numbers the distinct source lists of one fund ratios
// part as its points read them (FundRatioPoint.Sources, before the part's
// lists join Derived.FundSources; see pdec.addFundSources): a list
// numbered in the part (format 6) by that number, another by the slice
// it was read into, nil 0.
type fundSourceNums struct {
	lists  [][]engine.Source // the part's lists, point k's is lists[k-1]
	byRef  []uint32          // number of the part's list k, 0: none yet
	bySlc  map[*engine.Source]uint32
	empty  uint32 // number of an empty list, 0: none yet
	last   []engine.Source
	lastNo uint32
}

// num returns the number of l, k its number in the part (-1: none).
func (n *fundSourceNums) num(l []engine.Source, k int) uint32 {
	switch {
	case l == nil:
		return 0
	case k >= 0:
		for len(n.byRef) <= k {
			n.byRef = append(n.byRef, 0)
		}
		if n.byRef[k] == 0 {
			n.byRef[k] = n.add(l)
		}
		return n.byRef[k]
	case len(l) == 0:
		if n.empty == 0 {
			n.empty = n.add(l)
		}
		return n.empty
	case len(n.last) == len(l) && &n.last[0] == &l[0]:
		return n.lastNo
	}
	no, ok := n.bySlc[&l[0]]
	if !ok || len(n.lists[no-1]) != len(l) {
		if n.bySlc == nil {
			n.bySlc = map[*engine.Source]uint32{}
		}
		no = n.add(l)
		n.bySlc[&l[0]] = no
	}
	n.last, n.lastNo = l, no
	return no
}

func (n *fundSourceNums) add(l []engine.Source) uint32 {
	n.lists = append(n.lists, l)
	return uint32(len(n.lists))
}

// shareFundSources makes each list of u.Derived.FundSources that equals
// the sources of a fund report (as Derive makes them: a point cites its
// report's documents) that report's slice, so that the lists the fund
// ratios parts decoded, and the string tables they hold, are garbage
// after the load: the two kinds' parts decode in parallel, so neither
// can name the other's lists. A list's report is sought, from the first
// point citing it, among its fund's first run of reports, of the
// point's reference date, from the report after the one found last (the
// points of a series go through their fund's reports in order); a list
// no report equals stays.
func shareFundSources(u *engine.Universe, ls *loadState) {
	if ls != nil && ls.fundLists != nil {
		shareFundLists(u, ls.fundLists)
		return
	}
	d := &u.Derived
	if len(d.FundSources) == 0 || len(u.FundReports) == 0 {
		return
	}
	runs := fundReportRuns(u.FundReports)
	seen := make([]bool, len(d.FundSources))
	var run []engine.FundReport
	fund, cur := engine.Sym(0), 0
	for i := range d.FundRatios {
		p := &d.FundRatios[i]
		if p.Sources == 0 || int(p.Sources) > len(seen) || seen[p.Sources-1] {
			continue
		}
		seen[p.Sources-1] = true
		l := d.FundSources[p.Sources-1]
		if len(l) == 0 {
			continue
		}
		if i == 0 || p.FundID != fund {
			fund, cur = p.FundID, 0
			r := runs[fund.String()]
			run = u.FundReports[r.lo:r.hi]
		}
		for k := range run {
			j := cur + k
			if j >= len(run) {
				j -= len(run)
			}
			r := &run[j]
			if r.ReferenceDate == p.ReferenceDate && slices.Equal(r.Sources, l) {
				d.FundSources[p.Sources-1] = r.Sources
				cur = j + 1
				break
			}
		}
	}
}

// span is a run of items [lo, hi).
type span struct{ lo, hi int }

// fundReportRuns returns each fund's first run of reports (reports are
// grouped by fund).
func fundReportRuns(reports []engine.FundReport) map[string]span {
	runs := map[string]span{}
	for lo := 0; lo < len(reports); {
		id, hi := reports[lo].FundID, lo+1
		for hi < len(reports) && reports[hi].FundID == id {
			hi++
		}
		if _, ok := runs[id]; !ok {
			runs[id] = span{lo, hi}
		}
		lo = hi
	}
	return runs
}

// addFundSources appends a part's source lists to u.Derived.FundSources
// and renumbers its points' Sources (numbers in lists) accordingly.
// Parts decode in parallel: each appends under the load's lock, so the
// lists lie in the order the parts finish (as RatioVars' ranges).
func (d *pdec) addFundSources(u *engine.Universe, lists [][]engine.Source, ps []engine.FundRatioPoint) {
	if len(lists) == 0 {
		return
	}
	if d.ls != nil {
		d.ls.fundMu.Lock()
		defer d.ls.fundMu.Unlock()
	}
	base := len(u.Derived.FundSources)
	if uint64(base)+uint64(len(lists)) >= math.MaxUint32 {
		d.fail("sources: more than %d fund ratio source lists", math.MaxUint32-1)
		return
	}
	u.Derived.FundSources = append(u.Derived.FundSources, lists...)
	for i := range ps {
		if ps[i].Sources != 0 {
			ps[i].Sources += uint32(base)
		}
	}
}

// done checks that the part's lists hold the declared total, and gives
// the map back.
func (p *sourcePool) done(d *pdec) {
	if d.err == nil && p.used != p.total {
		d.fail("sources: declared total %d, used %d", p.total, p.used)
	}
	clear(p.seen)
	seenPool.Put(p.seen)
	p.seen = nil
	if p.shared != nil {
		clear(p.shared)
		sharedPool.Put(p.shared)
		p.shared = nil
	}
}

// Daily parts: a directory (ticker, rows+1 or 0 for nil columns) of every
// series, then each series' columns in order.
// bars encodes the columns daily and intraday series share, in file
// order: open, high, low, close, volume, quantity.
func (e *penc) bars(open, high, low, close, volume []engine.Num, quantity []int64) {
	for _, c := range [...][]engine.Num{open, high, low, close, volume} {
		e.numCol(c)
	}
	e.intCol(quantity, false)
}

// bars decodes what penc.bars wrote for one series of n rows starting at
// row off of its part: the five number columns into nums (five blocks
// of total rows) and the quantities into the first block of ints.
func (d *pdec) bars(nums []engine.Num, ints []int64, total, off, n int) (open, high, low, close, volume []engine.Num, quantity []int64) {
	col := func(k int) []engine.Num {
		c := nums[k*total+off : k*total+off+n : k*total+off+n]
		d.numCol(c)
		return c
	}
	open, high, low, close, volume = col(0), col(1), col(2), col(3), col(4)
	quantity = ints[off : off+n : off+n]
	d.intCol(quantity, false)
	return
}

func encDaily(e *penc, u *engine.Universe, lo, hi int) {
	for i := lo; i < hi; i++ {
		s := &u.Daily[i]
		e.str(s.Ticker)
		e.slen(s.Len(), s.Dates == nil, 0)
	}
	for i := lo; i < hi; i++ {
		s := &u.Daily[i]
		if s.Dates == nil {
			continue
		}
		e.dateCol(s.Dates)
		e.bars(s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity)
		e.intCol(s.Trades, false)
	}
}

// dailyMinRow is the fewest bytes a daily row takes: one per column.
const dailyMinRow = 8

// rowDir is one series' entry in a bars part: its row count, and whether
// its columns were nil (not empty) when encoded.
type rowDir struct {
	n     int
	isNil bool
}

// readRowDir reads the ticker and row count of series lo..hi of a bars
// part (kind names it in errors), hands each ticker to setTicker and checks
// that the counts add up to the part's declared total.
func readRowDir(d *pdec, kind string, total, lo, hi int, setTicker func(i int, t string)) []rowDir {
	dirs := make([]rowDir, hi-lo)
	sum := 0
	for i := lo; i < hi && d.err == nil; i++ {
		setTicker(i, d.str())
		n, isNil := d.slen()
		if n > total-sum {
			d.fail("%s rows: %d rows beyond the declared total %d", kind, sum+n, total)
			break
		}
		dirs[i-lo] = rowDir{n, isNil}
		sum += n
	}
	if d.err == nil && sum != total {
		d.fail("%s rows: declared total %d, used %d", kind, total, sum)
	}
	return dirs
}

func decDaily(d *pdec, u *engine.Universe, lo, hi int) partStats {
	if d.ls != nil && d.ls.version >= columnsVersion {
		return decDailyColumns(d, u, lo, hi)
	}
	total := d.count(dailyMinRow)
	if d.err != nil {
		return partStats{}
	}
	dates := make([]engine.Date, total)
	dirs := readRowDir(d, "daily", total, lo, hi, func(i int, t string) { u.Daily[i].Ticker = t })
	if d.ls != nil && d.ls.compactDaily {
		decDailyCompact(d, u, lo, hi, dates, dirs)
		return partStats{dailyRows: total}
	}
	nums := make([]engine.Num, 5*total)
	ints := make([]int64, 2*total)
	off := 0
	for i := lo; i < hi && d.err == nil; i++ {
		s := &u.Daily[i]
		dr := dirs[i-lo]
		if dr.isNil {
			continue
		}
		n := dr.n
		s.Dates = dates[off : off+n : off+n]
		s.Trades = ints[total+off : total+off+n : total+off+n]
		d.dateCol(s.Dates)
		s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity = d.bars(nums, ints, total, off, n)
		d.intCol(s.Trades, false)
		off += n
	}
	return partStats{dailyRows: total}
}

// dailyScratch holds one series' columns while it decodes in a load that
// compacts them (see decDailyCompact); reused across series and parts.
type dailyScratch struct {
	nums []engine.Num
	ints []int64
}

var dailyScratchPool = sync.Pool{New: func() any { return new(dailyScratch) }}

// decDailyCompact decodes the series of a daily part one by one and keeps
// each in its compact form, so that a load never holds the wide columns
// of every series at once. Whole-cent columns (the number columns' scale
// at most 2, as COTAHIST prices and volumes are) decode straight into
// cents; any other series decodes into reused scratch columns and is
// compacted from them (engine.CompactSeries), keeping copies of its
// columns when it does not fit. The dates, which both forms share, go to
// one block per part.
func decDailyCompact(d *pdec, u *engine.Universe, lo, hi int, dates []engine.Date, dirs []rowDir) {
	sc := dailyScratchPool.Get().(*dailyScratch)
	defer dailyScratchPool.Put(sc)
	off := 0
	for i := lo; i < hi && d.err == nil; i++ {
		s := &u.Daily[i]
		dr := dirs[i-lo]
		if dr.isNil {
			continue
		}
		n := dr.n
		dt := dates[off : off+n : off+n]
		off += n
		d.dateCol(dt)
		if d.err != nil {
			break
		}
		if cs, ok := decCents(d, s.Ticker, dt); ok {
			*s = cs
			continue
		}
		if cap(sc.nums) < 5*n {
			sc.nums, sc.ints = make([]engine.Num, 5*n), make([]int64, 2*n)
		}
		s.Dates = dt
		s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity = d.bars(sc.nums[:5*n], sc.ints[:2*n], n, 0, n)
		s.Trades = sc.ints[n : 2*n : 2*n]
		d.intCol(s.Trades, false)
		if d.err != nil {
			break
		}
		engine.CompactSeries(s)
		if s.Open != nil { // did not fit: keep its own columns
			s.Open, s.High, s.Low, s.Close = slices.Clone(s.Open), slices.Clone(s.High), slices.Clone(s.Low), slices.Clone(s.Close)
			s.Volume, s.Quantity, s.Trades = slices.Clone(s.Volume), slices.Clone(s.Quantity), slices.Clone(s.Trades)
		}
	}
}

// decCents decodes one series' bars (what penc.bars and the trades column
// wrote) straight into the compact form when every column is of whole
// cents and every value fits it; otherwise it consumes nothing and
// reports false.
func decCents(d *pdec, ticker string, dates []engine.Date) (engine.Series, bool) {
	n := len(dates)
	start := d.i
	px := make([]int32, 4*n)
	vol := make([]int64, n)
	cnt := make([]uint32, 2*n)
	for k := 0; k < 4; k++ {
		if !centsCol(d, px[k*n:(k+1)*n], engine.NullCents, math.MinInt32+1, math.MaxInt32) {
			d.i = start
			return engine.Series{}, false
		}
	}
	if !centsCol(d, vol, engine.NullVolumeCents, -maxExactInt, maxExactInt) || !d.countCol(cnt[:n]) || !d.countCol(cnt[n:]) {
		d.i = start
		return engine.Series{}, false
	}
	return engine.CompactSeriesOf(ticker, dates, px[:n:n], px[n:2*n:2*n], px[2*n:3*n:3*n], px[3*n:], vol, cnt[:n:n], cnt[n:]), true
}

// Intraday parts: like daily parts, with delta-coded unix-second times.
func encIntraday(e *penc, u *engine.Universe, lo, hi int) {
	for i := lo; i < hi; i++ {
		s := &u.Intraday[i]
		e.str(s.Ticker)
		e.slen(s.Len(), s.Times == nil, 0)
	}
	for i := lo; i < hi; i++ {
		s := u.Intraday[i].Expanded()
		if s.Times == nil {
			continue
		}
		e.intCol(s.Times, true)
		e.bars(s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity)
	}
}

const intradayMinRow = 7

func decIntraday(d *pdec, u *engine.Universe, lo, hi int) partStats {
	if d.ls != nil && d.ls.version >= columnsVersion {
		return decIntradayColumns(d, u, lo, hi)
	}
	total := d.count(intradayMinRow)
	if d.err != nil {
		return partStats{}
	}
	if d.ls != nil && d.ls.compactDaily {
		dirs := readRowDir(d, "intraday", total, lo, hi, func(i int, t string) { u.Intraday[i].Ticker = t })
		decIntradayCompact(d, u, lo, hi, make([]int64, total), dirs)
		return partStats{intradayRows: total}
	}
	ints := make([]int64, 2*total)
	nums := make([]engine.Num, 5*total)
	dirs := readRowDir(d, "intraday", total, lo, hi, func(i int, t string) { u.Intraday[i].Ticker = t })
	off := 0
	for i := lo; i < hi && d.err == nil; i++ {
		s := &u.Intraday[i]
		dr := dirs[i-lo]
		if dr.isNil {
			continue
		}
		n := dr.n
		s.Times = ints[total+off : total+off+n : total+off+n]
		d.intCol(s.Times, true)
		s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity = d.bars(nums, ints, total, off, n)
		off += n
	}
	return partStats{intradayRows: total}
}

// decIntradayCompact decodes the series of an intraday part one by one
// into reused scratch columns and keeps each in its compact form
// (engine.Intraday.CompactColumns), or a copy of its wide columns when
// it does not fit, so that a load never holds the wide columns of every
// series beside the compact ones. The times, which both forms share, go
// to one block per part.
func decIntradayCompact(d *pdec, u *engine.Universe, lo, hi int, times []int64, dirs []rowDir) {
	sc := dailyScratchPool.Get().(*dailyScratch)
	defer dailyScratchPool.Put(sc)
	var buf engine.IntradayColumns
	off := 0
	for i := lo; i < hi && d.err == nil; i++ {
		s := &u.Intraday[i]
		dr := dirs[i-lo]
		if dr.isNil {
			continue
		}
		n := dr.n
		s.Times = times[off : off+n : off+n]
		off += n
		d.intCol(s.Times, true)
		if d.err != nil {
			break
		}
		if cs, ok := decIntradayCents(d, s.Ticker, s.Times); ok {
			*s = cs
			continue
		}
		if cap(sc.nums) < 5*n {
			sc.nums, sc.ints = make([]engine.Num, 5*n), make([]int64, 2*n)
		}
		s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity = d.bars(sc.nums[:5*n], sc.ints[:2*n], n, 0, n)
		if d.err != nil {
			break
		}
		px := make([]int32, 4*n)
		buf = engine.IntradayColumns{Open: px[:n:n], High: px[n : 2*n : 2*n], Low: px[2*n : 3*n : 3*n], Close: px[3*n:],
			Volume: make([]int64, n), Quantity: make([]uint32, n)}
		if c, ok := s.CompactColumns(&buf); ok {
			*s = engine.CompactIntradayOf(s.Ticker, s.Times, c.Open, c.High, c.Low, c.Close, c.Volume, c.Quantity)
			continue
		}
		// Did not fit: keep its own columns.
		s.Open, s.High, s.Low, s.Close = slices.Clone(s.Open), slices.Clone(s.High), slices.Clone(s.Low), slices.Clone(s.Close)
		s.Volume, s.Quantity = slices.Clone(s.Volume), slices.Clone(s.Quantity)
		engine.KeepWideIntraday(s)
	}
}

// decIntradayCents is decCents for a 1-minute series: its bars (what
// penc.bars wrote) straight into the compact form when every column is
// of whole cents and every value fits it; otherwise it consumes nothing
// and reports false.
func decIntradayCents(d *pdec, ticker string, times []int64) (engine.Intraday, bool) {
	n := len(times)
	start := d.i
	px := make([]int32, 4*n)
	vol := make([]int64, n)
	qty := make([]uint32, n)
	for k := 0; k < 4; k++ {
		if !centsCol(d, px[k*n:(k+1)*n], engine.NullCents, math.MinInt32+1, math.MaxInt32) {
			d.i = start
			return engine.Intraday{}, false
		}
	}
	if !centsCol(d, vol, engine.NullVolumeCents, -maxExactInt, maxExactInt) || !d.countCol(qty) {
		d.i = start
		return engine.Intraday{}, false
	}
	return engine.CompactIntradayOf(ticker, times, px[:n:n], px[n:2*n:2*n], px[2*n:3*n:3*n], px[3*n:], vol, qty), true
}

// checkSeries reports column length mismatches, which the format cannot
// represent (one row count per series).
func checkSeries(u *engine.Universe) error {
	for i := range u.Daily {
		s := &u.Daily[i]
		n := len(s.Dates)
		if len(s.Open) != n || len(s.High) != n || len(s.Low) != n || len(s.Close) != n ||
			len(s.Volume) != n || len(s.Quantity) != n || len(s.Trades) != n {
			return fmt.Errorf("daily series %d (%q): columns have different lengths", i, s.Ticker)
		}
	}
	for i := range u.Intraday {
		if s := &u.Intraday[i]; !s.Consistent() {
			return fmt.Errorf("intraday series %d (%q): columns have different lengths", i, s.Ticker)
		}
	}
	return nil
}

// checkIndicators reports ratio points whose indicator is not in the
// catalog, the fund ratio points' only without withRatios (a load whose
// ratio points are used in place leaves theirs to the ratio blocks'
// check, ratioBlockCheck, so that it reads no point).
func checkIndicators(u *engine.Universe, withRatios bool) error {
	n := len(u.Derived.Catalog)
	ratios := u.Derived.Ratios
	if !withRatios {
		ratios = nil
	}
	for i := range ratios {
		if p := &ratios[i]; int(p.Indicator) >= n {
			return fmt.Errorf("ratio point %d (%s): indicator %d beyond the catalog of %d", i, p.CompanyID, p.Indicator, n)
		}
	}
	funds := u.Derived.FundRatios
	if u.Derived.FundRuns != nil {
		funds = nil // checked by their blocks (fundBlockCheck)
	}
	for i := range funds {
		if p := &funds[i]; int(p.Indicator) >= n {
			return fmt.Errorf("fund ratio point %d (%s): indicator %d beyond the catalog of %d", i, u.Derived.FundSymOf(p.FundID), p.Indicator, n)
		}
	}
	return nil
}

// decReportHead decodes a report's fields before its accounts, the same
// in every format.
func decReportHead(d *pdec, r *engine.Report) {
	r.CompanyID = d.str()
	r.Statement = d.label()
	r.Aggregation = d.label()
	r.Form = d.label()
	r.ReferenceDate = d.date()
	r.StartDate = d.date()
	r.EndDate = d.date()
	r.PublishDate = d.stamp()
	r.RetrievalDate = d.stamp()
	r.Version = d.integer()
}
