package demo

import (
	"math"
	"time"

	"github.com/pregao/pregao/engine"
)

// crisis returns the volatility multiplier of the market on d: calmer
// years, with stress in 2002, 2008-09, 2015 and 2020.
func crisis(d engine.Date) float64 {
	y, m, _ := ymd(d)
	switch {
	case y == 2008 && m >= time.September, y == 2009 && m <= time.March:
		return 2.6
	case y == 2020 && m >= time.March && m <= time.April:
		return 3.2
	case y == 2002 && m >= time.June && m <= time.October:
		return 1.8
	case y == 2015:
		return 1.4
	}
	return 1
}

// market draws the shared factor paths: market, world, sectors, USD, SELIC.
func (g *gen) market(nSectors int) {
	r := g.rng(-1, 0)
	n := len(g.cal)
	g.mkt = make([]float64, n)
	g.world = make([]float64, n)
	g.usd = make([]float64, n)
	g.selic = make([]float64, n)
	g.secF = make([][]float64, nSectors)
	for s := range g.secF {
		g.secF[s] = make([]float64, n)
	}
	logUSD := math.Log(1.80)
	rate := 19.0
	for i, d := range g.cal {
		c := crisis(d)
		g.mkt[i] = 0.00035 + 0.0125*c*r.NormFloat64()
		g.world[i] = 0.0003 + 0.0095*math.Sqrt(c)*r.NormFloat64()
		for s := range g.secF {
			g.secF[s][i] = 0.0055 * r.NormFloat64()
		}
		if i > 0 {
			logUSD += 0.00017 - 0.25*(g.mkt[i]-0.00035) + 0.0068*math.Sqrt(c)*r.NormFloat64()
		}
		g.usd[i] = logUSD
		// COPOM meets about every 30 sessions.
		if i%30 == 15 {
			step := math.Round((0.12*(11.5-rate)+0.7*r.NormFloat64())*4) / 4
			step = max(-1.5, min(1.5, step))
			rate = max(2, min(26.5, rate+step))
		}
		g.selic[i] = rate
	}
	// Pin the USD path to end near 5.40 BRL without changing its shape.
	drift := (math.Log(5.40) - g.usd[n-1]) / float64(n-1)
	for i := range g.usd {
		g.usd[i] = round(math.Exp(g.usd[i]+drift*float64(i)), 4)
	}
}

// macroSeries returns the SELIC, IPCA and USD securities and series.
func (g *gen) macroSeries() ([]engine.Security, []engine.Series) {
	n := len(g.cal)
	mk := func(t string, dates []engine.Date) engine.Series {
		m := len(dates)
		return engine.Series{Ticker: t, Dates: dates, Open: make([]engine.Num, m), High: make([]engine.Num, m),
			Low: make([]engine.Num, m), Close: make([]engine.Num, m), Volume: make([]engine.Num, m),
			Quantity: make([]int64, m), Trades: make([]int64, m)}
	}
	selic := mk("SELIC", append([]engine.Date(nil), g.cal...))
	usd := mk("USD", append([]engine.Date(nil), g.cal...))
	r := g.rng(-1, 1)
	for i := 0; i < n; i++ {
		v := engine.Num(g.selic[i])
		selic.Open[i], selic.High[i], selic.Low[i], selic.Close[i], selic.Volume[i] = v, v, v, v, engine.Null
		c := g.usd[i]
		o := c
		if i > 0 {
			o = round(g.usd[i-1]*math.Exp(0.002*r.NormFloat64()), 4)
		}
		h := round(max(o, c)*math.Exp(math.Abs(0.004*r.NormFloat64())), 4)
		l := round(min(o, c)*math.Exp(-math.Abs(0.004*r.NormFloat64())), 4)
		usd.Open[i], usd.High[i], usd.Low[i], usd.Close[i], usd.Volume[i] = engine.Num(o), engine.Num(h), engine.Num(l), engine.Num(c), engine.Null
	}
	// IPCA: the index's change in the month (%, two decimals, as the
	// Banco Central's SGS 433 publishes it) on the first day of each
	// reference month, up to the last month published (around the 10th
	// of the next month).
	var months []engine.Date
	var vals []float64
	infl := 0.5
	last := firstOfMonth(g.cal[n-1])
	if _, _, d := ymd(g.cal[n-1]); d < 11 {
		last = firstOfMonth(last - 1)
	}
	for m := firstOfMonth(g.cal[0]); m < last; m = firstOfMonth(m + 32) {
		infl = 0.45 + 0.75*(infl-0.45) + 0.22*r.NormFloat64()
		months = append(months, m)
		vals = append(vals, round(infl, 2))
	}
	ipca := mk("IPCA", months)
	for i, v := range vals {
		x := engine.Num(v)
		ipca.Open[i], ipca.High[i], ipca.Low[i], ipca.Close[i], ipca.Volume[i] = x, x, x, x, engine.Null
	}
	secs := []engine.Security{
		{Ticker: "IPCA", StockType: engine.ClassMacro, Currency: "BRL", UnitFactor: engine.Null, ListedFrom: months[0], ListedTo: engine.NoDate},
		{Ticker: "SELIC", StockType: engine.ClassMacro, Currency: "BRL", UnitFactor: engine.Null, ListedFrom: g.cal[0], ListedTo: engine.NoDate},
		{Ticker: "USD", StockType: engine.ClassMacro, Currency: "BRL", UnitFactor: engine.Null, ListedFrom: g.cal[0], ListedTo: engine.NoDate},
	}
	return secs, []engine.Series{ipca, selic, usd}
}
