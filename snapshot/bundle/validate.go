package bundle

import (
	"github.com/pregao/pregao/engine"
)

// crossCheck verifies uniqueness and references between the entities of a
// parse whose every line was valid on its own: one check per entity kind,
// in file order, each reporting to c. Sectors, companies and securities
// are checked first, as the later kinds refer to them.
func crossCheck(p *parsed, c *collector) {
	x := &checker{p: p, c: c}
	x.sectors()
	x.companies()
	x.securities()
	x.renames()
	x.bars()
	x.indexes()
	x.reports()
	x.shares()
	x.cashActions()
	x.shareActions()
	x.fundReports()
	x.insiderReports()
	x.documents()
}

// checker holds what the checks of crossCheck share: the parse, the
// collector and the entities others refer to, by id (filled by the checks
// of sectors, companies and securities, in that order).
type checker struct {
	p                *parsed
	c                *collector
	sectorByID       map[string]*engine.Sector
	companyByID      map[string]*engine.Company
	securityByTicker map[string]*engine.Security
}

// company returns the company of id, or nil after reporting an unknown
// company in field of line of file.
func (x *checker) company(file string, line int, field, id string) *engine.Company {
	co, ok := x.companyByID[id]
	if !ok {
		x.c.addf(file, line, field, "unknown company %q (not in %s)", id, FileCompanies)
	}
	return co
}

// ticker returns the security of ticker t, or nil after reporting an
// unknown ticker in field of line of file.
func (x *checker) ticker(file string, line int, field, t string) *engine.Security {
	s, ok := x.securityByTicker[t]
	if !ok {
		x.c.addf(file, line, field, "unknown ticker %q (not in %s)", t, FileSecurities)
	}
	return s
}

// tickerOf reports a ticker of a company other than co (either may be
// nil: then it reports nothing more than ticker did).
func (x *checker) tickerOf(file string, line int, t string, co *engine.Company) {
	if s := x.ticker(file, line, "ticker", t); s != nil && co != nil && s.CompanyID != co.ID {
		x.c.addf(file, line, "ticker", "%s belongs to company %s, not %s", t, s.CompanyID, co.ID)
	}
}

// firstLine records line as the first line of key k in m and returns
// false, or returns the line already recorded for k and true.
func firstLine[K comparable](m map[K]int, k K, line int) (int, bool) {
	if first, dup := m[k]; dup {
		return first, true
	}
	m[k] = line
	return 0, false
}

// sectors: unique ids, parents one level up.
func (x *checker) sectors() {
	p, c := x.p, x.c
	x.sectorByID = make(map[string]*engine.Sector, len(p.sectors))
	file := p.name(FileSectors)
	for i := range p.sectors {
		r := &p.sectors[i]
		if _, dup := x.sectorByID[r.v.ID]; dup {
			c.addf(file, r.line, "id", "duplicate sector id %q", r.v.ID)
			continue
		}
		x.sectorByID[r.v.ID] = &r.v
	}
	for _, r := range p.sectors {
		if r.v.Level <= 1 {
			continue
		}
		par, ok := x.sectorByID[r.v.ParentID]
		switch {
		case !ok:
			c.addf(file, r.line, "parent_id", "unknown sector %q", r.v.ParentID)
		case par.Level != r.v.Level-1:
			c.addf(file, r.line, "parent_id", "sector %q is at level %d, want level %d", r.v.ParentID, par.Level, r.v.Level-1)
		}
	}
}

// companies: unique ids and symbols, sub-industries that are level-4
// sectors.
func (x *checker) companies() {
	p, c := x.p, x.c
	x.companyByID = make(map[string]*engine.Company, len(p.companies))
	symbols := make(map[string]int)
	file := p.name(FileCompanies)
	for i := range p.companies {
		r := &p.companies[i]
		if _, dup := x.companyByID[r.v.ID]; dup {
			c.addf(file, r.line, "company_id", "duplicate company_id %q", r.v.ID)
			continue
		}
		x.companyByID[r.v.ID] = &r.v
		if r.v.Symbol != "" {
			if first, dup := firstLine(symbols, r.v.Symbol, r.line); dup {
				c.addf(file, r.line, "symbol", "symbol %q already used at line %d", r.v.Symbol, first)
			}
		}
		if id := r.v.SubIndustryID; id != "" {
			s, ok := x.sectorByID[id]
			switch {
			case !ok:
				c.addf(file, r.line, "sub_industry_id", "unknown sector %q (not in %s)", id, FileSectors)
			case s.Level != 4:
				c.addf(file, r.line, "sub_industry_id", "sector %q is at level %d, want a level-4 sub_industry", id, s.Level)
			}
		}
	}
}

