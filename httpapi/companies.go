package httpapi

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// resolveCompany resolves a companyIdentifier to a company (404 when the
// identifier is unknown or is a macro series).
func resolveCompany(ds *engine.Dataset, id string) (engine.Resolved, error) {
	res, err := ds.Resolve(id)
	if err != nil {
		if errors.Is(err, engine.ErrInvalid) {
			return res, badRequest("company identifier %q: want a ticker, symbol or company_id", id)
		}
		return res, notFound("company %q not found", id)
	}
	if res.Issuer == nil {
		return res, notFound("company %q not found", id)
	}
	return res, nil
}

// resolveFund resolves a fundIdentifier to a listed fund (400 for an
// identifier of no known form, 404 when unknown).
func resolveFund(ds *engine.Dataset, id string) (engine.Resolved, error) {
	res, err := ds.ResolveFund(id)
	if err != nil {
		if errors.Is(err, engine.ErrInvalid) {
			return res, badRequest("fund identifier %q: want a ticker, symbol or company_id", id)
		}
		return res, notFound("fund %q not found", id)
	}
	return res, nil
}

var sectorKeys = [4]string{"sector", "industry_group", "industry", "subindustry"}

// company serves GET /companies/:id. Optional blocks are absent (not null)
// when their flag is absent or false.
func (a *API) company(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	marketCap := q.boolean("show_market_cap")
	logo := q.boolean("show_logo")
	details := q.boolean("show_company_details")
	sector := q.boolean("show_sector")
	asOf := q.asOf(c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	is := res.Issuer
	dst = append(dst, '{')
	dst = appendCompanyCoreAt(dst, is, asOf)
	dst = append(dst, `,"description":`...)
	dst = appendString(dst, is.Description)
	dst = append(dst, `,"ceo_name":`...)
	dst = appendStringOrNull(dst, is.CEOName)
	dst = append(dst, `,"employee_count":`...)
	if is.Employees < 0 {
		dst = append(dst, "null"...)
	} else {
		dst = appendInt(dst, is.Employees)
	}
	dst = append(dst, `,"free_float":{"value":`...)
	dst = appendNum(dst, is.FreeFloat)
	dst = append(dst, `,"format":"PERCENTAGE"}`...)
	dst = append(dst, `,"characteristics":[`...)
	for i, ch := range is.Characteristics {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, ch.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, ch.Name)
		dst = append(dst, `,"type":`...)
		dst = appendString(dst, ch.Type)
		dst = append(dst, `,"description":`...)
		dst = appendString(dst, ch.Description)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if sector {
		dst = appendSectorBlocks(dst, is)
	}
	if marketCap {
		if err := a.checkCompany(c, is); err != nil {
			return nil, err
		}
		dst = appendMarketCap(dst, c.ds, is, asOf, a.valuer(c))
	}
	if logo {
		dst = append(dst, `,"logo":`...)
		dst = appendImages(dst, is.LogoURL, "logo")
		dst = append(dst, `,"icon":`...)
		dst = appendImages(dst, is.LogoURL, "icon")
	}
	if details {
		dst = append(dst, `,"website":`...)
		dst = appendStringOrNull(dst, is.Website)
		ad := &is.Address
		dst = append(dst, `,"address":{"line1":`...)
		dst = appendString(dst, ad.Line1)
		dst = append(dst, `,"line2":`...)
		dst = appendString(dst, ad.Line2)
		dst = append(dst, `,"city":`...)
		dst = appendString(dst, ad.City)
		dst = append(dst, `,"state":`...)
		dst = appendString(dst, ad.State)
		dst = append(dst, `,"postal_code":`...)
		dst = appendString(dst, ad.PostalCode)
		dst = append(dst, `,"country":`...)
		dst = appendString(dst, ad.Country)
		dst = append(dst, `},"founding_date":`...)
		dst = appendDate(dst, is.FoundingDate)
		dst = append(dst, `,"ipo_date":`...)
		dst = appendDate(dst, is.IPODate)
	}
	return append(dst, '}'), nil
}

// appendCompanyCore appends the identity and share-count fields (no braces).
func appendCompanyCore(dst []byte, is *engine.Issuer) []byte {
	return appendCompanyCoreAt(dst, is, time.Time{})
}

// appendCompanyCoreAt is appendCompanyCore with the share counts known at
// asOf (the latest ones when zero).
func appendCompanyCoreAt(dst []byte, is *engine.Issuer, asOf time.Time) []byte {
	dst = append(dst, `"company_id":`...)
	dst = appendString(dst, is.ID)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, is.Name)
	dst = append(dst, `,"trading_name":`...)
	dst = appendString(dst, is.TradingName)
	dst = append(dst, `,"symbol":`...)
	dst = appendStringOrNull(dst, is.Symbol)
	dst = append(dst, `,"status":`...)
	dst = appendStringOrNull(dst, is.Status)
	dst = append(dst, `,"status_date":`...)
	dst = appendDate(dst, is.StatusDate)
	sh, ok := is.LatestShares()
	if !asOf.IsZero() {
		sh, ok = is.SharesAt(asOf)
	}
	if ok {
		dst = append(dst, `,"common_shares":`...)
		dst = appendInt(dst, sh.Common)
		dst = append(dst, `,"preferred_shares":`...)
		dst = appendInt(dst, sh.Preferred)
		dst = append(dst, `,"total_shares":`...)
		dst = appendInt(dst, sh.Common+sh.Preferred)
	} else {
		dst = append(dst, `,"common_shares":null,"preferred_shares":null,"total_shares":null`...)
	}
	return dst
}

