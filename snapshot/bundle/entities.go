package bundle

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
)

// Enumerations accepted by the bundle format (read-only).
var (
	Kinds        = []string{engine.KindCompany, engine.KindBDR, engine.KindFII, engine.KindETF}
	StockTypes   = []string{engine.ClassCS, engine.ClassPS, engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassPSE, engine.ClassUnit, engine.ClassBDR, engine.ClassFundUnit, engine.ClassMacro}
	Statuses     = []string{"ACTIVE", "CANCELLED", "SUSPENDED"}
	Aggregations = []string{engine.AggIndividual, engine.AggConsolidated}
	Forms        = []string{"DFP", "ITR"}
	CashNames    = []string{"DIVIDEND", "INTEREST_ON_EQUITY", "RESTITUTION", "AMORTIZATION", "RENDIMENTO"}
	ShareActions = []string{engine.ActStockBonus, engine.ActSpinOff, engine.ActSpinOffQuantity, engine.ActStockSplit, engine.ActReverseSplit, engine.ActMerger, engine.ActTotalRedemption, engine.ActRestitutionInShares, engine.ActRestitutionWithReduce, engine.ActSubscription}
	LegTypes     = []string{engine.LegOriginal, engine.LegReceived}
	// LegActions are the share-action types that carry legs (and no root factor).
	LegActions = []string{engine.ActSpinOff, engine.ActSpinOffQuantity, engine.ActMerger, engine.ActRestitutionInShares, engine.ActRestitutionWithReduce}
)

var (
	reTicker    matcher = matchFunc(engine.ValidTicker)
	reMacro             = regexp.MustCompile(`^[A-Z][A-Z0-9_]{1,15}$`)
	reSymbol            = regexp.MustCompile(`^[A-Z0-9]{4}$`)
	reCompanyID matcher = matchFunc(validCompanyID)
	reISIN              = regexp.MustCompile(`^[A-Z]{2}[A-Z0-9]{9}[0-9]$`)
	reCurrency          = regexp.MustCompile(`^[A-Z]{3}$`)
	reIndex             = regexp.MustCompile(`^[A-Z0-9]{2,12}$`)
)

// validCompanyID reports whether s matches ^[0-9]{1,14}$.
func validCompanyID(s string) bool {
	if len(s) < 1 || len(s) > 14 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validAccount reports whether s matches ^[0-9]+(\.[0-9]+)*$.
func validAccount(s string) bool {
	digit := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= '0' && ch <= '9':
			digit = true
		case ch == '.' && digit:
			digit = false
		default:
			return false
		}
	}
	return digit
}

// matcher is a compiled pattern: a regexp or a hand-written function.
type matcher interface{ MatchString(string) bool }

type matchFunc func(string) bool

func (f matchFunc) MatchString(s string) bool { return f(s) }

func (l *lineCtx) enum(field, v string, allowed []string) {
	if !slices.Contains(allowed, v) {
		if v == "" {
			l.errf(field, "required (want %s)", strings.Join(allowed, ", "))
			return
		}
		l.errf(field, "unknown value %q (want %s)", v, strings.Join(allowed, ", "))
	}
}

func (l *lineCtx) optEnum(field, v string, allowed []string) {
	if v != "" {
		l.enum(field, v, allowed)
	}
}

func (l *lineCtx) required(field, v string) bool {
	if strings.TrimSpace(v) == "" {
		l.errf(field, "required")
		return false
	}
	return true
}

func (l *lineCtx) pattern(field, v string, re matcher, want string) {
	if !re.MatchString(v) {
		if v == "" {
			l.errf(field, "required (%s)", want)
			return
		}
		l.errf(field, "bad value %q (want %s)", v, want)
	}
}

func (l *lineCtx) optPattern(field, v string, re matcher, want string) {
	if v != "" {
		l.pattern(field, v, re, want)
	}
}

func (l *lineCtx) date(field string, d engine.Date) {
	if !d.Valid() {
		l.errf(field, "required (YYYY-MM-DD)")
	}
}

