package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// Listed funds (additions): GET /traded-funds lists the FIIs and ETFs of
// the snapshot, filtered and paged; GET /traded-funds/{fundIdentifier} is
// one fund's detail with the latest point of each of its indicators.

const (
	routeFunds = "/traded-funds"
	routeFund  = "/traded-funds/:fundIdentifier"
)

var fundKinds = []string{engine.KindFII, engine.KindETF}

// fundListParams are the query parameters of GET /traded-funds.
var fundListParams = []Param{
	{Name: "kind", In: InQuery, Type: TypeEnum, Enum: fundKinds, Fold: true, Desc: "keep funds of this kind: FII (real-estate funds) or ETF, matched ignoring case (default both)"},
	{Name: "sector", In: InQuery, Type: TypeString, Example: "REAL_ESTATE_FUNDS",
		Desc: "keep funds classified under this sector id, of any level (see /sectors), matched ignoring case"},
	{Name: "status", In: InQuery, Type: TypeEnum, Enum: companyStatuses, Default: "ACTIVE", Fold: true,
		Desc: "registry status to list: ACTIVE (and funds of unknown status), CANCELLED, SUSPENDED or ALL"},
	{Name: "search", In: InQuery, Type: TypeString,
		Desc: "find funds by ticker, symbol, trading name or name, ignoring case and accents; ranked, at most 50"},
	showSector, listLimit, listOffset,
}

// fundsList serves GET /traded-funds: the listed funds by company_id (a
// search: ranked), with their tickers.
func (a *API) fundsList(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	kind := q.enum("kind")
	sector := strings.ToUpper(strings.TrimSpace(q.str("sector")))
	st := statusIndex(q.enum("status"))
	search := searchText(&q)
	sec := q.boolean("show_sector")
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	if sector != "" {
		if _, ok := c.ds.Sector(sector); !ok {
			return nil, badRequest("query parameter sector: unknown sector id %q (see /sectors)", sector)
		}
	}
	keep := func(is *engine.Issuer) bool {
		return is.IsFund() && (kind == "" || is.Kind == kind) && listed(is.Status, st) &&
			(sector == "" || slices.ContainsFunc(is.Sector[:], func(s *engine.Sector) bool { return s != nil && s.ID == sector }))
	}
	enc := func(dst []byte, is *engine.Issuer) []byte { return appendFundItem(dst, is, sec) }
	if search != "" {
		found := searchCompanies(c.ds, a.info(c.ds), search, keep)
		return appendWindow(c, dst, slices.Values(found), func(*engine.Issuer) bool { return true }, w, enc), nil
	}
	iss := c.ds.Issuers()
	seq := func(yield func(*engine.Issuer) bool) {
		for i := range iss {
			if !yield(&iss[i]) {
				return
			}
		}
	}
	return appendWindow(c, dst, seq, keep, w, enc), nil
}

// appendFundItem appends a fund of the list: its registry data, kind and
// tickers, and with sec its taxonomy blocks.
func appendFundItem(dst []byte, is *engine.Issuer, sec bool) []byte {
	dst = append(dst, `{"company_id":`...)
	dst = appendString(dst, is.ID)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, is.Name)
	dst = append(dst, `,"trading_name":`...)
	dst = appendString(dst, is.TradingName)
	dst = append(dst, `,"symbol":`...)
	dst = appendStringOrNull(dst, is.Symbol)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, is.Kind)
	dst = append(dst, `,"status":`...)
	dst = appendStringOrNull(dst, is.Status)
	dst = append(dst, `,"status_date":`...)
	dst = appendDate(dst, is.StatusDate)
	dst = appendTickers(dst, is)
	if sec {
		dst = appendSectorBlocks(dst, is)
	}
	return append(dst, '}')
}

// fundDetail serves GET /traded-funds/:fundIdentifier: the fund's list
// item with its taxonomy blocks, description and website, and the latest
// point (by reference date, then publication) of each of its indicators
// and frequencies, in catalog order.
func (a *API) fundDetail(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	if q := c.query(r); q.err() != nil {
		return nil, q.err()
	}
	res, err := resolveFund(c.ds, ps.ByName(pathFundID.Name))
	if err != nil {
		return nil, err
	}
	is := res.Issuer
	dst = appendFundItem(dst, is, true)
	dst = dst[:len(dst)-1]
	dst = append(dst, `,"description":`...)
	dst = appendStringOrNull(dst, is.Description)
	dst = append(dst, `,"website":`...)
	dst = appendStringOrNull(dst, is.Website)
	dst = append(dst, `,"indicators":[`...)
	cat := c.ds.Catalog()
	n := 0
	if err := a.checkCompany(c, is); err != nil {
		return nil, err
	}
	fs := is.FundRatios()
	for i := range fs {
		s := &fs[i]
		if len(s.Points) == 0 || int(s.Indicator) >= len(cat) {
			continue
		}
		p := &s.Points[len(s.Points)-1]
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, cat[s.Indicator].ID)
		dst = append(dst, `,"frequency":`...)
		dst = appendString(dst, s.Frequency)
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, p.Value)
		dst = append(dst, `,"reference_date":`...)
		dst = appendDateISO(dst, p.ReferenceDate)
		dst = append(dst, `,"publish_date":`...)
		dst = appendTime(dst, p.PublishDate.Time())
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}
