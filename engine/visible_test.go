package engine

import (
	"testing"
	"time"
)

// A daily session is visible from its close (17:00 in Brasília, 20:00
// UTC); a running session's quote from the end of its last 1-minute bar.
func TestQuoteVisibleFrom(t *testing.T) {
	d := MakeDate(2024, 3, 15)
	close := time.Date(2024, 3, 15, 20, 0, 0, 0, time.UTC).Unix()
	if got := SessionComplete(d); got != close {
		t.Errorf("SessionComplete(%s) = %s, want %s", d, time.Unix(got, 0).UTC(), time.Unix(close, 0).UTC())
	}
	bar := time.Date(2024, 3, 15, 14, 31, 0, 0, time.UTC).Unix()
	for _, c := range []struct {
		name string
		q    Quote
		want int64
	}{
		{"daily", Quote{Date: d}, close},
		{"intraday", Quote{Date: d, Intraday: true, Time: bar}, bar + 60},
	} {
		if got := c.q.VisibleFrom(); got != c.want {
			t.Errorf("%s: VisibleFrom = %d, want %d", c.name, got, c.want)
		}
	}
}