// securities: unique tickers, known companies, stock types that fit the
// issuer's kind.
func (x *checker) securities() {
	p, c := x.p, x.c
	x.securityByTicker = make(map[string]*engine.Security, len(p.securities))
	file := p.name(FileSecurities)
	for i := range p.securities {
		r := &p.securities[i]
		if _, dup := x.securityByTicker[r.v.Ticker]; dup {
			c.addf(file, r.line, "ticker", "duplicate ticker %q", r.v.Ticker)
			continue
		}
		x.securityByTicker[r.v.Ticker] = &r.v
		if r.v.StockType == engine.ClassMacro {
			continue
		}
		co := x.company(file, r.line, "company_id", r.v.CompanyID)
		if co == nil {
			continue
		}
		st := r.v.StockType
		switch co.Kind {
		case engine.KindBDR:
			if st != engine.ClassBDR {
				c.addf(file, r.line, "stock_type", "%s for a security of BDR issuer %s (want BDR)", st, co.ID)
			}
		case engine.KindFII, engine.KindETF:
			if st != engine.ClassFundUnit {
				c.addf(file, r.line, "stock_type", "%s for a security of %s %s (want FUND_UNIT)", st, co.Kind, co.ID)
			}
		default:
			if st == engine.ClassBDR || st == engine.ClassFundUnit {
				c.addf(file, r.line, "stock_type", "%s for a security of company %s (kind COMPANY)", st, co.ID)
			}
		}
	}
}

// renames: known tickers, each renamed once, no cycles.
func (x *checker) renames() {
	p, c := x.p, x.c
	file := p.name(FileRenames)
	from := make(map[string]string)
	to := make(map[string]bool)
	for _, r := range p.renames {
		ok1 := x.ticker(file, r.line, "from", r.v.From) != nil
		ok2 := x.ticker(file, r.line, "to", r.v.To) != nil
		if !ok1 || !ok2 {
			continue
		}
		if _, dup := from[r.v.From]; dup {
			c.addf(file, r.line, "from", "%s renamed twice", r.v.From)
			continue
		}
		if to[r.v.To] {
			c.addf(file, r.line, "to", "%s is the new name of two tickers", r.v.To)
			continue
		}
		from[r.v.From] = r.v.To
		to[r.v.To] = true
	}
	for _, r := range p.renames {
		t, steps := r.v.From, 0
		for {
			next, ok := from[t]
			if !ok {
				break
			}
			t = next
			if steps++; t == r.v.From || steps > len(from) {
				c.addf(file, r.line, "to", "rename cycle through %s", r.v.From)
				break
			}
		}
	}
}

// bars: daily and intraday series of known tickers, negative prices for
// MACRO series only.
func (x *checker) bars() {
	p := x.p
	for _, b := range []struct {
		base string
		cs   *columns
	}{{FileDaily, p.daily}, {FileIntraday, p.intraday}} {
		if b.cs == nil {
			continue
		}
		file := p.name(b.base)
		for _, blk := range b.cs.blocks {
			s := x.ticker(file, blk.line, "ticker", blk.ticker)
			if s != nil && blk.negLine > 0 && s.StockType != engine.ClassMacro {
				x.c.addf(file, blk.negLine, blk.negField, "negative price for %s (allowed for MACRO series only)", blk.ticker)
			}
		}
	}
}

// indexes: unique symbols. A member need not be a security of the
// bundle: a portfolio may name a ticker that has no quote yet (it is kept,
// and not ranked); empty and repeated member tickers are refused when the
// line is parsed.
func (x *checker) indexes() {
	p, c := x.p, x.c
	file := p.name(FileIndexes)
	idx := make(map[string]bool)
	for _, r := range p.indexes {
		if idx[r.v.Symbol] {
			c.addf(file, r.line, "symbol", "duplicate index %q", r.v.Symbol)
		}
		idx[r.v.Symbol] = true
	}
}

// reports: known companies, one report per key and version.
func (x *checker) reports() {
	p := x.p
	file := p.name(FileReports)
	seen := make(map[reportKey]int, len(p.reports))
	for _, r := range p.reports {
		x.company(file, r.line, "company_id", r.v.CompanyID)
		if first, dup := firstLine(seen, keyReport(&r.v), r.line); dup {
			x.c.addf(file, r.line, "version", "duplicate report (same company_id, statement, aggregation, form, dates and version as line %d)", first)
		}
	}
}

