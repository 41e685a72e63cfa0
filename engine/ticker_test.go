package engine

import (
	"regexp"
	"testing"
)

// tickerRule is ValidTicker's rule as its doc comment states it.
var tickerRule = regexp.MustCompile(`^[A-Z0-9]{4}[0-9]{0,2}$`)

// TestValidTicker holds the one ticker rule. The cases marked "API" are
// the ones where the four former copies disagreed: the API's accepted
// the macro series names, which ValidTicker does not (the API accepts
// them beside it, as series names).
func TestValidTicker(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"PETR4", true},
		{"PETR3", true},
		{"TAEE11", true},  // unit
		{"BOVA11", true},  // fund quota
		{"B3SA3", true},   // digit in the root
		{"A1BB34", true},  // BDR
		{"1234", true},    // a root of digits
		{"ABCD", true},    // a bare root
		{"ZZZZ99", true},  // the largest class
		{"PETR4F", false}, // odd lot: F is not stripped
		{"PETR11F", false},
		{"BBFI11B", false}, // receipt
		{"EQMA3B", false},  // subscription right on the OTC market
		{"PETRA245", false},
		{"PETR123", false},
		{"PETR4 ", false},
		{" PETR4", false},
		{"petr4", false},
		{"Petr4", false},
		{"PÉTR4", false},
		{"PET4", true}, // four characters: a root
		{"PETR", true},
		{"PET", false},
		{"AB-D3", false},
		{"ABCDE", false},
		{"ABCD3E", false},
		{"", false},
		{"PETR4\x00", false},
		{"SELIC", false}, // API: a macro series, accepted there beside ValidTicker
		{"IPCA", true},   // API: also the shape of a root
		{"USD", false},   // API: a macro series
	} {
		if got := ValidTicker(c.s); got != c.want {
			t.Errorf("ValidTicker(%q) = %v, want %v", c.s, got, c.want)
		}
		if got := tickerRule.MatchString(c.s); got != c.want {
			t.Errorf("the documented rule on %q = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestValidTickerExhaustive compares ValidTicker with the documented
// rule on every string of up to 6 characters over an alphabet that
// reaches each branch (and the byte values around them).
func TestValidTickerExhaustive(t *testing.T) {
	const alpha = "AZ09a@[/:\x00"
	var rec func(b []byte)
	rec = func(b []byte) {
		s := string(b)
		if got, want := ValidTicker(s), tickerRule.MatchString(s); got != want {
			t.Fatalf("ValidTicker(%q) = %v, the documented rule %v", s, got, want)
		}
		if len(b) == 6 {
			return
		}
		for i := 0; i < len(alpha); i++ {
			rec(append(b, alpha[i]))
		}
	}
	rec(nil)
}

// tickerSink keeps ValidTicker's result alive in TestValidTickerAllocs.
var tickerSink bool

func TestValidTickerAllocs(t *testing.T) {
	s := "TAEE11"
	if n := testing.AllocsPerRun(100, func() { tickerSink = ValidTicker(s) }); n > 0 {
		t.Errorf("ValidTicker allocates %v times", n)
	}
}

// FuzzValidTicker holds ValidTicker to the documented rule on any input.
func FuzzValidTicker(f *testing.F) {
	for _, s := range []string{"PETR4", "TAEE11", "A1BB34", "PETR4F", "BBFI11B", "petr4", "SELIC", "", "ABCD", "PETR4\x00", "PÉTR4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidTicker(s), tickerRule.MatchString(s); got != want {
			t.Fatalf("ValidTicker(%q) = %v, the documented rule %v", s, got, want)
		}
	})
}
