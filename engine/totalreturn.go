package engine

import (
	"cmp"
	"slices"
	"sort"
)

// ExCash is the cash per share of one ticker that goes ex after one
// session: the sums of the values of the ticker's cash events (the highest
// version of each) whose prior_ex_date is PriorEx. The first session
// without the right is the ticker's first session after PriorEx. Values
// are BRL per share in the share base of PriorEx, unadjusted.
type ExCash struct {
	PriorEx Date
	Gross   Num // sum of the events' value (declared + monetary correction)
	Net     Num // sum of the events' net_value
}

// ExCash returns the ex-cash of a, prior_ex_date ascending: built once per
// Dataset (buildCash) from the current versions of the cash events whose
// ticker (or ISIN) is a's, with a prior_ex_date. An event whose value is
// missing adds nothing to Gross; one whose net_value is missing adds
// nothing to Net.
func (d *Dataset) ExCash(a *Asset) []ExCash {
	i := a.Pos()
	if i+1 >= len(d.exCashAt) {
		return nil
	}
	return d.exCash[d.exCashAt[i]:d.exCashAt[i+1]]
}

// buildExCash fills d.exCash and d.exCashAt from d.cash: one ExCash per
// asset and prior_ex_date with a current event, summed with Sum (the
// float nearest the exact decimal sum).
func (b *builder) buildExCash() {
	d := b.d
	type row struct {
		asset int32
		ev    *CashEvent
	}
	var rows []row
	for i := range d.cash {
		e := &d.cash[i]
		if !e.Current || !e.PriorExDate.Valid() {
			continue
		}
		ai, ok := b.assetOf(e.Ticker, e.ISIN)
		if !ok {
			continue
		}
		rows = append(rows, row{ai, e})
	}
	slices.SortStableFunc(rows, func(x, y row) int {
		if c := cmp.Compare(x.asset, y.asset); c != 0 {
			return c
		}
		return cmp.Compare(x.ev.PriorExDate, y.ev.PriorExDate)
	})
	d.exCashAt = make([]int32, len(d.assets)+1)
	add := func(sum, v Num) Num {
		if !v.Valid() {
			return sum
		}
		return Sum(sum, v)
	}
	last := int32(-1)
	for _, r := range rows {
		n := len(d.exCash)
		if r.asset != last || d.exCash[n-1].PriorEx != r.ev.PriorExDate {
			d.exCash = append(d.exCash, ExCash{PriorEx: r.ev.PriorExDate, Gross: 0, Net: 0})
			d.exCashAt[r.asset+1]++
			last = r.asset
			n++
		}
		x := &d.exCash[n-1]
		x.Gross = add(x.Gross, r.ev.Value())
		x.Net = add(x.Net, r.ev.NetValue)
	}
	for i := 1; i < len(d.exCashAt); i++ {
		d.exCashAt[i] += d.exCashAt[i-1]
	}
	d.exCash = slices.Clip(d.exCash)
}

// TRPoint is one session of a total-return series.
type TRPoint struct {
	Date  Date
	Close Num // the session's close, unadjusted (Null when missing)
	// Cash is D_t, the cash per share going ex on this session (gross or
	// net; 0 when none): the ExCash whose prior_ex_date is on or after the
	// previous session and before this one.
	Cash Num
	// Index is the total-return index, 1 on the first session with a
	// close; Null on a session without a close (and before the first).
	Index Num
}

// AppendTotalReturn appends to dst the total-return series of a over bars,
// its unadjusted daily bars of consecutive sessions ascending (AppendDaily,
// then the live session's bar when shown), and returns the extended slice.
// It follows B3's index convention: the cash of an ex-date t is
// reinvested at the theoretical ex price, so that
//
//	index_t = index_{t-1} × close_t × F_{t-1} / ((close_{t-1} − D_t) × F_t)
//
// where F is the cumulative adjustment factor of the share events (1 on
// both sides when there is none: the index is continuous across splits,
// reverse splits, bonuses and spin-offs as the adjusted series is) and
// D_t the Gross (net: the Net) of the ExCash going ex on t. It computes
// index_t = close_t × (F_0/F_t) / B_t, where B starts at the first close
// and B_t = B_{t-1} × (close_{t-1} − D_t) / close_{t-1} on an ex-date (the
// same product, rearranged), so that a window without cash events and
// share events is close_t / close_0 exactly: the price return. A session
// without a close has a Null index and the next session's step runs from
// the last close, with the cash of both; a non-positive close_{t-1} − D_t
// (cash above the price) makes the rest of the series Null. It allocates
// only when dst must grow.
func (d *Dataset) AppendTotalReturn(dst []TRPoint, a *Asset, bars []Bar, net bool) []TRPoint {
	if len(bars) == 0 {
		return dst
	}
	cash := d.ExCash(a)
	// The cash of bars[0] goes ex after the session before it; the first
	// session of the history has none.
	from := bars[0].Date
	if k := a.DayIndex(bars[0].Date - 1); k >= 0 {
		from = a.Daily.Dates[k]
	}
	j := sort.Search(len(cash), func(k int) bool { return cash[k].PriorEx >= from })
	base, f0, last := Null, Null, Null // B, F of the base session, the last close
	pending := Num(0)                  // cash since the last close
	for i := range bars {
		b := &bars[i]
		dv := Num(0)
		for ; j < len(cash) && cash[j].PriorEx < b.Date; j++ {
			v := cash[j].Gross
			if net {
				v = cash[j].Net
			}
			dv = addCash(dv, v)
		}
		p := TRPoint{Date: b.Date, Close: b.Close, Cash: dv, Index: Null}
		switch {
		case !b.Close.Valid() || !b.Factor.Valid() || b.Factor == 0:
			if last.Valid() {
				pending = addCash(pending, dv)
			}
		case !last.Valid():
			if !base.Valid() && !f0.Valid() { // the first close: the base
				base, f0 = b.Close, b.Factor
				p.Index = 1
			}
			last, pending = b.Close, 0
		default:
			if pending = addCash(pending, dv); pending != 0 && base.Valid() {
				if ex := Diff(last, pending); ex > 0 {
					base *= ex / last
				} else {
					base = Null
				}
			}
			idx := b.Close / base
			if b.Factor != f0 {
				idx = b.Close * (f0 / b.Factor) / base
			}
			p.Index = idx
			last, pending = b.Close, 0
		}
		dst = append(dst, p)
	}
	return dst
}

// addCash returns sum + v, the float nearest the exact decimal sum (Sum),
// without Sum's work in the common case of no cash.
func addCash(sum, v Num) Num {
	switch {
	case v == 0:
		return sum
	case sum == 0:
		return v
	}
	return Sum(sum, v)
}
