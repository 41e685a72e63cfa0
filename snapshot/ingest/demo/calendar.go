package demo

import (
	"time"

	"github.com/pregao/pregao/engine"
)

// Easter returns the date of Easter Sunday of year y (Gregorian calendar,
// anonymous algorithm).
func Easter(y int) engine.Date {
	a := y % 19
	b := y / 100
	c := y % 100
	d := b / 4
	e := b % 4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i := c / 4
	k := c % 4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return engine.MakeDate(y, time.Month(month), day)
}

// IsHoliday reports whether d is a day B3 is closed although it is a
// weekday: national holidays (New Year, Carnival Monday and Tuesday, Good
// Friday, Tiradentes, Labour Day, Corpus Christi, Independence, Our Lady
// Aparecida, All Souls, Republic, Black Consciousness from 2024, Christmas)
// plus December 24 and December 31.
func IsHoliday(d engine.Date) bool {
	y, m, day := d.Time().Date()
	switch {
	case m == time.January && day == 1,
		m == time.April && day == 21,
		m == time.May && day == 1,
		m == time.September && day == 7,
		m == time.October && day == 12,
		m == time.November && day == 2,
		m == time.November && day == 15,
		m == time.November && day == 20 && y >= 2024,
		m == time.December && (day == 24 || day == 25 || day == 31):
		return true
	}
	e := Easter(y)
	switch d {
	case e - 48, e - 47, e - 2, e + 60:
		return true
	}
	return false
}

// IsBusinessDay reports whether B3 holds a session on d.
func IsBusinessDay(d engine.Date) bool {
	wd := d.Time().Weekday()
	if wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !IsHoliday(d)
}

// BusinessDays returns every session from from to to, both inclusive.
func BusinessDays(from, to engine.Date) []engine.Date {
	out := make([]engine.Date, 0, int(to-from+1)*5/7+1)
	for d := from; d <= to; d++ {
		if IsBusinessDay(d) {
			out = append(out, d)
		}
	}
	return out
}

// lastBusinessDay returns the last session on or before d.
func lastBusinessDay(d engine.Date) engine.Date {
	for !IsBusinessDay(d) {
		d--
	}
	return d
}

// addBusinessDays returns the session n sessions after d (d need not be one).
func addBusinessDays(d engine.Date, n int) engine.Date {
	for n > 0 {
		d++
		if IsBusinessDay(d) {
			n--
		}
	}
	return d
}

// firstOfMonth returns the first day of d's month.
func firstOfMonth(d engine.Date) engine.Date {
	y, m, _ := d.Time().Date()
	return engine.MakeDate(y, m, 1)
}

// monthEnd returns the last calendar day of month m of year y.
func monthEnd(y int, m time.Month) engine.Date {
	return engine.MakeDate(y, m+1, 1) - 1
}

// ymd splits d.
func ymd(d engine.Date) (int, time.Month, int) { return d.Time().Date() }

// localTime returns the UTC instant of hh:mm local time (UTC-3) on d.
func localTime(d engine.Date, hh, mm int) time.Time {
	return d.Time().Add(time.Duration(hh+3)*time.Hour + time.Duration(mm)*time.Minute)
}