func (l *lineCtx) version(field string, v int) {
	if v < 1 {
		l.errf(field, "want an integer >= 1, got %d", v)
	}
}

func (l *lineCtx) nonNeg(field string, v engine.Num) {
	if v.Valid() && v < 0 {
		l.errf(field, "want >= 0 or null, got %s", fmtNum(v))
	}
}

func (l *lineCtx) positive(field string, v engine.Num) {
	if v.Valid() && v <= 0 {
		l.errf(field, "want > 0 or null, got %s", fmtNum(v))
	}
}

func (l *lineCtx) fraction(field string, v engine.Num) {
	if v.Valid() && (v < 0 || v > 1) {
		l.errf(field, "want a fraction in [0, 1] or null, got %s", fmtNum(v))
	}
}

func (l *lineCtx) order(fieldA string, a engine.Date, fieldB string, b engine.Date) {
	if a.Valid() && b.Valid() && b < a {
		l.errf(fieldB, "%s is before %s %s", b, fieldA, a)
	}
}

func (l *lineCtx) sources(field string, ss []engine.Source) {
	for i := range ss {
		l.source(fmt.Sprintf("%s[%d]", field, i), &ss[i])
	}
}

func (l *lineCtx) source(field string, s *engine.Source) {
	if v := s.VisualizationURL.String(); v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		l.errf(field+".visualization_url", "want an http(s) address, got %q", v)
	}
	if v := s.DownloadURL.String(); v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		l.errf(field+".download_url", "want an http(s) address, got %q", v)
	}
	l.ts(field+".published_at", &s.PublishedAt)
	l.ts(field+".retrieved_at", &s.RetrievedAt)
}

// ts normalises timestamp *t to UTC and checks that its year can be
// written back (0000 to 9999 in UTC).
func (l *lineCtx) ts(field string, t *time.Time) {
	*t = utc(*t)
	if y := t.Year(); !t.IsZero() && (y < 0 || y > 9999) {
		l.errf(field, "timestamp %s is outside years 0000-9999 in UTC", t.Format(time.RFC3339))
	}
}

// makeLike returns a slice of len(in) Ts, nil when in is nil: an absent
// or null array reads as nil, [] as an empty slice, as the JSON library
// decodes the arrays it fills itself.
func makeLike[T, U any](in []U) []T {
	if in == nil {
		return nil
	}
	return make([]T, len(in))
}

// utc returns t in UTC with the location normalised, so that equal
// instants compare equal.
func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}

func fmtNum(v engine.Num) string { return string(appendNum(nil, v)) }

// --- meta ---

func convMeta(m *engine.Meta, l *lineCtx) engine.Meta {
	if m.AsOf.IsZero() {
		l.errf("as_of", "required (RFC 3339 timestamp)")
	}
	l.ts("as_of", &m.AsOf)
	p := &m.Stream
	switch {
	case p.Next == 0 && p.Name == "" && p.Batch == 0 && !p.Session.Valid():
		*p = engine.StreamPosition{} // absent: unknown
	case p.Next == 0:
		l.errf("stream.next", "required (from 1) when stream is given")
	case p.Name == "" || len(p.Name) > 255:
		l.errf("stream.name", "required, at most 255 bytes")
	case !p.Session.Valid():
		l.errf("stream.session", "required (YYYY-MM-DD)")
	case p.Batch == 0:
		l.errf("stream.batch", "required (from 1)")
	}
	return *m
}

// --- sectors ---

func defSector(s *engine.Sector) { *s = engine.Sector{} }

func convSector(s *engine.Sector, l *lineCtx) engine.Sector {
	l.required("id", s.ID)
	l.required("name", s.Name)
	if s.Level < 1 || s.Level > 4 {
		l.errf("level", "want 1 (sector), 2 (industry_group), 3 (industry) or 4 (sub_industry), got %d", s.Level)
	}
	if s.Level == 1 && s.ParentID != "" {
		l.errf("parent_id", "want empty at level 1, got %q", s.ParentID)
	}
	if s.Level > 1 && s.ParentID == "" {
		l.errf("parent_id", "required at level %d", s.Level)
	}
	return *s
}

