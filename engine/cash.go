package engine

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"
	"unsafe"
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
	if !correction.Valid() || correction == 0 && declared != 0 {
		// Sum(declared, ±0) is declared, but for a declared -0; most
		// actions have no correction.
		return declared
	}
	return Sum(declared, correction)
}

func (b *builder) buildCash() error {
	u, d := b.u, b.d
	d.cash = make([]CashEvent, len(u.CashActions))
	// The rows' company ids and tickers are mostly a few strings each
	// held once (a snapshot interns them): their lookups are remembered
	// by where the string lies.
	issuers, tickers := newStrMemo(len(d.issuers)), newStrMemo(len(d.assets))
	for i := range u.CashActions {
		ca := &u.CashActions[i]
		// Interned: the same string, at the same place, for every action
		// of one company or ticker.
		company, ticker, isin := ca.CompanyID.String(), ca.Ticker.String(), ca.ISIN.String()
		k, ok := issuers.get(company)
		if !ok {
			var err error
			if k, err = b.issuerIdx(company, func() string { return "cash action " + ca.ID }); err != nil {
				return err
			}
			issuers.put(company, k)
		}
		e := CashEvent{CashAction: ca, Issuer: &d.issuers[k], Factor: 1, asset: -1}
		if ticker != "" {
			if ai, ok := tickers.get(ticker); ok {
				e.asset = ai
			} else if ai, ok := d.assetByTicker.Get(ticker); ok {
				e.asset = ai
				tickers.put(ticker, ai)
			}
		}
		if e.asset < 0 && isin != "" { // as assetOf: the ticker's asset, else the ISIN's
			if ai, ok := d.assetByISIN[isin]; ok {
				e.asset = ai
			}
		}
		if !ca.PriorExDate.Valid() {
			e.Factor = Null
		} else if e.asset >= 0 {
			e.Factor = d.assets[e.asset].adj.at(ca.PriorExDate)
		}
		d.cash[i] = e
	}
	setVersions(d.cash)
	// A snapshot of format 6 stores the rows in this order already, and
	// its load has checked it (BuildOptions.CashSorted): neither a check
	// nor a sort. Otherwise a check first (on sorted rows the sort moves
	// nothing).
	if !b.cashSorted && !isSorted(u.CashActions, CompareCashRows) {
		slices.SortFunc(d.cash, func(x, y CashEvent) int { return CompareCashRows(x.CashAction, y.CashAction) })
	}
	// The ex-cash of the total return and its marks read only the rows
	// (d.cash, now in order and with their versions) and write only
	// d.exCash, d.exCashAt and d.trMarks; what follows reads the rows too
	// and writes only the issuers' cash lists and d.cashByPay: the two
	// run beside each other.
	waitEx := b.beside(func(b *builder) error {
		b.buildExCash()
		b.buildTRMarks()
		return nil
	})
	// By payment date, then row: each row's date and row packed in one
	// integer (the sign bit of the date flipped, so that the unsigned
	// order is the dates'), made in row order and sorted by the date.
	var byPay []uint64
	for i := range d.cash {
		e := &d.cash[i]
		e.Issuer.cashActions = append(e.Issuer.cashActions, e)
		if e.PaymentDate.Valid() {
			byPay = append(byPay, uint64(uint32(e.PaymentDate)^1<<31)<<32|uint64(i))
		}
	}
	sortHigh32(byPay)
	d.cashByPay = make([]int32, len(byPay))
	for j, k := range byPay {
		d.cashByPay[j] = int32(uint32(k))
	}
	return waitEx()
}

// strMemo remembers the answer of a lookup by string for strings seen
// before, by where their bytes lie (a string whose bytes lie where an
// earlier one's did, as long, holds the same bytes while both live): a
// direct-mapped table, an answer replacing the one in its slot. Only
// found answers are put.
type strMemo struct {
	slots []memoSlot
	shift uint
}

type memoSlot struct {
	p *byte
	n int
	v int32
}

// newStrMemo returns a strMemo for about n distinct strings.
func newStrMemo(n int) *strMemo {
	bits := uint(8)
	for bits < 20 && 1<<bits < 2*n {
		bits++
	}
	return &strMemo{slots: make([]memoSlot, 1<<bits), shift: 64 - bits}
}

func (m *strMemo) slot(s string) *memoSlot {
	h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))) * 0x9e3779b97f4a7c15
	return &m.slots[h>>m.shift]
}

// get returns the answer put for s, if s lies where a string put did.
func (m *strMemo) get(s string) (int32, bool) {
	if s == "" {
		return 0, false
	}
	e := m.slot(s)
	if e.p != unsafe.StringData(s) || e.n != len(s) {
		return 0, false
	}
	return e.v, true
}

// put remembers v as the answer for s (not empty).
func (m *strMemo) put(s string, v int32) {
	if s == "" {
		return
	}
	e := m.slot(s)
	e.p, e.n, e.v = unsafe.StringData(s), len(s), v
}

