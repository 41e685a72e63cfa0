package engine

import (
	"fmt"
	"slices"
	"sort"

	"github.com/pregao/pregao/index"
)

// steps is a cumulative-factor step function (see the package
// documentation, "Adjustment factors").
type steps struct {
	dates []Date
	cum   []Num
}

// at returns F(d).
func (s *steps) at(d Date) Num {
	k := index.FirstGE(s.dates, d)
	if k == len(s.dates) {
		return 1
	}
	return s.cum[k]
}

// AdjEvent is one adjustment event of an asset, as applied.
type AdjEvent struct {
	Date   Date         // prior_ex_date: the event adjusts sessions on or before it
	Factor Num          // the event's factor (root or leg, times the received-value part)
	Action *ShareAction // the source action

	// base is the factor without the received-value part (Factor itself
	// when the event has none), and valueAt the session whose close
	// completes that part (the received assets' first session after
	// the prior_ex_date): before that session closed only base was
	// known (CashFactorAt). NoDate when Factor is base.
	base    Num
	valueAt Date
}

// AdjustmentFactor returns F(d): the cumulative adjustment factor of the
// session d (1 when no event is on or after d); adjusted price = price /
// F(d). The rules are in the package documentation ("Adjustment
// factors"). It does not allocate.
func (a *Asset) AdjustmentFactor(d Date) Num { return a.adj.at(d) }

// AdjustmentEvents returns the asset's adjustment events, ascending by
// date.
func (a *Asset) AdjustmentEvents() []AdjEvent { return a.events }

// AdjustmentSteps returns the step function of F: dates ascending and,
// for each, F on every session after the previous date up to this one.
func (a *Asset) AdjustmentSteps() (dates []Date, factors []Num) { return a.adj.dates, a.adj.cum }

// AdjustmentFactor returns F(d) of a ticker (current or former).
func (d *Dataset) AdjustmentFactor(ticker string, day Date) (Num, error) {
	a, ok := d.Asset(ticker)
	if !ok {
		return Null, fmt.Errorf("ticker %q: %w", ticker, ErrNotFound)
	}
	return a.adj.at(day), nil
}

// removesReceivedValue reports whether an action type hands holders
// another asset while they keep the original one, so the original's price
// drops by the value received: both spin-off types and
// CAPITAL_RESTITUTION_IN_SHARES. A merger is not one of them: holders
// exchange the original for the received asset.
func removesReceivedValue(t string) bool {
	return t == ActSpinOff || t == ActSpinOffQuantity || t == ActRestitutionInShares
}

// actionAsset finds the asset a share action adjusts.
func (b *builder) actionAsset(sa *ShareAction) (int32, bool) {
	if i, ok := b.assetOf(sa.Ticker, sa.ISIN); ok {
		return i, true
	}
	if sa.Ticker == "" && sa.ISIN == "" {
		for k := range sa.Legs {
			if sa.Legs[k].LegType == LegOriginal {
				return b.assetOf(sa.Legs[k].Ticker, sa.Legs[k].ISIN)
			}
		}
	}
	return 0, false
}

// eventFactors returns the factor of share action sa on asset ai, its
// base (without the received-value part) and the session whose close
// completes the received-value part (NoDate when there is none).
func (b *builder) eventFactors(sa *ShareAction, ai int32) (f, base Num, valueAt Date, err error) {
	f, err = b.rootFactor(sa, ai)
	if err != nil || !removesReceivedValue(sa.Type) || len(sa.Legs) == 0 {
		return f, f, NoDate, err
	}
	v, at := b.receivedValue(sa, &b.d.assets[ai])
	if at == NoDate {
		return f, f, NoDate, nil
	}
	return f * v, f, at, nil
}

// rootFactor is the factor of share action sa on asset ai without the
// received-value part.
func (b *builder) rootFactor(sa *ShareAction, ai int32) (Num, error) {
	switch sa.Type {
	case ActStockSplit, ActReverseSplit, ActStockBonus:
		if !sa.Factor.Valid() || sa.Factor <= 0 {
			return 0, fmt.Errorf("share action %s %s on %s: factor %v must be positive: %w",
				sa.Type, sa.Ticker, sa.PriorExDate, float64(sa.Factor), ErrInvalid)
		}
		return sa.Factor, nil
	case ActSubscription, ActTotalRedemption:
		return 1, nil
	}
	if len(sa.Legs) == 0 {
		if sa.Factor.Valid() && sa.Factor > 0 {
			return sa.Factor, nil
		}
		return 1, nil
	}
	a := &b.d.assets[ai]
	orig := Num(1)
	var origLeg *Leg
	for k := range sa.Legs {
		l := &sa.Legs[k]
		if l.LegType != LegOriginal {
			continue
		}
		if origLeg == nil || l.ISIN == a.ISIN && l.ISIN != "" || l.Ticker == a.Ticker {
			origLeg = l
		}
	}
	if origLeg != nil && origLeg.Factor.Valid() && origLeg.Factor > 0 {
		orig = origLeg.Factor
	}
	return orig, nil
}