// --- companies ---

func defCompany(c *engine.Company) {
	*c = engine.Company{}
	c.Employees = -1
	c.FreeFloat = engine.Null
	c.FoundingDate = engine.NoDate
	c.IPODate = engine.NoDate
	c.StatusDate = engine.NoDate
}

func convCompany(c *engine.Company, l *lineCtx) engine.Company {
	l.pattern("company_id", c.ID, reCompanyID, "the CNPJ's 14 digits or the CVM code, digits only")
	l.required("name", c.Name)
	l.enum("kind", c.Kind, Kinds)
	l.optPattern("symbol", c.Symbol, reSymbol, "4 letters or digits, e.g. PETR")
	l.optEnum("status", c.Status, Statuses)
	if c.BDRSponsored && c.Kind != engine.KindBDR {
		l.errf("bdr_sponsored", "true only for kind BDR")
	}
	if c.Employees < -1 {
		l.errf("employee_count", "want >= 0 (or -1 for unknown), got %d", c.Employees)
	}
	l.fraction("free_float", c.FreeFloat)
	for i, ch := range c.Characteristics {
		l.required(fmt.Sprintf("characteristics[%d].name", i), ch.Name)
	}
	t := l.in
	c.Kind, c.Status, c.SubIndustryID, c.ListingSegment = t.s(c.Kind), t.s(c.Status), t.s(c.SubIndustryID), t.s(c.ListingSegment)
	c.Address.City, c.Address.State, c.Address.Country = t.s(c.Address.City), t.s(c.Address.State), t.s(c.Address.Country)
	return *c
}

// --- securities ---

func defSecurity(s *engine.Security) {
	*s = engine.Security{}
	s.UnitFactor = engine.Null
	s.ListedFrom = engine.NoDate
	s.ListedTo = engine.NoDate
}

func convSecurity(s *engine.Security, l *lineCtx) engine.Security {
	l.enum("stock_type", s.StockType, StockTypes)
	if s.StockType == engine.ClassMacro {
		l.pattern("ticker", s.Ticker, reMacro, "an upper-case series name, e.g. SELIC")
		if s.CompanyID != "" {
			l.errf("company_id", "want empty for a MACRO series, got %q", s.CompanyID)
		}
	} else {
		l.pattern("ticker", s.Ticker, reTicker, "4 letters or digits and up to 2 digits, e.g. PETR4")
		l.pattern("company_id", s.CompanyID, reCompanyID, "the issuer's company_id")
	}
	l.optPattern("isin", s.ISIN, reISIN, "a 12-character ISIN, e.g. BRPETRACNPR6")
	l.optPattern("currency", s.Currency, reCurrency, "an ISO 4217 code, e.g. BRL")
	l.positive("unit_factor", s.UnitFactor)
	l.order("listed_from", s.ListedFrom, "listed_to", s.ListedTo)
	if s.LiquidityRank < 0 {
		l.errf("liquidity_rank", "want >= 0, got %d", s.LiquidityRank)
	}
	s.CompanyID, s.StockType, s.Currency = l.in.s(s.CompanyID), l.in.s(s.StockType), l.in.s(s.Currency)
	return *s
}

// --- renames ---

func defRename(r *engine.TickerRename) { *r = engine.TickerRename{Date: engine.NoDate} }

func convRename(r *engine.TickerRename, l *lineCtx) engine.TickerRename {
	l.pattern("from", r.From, reTicker, "a ticker")
	l.pattern("to", r.To, reTicker, "a ticker")
	if r.From != "" && r.From == r.To {
		l.errf("to", "same as from (%q)", r.From)
	}
	l.date("date", r.Date)
	return *r
}

// --- indexes ---

type memberIn struct {
	Ticker         string `json:"ticker"`
	Weight         optNum `json:"weight"`
	TheoreticalQty optNum `json:"theoretical_qty"`
}

type indexIn struct {
	engine.Index
	Members []memberIn `json:"members"`
}

func defIndex(x *indexIn) {
	*x = indexIn{}
	x.AsOf = engine.NoDate
	x.Reductor = engine.Null
}

