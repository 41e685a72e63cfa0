package engine

// DaysIn returns the number of days of month m (1 to 12) of year y in the
// proleptic Gregorian calendar, or 0 for a month out of range.
func DaysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	case 1, 3, 5, 7, 8, 10, 12:
		return 31
	}
	return 0
}

// CivilDate returns the Date of year y, month m, day d, which must form a
// valid proleptic Gregorian date (1 <= m <= 12, 1 <= d <= DaysIn(y, m)).
// It is MakeDate without the time package, for parsers: it does not
// allocate. (H. Hinnant's days_from_civil.)
func CivilDate(y, m, d int) Date {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return Date(era*146097 + doe - 719468)
}
