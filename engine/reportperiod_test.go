package engine

import "testing"

func TestReportSpan(t *testing.T) {
	day := func(s string) Date {
		d, err := ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		start, end string
		want       int
	}{
		{"", "2023-12-31", SpanNone},
		{"2023-01-01", "2023-12-31", SpanYear},
		{"2024-01-01", "2024-12-31", SpanYear}, // leap year
		{"2023-01-01", "2023-03-31", SpanQuarter},
		{"2023-10-01", "2023-12-31", SpanQuarter},
		{"2023-01-01", "2023-06-30", SpanOther},
		{"2023-01-01", "2023-09-30", SpanOther},
	} {
		r := Report{StartDate: NoDate, EndDate: day(tc.end)}
		if tc.start != "" {
			r.StartDate = day(tc.start)
		}
		if got := r.Span(); got != tc.want {
			t.Errorf("%s..%s: span %d, want %d", tc.start, tc.end, got, tc.want)
		}
	}
}
