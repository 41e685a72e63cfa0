package engine

import "testing"

// TestLabelCompare: Labels sort as their words, whatever their numbers
// (CONSOLIDATED is numbered after INDIVIDUAL).
func TestLabelCompare(t *testing.T) {
	late, _ := LabelOf("AAA_NUMBERED_LAST")
	for _, c := range []struct {
		a, b Label
		want int
	}{
		{LabelConsolidated, LabelIndividual, -1},
		{LabelIndividual, LabelConsolidated, 1},
		{LabelDFP, LabelDFP, 0},
		{late, LabelBPA, -1},
		{LabelDFCMD, LabelDFCMI, -1},
	} {
		if got := c.a.Compare(c.b); got != c.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
