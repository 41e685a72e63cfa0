package engine

import (
	"math"
	"strings"
	"testing"
)

// strMemo answers only for a string lying where one put did (the same
// bytes), never for another string, however equal or colliding.
func TestStrMemo(t *testing.T) {
	m := newStrMemo(2) // 256 slots: the strings below collide
	a := strings.Clone("33000167000101")
	b := strings.Clone("33000167000101") // equal, elsewhere
	if _, ok := m.get(a); ok {
		t.Fatal("an empty memo answered")
	}
	m.put(a, 7)
	if v, ok := m.get(a); !ok || v != 7 {
		t.Errorf("get(a) = %d, %v; want 7, true", v, ok)
	}
	if v, ok := m.get(a[:len(a)-1]); ok {
		t.Errorf("a prefix of a answered %d", v)
	}
	if v, ok := m.get(b); ok {
		t.Errorf("an equal string elsewhere answered %d (by content: a lookup's work)", v)
	}
	m.put("", 3)
	if _, ok := m.get(""); ok {
		t.Error("the empty string answered")
	}
	// Many strings: each answers its own value or nothing.
	ss := make([]string, 5000)
	for i := range ss {
		ss[i] = strings.Repeat("x", i%7+1) + string(rune('a'+i%26))
		m.put(ss[i], int32(i))
	}
	for i := range ss {
		if v, ok := m.get(ss[i]); ok && v != int32(i) {
			t.Fatalf("string %d answered %d", i, v)
		}
	}
}

// grossValue's shortcut for a zero correction answers Sum's bits.
func TestGrossValueZeroCorrection(t *testing.T) {
	negZero := Num(math.Copysign(0, -1))
	for _, d := range []Num{0, negZero, 1.23, 0.1 + 0.2, 4.60861049, 1e-9, -2.5, 1e13, 123456789.123456, Num(math.MaxFloat64)} {
		for _, c := range []Num{0, negZero} {
			got, want := grossValue(d, c), Sum(d, c)
			if math.Float64bits(float64(got)) != math.Float64bits(float64(want)) {
				t.Errorf("grossValue(%v, %v) = %v (%016x), Sum gives %v (%016x)", d, c, got, math.Float64bits(float64(got)), want, math.Float64bits(float64(want)))
			}
		}
	}
}
