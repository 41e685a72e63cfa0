package official

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/internal/atomicfile"
	"github.com/pregao/pregao/snapshot/ingest/fetch"
)

// Paths of the files Write creates, relative to its directory (slash
// separated): the official hosts' paths, as pregao fetch writes them
// (B3's services under their service path: package fetch).
const (
	CotahistDir = "InstDados/SerHist"
	CadPath     = "dados/CIA_ABERTA/CAD/DADOS/cad_cia_aberta.csv"
	DFPDir      = "dados/CIA_ABERTA/DOC/DFP/DADOS"
	ITRDir      = "dados/CIA_ABERTA/DOC/ITR/DADOS"
	FCADir      = "dados/CIA_ABERTA/DOC/FCA/DADOS"
	FIIDir      = "dados/FII/DOC/INF_MENSAL/DADOS"
	IndexDir    = fetch.SvcPortfolioDay  // SYMBOL/YYYY-MM-DD.json
	CashDir     = fetch.SvcCashDividends // SYMBOL.json
	SuppDir     = fetch.SvcSupplement    // SYMBOL.json
	DetailsDir  = fetch.SvcDetail        // SYMBOL.json
	ListingDir  = fetch.SvcFundList      // fundosListados.csv, etfsListados.csv
)

// Options tunes Write. The zero value is the default.
type Options struct {
	// Workers bounds the files written at once; 0: GOMAXPROCS.
	Workers int
	// Meter, when set, is told the phase (Begin) and each file written
	// (Add, from several goroutines). nil: none.
	Meter Meter
}

// Meter receives the progress of a Write (snapshot.Progress is one).
type Meter interface {
	Begin(phase, unit string, total int64)
	Add(n int64)
}

// Stats counts what Write wrote. Counts are rows of the official files.
type Stats struct {
	Files         int
	Bytes         int64 // bytes of the files written (compressed as stored)
	CotahistLines int64 // every COTAHIST line, header and trailer included
	QuoteRows     int64 // COTAHIST quote records that import keeps (daily bars)
	// Skipped are the COTAHIST records written for import to skip, by
	// kind: "odd lot" (TPMERC 020), "option" (TPMERC 070), "forward"
	// (TPMERC 030), "right" (ESPECI DIR on BDI 02); and, under "capped
	// trades", the bars import keeps whose trade count was written as
	// 99999 (TOTNEG has 5 digits).
	Skipped       map[string]int64
	StatementRows int64 // DFP and ITR statement rows, comparatives included
	Reports       int   // reports written (one per statement, aggregation, period, version)
	FundReports   int
	CashEvents    int
	ShareEvents   int // stock dividends and subscriptions written (legged ones included)
	Indexes       int
}

// modTime stamps every ZIP entry so that output is deterministic.
var modTime = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// writer holds one Write: the universe, its indexes and the counters.
type writer struct {
	dir  string
	u    *engine.Universe
	opt  Options
	asOf engine.Date

	mu sync.Mutex
	st Stats

	company map[string]*engine.Company
	secs    map[string][]*engine.Security // company -> securities, by ticker
	byTick  map[string]*engine.Security
	shares  map[string][]engine.SharesPoint // company -> points, by date
}

// Write writes u under dir as the official files would carry it (see the
// package doc) and returns what it wrote (the caller's). dir is created
// if needed; files of the same names are replaced, others are left. u is
// only read, from several goroutines, and must not change meanwhile.
// Memory beyond u is small: files are streamed (a COTAHIST year holds one
// cursor per series).
func Write(dir string, u *engine.Universe, opt Options) (*Stats, error) {
	return WriteContext(context.Background(), dir, u, opt)
}

// WriteContext is Write stopped by ctx: no file is started once ctx has
// ended, and ctx's error is returned when the files under way are done
// (each written whole under its name, or not at all).
func WriteContext(ctx context.Context, dir string, u *engine.Universe, opt Options) (*Stats, error) {
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	w := &writer{dir: dir, u: u, opt: opt, company: map[string]*engine.Company{},
		secs: map[string][]*engine.Security{}, byTick: map[string]*engine.Security{}}
	w.st.Skipped = map[string]int64{}
	y, m, d := u.Meta.AsOf.In(brt).Date()
	w.asOf = engine.MakeDate(y, m, d)
	for i := range u.Companies {
		w.company[u.Companies[i].ID] = &u.Companies[i]
	}
	for i := range u.Securities {
		s := &u.Securities[i]
		w.byTick[s.Ticker] = s
		if s.CompanyID != "" {
			w.secs[s.CompanyID] = append(w.secs[s.CompanyID], s)
		}
	}
	w.shares = map[string][]engine.SharesPoint{}
	for _, p := range u.Shares {
		w.shares[p.CompanyID] = append(w.shares[p.CompanyID], p)
	}
	for _, ps := range w.shares {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Date < ps[j].Date })
	}
	for _, ss := range w.secs {
		sort.Slice(ss, func(i, j int) bool { return ss[i].Ticker < ss[j].Ticker })
	}
	jobs := w.cotahistJobs()
	jobs = append(jobs, w.cvmJobs()...)
	jobs = append(jobs, w.fiiJobs()...)
	jobs = append(jobs, w.b3Jobs()...)
	if m := opt.Meter; m != nil {
		m.Begin("official", "files", int64(len(jobs)))
	}
	sem := make(chan struct{}, opt.Workers)
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, job := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if errs[i] = ctx.Err(); errs[i] != nil {
				return
			}
			errs[i] = job()
			if m := opt.Meter; m != nil {
				m.Add(1)
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return &w.st, nil
}

