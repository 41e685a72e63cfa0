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
	return r.RetrievalDate.IsZero() || DateOf(r.RetrievalDate) >= ref
}
