package engine

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// Screener is the column-wise table the screener scans: one row per
// (company, ticker) for CS/PS*/UNIT/BDR tickers of KindCompany and KindBDR
// companies that have a latest quote. Row r of every column describes the
// same ticker; rows are in ticker order. Built once at Build, at the
// last session's closes; Priced gives the columns that depend on the
// price at other quotes (the package documentation, "Screener
// repricing"); At gives the rows and columns as known at an earlier
// instant.
type Screener struct {
	Assets  []*Asset  // the row's ticker
	Issuers []*Issuer // the row's company
	Close   []Num     // BRL per share, latest session close (current_price)
	Volume  []Num     // BRL traded in the latest session
	// Employees is the company's employee count; Null when unknown.
	Employees []Num
	// LiquidityRank is the ticker's market liquidity rank (1 = most liquid,
	// 0 unknown).
	LiquidityRank []int32
	// Primary marks the company's most liquid row (LiquidityRank
	// ascending with 0 last, then volume descending, then ticker).
	Primary []bool
	// SectorID holds the taxonomy ids of the row's company per level
	// (SectorID[0] level 1 ... SectorID[3] level 4); "" when unknown.
	SectorID [4][]string
	// Ratios[k][r] is the latest value of Catalog()[k] for row r: the
	// point of the newest reference_date, at its latest publish_date (a
	// restatement of an older period filed later does not replace it), of
	// frequency TTM, else ANNUAL, of the row's class for by-class
	// indicators or of the company otherwise; Null when none.
	Ratios [][]Num
	// RatioPublished[k][r] is that point's publish_date (zero when none).
	RatioPublished [][]time.Time
	// ByVolume lists the rows by Volume descending (missing last), then
	// ticker: the default sort.
	ByVolume []int32

	ds    *Dataset            // the Dataset of the rows (Priced)
	price lazy[screenPricing] // what Priced reads, built on its first call
	// byIssuer lists the rows with each company's rows one run, in row
	// order (At values a company once).
	byIssuer []int32
	past     lazy[screenerPast] // the rows of earlier sessions (At), built on first use
	// lazyRatios: the ratio columns are filled on Dataset.Screener's
	// first call (ratioCols), not by Build (BuildOptions.RatiosChecked).
	lazyRatios bool
	ratioCols  sync.Once
}

// issuerRows returns the rows with each company's rows one run.
func (s *Screener) issuerRows() []int32 { return s.byIssuer }

// groupByIssuer returns the rows of issuers (one per row) with each
// issuer's rows one run: by the issuer's first row, then row.
func groupByIssuer(issuers []*Issuer) []int32 {
	first := make(map[*Issuer]int32, len(issuers))
	rows := make([]int32, len(issuers))
	for r, is := range issuers {
		if _, ok := first[is]; !ok {
			first[is] = int32(r)
		}
		rows[r] = int32(r)
	}
	slices.SortStableFunc(rows, func(x, y int32) int { return cmp.Compare(first[issuers[x]], first[issuers[y]]) })
	return rows
}

// Len returns the number of rows.
func (s *Screener) Len() int { return len(s.Assets) }

// Screener returns the screener table.
//
// With BuildOptions.RatiosChecked its ratio columns (Ratios,
// RatioPublished) are filled on the first call, which reads every
// company's points: the caller has verified them (Dataset.CheckAll).
func (d *Dataset) Screener() *Screener {
	s := &d.screener
	if s.lazyRatios {
		s.ratioCols.Do(func() {
			for r := range s.Assets {
				s.fillRatioRow(r)
			}
		})
	}
	return s
}

// fillRatioRow fills row r's cells of the ratio columns.
func (s *Screener) fillRatioRow(r int) {
	a := s.Assets[r]
	is := a.Issuer
	cat := s.ds.u.Derived.Catalog
	for k := range cat {
		class := ""
		if cat[k].ByClass {
			class = a.StockType
		}
		s.Ratios[k][r] = Null
		if p := latestRatio(is, uint16(k), class); p != nil {
			s.Ratios[k][r] = p.Value
			s.RatioPublished[k][r] = p.PublishDate.Time()
		}
	}
}

// ScreenerClass reports whether tickers of class c are screener rows.
func ScreenerClass(c string) bool {
	switch c {
	case ClassCS, ClassPS, ClassPSA, ClassPSB, ClassPSC, ClassPSD, ClassPSE, ClassUnit, ClassBDR:
		return true
	}
	return false
}