func convIndex(x *indexIn, l *lineCtx) engine.Index {
	l.pattern("symbol", x.Symbol, reIndex, "2 to 12 upper-case letters or digits, e.g. IBOV")
	l.required("name", x.Name)
	l.positive("reductor", x.Reductor)
	out := x.Index
	out.Members = makeLike[engine.IndexMember](x.Members)
	seen := make(map[string]bool, len(x.Members))
	for i, m := range x.Members {
		f := fmt.Sprintf("members[%d]", i)
		l.pattern(f+".ticker", m.Ticker, reTicker, "a ticker")
		if seen[m.Ticker] {
			l.errf(f+".ticker", "duplicate member %q", m.Ticker)
		}
		seen[m.Ticker] = true
		w, q := m.Weight.get(), m.TheoreticalQty.get()
		l.fraction(f+".weight", w)
		l.nonNeg(f+".theoretical_qty", q)
		out.Members[i] = engine.IndexMember{Ticker: l.in.s(m.Ticker), Weight: w, TheoreticalQty: q}
	}
	return out
}

// --- reports ---

type accountIn struct {
	Code  string `json:"code"`
	Name  string `json:"name"`
	Value optNum `json:"value"`
	Fixed bool   `json:"fixed"`
}

// reportIn is a report as a bundle spells it: the words and times that
// engine.Report holds as Labels and Stamps (convReport converts).
type reportIn struct {
	CompanyID     string          `json:"company_id"`
	Statement     string          `json:"statement"`
	Aggregation   string          `json:"aggregation"`
	Form          string          `json:"form"`
	ReferenceDate engine.Date     `json:"reference_date"`
	StartDate     engine.Date     `json:"start_date"`
	EndDate       engine.Date     `json:"end_date"`
	PublishDate   time.Time       `json:"publish_date"`
	RetrievalDate time.Time       `json:"retrieval_date"`
	Version       int             `json:"version"`
	Accounts      []accountIn     `json:"accounts"`
	Sources       []engine.Source `json:"sources"`
}

func defReport(r *reportIn) {
	*r = reportIn{}
	r.ReferenceDate = engine.NoDate
	r.StartDate = engine.NoDate
	r.EndDate = engine.NoDate
}

// isBalance reports whether statement st is a balance sheet (no period).
func isBalance(st string) bool { return st == "BPA" || st == "BPP" }

// label returns the Label of a report's word when allowed holds it (the
// line's error is enum's), else the zero Label: a bundle's reports add no
// word to the process's Labels.
func label(s string, allowed []string) engine.Label {
	if !slices.Contains(allowed, s) {
		return 0
	}
	return engine.MustLabel(s)
}

func convReport(r *reportIn, l *lineCtx) engine.Report {
	l.pattern("company_id", r.CompanyID, reCompanyID, "a company_id")
	l.enum("statement", r.Statement, engine.Statements)
	l.enum("aggregation", r.Aggregation, Aggregations)
	l.enum("form", r.Form, Forms)
	l.date("reference_date", r.ReferenceDate)
	l.date("end_date", r.EndDate)
	if isBalance(r.Statement) {
		if r.StartDate.Valid() {
			l.errf("start_date", "want null for balance sheet %s, got %s", r.Statement, r.StartDate)
		}
	} else if r.Statement != "" {
		l.date("start_date", r.StartDate)
		l.order("start_date", r.StartDate, "end_date", r.EndDate)
	}
	l.version("version", r.Version)
	t := l.in
	out := engine.Report{
		CompanyID:     t.s(r.CompanyID),
		ReferenceDate: r.ReferenceDate,
		StartDate:     r.StartDate,
		EndDate:       r.EndDate,
		Version:       r.Version,
	}
	out.Statement = label(r.Statement, engine.Statements)
	out.Aggregation = label(r.Aggregation, Aggregations)
	out.Form = label(r.Form, Forms)
	pub, ret := r.PublishDate, r.RetrievalDate
	l.ts("publish_date", &pub)
	l.ts("retrieval_date", &ret)
	out.PublishDate, out.RetrievalDate = engine.StampOf(pub), engine.StampOf(ret)
	out.Accounts = makeLike[engine.Account](r.Accounts)
	increasing := true
	for i, a := range r.Accounts {
		if !validAccount(a.Code) {
			l.errf(fmt.Sprintf("accounts[%d].code", i), "bad account code %q (want dotted digits, e.g. 1.01.02)", a.Code)
		}
		if i > 0 && a.Code <= r.Accounts[i-1].Code {
			increasing = false
		}
		out.Accounts[i] = engine.NewAccount(a.Code, a.Name, a.Fixed, a.Value.get())
	}
	if !increasing { // codes in file order are usually increasing: then no duplicate is possible
		seen := make(map[string]struct{}, len(r.Accounts))
		for i, a := range r.Accounts {
			if _, dup := seen[a.Code]; dup {
				l.errf(fmt.Sprintf("accounts[%d].code", i), "duplicate account %q", a.Code)
			}
			seen[a.Code] = struct{}{}
		}
	}
	src := t.sources(r.Sources)
	l.sources("sources", src)
	out.Sources = engine.SourcesOf(src)
	return out
}

