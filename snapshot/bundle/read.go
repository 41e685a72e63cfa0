package bundle

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"github.com/pregao/pregao/engine"
)

// parsed holds what the files of a bundle decoded to, with line numbers.
type parsed struct {
	meter          Meter // ReadOptions.Meter (nil: none)
	meta           []rec[engine.Meta]
	sectors        []rec[engine.Sector]
	companies      []rec[engine.Company]
	securities     []rec[engine.Security]
	renames        []rec[engine.TickerRename]
	indexes        []rec[engine.Index]
	reports        []rec[engine.Report]
	shares         []rec[engine.SharesPoint]
	cashActions    []rec[engine.CashAction]
	shareActions   []rec[engine.ShareAction]
	fundReports    []rec[engine.FundReport]
	insiderReports []rec[engine.InsiderReport]
	documents      []rec[engine.Document]
	daily          *columns
	intraday       *columns

	dailySink func(*engine.Series) error // see ReadOptions.Daily

	names    map[string]string       // base name -> file name
	manifest map[string]ManifestFile // base name -> entry; nil without a manifest
}

func (p *parsed) name(base string) string {
	if n, ok := p.names[base]; ok {
		return n
	}
	return base
}

// reader decodes one file of a bundle into p.
type reader func(p *parsed, r io.Reader, file string, c *collector) error

func jsonlReader[In, Out any](dst func(*parsed) *[]rec[Out], def func(*In), conv func(*In, *lineCtx) Out) reader {
	return func(p *parsed, r io.Reader, file string, c *collector) error {
		rs, err := readJSONL(r, file, c, def, conv)
		*dst(p) = rs
		return err
	}
}

// readers maps each base name to its decoder. Every entry of Files has one.
var readers = map[string]reader{
	FileMeta: func(p *parsed, r io.Reader, file string, c *collector) error {
		b, err := io.ReadAll(io.LimitReader(r, 1<<20))
		if err != nil {
			return err
		}
		m := engine.Meta{Stream: engine.StreamPosition{Session: engine.NoDate}}
		l := lineCtx{c: c, file: file, line: 1}
		if field, msg := decodeLine(b, &m); msg != "" {
			l.errf(field, "%s", msg)
			return nil
		}
		v := convMeta(&m, &l)
		if !l.bad {
			p.meta = []rec[engine.Meta]{{line: 1, v: v}}
		}
		return nil
	},
	FileSectors:        jsonlReader(func(p *parsed) *[]rec[engine.Sector] { return &p.sectors }, defSector, convSector),
	FileCompanies:      jsonlReader(func(p *parsed) *[]rec[engine.Company] { return &p.companies }, defCompany, convCompany),
	FileSecurities:     jsonlReader(func(p *parsed) *[]rec[engine.Security] { return &p.securities }, defSecurity, convSecurity),
	FileRenames:        jsonlReader(func(p *parsed) *[]rec[engine.TickerRename] { return &p.renames }, defRename, convRename),
	FileIndexes:        jsonlReader(func(p *parsed) *[]rec[engine.Index] { return &p.indexes }, defIndex, convIndex),
	FileReports:        jsonlReader(func(p *parsed) *[]rec[engine.Report] { return &p.reports }, defReport, convReport),
	FileShares:         jsonlReader(func(p *parsed) *[]rec[engine.SharesPoint] { return &p.shares }, defShares, convShares),
	FileCashActions:    jsonlReader(func(p *parsed) *[]rec[engine.CashAction] { return &p.cashActions }, defCashAction, convCashAction),
	FileShareActions:   jsonlReader(func(p *parsed) *[]rec[engine.ShareAction] { return &p.shareActions }, defShareAction, convShareAction),
	FileFundReports:    jsonlReader(func(p *parsed) *[]rec[engine.FundReport] { return &p.fundReports }, defFundReport, convFundReport),
	FileInsiderReports: jsonlReader(func(p *parsed) *[]rec[engine.InsiderReport] { return &p.insiderReports }, defInsider, convInsider),
	FileDocuments:      jsonlReader(func(p *parsed) *[]rec[engine.Document] { return &p.documents }, defDocument, convDocument),
	FileDaily: func(p *parsed, r io.Reader, file string, c *collector) error {
		cs, err := parseColumnsSink(r, file, false, c, 1<<20, p.dailySink)
		p.daily = cs
		return err
	},
	FileIntraday: func(p *parsed, r io.Reader, file string, c *collector) error {
		cs, err := parseColumns(r, file, true, c)
		p.intraday = cs
		return err
	},
}

