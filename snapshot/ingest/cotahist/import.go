package cotahist

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pregao/pregao/engine"
	"github.com/pregao/pregao/snapshot/ingest/datafile"
)

// DefaultBoards are the BDI codes of the cash market (TPMERC 010) that
// become daily bars by default: 02 standard lot, 05 sanctioned companies,
// 07 extrajudicial recovery, 08 judicial recovery (a company's only
// standard-lot quotes while in those situations), 12 real-estate funds
// (FII) and 14 investment certificates (ETF and other fund quotas). Every
// other board is counted in Stats.SkippedBoard.
var DefaultBoards = []int{2, 5, 7, 8, 12, 13, 14}

// Real is MODREF of prices in reais (BRL), the only currency kept: MODREF
// is the currency in use on the session's day, and the files of sessions
// before 1 July 1994 quote cruzeiros reais, cruzeiros or cruzados, which
// are not BRL (a CR$ 2,750 is R$ 1). Their records are counted in
// Stats.SkippedCurrency.
const Real = "R$"

// By default (Options.Boards nil) a cash-market record on any other board
// is kept too when its ISIN's security category (CODISI characters 7-9)
// says it is a share (ACN), a unit (UNT, CDA), a BDR (BDR) or a fund quota
// (CTF: FII, FIAGRO, FIDC, ETF): B3 moves such securities to boards of
// their own over the years (BDRs left BDI 02 in recent files), and the
// category is what identifies them. keptCategories lists them.
var keptCategories = [...]string{"ACN", "UNT", "CDA", "BDR", "CTF"}

// keptCategory reports whether isin's security category is one of
// keptCategories.
func keptCategory(isin []byte) bool {
	if len(isin) != 12 {
		return false
	}
	for _, c := range keptCategories {
		if string(isin[6:9]) == c {
			return true
		}
	}
	return false
}

// Options controls an Importer. The zero value is the default.
type Options struct {
	// Lenient counts malformed records and trailer problems instead of
	// failing (Stats.Malformed, Stats.TrailerProblems).
	Lenient bool
	// OddLot also imports the odd-lot market (TPMERC 020, BDI 96) under
	// its own tickers (PETR4F).
	OddLot bool
	// Boards overrides DefaultBoards for the cash market: exactly these
	// boards are kept (without the ISIN-category rule of the default).
	Boards []int
	// Progress, when set, is called about every ProgressEvery lines and at
	// the end of each file, from the importing goroutine.
	Progress func(Progress)
}

// ProgressEvery is the number of lines between Progress calls.
const ProgressEvery = 1 << 18

// Progress reports how far an import has gone.
type Progress struct {
	File    string
	Lines   int64 // lines read so far, every file
	Bytes   int64 // uncompressed bytes read so far, every file
	Kept    int64 // rows kept so far
	Elapsed time.Duration
}

// Stats counts what an Importer read and skipped.
type Stats struct {
	Files           int
	Lines           int64            // every line, headers and trailers included
	Bytes           int64            // uncompressed bytes
	Records         int64            // quote records (type 01)
	Kept            int64            // rows that became daily bars
	SkippedMarket   map[int]int64    // by TPMERC: options, forward, futures...
	SkippedBoard    map[int]int64    // cash-market records by BDI outside Boards
	KeptOtherBoard  map[int]int64    // cash-market records kept by ISIN category on a board outside Boards
	SkippedSpec     map[string]int64 // by ESPECI's first word: no stock type (rights, receipts...)
	SkippedCurrency map[string]int64 // by MODREF: prices in a currency other than the real (before July 1994: CR$, Cr$...)
	Replaced        int64            // rows of a ticker and day already read (the later file wins)
	Malformed       int64            // lenient mode: malformed records skipped
	TrailerProblems []string         // lenient mode: "file: problem"
	Headers         []Header         // one per file, in reading order
}

// Security describes one ticker seen in the files, from its latest record.
type Security struct {
	Ticker    string
	ISIN      string // CODISI
	StockType string // engine.Class* constant
	Spec      string // ESPECI as in the file ("ON      NM")
	Name      string // NOMRES, UTF-8 ("PETROBRAS")
	BDI       int    // board of the latest record
	Sponsored bool   // BDR: sponsored level 1-3 (DR1, DR2, DR3); false for DRN
	First     engine.Date
	Last      engine.Date
}

// Result is what an Importer produced: one Series per ticker and one
// Security per ticker, both sorted by ticker.
type Result struct {
	Series     []engine.Series
	Securities []Security
	Stats      Stats
}

type acc struct {
	sec    Security
	s      engine.Series
	sorted bool
	last   engine.Date
}

// Importer accumulates the daily bars of any number of COTAHIST files.
// It is not safe for concurrent use.
type Importer struct {
	opt    Options
	boards [100]bool
	byTick map[string]*acc
	stats  Stats
	start  time.Time
}

