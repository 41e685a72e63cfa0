package bundle

import (
	"strconv"

	"github.com/pregao/pregao/engine"
)

// crossCheck verifies uniqueness and references between the entities of a
// parse whose every line was valid on its own.
func crossCheck(p *parsed, c *collector) {
	// sectors: unique ids, parents one level up
	sectors := make(map[string]*engine.Sector, len(p.sectors))
	file := p.name(FileSectors)
	for i := range p.sectors {
		r := &p.sectors[i]
		if _, dup := sectors[r.v.ID]; dup {
			c.addf(file, r.line, "id", "duplicate sector id %q", r.v.ID)
			continue
		}
		sectors[r.v.ID] = &r.v
	}
	for _, r := range p.sectors {
		if r.v.Level <= 1 {
			continue
		}
		par, ok := sectors[r.v.ParentID]
		switch {
		case !ok:
			c.addf(file, r.line, "parent_id", "unknown sector %q", r.v.ParentID)
		case par.Level != r.v.Level-1:
			c.addf(file, r.line, "parent_id", "sector %q is at level %d, want level %d", r.v.ParentID, par.Level, r.v.Level-1)
		}
	}

	// companies
	companies := make(map[string]*engine.Company, len(p.companies))
	symbols := make(map[string]int)
	file = p.name(FileCompanies)
	for i := range p.companies {
		r := &p.companies[i]
		if _, dup := companies[r.v.ID]; dup {
			c.addf(file, r.line, "company_id", "duplicate company_id %q", r.v.ID)
			continue
		}
		companies[r.v.ID] = &r.v
		if r.v.Symbol != "" {
			if first, dup := symbols[r.v.Symbol]; dup {
				c.addf(file, r.line, "symbol", "symbol %q already used at line %d", r.v.Symbol, first)
			} else {
				symbols[r.v.Symbol] = r.line
			}
		}
		if id := r.v.SubIndustryID; id != "" {
			s, ok := sectors[id]
			switch {
			case !ok:
				c.addf(file, r.line, "sub_industry_id", "unknown sector %q (not in %s)", id, FileSectors)
			case s.Level != 4:
				c.addf(file, r.line, "sub_industry_id", "sector %q is at level %d, want a level-4 sub_industry", id, s.Level)
			}
		}
	}
	company := func(file string, line int, field, id string) *engine.Company {
		co, ok := companies[id]
		if !ok {
			c.addf(file, line, field, "unknown company %q (not in %s)", id, FileCompanies)
		}
		return co
	}

	// securities
	securities := make(map[string]*engine.Security, len(p.securities))
	file = p.name(FileSecurities)
	for i := range p.securities {
		r := &p.securities[i]
		if _, dup := securities[r.v.Ticker]; dup {
			c.addf(file, r.line, "ticker", "duplicate ticker %q", r.v.Ticker)
			continue
		}
		securities[r.v.Ticker] = &r.v
		if r.v.StockType == engine.ClassMacro {
			continue
		}
		co := company(file, r.line, "company_id", r.v.CompanyID)
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
	ticker := func(file string, line int, field, t string) *engine.Security {
		s, ok := securities[t]
		if !ok {
			c.addf(file, line, field, "unknown ticker %q (not in %s)", t, FileSecurities)
		}
		return s
	}

	// renames: known tickers, each renamed once, no cycles
	file = p.name(FileRenames)
	from := make(map[string]string)
	to := make(map[string]bool)
	for _, r := range p.renames {
		ok1 := ticker(file, r.line, "from", r.v.From) != nil
		ok2 := ticker(file, r.line, "to", r.v.To) != nil
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

	// bars
	for _, x := range []struct {
		base string
		cs   *columns
	}{{FileDaily, p.daily}, {FileIntraday, p.intraday}} {
		if x.cs == nil {
			continue
		}
		file := p.name(x.base)
		for _, b := range x.cs.blocks {
			s := ticker(file, b.line, "ticker", b.ticker)
			if s != nil && b.negLine > 0 && s.StockType != engine.ClassMacro {
				c.addf(file, b.negLine, b.negField, "negative price for %s (allowed for MACRO series only)", b.ticker)
			}
		}
	}

	// indexes
	file = p.name(FileIndexes)
	idx := make(map[string]bool)
	for _, r := range p.indexes {
		if idx[r.v.Symbol] {
			c.addf(file, r.line, "symbol", "duplicate index %q", r.v.Symbol)
		}
		idx[r.v.Symbol] = true
		for i, m := range r.v.Members {
			if _, ok := securities[m.Ticker]; !ok {
				c.addf(file, r.line, fieldIdx("members", i, "ticker"), "unknown ticker %q (not in %s)", m.Ticker, FileSecurities)
			}
		}
	}

	// reports
	file = p.name(FileReports)
	reports := make(map[reportKey]int, len(p.reports))
	for _, r := range p.reports {
		company(file, r.line, "company_id", r.v.CompanyID)
		k := keyReport(&r.v)
		if first, dup := reports[k]; dup {
			c.addf(file, r.line, "version", "duplicate report (same company_id, statement, aggregation, form, dates and version as line %d)", first)
			continue
		}
		reports[k] = r.line
	}

	// shares
	file = p.name(FileShares)
	type cd struct {
		id string
		d  engine.Date
	}
	shares := make(map[cd]int)
	for _, r := range p.shares {
		company(file, r.line, "company_id", r.v.CompanyID)
		k := cd{r.v.CompanyID, r.v.Date}
		if first, dup := shares[k]; dup {
			c.addf(file, r.line, "date", "duplicate share count for %s on %s (line %d)", r.v.CompanyID, r.v.Date, first)
			continue
		}
		shares[k] = r.line
	}

	// cash actions
	file = p.name(FileCashActions)
	ids := make(map[string]int)
	type ev struct {
		id      string
		version int
	}
	versions := make(map[ev]int)
	events := make(map[string]*engine.CashAction)
	for i := range p.cashActions {
		r := &p.cashActions[i]
		co := company(file, r.line, "company_id", r.v.CompanyID)
		if s := ticker(file, r.line, "ticker", r.v.Ticker); s != nil && co != nil && s.CompanyID != co.ID {
			c.addf(file, r.line, "ticker", "%s belongs to company %s, not %s", r.v.Ticker, s.CompanyID, co.ID)
		}
		if first, dup := ids[r.v.ID]; dup {
			c.addf(file, r.line, "id", "duplicate id %q (line %d)", r.v.ID, first)
			continue
		}
		ids[r.v.ID] = r.line
		if first, dup := versions[ev{r.v.EventID, r.v.Version}]; dup {
			c.addf(file, r.line, "version", "event %q has version %d twice (line %d)", r.v.EventID, r.v.Version, first)
			continue
		}
		versions[ev{r.v.EventID, r.v.Version}] = r.line
		if e, ok := events[r.v.EventID]; ok {
			if e.CompanyID != r.v.CompanyID || e.Ticker != r.v.Ticker {
				c.addf(file, r.line, "event_id", "versions of event %q differ in company_id or ticker", r.v.EventID)
			}
		} else {
			events[r.v.EventID] = &r.v
		}
	}

	// share actions
	file = p.name(FileShareActions)
	sa := make(map[shareActionKey]int)
	for _, r := range p.shareActions {
		co := company(file, r.line, "company_id", r.v.CompanyID)
		if r.v.Ticker != "" {
			if s := ticker(file, r.line, "ticker", r.v.Ticker); s != nil && co != nil && s.CompanyID != co.ID {
				c.addf(file, r.line, "ticker", "%s belongs to company %s, not %s", r.v.Ticker, s.CompanyID, co.ID)
			}
		}
		k := keyShareAction(&r.v)
		if first, dup := sa[k]; dup {
			c.addf(file, r.line, "type", "duplicate share action (same company_id, ticker, isin, issued_isin, type and prior_ex_date as line %d)", first)
			continue
		}
		sa[k] = r.line
	}

	// fund reports
	file = p.name(FileFundReports)
	type fk struct {
		id      string
		d       engine.Date
		version int
	}
	funds := make(map[fk]int)
	for _, r := range p.fundReports {
		if co := company(file, r.line, "fund_id", r.v.FundID); co != nil && co.Kind != engine.KindFII && co.Kind != engine.KindETF {
			c.addf(file, r.line, "fund_id", "company %s is of kind %s, want FII or ETF", co.ID, co.Kind)
		}
		k := fk{r.v.FundID, r.v.ReferenceDate, r.v.Version}
		if first, dup := funds[k]; dup {
			c.addf(file, r.line, "version", "duplicate fund report (line %d)", first)
			continue
		}
		funds[k] = r.line
	}

	// insider reports
	file = p.name(FileInsiderReports)
	type ik struct {
		id, agg string
		d       engine.Date
		version int
	}
	ins := make(map[ik]int)
	for _, r := range p.insiderReports {
		company(file, r.line, "company_id", r.v.CompanyID)
		k := ik{r.v.CompanyID, r.v.Aggregation, r.v.ReferenceDate, r.v.Version}
		if first, dup := ins[k]; dup {
			c.addf(file, r.line, "version", "duplicate insider report (line %d)", first)
			continue
		}
		ins[k] = r.line
	}

	// documents
	file = p.name(FileDocuments)
	docs := make(map[string]int)
	for _, r := range p.documents {
		company(file, r.line, "company_id", r.v.CompanyID)
		if first, dup := docs[r.v.ID]; dup {
			c.addf(file, r.line, "id", "duplicate document id %q (line %d)", r.v.ID, first)
			continue
		}
		docs[r.v.ID] = r.line
	}
}

func fieldIdx(arr string, i int, field string) string {
	return arr + "[" + strconv.Itoa(i) + "]." + field
}
