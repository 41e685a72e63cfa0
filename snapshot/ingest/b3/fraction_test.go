package b3

import (
	"strconv"
	"testing"

	"github.com/pregao/pregao/engine"
)

// A weight is the percentage's digits with the point moved, not a
// division: "10,523" % is 0.10523 exactly as a decimal reads.
func TestPercentFraction(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10,523", "0.10523"}, {"0,112", "0.00112"}, {"100,000", "1"}, {"3,4", "0.034"},
		{"0,001", "0.00001"}, {"12,345678", "0.12345678"}, {"0", "0"},
	} {
		pct, err := ParseNum(c.in)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := strconv.ParseFloat(c.want, 64)
		if got := percentFraction(pct); got != engine.Num(want) {
			t.Errorf("%s %%: %v, want %v (division gives %v)", c.in, float64(got), want, float64(pct/100))
		}
	}
	if got := percentFraction(engine.Null); got.Valid() {
		t.Errorf("null: %v", float64(got))
	}
}