// NewImporter returns an Importer with opt.
func NewImporter(opt Options) *Importer {
	im := &Importer{opt: opt, byTick: make(map[string]*acc, 4096), start: time.Now()}
	boards := opt.Boards
	if boards == nil {
		boards = DefaultBoards
	}
	for _, b := range boards {
		if b >= 0 && b < 100 {
			im.boards[b] = true
		}
	}
	im.stats.SkippedMarket = map[int]int64{}
	im.stats.SkippedBoard = map[int]int64{}
	im.stats.KeptOtherBoard = map[int]int64{}
	im.stats.SkippedSpec = map[string]int64{}
	im.stats.SkippedCurrency = map[string]int64{}
	return im
}

// ImportFile imports path: a COTAHIST text file (optionally .zst or .gz
// compressed) or a ZIP archive of them (every entry is read).
func (im *Importer) ImportFile(path string) error {
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		defer zr.Close()
		n := 0
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("%s: %s: %w", path, f.Name, err)
			}
			err = im.Import(rc, path+"!"+f.Name)
			rc.Close()
			if err != nil {
				return err
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("%s: ZIP archive holds no file", path)
		}
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return err
	}
	rc, err := datafile.Open(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	return im.Import(rc, path)
}

// Import imports one COTAHIST text stream; name is used in errors.
func (im *Importer) Import(r io.Reader, name string) error {
	sc := NewScanner(r, name, im.opt.Lenient)
	st := &im.stats
	baseLines, baseBytes := st.Lines, st.Bytes
	nextProgress := int64(ProgressEvery)
	for sc.Next() {
		rec := sc.Record()
		st.Records++
		if im.opt.Progress != nil && sc.Lines() >= nextProgress {
			nextProgress += ProgressEvery
			im.opt.Progress(Progress{File: name, Lines: baseLines + sc.Lines(), Bytes: baseBytes + sc.Bytes(), Kept: st.Kept, Elapsed: time.Since(im.start)})
		}
		switch {
		case rec.Market == MarketCash:
			if rec.BDI >= 100 || !im.boards[rec.BDI] {
				if im.opt.Boards != nil || !keptCategory(rec.ISIN) {
					st.SkippedBoard[rec.BDI]++
					continue
				}
				st.KeptOtherBoard[rec.BDI]++
			}
		case rec.Market == MarketOddLot && im.opt.OddLot:
		default:
			st.SkippedMarket[rec.Market]++
			continue
		}
		if string(rec.Currency) != Real {
			st.SkippedCurrency[string(rec.Currency)]++
			continue
		}
		typ, sponsored, ok := StockType(rec.Spec)
		if !ok {
			st.SkippedSpec[specWord(rec.Spec)]++
			continue
		}
		im.add(rec, typ, sponsored)
	}
	st.Files++
	st.Lines += sc.Lines()
	st.Bytes += sc.Bytes()
	st.Malformed += sc.Malformed
	if sc.TrailerProblem != "" {
		st.TrailerProblems = append(st.TrailerProblems, name+": "+sc.TrailerProblem)
	}
	if sc.hasHeader {
		st.Headers = append(st.Headers, sc.Header())
	}
	if im.opt.Progress != nil {
		im.opt.Progress(Progress{File: name, Lines: st.Lines, Bytes: st.Bytes, Kept: st.Kept, Elapsed: time.Since(im.start)})
	}
	return sc.Err()
}

func specWord(spec []byte) string {
	for i, c := range spec {
		if c == ' ' {
			return string(spec[:i])
		}
	}
	return string(spec)
}

// StockType maps ESPECI to an engine.Class* constant and, for BDRs,
// whether the program is sponsored (DR1, DR2, DR3) or not (DRN). ok is
// false for specifications that are not shares, units, fund quotas or
// BDRs (rights, receipts, warrants, debentures...).
//
// ESPECI writes the type in columns 1-3, a '*' or a blank in column 4 and
// the security's status (EJ, ED, ER, EA...) from column 5, then the
// listing segment in columns 9-10 ("ON  EJ  NM"). The type is the first
// word up to a '*' ("PNA*", "PNA*EJ", "UNT*EJ  N2"); the four-letter FIDC
// fills column 4, so its status follows with no blank ("FIDCER").
func StockType(spec []byte) (class string, sponsored, ok bool) {
	w := spec
	for i, c := range spec {
		if c == ' ' || c == '*' {
			w = spec[:i]
			break
		}
	}
	if len(w) > 4 && string(w[:4]) == "FIDC" {
		w = w[:4]
	}
	switch string(w) {
	case "ON":
		return engine.ClassCS, false, true
	case "PN":
		return engine.ClassPS, false, true
	case "PNA":
		return engine.ClassPSA, false, true
	case "PNB":
		return engine.ClassPSB, false, true
	case "PNC":
		return engine.ClassPSC, false, true
	case "PND":
		return engine.ClassPSD, false, true
	case "PNE":
		return engine.ClassPSE, false, true
	case "UNT":
		return engine.ClassUnit, false, true
	case "CI":
		return engine.ClassFundUnit, false, true
	case "DR1", "DR2", "DR3":
		return engine.ClassBDR, true, true
	case "DRN", "DRE": // unsponsored; DRE: BDRs of ETFs
		return engine.ClassBDR, false, true
	case "FIDC": // credit-rights fund quotas
		return engine.ClassFundUnit, false, true
	}
	return "", false, false
}

