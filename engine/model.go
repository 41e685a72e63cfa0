package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// This file holds the source model: the entities a bundle carries, a
// snapshot stores and a Dataset is built from. JSON tags are the bundle's
// field names (docs/data-format.md). Times are UTC; a zero time.Time or
// NoDate is absent and answers null.

// Share classes (stock_type values).
const (
	ClassCS       = "CS"        // common (ON)
	ClassPS       = "PS"        // preferred (PN)
	ClassPSA      = "PSA"       // preferred A
	ClassPSB      = "PSB"       // preferred B
	ClassPSC      = "PSC"       // preferred C
	ClassPSD      = "PSD"       // preferred D
	ClassPSE      = "PSE"       // preferred E (API suffix _PSE; documented)
	ClassUnit     = "UNIT"      // unit (certificate of several shares)
	ClassBDR      = "BDR"       // depositary receipt of a foreign company
	ClassFundUnit = "FUND_UNIT" // quota of a listed fund (FII, ETF)
	ClassMacro    = "MACRO"     // macro series (SELIC, IPCA, CDI, USD...): no company
)

// ShareClass is the compact form of a Class* string held by RatioPoint.
// The values sort as their names do under strings.Compare; ShareClassNone
// is the empty string (company-level points).
type ShareClass uint8

// ShareClass values, in the order of their names.
const (
	ShareClassNone ShareClass = iota
	ShareClassBDR
	ShareClassCS
	ShareClassFundUnit
	ShareClassMacro
	ShareClassPS
	ShareClassPSA
	ShareClassPSB
	ShareClassPSC
	ShareClassPSD
	ShareClassPSE
	ShareClassUnit
)

var shareClassNames = [...]string{"", ClassBDR, ClassCS, ClassFundUnit, ClassMacro, ClassPS, ClassPSA, ClassPSB,
	ClassPSC, ClassPSD, ClassPSE, ClassUnit}

// String returns the Class* name of c ("" for ShareClassNone and for
// values outside the enumeration).
func (c ShareClass) String() string {
	if int(c) < len(shareClassNames) {
		return shareClassNames[c]
	}
	return ""
}

// ParseShareClass returns the ShareClass named s (a Class* constant or
// ""); ok is false for any other string.
func ParseShareClass(s string) (c ShareClass, ok bool) {
	for i, n := range shareClassNames {
		if n == s {
			return ShareClass(i), true
		}
	}
	return ShareClassNone, false
}

// Company kinds.
const (
	KindCompany = "COMPANY" // Brazilian listed company
	KindBDR     = "BDR"     // foreign issuer traded through BDRs
	KindFII     = "FII"     // real-estate fund
	KindETF     = "ETF"     // exchange-traded fund
)

// Sector is one node of the four-level taxonomy. Level 1 is the sector
// (macro), 2 industry_group, 3 industry, 4 sub_industry (micro).
type Sector struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Level    int    `json:"level"`     // 1..4
	ParentID string `json:"parent_id"` // "" at level 1
}

