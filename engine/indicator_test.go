package engine

import (
	"strings"
	"testing"
)

func TestClassSuffix(t *testing.T) {
	f := func(class, suffix string) {
		t.Helper()
		if got := ClassSuffix(class); got != suffix {
			t.Errorf("ClassSuffix(%q) = %q, want %q", class, got, suffix)
		}
		if suffix == "" {
			return
		}
		base, c := SplitClassSuffix("PRICE_TO_EARNINGS" + suffix)
		if base != "PRICE_TO_EARNINGS" || c != class {
			t.Errorf("SplitClassSuffix(%q) = %q, %q", "PRICE_TO_EARNINGS"+suffix, base, c)
		}
	}
	f(ClassCS, "_CS")
	f(ClassPS, "_PS")
	f(ClassPSA, "_PSA")
	f(ClassPSB, "_PSB")
	f(ClassPSC, "_PSC")
	f(ClassPSD, "_PSD")
	f(ClassPSE, "_PSE")
	f(ClassUnit, "_UNIT")
	f(ClassBDR, "_BDR")
	f(ClassFundUnit, "")
	f(ClassMacro, "")
	f("", "")

	g := func(id, base, class string) {
		t.Helper()
		if b, c := SplitClassSuffix(id); b != base || c != class {
			t.Errorf("SplitClassSuffix(%q) = %q, %q; want %q, %q", id, b, c, base, class)
		}
	}
	g("DIVIDEND_YIELD_CS", "DIVIDEND_YIELD", "CS")
	g("dividend_yield_unit", "dividend_yield", "UNIT")
	g("EARNINGS_PER_SHARE_PSA", "EARNINGS_PER_SHARE", "PSA")
	g("EBITDA_MARGIN", "EBITDA_MARGIN", "")
	g("_CS", "_CS", "")
	g("", "", "")
	g("P_NAV", "P_NAV", "")
}

func FuzzSplitClassSuffix(f *testing.F) {
	for _, s := range []string{"PRICE_TO_EARNINGS_CS", "X_UNIT", "_PSE", "", "P_NAV", "a_ps", "DIVIDEND_YIELD_psb", "\xff_CS"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		base, class := SplitClassSuffix(id)
		if class == "" {
			if base != id {
				t.Fatalf("unsuffixed %q changed to %q", id, base)
			}
			return
		}
		if !strings.EqualFold(base+ClassSuffix(class), id) || len(base)+len(ClassSuffix(class)) != len(id) {
			t.Fatalf("SplitClassSuffix(%q) = %q, %q does not rebuild the id", id, base, class)
		}
		if b2, c2 := SplitClassSuffix(base + ClassSuffix(class)); b2 != base || c2 != class {
			t.Fatalf("round trip of %q: %q, %q", id, b2, c2)
		}
	})
}

func TestSplitClassSuffixZeroAlloc(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() {
		if b, c := SplitClassSuffix("dividend_yield_psa"); b != "dividend_yield" || c != ClassPSA {
			t.Fatal(b, c)
		}
	}); n > 0 {
		t.Errorf("SplitClassSuffix allocates %v times", n)
	}
}
