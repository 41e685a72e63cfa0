package engine

import (
	"fmt"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestSortHigh32(t *testing.T) {
	for _, n := range []int{0, 1, 2, 255, 256, 1000, 70000} {
		for _, spread := range []uint32{1, 3, 1 << 16, 1<<32 - 1} {
			r := rand.New(rand.NewPCG(uint64(n), uint64(spread)))
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = uint64(r.Uint32N(spread)+(1<<31))<<32 | uint64(i)
			}
			want := slices.Clone(keys)
			slices.Sort(want) // rows ascending within a high half: the stable order
			sortHigh32(keys)
			if !slices.Equal(keys, want) {
				t.Errorf("n %d, spread %d: not the stable order", n, spread)
			}
		}
	}
}

func TestSameEvent(t *testing.T) {
	for _, c := range []struct {
		xe, xid, ye, yid string
		want             bool
	}{
		{"E1", "a", "E1", "b", true},
		{"E1", "a", "E2", "a", false},
		{"", "a", "", "a", true},
		{"", "a", "", "b", false},
		{"", "a", "\x00a", "z", true}, // the key of a row without event id
		{"\x00a", "z", "", "a", true},
		{"\x00b", "z", "", "a", false},
		{"xa", "z", "", "a", false},
		{"", "a", "E1", "a", false},
		{"", "", "\x00", "q", true},
		{"", "", "", "", true},
	} {
		x := &CashAction{EventID: c.xe, ID: c.xid}
		y := &CashAction{EventID: c.ye, ID: c.yid}
		if got := sameEvent(x, y); got != c.want {
			t.Errorf("sameEvent(%q/%q, %q/%q) = %v, want %v", c.xe, c.xid, c.ye, c.yid, got, c.want)
		}
	}
}

// versionsByMap is setVersions as Build computed it with a map of the
// event keys: the definition the grouping by hashes must match.
func versionsByMap(cash []CashEvent) {
	key := func(ca *CashAction) string {
		if ca.EventID == "" {
			return "\x00" + ca.ID
		}
		return ca.EventID
	}
	type event struct {
		latest, first int32
		multi         bool
	}
	events := map[string]event{}
	for i := range cash {
		k := key(cash[i].CashAction)
		if ev, ok := events[k]; !ok {
			events[k] = event{latest: int32(i), first: int32(i)}
		} else {
			if CompareCashVersions(cash[i].CashAction, cash[ev.latest].CashAction) >= 0 {
				ev.latest = int32(i)
			}
			ev.multi = true
			events[k] = ev
		}
	}
	multi := map[int32][]int32{}
	for i := range cash {
		ev := events[key(cash[i].CashAction)]
		cash[i].Current = int32(i) == ev.latest
		if ev.multi {
			multi[ev.first] = append(multi[ev.first], int32(i))
		}
	}
	for _, rows := range multi {
		for _, i := range rows {
			e := &cash[i]
			for _, j := range rows {
				o := &cash[j]
				if c := CompareCashVersions(o.CashAction, e.CashAction); c < 0 || c == 0 && j <= i {
					continue
				}
				if s := StampOf(o.PublishDate.Time()); !e.superseded || s.Compare(e.supersededAt) < 0 {
					e.supersededAt, e.superseded = s, true
				}
			}
		}
	}
}

func TestSetVersions(t *testing.T) {
	t0 := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	random := func(seed uint64, n int) []CashAction {
		r := rand.New(rand.NewPCG(seed, 7))
		out := make([]CashAction, n)
		for i := range out {
			a := &out[i]
			if r.IntN(4) > 0 {
				a.EventID = fmt.Sprintf("E%d", r.IntN(n/2+1))
			}
			if r.IntN(10) == 0 {
				a.EventID = "\x00" + fmt.Sprint(r.IntN(n/2+1)) // a key like a row's without event id
			}
			a.ID = fmt.Sprint(r.IntN(n/2 + 1)) // ids repeat: rows ranking alike
			a.Version = r.IntN(3)
			if r.IntN(5) > 0 {
				a.PublishDate = StampOf(t0.Add(time.Duration(r.IntN(4)) * time.Hour))
			}
		}
		return out
	}
	orig := eventHash
	hashes := map[string]func(*maphash.Hash, *CashAction) uint64{
		"hash":       orig,
		"collisions": func(*maphash.Hash, *CashAction) uint64 { return 7 }, // every key one run
		"few":        func(h *maphash.Hash, ca *CashAction) uint64 { return orig(h, ca) & 3 },
	}
	for name, hash := range hashes {
		t.Run(name, func(t *testing.T) {
			defer func(h func(*maphash.Hash, *CashAction) uint64) { eventHash = h }(eventHash)
			eventHash = hash
			for seed := range uint64(40) {
				acts := random(seed, 1+int(seed)*13)
				got := make([]CashEvent, len(acts))
				want := make([]CashEvent, len(acts))
				for i := range acts {
					got[i].CashAction, want[i].CashAction = &acts[i], &acts[i]
				}
				setVersions(got)
				versionsByMap(want)
				for i := range got {
					g, w := got[i], want[i]
					if g.Current != w.Current || g.superseded != w.superseded || g.supersededAt != w.supersededAt {
						t.Fatalf("seed %d, row %d (%q %q v%d): current %v superseded %v at %v, want %v %v %v", seed, i,
							acts[i].EventID, acts[i].ID, acts[i].Version, g.Current, g.superseded, g.supersededAt, w.Current, w.superseded, w.supersededAt)
					}
				}
			}
		})
	}
}

