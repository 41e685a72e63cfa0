package snapshot

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// refUvarint is the reference reading of a minimal uvarint: what uv must
// give back (value and length), or ok false when it must fail.
func refUvarint(b []byte) (x uint64, n int, ok bool) {
	x, n = binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, false
	}
	if n > 1 && b[n-1] == 0 { // a last byte of 0 after others: not minimal
		return 0, 0, false
	}
	return x, n, true
}

// checkUv decodes b with pdec.uv and compares with refUvarint.
func checkUv(t *testing.T, b []byte) {
	t.Helper()
	want, n, ok := refUvarint(b)
	d := &pdec{b: b}
	got := d.uv()
	switch {
	case !ok && d.err == nil:
		t.Errorf("% x: read %d (%d bytes), want an error", b, got, d.i)
	case ok && (d.err != nil || got != want || d.i != n):
		t.Errorf("% x: read %d in %d bytes (err %v), want %d in %d", b, got, d.i, d.err, want, n)
	}
}

// Every length of uvarint, at the end of its input (the byte loop) and
// followed by other bytes (8 bytes read at once), reads as the reference
// reading does; non-minimal, truncated and overflowing ones fail.
func TestUvarint(t *testing.T) {
	vals := []uint64{0, 1, 127, 128, 255, 300, 16383, 16384, 1<<21 - 1, 1 << 21, 1<<28 + 5, 1<<35 - 1, 1 << 42, 1<<49 + 77, 1<<56 - 1, 1 << 56, 1<<63 + 12345, ^uint64(0)}
	for _, v := range vals {
		enc := binary.AppendUvarint(nil, v)
		checkUv(t, enc)
		checkUv(t, append(enc, 0xff, 0x80, 0x01, 7, 7, 7, 7, 7, 7))
		checkUv(t, append(enc, 0, 0, 0, 0, 0, 0, 0, 0))
	}
	for _, b := range [][]byte{
		{0x80, 0x00}, {0x80, 0x00, 1, 1, 1, 1, 1, 1, 1}, {0xff, 0x80, 0x00, 1, 1, 1, 1, 1, 1},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x00, 1},    // 9 bytes, last 0
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, // overflow
		{0x80, 0x80, 0x80}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80}, {},
	} {
		checkUv(t, b)
	}
}

func FuzzUvarint(f *testing.F) {
	f.Add([]byte{0x80, 0x01})
	f.Add([]byte{0xff, 0xff, 0x7f, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0x80, 0x00, 1, 1, 1, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) { checkUv(t, b) })
}

// BenchmarkIntCol decodes a column of 100,000 values of up to 35 bits
// (1 to 5 bytes each, as daily volumes in cents and quantities are).
func BenchmarkIntCol(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []byte
	const n = 100_000
	for range n {
		buf = binary.AppendUvarint(buf, uint64(r.Int64N(1<<35)))
	}
	dst := make([]int64, n)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		d := &pdec{b: buf}
		if d.intCol(dst, false); d.err != nil {
			b.Fatal(d.err)
		}
	}
}
