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
// request. With as_of, each request has its own, its columns encoded for
// it, and the rest kept once per Dataset (pastHeads).
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
	// "ticker":…,"trading_name":…,"current_price":…,"sector_id":…,"sector_name":…
	// (empty with past: see appendHead).
	heads encCol
	// tickerRank[r] is row r's position in ticker order: the sorts' tie
	// break (tickers are unique rows).
	tickerRank []int32
	// suffix[r] is the class suffix of row r's per-class indicator ids
	// (engine.ClassSuffix of its asset's class).
	suffix []string
	// past, with as_of, holds the heads instead of heads, each with
	// another price than p's, which appendHead puts in its place.
	past   *pastHeads
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
		e.heads.b, _, _ = appendScreenHead(e.heads.b, s, r, p.Close[r])
		e.heads.off = append(e.heads.off, uint32(len(e.heads.b)))
		e.suffix[r] = engine.ClassSuffix(s.Assets[r].StockType)
	}
	tickerRanks(e.tickerRank, s)
	return e
}

// appendScreenHead appends row r's head at price (screenEnc.heads)
// and returns it with the offsets in it of the price's first byte and of
// the byte after its last.
func appendScreenHead(dst []byte, s *engine.Screener, r int, price engine.Num) (b []byte, at, end int) {
	as, is := s.Assets[r], s.Issuers[r]
	dst = append(dst, `"ticker":`...)
	dst = appendString(dst, as.Ticker)
	dst = append(dst, `,"trading_name":`...)
	dst = appendString(dst, is.TradingName)
	dst = append(dst, `,"current_price":`...)
	at = len(dst)
	dst = appendNum(dst, price)
	end = len(dst)
	dst = append(dst, `,"sector_id":`...)
	if sec := is.Sector[0]; sec != nil {
		dst = appendString(dst, sec.ID)
		dst = append(dst, `,"sector_name":`...)
		dst = appendString(dst, sec.Name)
	} else {
		dst = append(dst, `null,"sector_name":null`...)
	}
	return dst, at, end
}

// tickerRanks sets rank[r] to row r's position in ticker order.
func tickerRanks(rank []int32, s *engine.Screener) {
	order := make([]int32, len(rank))
	for r := range order {
		order[r] = int32(r)
	}
	slices.SortFunc(order, func(x, y int32) int { return strings.Compare(s.Assets[x].Ticker, s.Assets[y].Ticker) })
	for i, r := range order {
		rank[r] = int32(i)
	}
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

// appendHead appends row r's head (see heads) to dst.
func (e *screenEnc) appendHead(dst []byte, r int32) []byte {
	if e.past == nil {
		return append(dst, e.heads.at(r)...)
	}
	h, price := e.past.head(r)
	from := 0
	if e.p.Tickers != nil && e.p.Tickers[r] != "" {
		// A ticker renamed since: the head's "ticker":"…" replaced by the
		// one of then (tickers need no escaping: engine.ValidTicker).
		dst = append(dst, `"ticker":`...)
		dst = appendString(dst, e.p.Tickers[r])
		from = len(`"ticker":""`) + len(e.s.Assets[r].Ticker)
	}
	dst = append(dst, h[from:price[0]]...)
	dst = appendNum(dst, e.p.Close[r])
	return append(dst, h[price[1]:]...)
}

// pastHeads is what the screener's answers with as_of repeat from the
// Dataset: the heads, ticker order and class suffixes of the rows of the
// table engine.Screener.At returns (the snapshot's rows, then the
// tickers delisted before its last session), made once per Dataset by
// its first such request. The heads of the snapshot's rows are those of
// its screenEnc, encoded at the build-time prices; the others are
// encoded here, once. An answer writes each head with the price at its
// as_of in place of the one the head holds (screenEnc.appendHead).
//
// Memory, for m rows delisted since: about 140 bytes a row of them, and
// 28 bytes a row of the table (price span, ticker order, suffix).
type pastHeads struct {
	tab   *engine.Screener
	snap  *encCol // the heads of the rows before len(snap.off)-1
	extra encCol  // the heads of the rows after, from the first
	// price[r] is where row r's head holds its price:
	// head[price[r][0]:price[r][1]].
	price      [][2]uint32
	tickerRank []int32
	suffix     []string
}

// head returns row r's head and where its price is in it.
func (h *pastHeads) head(r int32) ([]byte, [2]uint32) {
	if n0 := int32(len(h.snap.off) - 1); r >= n0 {
		return h.extra.at(r - n0), h.price[r]
	}
	return h.snap.at(r), h.price[r]
}

// newPastHeads returns the pastHeads of tab, the table of the Screener
// snap encodes, at any instant.
func newPastHeads(snap *screenEnc, tab *engine.Screener) *pastHeads {
	n0, n := snap.s.Len(), tab.Len()
	h := &pastHeads{
		tab:        tab,
		snap:       &snap.heads,
		extra:      encCol{off: make([]uint32, 1, n-n0+1)},
		price:      make([][2]uint32, n),
		tickerRank: make([]int32, n),
		suffix:     make([]string, n),
	}
	var scratch []byte
	for r := range n0 {
		// The head as snap has it, encoded again to find its price.
		var at, end int
		scratch, at, end = appendScreenHead(scratch[:0], tab, r, snap.p.Close[r])
		h.price[r] = [2]uint32{uint32(at), uint32(end)}
		h.suffix[r] = snap.suffix[r]
	}
	for r := n0; r < n; r++ {
		start := len(h.extra.b)
		var at, end int
		h.extra.b, at, end = appendScreenHead(h.extra.b, tab, r, engine.Null)
		h.extra.off = append(h.extra.off, uint32(len(h.extra.b)))
		h.price[r] = [2]uint32{uint32(at - start), uint32(end - start)}
		h.suffix[r] = engine.ClassSuffix(tab.Assets[r].StockType)
	}
	tickerRanks(h.tickerRank, tab)
	return h
}

// pastOnce builds a Dataset's pastHeads once (dsInfo.past).
type pastOnce struct {
	once sync.Once
	h    *pastHeads
}

// screenAt returns the encoding of the screener at an instant: tab and
// prices as engine.Screener.At returns them, with the heads of the
// Dataset's pastHeads.
func (in *dsInfo) screenAt(tab *engine.Screener, prices *engine.ScreenerPrices) *screenEnc {
	in.past.once.Do(func() { in.past.h = newPastHeads(in.screenEnc(), tab) })
	h := in.past.h
	if h.tab != tab { // not the table At returns (one per Dataset)
		return newScreenEnc(tab, prices)
	}
	rank := h.tickerRank
	if prices.Tickers != nil {
		// Tickers renamed since sort by their name of then.
		rank = make([]int32, tab.Len())
		order := make([]int32, len(rank))
		for r := range order {
			order[r] = int32(r)
		}
		slices.SortFunc(order, func(x, y int32) int {
			return strings.Compare(prices.TickerOf(tab, int(x)), prices.TickerOf(tab, int(y)))
		})
		for i, r := range order {
			rank[r] = int32(i)
		}
	}
	return &screenEnc{
		s:          tab,
		p:          prices,
		tickerRank: rank,
		suffix:     h.suffix,
		past:       h,
		ratios:     make([]atomic.Pointer[encCol], len(prices.Ratios)),
	}
}
