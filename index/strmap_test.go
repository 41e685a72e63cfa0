package index

import (
	"fmt"
	"strings"
	"testing"
)

func mustMap(tb testing.TB, keys ...string) *Map[int] {
	tb.Helper()
	vals := make([]int, len(keys))
	for i := range vals {
		vals[i] = i
	}
	m, err := NewMap(keys, vals)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func collect(fn func(func(string, int) bool)) string {
	var b []string
	fn(func(k string, v int) bool { b = append(b, fmt.Sprintf("%s=%d", k, v)); return true })
	return strings.Join(b, ",")
}

func TestNewMapErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
		vals []int
		want string
	}{
		{"length", []string{"a"}, nil, "1 keys for 0 values"},
		{"dup", []string{"a", "a"}, []int{1, 2}, `duplicate key "a"`},
		{"unsorted", []string{"b", "a"}, []int{1, 2}, `key "a" after "b"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMap(tc.keys, tc.vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMapGet(t *testing.T) {
	m := mustMap(t, "ABEV3", "PETR3", "PETR4", "VALE3")
	for _, tc := range []struct {
		key  string
		want int
		ok   bool
	}{
		{"ABEV3", 0, true}, {"PETR3", 1, true}, {"PETR4", 2, true}, {"VALE3", 3, true},
		{"PETR", 0, false}, {"", 0, false}, {"ZZZZ", 0, false}, {"petr4", 0, false},
	} {
		got, ok := m.Get(tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Get(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
	if m.Len() != 4 {
		t.Errorf("Len = %d", m.Len())
	}
}

func TestMapEmpty(t *testing.T) {
	var nilMap *Map[int]
	var zero Map[int]
	for _, m := range []*Map[int]{nilMap, &zero, mustMap(t)} {
		if _, ok := m.Get("x"); ok || m.Len() != 0 {
			t.Fatal("empty map has keys")
		}
		if s := collect(func(f func(string, int) bool) { m.Ascend("", f) }); s != "" {
			t.Fatal(s)
		}
		if s := collect(func(f func(string, int) bool) { m.Descend("z", f) }); s != "" {
			t.Fatal(s)
		}
		if s := collect(m.Scan) + collect(m.Reverse); s != "" {
			t.Fatal(s)
		}
		if _, _, ok := m.Min(); ok {
			t.Fatal("Min on empty")
		}
		if _, _, ok := m.Max(); ok {
			t.Fatal("Max on empty")
		}
	}
}

func TestMapOrdered(t *testing.T) {
	m := mustMap(t, "A", "AB", "ABC", "B", "BA", "C")
	f := func(name, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	f("Ascend(AB)", collect(func(fn func(string, int) bool) { m.Ascend("AB", fn) }), "AB=1,ABC=2,B=3,BA=4,C=5")
	f("Ascend(AA)", collect(func(fn func(string, int) bool) { m.Ascend("AA", fn) }), "AB=1,ABC=2,B=3,BA=4,C=5")
	f("Descend(B)", collect(func(fn func(string, int) bool) { m.Descend("B", fn) }), "B=3,ABC=2,AB=1,A=0")
	f("Descend(BB)", collect(func(fn func(string, int) bool) { m.Descend("BB", fn) }), "BA=4,B=3,ABC=2,AB=1,A=0")
	f("Range(AB,BA)", collect(func(fn func(string, int) bool) { m.Range("AB", "BA", fn) }), "AB=1,ABC=2,B=3")
	f("Range(C,A)", collect(func(fn func(string, int) bool) { m.Range("C", "A", fn) }), "")
	f("Prefix(AB)", collect(func(fn func(string, int) bool) { m.Prefix("AB", fn) }), "AB=1,ABC=2")
	f("Prefix(B)", collect(func(fn func(string, int) bool) { m.Prefix("B", fn) }), "B=3,BA=4")
	f("Prefix(X)", collect(func(fn func(string, int) bool) { m.Prefix("X", fn) }), "")
	f("Prefix()", collect(func(fn func(string, int) bool) { m.Prefix("", fn) }), "A=0,AB=1,ABC=2,B=3,BA=4,C=5")
	f("Scan", collect(m.Scan), "A=0,AB=1,ABC=2,B=3,BA=4,C=5")
	f("Reverse", collect(m.Reverse), "C=5,BA=4,B=3,ABC=2,AB=1,A=0")
	// Early stop.
	n := 0
	m.Scan(func(string, int) bool { n++; return n < 2 })
	if n != 2 {
		t.Errorf("Scan did not stop: %d", n)
	}
	if k, v, ok := m.Min(); k != "A" || v != 0 || !ok {
		t.Errorf("Min = %q %d %v", k, v, ok)
	}
	if k, v, ok := m.Max(); k != "C" || v != 5 || !ok {
		t.Errorf("Max = %q %d %v", k, v, ok)
	}
}

func TestBuilder(t *testing.T) {
	var b Builder[int]
	for i, k := range []string{"VALE3", "ABEV3", "PETR4", "PETR3"} {
		b.Add(k, i)
	}
	if b.Len() != 4 {
		t.Fatal(b.Len())
	}
	m, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := collect(m.Scan); got != "ABEV3=1,PETR3=3,PETR4=2,VALE3=0" {
		t.Fatal(got)
	}
	b.Add("X", 1)
	b.Add("X", 2)
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), `duplicate key "X"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMapLarge(t *testing.T) {
	// Enough keys for a multi-level tree.
	var b Builder[int]
	for i := 0; i < 20000; i++ {
		b.Add(fmt.Sprintf("K%06d", i), i)
	}
	m, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20000; i += 7 {
		if v, ok := m.Get(fmt.Sprintf("K%06d", i)); !ok || v != i {
			t.Fatalf("Get %d = %d %v", i, v, ok)
		}
	}
	prev := -1
	m.Scan(func(k string, v int) bool {
		if v != prev+1 {
			t.Fatalf("order broken at %s", k)
		}
		prev = v
		return true
	})
}

func TestMapGetZeroAlloc(t *testing.T) {
	m := mustMap(t, "ABEV3", "PETR3", "PETR4", "VALE3")
	key := strings.ToUpper("petr4")
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := m.Get(key); !ok {
			t.Fatal("miss")
		}
		m.Get("NOPE")
	}); n > 0 {
		t.Errorf("Get allocates %v times per run", n)
	}
}

var sinkInt int

func BenchmarkMapGet(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		var bl Builder[int]
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("T%05dX", i)
			bl.Add(keys[i], i)
		}
		m, err := bl.Build()
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				v, _ := m.Get(keys[i%n])
				sinkInt += v
			}
		})
	}
}

func BenchmarkMapPrefix(b *testing.B) {
	var bl Builder[int]
	for i := 0; i < 10000; i++ {
		bl.Add(fmt.Sprintf("P%04d%d", i/10, i%10), i)
	}
	m, _ := bl.Build()
	b.ReportAllocs()
	for b.Loop() {
		m.Prefix("P0500", func(_ string, v int) bool { sinkInt += v; return true })
	}
}
