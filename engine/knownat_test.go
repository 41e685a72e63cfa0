package engine

import (
	"testing"
	"time"
)

// A ratio point's KnownAt is the earliest as_of that keeps it: its
// publication, and for a point priced at a session (a valuation point's
// reference date) not before that session's close; KnownFrom, when set,
// stands for the publication.
func TestRatioSeriesKnownAt(t *testing.T) {
	ts := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	filing := ts("2026-11-02T21:46:00Z")
	s := RatioSeries{Points: []RatioPoint{
		{ReferenceDate: MakeDate(2026, 9, 30), PublishDate: StampOf(filing)},  // a quarter's figure
		{ReferenceDate: MakeDate(2026, 11, 19), PublishDate: StampOf(filing)}, // priced at a later session
		{ReferenceDate: MakeDate(2026, 11, 19), PublishDate: StampOf(ts("2026-11-19T22:00:00Z"))},
		{ReferenceDate: MakeDate(2026, 11, 20), PublishDate: StampOf(ts("2026-11-20T00:00:00Z"))}, // KnownFrom later
	}, KnownFrom: []Stamp{StampOf(filing), StampOf(filing), StampOf(ts("2026-11-19T22:00:00Z")), StampOf(ts("2026-11-25T12:00:00Z"))}}
	want := []time.Time{filing, SessionClose(MakeDate(2026, 11, 19)), ts("2026-11-19T22:00:00Z"), ts("2026-11-25T12:00:00Z")}
	for i, w := range want {
		got := s.KnownAt(i)
		if !got.Equal(w) {
			t.Errorf("point %d: known at %v, want %v", i, got, w)
		}
		p := &s.Points[i]
		if !knownAt(p.ReferenceDate, p.PublishDate, s.KnownFrom, i, got) || knownAt(p.ReferenceDate, p.PublishDate, s.KnownFrom, i, got.Add(-time.Nanosecond)) {
			t.Errorf("point %d: as_of does not keep it from %v on", i, got)
		}
	}
	s.KnownFrom = nil
	if got := s.KnownAt(3); !got.Equal(SessionClose(MakeDate(2026, 11, 20))) {
		t.Errorf("without KnownFrom: %v", got)
	}
}
