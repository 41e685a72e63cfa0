package index

import (
	"fmt"
	"runtime"
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
	if b.Len() != 0 {
		t.Errorf("Builder not reset: Len %d", b.Len())
	}
	if m.Len() != 4 {
		t.Errorf("Len = %d", m.Len())
	}
	for k, want := range map[string]int{"VALE3": 0, "ABEV3": 1, "PETR4": 2, "PETR3": 3} {
		if v, ok := m.Get(k); !ok || v != want {
			t.Errorf("Get(%q) = %d, %v; want %d", k, v, ok, want)
		}
	}
	// The error names the smallest key added twice, whatever the order.
	for _, keys := range [][]string{{"X", "A", "X"}, {"Z", "Y", "Z", "Y", "W"}, {"B", "B", "A", "A"}} {
		want := map[string]string{"X": `"X"`, "Z": `"Y"`, "B": `"A"`}[keys[0]]
		for i, k := range keys {
			b.Add(k, i)
		}
		if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), "duplicate key "+want) {
			t.Errorf("%v: err = %v, want duplicate key %s", keys, err, want)
		}
	}
}

func TestMapLarge(t *testing.T) {
	var b Builder[int]
	for i := 19999; i >= 0; i-- {
		b.Add(fmt.Sprintf("K%06d", i), i)
	}
	m, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if m.Len() != 20000 {
		t.Fatalf("Len = %d", m.Len())
	}
	for i := 0; i < 20000; i += 7 {
		if v, ok := m.Get(fmt.Sprintf("K%06d", i)); !ok || v != i {
			t.Fatalf("Get %d = %d %v", i, v, ok)
		}
	}
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

// BenchmarkMapBuild builds a Map of n ticker-like keys added out of
// order (what engine.Build does for tickers, company ids, CVM codes and
// the catalog) and reports the heap the Map keeps (retained-bytes).
func BenchmarkMapBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("T%05dX", (i*7919)%n)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			build := func() *Map[int32] {
				var bl Builder[int32]
				for i, k := range keys {
					bl.Add(k, int32(i))
				}
				m, err := bl.Build()
				if err != nil {
					b.Fatal(err)
				}
				return m
			}
			for b.Loop() {
				build()
			}
			b.StopTimer()
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			m := build()
			runtime.GC()
			runtime.ReadMemStats(&m1)
			runtime.KeepAlive(m)
			b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)), "retained-bytes")
		})
	}
}
