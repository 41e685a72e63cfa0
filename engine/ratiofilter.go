package engine

import (
	"iter"
	"time"
)

// RatioFilter selects points of one ratio series, company or fund: the
// API's reference_date, publish_date, retrieval_date and
// latest_by_reference_date parameters. The conditions combine with AND.
type RatioFilter struct {
	// Reference keeps only the points of this reference date; NoDate
	// keeps every reference date (the zero Date is 1970-01-01, a date
	// like any other: set NoDate).
	Reference Date
	// PublishedAfter keeps only the points published strictly after it;
	// the zero time keeps every point.
	PublishedAfter time.Time
	// RetrievedAfter keeps only the points retrieved strictly after it;
	// the zero time keeps every point.
	RetrievedAfter time.Time
	// LatestByReference keeps, of the points of one reference date that
	// the other conditions keep, only the last one (the latest
	// publication).
	LatestByReference bool
}

// ratioPoint is a pointer to a RatioPoint or a FundRatioPoint: what
// SelectRatioPoints reads of either.
type ratioPoint[P any] interface {
	*P
	dates() (ref Date, pub, ret Stamp)
}

func (p *RatioPoint) dates() (Date, Stamp, Stamp) {
	return p.ReferenceDate, p.PublishDate, p.RetrievalDate
}

func (p *FundRatioPoint) dates() (Date, Stamp, Stamp) {
	return p.ReferenceDate, p.PublishDate, p.RetrievalDate
}

// SelectRatioPoints returns the positions in points of the points that f
// keeps, ascending. points is one series as a Dataset serves it
// (RatioSeries.Points of []RatioPoint, or FundRatioSeries.Points of
// []FundRatioPoint): sorted by reference date, then publication. The
// iteration is one pass and does not allocate; f must not change during
// it.
func SelectRatioPoints[P any, PP ratioPoint[P]](points []P, f *RatioFilter) iter.Seq[int] {
	return func(yield func(int) bool) {
		pending, pendingRef := -1, NoDate // the last kept point, not yet yielded
		for i := range points {
			ref, pub, ret := PP(&points[i]).dates()
			if f.Reference.Valid() && ref != f.Reference ||
				!f.PublishedAfter.IsZero() && !pub.Time().After(f.PublishedAfter) ||
				!f.RetrievedAfter.IsZero() && !ret.Time().After(f.RetrievedAfter) {
				continue
			}
			if pending >= 0 && !(f.LatestByReference && ref == pendingRef) && !yield(pending) {
				return
			}
			// With LatestByReference, a later publication of the same
			// reference date replaces the pending point.
			pending, pendingRef = i, ref
		}
		if pending >= 0 {
			yield(pending)
		}
	}
}
