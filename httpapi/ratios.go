package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

// ratioFilter is the validated parameters of the ratio endpoints.
type ratioFilter struct {
	ids       map[uint16][]string // indicator -> classes asked ("" = every class)
	freq      string
	refDate   engine.Date
	pub, ret  time.Time
	calc      bool
	latestRef bool
}

var companyFreqs = []string{engine.FreqQuarterly, engine.FreqAnnual, engine.FreqTTM, engine.FreqYTD}

func (a *API) ratiosFundamental(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	return a.companyRatios(c, dst, r, ps, engine.IndFundamental)
}

func (a *API) ratiosValuation(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	return a.companyRatios(c, dst, r, ps, engine.IndValuation)
}

// companyRatios serves the company ratio routes of kind (routeRatios:
// fundamental, routeValuation: valuation). Without frequency every
// frequency is returned; points are in reference_date then publish_date order.
func (a *API) companyRatios(c *call, dst []byte, r *http.Request, ps httprouter.Params, kind string) ([]byte, error) {
	q := c.query(r)
	f := ratioFilter{
		freq:      q.enum("frequency"),
		refDate:   q.date("reference_date"),
		pub:       q.timestamp("publish_date"),
		ret:       q.timestamp("retrieval_date"),
		calc:      q.boolean("show_calculation"),
		latestRef: q.boolean("latest_by_reference_date"),
	}
	ids := q.list("ids")
	asOf := q.asOf(c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	if f.calc {
		setCSVForm(c, csvRatios, csvRatiosCalc)
	}
	if ids != nil {
		f.ids = map[uint16][]string{}
		for _, id := range ids {
			base, class := engine.SplitClassSuffix(strings.ToUpper(id))
			k, ok := c.ds.IndicatorIndex(kind, base)
			if !ok {
				if _, other := c.ds.IndicatorIndex(otherKind(kind), base); other {
					return nil, badRequest("indicator %q is a %s indicator: use %s", id, strings.ToLower(otherKind(kind)), otherRoute(kind))
				}
				return nil, badRequest("unknown %s indicator id %q (see /ratios/catalog)", strings.ToLower(kind), id)
			}
			if class != "" && !c.ds.Catalog()[k].ByClass {
				return nil, badRequest("indicator id %q: %s is a company-level indicator, whose id takes no class suffix", id, base)
			}
			f.ids[uint16(k)] = append(f.ids[uint16(k)], class)
		}
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	if err := a.checkCompany(c, res.Issuer); err != nil {
		return nil, err
	}
	cat := c.ds.Catalog()
	byTicker := res.Kind == engine.ByTicker
	sel := engine.RatioFilter{Reference: f.refDate, PublishedAfter: f.pub, RetrievedAfter: f.ret, LatestByReference: f.latestRef, KnownAt: asOf}
	var sv *engine.SessionValuation
	var dyVars [2]engine.Num
	var staticRet engine.Stamp
	if !asOf.IsZero() && kind == engine.IndValuation {
		sv = c.ds.SessionValuationAt(res.Issuer, asOf)
		staticRet = c.ds.StaticRetrievalAt(asOf)
	}
	var cut engine.Date // no valuation at a session the key's view does not show
	if kind == engine.IndValuation {
		cut = a.valuationCut(c)
		if cut != 0 && asOf.IsZero() {
			// The TTM series end at the session the view shows instead.
			sv = a.valuer(c).valuation(c.ds, res.Issuer)
		}
	}
	dst = append(dst, '{')
	curKey := ""
	open := false // an id object is open
	for si := range res.Issuer.Ratios() {
		s := &res.Issuer.Ratios()[si]
		ind := &cat[s.Indicator]
		if ind.Kind != kind || f.freq != "" && s.Frequency != f.freq {
			continue
		}
		if byTicker && s.Class != "" && s.Class != res.Class {
			continue
		}
		if f.ids != nil {
			classes, ok := f.ids[s.Indicator]
			if !ok || !classOK(classes, s.Class) {
				continue
			}
		}
		key := ind.ID
		if !byTicker && s.Class != "" {
			key += engine.ClassSuffix(s.Class)
		}
		mark := len(dst)
		if key != curKey {
			if open {
				dst = append(dst, '}')
			}
			if dst[len(dst)-1] != '{' {
				dst = append(dst, ',')
			}
			dst = appendString(dst, key)
			dst = append(dst, ":{"...)
		} else {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s.Frequency)
		dst = append(dst, ":["...)
		n := 0
		sel.KnownFrom = s.KnownFrom
		// With as_of, a TTM valuation series ends at the last session
		// before it (sv): that point replaces the snapshot's own
		// last-session point, dated between the period and that session.
		sp, spVars := sv.Of(si)
		rule := c.ds.PriceRule(int(s.Indicator))
		dy := !asOf.IsZero() && rule.CountsCash()
		// A report-independent point (MARKET_CAP, DIVIDEND_YIELD) is
		// stamped with the snapshot's as-of time: at as_of, with the one
		// of a snapshot of then.
		static := !asOf.IsZero() && ind.Kind == engine.IndValuation && rule.Static()
		if sp != nil && (!sel.Keeps(sp) || cut != 0 && sp.ReferenceDate >= cut) {
			sp = nil
		}
		for pi := range engine.SelectRatioPoints(s.Points, &sel) {
			p := &s.Points[pi]
			if cut != 0 && p.ReferenceDate >= cut {
				continue
			}
			if sp != nil && p.ReferenceDate > sv.Base {
				if p.ReferenceDate <= sv.Session {
					continue
				}
				dst = appendRatioPointAt(dst, n, sp, spVars, ind, f.calc)
				n++
				sp = nil
			}
			if dy || static {
				q := *p
				vars := c.ds.RatioVars(p)
				if dy {
					// A quarter-end DIVIDEND_YIELD point counts the cash
					// versions current at as_of, not the latest ones.
					q.Value, vars = c.ds.DividendYieldAt(res.Issuer, p, vars, asOf, dyVars[:])
				}
				if static {
					q.RetrievalDate = staticRet
					if !f.ret.IsZero() && !staticRet.Time().After(f.ret) {
						continue // retrieval_date filters by the date answered
					}
				}
				dst = appendRatioPointAt(dst, n, &q, vars, ind, f.calc)
			} else {
				dst = appendRatioPointAt(dst, n, p, c.ds.RatioVars(p), ind, f.calc)
			}
			n++
		}
		if sp != nil {
			dst = appendRatioPointAt(dst, n, sp, spVars, ind, f.calc)
			n++
		}
		if n == 0 {
			dst = dst[:mark] // nothing kept: drop the frequency (and the new id)
			continue
		}
		dst = append(dst, ']')
		curKey, open = key, true
	}
	if open {
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

func classOK(classes []string, class string) bool {
	for _, c := range classes {
		if c == "" || c == class {
			return true
		}
	}
	return false
}

func otherKind(kind string) string {
	if kind == engine.IndFundamental {
		return engine.IndValuation
	}
	return engine.IndFundamental
}

func otherRoute(kind string) string {
	if kind == engine.IndFundamental {
		return "/companies/{companyIdentifier}/ratios/valuation"
	}
	return "/companies/{companyIdentifier}/ratios"
}

// appendRatioPointAt appends the n-th point of a list (a comma before
// all but the first).
func appendRatioPointAt(dst []byte, n int, p *engine.RatioPoint, vars []engine.Num, ind *engine.Indicator, calc bool) []byte {
	if n > 0 {
		dst = append(dst, ',')
	}
	return appendRatioPoint(dst, p, vars, ind, calc)
}

// appendRatioPoint appends one ratio point.
func appendRatioPoint(dst []byte, p *engine.RatioPoint, vars []engine.Num, ind *engine.Indicator, calc bool) []byte {
	dst = append(dst, `{"value":`...)
	dst = appendNum(dst, p.Value)
	dst = append(dst, `,"format":`...)
	dst = appendString(dst, ind.Format)
	dst = append(dst, `,"reference_date":`...)
	dst = appendDateISO(dst, p.ReferenceDate)
	dst = append(dst, `,"publish_date":`...)
	dst = appendTime(dst, p.PublishDate.Time())
	dst = append(dst, `,"retrieval_date":`...)
	dst = appendTime(dst, p.RetrievalDate.Time())
	if calc {
		dst = append(dst, `,"calculation":`...)
		dst = appendString(dst, ind.Formula)
		dst = append(dst, `,"variables":[`...)
		for i, v := range ind.Variables {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = appendString(dst, v)
			dst = append(dst, `,"value":`...)
			val := engine.Null
			if i < len(vars) {
				val = vars[i]
			}
			dst = appendNum(dst, val)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

var fundFreqs = []string{engine.FreqDaily, engine.FreqMonthly, engine.FreqQuarterly, engine.FreqAnnual, "TRIAL_BALANCE", "CDA"}

// fundRatios serves GET /traded-funds/:fundIdentifier/ratios. limit and
// offset count points (documents) in answer order: indicator, frequency,
// reference_date.
func (a *API) fundRatios(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	ids := q.list("ids")
	if one := q.str("id"); one != "" {
		if ids != nil {
			q.fail(badRequest("send either id or ids, not both"))
		}
		ids = []string{strings.TrimSpace(one)}
	}
	ref := q.day("reference_date")
	pub := q.timestamp("publish_date")
	ret := q.timestamp("retrieval_date")
	freq := q.enum("frequency")
	latest := q.boolean("latest_by_reference_date")
	limit := q.integer("limit")
	offset := q.integer("offset")
	asOf := q.asOf(c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveFund(c.ds, ps.ByName(pathFundID.Name))
	if err != nil {
		return nil, err
	}
	var want map[uint16]bool
	if ids != nil {
		want = map[uint16]bool{}
		for _, id := range ids {
			k, ok := c.ds.IndicatorIndex(engine.IndFund, id)
			if !ok {
				return nil, notFound("fund indicator %q not found (see /ratios/catalog)", id)
			}
			want[uint16(k)] = true
		}
	}
	cat := c.ds.Catalog()
	sel := engine.RatioFilter{Reference: ref, PublishedAfter: pub, RetrievedAfter: ret, LatestByReference: latest, KnownAt: asOf}
	dst = append(dst, '{')
	curKey := ""
	open := false
	seen, n := 0, 0
	if err := a.checkCompany(c, res.Issuer); err != nil {
		return nil, err
	}
	fs := res.Issuer.FundRatios()
	for si := range fs {
		s := &fs[si]
		if want != nil && !want[s.Indicator] || freq != "" && s.Frequency != freq {
			continue
		}
		ind := &cat[s.Indicator]
		mark := len(dst)
		if ind.ID != curKey {
			if open {
				dst = append(dst, '}')
			}
			if dst[len(dst)-1] != '{' {
				dst = append(dst, ',')
			}
			dst = appendString(dst, ind.ID)
			dst = append(dst, ":{"...)
		} else {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s.Frequency)
		dst = append(dst, ":["...)
		written := 0
		for pi := range engine.SelectRatioPoints(s.Points, &sel) {
			seen++
			if seen <= offset || n >= limit {
				continue
			}
			if written > 0 {
				dst = append(dst, ',')
			}
			written++
			n++
			p := &s.Points[pi]
			dst = append(dst, `{"value":`...)
			dst = appendNum(dst, p.Value)
			dst = append(dst, `,"reference_date":`...)
			dst = appendDateISO(dst, p.ReferenceDate)
			dst = append(dst, `,"publish_date":`...)
			dst = appendTime(dst, p.PublishDate.Time())
			dst = append(dst, `,"retrieval_date":`...)
			dst = appendTime(dst, p.RetrievalDate.Time())
			dst = append(dst, `,"sources":`...)
			dst = appendSources(dst, c.ds.FundSources(p))
			dst = append(dst, '}')
		}
		if written == 0 {
			dst = dst[:mark]
			continue
		}
		dst = append(dst, ']')
		curKey, open = ind.ID, true
	}
	if open {
		dst = append(dst, '}')
	}
	if n == 0 {
		return nil, notFound("no indicator found for fund %q with these parameters", ps.ByName(pathFundID.Name))
	}
	c.setTotal(seen) // the points of every page, in answer order
	return append(dst, '}'), nil
}

// catalog serves GET /ratios/catalog: every indicator, optionally of one
// kind, encoded once per Dataset and kind.
func (a *API) catalog(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	kind := q.enum("kind")
	w := readWindow(&q)
	if err := q.err(); err != nil {
		return nil, err
	}
	slot := &a.info(c.ds).catalogBody[slices.Index(catalogKinds, kind)]
	return cachedWindow(c, dst, slot, w, func(dst []byte) ([]byte, int) {
		n := 0
		for _, ind := range c.ds.Catalog() {
			if kind == "" || ind.Kind == kind {
				n++
			}
		}
		return appendCatalog(dst, c.ds.Catalog(), kind), n
	}), nil
}

// catalogKinds are the values of the catalog's kind parameter ("" for
// every kind).
var catalogKinds = []string{"", engine.IndFundamental, engine.IndValuation, engine.IndFund}

// appendCatalog appends the indicators of cat of the given kind (every
// kind when kind is "").
func appendCatalog(dst []byte, cat []engine.Indicator, kind string) []byte {
	dst = append(dst, '[')
	n := 0
	for _, ind := range cat {
		if kind != "" && ind.Kind != kind {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, `{"id":`...)
		dst = appendString(dst, ind.ID)
		dst = append(dst, `,"name":`...)
		dst = appendString(dst, ind.Name)
		dst = append(dst, `,"kind":`...)
		dst = appendString(dst, ind.Kind)
		dst = append(dst, `,"format":`...)
		dst = appendString(dst, ind.Format)
		dst = append(dst, `,"formula":`...)
		dst = appendString(dst, ind.Formula)
		dst = append(dst, `,"variables":`...)
		dst = appendStrings(dst, ind.Variables)
		dst = append(dst, `,"frequencies":`...)
		dst = appendStrings(dst, ind.Frequencies)
		dst = append(dst, `,"by_class":`...)
		dst = appendBool(dst, ind.ByClass)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}
