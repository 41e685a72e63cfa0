package engine

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
)

// CashEvent is one version of a cash action with what Build derives for
// it. The embedded CashAction is the source and is never modified.
type CashEvent struct {
	*CashAction
	// Issuer is the announcing company.
	Issuer *Issuer
	// Factor is the adjustment factor F(prior_ex_date) of the action's
	// ticker (see AdjustmentFactor): adjusted value = value / Factor. It is
	// 1 when the ticker has no later share event or no price history, and
	// Null when prior_ex_date is missing.
	Factor Num
	// Current is true for the current version of the event (EventID; an
	// action without EventID is its own event): its highest version, of
	// two rows with one version the later published (see
	// CompareCashVersions).
	Current bool
	// superseded is true when a version of the event ranks after this
	// one: supersededAt is then meaningful (it is 0, the zero time, when
	// that version has no publish date).
	superseded bool
	// asset is the position of the action's asset in Dataset.Assets (-1
	// when it has none): the adjustment events CashFactorAt reads.
	asset int32
	// supersededAt is the earliest publication of a version of the event
	// ranking after this one (CompareCashVersions, then the row; see
	// superseded): the version is the event's current one at t when it
	// is published by t and not superseded, or supersededAt is after t
	// (CurrentAt), with no scan of the other versions.
	supersededAt Stamp
}

// Value returns the gross value per share, DeclaredValue +
// MonetaryCorrection (a missing correction counts as 0), BRL.
func (e *CashEvent) Value() Num { return grossValue(e.DeclaredValue, e.MonetaryCorrection) }

// Adjust returns v / Factor: a BRL-per-share amount of this action in the
// current share base (Null when v or Factor is missing), the float nearest
// to the exact quotient of the two decimals (see Quo).
func (e *CashEvent) Adjust(v Num) Num { return Quo(v, e.Factor) }

// InstallmentValue returns an installment's gross value (declared +
// correction), BRL per share.
func InstallmentValue(in *Installment) Num {
	return grossValue(in.DeclaredValue, in.MonetaryCorrection)
}

func grossValue(declared, correction Num) Num {
	if !declared.Valid() {
		return Null
	}
	if !correction.Valid() {
		return declared
	}
	return Sum(declared, correction)
}

func (b *builder) buildCash() error {
	u, d := b.u, b.d
	d.cash = make([]CashEvent, len(u.CashActions))
	// Per event: its current row (the last by CompareCashVersions), its
	// first row and whether it has more than one row.
	type event struct {
		latest int32
		first  int32
		multi  bool
	}
	events := make(map[string]event, len(u.CashActions))
	for i := range u.CashActions {
		ca := &u.CashActions[i]
		is, err := b.issuerOf(ca.CompanyID, func() string { return "cash action " + ca.ID })
		if err != nil {
			return err
		}
		e := CashEvent{CashAction: ca, Issuer: is, Factor: 1, asset: -1}
		if ai, ok := b.assetOf(ca.Ticker, ca.ISIN); ok {
			e.asset = ai
		}
		if !ca.PriorExDate.Valid() {
			e.Factor = Null
		} else if e.asset >= 0 {
			e.Factor = d.assets[e.asset].adj.at(ca.PriorExDate)
		}
		d.cash[i] = e
		k := eventKey(ca)
		if ev, ok := events[k]; !ok {
			events[k] = event{latest: int32(i), first: int32(i)}
		} else {
			if CompareCashVersions(ca, &u.CashActions[ev.latest]) >= 0 {
				ev.latest = int32(i)
			}
			ev.multi = true
			events[k] = ev
		}
	}
	// The rows of the events with more than one version, by first row:
	// each version's supersededAt is the earliest publication of a row
	// after it (CompareCashVersions, then the row).
	var multi map[int32][]int32
	for i := range d.cash {
		e := &d.cash[i]
		ev := events[eventKey(e.CashAction)]
		e.Current = int32(i) == ev.latest
		if ev.multi {
			if multi == nil {
				multi = map[int32][]int32{}
			}
			multi[ev.first] = append(multi[ev.first], int32(i))
		}
	}
	for _, rows := range multi {
		for _, i := range rows {
			e := &d.cash[i]
			for _, j := range rows {
				o := &d.cash[j]
				if c := CompareCashVersions(o.CashAction, e.CashAction); c < 0 || c == 0 && j <= i {
					continue
				}
				if s := StampOf(o.PublishDate); !e.superseded || s.Compare(e.supersededAt) < 0 {
					e.supersededAt, e.superseded = s, true
				}
			}
		}
	}
	// The comparison stops at the first difference (cmp.Or would compare
	// every string each time: it was most of the load's sorting time).
	slices.SortFunc(d.cash, func(x, y CashEvent) int {
		if c := cmp.Compare(y.PriorExDate, x.PriorExDate); c != 0 {
			return c
		}
		if c := strings.Compare(x.CompanyID, y.CompanyID); c != 0 {
			return c
		}
		if c := strings.Compare(x.Ticker, y.Ticker); c != 0 {
			return c
		}
		if c := strings.Compare(x.EventID, y.EventID); c != 0 {
			return c
		}
		if c := cmp.Compare(y.Version, x.Version); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	// By payment date, then row: each row's date and row packed in one
	// integer (the sign bit of the date flipped, so that the unsigned
	// order is the dates'), sorted without reaching back into d.cash.
	var byPay []uint64
	for i := range d.cash {
		e := &d.cash[i]
		e.Issuer.CashActions = append(e.Issuer.CashActions, e)
		if e.PaymentDate.Valid() {
			byPay = append(byPay, uint64(uint32(e.PaymentDate)^1<<31)<<32|uint64(i))
		}
	}
	slices.Sort(byPay)
	d.cashByPay = make([]int32, len(byPay))
	for j, k := range byPay {
		d.cashByPay[j] = int32(uint32(k))
	}
	b.buildExCash()
	b.buildTRMarks()
	return nil
}

// CashPaidBetween appends to dst the rows of CashActions() whose payment
// date is within [from, to] (both inclusive; a NoDate bound leaves that
// side open), in CashActions order, and returns the extended slice.
// Actions without a payment date are never included. It answers from an
// index by payment date built once per Dataset and allocates only when dst
// must grow.
func (d *Dataset) CashPaidBetween(dst []int32, from, to Date) []int32 {
	if !to.Valid() {
		to = math.MaxInt32
	}
	if from > to {
		return dst
	}
	ix := d.cashByPay
	lo := sort.Search(len(ix), func(i int) bool { return d.cash[ix[i]].PaymentDate >= from })
	hi := lo + sort.Search(len(ix)-lo, func(i int) bool { return d.cash[ix[lo+i]].PaymentDate > to })
	n := len(dst)
	dst = append(dst, ix[lo:hi]...)
	slices.Sort(dst[n:])
	return dst
}

// CompareCashVersions orders two versions of one cash event: the higher
// Version, then (a source that republished without bumping it, or two
// rows with one number) the later PublishDate, then the greater ID ranks
// after. It returns -1, 0 or +1 as x ranks before, with or after y. Of
// an event's rows the one ranking last is its current version (Current),
// and of the rows published by an instant t the one ranking last is the
// current one at t (CurrentAt); rows ranking alike are ordered by their
// position in Universe.CashActions, the later current.
func CompareCashVersions(x, y *CashAction) int {
	if c := cmp.Compare(x.Version, y.Version); c != 0 {
		return c
	}
	if c := x.PublishDate.Compare(y.PublishDate); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}

func eventKey(ca *CashAction) string {
	if ca.EventID == "" {
		return "\x00" + ca.ID
	}
	return ca.EventID
}
