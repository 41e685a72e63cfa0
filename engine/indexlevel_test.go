package engine

import "testing"

// An index's daily levels: Σ quantity × adjusted close ÷ reductor per
// session, none before every member has a price, and none for an index
// without a reductor or a member without a security.
func TestIndexLevels(t *testing.T) {
	u := testUniverse(t)
	u.Indexes = []Index{
		{Symbol: "HAND", AsOf: d(4), Reductor: 4, Members: []IndexMember{
			{Ticker: "HGLG11", TheoreticalQty: 2}, {Ticker: "SPUN3", TheoreticalQty: 10}}},
		{Symbol: "IBOV", AsOf: d(4), Reductor: 0.5, Members: []IndexMember{
			{Ticker: "PETR4", TheoreticalQty: 3}, {Ticker: "PETR3", TheoreticalQty: 7}, {Ticker: "VALE3", TheoreticalQty: 1}}},
		{Symbol: "NORED", AsOf: d(4), Reductor: Null, Members: []IndexMember{{Ticker: "PETR4", TheoreticalQty: 1}}},
		{Symbol: "NOSEC", AsOf: d(4), Reductor: 1, Members: []IndexMember{{Ticker: "PETR4", TheoreticalQty: 1}, {Ticker: "NONE3", TheoreticalQty: 1}}},
		{Symbol: "NOQTY", AsOf: d(4), Reductor: 1, Members: []IndexMember{{Ticker: "PETR4", TheoreticalQty: Null}}},
	}
	ds := mustBuild(t, u)
	for _, sym := range []string{"NORED", "NOSEC", "NOQTY"} {
		ix, _ := ds.Index(sym)
		if ix.HasLevel() {
			t.Errorf("%s: HasLevel", sym)
		}
	}

	// By hand: HGLG11 closes 153, 150 and SPUN3 10, 9 on d3, d4 (no
	// actions); SPUN3 has no price before d3.
	hand, _ := ds.Index("HAND")
	if !hand.HasLevel() {
		t.Fatal("HAND: !HasLevel")
	}
	got := hand.AppendDailyLevels(nil, d(0), d(4))
	want := []struct {
		d     Date
		level Num
	}{{d(3), (2*153 + 10*10) / 4.0}, {d(4), (2*150 + 10*9) / 4.0}}
	if len(got) != len(want) {
		t.Fatalf("HAND: %d points, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		b := got[i]
		if b.Date != w.d || b.Close != w.level || b.Open != w.level || b.Time != int64(w.d)*86400 {
			t.Errorf("HAND point %d: %+v, want %v level %v", i, b, w.d, w.level)
		}
		if b.High.Valid() || b.Low.Valid() || b.Volume.Valid() || b.Quantity.Valid() || b.Factor != 1 {
			t.Errorf("HAND point %d: %+v: high, low, volume, quantity null and factor 1 wanted", i, b)
		}
	}
	if l := hand.LevelOn(d(2)); l.Valid() {
		t.Errorf("HAND LevelOn(d2) = %v, want null", l)
	}

	// Adjusted closes (splits, bonus, spin-off): each session's level is
	// LevelOn's; a window starting later gives the same points.
	ibov, _ := ds.Index("IBOV")
	all := ibov.AppendDailyLevels(nil, d(0), d(4))
	if len(all) != 5 {
		t.Fatalf("IBOV: %d points, want 5", len(all))
	}
	for _, b := range all {
		if l := ibov.LevelOn(b.Date); b.Close != l {
			t.Errorf("IBOV %v: close %v, LevelOn %v", b.Date, b.Close, l)
		}
	}
	if l, want := ibov.LevelOn(d(4)), Num((3*12.6+7*10+1*25)/0.5); l != want {
		t.Errorf("IBOV LevelOn(d4) = %v, want %v", l, want)
	}
	tail := ibov.AppendDailyLevels(nil, d(2), d(3))
	if len(tail) != 2 || tail[0].Time != all[2].Time || tail[0].Close != all[2].Close || tail[1].Time != all[3].Time || tail[1].Open != all[3].Open {
		t.Errorf("IBOV d2..d3: %+v, want %+v", tail, all[2:4])
	}
}