// appendSectorBlocks appends the four taxonomy blocks {id, name} (null when
// the level is unknown).
func appendSectorBlocks(dst []byte, is *engine.Issuer) []byte {
	for l, key := range sectorKeys {
		dst = append(dst, ',')
		dst = appendKey(dst, key)
		s := is.Sector[l]
		if s == nil {
			dst = append(dst, "null"...)
			continue
		}
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, s.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, s.Name)
		dst = append(dst, '}')
	}
	return dst
}

// latestValue returns the latest company-level value of a valuation
// indicator of ds's catalog (latest reference_date, then publish_date),
// Null when none; with a non-zero asOf, the latest known then
// (engine.LatestKnown).
//
// sv, with asOf, is the valuation at the last session before it: its
// point stands for the TTM series' (SessionValuation.Latest). A cut
// other than 0 leaves out the points of that session and later ones
// (valuationCut).
func latestValue(ds *engine.Dataset, is *engine.Issuer, id string, asOf time.Time, sv *engine.SessionValuation, cut engine.Date) engine.Num {
	i, ok := ds.IndicatorIndex(engine.IndValuation, id)
	if !ok {
		return engine.Null
	}
	k := uint16(i)
	best := (*engine.RatioPoint)(nil)
	for _, f := range []string{engine.FreqTTM, engine.FreqDaily, engine.FreqAnnual, engine.FreqQuarterly} {
		g := is.RatioGroup(k, "", f)
		if g == nil || len(g.Points) == 0 {
			continue
		}
		// Points are in reference_date, then publish_date order: a
		// series' latest is its last point.
		last := len(g.Points) - 1
		if !asOf.IsZero() {
			if last = engine.LatestKnown(g.Points, g.KnownFrom, asOf); last < 0 {
				continue
			}
		}
		for cut != 0 && last >= 0 && g.Points[last].ReferenceDate >= cut {
			last--
		}
		if last < 0 {
			continue
		}
		p := &g.Points[last]
		if f == engine.FreqTTM && sv != nil {
			if q := sv.Latest(p, k, ""); cut == 0 || q.ReferenceDate < cut {
				p = q
			}
		}
		if best == nil || p.ReferenceDate > best.ReferenceDate || (p.ReferenceDate == best.ReferenceDate && p.PublishDate.Compare(best.PublishDate) > 0) {
			best = p
		}
	}
	if best == nil {
		return engine.Null
	}
	return best.Value
}

// appendMarketCap appends market_cap and enterprise_value {value, format},
// at the session the key's quote view shows when ev is not nil (valuer:
// while that view leaves out the Dataset's last session).
func appendMarketCap(dst []byte, ds *engine.Dataset, is *engine.Issuer, asOf time.Time, ev *valuer) []byte {
	var sv *engine.SessionValuation
	if !asOf.IsZero() {
		sv = ds.SessionValuationAt(is, asOf)
	} else {
		sv = ev.marketCap(ds, is)
	}
	cut := ev.cutDate()
	dst = append(dst, `,"market_cap":{"value":`...)
	dst = appendNum(dst, latestValue(ds, is, "MARKET_CAP", asOf, sv, cut))
	dst = append(dst, `,"format":"BRL"},"enterprise_value":{"value":`...)
	dst = appendNum(dst, latestValue(ds, is, "ENTERPRISE_VALUE", asOf, sv, cut))
	return append(dst, `,"format":"BRL"}`...)
}

// imageSizes are the PNG widths of logos and icons.
var imageSizes = []string{"1024", "512", "256", "128", "64"}