// readOrder is the order files are handed to the workers: biggest first.
var readOrder = []string{
	FileDaily, FileReports, FileIntraday, FileFundReports, FileCashActions, FileInsiderReports,
	FileDocuments, FileShares, FileShareActions, FileIndexes, FileSecurities, FileCompanies,
	FileRenames, FileSectors, FileMeta,
}

// Read reads, validates and returns the bundle in directory dir, with its
// entities in canonical order (docs/data-format.md). A bundle with any
// problem returns no Universe and an *ErrorList naming file, line and
// field of each problem (up to MaxErrors); a directory that cannot be
// listed returns a plain error. Files are read concurrently.
//
// A bundle with a manifest (manifest.json, see Write) must hold exactly
// the files it lists, each with the listed size and SHA-256 checksum.
func Read(dir string) (*engine.Universe, error) {
	return ReadWith(dir, ReadOptions{})
}

// ReadOptions configures ReadWith.
type ReadOptions struct {
	// RequireManifest refuses a bundle without manifest.json
	// (ErrNoManifest): one whose writer may have been stopped midway.
	RequireManifest bool
	// Meter, when not nil, follows the read: phase "read bundle", in
	// bytes of the files as stored (compressed).
	Meter Meter
	// Daily, when not nil, is handed each daily series of a valid
	// bundle as the Universe is assembled (one at a time, in canonical
	// order; it must not keep the series' arrays), and the Universe keeps
	// of the series only their tickers, dates and closes: the bars are
	// never in memory together as series. Its error ends the read.
	Daily func(*engine.Series) error
}

// ReadWith is Read with options.
func ReadWith(dir string, opt ReadOptions) (*engine.Universe, error) {
	c := &collector{}
	names, err := listing(dir, c)
	if err != nil {
		return nil, err
	}
	p := &parsed{names: names, dailySink: opt.Daily}
	m, err := ReadManifest(dir)
	switch {
	case err == nil:
		p.manifest = checkAgainstManifest(m, names, c)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("bundle: %w", err)
	case opt.RequireManifest:
		return nil, fmt.Errorf("bundle: %s: %w", dir, ErrNoManifest)
	}
	if c.count() == 0 {
		p.meter = meterOr(opt.Meter)
		var total int64
		for _, name := range names {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil {
				total += st.Size()
			}
		}
		p.meter.Begin("read bundle", "bytes", total)
		readFiles(dir, p, c)
		if p.daily != nil && p.daily.sinkErr != nil {
			return nil, p.daily.sinkErr
		}
	}
	if err := c.err(fileOrder); err != nil {
		return nil, err
	}
	crossCheck(p, c)
	if err := c.err(fileOrder); err != nil {
		return nil, err
	}
	return assemble(p, opt.Daily)
}

// readFiles decodes the files of p.names with up to GOMAXPROCS workers.
func readFiles(dir string, p *parsed, c *collector) {
	work := make(chan string)
	var wg sync.WaitGroup
	workers := max(2, runtime.GOMAXPROCS(0))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for base := range work {
				if c.stop() {
					continue
				}
				readOne(dir, base, p, c)
			}
		}()
	}
	for _, base := range readOrder {
		if _, ok := p.names[base]; ok {
			work <- base
		}
	}
	close(work)
	wg.Wait()
}

