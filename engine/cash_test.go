package engine

import (
	"slices"
	"testing"
)

func TestCashPaidBetween(t *testing.T) {
	u := testUniverse(t)
	pays := []Date{d(5), NoDate, d(3), d(5), d(9), Date(-400)} // -400: a date before 1970
	for i := range u.CashActions {
		u.CashActions[i].PaymentDate = pays[i%len(pays)]
	}
	ds := mustBuild(t, u)
	evs := ds.CashActions()
	// linear is the definition: a scan of every action.
	linear := func(from, to Date) []int32 {
		var out []int32
		for i := range evs {
			p := evs[i].PaymentDate
			if p.Valid() && (!from.Valid() || p >= from) && (!to.Valid() || p <= to) {
				out = append(out, int32(i))
			}
		}
		return out
	}
	bounds := []Date{NoDate}
	for i := -1; i <= 11; i++ {
		bounds = append(bounds, d(i))
	}
	seen := 0
	for _, from := range bounds {
		for _, to := range bounds {
			got := ds.CashPaidBetween([]int32{-7}, from, to)
			if got[0] != -7 {
				t.Fatalf("dst prefix overwritten: %v", got)
			}
			want := linear(from, to)
			if !slices.Equal(got[1:], want) {
				t.Errorf("CashPaidBetween(%v, %v) = %v, want %v", from, to, got[1:], want)
			}
			seen += len(want)
		}
	}
	if seen == 0 {
		t.Fatal("no range matched any action")
	}
	buf := make([]int32, 0, len(evs))
	if n := testing.AllocsPerRun(100, func() { buf = ds.CashPaidBetween(buf[:0], d(3), d(6)) }); n > 0 {
		t.Errorf("CashPaidBetween allocates %v", n)
	}
}