// setVersions sets Current, superseded and supersededAt of every row of
// cash (in Universe.CashActions order): the rows are grouped by event
// (sameEvent) through a hash of the key sorted with the rows, not a map
// of the keys.
func setVersions(cash []CashEvent) {
	keys := make([]uint64, len(cash))
	var h maphash.Hash
	h.SetSeed(eventSeed)
	for i := range cash {
		keys[i] = eventHash(&h, cash[i].CashAction)<<32 | uint64(i)
	}
	sortHigh32(keys) // stable: each run of one hash is in row order
	var rows []int32
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>32 == keys[lo]>>32 {
			hi++
		}
		if hi == lo+1 { // an event of one row (the usual case)
			cash[uint32(keys[lo])].Current = true
			lo = hi
			continue
		}
		// The run's events (more than one only when two keys share the
		// hash), each with its rows in row order.
		run := keys[lo:hi]
		for k, key := range run {
			if key == taken {
				continue // a row of an event before
			}
			first := cash[uint32(key)].CashAction
			rows = rows[:0]
			for j := k; j < len(run); j++ {
				if run[j] != taken && sameEvent(cash[uint32(run[j])].CashAction, first) {
					rows = append(rows, int32(uint32(run[j])))
					run[j] = taken
				}
			}
			setEventVersions(cash, rows)
		}
		lo = hi
	}
}

// setEventVersions sets the versions of the event whose rows (ascending)
// are rows: the current one is the last by CompareCashVersions (of rows
// ranking alike, the later); each version's supersededAt is the earliest
// publication of a row after it (CompareCashVersions, then the row).
func setEventVersions(cash []CashEvent, rows []int32) {
	latest := rows[0]
	for _, i := range rows[1:] {
		if CompareCashVersions(cash[i].CashAction, cash[latest].CashAction) >= 0 {
			latest = i
		}
	}
	cash[latest].Current = true
	if len(rows) == 1 {
		return
	}
	for _, i := range rows {
		e := &cash[i]
		for _, j := range rows {
			o := &cash[j]
			if c := CompareCashVersions(o.CashAction, e.CashAction); c < 0 || c == 0 && j <= i {
				continue
			}
			if s := o.PublishDate; !e.superseded || s.Compare(e.supersededAt) < 0 {
				e.supersededAt, e.superseded = s, true
			}
		}
	}
}

// taken marks a key of setVersions whose row has its event (no key is
// all ones: rows are fewer than 2^32-1).
const taken = math.MaxUint64

// eventSeed seeds the hashes of event keys (any seed groups alike).
var eventSeed = maphash.MakeSeed()

// eventHash returns 32 bits of the hash of ca's event key (sameEvent),
// without building the key.
var eventHash = func(h *maphash.Hash, ca *CashAction) uint64 {
	h.Reset()
	if ca.EventID == "" {
		h.WriteByte(0)
		h.WriteString(ca.ID)
	} else {
		h.WriteString(ca.EventID)
	}
	return h.Sum64() >> 32
}

// sameEvent reports whether x and y are versions of one event: whether
// they have one event key, EventID, or for a row without one "\x00" + ID
// (the row is its own event).
func sameEvent(x, y *CashAction) bool {
	switch {
	case x.EventID != "" && y.EventID != "":
		return x.EventID == y.EventID
	case x.EventID == "" && y.EventID == "":
		return x.ID == y.ID
	case x.EventID == "":
		x, y = y, x
	}
	// x has an event id, y has none: its key is "\x00" + ID.
	return len(x.EventID) == len(y.ID)+1 && x.EventID[0] == 0 && x.EventID[1:] == y.ID
}

// CompareCashRows is the order of Dataset.CashActions, in which a
// snapshot stores its cash actions: prior_ex_date descending, then
// company_id, ticker, event_id, version descending and id. It returns
// -1, 0 or +1 as x comes before, with or after y.
func CompareCashRows(x, y *CashAction) int {
	// The comparison stops at the first difference (cmp.Or would compare
	// every string each time: it was most of the load's sorting time).
	if c := cmp.Compare(y.PriorExDate, x.PriorExDate); c != 0 {
		return c
	}
	if c := compareSyms(x.CompanyID, y.CompanyID); c != 0 {
		return c
	}
	if c := compareSyms(x.Ticker, y.Ticker); c != 0 {
		return c
	}
	if c := strings.Compare(x.EventID, y.EventID); c != 0 {
		return c
	}
	if c := cmp.Compare(y.Version, x.Version); c != 0 {
		return c
	}
	return strings.Compare(x.ID, y.ID)
}

// compareSyms orders Syms as their strings (strings.Compare), one Sym
// being one string.
func compareSyms(a, b Sym) int {
	if a == b {
		return 0
	}
	return strings.Compare(a.String(), b.String())
}

// sortHigh32 sorts keys by their upper 32 bits, stably (a radix sort of
// two passes): keys made in the order of their lower bits end sorted as
// wholes.
func sortHigh32(keys []uint64) {
	if len(keys) < 256 {
		slices.SortStableFunc(keys, func(x, y uint64) int { return cmp.Compare(x>>32, y>>32) })
		return
	}
	tmp := make([]uint64, len(keys))
	count := make([]int, 1<<16)
	src, dst := keys, tmp
	for shift := 32; shift < 64; shift += 16 {
		clear(count)
		for _, k := range src {
			count[uint16(k>>shift)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, k := range src {
			b := uint16(k >> shift)
			dst[count[b]] = k
			count[b]++
		}
		src, dst = dst, src
	}
	// Two passes: the sorted keys are back in keys.
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
	d.deferred.wait()
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