func TestCompareCashRowsIsBuildOrder(t *testing.T) {
	u := testUniverse(t)
	ds := mustBuild(t, u)
	evs := ds.CashActions()
	if !slices.IsSortedFunc(evs, func(x, y CashEvent) int { return CompareCashRows(x.CashAction, y.CashAction) }) {
		t.Fatal("CashActions are not in CompareCashRows order")
	}
}

// exCashBySort is buildExCash as Build computed it with a stable sort of
// the rows by asset and prior_ex_date: the definition the counting by
// asset must match, bit for bit.
func exCashBySort(d *Dataset) ([]ExCash, []int32) {
	type row struct {
		asset int32
		ev    *CashEvent
	}
	var rows []row
	for i := range d.cash {
		e := &d.cash[i]
		if e.Current && e.PriorExDate.Valid() && e.asset >= 0 {
			rows = append(rows, row{e.asset, e})
		}
	}
	slices.SortStableFunc(rows, func(x, y row) int {
		if x.asset != y.asset {
			return int(x.asset - y.asset)
		}
		return int(x.ev.PriorExDate) - int(y.ev.PriorExDate)
	})
	at := make([]int32, len(d.assets)+1)
	var out []ExCash
	add := func(sum, v Num) Num {
		if !v.Valid() {
			return sum
		}
		return Sum(sum, v)
	}
	last := int32(-1)
	for _, r := range rows {
		n := len(out)
		if r.asset != last || out[n-1].PriorEx != r.ev.PriorExDate {
			out = append(out, ExCash{PriorEx: r.ev.PriorExDate})
			at[r.asset+1]++
			last = r.asset
			n++
		}
		out[n-1].Gross = add(out[n-1].Gross, r.ev.Value())
		out[n-1].Net = add(out[n-1].Net, r.ev.NetValue)
	}
	for i := 1; i < len(at); i++ {
		at[i] += at[i-1]
	}
	return out, at
}

// Random cash actions (several rows of one ticker and prior_ex_date,
// values that sum inexactly, missing values and dates, versions)
// give the ex-cash of the stable sort, and a universe whose actions are
// in CompareCashRows order already gives the same Dataset as shuffled.
func TestExCashRandom(t *testing.T) {
	tickers := []string{"PETR4", "PETR3", "VALE3", "SPUN3", "VIIA3", "VVAR3", "HGLG11", "NOPE3"}
	owner := map[string]string{"PETR4": petroID, "PETR3": petroID, "VALE3": valeID, "SPUN3": spunID, "VIIA3": viaID, "VVAR3": viaID, "HGLG11": fundID, "NOPE3": valeID}
	vals := []Num{0.1, 0.2, 0.3, 1.0 / 3, 7.25, Null, 0}
	for seed := range uint64(30) {
		r := rand.New(rand.NewPCG(seed, 11))
		u := testUniverse(t)
		u.CashActions = nil
		for i := range 5 + int(seed)*7 {
			tk := tickers[r.IntN(len(tickers))]
			a := CashAction{
				ID: fmt.Sprintf("r%d", i), EventID: fmt.Sprintf("e%d", r.IntN(int(seed)*3+4)), Version: r.IntN(3),
				CompanyID: Intern(owner[tk]), Ticker: Intern(tk), PriorExDate: d(r.IntN(6) - 1),
				DeclaredValue: vals[r.IntN(len(vals))], MonetaryCorrection: vals[r.IntN(len(vals))], NetValue: vals[r.IntN(len(vals))],
				PaymentDate: d(r.IntN(9)),
			}
			if r.IntN(8) == 0 {
				a.PriorExDate = NoDate
			}
			u.CashActions = append(u.CashActions, a)
		}
		ds := mustBuild(t, u)
		want, wantAt := exCashBySort(ds)
		if !slices.Equal(ds.exCashAt, wantAt) || len(ds.exCash) != len(want) {
			t.Fatalf("seed %d: exCashAt %v, want %v", seed, ds.exCashAt, wantAt)
		}
		for i := range want {
			g, w := ds.exCash[i], want[i]
			if g.PriorEx != w.PriorEx || math.Float64bits(float64(g.Gross)) != math.Float64bits(float64(w.Gross)) ||
				math.Float64bits(float64(g.Net)) != math.Float64bits(float64(w.Net)) {
				t.Fatalf("seed %d: ex-cash %d = %+v, want %+v", seed, i, g, w)
			}
		}
		// In the engine's order already: no sort, the same rows.
		sorted := *u
		sorted.CashActions = slices.Clone(u.CashActions)
		slices.SortFunc(sorted.CashActions, func(x, y CashAction) int { return CompareCashRows(&x, &y) })
		ds2 := mustBuild(t, &sorted)
		for i := range ds.cash {
			x, y := &ds.cash[i], &ds2.cash[i]
			if x.ID != y.ID || x.Current != y.Current || x.superseded != y.superseded || x.supersededAt != y.supersededAt {
				t.Fatalf("seed %d: row %d: %s current %v, sorted input %s current %v", seed, i, x.ID, x.Current, y.ID, y.Current)
			}
		}
		if !slices.Equal(ds.cashByPay, ds2.cashByPay) || !slices.Equal(ds.exCashAt, ds2.exCashAt) {
			t.Fatalf("seed %d: indexes differ with sorted input", seed)
		}
	}
}
