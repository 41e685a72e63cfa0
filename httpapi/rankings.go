package httpapi

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// Rankings limit: default 10, at most MaxRankingLimit (a 400 beyond).
const (
	defaultRankingLimit = 10
	MaxRankingLimit     = 100
)

func (a *API) indexHighs(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	return a.indexRanking(c, dst, r, ps, false)
}

func (a *API) indexLows(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	return a.indexRanking(c, dst, r, ps, true)
}

// indexRanking serves GET /indexes/:symbol/highs and /lows.
func (a *API) indexRanking(c *call, dst []byte, r *http.Request, ps httprouter.Params, lows bool) ([]byte, error) {
	q := c.query(r)
	limit := q.integer("limit")
	if err := q.err(); err != nil {
		return nil, err
	}
	ix, err := findIndex(c.ds, ps.ByName("symbol"))
	if err != nil {
		return nil, err
	}
	v := a.view(c)
	var entries []engine.RankEntry
	switch {
	case v.qv != nil:
		pos := indexPos(c.ds.Indexes(), ix)
		entries = v.qv.highs[pos]
		if lows {
			entries = v.qv.lows[pos]
		}
	default: // a delayed cut-off without a cached view (eod views always are)
		c.s.ranks = ix.RankAt(time.Unix(v.cutoff, 0), lows, c.s.ranks[:0])
		entries = c.s.ranks
	}
	if len(entries) == 0 {
		return nil, notFound("index %q has no data", ix.Symbol)
	}
	at := updatedAt(entries) // of every ranked member, whatever the limit
	entries = entries[:min(limit, len(entries))]
	dst = append(dst, `{"updated_at":`...)
	dst = appendUnix(dst, at)
	dst = append(dst, `,"ranking":`...)
	dst = appendRanking(dst, entries)
	return append(dst, '}'), nil
}

// updatedAt returns the newest time up to which the entries' quotes are
// complete (engine.Quote.VisibleFrom) (0 when none): the
// updated_at of rankings and variations.
func updatedAt(es []engine.RankEntry) int64 {
	var t int64
	for i := range es {
		t = max(t, es[i].Quote.VisibleFrom())
	}
	return t
}

// sortRanks sorts entries by variation descending (highs) or ascending
// (lows, most negative first); ties by ticker.
func sortRanks(es []engine.RankEntry, lows bool) {
	slices.SortFunc(es, func(x, y engine.RankEntry) int {
		c := cmp.Compare(y.Quote.Variation, x.Quote.Variation)
		if lows {
			c = -c
		}
		if c != 0 {
			return c
		}
		return strings.Compare(x.Asset.Ticker, y.Asset.Ticker)
	})
}

// appendRanking appends entries as a JSON array of ranking entries.
func appendRanking(dst []byte, es []engine.RankEntry) []byte {
	dst = append(dst, '[')
	for i := range es {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRankEntry(dst, i+1, es[i].Asset.Ticker, &es[i].Quote, es[i].Asset.Currency)
	}
	return append(dst, ']')
}

// appendRankEntry appends one index ranking entry.
func appendRankEntry(dst []byte, pos int, ticker string, q *engine.Quote, currency string) []byte {
	dst = append(dst, `{"position":`...)
	dst = appendInt(dst, int64(pos))
	dst = append(dst, `,"ticker":`...)
	dst = appendString(dst, ticker)
	dst = append(dst, `,"close_price":`...)
	dst = appendNum(dst, q.Close)
	dst = append(dst, `,"variation":`...)
	dst = appendNum(dst, q.Variation)
	dst = append(dst, `,"variation_value":`...)
	dst = appendNum(dst, q.VariationValue)
	dst = append(dst, `,"highest_price":`...)
	dst = appendNum(dst, q.High)
	dst = append(dst, `,"lowest_price":`...)
	dst = appendNum(dst, q.Low)
	dst = append(dst, `,"negotiated_quantity":`...)
	dst = appendNum(dst, q.Quantity)
	dst = append(dst, `,"volume":`...)
	dst = appendNum(dst, q.Volume)
	dst = append(dst, `,"currency":`...)
	dst = appendStringOrNull(dst, currency)
	return append(dst, '}')
}

// moved returns the leading entries of es (sorted gains first for sign 1,
// losses first for -1) that moved that way, at most limit: a ticker that
// did not rise is no gainer, one that did not fall no loser.
func moved(es []engine.RankEntry, sign float64, limit int) []engine.RankEntry {
	n := 0
	for n < len(es) && n < limit && float64(es[n].Quote.Variation)*sign > 0 {
		n++
	}
	return es[:n]
}

// variations serves GET /stocks/variations: the gainers and losers of the
// last session the plan sees, among every listed ticker (macro series
// excluded), as ranking entries.
func (a *API) variations(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	limit := q.integer("limit")
	if err := q.err(); err != nil {
		return nil, err
	}
	v := a.view(c)
	var gain, lose []engine.RankEntry
	session := engine.NoDate
	if v.qv != nil {
		session = v.qv.session
		gain, lose = v.qv.gainers, v.qv.loser
	} else {
		assets := c.ds.Assets()
		session, c.s.ranks = appendMovers(c.s.ranks[:0], assets, func(i int) engine.Quote { return v.quote(&assets[i]) })
		sortRanks(c.s.ranks, false)
		gain = c.s.ranks
		lose = slices.Clone(c.s.ranks)
		sortRanks(lose, true)
	}
	at := updatedAt(gain)
	gain, lose = moved(gain, 1, limit), moved(lose, -1, limit)
	dst = append(dst, `{"session":`...)
	dst = appendDate(dst, session)
	dst = append(dst, `,"updated_at":`...)
	if at > 0 {
		dst = appendUnix(dst, at)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"gainers":`...)
	dst = appendRanking(dst, gain)
	dst = append(dst, `,"losers":`...)
	dst = appendRanking(dst, lose)
	return append(dst, '}'), nil
}
