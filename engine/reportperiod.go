package engine

// KnownOn reports whether r can be known on day asOf (NoDate: any day),
// so used for ratios and current values: a report whose reference date is
// after that day, or after the day it was retrieved, describes a period
// not yet closed then (an import dated before the filing, or an
// inconsistent bundle). Such a report is still one of its company's
// reports, as filed.
func (r *Report) KnownOn(asOf Date) bool {
	ref := r.ReferenceDate
	if !ref.Valid() {
		return true
	}
	if asOf.Valid() && ref > asOf {
		return false
	}
	return r.RetrievalDate.IsZero() || DateOf(r.RetrievalDate.Time()) >= ref
}

// Period lengths a report's flows can span (Report.Span).
const (
	SpanNone    = 0  // no start date: a balance sheet, a point in time
	SpanQuarter = 3  // three months
	SpanYear    = 12 // twelve months
	SpanOther   = -1 // anything else: a six- or nine-month year to date, a fiscal year's change
)

// Span returns the months r's flows cover, from its start and end dates
// (a quarter is 80 to 100 days, a year 355 to 375; SpanOther for any
// other length), or SpanNone without a start date. The period of a
// statement is its span, whatever its form: a DFP of three months (a
// company changing its fiscal year files one) is a quarter, never a year.
func (r *Report) Span() int {
	if !r.StartDate.Valid() || !r.EndDate.Valid() {
		return SpanNone
	}
	switch days := int(r.EndDate-r.StartDate) + 1; {
	case days >= 80 && days <= 100:
		return SpanQuarter
	case days >= 355 && days <= 375:
		return SpanYear
	}
	return SpanOther
}