// --- shares ---

func defShares(s *engine.SharesPoint) {
	*s = engine.SharesPoint{}
	s.Date = engine.NoDate
	s.Common = -1
	s.Preferred = -1
}

func convShares(s *engine.SharesPoint, l *lineCtx) engine.SharesPoint {
	l.pattern("company_id", s.CompanyID, reCompanyID, "a company_id")
	l.date("date", s.Date)
	if s.Common < 0 {
		l.errf("common_shares", "required (integer >= 0)")
	}
	if s.Preferred < 0 {
		l.errf("preferred_shares", "required (integer >= 0)")
	}
	if s.Treasury < 0 {
		l.errf("treasury_shares", "want an integer >= 0, got %d", s.Treasury)
	} else if s.Common >= 0 && s.Preferred >= 0 && s.Treasury > s.Common+s.Preferred {
		l.errf("treasury_shares", "%d exceeds common + preferred shares (%d)", s.Treasury, s.Common+s.Preferred)
	}
	s.CompanyID = l.in.s(s.CompanyID)
	return *s
}

// --- cash actions ---

type installmentIn struct {
	DeclaredValue      optNum  `json:"declared_value"`
	MonetaryCorrection optNum  `json:"monetary_correction"`
	NetValue           optNum  `json:"net_value"`
	Currency           string  `json:"currency"`
	PaymentDate        optDate `json:"payment_date"`
}

// cashActionIn is a cash action as a bundle spells it: the words and
// times that engine.CashAction holds as Labels and a Stamp
// (convCashAction converts).
type cashActionIn struct {
	ID                 string          `json:"id"`
	EventID            string          `json:"event_id"`
	Version            int             `json:"version"`
	CompanyID          string          `json:"company_id"`
	Ticker             string          `json:"ticker"`
	StockType          string          `json:"stock_type"`
	ISIN               string          `json:"isin"`
	ApprovalDate       engine.Date     `json:"approval_date"`
	PriorExDate        engine.Date     `json:"prior_ex_date"`
	PublishDate        time.Time       `json:"publish_date"`
	PaymentDate        engine.Date     `json:"payment_date"`
	Protocol           string          `json:"protocol"`
	Name               string          `json:"name"`
	Code               string          `json:"code"`
	DeclaredValue      engine.Num      `json:"declared_value"`
	MonetaryCorrection engine.Num      `json:"monetary_correction"`
	CorrectionStart    engine.Date     `json:"monetary_correction_start_date"`
	CorrectionEnd      engine.Date     `json:"monetary_correction_end_date"`
	NetValue           engine.Num      `json:"net_value"`
	Currency           string          `json:"currency"`
	Installments       []installmentIn `json:"installments"`
	Source             engine.Source   `json:"source"`
}

