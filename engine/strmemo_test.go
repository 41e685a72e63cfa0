package engine

import (
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