// appendImages appends {svg, png_1024 ... png_64} derived from the logo base
// address: <base>/<kind>.svg and <base>/<kind>_<size>.png; null without a base.
func appendImages(dst []byte, base, kind string) []byte {
	if base == "" {
		return append(dst, "null"...)
	}
	base = strings.TrimRight(base, "/")
	dst = append(dst, `{"svg":`...)
	dst = appendString(dst, base+"/"+kind+".svg")
	for _, s := range imageSizes {
		dst = append(dst, `,"png_`...)
		dst = append(dst, s...)
		dst = append(dst, `":`...)
		dst = appendString(dst, base+"/"+kind+"_"+s+".png")
	}
	return append(dst, '}')
}

// companies serves GET /companies: Brazilian companies (kind COMPANY), plus
// BDR issuers with bdr=true, sorted by company_id. The answer depends only
// on the Dataset and the flags, so each flag set is encoded once per
// Dataset.
func (a *API) companies(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	bdr := q.boolean("bdr")
	sec := q.boolean("show_sector")
	mc := q.boolean("show_market_cap")
	st := statusIndex(q.enum("status"))
	search := searchText(&q)
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	var mcCut *valuer // the market caps of the key's view (nil: the Dataset's)
	if mc {
		mcCut = a.valuer(c)
	}
	if search != "" {
		found := searchCompanies(c.ds, a.info(c.ds), search, func(is *engine.Issuer) bool {
			return (is.Kind == engine.KindCompany || is.Kind == engine.KindBDR || is.IsFund()) && listed(is.Status, st)
		})
		return appendWindow(c, dst, slices.Values(found), func(*engine.Issuer) bool { return true }, w,
			func(dst []byte, is *engine.Issuer) []byte { return appendCompanyItem(dst, c.ds, is, sec, mc, mcCut) }), nil
	}
	if !w.all() {
		keep := companyFilter(bdr, st)
		iss := c.ds.Issuers()
		seq := func(yield func(*engine.Issuer) bool) {
			for i := range iss {
				if !yield(&iss[i]) {
					return
				}
			}
		}
		return appendWindow(c, dst, seq, keep, w,
			func(dst []byte, is *engine.Issuer) []byte { return appendCompanyItem(dst, c.ds, is, sec, mc, mcCut) }), nil
	}
	if mcCut != nil {
		// Not the list every key shares: the list of the view the
		// market caps are priced at, made once per view (one a day for
		// the eod plan) and shared by the keys that see it.
		slot := &a.info(c.ds).cutCompanies[companiesSlot(bdr, sec, mc)*len(companyStatuses)+st]
		k := cutKey(c, mcCut.cut)
		cl := slot.Load()
		if cl == nil || cl.key != k {
			raw, n := appendCompanies(nil, c.ds, companyFilter(bdr, st), sec, mc, mcCut)
			cl = &cutList{key: k, a: &cachedAnswer{raw: raw, total: []string{strconv.Itoa(n)}}}
			slot.Store(cl)
		}
		c.out.cached = cl.a
		c.sendTotal(cl.a.total)
		return dst, nil
	}
	slot := &a.info(c.ds).companies[companiesSlot(bdr, sec, mc)*len(companyStatuses)+st]
	return cachedList(c, dst, slot, func(dst []byte) ([]byte, int) {
		return appendCompanies(dst, c.ds, companyFilter(bdr, st), sec, mc, nil)
	}), nil
}

// companyFilter keeps the issuers GET /companies lists: Brazilian
// companies (and BDR issuers with bdr) of status filter st.
func companyFilter(bdr bool, st int) func(*engine.Issuer) bool {
	return func(is *engine.Issuer) bool {
		return (is.Kind == engine.KindCompany || bdr && is.Kind == engine.KindBDR) && listed(is.Status, st)
	}
}

// companyStatuses are the values of GET /companies?status=; statusAll
// lists every company.
var companyStatuses = []string{"ACTIVE", "CANCELLED", "SUSPENDED", "ALL"}

const statusAll = 3

// statusIndex is the index of s in companyStatuses (0 when absent).
func statusIndex(s string) int {
	for i, v := range companyStatuses {
		if v == s {
			return i
		}
	}
	return 0
}

// listed reports whether a company of registry status s is listed by the
// status filter st: ACTIVE lists the companies of unknown status too (the
// registry did not say they left).
func listed(s string, st int) bool {
	switch st {
	case statusAll:
		return true
	case 0:
		return s == "ACTIVE" || s == ""
	}
	return s == companyStatuses[st]
}