func defCashAction(c *cashActionIn) {
	*c = cashActionIn{}
	c.ApprovalDate = engine.NoDate
	c.PriorExDate = engine.NoDate
	c.PaymentDate = engine.NoDate
	c.CorrectionStart = engine.NoDate
	c.CorrectionEnd = engine.NoDate
	c.DeclaredValue = engine.Null
	c.MonetaryCorrection = engine.Null
	c.NetValue = engine.Null
}

// CashStockTypes are the stock_type values of a cash action.
var CashStockTypes = []string{engine.ClassCS, engine.ClassPS, engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassPSE, engine.ClassUnit, engine.ClassBDR, engine.ClassFundUnit}

// freeLabel returns the Label of a cash action's word, with an error on
// field past the 256 words a process holds (a bundle may bring any
// number of codes and currencies).
func freeLabel(l *lineCtx, field, s string) engine.Label {
	v, ok := engine.LabelOf(s)
	if !ok {
		l.errf(field, "one word too many: a process holds at most 256 distinct report statements, aggregations and forms and cash stock types, names, codes and currencies")
	}
	return v
}

func convCashAction(c *cashActionIn, l *lineCtx) engine.CashAction {
	l.required("id", c.ID)
	l.required("event_id", c.EventID)
	l.version("version", c.Version)
	l.pattern("company_id", c.CompanyID, reCompanyID, "a company_id")
	l.pattern("ticker", c.Ticker, reTicker, "a ticker")
	l.enum("stock_type", c.StockType, CashStockTypes)
	l.optPattern("isin", c.ISIN, reISIN, "a 12-character ISIN")
	l.enum("name", c.Name, CashNames)
	l.date("prior_ex_date", c.PriorExDate)
	l.order("approval_date", c.ApprovalDate, "prior_ex_date", c.PriorExDate)
	l.order("monetary_correction_start_date", c.CorrectionStart, "monetary_correction_end_date", c.CorrectionEnd)
	l.nonNeg("declared_value", c.DeclaredValue)
	l.nonNeg("monetary_correction", c.MonetaryCorrection)
	l.nonNeg("net_value", c.NetValue)
	l.optPattern("currency", c.Currency, reCurrency, "an ISO 4217 code, e.g. BRL")
	t := l.in
	out := engine.CashAction{
		ID: c.ID, EventID: c.EventID, Version: c.Version,
		CompanyID: engine.Intern(c.CompanyID), Ticker: engine.Intern(c.Ticker), ISIN: engine.Intern(c.ISIN), Protocol: c.Protocol,
		ApprovalDate: c.ApprovalDate, PriorExDate: c.PriorExDate, PaymentDate: c.PaymentDate,
		DeclaredValue: c.DeclaredValue, MonetaryCorrection: c.MonetaryCorrection, NetValue: c.NetValue,
		CorrectionStart: c.CorrectionStart, CorrectionEnd: c.CorrectionEnd,
	}
	if slices.Contains(CashStockTypes, c.StockType) { // else enum's error
		out.StockType = freeLabel(l, "stock_type", c.StockType)
	}
	if slices.Contains(CashNames, c.Name) {
		out.Name = freeLabel(l, "name", c.Name)
	}
	out.Code = freeLabel(l, "code", c.Code)
	out.Currency = freeLabel(l, "currency", c.Currency)
	src := c.Source
	t.source(&src)
	l.source("source", &src)
	out.Source = &src
	pub := c.PublishDate
	l.ts("publish_date", &pub)
	out.PublishDate = engine.StampOf(pub)
	insts := makeLike[engine.Installment](c.Installments)
	for i, in := range c.Installments {
		f := fmt.Sprintf("installments[%d]", i)
		v := engine.Installment{
			DeclaredValue:      in.DeclaredValue.get(),
			MonetaryCorrection: in.MonetaryCorrection.get(),
			NetValue:           in.NetValue.get(),
			Currency:           t.s(in.Currency),
			PaymentDate:        in.PaymentDate.get(),
		}
		l.nonNeg(f+".declared_value", v.DeclaredValue)
		l.nonNeg(f+".monetary_correction", v.MonetaryCorrection)
		l.nonNeg(f+".net_value", v.NetValue)
		l.optPattern(f+".currency", v.Currency, reCurrency, "an ISO 4217 code")
		insts[i] = v
	}
	out.Installments = engine.InstallmentsOf(insts)
	return out
}