// shares: known companies, one count per company and date.
func (x *checker) shares() {
	p := x.p
	file := p.name(FileShares)
	type cd struct {
		id string
		d  engine.Date
	}
	seen := make(map[cd]int)
	for _, r := range p.shares {
		x.company(file, r.line, "company_id", r.v.CompanyID)
		if first, dup := firstLine(seen, cd{r.v.CompanyID, r.v.Date}, r.line); dup {
			x.c.addf(file, r.line, "date", "duplicate share count for %s on %s (line %d)", r.v.CompanyID, r.v.Date, first)
		}
	}
}

// cashActions: known companies and tickers of theirs, unique ids, one
// row per event and version, versions of an event on the same company
// and ticker.
func (x *checker) cashActions() {
	p, c := x.p, x.c
	file := p.name(FileCashActions)
	ids := make(map[string]int)
	type ev struct {
		id      string
		version int
	}
	versions := make(map[ev]int)
	events := make(map[string]*engine.CashAction)
	for i := range p.cashActions {
		r := &p.cashActions[i]
		co := x.company(file, r.line, "company_id", r.v.CompanyID.String())
		x.tickerOf(file, r.line, r.v.Ticker.String(), co)
		if first, dup := firstLine(ids, r.v.ID, r.line); dup {
			c.addf(file, r.line, "id", "duplicate id %q (line %d)", r.v.ID, first)
			continue
		}
		if first, dup := firstLine(versions, ev{r.v.EventID, r.v.Version}, r.line); dup {
			c.addf(file, r.line, "version", "event %q has version %d twice (line %d)", r.v.EventID, r.v.Version, first)
			continue
		}
		if e, ok := events[r.v.EventID]; ok {
			if e.CompanyID != r.v.CompanyID || e.Ticker != r.v.Ticker {
				c.addf(file, r.line, "event_id", "versions of event %q differ in company_id or ticker", r.v.EventID)
			}
		} else {
			events[r.v.EventID] = &r.v
		}
	}
}

// shareActions: known companies and tickers of theirs, one action per
// key.
func (x *checker) shareActions() {
	p := x.p
	file := p.name(FileShareActions)
	seen := make(map[shareActionKey]int)
	for _, r := range p.shareActions {
		co := x.company(file, r.line, "company_id", r.v.CompanyID)
		if r.v.Ticker != "" {
			x.tickerOf(file, r.line, r.v.Ticker, co)
		}
		if first, dup := firstLine(seen, keyShareAction(&r.v), r.line); dup {
			x.c.addf(file, r.line, "type", "duplicate share action (same company_id, ticker, isin, issued_isin, type and prior_ex_date as line %d)", first)
		}
	}
}

// fundReports: known funds (FII or ETF), one report per fund, month and
// version.
func (x *checker) fundReports() {
	p, c := x.p, x.c
	file := p.name(FileFundReports)
	type fk struct {
		id      string
		d       engine.Date
		version int
	}
	seen := make(map[fk]int)
	for _, r := range p.fundReports {
		if co := x.company(file, r.line, "fund_id", r.v.FundID); co != nil && co.Kind != engine.KindFII && co.Kind != engine.KindETF {
			c.addf(file, r.line, "fund_id", "company %s is of kind %s, want FII or ETF", co.ID, co.Kind)
		}
		if first, dup := firstLine(seen, fk{r.v.FundID, r.v.ReferenceDate, r.v.Version}, r.line); dup {
			c.addf(file, r.line, "version", "duplicate fund report (line %d)", first)
		}
	}
}

// insiderReports: known companies, one report per company, aggregation,
// date and version.
func (x *checker) insiderReports() {
	p := x.p
	file := p.name(FileInsiderReports)
	type ik struct {
		id, agg string
		d       engine.Date
		version int
	}
	seen := make(map[ik]int)
	for _, r := range p.insiderReports {
		x.company(file, r.line, "company_id", r.v.CompanyID)
		if first, dup := firstLine(seen, ik{r.v.CompanyID, r.v.Aggregation, r.v.ReferenceDate, r.v.Version}, r.line); dup {
			x.c.addf(file, r.line, "version", "duplicate insider report (line %d)", first)
		}
	}
}

// documents: known companies, unique ids.
func (x *checker) documents() {
	p := x.p
	file := p.name(FileDocuments)
	seen := make(map[string]int)
	for _, r := range p.documents {
		x.company(file, r.line, "company_id", r.v.CompanyID)
		if first, dup := firstLine(seen, r.v.ID, r.line); dup {
			x.c.addf(file, r.line, "id", "duplicate document id %q (line %d)", r.v.ID, first)
		}
	}
}
