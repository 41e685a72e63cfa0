package engine

import (
	"iter"
	"sort"
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
	// KnownAt keeps only the points known at that instant (the API's
	// as_of): published at or before it, and, for a point priced at a
	// session (its reference date), once that session closed
	// (SessionClose). The zero time keeps every point. With
	// LatestByReference, the latest publication known at KnownAt is kept.
	KnownAt time.Time
	// KnownFrom is the series' RatioSeries.KnownFrom (nil: each point is
	// known from its publish date).
	KnownFrom []Stamp
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
				!f.RetrievedAfter.IsZero() && !ret.Time().After(f.RetrievedAfter) ||
				!f.KnownAt.IsZero() && !knownAt(ref, pub, f.KnownFrom, i, f.KnownAt) {
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

// knownAt reports whether point i, of reference date ref and publish
// date pub, is known at t (see RatioFilter.KnownAt).
func knownAt(ref Date, pub Stamp, knownFrom []Stamp, i int, t time.Time) bool {
	return !knownFromOf(ref, pub, knownFrom, i).After(t)
}

// knownFromOf returns when point i, of reference date ref and publish
// date pub, became known: its publication (knownFrom's when set: see
// setKnownFrom), and for a point priced at a session (a valuation
// point, whose reference date is that session) not before that session
// closed (SessionClose).
func knownFromOf(ref Date, pub Stamp, knownFrom []Stamp, i int) time.Time {
	if i < len(knownFrom) {
		pub = knownFrom[i]
	}
	t, c := pub.Time(), SessionClose(ref)
	if c.After(t) {
		return c
	}
	return t
}

// KnownAt returns when point i of s became known: the earliest as_of
// (RatioFilter.KnownAt) that keeps it. A valuation point is priced at
// its reference date's close, so it is not known before that session
// closed, whatever the publish date of the filing it divides by; a
// report-independent valuation point (market cap, dividend yield) not
// before its period's other valuation points (KnownFrom).
func (s *RatioSeries) KnownAt(i int) time.Time {
	p := &s.Points[i]
	return knownFromOf(p.ReferenceDate, p.PublishDate, s.KnownFrom, i)
}

// LatestKnown returns the position in points (one series as
// SelectRatioPoints takes it) of the latest point known at t (see
// RatioFilter.KnownAt): the newest reference date with a point known
// then, and of its points the latest publication known then; -1 when
// none is. knownFrom is the series' RatioSeries.KnownFrom (nil for fund
// series). A binary search skips the reference dates after t's day; only
// the points of reference dates up to it that were published after t are
// stepped over.
func LatestKnown[P any, PP ratioPoint[P]](points []P, knownFrom []Stamp, t time.Time) int {
	day := SaoPauloDay(t)
	i := sort.Search(len(points), func(i int) bool {
		ref, _, _ := PP(&points[i]).dates()
		return ref > day
	})
	for i--; i >= 0; i-- {
		ref, pub, _ := PP(&points[i]).dates()
		if knownAt(ref, pub, knownFrom, i, t) {
			return i
		}
	}
	return -1
}

// Keeps reports whether f's reference, publication and retrieval
// conditions keep p (KnownAt and LatestByReference aside): for a point
// made for the request, such as a SessionValuation's.
func (f *RatioFilter) Keeps(p *RatioPoint) bool {
	return !(f.Reference.Valid() && p.ReferenceDate != f.Reference ||
		!f.PublishedAfter.IsZero() && !p.PublishDate.Time().After(f.PublishedAfter) ||
		!f.RetrievedAfter.IsZero() && !p.RetrievalDate.Time().After(f.RetrievedAfter))
}
