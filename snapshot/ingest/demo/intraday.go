package demo

import (
	"math"

	"github.com/pregao/pregao/engine"
)

// Intraday session: 10:00 to 17:00 local time (UTC-3), 420 one-minute bars.
const minutesPerSession = 420

// intraday builds the 1-minute bars: the last session's of every ticker
// (the aggregation of its trades, see lastSession), and the
// IntradaySessions-1 sessions before it of the IntradayTickers most liquid
// ones, drawn consistent with their daily bars. Series are in liquidity
// order.
func (g *gen) intraday(liq []liquid) []engine.Intraday {
	top := min(g.sz.IntradayTickers, len(liq))
	out := make([]engine.Intraday, len(liq))
	g.parallel(allIdx(len(liq)), func(i int) {
		l := liq[i]
		s := &g.outs[l.ent].series[l.class]
		if t := g.outs[l.ent].tail; t != nil {
			s = &t[l.class] // the last rows of the series (GenerateSpilled)
		}
		last := &g.outs[l.ent].last[l.class].bars
		earlier := 0
		if i < top {
			earlier = max(0, min(g.sz.IntradaySessions, s.Len())-1)
		}
		m := earlier*minutesPerSession + len(last.Times)
		x := engine.Intraday{Ticker: l.ticker, Times: make([]int64, 0, m), Open: make([]engine.Num, 0, m), High: make([]engine.Num, 0, m),
			Low: make([]engine.Num, 0, m), Close: make([]engine.Num, 0, m), Volume: make([]engine.Num, 0, m), Quantity: make([]int64, 0, m)}
		if earlier > 0 {
			r := g.rng(l.ent, 10+l.class)
			for j := s.Len() - 1 - earlier; j < s.Len()-1; j++ {
				t0 := localTime(s.Dates[j], 10, 0).Unix()
				minuteBars(&x, r, t0, float64(s.Open[j]), float64(s.High[j]), float64(s.Low[j]), float64(s.Close[j]), float64(s.Volume[j]), s.Quantity[j])
			}
		}
		x.Times = append(x.Times, last.Times...)
		x.Open = append(x.Open, last.Open...)
		x.High = append(x.High, last.High...)
		x.Low = append(x.Low, last.Low...)
		x.Close = append(x.Close, last.Close...)
		x.Volume = append(x.Volume, last.Volume...)
		x.Quantity = append(x.Quantity, last.Quantity...)
		*last = engine.Intraday{}
		out[i] = x
	})
	return out
}

// minuteBars appends one session of bars whose first open, last close,
// highest high, lowest low, summed volume and summed quantity equal the
// daily bar's.
func minuteBars(x *engine.Intraday, r randSource, t0 int64, op, hi, lo, cl, vol float64, qty int64) {
	const n = minutesPerSession
	// A Brownian bridge from open to close, scaled into (lo, hi).
	path := make([]float64, n+1)
	for i := 1; i <= n; i++ {
		path[i] = path[i-1] + r.NormFloat64()
	}
	dev := make([]float64, n+1)
	for i := 0; i <= n; i++ {
		dev[i] = path[i] - path[n]*float64(i)/n
	}
	line := func(i int) float64 { return op + (cl-op)*float64(i)/n }
	up, down := math.Inf(1), math.Inf(1)
	for i := 0; i <= n; i++ {
		if dev[i] > 0 {
			up = math.Min(up, (hi-line(i))/dev[i])
		} else if dev[i] < 0 {
			down = math.Min(down, (line(i)-lo)/-dev[i])
		}
	}
	if math.IsInf(up, 1) {
		up = 0
	}
	if math.IsInf(down, 1) {
		down = 0
	}
	c := make([]float64, n+1)
	for i := 0; i <= n; i++ {
		v := line(i)
		if dev[i] > 0 {
			v += 0.97 * up * dev[i]
		} else {
			v += 0.97 * down * dev[i]
		}
		c[i] = math.Min(hi, math.Max(lo, cents(v)))
	}
	c[0], c[n] = op, cl
	// Bars, then pin the extreme bars to the daily high and low.
	hiBar, loBar := 0, 0
	bh := make([]float64, n)
	bl := make([]float64, n)
	for i := 0; i < n; i++ {
		o, k := c[i], c[i+1]
		bh[i] = math.Min(hi, cents(math.Max(o, k)+math.Abs(r.NormFloat64())*0.0004*o))
		bl[i] = math.Max(lo, cents(math.Min(o, k)-math.Abs(r.NormFloat64())*0.0004*o))
		if bh[i] > bh[hiBar] {
			hiBar = i
		}
		if bl[i] < bl[loBar] {
			loBar = i
		}
	}
	bh[hiBar], bl[loBar] = hi, lo
	// U-shaped activity profile with noise.
	w := make([]float64, n)
	var sw float64
	for i := range w {
		t := float64(i) / n
		w[i] = (1 + 2.5*(t-0.5)*(t-0.5)*4) * math.Exp(0.5*r.NormFloat64())
		sw += w[i]
	}
	var qLeft = qty
	var vLeft = vol
	for i := 0; i < n; i++ {
		q := int64(math.Floor(float64(qty) * w[i] / sw))
		v := round(vol*w[i]/sw, 2)
		if i == n-1 {
			q, v = qLeft, round(vLeft, 2)
		}
		qLeft -= q
		vLeft -= v
		x.Times = append(x.Times, t0+int64(60*i))
		x.Open = append(x.Open, engine.Num(c[i]))
		x.High = append(x.High, engine.Num(bh[i]))
		x.Low = append(x.Low, engine.Num(bl[i]))
		x.Close = append(x.Close, engine.Num(c[i+1]))
		x.Volume = append(x.Volume, engine.Num(v))
		x.Quantity = append(x.Quantity, q)
	}
}