func readOne(dir, base string, p *parsed, c *collector) {
	name := p.names[base]
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		c.addf(name, 0, "", "%v", err)
		return
	}
	hf := &hashedFile{f: f, sum: sha256.New(), meter: p.meter}
	rc, err := decompress(hf, name)
	if err != nil {
		f.Close()
		c.addf(name, 0, "", "%v", err)
		return
	}
	defer rc.Close()
	if err := readers[base](p, rc, name, c); err != nil {
		c.addf(name, 0, "", "read: %v", err)
		return
	}
	if want, ok := p.manifest[base]; ok {
		if err := hf.verify(want); err != nil {
			c.addf(name, 0, "", "%v", err)
		}
	}
}

// assemble builds the Universe of a valid parse, in canonical order,
// handing its daily series to daily when it is not nil (see
// ReadOptions.Daily).
func assemble(p *parsed, daily func(*engine.Series) error) (*engine.Universe, error) {
	u := &engine.Universe{}
	if len(p.meta) > 0 {
		u.Meta = p.meta[0].v
	}
	// Each kind's records are dropped once copied, so that the two copies
	// of every kind are not all alive at once.
	u.Sectors, p.sectors = values(p.sectors), nil
	u.Companies, p.companies = values(p.companies), nil
	u.Securities, p.securities = values(p.securities), nil
	u.Renames, p.renames = values(p.renames), nil
	u.Indexes, p.indexes = values(p.indexes), nil
	u.Reports, p.reports = values(p.reports), nil
	u.Shares, p.shares = values(p.shares), nil
	u.CashActions, p.cashActions = values(p.cashActions), nil
	u.ShareActions, p.shareActions = values(p.shareActions), nil
	u.FundReports, p.fundReports = values(p.fundReports), nil
	u.InsiderReports, p.insiderReports = values(p.insiderReports), nil
	u.Documents, p.documents = values(p.documents), nil
	if p.daily != nil && daily != nil {
		u.Daily = p.daily.handed
		p.daily = nil
	} else if p.daily != nil {
		u.Daily = p.daily.daily(true)
		p.daily = nil
	}
	if p.intraday != nil {
		u.Intraday = p.intraday.intradayBars(true)
		p.intraday = nil
	}
	Canonicalize(u)
	return u, nil
}

// Canonicalize sorts u's entity slices in place into the canonical order
// of docs/data-format.md (the order Read returns and Write writes). Arrays
// inside entities (accounts, members, installments, legs, movements,
// sources) keep their order. u.Derived is not touched.
func Canonicalize(u *engine.Universe) {
	sortBy(u.Sectors, cmpSector)
	sortBy(u.Companies, cmpCompany)
	sortBy(u.Securities, cmpSecurity)
	sortBy(u.Renames, cmpRename)
	sortBy(u.Daily, func(a, b *engine.Series) int { return cmp.Compare(a.Ticker, b.Ticker) })
	sortBy(u.Intraday, func(a, b *engine.Intraday) int { return cmp.Compare(a.Ticker, b.Ticker) })
	sortBy(u.Indexes, cmpIndex)
	sortBy(u.Reports, cmpReport)
	sortBy(u.Shares, cmpShares)
	sortBy(u.CashActions, cmpCash)
	sortBy(u.ShareActions, cmpShareAction)
	sortBy(u.FundReports, cmpFund)
	sortBy(u.InsiderReports, cmpInsider)
	sortBy(u.Documents, cmpDocument)
}

func sortBy[T any](s []T, c func(a, b *T) int) {
	sort.SliceStable(s, func(i, j int) bool { return c(&s[i], &s[j]) < 0 })
}

func cmpSector(a, b *engine.Sector) int {
	return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.ID, b.ID))
}

func cmpCompany(a, b *engine.Company) int { return cmp.Compare(a.ID, b.ID) }

