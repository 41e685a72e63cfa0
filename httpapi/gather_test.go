package httpapi

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// readerFromWriter records how writeParts writes: its Write calls, and
// what its ReadFrom is handed.
type readerFromWriter struct {
	out    bytes.Buffer
	writes []int
	froms  int
}

func (w *readerFromWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	return w.out.Write(p)
}

func (w *readerFromWriter) ReadFrom(r io.Reader) (int64, error) {
	w.froms++
	return io.Copy(&w.out, r)
}

// testParts returns n parts of varied sizes (pages, bigger and smaller)
// and their bytes joined.
func testParts(n int) ([][]byte, []byte) {
	parts := make([][]byte, n)
	for i := range parts {
		p := make([]byte, []int{keptPage, keptPage, 1, 3 * keptPage, partsBatch, 77}[i%6])
		for j := range p {
			p[j] = byte(i*7 + j)
		}
		parts[i] = p
	}
	return parts, bytes.Join(parts, nil)
}

// TestWritePartsGathersTheRest: to a writer with ReadFrom (the server's
// ResponseWriter), the first batch goes as one Write and everything after
// it through one ReadFrom, the same bytes in order.
func TestWritePartsGathersTheRest(t *testing.T) {
	for _, c := range []struct {
		name   string
		parts  [][]byte
		writes []int
		froms  int
	}{
		{"one batch", [][]byte{make([]byte, keptPage), make([]byte, 5)}, []int{keptPage + 5}, 0},
		{"a big first part", [][]byte{make([]byte, partsBatch), make([]byte, keptPage), make([]byte, 3)}, []int{partsBatch}, 1},
		{"many pages", func() [][]byte { p, _ := testParts(100); return p }(), []int{5*keptPage + 1}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &readerFromWriter{}
			writeParts(w, c.parts)
			if !slices.Equal(w.writes, c.writes) || w.froms != c.froms {
				t.Errorf("writes %v and %d ReadFrom, want %v and %d", w.writes, w.froms, c.writes, c.froms)
			}
			if !bytes.Equal(w.out.Bytes(), bytes.Join(c.parts, nil)) {
				t.Error("the bytes differ")
			}
		})
	}
}

// TestGatheredPartsToConn: given a TCP connection, the parts go out in
// gathered writes (more parts than one writev takes, too), every byte
// once and in order, the parts themselves left as they were (they are a
// kept answer's, shared).
func TestGatheredPartsToConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	parts, want := testParts(2500)
	kept := make([][]byte, len(parts))
	copy(kept, parts)
	got := make(chan []byte)
	go func() { b, _ := io.ReadAll(client); got <- b }()
	g := &gatheredParts{parts: parts}
	// A first read of part of a part, as a reader that reads first would.
	head := make([]byte, 10)
	if n, err := g.Read(head); n != 10 || err != nil {
		t.Fatalf("Read = %d, %v", n, err)
	}
	n, err := g.WriteTo(server)
	if err != nil || n != int64(len(want)-10) {
		t.Fatalf("WriteTo = %d, %v; want %d", n, err, len(want)-10)
	}
	server.Close()
	if b := append(head, <-got...); !bytes.Equal(b, want) {
		t.Fatalf("received %d bytes, want %d (or different bytes)", len(b), len(want))
	}
	for i := range parts {
		if &parts[i][0] != &kept[i][0] || len(parts[i]) != len(kept[i]) {
			t.Fatalf("part %d was changed", i)
		}
	}
	if !bytes.Equal(bytes.Join(parts, nil), want) {
		t.Fatal("the parts' bytes were changed")
	}
}

// TestGatheredPartsToWriter: to a writer that is not a connection, the
// parts are joined into batches as writeParts joins them; Read gives the
// same bytes.
func TestGatheredPartsToWriter(t *testing.T) {
	parts, want := testParts(40)
	w := &readerFromWriter{}
	g := &gatheredParts{parts: parts}
	if n, err := g.WriteTo(w); err != nil || n != int64(len(want)) {
		t.Fatalf("WriteTo = %d, %v; want %d", n, err, len(want))
	}
	if !bytes.Equal(w.out.Bytes(), want) {
		t.Fatal("the bytes differ")
	}
	for _, n := range w.writes {
		if n > partsBatch {
			t.Fatalf("a write of %d bytes, over a batch", n)
		}
	}
	if len(w.writes) >= len(parts) {
		t.Fatalf("%d writes for %d parts: not joined", len(w.writes), len(parts))
	}
	b, err := io.ReadAll(struct{ io.Reader }{&gatheredParts{parts: parts}})
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("Read: %d bytes, %v", len(b), err)
	}
}

// fromRecorder is a ResponseWriter with ReadFrom, as the server's is.
type fromRecorder struct {
	*httptest.ResponseRecorder
	froms int
}

func (f *fromRecorder) ReadFrom(r io.Reader) (int64, error) {
	f.froms++
	return io.Copy(f.ResponseRecorder, r)
}

// TestLogWriterReadFrom: what a logged request's writer is handed by
// ReadFrom goes to the server's ReadFrom (or, without one, to its Write)
// and is counted in the access-log line's bytes, with the status.
func TestLogWriterReadFrom(t *testing.T) {
	parts, want := testParts(30)
	for _, withFrom := range []bool{true, false} {
		rec := httptest.NewRecorder()
		var under http.ResponseWriter = rec
		fr := &fromRecorder{ResponseRecorder: rec}
		if withFrom {
			under = fr
		}
		lw := &logWriter{ResponseWriter: under}
		writeParts(lw, parts)
		if !bytes.Equal(rec.Body.Bytes(), want) || lw.e.bytes != int64(len(want)) || lw.e.status != http.StatusOK {
			t.Errorf("ReadFrom below: %v: %d bytes sent (equal %v), %d counted, status %d; want %d, 200",
				withFrom, rec.Body.Len(), bytes.Equal(rec.Body.Bytes(), want), lw.e.bytes, lw.e.status, len(want))
		}
		if withFrom && fr.froms != 1 {
			t.Errorf("the server's ReadFrom was called %d times, want 1", fr.froms)
		}
	}
}

// TestGatheredPartsToOtherConn: a connection that net.Buffers would
// write a part at a time (not TCP or Unix: a pipe here, a TLS connection
// in use) gets the parts joined, as any writer does.
func TestGatheredPartsToOtherConn(t *testing.T) {
	parts, want := testParts(40)
	server, client := net.Pipe()
	defer client.Close()
	got := make(chan []int)
	var out bytes.Buffer
	go func() {
		var reads []int
		buf := make([]byte, 1<<20)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				reads = append(reads, n)
				out.Write(buf[:n])
			}
			if err != nil {
				got <- reads
				return
			}
		}
	}()
	n, err := (&gatheredParts{parts: parts}).WriteTo(server)
	server.Close()
	reads := <-got
	if err != nil || n != int64(len(want)) || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("WriteTo = %d, %v; %d bytes received, want %d", n, err, out.Len(), len(want))
	}
	if len(reads) >= len(parts) {
		t.Errorf("%d writes for %d parts: not joined", len(reads), len(parts))
	}
}