func (im *Importer) add(rec *Record, typ string, sponsored bool) {
	a := im.byTick[string(rec.Ticker)]
	if a == nil {
		t := string(rec.Ticker)
		a = &acc{sorted: true, last: engine.NoDate}
		a.s.Ticker = t
		a.sec.Ticker = t
		a.sec.First = rec.Date
		im.byTick[t] = a
	}
	if a.last != engine.NoDate && rec.Date <= a.last {
		a.sorted = false
	}
	if a.last == engine.NoDate || rec.Date >= a.last {
		// The latest record describes the security.
		a.last = rec.Date
		sec := &a.sec
		if string(rec.ISIN) != sec.ISIN {
			sec.ISIN = string(rec.ISIN)
		}
		if string(rec.Spec) != sec.Spec {
			sec.Spec = string(rec.Spec)
		}
		if sec.Name == "" || !sameText(rec.Name, sec.Name) {
			sec.Name = datafile.Text(rec.Name)
		}
		sec.StockType, sec.Sponsored, sec.BDI = typ, sponsored, rec.BDI
	}
	f := float64(100 * rec.Factor)
	s := &a.s
	s.Dates = append(s.Dates, rec.Date)
	s.Open = append(s.Open, price(rec.Open, f))
	s.High = append(s.High, price(rec.High, f))
	s.Low = append(s.Low, price(rec.Low, f))
	s.Close = append(s.Close, price(rec.Close, f))
	s.Volume = append(s.Volume, engine.Num(float64(rec.Volume)/100))
	s.Quantity = append(s.Quantity, rec.Quantity)
	s.Trades = append(s.Trades, rec.Trades)
	im.stats.Kept++
}

// sameText reports whether the raw name equals the stored UTF-8 name
// (ASCII names compare without allocating).
func sameText(raw []byte, s string) bool { return string(raw) == s }

// price converts hundredths per factor shares to BRL per share. A zero
// price (no trade of that kind) is missing.
func price(v int64, hundredthsPerShare float64) engine.Num {
	if v == 0 {
		return engine.Null
	}
	return engine.Num(float64(v) / hundredthsPerShare)
}

// Stats returns the counts so far (maps are shared: do not modify).
func (im *Importer) Stats() Stats { return im.stats }

// Result sorts each ticker's rows by date (a later-read row of the same
// ticker and day replaces the earlier one) and returns the series and
// securities sorted by ticker. The Importer must not be used afterwards.
func (im *Importer) Result() Result {
	ticks := make([]string, 0, len(im.byTick))
	for t := range im.byTick {
		ticks = append(ticks, t)
	}
	sort.Strings(ticks)
	res := Result{Series: make([]engine.Series, 0, len(ticks)), Securities: make([]Security, 0, len(ticks))}
	for _, t := range ticks {
		a := im.byTick[t]
		if !a.sorted {
			im.stats.Replaced += normalize(&a.s)
		}
		a.sec.First = a.s.Dates[0]
		a.sec.Last = a.s.Dates[len(a.s.Dates)-1]
		res.Series = append(res.Series, a.s)
		res.Securities = append(res.Securities, a.sec)
	}
	im.byTick = nil
	im.stats.Kept -= im.stats.Replaced
	res.Stats = im.stats
	return res
}

// normalize sorts s by date, stable, keeping the last row of each date;
// it returns the number of rows dropped.
func normalize(s *engine.Series) int64 {
	n := len(s.Dates)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return s.Dates[idx[i]] < s.Dates[idx[j]] })
	keep := idx[:0]
	for _, i := range idx {
		if len(keep) > 0 && s.Dates[keep[len(keep)-1]] == s.Dates[i] {
			keep[len(keep)-1] = i
			continue
		}
		keep = append(keep, i)
	}
	out := engine.Series{Ticker: s.Ticker}
	for _, i := range keep {
		out.Dates = append(out.Dates, s.Dates[i])
		out.Open = append(out.Open, s.Open[i])
		out.High = append(out.High, s.High[i])
		out.Low = append(out.Low, s.Low[i])
		out.Close = append(out.Close, s.Close[i])
		out.Volume = append(out.Volume, s.Volume[i])
		out.Quantity = append(out.Quantity, s.Quantity[i])
		out.Trades = append(out.Trades, s.Trades[i])
	}
	dropped := int64(n - len(keep))
	*s = out
	return dropped
}
