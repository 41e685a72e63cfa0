package httpapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// indexList serves GET /indexes (addition): every index of the snapshot,
// by symbol, with its portfolio date and member count.
func (a *API) indexList(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	pg := pager{w: readWindow(&q)}
	if q.err() != nil {
		return nil, q.err()
	}
	ixs := c.ds.Indexes()
	dst = append(dst, '[')
	n := 0
	for i := range ixs {
		if !pg.take() {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(appendIndexHead(dst, c.ds, &ixs[i]), '}')
	}
	c.setTotal(pg.total)
	return append(dst, ']'), nil
}

// indexPortfolio serves GET /indexes/:symbol (addition): the portfolio of
// the index, its reductor (BRL per index point, the source's digits; null
// when the source has none) and the members by weight descending (ties by
// ticker), each with its weight (a fraction, 0..1), theoretical quantity
// (shares) and company.
func (a *API) indexPortfolio(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	ix, err := findIndex(c.ds, ps.ByName("symbol"))
	if err != nil {
		return nil, err
	}
	order := make([]int, len(ix.Index.Members))
	for i := range order {
		order[i] = i
	}
	w := func(i int) float64 {
		if v := ix.Index.Members[i].Weight; v.Valid() {
			return float64(v)
		}
		return -1 // unknown weights last
	}
	slices.SortFunc(order, func(x, y int) int {
		if c := cmp.Compare(w(y), w(x)); c != 0 {
			return c
		}
		return strings.Compare(ix.Index.Members[x].Ticker, ix.Index.Members[y].Ticker)
	})
	dst = appendIndexHead(dst, c.ds, ix)
	dst = append(dst, `,"reductor":`...)
	dst = appendNum(dst, ix.Reductor)
	dst = append(dst, `,"members":[`...)
	for k, i := range order {
		m := &ix.Index.Members[i]
		if k > 0 {
			dst = append(dst, ',')
		}
		var as *engine.Asset
		if i < len(ix.Members) {
			as = ix.Members[i]
		}
		dst = append(dst, `{"ticker":`...)
		if as != nil {
			dst = appendString(dst, as.Ticker) // the current ticker of a renamed member
		} else {
			dst = appendString(dst, m.Ticker)
		}
		dst = append(dst, `,"company_id":`...)
		if as != nil {
			dst = appendStringOrNull(dst, as.CompanyID)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"weight":`...)
		dst = appendNum(dst, m.Weight)
		dst = append(dst, `,"theoretical_quantity":`...)
		dst = appendNum(dst, m.TheoreticalQty)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}

// appendIndexHead appends `{"symbol":…,"name":…,"portfolio_date":…,
// "portfolio_after_as_of":…,"member_count":…` (the object left open).
func appendIndexHead(dst []byte, ds *engine.Dataset, ix *engine.IndexData) []byte {
	dst = append(dst, `{"symbol":`...)
	dst = appendString(dst, ix.Symbol)
	dst = append(dst, `,"name":`...)
	dst = appendStringOrNull(dst, ix.Name)
	dst = append(dst, `,"portfolio_date":`...)
	dst = appendDateISO(dst, ix.AsOf)
	dst = append(dst, `,"portfolio_after_as_of":`...)
	dst = strconv.AppendBool(dst, portfolioAfterAsOf(ds, ix))
	dst = append(dst, `,"member_count":`...)
	return appendInt(dst, int64(len(ix.Index.Members)))
}

// portfolioAfterAsOf reports whether ix's portfolio is dated after the
// snapshot's as-of day: the files held no portfolio of then (an import
// serves the earliest one after it), so it is not the index's
// composition at the data's date.
func portfolioAfterAsOf(ds *engine.Dataset, ix *engine.IndexData) bool {
	asOf := ds.AsOf()
	return !asOf.IsZero() && ix.AsOf.Valid() && ix.AsOf > engine.SaoPauloDay(asOf)
}

// findIndex returns the index of symbol (matched ignoring case), or a 404
// naming the snapshot's indexes.
func findIndex(ds *engine.Dataset, sym string) (*engine.IndexData, error) {
	if ix, ok := ds.Index(sym); ok {
		return ix, nil
	}
	var names []string
	for _, x := range ds.Indexes() {
		names = append(names, x.Symbol)
	}
	return nil, notFound("index %q not found (indexes: %s)", sym, strings.Join(names, ", "))
}