// latestRatio returns the point of indicator k for class (TTM first, then
// ANNUAL) of the newest reference_date, at its latest publish_date: CVM
// re-filings of older quarters are common, and one filed after the newest
// quarter must not replace it.
func latestRatio(is *Issuer, k uint16, class string) *RatioPoint {
	for _, f := range [...]string{FreqTTM, FreqAnnual} {
		g := is.RatioGroup(k, class, f)
		if g == nil || len(g.Points) == 0 {
			continue
		}
		// A series is by reference date, then publication, ascending: the
		// newest is its last point (of points alike, the later, as a scan
		// keeping the greatest would find), read without walking the rest.
		return &g.Points[len(g.Points)-1]
	}
	return nil
}

// RatioGroup returns the issuer's series of indicator k for class and
// frequency, or nil. It does not allocate.
func (is *Issuer) RatioGroup(k uint16, class, freq string) *RatioSeries {
	rs := is.Ratios()
	i, ok := slices.BinarySearchFunc(rs, RatioSeries{Indicator: k, Class: class, Frequency: freq}, cmpRatioSeries)
	if !ok {
		return nil
	}
	return &rs[i]
}

func cmpRatioSeries(a, b RatioSeries) int {
	if c := cmp.Compare(a.Indicator, b.Indicator); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Class, b.Class); c != 0 {
		return c
	}
	return cmp.Compare(a.Frequency, b.Frequency)
}

// screenerCandidate reports whether a is a screener row but for its
// listing dates: a share class of a screener kind with a quote, of a
// company (or BDR issuer) whose registration is not cancelled.
func screenerCandidate(a *Asset) bool {
	if a.Issuer == nil || !ScreenerClass(a.StockType) || !a.Latest.Valid() || a.Issuer.Status == "CANCELLED" {
		return false
	}
	k := a.Issuer.Kind
	return k == KindCompany || k == KindBDR
}

// delistedBefore reports whether a was delisted before session last: a
// screener row of a Dataset whose last session is last is a candidate
// that is not.
func delistedBefore(a *Asset, last Date) bool {
	return a.ListedTo.Valid() && a.ListedTo > a.ListedFrom && a.ListedTo < last
}

// fillScreenerRow sets row r's columns that come from the registry
// (Issuers, Employees, LiquidityRank, SectorID) for asset a.
func fillScreenerRow(s *Screener, r int, a *Asset) {
	is := a.Issuer
	s.Issuers[r] = is
	s.Employees[r] = Null
	if is.Employees >= 0 {
		s.Employees[r] = Num(is.Employees)
	}
	s.LiquidityRank[r] = int32(a.LiquidityRank)
	for l, sec := range is.Sector {
		if sec != nil {
			s.SectorID[l][r] = sec.ID
		}
	}
}

func (b *builder) buildScreener() {
	d := b.d
	s := &d.screener
	s.ds = d
	for i := range d.assets {
		a := &d.assets[i]
		if screenerCandidate(a) && !delistedBefore(a, d.lastSession) {
			s.Assets = append(s.Assets, a)
		}
	}
	n := len(s.Assets)
	s.Issuers = make([]*Issuer, n)
	s.Close = make([]Num, n)
	s.Volume = make([]Num, n)
	s.Employees = make([]Num, n)
	s.LiquidityRank = make([]int32, n)
	s.Primary = make([]bool, n)
	for l := range s.SectorID {
		s.SectorID[l] = make([]string, n)
	}
	cat := d.u.Derived.Catalog
	s.Ratios = make([][]Num, len(cat))
	s.RatioPublished = make([][]time.Time, len(cat))
	for k := range cat {
		s.Ratios[k] = make([]Num, n)
		s.RatioPublished[k] = make([]time.Time, n)
	}
	// Each row writes only its own cells: rows are filled in parallel.
	b.parallelFor(n, func(r int) {
		a := s.Assets[r]
		is := a.Issuer
		fillScreenerRow(s, r, a)
		s.Close[r] = a.Latest.Close
		s.Volume[r] = a.Latest.Volume
		// Issuer.Assets is in liquidity order: the first one with a row
		// is the primary.
		for _, o := range is.Assets {
			if o.Latest.Valid() && ScreenerClass(o.StockType) {
				s.Primary[r] = o == a
				break
			}
		}
		if !b.ratiosChecked {
			s.fillRatioRow(r)
		}
	})
	s.lazyRatios = b.ratiosChecked
	s.byIssuer = groupByIssuer(s.Issuers)
	s.ByVolume = make([]int32, n)
	for i := range s.ByVolume {
		s.ByVolume[i] = int32(i)
	}
	slices.SortStableFunc(s.ByVolume, func(x, y int32) int {
		return cmp.Or(cmpDescMissingLast(s.Volume[x], s.Volume[y]), cmp.Compare(s.Assets[x].Ticker, s.Assets[y].Ticker))
	})
}
