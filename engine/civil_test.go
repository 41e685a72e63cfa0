package engine

import (
	"testing"
	"time"
)

func TestCivilDate(t *testing.T) {
	// Every day from 1599-01-01 to 2401-12-31 against the time package.
	for day := time.Date(1599, 1, 1, 0, 0, 0, 0, time.UTC); day.Year() < 2402; day = day.AddDate(0, 0, 1) {
		y, m, d := day.Date()
		want := Date(day.Unix() / 86400)
		if got := CivilDate(y, int(m), d); got != want {
			t.Fatalf("CivilDate(%d, %d, %d) = %d, want %d", y, m, d, got, want)
		}
		if d == 1 {
			last := day.AddDate(0, 1, -1).Day()
			if got := DaysIn(y, int(m)); got != last {
				t.Fatalf("DaysIn(%d, %d) = %d, want %d", y, m, got, last)
			}
		}
	}
	if CivilDate(1970, 1, 1) != 0 || CivilDate(-1, 12, 31) != MakeDate(-1, 12, 31) || CivilDate(-400, 3, 1) != MakeDate(-400, 3, 1) {
		t.Error("CivilDate at the epoch or before year 0")
	}
	if DaysIn(2024, 0) != 0 || DaysIn(2024, 13) != 0 {
		t.Error("DaysIn out of range")
	}
}