// companiesSlot numbers the flag sets of GET /companies.
func companiesSlot(bdr, sec, mc bool) int {
	i := 0
	for k, f := range [3]bool{bdr, sec, mc} {
		if f {
			i |= 1 << k
		}
	}
	return i
}

// appendCompanies appends the companies list: Brazilian companies, plus
// BDR issuers when bdr is set, with the sector blocks when sec is set and
// market_cap/enterprise_value when mc is set (at the session of the
// key's view with ev, valuer; nil: the latest).
func appendCompanies(dst []byte, ds *engine.Dataset, keep func(*engine.Issuer) bool, sec, mc bool, ev *valuer) ([]byte, int) {
	dst = append(dst, '[')
	n := 0
	iss := ds.Issuers()
	for i := range iss {
		is := &iss[i]
		if !keep(is) {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendCompanyItem(dst, ds, is, sec, mc, ev)
	}
	return append(dst, ']'), n
}

// appendCompanyItem appends one item of the companies list.
func appendCompanyItem(dst []byte, ds *engine.Dataset, is *engine.Issuer, sec, mc bool, ev *valuer) []byte {
	dst = append(dst, '{')
	dst = appendCompanyCore(dst, is)
	dst = append(dst, `,"kind":`...)
	dst = appendString(dst, is.Kind)
	dst = appendTickers(dst, is)
	if sec {
		dst = appendSectorBlocks(dst, is)
	}
	if mc {
		dst = appendMarketCap(dst, ds, is, time.Time{}, ev)
	}
	return append(dst, '}')
}

// sharesHistory serves GET /companies/:id/shares-history: the share counts,
// newest first.
func (a *API) sharesHistory(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	from, to := q.dayRange()
	pg := pager{w: readWindow(&q)}
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	dst = append(dst, '[')
	n := 0
	for _, s := range res.Issuer.Shares {
		if from.Valid() && s.Date < from || to.Valid() && s.Date > to || !pg.take() {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"date":`...)
		dst = appendDateISO(dst, s.Date)
		dst = append(dst, `,"common_shares":`...)
		dst = appendInt(dst, s.Common)
		dst = append(dst, `,"preferred_shares":`...)
		dst = appendInt(dst, s.Preferred)
		dst = append(dst, '}')
	}
	c.setTotal(pg.total)
	return append(dst, ']'), nil
}

// monthBounds returns the first and last day of the month "YYYY-MM".
func monthBounds(s string) (first, last engine.Date, ok bool) {
	d, err := engine.ParseDate(s + "-01")
	if err != nil || len(s) != 7 {
		return engine.NoDate, engine.NoDate, false
	}
	t := d.Time()
	return d, engine.DateOf(t.AddDate(0, 1, -1)), true
}

// appendSources appends a JSON array of source objects.
func appendSources(dst []byte, ss []engine.Source) []byte {
	dst = append(dst, '[')
	for i := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendSource(dst, &ss[i])
	}
	return append(dst, ']')
}

// appendSource appends one source object (download_url null when absent).
func appendSource(dst []byte, s *engine.Source) []byte {
	dst = append(dst, `{"visualization_url":`...)
	dst = appendURL(dst, s.VisualizationURL)
	dst = append(dst, `,"download_url":`...)
	dst = appendURLOrNull(dst, s.DownloadURL)
	dst = append(dst, `,"published_at":`...)
	dst = appendTime(dst, s.PublishedAt)
	dst = append(dst, `,"retrieved_at":`...)
	dst = appendTime(dst, s.RetrievedAt)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, s.Name)
	return append(dst, '}')
}

// insider serves GET /companies/:id/insider-transactions: the monthly
// insider-trading reports (newest reference month first), filtered like
// raw reports.
func (a *API) insider(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	agg := q.enum("aggregation")
	start, end := q.dayRange()
	pub := q.timestamp("publish_date")
	ret := q.timestamp("retrieval_date")
	if m := q.str("month"); m != "" {
		first, last, ok := monthBounds(m)
		if !ok {
			q.fail(badRequest("query parameter month: %q: want YYYY-MM", m))
		}
		start, end = max(start, first), last
		if e := q.date("end_date"); e.Valid() {
			end = min(end, e)
		}
	}
	trade := q.enum("trade")
	group := strings.ToUpper(strings.TrimSpace(q.str("group_id")))
	pg := pager{w: readWindow(&q)}
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	movePass := func(m *engine.InsiderMove) bool {
		if res.Kind == engine.ByTicker && m.Ticker != "" && m.Ticker != res.Asset.Ticker && m.StockType != res.Class {
			return false
		}
		return (trade == "" || m.Operation == trade) && (group == "" || m.Group == group)
	}
	dst = append(dst, '[')
	n := 0
	rs := res.Issuer.Insider()
	for i := len(rs) - 1; i >= 0; i-- {
		ir := rs[i]
		if agg != "" && ir.Aggregation != agg ||
			start.Valid() && ir.ReferenceDate < start || end.Valid() && ir.ReferenceDate > end ||
			!pub.IsZero() && !ir.PublishDate.After(pub) || !ret.IsZero() && !ir.RetrievalDate.After(ret) {
			continue
		}
		if (trade != "" || group != "") && !slices.ContainsFunc(ir.Movements, func(m engine.InsiderMove) bool { return movePass(&m) }) {
			continue // the movement filters leave the report empty
		}
		if !pg.take() {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"reference_date":`...)
		dst = appendDateISO(dst, ir.ReferenceDate)
		dst = append(dst, `,"aggregation":`...)
		dst = appendString(dst, ir.Aggregation)
		dst = append(dst, `,"version":`...)
		dst = appendInt(dst, int64(ir.Version))
		dst = append(dst, `,"publish_date":`...)
		dst = appendTime(dst, ir.PublishDate)
		dst = append(dst, `,"retrieval_date":`...)
		dst = appendTime(dst, ir.RetrievalDate)
		dst = append(dst, `,"movements":[`...)
		for j := range ir.Movements {
			m := &ir.Movements[j]
			if !movePass(m) {
				continue
			}
			if dst[len(dst)-1] != '[' {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"group":`...)
			dst = appendString(dst, m.Group)
			dst = append(dst, `,"operation":`...)
			dst = appendString(dst, m.Operation)
			dst = append(dst, `,"ticker":`...)
			dst = appendStringOrNull(dst, m.Ticker)
			dst = append(dst, `,"stock_type":`...)
			dst = appendStringOrNull(dst, m.StockType)
			dst = append(dst, `,"date":`...)
			dst = appendDateISO(dst, m.Date)
			dst = append(dst, `,"quantity":`...)
			dst = appendInt(dst, m.Quantity)
			dst = append(dst, `,"price":`...)
			dst = appendNum(dst, m.Price)
			dst = append(dst, `,"volume":`...)
			dst = appendNum(dst, m.Volume)
			dst = append(dst, '}')
		}
		dst = append(dst, `],"sources":`...)
		dst = appendSources(dst, ir.Sources)
		dst = append(dst, '}')
	}
	c.setTotal(pg.total)
	return append(dst, ']'), nil
}

// documents serves GET /companies/:id/documents: regulatory documents,
// newest publication first, with limit (1..500, default 100) and offset.
func (a *API) documents(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	cat := q.str("category")
	start, end := q.dayRange()
	pub := q.timestamp("publish_date")
	pg := pager{w: readWindow(&q)}
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	dst = append(dst, '[')
	n := 0
	for _, d := range res.Issuer.Documents() {
		pd := engine.DateOf(d.PublishDate)
		if cat != "" && !strings.EqualFold(d.Category, cat) ||
			start.Valid() && pd < start || end.Valid() && pd > end ||
			!pub.IsZero() && !d.PublishDate.After(pub) || !pg.take() {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, d.ID)
		dst = append(dst, `,"category":`...)
		dst = appendString(dst, d.Category)
		dst = append(dst, `,"type":`...)
		dst = appendString(dst, d.Type)
		dst = append(dst, `,"title":`...)
		dst = appendString(dst, d.Title)
		dst = append(dst, `,"reference_date":`...)
		dst = appendDateISO(dst, d.ReferenceDate)
		dst = append(dst, `,"publish_date":`...)
		dst = appendTime(dst, d.PublishDate)
		dst = append(dst, `,"retrieval_date":`...)
		dst = appendTime(dst, d.RetrievalDate)
		dst = append(dst, `,"version":`...)
		dst = appendInt(dst, int64(d.Version))
		dst = append(dst, `,"source":`...)
		dst = appendSource(dst, &d.Source)
		dst = append(dst, '}')
	}
	c.setTotal(pg.total)
	return append(dst, ']'), nil
}

// appendTickers appends ,"tickers":[{"ticker":…,"stock_type":…},…] of
// the issuer's assets (companies and funds alike).
func appendTickers(dst []byte, is *engine.Issuer) []byte {
	dst = append(dst, `,"tickers":[`...)
	for j, as := range is.Assets {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"ticker":`...)
		dst = appendString(dst, as.Ticker)
		dst = append(dst, `,"stock_type":`...)
		dst = appendString(dst, as.StockType)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