// --- share actions ---

type legIn struct {
	LegType string `json:"leg_type"`
	ISIN    string `json:"isin"`
	Ticker  string `json:"ticker"`
	Factor  optNum `json:"factor"`
}

type shareActionIn struct {
	engine.ShareAction
	Legs []legIn `json:"legs"`
}

func defShareAction(s *shareActionIn) {
	*s = shareActionIn{}
	s.ApprovalDate = engine.NoDate
	s.PriorExDate = engine.NoDate
	s.Factor = engine.Null
}

func convShareAction(s *shareActionIn, l *lineCtx) engine.ShareAction {
	l.pattern("company_id", s.CompanyID, reCompanyID, "a company_id")
	if s.Ticker == "" && s.ISIN == "" {
		l.errf("ticker", "required (or isin)")
	}
	l.optPattern("ticker", s.Ticker, reTicker, "a ticker")
	l.optPattern("isin", s.ISIN, reISIN, "a 12-character ISIN")
	l.optPattern("issued_isin", s.IssuedISIN, reISIN, "a 12-character ISIN")
	l.enum("type", s.Type, ShareActions)
	l.date("prior_ex_date", s.PriorExDate)
	l.order("approval_date", s.ApprovalDate, "prior_ex_date", s.PriorExDate)
	out := s.ShareAction
	out.CompanyID, out.Ticker, out.ISIN, out.Type = l.in.s(out.CompanyID), l.in.s(out.Ticker), l.in.s(out.ISIN), l.in.s(out.Type)
	out.Legs = makeLike[engine.Leg](s.Legs)
	for i, g := range s.Legs {
		f := fmt.Sprintf("legs[%d]", i)
		l.enum(f+".leg_type", g.LegType, LegTypes)
		l.optPattern(f+".ticker", g.Ticker, reTicker, "a ticker")
		l.optPattern(f+".isin", g.ISIN, reISIN, "a 12-character ISIN")
		fac := g.Factor.get()
		if !fac.Valid() || fac < 0 {
			l.errf(f+".factor", "required (number >= 0)")
		}
		out.Legs[i] = engine.Leg{LegType: l.in.s(g.LegType), ISIN: l.in.s(g.ISIN), Ticker: l.in.s(g.Ticker), Factor: fac}
	}
	if slices.Contains(LegActions, s.Type) {
		if len(s.Legs) == 0 {
			l.errf("legs", "required for type %s", s.Type)
		}
		if s.Factor.Valid() {
			l.errf("factor", "want null for type %s (factors are per leg)", s.Type)
		}
	} else if s.Type != "" {
		if len(s.Legs) != 0 {
			l.errf("legs", "want none for type %s", s.Type)
		}
		switch s.Type {
		case engine.ActStockSplit, engine.ActStockBonus:
			if !s.Factor.Valid() || s.Factor <= 1 {
				l.errf("factor", "want > 1 for type %s (split 1:10 = 10, 5%% bonus = 1.05), got %s", s.Type, fmtNum(s.Factor))
			}
		case engine.ActReverseSplit:
			if !s.Factor.Valid() || s.Factor <= 0 || s.Factor >= 1 {
				l.errf("factor", "want in (0, 1) for type %s (reverse 10:1 = 0.1), got %s", s.Type, fmtNum(s.Factor))
			}
		default:
			l.nonNeg("factor", s.Factor)
		}
	}
	return out
}

// --- fund reports ---

func defFundReport(f *engine.FundReport) {
	*f = engine.FundReport{}
	f.ReferenceDate = engine.NoDate
	f.NetAssets = engine.Null
	f.SharesOut = engine.Null
	f.NAVPerShare = engine.Null
	f.Investors = engine.Null
	f.DividendYield = engine.Null
	f.MonthlyReturn = engine.Null
	f.TotalAssets = engine.Null
}