// brt is São Paulo time (UTC-3, no daylight saving since 2019): the
// official files' dates are local.
var brt = time.FixedZone("BRT", -3*3600)

// localDate is the São Paulo date of t (NoDate for the zero time).
func localDate(t time.Time) engine.Date {
	if t.IsZero() {
		return engine.NoDate
	}
	y, m, d := t.In(brt).Date()
	return engine.MakeDate(y, m, d)
}

// add updates the counters under the lock.
func (w *writer) add(f func(s *Stats)) {
	w.mu.Lock()
	f(&w.st)
	w.mu.Unlock()
}

// replace writes dir/rel through write (atomicfile.WriteFile, mode 0600),
// making its directories, and counts its size. A generate killed or
// failing midway so leaves no truncated file under an official name for an
// import to read; a killed one's temporary file is removed by the next
// generate that writes the same file.
func (w *writer) replace(rel string, write func(io.Writer) error) error {
	p := filepath.Join(w.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	var size int64
	err := atomicfile.WriteFile(p, 0o600, func(f io.Writer) error {
		return write(countingWriter{f, &size})
	})
	if err != nil {
		return err
	}
	w.add(func(s *Stats) { s.Files++; s.Bytes += size })
	return nil
}

// countingWriter adds the bytes written through it to *n.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// writeFile writes one plain file through fill.
func (w *writer) writeFile(rel string, fill func(io.Writer) error) error {
	err := w.replace(rel, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		if err := fill(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("official: %s: %w", rel, err)
	}
	return nil
}

// member is one file of a ZIP archive.
type member struct {
	name string
	fill func(io.Writer) error
}

// writeZip writes a ZIP archive of members, deflated at BestSpeed (the
// official archives use deflate too; the level only changes the size).
func (w *writer) writeZip(rel string, members []member) error {
	err := w.replace(rel, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 1<<16)
		zw := zip.NewWriter(bw)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, flate.BestSpeed)
		})
		for _, m := range members {
			zf, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: modTime})
			if err != nil {
				return err
			}
			mb := bufio.NewWriterSize(zf, 1<<16)
			if err := m.fill(mb); err != nil {
				return err
			}
			if err := mb.Flush(); err != nil {
				return err
			}
		}
		if err := zw.Close(); err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("official: %s: %w", rel, err)
	}
	return nil
}

// latin1 appends s encoded as ISO-8859-1: characters beyond U+00FF
// become '?' (the demo's text has none; the comparison would tell).
func latin1(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		if r <= 0xFF {
			b = append(b, byte(r))
		} else {
			b = append(b, '?')
		}
	}
	return b
}

// csvRow writes one ';'-separated row in ISO-8859-1 with CRLF. A field
// holding ';' or a line end (which the official files never quote) has
// them replaced by ',' and ' '.
type csvRow struct {
	buf []byte
	w   io.Writer
}

func (r *csvRow) write(fields ...string) error {
	b := r.buf[:0]
	for i, f := range fields {
		if i > 0 {
			b = append(b, ';')
		}
		if strings.ContainsAny(f, ";\r\n") {
			f = strings.NewReplacer(";", ",", "\r", " ", "\n", " ").Replace(f)
		}
		b = latin1(b, f)
	}
	b = append(b, '\r', '\n')
	r.buf = b
	_, err := r.w.Write(b)
	return err
}

// isoDate is YYYY-MM-DD (CVM), "" for NoDate.
func isoDate(d engine.Date) string {
	if !d.Valid() {
		return ""
	}
	return d.String()
}

// brDate is dd/mm/yyyy (B3), "" for NoDate.
func brDate(d engine.Date) string {
	if !d.Valid() {
		return ""
	}
	y, m, day := d.Time().Date()
	return fmt.Sprintf("%02d/%02d/%04d", day, int(m), y)
}

// decimal is v in the shortest form that reads back as v, '.' decimal
// (CVM); "" for a missing value.
func decimal(v engine.Num) string {
	if !v.Valid() {
		return ""
	}
	return strconv.FormatFloat(float64(v), 'f', -1, 64)
}

// brNum is v with a decimal comma and no thousands separator (B3 JSON
// rates and values), shortest form; "" for a missing value.
func brNum(v engine.Num) string {
	return strings.Replace(decimal(v), ".", ",", 1)
}

// brInt is n with '.' grouping thousands ("4.355.174.839").
func brInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// cnpjText formats 14 digits as 00.000.000/0000-00; other ids unchanged.
func cnpjText(id string) string {
	if len(id) != 14 {
		return id
	}
	return id[:2] + "." + id[2:5] + "." + id[5:8] + "/" + id[8:12] + "-" + id[12:]
}

// root is a ticker's 4-character root.
func root(t string) string {
	if len(t) < 4 {
		return t
	}
	return t[:4]
}
