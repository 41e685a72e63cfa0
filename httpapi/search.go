package httpapi

import (
	"cmp"
	"index/suffixarray"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/pregao/pregao/engine"
)

// Company search (GET /companies?search=, an addition): by ticker, symbol,
// trading name and name, ignoring case and accents, ranked by how the text
// matches and then by liquidity.

// maxSearchResults bounds the companies a search returns; maxSearchText
// the text searched, in bytes.
const (
	maxSearchResults = 50
	maxSearchText    = 100
)

// Match ranks, best first.
const (
	matchTicker       = iota // a ticker (current or former) equals the text
	matchSymbol              // the company's symbol equals it
	matchTickerPrefix        // a ticker starts with it
	matchNameStart           // the trading name or name starts with it
	matchWordStart           // a word of the trading name or name starts with it
	matchContains            // the trading name or name contains it
	noMatch
)

// searchText returns the search query parameter: at most maxSearchText
// bytes (else a 400 through q), and "" (no search: the plain list) when
// nothing is left of it once folded, such as spaces alone, as an empty
// value is (decision, docs/api.md).
func searchText(q *query) string {
	s := q.str("search")
	if len(s) > maxSearchText {
		q.fail(badRequest("query parameter search: %d bytes, at most %d", len(s), maxSearchText))
		return ""
	}
	if s != "" && fold(s) == "" {
		return ""
	}
	return s
}

// fold upper-cases s and removes its accents ("Petróleo" -> "PETROLEO").
func fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.ToUpper(strings.Join(strings.Fields(out), " "))
}

// searchIndex is what a search looks names and symbols up in, built once
// per Dataset on its first search (or by Warm): about 13 ms at demo scale 1,
// 0.2 s for ten times the issuers.
//
// text holds the folded trading name and name of every issuer, each
// followed by a 0 byte (a 0 byte in a name is read as 1): issuer i's are
// names 2i and 2i+1, starting at starts[2i] and starts[2i+1]. byName and
// byWord list the positions where a name or another of its words starts,
// sorted by the name's text from there; all indexes every position. A
// text is found at the positions where it starts the rest of a name: a
// binary search, then only the occurrences, best class first.
//
// Memory: the folded names (about 50 bytes an issuer), 4 bytes per word
// and per byte of them; demo scale 1 (913 issuers) about 0.3 MB.
type searchIndex struct {
	once    sync.Once
	text    string
	starts  []int32 // name k starts at starts[k]; starts[len] = len(text)
	byName  []int32
	byWord  []int32
	all     *suffixarray.Index
	symbols map[string][]int32 // foldCase(symbol) -> issuers
}

func (in *dsInfo) search() *searchIndex {
	s := &in.searchIx
	s.once.Do(func() { s.build(in.ds.Issuers()) })
	return s
}

func (s *searchIndex) build(iss []engine.Issuer) {
	var b strings.Builder
	s.starts = make([]int32, 0, 2*len(iss)+1)
	s.symbols = map[string][]int32{}
	for i := range iss {
		for _, n := range [2]string{fold(iss[i].TradingName), fold(iss[i].Name)} {
			s.starts = append(s.starts, int32(b.Len()))
			b.WriteString(strings.ReplaceAll(n, "\x00", "\x01"))
			b.WriteByte(0)
		}
		if sym := iss[i].Symbol; sym != "" {
			k := foldCase(sym)
			s.symbols[k] = append(s.symbols[k], int32(i))
		}
	}
	s.text = b.String()
	s.starts = append(s.starts, int32(len(s.text)))
	t := s.text
	for p := range len(t) {
		switch {
		case t[p] == 0:
		case p == 0 || t[p-1] == 0:
			s.byName = append(s.byName, int32(p))
		case t[p-1] == ' ':
			s.byWord = append(s.byWord, int32(p))
		}
	}
	// By the rest of the name only: a comparison never runs past its end.
	rest := func(p int32) string { return t[p : int(p)+strings.IndexByte(t[p:], 0)] }
	byRest := func(x, y int32) int { return strings.Compare(rest(x), rest(y)) }
	slices.SortFunc(s.byName, byRest)
	slices.SortFunc(s.byWord, byRest)
	s.all = suffixarray.New([]byte(t))
}