func convFundReport(f *engine.FundReport, l *lineCtx) engine.FundReport {
	l.pattern("fund_id", f.FundID, reCompanyID, "the fund's company_id")
	l.date("reference_date", f.ReferenceDate)
	if f.ReferenceDate.Valid() {
		if _, _, d := f.ReferenceDate.Time().Date(); d != 1 {
			l.errf("reference_date", "want the first day of the month, got %s", f.ReferenceDate)
		}
	}
	l.version("version", f.Version)
	// Counts are never negative. Money and rates may be, as filed: a
	// month's yield or return below zero (reversals, losses), a negative
	// net worth, and total assets a few funds report with a negative sign.
	l.nonNeg("shares_outstanding", f.SharesOut)
	l.nonNeg("investors", f.Investors)
	l.ts("publish_date", &f.PublishDate)
	l.ts("retrieval_date", &f.RetrievalDate)
	out := *f
	out.FundID = l.in.s(out.FundID)
	out.Sources = l.in.sources(f.Sources)
	l.sources("sources", out.Sources)
	return out
}

// --- insider reports ---

type moveIn struct {
	Group     string  `json:"group"`
	Operation string  `json:"operation"`
	Ticker    string  `json:"ticker"`
	StockType string  `json:"stock_type"`
	Date      optDate `json:"date"`
	Quantity  *int64  `json:"quantity"`
	Price     optNum  `json:"price"`
	Volume    optNum  `json:"volume"`
}

type insiderIn struct {
	engine.InsiderReport
	Movements []moveIn `json:"movements"`
}

func defInsider(r *insiderIn) {
	*r = insiderIn{}
	r.ReferenceDate = engine.NoDate
}

func convInsider(r *insiderIn, l *lineCtx) engine.InsiderReport {
	l.pattern("company_id", r.CompanyID, reCompanyID, "a company_id")
	l.date("reference_date", r.ReferenceDate)
	l.enum("aggregation", r.Aggregation, Aggregations)
	l.version("version", r.Version)
	t := l.in
	out := r.InsiderReport
	out.CompanyID, out.Aggregation = t.s(out.CompanyID), t.s(out.Aggregation)
	l.ts("publish_date", &out.PublishDate)
	l.ts("retrieval_date", &out.RetrievalDate)
	out.Movements = makeLike[engine.InsiderMove](r.Movements)
	for i, m := range r.Movements {
		f := fmt.Sprintf("movements[%d]", i)
		l.required(f+".group", m.Group)
		l.required(f+".operation", m.Operation)
		l.optPattern(f+".ticker", m.Ticker, reTicker, "a ticker")
		l.optEnum(f+".stock_type", m.StockType, StockTypes)
		v := engine.InsiderMove{Group: t.s(m.Group), Operation: t.s(m.Operation), Ticker: t.s(m.Ticker), StockType: t.s(m.StockType),
			Date: m.Date.get(), Price: m.Price.get(), Volume: m.Volume.get()}
		if m.Quantity == nil || *m.Quantity < 0 {
			l.errf(f+".quantity", "required (integer >= 0)")
		} else {
			v.Quantity = *m.Quantity
		}
		l.nonNeg(f+".price", v.Price)
		l.nonNeg(f+".volume", v.Volume)
		out.Movements[i] = v
	}
	out.Sources = t.sources(r.Sources)
	l.sources("sources", out.Sources)
	return out
}

// --- documents ---

func defDocument(d *engine.Document) {
	*d = engine.Document{}
	d.ReferenceDate = engine.NoDate
}

func convDocument(d *engine.Document, l *lineCtx) engine.Document {
	l.required("id", d.ID)
	l.pattern("company_id", d.CompanyID, reCompanyID, "a company_id")
	l.required("category", d.Category)
	l.version("version", d.Version)
	l.ts("publish_date", &d.PublishDate)
	l.ts("retrieval_date", &d.RetrievalDate)
	l.source("source", &d.Source)
	d.CompanyID, d.Category, d.Type = l.in.s(d.CompanyID), l.in.s(d.Category), l.in.s(d.Type)
	l.in.source(&d.Source)
	return *d
}
