package engine

import (
	"slices"
	"sort"
	"sync/atomic"
	"unsafe"
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
	d.deferred.wait()
	i := a.Pos()
	if i+1 >= len(d.exCashAt) {
		return nil
	}
	return d.exCash[d.exCashAt[i]:d.exCashAt[i+1]]
}

// buildExCash fills d.exCash and d.exCashAt from d.cash (sorted: prior
// ex date descending first): one ExCash per asset and prior_ex_date with
// a current event, summed with Sum (the float nearest the exact decimal
// sum), in d.cash order.
func (b *builder) buildExCash() {
	d := b.d
	ex := func(e *CashEvent) bool { return e.Current && e.PriorExDate.Valid() && e.asset >= 0 }
	// The rows of each asset, in d.cash order (a counting sort by asset),
	// with what is summed of them: read in d.cash order, which is their
	// order in memory when the Universe's actions are in it (a snapshot
	// of format 6), not asset by asset across the whole array.
	type row struct {
		ex         Date
		gross, net Num
	}
	at := make([]int32, len(d.assets)+1)
	for i := range d.cash {
		if e := &d.cash[i]; ex(e) {
			at[e.asset+1]++
		}
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	rows := make([]row, at[len(at)-1])
	next := slices.Clone(at[:len(at)-1])
	for i := range d.cash {
		if e := &d.cash[i]; ex(e) {
			rows[next[e.asset]] = row{e.PriorExDate, e.Value(), e.NetValue}
			next[e.asset]++
		}
	}
	add := func(sum, v Num) Num {
		if !v.Valid() {
			return sum
		}
		return Sum(sum, v)
	}
	d.exCashAt = make([]int32, len(d.assets)+1)
	if len(rows) > 0 {
		d.exCash = make([]ExCash, 0, len(rows)) // a row each at most
	}
	for a := range d.assets {
		rs := rows[at[a]:at[a+1]]
		// An asset's rows are by prior_ex_date descending: its dates
		// ascending are its runs of one date from the last, each summed
		// in d.cash order.
		for hi := len(rs); hi > 0; {
			lo := hi - 1
			for lo > 0 && rs[lo-1].ex == rs[hi-1].ex {
				lo--
			}
			x := ExCash{PriorEx: rs[lo].ex, Gross: 0, Net: 0}
			for _, r := range rs[lo:hi] {
				x.Gross = add(x.Gross, r.gross)
				x.Net = add(x.Net, r.net)
			}
			d.exCash = append(d.exCash, x)
			hi = lo
		}
		d.exCashAt[a+1] = int32(len(d.exCash))
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
		var dv Num
		if j < len(cash) && cash[j].PriorEx < b.Date { // most sessions have none: no call
			dv, j = exCashBefore(cash, j, b.Date, net)
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
			pending = addCash(pending, dv)
			base = rebase(base, last, pending)
			p.Index = trIndex(b.Close, b.Factor, f0, base)
			last, pending = b.Close, 0
		}
		dst = append(dst, p)
	}
	return dst
}

// exCashBefore sums, in order, the cash (gross, or net of withholding)
// of cash[j:] whose prior-ex session is before d, and returns the sum and
// the index of the first event not summed: the cash a session's close
// goes ex of, in every total-return path.
func exCashBefore(cash []ExCash, j int, d Date, net bool) (Num, int) {
	sum := Num(0)
	for ; j < len(cash) && cash[j].PriorEx < d; j++ {
		v := cash[j].Gross
		if net {
			v = cash[j].Net
		}
		sum = addCash(sum, v)
	}
	return sum, j
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

// The total-return index of each asset, kept with the Dataset. The index
// of a window is close_t × (F_b/F_t) / B_t, B the window's first close b
// rebased at each ex-date after it (AppendTotalReturn): the part that
// does not depend on the window is, per daily row, the cash going ex on
// it (D_t) and the factor the base is multiplied by at a close that
// follows cash (B_t = B_{t-1} × (close_j − P) / close_j, close_j the
// previous close and P the cash since it). Both are kept, gross and net,
// for the rows where they are not nothing (trMark), built once with the
// cash lists (buildTRMarks): a window's series is then one pass over its
// rows' closes and factors, with the same operations in the same order
// as AppendTotalReturn, so the answers are bit for bit the same.

// trMark is one daily row of an asset where its total return does more
// than follow the price: cash goes ex on it, or the base steps there (a
// close after cash: the ex-date's own, or the next one when the ex-date
// has none).
type trMark struct {
	row  int32
	cash [2]Num // D_t, gross and net; 0 when none
	// step is, per method, what the base is multiplied by at this row
	// when the previous close is in the window (always, past the window's
	// first close): (close_j − P) / close_j; 0 when no cash is pending
	// (no step), Null when P ≥ close_j (the base ends: the index is Null
	// from here on).
	step [2]Num
}

// trMarksOf returns the marks of a, row ascending: made from d's own
// asset at a's position on the first call for it (a Dataset's daily rows,
// factors and ex-cash do not change once built), and kept. Making them at
// open instead read the dates and closes of every asset with cash, most
// of a mapped snapshot's daily columns.
func (d *Dataset) trMarksOf(a *Asset) []trMark {
	d.deferred.wait()
	i := a.Pos()
	if i < 0 || i >= len(d.trMarks) {
		return nil
	}
	if p := d.trMarks[i].Load(); p != nil {
		return *p
	}
	own := &d.assets[i]
	marks, _ := appendTRMarks(nil, nil, own, d.ExCash(own))
	marks = slices.Clip(marks)
	if d.trMarks[i].CompareAndSwap(nil, &marks) {
		return marks
	}
	return *d.trMarks[i].Load()
}

// TRIndexBytes returns the bytes the Dataset keeps for the total-return
// index of its assets (the marks: cash and base steps, gross and net)
// made so far (none while the deferred kinds are awaited: it does not
// wait).
func (d *Dataset) TRIndexBytes() int64 {
	if d.Deferred() {
		return 0
	}
	n := int64(len(d.trMarks)) * int64(unsafe.Sizeof(atomic.Pointer[[]trMark]{}))
	for i := range d.trMarks {
		if p := d.trMarks[i].Load(); p != nil {
			n += int64(cap(*p))*int64(unsafe.Sizeof(trMark{})) + int64(unsafe.Sizeof(*p))
		}
	}
	return n
}

// buildTRMarks makes room for the marks of every asset, made on first
// use (trMarksOf) from the ex-cash (buildExCash), the daily rows and the
// adjustment factors: for each asset, the rows its ExCash goes ex on
// (the first session after the prior_ex_date; cash whose prior_ex_date
// is before the first session or on or after the last is not in a row)
// and the steps of the base, as AppendTotalReturn over the whole history
// computes them.
func (b *builder) buildTRMarks() {
	b.d.trMarks = make([]atomic.Pointer[[]trMark], len(b.d.assets))
}

// appendTRMarks appends the marks of a, whose ex-cash is cash, to dst;
// scratch is reused across calls (returned, grown).
func appendTRMarks(dst, scratch []trMark, a *Asset, cash []ExCash) ([]trMark, []trMark) {
	s := a.Daily
	n := s.Len()
	if n < 2 || len(cash) == 0 {
		return dst, scratch
	}
	start := len(dst)
	// The cash of each row: ExCash whose prior_ex_date is in
	// [Dates[r-1], Dates[r]), summed in order as AppendTotalReturn sums it.
	j := sort.Search(len(cash), func(k int) bool { return cash[k].PriorEx >= s.Dates[0] })
	for j < len(cash) {
		r := sort.Search(n, func(k int) bool { return s.Dates[k] > cash[j].PriorEx })
		if r >= n {
			break // ex after the last session: the live session's, if any
		}
		m := trMark{row: int32(r)}
		for ; j < len(cash) && cash[j].PriorEx < s.Dates[r]; j++ {
			m.cash[0] = addCash(m.cash[0], cash[j].Gross)
			m.cash[1] = addCash(m.cash[1], cash[j].Net)
		}
		dst = append(dst, m)
	}
	// The steps: at each close after cash, from the previous close. A
	// close without a mark gets one when a step falls on it.
	cashMarks := append(scratch[:0], dst[start:]...)
	dst = dst[:start]
	last := Null
	var pending [2]Num
	ci := 0
	f := factorWalker{adj: &a.adj}
	for r := 0; r < n; r++ {
		var m trMark
		has := ci < len(cashMarks) && int(cashMarks[ci].row) == r
		if has {
			m = cashMarks[ci]
			ci++
		} else if pending == [2]Num{} {
			// Nothing pending and no cash: nothing to mark; skip ahead to
			// the row before the next cash, keeping the last close.
			next := n
			if ci < len(cashMarks) {
				next = int(cashMarks[ci].row)
			}
			if next-1 > r {
				for k := next - 1; k >= r; k-- {
					if c := s.Close(k); c.Valid() {
						if fk := a.adj.at(s.Dates[k]); fk.Valid() && fk != 0 {
							last = c
							break
						}
					}
				}
				r = next - 1
				continue
			}
		}
		m.row = int32(r)
		c, fr := s.Close(r), f.at(s.Dates[r])
		if !c.Valid() || !fr.Valid() || fr == 0 {
			if last.Valid() {
				pending[0] = addCash(pending[0], m.cash[0])
				pending[1] = addCash(pending[1], m.cash[1])
			}
			if has {
				dst = append(dst, m)
			}
			continue
		}
		if last.Valid() {
			for k := range 2 {
				p := addCash(pending[k], m.cash[k])
				if p == 0 {
					continue
				}
				if ex := Diff(last, p); ex > 0 {
					m.step[k] = ex / last
				} else {
					m.step[k] = Null
				}
			}
		}
		if has || m.step != [2]Num{} {
			dst = append(dst, m)
		}
		last, pending = c, [2]Num{}
	}
	return dst, cashMarks
}

// factorWalker returns F(d) for dates ascending, walking the steps as
// AppendDaily does.
type factorWalker struct {
	adj *steps
	k   int
}

func (w *factorWalker) at(d Date) Num {
	for w.k < len(w.adj.dates) && w.adj.dates[w.k] < d {
		w.k++
	}
	if w.k < len(w.adj.dates) {
		return w.adj.cum[w.k]
	}
	return 1
}

// AppendTotalReturnRows appends to dst the total-return series of a over
// its daily rows [lo, hi) and then, when extra is not nil, over extra
// (the live session's unadjusted daily bar, dated after every row), and
// returns the extended slice: the points AppendTotalReturn gives for
// AppendDaily(lo, hi, unadjusted) followed by *extra, bit for bit, from
// the index kept with the Dataset (the cash and base steps of each row)
// instead of the bars and the ex-cash. The live bar's cash and step are
// computed on top, from ExCash. It allocates only when dst must grow.
func (d *Dataset) AppendTotalReturnRows(dst []TRPoint, a *Asset, lo, hi int, extra *Bar, net bool) []TRPoint {
	s := a.Daily
	lo, hi = clamp(lo, hi, s.Len())
	m := 0
	if net {
		m = 1
	}
	marks := d.trMarksOf(a)
	mi := sort.Search(len(marks), func(k int) bool { return int(marks[k].row) >= lo })
	f := factorWalker{adj: &a.adj}
	if lo < hi {
		f.k = sort.Search(len(a.adj.dates), func(k int) bool { return a.adj.dates[k] >= s.Dates[lo] })
	}
	base, f0, last := Null, Null, Null
	lastRow := -1
	for r := lo; r < hi; r++ {
		dt := s.Dates[r]
		c, fr := s.Close(r), f.at(dt)
		p := TRPoint{Date: dt, Close: c, Cash: 0, Index: Null}
		step := Num(0)
		if mi < len(marks) && int(marks[mi].row) == r {
			p.Cash, step = marks[mi].cash[m], marks[mi].step[m]
			mi++
		}
		switch {
		case !c.Valid() || !fr.Valid() || fr == 0:
		case !last.Valid():
			base, f0, p.Index = c, fr, 1
			last, lastRow = c, r
		default:
			if step != 0 && base.Valid() {
				if step.Valid() {
					base *= step
				} else {
					base = Null
				}
			}
			p.Index = trIndex(c, fr, f0, base)
			last, lastRow = c, r
		}
		dst = append(dst, p)
	}
	if extra == nil {
		return dst
	}
	// The live bar: its cash goes ex after the session before it, the
	// window's last row (as in AppendTotalReturn over the rows and it).
	cash := d.ExCash(a)
	from := extra.Date
	if hi > lo {
		from = s.Dates[hi-1]
	} else if k := a.DayIndex(extra.Date - 1); k >= 0 {
		from = s.Dates[k]
	}
	dv, _ := exCashBefore(cash, sort.Search(len(cash), func(k int) bool { return cash[k].PriorEx >= from }), extra.Date, net)
	p := TRPoint{Date: extra.Date, Close: extra.Close, Cash: dv, Index: Null}
	switch {
	case !extra.Close.Valid() || !extra.Factor.Valid() || extra.Factor == 0:
	case !last.Valid():
		p.Index = 1
	default:
		// The cash pending since the last close: the rows after it, in
		// the window, then the live bar's.
		pending := Num(0)
		for k := sort.Search(len(marks), func(k int) bool { return int(marks[k].row) > lastRow }); k < len(marks) && int(marks[k].row) < hi; k++ {
			pending = addCash(pending, marks[k].cash[m])
		}
		pending = addCash(pending, dv)
		p.Index = trIndex(extra.Close, extra.Factor, f0, rebase(base, last, pending))
	}
	return append(dst, p)
}

// rebase returns the index's base once cash of pending BRL a share goes
// ex after a close of last: scaled by the theoretical ex price over the
// close (B3's reinvestment), Null when the cash is the whole close or
// more; base as it is without cash or without a base.
func rebase(base, last, pending Num) Num {
	if pending == 0 || !base.Valid() {
		return base
	}
	if ex := Diff(last, pending); ex > 0 {
		return base * (ex / last)
	}
	return Null
}

// trIndex returns the total-return index of a close of factor F on base:
// close / base, the close brought to the first session's factor f0 when
// a share event came between.
func trIndex(close, factor, f0, base Num) Num {
	if factor != f0 {
		return close * (f0 / factor) / base
	}
	return close / base
}
