package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/pregao/pregao/engine"
)

var cashClasses = []string{engine.ClassCS, engine.ClassPS, engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassUnit, engine.ClassBDR}

// cashActions serves GET /companies/cash-corporate-actions: cash events of
// every Brazilian company (BDR issuers only with bdr=true; never listed
// funds), prior_ex_date descending.
// start_date/end_date bound payment_date (inclusive, by day); events without
// a payment date are left out when either bound is given. limit and offset
// page it (X-Total-Count: the whole list's size).
func (a *API) cashActions(c *call, dst []byte, r *http.Request, _ httprouter.Params) ([]byte, error) {
	q := c.query(r)
	current := q.boolean("current")
	from, to := q.dayRange()
	st := q.enum("stock_type")
	bdr := q.boolean("bdr")
	w := readWindow(&q)
	asOf := q.asOf(c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	evs := c.ds.CashActions()
	pass := func(e *engine.CashEvent) bool {
		return !(current && !e.Current || st != "" && e.StockType.String() != st) && cashIssuerListed(e.Issuer, bdr)
	}
	enc := appendCashAction
	if !asOf.IsZero() {
		pass = func(e *engine.CashEvent) bool {
			return e.KnownAt(asOf) && !(current && !e.CurrentAt(asOf) || st != "" && e.StockType.String() != st) && cashIssuerListed(e.Issuer, bdr)
		}
		enc = cashEncoderAt(c.ds, asOf)
	}
	if current && st == "" && !bdr && !from.Valid() && !to.Valid() && w.all() && asOf.IsZero() {
		// The default list, the largest answer of all (31 MB at scale 1):
		// encoded and compressed once per Dataset.
		return cachedList(c, dst, &a.info(c.ds).cashAll, func(dst []byte) ([]byte, int) {
			dst = append(dst, '[')
			n := 0
			for i := range evs {
				if e := &evs[i]; pass(e) {
					dst = appendCashItem(dst, n, e)
					n++
				}
			}
			return append(dst, ']'), n
		}), nil
	}
	seq := func(yield func(*engine.CashEvent) bool) {
		for i := range evs {
			if !yield(&evs[i]) {
				return
			}
		}
	}
	if from.Valid() || to.Valid() {
		// A payment-date range: only the actions the Dataset's
		// payment-date index lists, in CashActions order.
		c.s.rows = c.ds.CashPaidBetween(c.s.rows[:0], from, to)
		seq = func(yield func(*engine.CashEvent) bool) {
			for _, r := range c.s.rows {
				if !yield(&evs[r]) {
					return
				}
			}
		}
	}
	return appendWindow(c, dst, seq, pass, w, enc), nil
}

// cashEncoderAt returns appendCashAction as of t: adjusted values and
// adjustment_factor from the share actions known at t.
func cashEncoderAt(ds *engine.Dataset, t time.Time) func([]byte, *engine.CashEvent) []byte {
	return func(dst []byte, e *engine.CashEvent) []byte {
		return appendCashActionFactor(dst, e, ds.CashFactorAt(e, t))
	}
}

// companyCash serves GET /companies/{id}/cash-corporate-actions (addition):
// the cash events of one company, with the filters and shape of the
// all-companies list; by ticker, those of its share class.
func (a *API) companyCash(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	f := readCashFilter(&q, c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	if res.Kind == engine.ByTicker && f.class == "" {
		f.class = res.Class
	}
	return f.append(c, dst, res.Issuer.CashActions()), nil
}

// fundCash serves GET /traded-funds/{fundIdentifier}/cash-corporate-actions
// (addition): the distributions of a listed fund (FII, ETF), in the shape
// of the companies' cash actions (stock_type FUND_UNIT).
func (a *API) fundCash(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	f := readCashFilter(&q, c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveFund(c.ds, ps.ByName(pathFundID.Name))
	if err != nil {
		return nil, err
	}
	return f.append(c, dst, res.Issuer.CashActions()), nil
}

// cashFilter is what the one-issuer cash routes filter by.
type cashFilter struct {
	current  bool
	from, to engine.Date
	class    string
	w        window
	asOf     time.Time // zero: now
}

func readCashFilter(q *query, ds *engine.Dataset) cashFilter {
	f := cashFilter{current: q.boolean("current")}
	f.from, f.to = q.dayRange()
	f.class = q.enum("stock_type")
	f.w = readWindow(q)
	f.asOf = q.asOf(ds)
	return f
}

// append appends the events of evs (prior_ex_date descending) that pass f.
func (f *cashFilter) append(c *call, dst []byte, evs []*engine.CashEvent) []byte {
	keep := func(e *engine.CashEvent) bool {
		if f.class != "" && e.StockType.String() != f.class {
			return false
		}
		if f.asOf.IsZero() {
			if f.current && !e.Current {
				return false
			}
		} else if !e.KnownAt(f.asOf) || f.current && !e.CurrentAt(f.asOf) {
			return false
		}
		if f.from.Valid() || f.to.Valid() {
			p := e.PaymentDate
			if !p.Valid() || f.from.Valid() && p < f.from || f.to.Valid() && p > f.to {
				return false
			}
		}
		return true
	}
	seq := func(yield func(*engine.CashEvent) bool) {
		for _, e := range evs {
			if !yield(e) {
				return
			}
		}
	}
	enc := appendCashAction
	if !f.asOf.IsZero() {
		enc = cashEncoderAt(c.ds, f.asOf)
	}
	return appendWindow(c, dst, seq, keep, f.w, enc)
}

// appendCashItem appends e as item n (from 0) of a JSON array.
func appendCashItem(dst []byte, n int, e *engine.CashEvent) []byte {
	if n > 0 {
		dst = append(dst, ',')
	}
	return appendCashAction(dst, e)
}

// appendCashAction appends one cash corporate action.
func appendCashAction(dst []byte, e *engine.CashEvent) []byte {
	return appendCashActionFactor(dst, e, e.Factor)
}

// appendCashActionFactor appends one cash corporate action whose
// adjustment factor is factor (e.Factor, or as known at an as_of).
func appendCashActionFactor(dst []byte, e *engine.CashEvent, factor engine.Num) []byte {
	adjust := func(v engine.Num) engine.Num { return engine.Quo(v, factor) }
	dst = append(dst, `{"id":`...)
	dst = appendString(dst, e.ID)
	dst = append(dst, `,"company_id":`...)
	dst = appendString(dst, e.CompanyID.String())
	dst = append(dst, `,"ticker":`...)
	dst = appendString(dst, e.Ticker.String())
	dst = append(dst, `,"stock_type":`...)
	dst = appendString(dst, e.StockType.String())
	dst = append(dst, `,"isin_code":`...)
	dst = appendString(dst, e.ISIN.String())
	dst = append(dst, `,"approval_date":`...)
	dst = appendDateISO(dst, e.ApprovalDate)
	dst = append(dst, `,"prior_ex_date":`...)
	dst = appendDateISO(dst, e.PriorExDate)
	dst = append(dst, `,"publish_date":`...)
	dst = appendTime(dst, e.PublishDate.Time())
	dst = append(dst, `,"payment_date":`...)
	dst = appendDateISO(dst, e.PaymentDate)
	dst = append(dst, `,"protocol":`...)
	dst = appendString(dst, e.Protocol)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, e.Name.String())
	dst = append(dst, `,"code":`...)
	dst = appendString(dst, e.Code.String())
	dst = append(dst, `,"declared_value":`...)
	dst = appendNum(dst, e.DeclaredValue)
	dst = append(dst, `,"monetary_correction":`...)
	dst = appendNum(dst, e.MonetaryCorrection)
	dst = append(dst, `,"monetary_correction_start_date":`...)
	dst = appendDateISO(dst, e.CorrectionStart)
	dst = append(dst, `,"monetary_correction_end_date":`...)
	dst = appendDateISO(dst, e.CorrectionEnd)
	value := e.Value()
	dst = append(dst, `,"value":`...)
	dst = appendNum(dst, value)
	dst = append(dst, `,"net_value":`...)
	dst = appendNum(dst, e.NetValue)
	dst = append(dst, `,"adjusted_declared_value":`...)
	dst = appendNum(dst, adjust(e.DeclaredValue))
	dst = append(dst, `,"adjusted_monetary_correction":`...)
	dst = appendNum(dst, adjust(e.MonetaryCorrection))
	dst = append(dst, `,"adjusted_value":`...)
	dst = appendNum(dst, adjust(value))
	dst = append(dst, `,"adjusted_net_value":`...)
	dst = appendNum(dst, adjust(e.NetValue))
	dst = append(dst, `,"adjustment_factor":`...)
	dst = appendNum(dst, factor)
	dst = append(dst, `,"currency":`...)
	dst = appendString(dst, currencyOr(e.Currency.String()))
	dst = append(dst, `,"installments":[`...)
	insts := e.Installments.All()
	for i := range insts {
		in := &insts[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		iv := engine.InstallmentValue(in)
		dst = append(dst, `{"declared_value":`...)
		dst = appendNum(dst, in.DeclaredValue)
		dst = append(dst, `,"monetary_correction":`...)
		dst = appendNum(dst, in.MonetaryCorrection)
		dst = append(dst, `,"value":`...)
		dst = appendNum(dst, iv)
		dst = append(dst, `,"net_value":`...)
		dst = appendNum(dst, in.NetValue)
		dst = append(dst, `,"adjusted_declared_value":`...)
		dst = appendNum(dst, adjust(in.DeclaredValue))
		dst = append(dst, `,"adjusted_monetary_correction":`...)
		dst = appendNum(dst, adjust(in.MonetaryCorrection))
		dst = append(dst, `,"adjusted_value":`...)
		dst = appendNum(dst, adjust(iv))
		dst = append(dst, `,"adjusted_net_value":`...)
		dst = appendNum(dst, adjust(in.NetValue))
		dst = append(dst, `,"currency":`...)
		dst = appendString(dst, currencyOr(in.Currency))
		dst = append(dst, `,"payment_date":`...)
		dst = appendDateISO(dst, in.PaymentDate)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"source":`...)
	dst = appendSource(dst, e.SourceOrZero())
	return append(dst, '}')
}

// cashIssuerListed reports whether the events of is belong in the
// cross-company cash list: Brazilian companies, plus BDR issuers when bdr
// is set. Listed funds (FII, ETF) are not companies: their distributions
// are not in it (the list's stock_type has no FUND_UNIT).
func cashIssuerListed(is *engine.Issuer, bdr bool) bool {
	if is == nil {
		return true // an event whose company is unknown to the snapshot
	}
	return is.Kind == engine.KindCompany || bdr && is.Kind == engine.KindBDR
}

func currencyOr(c string) string {
	if c == "" {
		return "BRL"
	}
	return c
}

var shareActionClasses = []string{engine.ClassCS, engine.ClassPS, engine.ClassPSA, engine.ClassPSB, engine.ClassPSC, engine.ClassPSD, engine.ClassUnit, engine.ClassBDR, engine.ClassFundUnit}

// unitLike reports whether class is UNIT or FUND_UNIT (equivalent in the
// corporate-actions filter).
func unitLike(class string) bool { return class == engine.ClassUnit || class == engine.ClassFundUnit }

// shareActions serves GET /companies/:id/corporate-actions: share events,
// prior_ex_date descending. By ticker, only events of that ticker's class.
func (a *API) shareActions(c *call, dst []byte, r *http.Request, ps httprouter.Params) ([]byte, error) {
	q := c.query(r)
	from, to := q.dayRange()
	st := q.enum("stock_type")
	pg := pager{w: readWindow(&q)}
	asOf := q.asOf(c.ds)
	if err := q.err(); err != nil {
		return nil, err
	}
	res, err := resolveCompany(c.ds, ps.ByName("id"))
	if err != nil {
		return nil, err
	}
	dst = append(dst, '[')
	n := 0
	for _, sa := range res.Issuer.ShareActions {
		if from.Valid() && sa.PriorExDate < from || to.Valid() && sa.PriorExDate > to || !asOf.IsZero() && !sa.KnownAt(asOf) {
			continue
		}
		class := a.isinClass(c.ds, sa.ISIN, sa.Ticker)
		if st != "" && class != st && !(unitLike(st) && unitLike(class)) {
			continue
		}
		if res.Kind == engine.ByTicker && class != res.Class && sa.ISIN != res.Asset.ISIN || !pg.take() {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = appendShareAction(dst, sa)
	}
	c.setTotal(pg.total)
	return append(dst, ']'), nil
}

// isinClass returns the share class of an ISIN: that of the asset holding
// it, else the one its B3 type code names (classFromISIN), else that of the
// ticker's asset; "" when unknown.
func (a *API) isinClass(ds *engine.Dataset, isin, ticker string) string {
	if as, ok := ds.AssetByISIN(isin); ok {
		return as.StockType
	}
	if c := classFromISIN(isin); c != "" {
		return c
	}
	if as, ok := ds.Asset(ticker); ok {
		return as.StockType
	}
	return ""
}

// classFromISIN reads the share class from a Brazilian ISIN's B3 type code
// (BR + 4-letter issuer + code + check digits): ACNOR common, ACNPR
// preferred, ACNPA..ACNPD preferred A..D, CDAM unit, CTF fund quota, BDR
// depositary receipt. It returns "" for any other ISIN.
func classFromISIN(isin string) string {
	if len(isin) != 12 || isin[:2] != "BR" {
		return ""
	}
	code := isin[6:11]
	switch {
	case strings.HasPrefix(code, "CDAM"):
		return engine.ClassUnit
	case strings.HasPrefix(code, "CTF"):
		return engine.ClassFundUnit
	case strings.HasPrefix(code, "BDR"):
		return engine.ClassBDR
	case strings.HasPrefix(code, "ACN"):
		switch code[3:] {
		case "OR":
			return engine.ClassCS
		case "PR":
			return engine.ClassPS
		case "PA":
			return engine.ClassPSA
		case "PB":
			return engine.ClassPSB
		case "PC":
			return engine.ClassPSC
		case "PD":
			return engine.ClassPSD
		}
	}
	return ""
}

// appendShareAction appends one share corporate action; the root factor is
// absent on events with legs.
func appendShareAction(dst []byte, sa *engine.ShareAction) []byte {
	dst = append(dst, `{"approval_date":`...)
	dst = appendDateISO(dst, sa.ApprovalDate)
	dst = append(dst, `,"prior_ex_date":`...)
	dst = appendDateISO(dst, sa.PriorExDate)
	dst = append(dst, `,"isin_code":`...)
	dst = appendString(dst, sa.ISIN)
	dst = append(dst, `,"issued_asset_isin_code":`...)
	dst = appendString(dst, sa.IssuedISIN)
	dst = append(dst, `,"remarks":`...)
	dst = appendString(dst, sa.Remarks)
	if len(sa.Legs) == 0 {
		dst = append(dst, `,"factor":`...)
		dst = appendNum(dst, sa.Factor)
	}
	dst = append(dst, `,"legs":[`...)
	for i := range sa.Legs {
		l := &sa.Legs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"leg_type":`...)
		dst = appendString(dst, l.LegType)
		dst = append(dst, `,"isin_code":`...)
		dst = appendString(dst, l.ISIN)
		dst = append(dst, `,"ticker":`...)
		dst = appendString(dst, l.Ticker)
		dst = append(dst, `,"factor":`...)
		dst = appendNum(dst, l.Factor)
		dst = append(dst, '}')
	}
	dst = append(dst, `],"type":`...)
	dst = appendString(dst, sa.Type)
	dst = append(dst, `,"label":`...)
	dst = appendString(dst, sa.Label)
	return append(dst, '}')
}