// occurrences calls f with each position of sa (byName or byWord) where q
// starts the rest of the name. q holds no 0 byte.
func (s *searchIndex) occurrences(sa []int32, q string, f func(p int32)) {
	t := s.text
	// t[p:] orders as the rest of p's name does, the 0 byte after it
	// sorting first, so comparing its first len(q) bytes with q is
	// monotone along sa.
	lo, _ := slices.BinarySearchFunc(sa, q, func(p int32, q string) int {
		return strings.Compare(t[p:min(int(p)+len(q), len(t))], q)
	})
	for _, p := range sa[lo:] {
		if !strings.HasPrefix(t[p:], q) {
			return
		}
		f(p)
	}
}

// issuerAt returns the issuer whose name holds text position p.
func (s *searchIndex) issuerAt(p int32) int32 {
	k, _ := slices.BinarySearch(s.starts, p+1)
	return int32((k - 1) / 2)
}

// foldCase maps s to one representative of its case-folding class: two
// strings are equal under strings.EqualFold exactly when their foldCase
// are equal (each rune becomes the least rune of its simple-folding orbit).
func foldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// searchCompanies returns the issuers matching text among those keep
// accepts, best first: by match rank, then by the liquidity rank of their
// most liquid security (unknown last), then by company_id; at most
// maxSearchResults. Classes are looked up best first, and a class is not
// looked up once the better ones have found maxSearchResults issuers that
// keep accepts: a later class could only rank below them.
func searchCompanies(ds *engine.Dataset, in *dsInfo, text string, keep func(*engine.Issuer) bool) []*engine.Issuer {
	q := fold(text)
	iss := ds.Issuers()
	ix := in.search()
	rank := make(map[*engine.Issuer]int)
	kept := 0 // issuers in rank that keep accepts
	better := func(is *engine.Issuer, r int) {
		old, ok := rank[is]
		if !ok {
			if keep(is) {
				kept++
			}
		} else if r >= old {
			return
		}
		rank[is] = r
	}
	matchTickers(ds, q, rank, better)
	for _, i := range ix.symbols[foldCase(q)] {
		better(&iss[i], matchSymbol)
	}
	if strings.IndexByte(q, 0) < 0 { // else no name holds it
		for _, c := range [...]struct {
			sa []int32
			r  int
		}{{ix.byName, matchNameStart}, {ix.byWord, matchWordStart}} {
			if kept < maxSearchResults {
				ix.occurrences(c.sa, q, func(p int32) { better(&iss[ix.issuerAt(p)], c.r) })
			}
		}
		if kept < maxSearchResults && q != "" { // "" starts every name: found above
			for _, p := range ix.all.Lookup([]byte(q), -1) {
				better(&iss[ix.issuerAt(int32(p))], matchContains)
			}
		}
	}
	return ranked(rank, keep)
}

// matchTickers ranks the issuers with a ticker equal to q or starting with
// it (spaces ignored): the ordered ticker index answers by a range scan,
// however many tickers there are, stopping once rank holds
// 4*maxSearchResults issuers.
func matchTickers(ds *engine.Dataset, q string, rank map[*engine.Issuer]int, better func(*engine.Issuer, int)) {
	if t := strings.ReplaceAll(q, " ", ""); t != "" {
		ds.AssetsWithPrefix(t, func(ticker string, a *engine.Asset) bool {
			if a.Issuer != nil {
				if ticker == t {
					better(a.Issuer, matchTicker)
				} else {
					better(a.Issuer, matchTickerPrefix)
				}
			}
			return len(rank) < 4*maxSearchResults
		})
	}
}

// ranked returns the issuers of rank that keep accepts, best first: by
// match rank, then by the liquidity rank of their most liquid security
// (unknown last), then by company_id; at most maxSearchResults.
func ranked(rank map[*engine.Issuer]int, keep func(*engine.Issuer) bool) []*engine.Issuer {
	out := make([]*engine.Issuer, 0, len(rank))
	for is := range rank {
		if keep(is) {
			out = append(out, is)
		}
	}
	liq := func(is *engine.Issuer) int {
		best := int(^uint(0) >> 1)
		for _, a := range is.Assets {
			if r := a.LiquidityRank; r > 0 && r < best {
				best = r
			}
		}
		return best
	}
	slices.SortFunc(out, func(x, y *engine.Issuer) int {
		return cmp.Or(cmp.Compare(rank[x], rank[y]), cmp.Compare(liq(x), liq(y)), strings.Compare(x.ID, y.ID))
	})
	if len(out) > maxSearchResults {
		out = out[:maxSearchResults]
	}
	return out
}