// receivedValue returns P / (P - sum(r_i * P_i)) or 1 (see package
// notes), and the newest session of the P_i used (NoDate when the value
// is 1).
func (b *builder) receivedValue(sa *ShareAction, a *Asset) (Num, Date) {
	b.readAtOpen(a)
	j := index.LastLE(a.Daily.Dates, sa.PriorExDate)
	if j < 0 {
		return 1, NoDate
	}
	p := a.Daily.Close(j)
	if !p.Valid() || p <= 0 {
		return 1, NoDate
	}
	at := NoDate
	sum := Num(0)
	n := 0
	for k := range sa.Legs {
		l := &sa.Legs[k]
		if l.LegType != LegReceived {
			continue
		}
		ri, ok := b.assetOf(l.Ticker, l.ISIN)
		if !ok || !l.Factor.Valid() || l.Factor < 0 {
			return 1, NoDate
		}
		r := &b.d.assets[ri]
		b.readAtOpen(r)
		i := index.FirstGT(r.Daily.Dates, sa.PriorExDate)
		if i >= r.Daily.Len() || !r.Daily.Close(i).Valid() {
			return 1, NoDate
		}
		sum += l.Factor * r.Daily.Close(i)
		at = max(at, r.Daily.Dates[i])
		n++
	}
	if n == 0 || p-sum <= 0 {
		return 1, NoDate
	}
	return p / (p - sum), at
}

// readAtOpen notes that Build reads a's daily bars (beyond their
// summaries): see Dataset.OpenReads.
func (b *builder) readAtOpen(a *Asset) {
	if b.openRead == nil {
		b.openRead = make(map[int32]bool)
	}
	b.openRead[a.pos] = true
}

// OpenReads returns the tickers whose bars Build read at open, beyond
// their summaries, each sorted, each ticker once: daily, those of every
// asset whose history was joined with its former tickers' (its own and
// theirs: the joined rows, and the latest quote made from them) and
// those whose daily closes an adjustment factor took the value of
// received shares from (the adjusted asset's and each received asset's,
// with their former tickers); intraday, those of the joined histories
// (1-minute bars enter no factor). What Build derived from them
// (adjustment factors, the cash actions' factors, joined histories and
// their latest quotes) is served by routes that verify none of their
// blocks, and enters other tickers' adjusted prices: a loader that
// verifies blocks on first use (SetBlocks) verifies these tickers'
// blocks before the Dataset is published. A few tickers for each
// rename and each share action with received shares.
func (d *Dataset) OpenReads() (daily, intraday []string) {
	return d.openDaily, d.openIntraday
}

// setOpenReads makes Dataset.OpenReads from the assets noted by
// readAtOpen and those with former tickers.
func (b *builder) setOpenReads() {
	var daily, intraday []string
	for i := range b.d.assets {
		a := &b.d.assets[i]
		if len(a.Former) > 0 {
			intraday = append(append(intraday, a.Ticker), a.Former...)
		}
		if len(a.Former) > 0 || b.openRead[a.pos] {
			daily = append(append(daily, a.Ticker), a.Former...)
		}
	}
	slices.Sort(daily)
	slices.Sort(intraday)
	b.d.openDaily, b.d.openIntraday = slices.Compact(daily), slices.Compact(intraday)
}

// buildAdjust computes every asset's events and step function.
func (b *builder) buildAdjust() error {
	defer b.setOpenReads()
	u := b.u
	per := make([][]AdjEvent, len(b.d.assets))
	for i := range u.ShareActions {
		sa := &u.ShareActions[i]
		ai, ok := b.actionAsset(sa)
		if !ok {
			continue // an asset without prices: nothing to adjust
		}
		if !sa.PriorExDate.Valid() {
			return fmt.Errorf("share action %s of %s: prior_ex_date missing: %w", sa.Type, sa.Ticker, ErrInvalid)
		}
		f, base, valueAt, err := b.eventFactors(sa, ai)
		if err != nil {
			return err
		}
		if f == 1 {
			continue
		}
		per[ai] = append(per[ai], AdjEvent{Date: sa.PriorExDate, Factor: f, Action: sa, base: base, valueAt: valueAt})
	}
	for ai := range per {
		ev := per[ai]
		if len(ev) == 0 {
			continue
		}
		sort.SliceStable(ev, func(i, j int) bool { return ev[i].Date < ev[j].Date })
		var st steps
		for _, e := range ev {
			if n := len(st.dates); n > 0 && st.dates[n-1] == e.Date {
				st.cum[n-1] *= e.Factor
				continue
			}
			st.dates = append(st.dates, e.Date)
			st.cum = append(st.cum, e.Factor)
		}
		for k := len(st.cum) - 2; k >= 0; k-- {
			st.cum[k] *= st.cum[k+1]
		}
		a := &b.d.assets[ai]
		a.adj = st
		a.events = ev
	}
	return nil
}
