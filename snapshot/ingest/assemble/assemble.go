package assemble

import (
	"context"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/b3"
	"github.com/pregao/pregao/snapshot/ingest/cotahist"
	"github.com/pregao/pregao/snapshot/ingest/cvm"
)

// Config lists the inputs of an import and how to date it. Every input
// list holds files, directories (searched recursively for files of that
// kind) or glob patterns; files may be compressed (.zst, .gz) and a
// missing name also finds NAME.zst or NAME.gz. DefaultConfig returns the
// defaults; the zero Config is not one (its AsOf is 1970-01-01).
type Config struct {
	Cotahist   []string // B3 COTAHIST files (.TXT or .ZIP; daily, monthly or annual)
	Cad        string   // CVM company registry cad_cia_aberta.csv; "" (default): none
	FCA        []string // CVM FCA archives or their valor_mobiliario, geral and endereco tables
	DFP        []string // CVM DFP archives or their CSV tables
	ITR        []string // CVM ITR archives or their CSV tables
	FII        []string // CVM FII monthly reports inf_mensal_fii_*
	Index      []string // index portfolios, each "SYMBOL=path" or path (a GetTheoricalPortfolio response needs SYMBOL)
	Cash       []string // GetListedCashDividends responses, each "SYMBOL=path" (the response names no company)
	Supplement []string // GetListedSupplementCompany responses
	Details    []string // GetDetailsCompany responses
	// Instruments are B3's listed-instruments files
	// (InstrumentsConsolidatedFile): each cash-market ticker's ISIN and
	// its issuer's legal name, evidence for linking shares (see the
	// package doc).
	Instruments []string
	Listings    []string // ETF and FII listing exports
	// BCB are the Banco Central's files (package bcb): SGS answers, each
	// "SERIES=path" (SELIC=, IPCA=, CDI= or the SGS code) or a path
	// holding bcdata.sgs.CODE, and PTAX closing-rates files
	// (YYYYMMDD.csv); folders are searched for them. They become MACRO
	// series as of the as-of day.
	BCB []string

	// Lenient skips and counts malformed rows and COTAHIST trailer
	// mismatches instead of failing. Default false.
	Lenient bool
	// Boards, when not nil, are the only COTAHIST cash-market boards (BDI
	// codes) kept; nil: cotahist.DefaultBoards and the securities other
	// boards carry that are shares, units, BDRs or fund quotas.
	Boards []int
	// OddLot also keeps the odd-lot market (tickers ending in F).
	OddLot bool
	// AsOf is the data's day. NoDate (default): the latest day the data
	// speaks of (see the package doc).
	AsOf engine.Date
	// Retrieved is the retrieval time stamped on CVM data. Zero (default):
	// the as-of time, so the same inputs give the same Universe.
	Retrieved time.Time
}

// DefaultConfig returns a Config with no input, strict parsing and the
// as-of day and retrieval time derived from the data.
func DefaultConfig() Config { return Config{AsOf: engine.NoDate} }

// Progress shows one progress line, without a line end: the file being
// read, its lines or rows, their rate per second, the MB of text read and
// the heap in use ("CVM DFP dfp_cia_aberta_2023.zip:...: 65536 rows
// (...)"). Run calls it on the goroutine that called Run, every
// cotahist.ProgressEvery COTAHIST lines and every cvm.DefaultProgressEvery
// CVM rows (FII reports included), so a slow Progress slows the import
// little. nil: no progress.
type Progress func(line string)

// assembler builds a Universe from the inputs. Its steps run in the order
// Run lists them, each reading what the earlier ones left.
type assembler struct {
	cfg         Config
	rep         *Report
	opt         cvm.Options
	asOf        engine.Date
	lastSession engine.Date // the last COTAHIST session (NoDate: no quotes)
	quotes      cotahist.Result
	companies   map[string]*engine.Company
	cadUnmapped []string          // SETOR_ATIV values without a sub-industry
	cadRows     []cvm.CadRow      // every registry row, for the name rule of linking
	made        map[string]bool   // companies made from the quote files (syntheticID)
	tickerCo    map[string]string // FCA: ticker -> company
	fcaSecs     map[string]engine.Security
	unitTicker  map[string]int // FCA: shares per unit, by unit ticker
	unitCompany map[string]int // FCA: shares per unit, by company (one composition for all its units)
	fcaLists    []cvm.Listing
	fcaGeneral  []cvm.GeneralRow    // FCA geral: website, description, founding date
	fcaAddr     []cvm.AddressRow    // FCA endereco: head-office addresses
	isinFund    map[string]string   // ISIN -> fund company
	isinTied    map[string][]string // ISIN -> funds claiming it alike (isinOwners)
	details     []*b3.Details
	instrTicker map[string]b3.Instrument // B3's instruments file: the row of each ticker nearest the last session
	instrISIN   map[string]b3.Instrument // the same rows by ISIN (a ticker renamed since keeps its ISIN)
	etfSyms     map[string]bool
	etfGeo      map[string]string // ETF symbol -> listing Geografia
	fiiCodes    map[string]bool
	u           engine.Universe
}

func newAssembler(cfg Config) *assembler {
	a := &assembler{cfg: cfg, rep: &Report{}, companies: map[string]*engine.Company{}, isinFund: map[string]string{},
		etfSyms: map[string]bool{}, etfGeo: map[string]string{}, fiiCodes: map[string]bool{}, asOf: engine.NoDate, lastSession: engine.NoDate,
		made: map[string]bool{}}
	a.opt = cvm.Options{Lenient: cfg.Lenient, Stats: &a.rep.CVM}
	return a
}

// Run reads every input of cfg and joins them into a Universe (without
// derived ratios), following the rules of the package doc. It checks ctx
// between files and steps and returns its error once it is done. The
// Universe and Report are the caller's. Runs share no state: several may
// run at once.
func Run(ctx context.Context, cfg Config, progress Progress) (*engine.Universe, *Report, error) {
	a := newAssembler(cfg)
	steps := []func(context.Context, Progress) error{
		a.readQuotes, a.readDates, a.readCad, a.readFCA, a.readDetails, a.readInstruments, a.readListings, a.readFII,
		a.linkSecurities, a.recordRenames, a.readReports, a.settleAsOf, a.readIndexes, a.readCash, a.readMacro, a.finish,
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := step(ctx, progress); err != nil {
			return nil, nil, err
		}
	}
	return &a.u, a.rep, nil
}
