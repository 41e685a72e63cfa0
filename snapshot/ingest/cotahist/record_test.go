package cotahist

import (
	"strconv"
	"testing"
)

// TestNum compares the eight-at-a-time conversion with strconv on every
// width the layout uses.
func TestNum(t *testing.T) {
	for _, s := range []string{"0000000002348", "9999999999999", "0000000000000", "123456789012345678", "00001", "  12", "1", "12345678"} {
		line := []byte(s)
		got, err := num(line, 1, len(line), "F")
		want, _ := strconv.ParseInt(trimLeft(s), 10, 64)
		if err != nil || got != want {
			t.Errorf("num(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, col := range map[string]int{"00000000023:8": 12, "x0000000": 1, "0000000/": 8, "12 3": 3, "00000000000000000A": 18} {
		_, err := num([]byte(s), 1, len(s), "F")
		fe, ok := err.(*FieldError)
		if !ok || fe.Column != col {
			t.Errorf("num(%q): %v, want column %d", s, err, col)
		}
	}
}

func trimLeft(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	if s == "" {
		return "0"
	}
	return s
}