// Address is a postal address.
type Address struct {
	Line1      string `json:"line1"`
	Line2      string `json:"line2"`
	City       string `json:"city"`
	State      string `json:"state"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// Characteristic is a qualitative note on a company (type RISK or OPPORTUNITY...).
type Characteristic struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// Company is an issuer: a Brazilian company, a foreign BDR issuer or a
// listed fund. Share counts come from SharesPoint history (latest wins).
type Company struct {
	ID            string  `json:"company_id"` // CNPJ (14 digits) or CVM code
	CVMCode       string  `json:"cvm_code"`
	Symbol        string  `json:"symbol"` // root symbol, e.g. PETR
	Name          string  `json:"name"`
	TradingName   string  `json:"trading_name"`
	Kind          string  `json:"kind"`          // KindCompany, KindBDR, KindFII, KindETF
	BDRSponsored  bool    `json:"bdr_sponsored"` // BDR issuers: sponsored (full coverage)
	SubIndustryID string  `json:"sub_industry_id"`
	Description   string  `json:"description"`
	CEOName       string  `json:"ceo_name"`
	Employees     int64   `json:"employee_count"` // -1 when unknown
	FreeFloat     Num     `json:"free_float"`     // fraction 0..1
	Website       string  `json:"website"`
	LogoURL       string  `json:"logo_url"` // base address; sizes are derived
	Address       Address `json:"address"`
	FoundingDate  Date    `json:"founding_date"`
	IPODate       Date    `json:"ipo_date"`
	Status        string  `json:"status"` // ACTIVE, CANCELLED, SUSPENDED
	// StatusDate is when the registry status began (the cancellation date
	// of a CANCELLED company); NoDate when unknown.
	StatusDate      Date             `json:"status_date"`
	ListingSegment  string           `json:"listing_segment"`
	Characteristics []Characteristic `json:"characteristics"`
}

// Security is one traded ticker of a company (or a macro series).
type Security struct {
	Ticker        string `json:"ticker"`
	CompanyID     string `json:"company_id"` // "" for macro series
	ISIN          string `json:"isin"`
	StockType     string `json:"stock_type"`  // Class* constant
	Currency      string `json:"currency"`    // BRL
	UnitFactor    Num    `json:"unit_factor"` // UNIT: shares per unit; else Null
	ListedFrom    Date   `json:"listed_from"`
	ListedTo      Date   `json:"listed_to"`      // NoDate while listed
	LiquidityRank int    `json:"liquidity_rank"` // 1 = most liquid of the market; 0 unknown
}

// TickerRename joins two tickers' histories: From was renamed To on Date
// (the first session traded as To).
type TickerRename struct {
	From string `json:"from"`
	To   string `json:"to"`
	Date Date   `json:"date"`
}

// Series is the daily history of one ticker, column by column, sorted by
// Date ascending with one row per session. All columns have equal length.
// Prices are BRL per share, unadjusted; Volume is BRL traded.
type Series struct {
	Ticker   string
	Dates    []Date
	Open     []Num
	High     []Num
	Low      []Num
	Close    []Num
	Volume   []Num   // BRL
	Quantity []int64 // shares traded
	Trades   []int64 // number of trades

	// bars holds the rows compactly after CompactSeries, which sets the
	// other columns to nil.
	bars *DailyBars
	// sum is the summary a loader gave (SetSummary), or nil.
	sum *DailySummary
}

// Len returns the number of rows.
func (s *Series) Len() int { return len(s.Dates) }

// CompactSeries replaces s's price, volume and count columns by their
// compact form (DailyBars) when every value fits, so that a loader drops
// the wide columns as it decodes and never holds both forms of every
// series. Build takes such a series as it is; other readers of the
// Universe see nil columns and must not be given it. A series that does
// not fit is left as it is.
func CompactSeries(s *Series) {
	if s.bars != nil || s.Len() == 0 {
		return
	}
	b := NewDailyBars(s)
	if !b.Compact() {
		return
	}
	s.bars = b
	s.Open, s.High, s.Low, s.Close, s.Volume, s.Quantity, s.Trades = nil, nil, nil, nil, nil, nil, nil
}

// Intraday is the 1-minute history of one ticker, column by column, sorted
// by Time ascending (unix seconds, UTC; each bar starts at Time).
type Intraday struct {
	Ticker   string
	Times    []int64
	Open     []Num
	High     []Num
	Low      []Num
	Close    []Num
	Volume   []Num // BRL
	Quantity []int64

	// sum is the summary a loader gave (SetSummary), or nil.
	sum *IntradaySummary
	// bars is the compact form when the series was given in it
	// (CompactIntradayOf: the wide columns are then nil) or kept wide
	// (KeepWideIntraday), else nil.
	bars *IntradayBars
}

// Len returns the number of rows.
func (s *Intraday) Len() int { return len(s.Times) }

// Index is a market index and its current theoretical portfolio.
type Index struct {
	Symbol string `json:"symbol"` // IBOV, SMLL, IFIX...
	Name   string `json:"name"`
	AsOf   Date   `json:"as_of"` // portfolio date
	// Reductor is the index's divisor as B3 publishes it with the
	// portfolio ("Redutor"): index points = sum over the members of
	// theoretical quantity (shares) x price (BRL) / Reductor, so its unit
	// is BRL per point. Null when the source does not carry it (a
	// membership list, an edited file without its footer).
	Reductor Num           `json:"reductor"`
	Members  []IndexMember `json:"members"`
}

// IndexMember is one asset of an index portfolio.
type IndexMember struct {
	Ticker         string `json:"ticker"`
	Weight         Num    `json:"weight"`          // fraction of the index, 0..1
	TheoreticalQty Num    `json:"theoretical_qty"` // shares
}

// Source is the traceability metadata of an official document. Its
// addresses are URLs (a template number and the variable part, see URL):
// make them with URLOf, read them with String or AppendTo.
type Source struct {
	VisualizationURL URL       `json:"visualization_url"`
	DownloadURL      URL       `json:"download_url"` // "" answers null
	PublishedAt      time.Time `json:"published_at"`
	RetrievedAt      time.Time `json:"retrieved_at"`
	Name             string    `json:"name"`
}

// Statements lists the statement acronyms of raw reports.
var Statements = []string{"BPA", "BPP", "DRE", "DRA", "DVA", "DFC_MI", "DFC_MD"}

// Aggregations.
const (
	AggIndividual   = "INDIVIDUAL"
	AggConsolidated = "CONSOLIDATED"
)

// Report is one statement as filed with the regulator (CVM DFP or ITR),
// one version of it. Balance sheets (BPA, BPP) have no StartDate.
//
// A Report is laid out for the millions a snapshot holds (96 bytes
// against 192 with three strings and two time.Times): the statement,
// aggregation and form are Labels, the publication and retrieval
// Stamps, the sources a SourceList.
// Bundles and answers spell them as before (words, RFC 3339 times); a
// bundle's reader and writer convert (snapshot/bundle), so the JSON
// names here are the bundle's keys.
type Report struct {
	CompanyID     string     `json:"company_id"`
	PublishDate   Stamp      `json:"publish_date"`
	RetrievalDate Stamp      `json:"retrieval_date"`
	Accounts      []Account  `json:"accounts"`
	Sources       SourceList `json:"sources"`
	// Lines, when not nil, numbers the lines of Accounts: each account's
	// Line is then an index into Lines.Lines (a snapshot's own numbering,
	// the accounts used in place from a mapped file of format 6), not a
	// Line of the process. Read the accounts through AccountList, which
	// translates; nil: Accounts holds the process's Lines (a Report made
	// by ingest, a bundle or a format 5 file).
	Lines         *LineTable `json:"-"`
	ReferenceDate Date       `json:"reference_date"`
	StartDate     Date       `json:"start_date"` // NoDate for balance sheets
	EndDate       Date       `json:"end_date"`
	Statement     Label      `json:"statement"`   // BPA, BPP, DRE, DRA, DVA, DFC_MI, DFC_MD
	Aggregation   Label      `json:"aggregation"` // INDIVIDUAL or CONSOLIDATED
	Form          Label      `json:"form"`        // DFP (annual) or ITR (quarterly)
	Version       int        `json:"version"`     // regulator version, 1..
}

// Account is one line of a report: the interned Line (code, name,
// ST_CONTA_FIXA flag; see Line, and the Code, Name and Fixed methods)
// and its value. The code is the regulator's dotted code ("1.01.02"); the
// tree follows the dots. Value is BRL (already scaled by ESCALA_MOEDA),
// except per-share lines (3.99...) which are BRL per share. An Account
// is 16 bytes and holds no pointer; make one with NewAccount.
type Account struct {
	Line  Line
	Value Num
}

// SharesPoint is a company's share count from a date on (composicao_capital).
type SharesPoint struct {
	CompanyID string `json:"company_id"`
	Date      Date   `json:"date"`
	Common    int64  `json:"common_shares"`
	Preferred int64  `json:"preferred_shares"`
	Treasury  int64  `json:"treasury_shares"` // included in the counts above
}

// CashAction is one version of a cash distribution of one share class.
// Values are BRL per share, unadjusted; adjusted values are derived.
//
// A CashAction is laid out for the hundreds of thousands a snapshot
// holds (TestCashActionSize): its company, ticker and ISIN are
// interned (Sym), its words (stock type, name, code, currency) Labels,
// its publication a Stamp, its source a pointer that actions citing one
// document share, its installments one pointer.
// JSON spells them as before (MarshalJSON; the tags name its keys).
type CashAction struct {
	ID                 string          `json:"id"`       // unique per version
	EventID            string          `json:"event_id"` // shared by every version of one event
	Protocol           string          `json:"protocol"`
	Source             *Source         `json:"source"`       // nil answers as the zero Source (SourceOrZero)
	Installments       InstallmentList `json:"installments"` // nil and empty stay apart
	PublishDate        Stamp           `json:"publish_date"`
	Version            int             `json:"version"` // highest is current
	DeclaredValue      Num             `json:"declared_value"`
	MonetaryCorrection Num             `json:"monetary_correction"` // 0 when not applicable
	NetValue           Num             `json:"net_value"`
	ApprovalDate       Date            `json:"approval_date"`
	PriorExDate        Date            `json:"prior_ex_date"`
	PaymentDate        Date            `json:"payment_date"` // NoDate when not defined
	CorrectionStart    Date            `json:"monetary_correction_start_date"`
	CorrectionEnd      Date            `json:"monetary_correction_end_date"`
	CompanyID          Sym             `json:"company_id"`
	Ticker             Sym             `json:"ticker"`
	ISIN               Sym             `json:"isin"`
	StockType          Label           `json:"stock_type"`
	Name               Label           `json:"name"` // DIVIDEND, INTEREST_ON_EQUITY, RESTITUTION, AMORTIZATION, RENDIMENTO
	Code               Label           `json:"code"`
	Currency           Label           `json:"currency"`
}

// zeroSource is what a CashAction without a source answers.
var zeroSource Source

// SourceOrZero returns c's source, the zero Source when it has none.
func (c *CashAction) SourceOrZero() *Source {
	if c.Source == nil {
		return &zeroSource
	}
	return c.Source
}

// InstallmentList is a cash action's installments (a SharedList).
// InstallmentsOf([]Installment{}) is empty, a list every empty one
// shares.
type InstallmentList = SharedList[Installment]

// noInstallments is the list every empty InstallmentList points to.
var noInstallments = []Installment{}

// InstallmentsOf returns the InstallmentList of s (nil: absent).
func InstallmentsOf(s []Installment) InstallmentList {
	switch {
	case s == nil:
		return InstallmentList{}
	case len(s) == 0:
		return InstallmentList{&noInstallments}
	}
	return InstallmentList{&s}
}

// Installment is one payment of a split distribution (BRL per share).
type Installment struct {
	DeclaredValue      Num    `json:"declared_value"`
	MonetaryCorrection Num    `json:"monetary_correction"`
	NetValue           Num    `json:"net_value"`
	Currency           string `json:"currency"`
	PaymentDate        Date   `json:"payment_date"`
}

// Share corporate action types.
const (
	ActStockBonus            = "STOCK_BONUS"
	ActSpinOff               = "SPIN_OFF_CAPITAL_REDUCTION"
	ActSpinOffQuantity       = "SPIN_OFF_CAPITAL_REDUCTION_QUANTITY"
	ActStockSplit            = "STOCK_SPLIT"
	ActReverseSplit          = "REVERSE_STOCK_SPLIT"
	ActMerger                = "MERGER_INCORPORATION"
	ActTotalRedemption       = "TOTAL_EQUITY_REDEMPTION"
	ActRestitutionInShares   = "CAPITAL_RESTITUTION_IN_SHARES"
	ActRestitutionWithReduce = "CAPITAL_RESTITUTION_WITH_SHARE_REDUCTION"
	ActSubscription          = "SUBSCRIPTION"
	LegOriginal              = "ORIGINAL_ASSET"
	LegReceived              = "RECEIVED_ASSET"
)

// ShareAction is a share event of one asset (split, bonus, spin-off...).
// Factor multiplies the holder's share count (split 1:10 = 10, reverse
// 10:1 = 0.1, 5% bonus = 1.05); events with legs carry factors per leg.
type ShareAction struct {
	CompanyID    string `json:"company_id"`
	ISIN         string `json:"isin"`
	IssuedISIN   string `json:"issued_isin"`
	Ticker       string `json:"ticker"` // ticker of ISIN, for convenience
	ApprovalDate Date   `json:"approval_date"`
	PriorExDate  Date   `json:"prior_ex_date"` // last session "with"
	Type         string `json:"type"`
	Label        string `json:"label"`
	Factor       Num    `json:"factor"` // Null on leg-bearing events
	Legs         []Leg  `json:"legs"`
	Remarks      string `json:"remarks"`
}

// Leg is one asset of a leg-bearing share event.
type Leg struct {
	LegType string `json:"leg_type"` // ORIGINAL_ASSET or RECEIVED_ASSET
	ISIN    string `json:"isin"`
	Ticker  string `json:"ticker"`
	Factor  Num    `json:"factor"`
}

// FundReport is one monthly report of a listed fund (CVM inf_mensal_fii,
// or an ETF's equivalent). Money is BRL.
type FundReport struct {
	FundID        string    `json:"fund_id"`        // the fund Company's ID (CNPJ)
	ReferenceDate Date      `json:"reference_date"` // first day of the month, as CVM
	Version       int       `json:"version"`
	PublishDate   time.Time `json:"publish_date"`
	RetrievalDate time.Time `json:"retrieval_date"`
	NetAssets     Num       `json:"net_assets"`         // Patrimonio_Liquido, BRL
	SharesOut     Num       `json:"shares_outstanding"` // Cotas_Emitidas
	NAVPerShare   Num       `json:"nav_per_share"`      // Valor_Patrimonial_Cotas, BRL
	Investors     Num       `json:"investors"`          // Total_Numero_Cotistas
	DividendYield Num       `json:"dividend_yield"`     // month, fraction
	MonthlyReturn Num       `json:"monthly_return"`     // Rentabilidade_Efetiva_Mes, fraction
	TotalAssets   Num       `json:"total_assets"`       // Ativo, BRL
	Sources       []Source  `json:"sources"`
}

// InsiderReport is one monthly insider-trading filing (CVM VLMO) of a
// company for one group aggregation.
type InsiderReport struct {
	CompanyID     string        `json:"company_id"`
	ReferenceDate Date          `json:"reference_date"` // month
	Aggregation   string        `json:"aggregation"`    // INDIVIDUAL (corporate structure) or CONSOLIDATED (statutory bodies)
	Version       int           `json:"version"`
	PublishDate   time.Time     `json:"publish_date"`
	RetrievalDate time.Time     `json:"retrieval_date"`
	Movements     []InsiderMove `json:"movements"`
	Sources       []Source      `json:"sources"`
}

// InsiderMove is one movement in an insider report.
type InsiderMove struct {
	Group     string `json:"group"`     // CONTROLLER, BOARD, EXECUTIVE_BOARD, AUDIT_COUNCIL, TREASURY...
	Operation string `json:"operation"` // BUY, SELL, ...
	Ticker    string `json:"ticker"`
	StockType string `json:"stock_type"`
	Date      Date   `json:"date"`
	Quantity  int64  `json:"quantity"`
	Price     Num    `json:"price"`  // BRL per share
	Volume    Num    `json:"volume"` // BRL
}

// Document is one regulatory document of a company (CVM IPE: material
// facts, notices, filings).
type Document struct {
	ID            string    `json:"id"`
	CompanyID     string    `json:"company_id"`
	Category      string    `json:"category"`
	Type          string    `json:"type"`
	Title         string    `json:"title"`
	ReferenceDate Date      `json:"reference_date"`
	PublishDate   time.Time `json:"publish_date"`
	RetrievalDate time.Time `json:"retrieval_date"`
	Version       int       `json:"version"`
	Source        Source    `json:"source"`
}

// Meta describes a source bundle or snapshot.
type Meta struct {
	AsOf        time.Time `json:"as_of"`       // the data's "now": end of the last session covered
	Description string    `json:"description"` // where the data comes from
	Attribution string    `json:"attribution"`
	// Stream is the data's position in the live stream (zero: unknown).
	Stream StreamPosition `json:"stream,omitzero"`
}

// StreamPosition is where a snapshot stands in the live stream (NATS
// JetStream, issue 28): Next is the first stream sequence whose batch it
// does not cover (0: unknown), and Name, Session and Batch identify the
// message at Next-1, the last batch it covers (its stream, its session
// and its batch sequence, live.Record.Seq), so that a replica can check
// the stream it consumes is the one the snapshot was built from.
type StreamPosition struct {
	Next    uint64 `json:"next"`
	Name    string `json:"name"`
	Session Date   `json:"session"`
	Batch   uint64 `json:"batch"`
}

// Known reports whether p holds a position (Next above 0).
func (p StreamPosition) Known() bool { return p.Next > 0 }

// String describes p for logs and output: "NAME from sequence N (after
// batch B of session S)", or "unknown".
func (p StreamPosition) String() string {
	if !p.Known() {
		return "unknown"
	}
	return fmt.Sprintf("%s from sequence %d (after batch %d of session %s)", p.Name, p.Next, p.Batch, p.Session)
}

// Universe is every source entity of a dataset: what a bundle holds, what a
// snapshot stores (with Derived filled) and what a Dataset is built from.
// Slices are owned by the Universe and must not be modified after Build.
type Universe struct {
	Meta       Meta
	Sectors    []Sector
	Companies  []Company
	Securities []Security
	Renames    []TickerRename
	Daily      []Series
	Intraday   []Intraday
	Indexes    []Index
	Reports    []Report
	// LazyReports, when not nil (a mapped snapshot's; Reports is then
	// empty), gives the reports company by company on first use.
	LazyReports    LazyReports `json:"-"`
	Shares         []SharesPoint
	CashActions    []CashAction
	ShareActions   []ShareAction
	FundReports    []FundReport
	InsiderReports []InsiderReport
	Documents      []Document

	// Derived is computed by Derive at build time and stored in the
	// snapshot; a bundle never carries it.
	Derived Derived
}

// LazyReports gives a Universe's reports one company at a time, read
// on the company's first use (Issuer.Reports) instead of at Build (a
// mapped snapshot's report heads). Implementations are safe for
// concurrent use.
type LazyReports interface {
	// Companies returns the ids of the companies with reports, each
	// once.
	Companies() []string
	// FirstPublished returns the earliest publish date of the reports
	// that have one (zero: none has).
	FirstPublished() Stamp
	// Reports returns company id's reports in the Universe's order. The
	// caller has verified what they are read from
	// (Dataset.CheckIssuer); a report that cannot be read (a damaged
	// block, whose requests are refused) is left out, never a panic.
	Reports(id string) []Report
}

// Derived holds what is computed once per snapshot from the source
// entities: the indicator catalog and every ratio point.
type Derived struct {
	Catalog    []Indicator
	Ratios     []RatioPoint
	FundRatios []FundRatioPoint
	// RatioVars holds the variables of every ratio point: point p's are
	// RatioVars[p.VarsAt : p.VarsAt+p.NVars] (see Vars). One array for
	// all points, so that the points hold no pointer.
	RatioVars []Num
	// RatioSyms, when not nil, is the symbol table of Ratios: their
	// CompanyID and Ticker are then indexes into it rather than Syms
	// (points used where a snapshot file lies; see SymOf).
	RatioSyms []Sym `json:"-"`
	// FundSources holds the source lists of FundRatios, each list once
	// however many points cite it (the points of one fund report cite
	// its sources): point p's are FundSources[p.Sources-1] (see
	// FundSourcesOf), so that the points hold no pointer.
	FundSources [][]Source
	// RatioRuns, when not nil, are the runs of Ratios of one company each,
	// in order (a snapshot's index gives them): with
	// BuildOptions.RatiosChecked, Build reads them instead of the points.
	RatioRuns []RatioRun `json:"-"`
	// FundSyms, when not nil, is the symbol table of FundRatios: their
	// FundID is then an index into it rather than a Sym (points used
	// where a snapshot file lies; see FundSymOf).
	FundSyms []Sym `json:"-"`
	// FundRuns, when not nil, are the runs of FundRatios of one fund each
	// (RatioRun.Company the fund, as the points name it), in order: with
	// BuildOptions.FundRatiosChecked, Build reads them instead of the
	// points.
	FundRuns []RatioRun `json:"-"`
}

// FundSymOf returns the Sym a fund ratio point's FundID field s stands
// for: s itself, or its entry of FundSyms when the points index it (the
// zero Sym, "", for an index out of range).
func (d *Derived) FundSymOf(s Sym) Sym {
	if d.FundSyms == nil {
		return s
	}
	if uint64(s) < uint64(len(d.FundSyms)) {
		return d.FundSyms[s]
	}
	return 0
}

// FundSourcesOf returns the sources of p (a point of d.FundRatios),
// shared: read only. It is nil when p has none or its number lies
// outside FundSources (snapshot decoding and engine.Build check the
// numbers).
func (d *Derived) FundSourcesOf(p *FundRatioPoint) []Source {
	if p.Sources == 0 || uint64(p.Sources) > uint64(len(d.FundSources)) {
		return nil
	}
	return d.FundSources[p.Sources-1]
}

// AddFundSources appends src to d.FundSources as a new list and points p
// at it (a nil src: p has no sources, nothing is appended). Points
// citing one list share it: set their Sources to p's.
func (d *Derived) AddFundSources(p *FundRatioPoint, src []Source) {
	if src == nil {
		p.Sources = 0
		return
	}
	if len(d.FundSources) >= math.MaxUint32-1 {
		panic("engine: fund ratio sources beyond the FundRatioPoint layout")
	}
	d.FundSources = append(d.FundSources, src)
	p.Sources = uint32(len(d.FundSources))
}

// Vars returns the variables of p (a point of d.Ratios), the values of
// Catalog[p.Indicator].Variables in order; capacity is capped, nil when
// p has none or its range lies outside RatioVars (snapshot decoding and
// engine.Build check the ranges).
func (d *Derived) Vars(p *RatioPoint) []Num {
	lo, hi := uint64(p.VarsAt), uint64(p.VarsAt)+uint64(p.NVars)
	if p.NVars == 0 || hi > uint64(len(d.RatioVars)) {
		return nil
	}
	return d.RatioVars[lo:hi:hi]
}

// AddVars appends vs to d.RatioVars and points p at them.
func (d *Derived) AddVars(p *RatioPoint, vs []Num) {
	if len(vs) > math.MaxUint8 || uint64(len(d.RatioVars))+uint64(len(vs)) > math.MaxUint32 {
		panic("engine: ratio variables beyond the RatioPoint layout")
	}
	p.VarsAt, p.NVars = uint32(len(d.RatioVars)), uint8(len(vs))
	d.RatioVars = append(d.RatioVars, vs...)
}

// AppendFundRatios appends the fund points of src to d.FundRatios and
// their source lists to d.FundSources, renumbering the points' Sources.
func (d *Derived) AppendFundRatios(src *Derived) {
	if uint64(len(d.FundSources))+uint64(len(src.FundSources)) >= math.MaxUint32 {
		panic("engine: fund ratio sources beyond the FundRatioPoint layout")
	}
	base, first := uint32(len(d.FundSources)), len(d.FundRatios)
	d.FundRatios = append(d.FundRatios, src.FundRatios...)
	d.FundSources = append(d.FundSources, src.FundSources...)
	for i := first; i < len(d.FundRatios); i++ {
		if d.FundRatios[i].Sources != 0 {
			d.FundRatios[i].Sources += base
		}
	}
}

// Indicator kinds.
const (
	IndFundamental = "FUNDAMENTAL"
	IndValuation   = "VALUATION"
	IndFund        = "FUND"
)

// Indicator describes one ratio id of the catalog.
type Indicator struct {
	ID          string   `json:"id"` // base id, no class suffix: EBITDA_MARGIN
	Name        string   `json:"name"`
	Kind        string   `json:"kind"`        // FUNDAMENTAL, VALUATION, FUND
	Format      string   `json:"format"`      // PERCENTAGE, MULTIPLE, BRL, SCORE
	Formula     string   `json:"formula"`     // e.g. "EBITDA / NET_REVENUE"
	Variables   []string `json:"variables"`   // variable ids in formula order
	Frequencies []string `json:"frequencies"` // ANNUAL, QUARTERLY, TTM, YTD...
	ByClass     bool     `json:"by_class"`    // one value per share class (suffixed ids)
}

// Frequencies.
const (
	FreqAnnual    = "ANNUAL"
	FreqQuarterly = "QUARTERLY"
	FreqTTM       = "TTM"
	FreqYTD       = "YTD"
	FreqDaily     = "DAILY"
	FreqMonthly   = "MONTHLY"
)

// Frequency is the compact form of a Freq* string held by RatioPoint. The
// values sort as their names do under strings.Compare; FrequencyNone is
// the empty string.
type Frequency uint8

// Frequency values, in the order of their names.
const (
	FrequencyNone Frequency = iota
	FrequencyAnnual
	FrequencyDaily
	FrequencyMonthly
	FrequencyQuarterly
	FrequencyTTM
	FrequencyYTD
)

var frequencyNames = [...]string{"", FreqAnnual, FreqDaily, FreqMonthly, FreqQuarterly, FreqTTM, FreqYTD}

// String returns the Freq* name of f ("" for FrequencyNone and for values
// outside the enumeration).
func (f Frequency) String() string {
	if int(f) < len(frequencyNames) {
		return frequencyNames[f]
	}
	return ""
}

// ParseFrequency returns the Frequency named s (a Freq* constant or "");
// ok is false for any other string.
func ParseFrequency(s string) (f Frequency, ok bool) {
	for i, n := range frequencyNames {
		if n == s {
			return Frequency(i), true
		}
	}
	return FrequencyNone, false
}

// Stamp is an instant in 8 bytes, UTC, with the zero value meaning absent
// (the zero time.Time). A whole-second instant is stored as its Unix
// seconds shifted left by one with the low bit set; an instant with a
// fraction of a second is stored as its Unix nanoseconds shifted left by
// one (low bit clear), which covers the years 1824 to 2116. Outside those
// years a fraction of a second is dropped (see StampOf).
type Stamp int64

// stampNanoLimit bounds the Unix nanoseconds a fractional Stamp can hold.
const stampNanoLimit = 1 << 62

// StampOf returns the Stamp of t: 0 for the zero time, else t to the
// nanosecond, except that a fraction of a second outside the years 1824
// to 2116 is truncated to whole seconds. Seconds beyond +-2^62 (far past
// year 9999) saturate.
func StampOf(t time.Time) Stamp {
	if t.IsZero() {
		return 0
	}
	return MakeStamp(t.Unix(), int64(t.Nanosecond()))
}

// MakeStamp returns the Stamp of Unix time sec+nsec/1e9, with nsec in
// [0, 1e9); see StampOf for the range rules.
func MakeStamp(sec, nsec int64) Stamp {
	const maxSec = 1<<62 - 1
	sec = min(max(sec, -maxSec), maxSec)
	if nsec > 0 && nsec < 1e9 && sec > -stampNanoLimit/1_000_000_000+1 && sec < stampNanoLimit/1_000_000_000-1 {
		return Stamp((sec*1e9 + nsec) << 1)
	}
	return Stamp(sec<<1 | 1)
}

// IsZero reports whether s is absent.
func (s Stamp) IsZero() bool { return s == 0 }

// Unix returns s as Unix seconds and nanoseconds in [0, 1e9); (0, 0) when
// s is absent.
func (s Stamp) Unix() (sec, nsec int64) {
	switch {
	case s == 0:
		return 0, 0
	case s&1 == 1:
		return int64(s >> 1), 0
	}
	n := int64(s >> 1)
	sec, nsec = n/1e9, n%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return sec, nsec
}

// Time returns s as a UTC time.Time; the zero time when s is absent.
func (s Stamp) Time() time.Time {
	if s == 0 {
		return time.Time{}
	}
	sec, nsec := s.Unix()
	return time.Unix(sec, nsec).UTC()
}

// String returns s as its time.Time prints.
func (s Stamp) String() string { return s.Time().String() }

// Before reports whether s is before o (Compare).
func (s Stamp) Before(o Stamp) bool { return s.Compare(o) < 0 }

// After reports whether s is after o (Compare).
func (s Stamp) After(o Stamp) bool { return s.Compare(o) > 0 }

// Equal reports whether s and o are the same instant.
func (s Stamp) Equal(o Stamp) bool { return s == o }

// Compare returns -1, 0 or +1 as s is before, equal to or after o; an
// absent Stamp sorts as the zero time.Time does (before every instant).
func (s Stamp) Compare(o Stamp) int {
	switch {
	case s == o:
		return 0
	case s == 0:
		return -1
	case o == 0:
		return 1
	}
	as, an := s.Unix()
	bs, bn := o.Unix()
	if c := cmp.Compare(as, bs); c != 0 {
		return c
	}
	return cmp.Compare(an, bn)
}

// RatioPoint is one value of a company indicator. Class is ShareClassNone
// for company-level indicators and the share class of class-specific ones
// (the API suffixes the id when queried by symbol or company_id). Its
// variables (the values of Indicator.Variables, in order) are in the
// owning Derived's RatioVars: see Derived.Vars.
//
// The layout is compact and holds no pointer (the demo market holds
// tens of millions of points): ids are Syms, dates Stamps, the class a
// ShareClass, the frequency a Frequency, the variables an offset and a
// count, and fields are ordered so that no padding is wasted (48 bytes).
type RatioPoint struct {
	Value         Num
	PublishDate   Stamp
	RetrievalDate Stamp
	ReferenceDate Date
	CompanyID     Sym
	Ticker        Sym    // class-specific points: the ticker priced
	VarsAt        uint32 // first variable in Derived.RatioVars
	Indicator     uint16 // index into Derived.Catalog
	Class         ShareClass
	Frequency     Frequency
	NVars         uint8 // number of variables
}

// FundRatioPoint is one value of a listed-fund indicator, laid out as
// compactly as RatioPoint and like it holding no pointer (40 bytes): the
// fund is a Sym, and the sources a number in Derived.FundSources.
type FundRatioPoint struct {
	Value         Num
	PublishDate   Stamp
	RetrievalDate Stamp
	ReferenceDate Date
	FundID        Sym
	// Sources numbers the point's sources: 0 none (nil), else 1 + the
	// index of the list in Derived.FundSources (see FundSourcesOf and
	// AddFundSources).
	Sources   uint32
	Indicator uint16 // index into Derived.Catalog
	Frequency Frequency
}

// CompareRatioPoints orders ratio points as snapshots store them and a
// Dataset serves them: by company_id, then indicator, class, frequency,
// reference date and publication time, so that each company's points are
// one run and each of its series a run within it. Build serves the
// points of a Universe in this order without copying them (a Universe
// in another order is served from a sorted copy).
func CompareRatioPoints(x, y *RatioPoint) int {
	if x.CompanyID != y.CompanyID {
		return strings.Compare(x.CompanyID.String(), y.CompanyID.String())
	}
	if x.Indicator != y.Indicator {
		return cmp.Compare(x.Indicator, y.Indicator)
	}
	if x.Class != y.Class {
		return cmp.Compare(x.Class, y.Class)
	}
	if x.Frequency != y.Frequency {
		return cmp.Compare(x.Frequency, y.Frequency)
	}
	if x.ReferenceDate != y.ReferenceDate {
		return cmp.Compare(x.ReferenceDate, y.ReferenceDate)
	}
	return x.PublishDate.Compare(y.PublishDate)
}

// CompareFundRatioPoints is CompareRatioPoints for fund points: by
// fund_id, indicator, frequency, reference date and publication time.
func CompareFundRatioPoints(x, y *FundRatioPoint) int {
	if x.FundID != y.FundID {
		return strings.Compare(x.FundID.String(), y.FundID.String())
	}
	if x.Indicator != y.Indicator {
		return cmp.Compare(x.Indicator, y.Indicator)
	}
	if x.Frequency != y.Frequency {
		return cmp.Compare(x.Frequency, y.Frequency)
	}
	if x.ReferenceDate != y.ReferenceDate {
		return cmp.Compare(x.ReferenceDate, y.ReferenceDate)
	}
	return x.PublishDate.Compare(y.PublishDate)
}

// SortRatioPoints puts ps in CompareRatioPoints order (stable; a sorted
// ps is only checked).
func SortRatioPoints(ps []RatioPoint) {
	if !isSorted(ps, CompareRatioPoints) {
		slices.SortStableFunc(ps, func(x, y RatioPoint) int { return CompareRatioPoints(&x, &y) })
	}
}

// SortFundRatioPoints puts ps in CompareFundRatioPoints order (stable; a
// sorted ps is only checked).
func SortFundRatioPoints(ps []FundRatioPoint) {
	if !isSorted(ps, CompareFundRatioPoints) {
		slices.SortStableFunc(ps, func(x, y FundRatioPoint) int { return CompareFundRatioPoints(&x, &y) })
	}
}
