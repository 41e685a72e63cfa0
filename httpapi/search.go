package httpapi

import (
	"cmp"
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

// fold upper-cases s and removes its accents ("Petróleo" -> "PETROLEO").
func fold(s string) string {
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		out = s
	}
	return strings.ToUpper(strings.Join(strings.Fields(out), " "))
}

// searchIndex is the folded names of a Dataset's issuers, computed once per
// Dataset on the first search.
type searchIndex struct {
	once  sync.Once
	names [][2]string // [trading name, name] folded, parallel to Issuers()
}

func (in *dsInfo) search() *searchIndex {
	s := &in.searchIx
	s.once.Do(func() {
		iss := in.ds.Issuers()
		s.names = make([][2]string, len(iss))
		for i := range iss {
			s.names[i] = [2]string{fold(iss[i].TradingName), fold(iss[i].Name)}
		}
	})
	return s
}

// nameMatch ranks how the folded text q matches the folded name n.
func nameMatch(n, q string) int {
	if n == "" {
		return noMatch
	}
	i := strings.Index(n, q)
	switch {
	case i < 0:
		return noMatch
	case i == 0:
		return matchNameStart
	}
	for ; i >= 0; i = nextIndex(n, q, i) {
		if n[i-1] == ' ' {
			return matchWordStart
		}
	}
	return matchContains
}

// nextIndex returns the index of q in n after the one at i, or -1.
func nextIndex(n, q string, i int) int {
	j := strings.Index(n[i+1:], q)
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// searchCompanies returns the issuers matching text among those keep
// accepts, best first: by match rank, then by the liquidity rank of their
// most liquid security (unknown last), then by company_id; at most
// maxSearchResults.
func searchCompanies(ds *engine.Dataset, in *dsInfo, text string, keep func(*engine.Issuer) bool) []*engine.Issuer {
	q := fold(text)
	iss := ds.Issuers()
	rank := make(map[*engine.Issuer]int)
	better := func(is *engine.Issuer, r int) {
		if old, ok := rank[is]; !ok || r < old {
			rank[is] = r
		}
	}
	// Tickers: the ordered ticker index answers exact and prefix matches
	// by a range scan, however many tickers there are.
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
	names := in.search().names
	for i := range iss {
		is := &iss[i]
		if is.Symbol != "" && strings.EqualFold(is.Symbol, q) {
			better(is, matchSymbol)
		}
		if r := min(nameMatch(names[i][0], q), nameMatch(names[i][1], q)); r < noMatch {
			better(is, r)
		}
	}
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
