package bcb

import (
	"strconv"
	"time"

	"github.com/pregao/pregao/engine"
)

// Source is where a macro series comes from.
type Source int

const (
	SGS  Source = iota + 1 // an SGS series (ReadSGS)
	PTAX                   // the PTAX closing-rates files (ReadClosing)
)

// Series is one macro series of the mapping: its ticker, where it comes
// from, its unit and meaning, and the rules its points follow (see the
// package doc).
type Series struct {
	Ticker  string
	Source  Source
	Code    int    // SGS series code; 0 for PTAX
	Unit    string // of the values (close_price)
	Meaning string
	// BusinessDays keeps only the points of business days (BusinessDay):
	// the source dates a value on every calendar day.
	BusinessDays bool
	// Known returns the first day a point dated d is published (a
	// snapshot of an earlier day does not hold it).
	Known func(d engine.Date) engine.Date
}

// sameDay: a value known on its own day.
func sameDay(d engine.Date) engine.Date { return d }

// nextDay: a value published the day after its date.
func nextDay(d engine.Date) engine.Date { return d + 1 }

// ipcaRelease: the IPCA of a month (dated its 1st) is known from the 15th
// of the next month (IBGE releases it around the 10th, on a day its
// calendar sets; the margin never serves a figure before its release).
func ipcaRelease(d engine.Date) engine.Date {
	y, m, _ := d.Time().Date()
	return engine.MakeDate(y, m+1, 15)
}

// Mapping lists the SGS series Pregão imports, by ticker. PTAX series (one
// per currency) are PTAXSeries.
var Mapping = []Series{
	{Ticker: "SELIC", Source: SGS, Code: 432, Unit: "% per year", BusinessDays: true, Known: sameDay,
		Meaning: "the Selic target set by the Copom, in force that day (SGS 432, Taxa de juros - Meta Selic definida pelo Copom)"},
	{Ticker: "IPCA", Source: SGS, Code: 433, Unit: "% in the month", Known: ipcaRelease,
		Meaning: "the IPCA's change in the month, dated the month's 1st (SGS 433, Índice nacional de preços ao consumidor-amplo, var. % mensal)"},
	{Ticker: "CDI", Source: SGS, Code: 4389, Unit: "% per year", Known: nextDay,
		Meaning: "the CDI (DI rate) annualized on 252 business days (SGS 4389, Taxa de juros - CDI anualizada base 252)"},
}

// PTAXSeries returns the series of currency (an ISO 4217 code): the PTAX
// sell rate of the day's closing bulletin, BRL per unit of the currency.
func PTAXSeries(currency string) Series {
	return Series{Ticker: currency, Source: PTAX, Unit: "BRL per " + currency, Known: sameDay,
		Meaning: "the PTAX sell rate of the day's closing bulletin (Banco Central, Download/fechamento)"}
}

// SGSSeries returns the series of the mapping named by s: its ticker
// (SELIC) or its SGS code ("432"), in either case.
func SGSSeries(s string) (Series, bool) {
	for _, m := range Mapping {
		if eqFold(s, m.Ticker) || s == strconv.Itoa(m.Code) {
			return m, true
		}
	}
	return Series{}, false
}

func eqFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// easter returns Easter Sunday of year y (Gregorian calendar, anonymous
// algorithm).
func easter(y int) engine.Date {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	return engine.MakeDate(y, time.Month((h+l-7*m+114)/31), (h+l-7*m+114)%31+1)
}

// BusinessDay reports whether d is a business day of the Brazilian
// financial market, the days the Banco Central publishes the CDI and the
// PTAX: a weekday other than a national holiday (New Year, Carnival
// Monday and Tuesday, Good Friday, Tiradentes, Labour Day, Corpus
// Christi, Independence, Our Lady Aparecida, All Souls, Republic, Black
// Consciousness from 2024 (Lei 14.759/2023), Christmas). B3 also closes
// on December 24 and 31, which are business days here.
func BusinessDay(d engine.Date) bool {
	t := d.Time()
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	y, m, day := t.Date()
	switch {
	case m == time.January && day == 1,
		m == time.April && day == 21,
		m == time.May && day == 1,
		m == time.September && day == 7,
		m == time.October && day == 12,
		m == time.November && (day == 2 || day == 15 || day == 20 && y >= 2024),
		m == time.December && day == 25:
		return false
	}
	switch e := easter(y); d {
	case e - 48, e - 47, e - 2, e + 60:
		return false
	}
	return true
}