func cmpSecurity(a, b *engine.Security) int { return cmp.Compare(a.Ticker, b.Ticker) }

func cmpRename(a, b *engine.TickerRename) int {
	return cmp.Or(cmp.Compare(a.Date, b.Date), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
}

func cmpIndex(a, b *engine.Index) int { return cmp.Compare(a.Symbol, b.Symbol) }

// reportKey is the identity of a report: no two reports of a bundle share it.
type reportKey struct {
	company, statement, aggregation, form string
	ref, start, end                       engine.Date
	version                               int
}

func keyReport(r *engine.Report) reportKey {
	return reportKey{r.CompanyID, r.Statement.String(), r.Aggregation.String(), r.Form.String(), r.ReferenceDate, r.StartDate, r.EndDate, r.Version}
}

func cmpReport(a, b *engine.Report) int {
	return cmp.Or(
		cmp.Compare(a.CompanyID, b.CompanyID),
		cmp.Compare(a.ReferenceDate, b.ReferenceDate),
		cmp.Compare(statementRank(a.Statement.String()), statementRank(b.Statement.String())),
		a.Aggregation.Compare(b.Aggregation),
		a.Form.Compare(b.Form),
		cmp.Compare(a.StartDate, b.StartDate),
		cmp.Compare(a.EndDate, b.EndDate),
		cmp.Compare(a.Version, b.Version),
	)
}

func statementRank(s string) int {
	for i, st := range engine.Statements {
		if st == s {
			return i
		}
	}
	return len(engine.Statements)
}

func cmpShares(a, b *engine.SharesPoint) int {
	return cmp.Or(cmp.Compare(a.CompanyID, b.CompanyID), cmp.Compare(a.Date, b.Date))
}

func cmpCash(a, b *engine.CashAction) int {
	return cmp.Or(
		cmp.Compare(a.CompanyID.String(), b.CompanyID.String()),
		cmp.Compare(a.PriorExDate, b.PriorExDate),
		cmp.Compare(a.Ticker.String(), b.Ticker.String()),
		cmp.Compare(a.EventID, b.EventID),
		cmp.Compare(a.Version, b.Version),
		cmp.Compare(a.ID, b.ID),
	)
}

// shareActionKey is the identity of a share action.
type shareActionKey struct {
	company, ticker, isin, typ, issued string
	exDate                             engine.Date
}

func keyShareAction(s *engine.ShareAction) shareActionKey {
	return shareActionKey{s.CompanyID, s.Ticker, s.ISIN, s.Type, s.IssuedISIN, s.PriorExDate}
}

func cmpShareAction(a, b *engine.ShareAction) int {
	return cmp.Or(
		cmp.Compare(a.CompanyID, b.CompanyID),
		cmp.Compare(a.PriorExDate, b.PriorExDate),
		cmp.Compare(a.Ticker, b.Ticker),
		cmp.Compare(a.ISIN, b.ISIN),
		cmp.Compare(a.Type, b.Type),
		cmp.Compare(a.IssuedISIN, b.IssuedISIN),
	)
}

func cmpFund(a, b *engine.FundReport) int {
	return cmp.Or(cmp.Compare(a.FundID, b.FundID), cmp.Compare(a.ReferenceDate, b.ReferenceDate), cmp.Compare(a.Version, b.Version))
}

func cmpInsider(a, b *engine.InsiderReport) int {
	return cmp.Or(
		cmp.Compare(a.CompanyID, b.CompanyID),
		cmp.Compare(a.ReferenceDate, b.ReferenceDate),
		cmp.Compare(a.Aggregation, b.Aggregation),
		cmp.Compare(a.Version, b.Version),
	)
}

func cmpDocument(a, b *engine.Document) int {
	return cmp.Or(cmp.Compare(a.CompanyID, b.CompanyID), cmp.Compare(a.ID, b.ID))
}
