package engine

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStampRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    time.Time
	}{
		{"zero", time.Time{}},
		{"whole second", time.Date(2024, 5, 10, 18, 30, 0, 0, time.UTC)},
		{"nanoseconds", time.Date(2024, 5, 10, 18, 30, 0, 123456789, time.UTC)},
		{"before 1970 with fraction", time.Date(1950, 1, 1, 0, 0, 0, 999999999, time.UTC)},
		{"unix epoch", time.Unix(0, 0).UTC()},
		{"unix epoch plus 1ns", time.Unix(0, 1).UTC()},
		{"year 0", time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"year 9999", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
		{"non-UTC zone", time.Date(2024, 5, 10, 15, 30, 0, 500, time.FixedZone("BRT", -3*3600))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := StampOf(tc.t)
			got := s.Time()
			if !got.Equal(tc.t) || got.IsZero() != tc.t.IsZero() || s.IsZero() != tc.t.IsZero() {
				t.Fatalf("StampOf(%v).Time() = %v", tc.t, got)
			}
			if !tc.t.IsZero() && got.Location() != time.UTC {
				t.Fatalf("location %v, want UTC", got.Location())
			}
			if sec, ns := s.Unix(); !s.IsZero() && MakeStamp(sec, ns) != s {
				t.Fatalf("MakeStamp(%d, %d) != %d", sec, ns, s)
			}
		})
	}
}

func TestStampOutsideNanosecondRange(t *testing.T) {
	// A fraction of a second outside 1824-2116 keeps whole seconds only.
	in := time.Date(1500, 3, 1, 12, 0, 0, 250, time.UTC)
	if got := StampOf(in).Time(); !got.Equal(in.Truncate(time.Second)) {
		t.Fatalf("got %v, want %v", got, in.Truncate(time.Second))
	}
	// Seconds saturate instead of wrapping.
	if sec, _ := MakeStamp(1<<63-1, 0).Unix(); sec != 1<<62-1 {
		t.Fatalf("saturated seconds %d", sec)
	}
	if sec, _ := MakeStamp(-1<<63, 0).Unix(); sec != -(1<<62 - 1) {
		t.Fatalf("saturated seconds %d", sec)
	}
}

func TestStampCompare(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 1).UTC(),
		time.Date(2024, 5, 10, 18, 30, 0, 0, time.UTC),
		time.Date(2024, 5, 10, 18, 30, 0, 1, time.UTC),
		time.Date(2024, 5, 10, 18, 30, 1, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, a := range times {
		for _, b := range times {
			if got, want := StampOf(a).Compare(StampOf(b)), a.Compare(b); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestFrequency(t *testing.T) {
	names := []string{"", FreqAnnual, FreqQuarterly, FreqTTM, FreqYTD, FreqDaily, FreqMonthly}
	var fs []Frequency
	for _, n := range names {
		f, ok := ParseFrequency(n)
		if !ok || f.String() != n {
			t.Fatalf("ParseFrequency(%q) = %v, %v", n, f, ok)
		}
		fs = append(fs, f)
	}
	// The numeric order is the order of the names.
	slices.Sort(fs)
	slices.Sort(names)
	for i := range fs {
		if fs[i].String() != names[i] {
			t.Fatalf("order %v, names %v", fs, names)
		}
	}
	for _, bad := range []string{"WEEKLY", "annual", " TTM"} {
		if _, ok := ParseFrequency(bad); ok {
			t.Errorf("ParseFrequency(%q) accepted", bad)
		}
	}
	if s := Frequency(200).String(); s != "" {
		t.Errorf("out-of-range String() = %q", s)
	}
	if strings.Compare(FrequencyAnnual.String(), FrequencyYTD.String()) >= 0 {
		t.Error("ANNUAL must sort before YTD")
	}
}

func TestShareClass(t *testing.T) {
	names := []string{"", ClassCS, ClassPS, ClassPSA, ClassPSB, ClassPSC, ClassPSD, ClassPSE, ClassUnit, ClassBDR,
		ClassFundUnit, ClassMacro}
	var cs []ShareClass
	for _, n := range names {
		c, ok := ParseShareClass(n)
		if !ok || c.String() != n {
			t.Fatalf("ParseShareClass(%q) = %v, %v", n, c, ok)
		}
		cs = append(cs, c)
	}
	// The numeric order is the order of the names.
	slices.Sort(cs)
	slices.Sort(names)
	for i := range cs {
		if cs[i].String() != names[i] {
			t.Fatalf("order %v, names %v", cs, names)
		}
	}
	for _, bad := range []string{"ON", "cs", "PSF"} {
		if _, ok := ParseShareClass(bad); ok {
			t.Errorf("ParseShareClass(%q) accepted", bad)
		}
	}
	if s := ShareClass(200).String(); s != "" {
		t.Errorf("out-of-range String() = %q", s)
	}
}
