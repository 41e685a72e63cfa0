package httpapi

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pregao/pregao/engine"
)

// screenEnc holds what the screener's answers repeat from the Dataset,
// encoded once per Dataset: the heads, ticker order and class suffixes by
// Prepare (or Warm, or the first screener request), each column by the
// first request that shows it. Immutable once built, shared by every
// request.
//
// Memory, for n screener rows: heads about 140 bytes a row, ticker order 4
// bytes and class suffix 16 bytes a row; each encoded column about 14
// bytes of text and 4 of offset a row, at most one per catalog indicator
// and per scalar field. Demo scale 1 (757 rows, 43 indicators): heads
// 0.1 MB, every indicator column 0.6 MB; scale 10 about ten times that.
type screenEnc struct {
	// s is the table of the rows: the Dataset's screener, or with as_of
	// the one engine.Screener.At returns.
	s *engine.Screener
	// p are the prices the columns show: the build-time ones, the
	// plan's view's (screenView), or those at an as_of.
	p *engine.ScreenerPrices
	// heads[r] is row r's fields after its rank, without the comma before:
	// "ticker":…,"trading_name":…,"current_price":…,"sector_id":…,"sector_name":….
	heads encCol
	// tickerRank[r] is row r's position in ticker order: the sorts' tie
	// break (tickers are unique rows).
	tickerRank []int32
	// suffix[r] is the class suffix of row r's per-class indicator ids
	// (engine.ClassSuffix of its asset's class).
	suffix []string
	ratios []atomic.Pointer[encCol]  // per catalog indicator (p.Ratios)
	scalar [3]atomic.Pointer[encCol] // close_price, volume, employee_count
}

// encCol is one encoded value per screener row: row r is b[off[r]:off[r+1]].
type encCol struct {
	b   []byte
	off []uint32
}

func (e *encCol) at(r int32) []byte { return e.b[e.off[r]:e.off[r+1]] }

// encodeColumn encodes vals (appendNum: a JSON number or null).
func encodeColumn(vals []engine.Num) *encCol {
	e := &encCol{b: make([]byte, 0, 8*len(vals)), off: make([]uint32, 1, len(vals)+1)}
	for _, v := range vals {
		e.b = appendNum(e.b, v)
		e.off = append(e.off, uint32(len(e.b)))
	}
	return e
}

// screenOnce builds a Dataset's screenEnc once (dsInfo.screen).
type screenOnce struct {
	once sync.Once
	e    *screenEnc
}

// screenEnc returns the Dataset's screenEnc, building it on first use.
func (in *dsInfo) screenEnc() *screenEnc {
	in.screen.once.Do(func() { s := in.ds.Screener(); in.screen.e = newScreenEnc(s, s.Prices()) })
	return in.screen.e
}

// newScreenEnc returns the screener's encoding at prices p.
func newScreenEnc(s *engine.Screener, p *engine.ScreenerPrices) *screenEnc {
	n := s.Len()
	e := &screenEnc{
		s:          s,
		p:          p,
		heads:      encCol{off: make([]uint32, 1, n+1)},
		tickerRank: make([]int32, n),
		suffix:     make([]string, n),
		ratios:     make([]atomic.Pointer[encCol], len(p.Ratios)),
	}
	for r := range n {
		as, is := s.Assets[r], s.Issuers[r]
		b := e.heads.b
		b = append(b, `"ticker":`...)
		b = appendString(b, as.Ticker)
		b = append(b, `,"trading_name":`...)
		b = appendString(b, is.TradingName)
		b = append(b, `,"current_price":`...)
		b = appendNum(b, p.Close[r])
		b = append(b, `,"sector_id":`...)
		if sec := is.Sector[0]; sec != nil {
			b = appendString(b, sec.ID)
			b = append(b, `,"sector_name":`...)
			b = appendString(b, sec.Name)
		} else {
			b = append(b, `null,"sector_name":null`...)
		}
		e.heads.b = b
		e.heads.off = append(e.heads.off, uint32(len(b)))
		e.suffix[r] = engine.ClassSuffix(as.StockType)
	}
	order := make([]int32, n)
	for r := range order {
		order[r] = int32(r)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(s.Assets[x].Ticker, s.Assets[y].Ticker) })
	for i, r := range order {
		e.tickerRank[r] = int32(i)
	}
	return e
}

// col returns the encoded values of vals, kept in *p (built on first use).
func col(p *atomic.Pointer[encCol], vals []engine.Num) *encCol {
	if c := p.Load(); c != nil {
		return c
	}
	c := encodeColumn(vals)
	if !p.CompareAndSwap(nil, c) { // another request built it first: the same bytes
		c = p.Load()
	}
	return c
}
