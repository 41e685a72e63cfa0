package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
)

// countWriter counts the writes a response gets.
type countWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.ResponseRecorder.Write(p)
}

// TestKeptAnswerWrittenWhole: an answer kept in several pages is sent
// again in one write (each write larger than the server's buffer is a
// system call and a send of its own), with the same bytes.
func TestKeptAnswerWrittenWhole(t *testing.T) {
	ts := newTestServer(t, true)
	const path = "/v2/companies/ENHZ/ratios"
	first := ts.do(http.MethodGet, path, testKeyDelayed, "")
	if first.Code != 200 || first.Body.Len() <= 2*keptPage {
		t.Fatalf("%s: %d, %d bytes: want an answer of more than two pages", path, first.Code, first.Body.Len())
	}
	r := httptest.NewRequest(http.MethodGet, path, nil)
	r.Header.Set("Authorization", "Bearer "+testKeyDelayed)
	w := &countWriter{ResponseRecorder: httptest.NewRecorder()}
	ts.api.ServeHTTP(w, r)
	if !bytes.Equal(w.Body.Bytes(), first.Body.Bytes()) {
		t.Fatal("the kept answer's bytes differ")
	}
	if hits := metricValue(t, ts.reg, "pregao_answer_cache_hits_total", ""); hits < 1 {
		t.Fatalf("the second request was not answered from the cache (%v hits)", hits)
	}
	if w.writes != 1 {
		t.Errorf("the kept answer of %d bytes took %d writes, want 1", w.Body.Len(), w.writes)
	}
}

// TestWriteParts: parts are joined into writes of at most partsBatch
// bytes (a part that large on its own is written alone), in order.
func TestWriteParts(t *testing.T) {
	page := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	for _, c := range []struct {
		name   string
		parts  [][]byte
		writes []int
	}{
		{"one page", [][]byte{page(100, 'a')}, []int{100}},
		{"pages under a batch", [][]byte{page(keptPage, 'a'), page(keptPage, 'b'), page(5, 'c')}, []int{2*keptPage + 5}},
		{"pages over a batch", [][]byte{page(partsBatch-10, 'a'), page(keptPage, 'b'), page(3, 'c')}, []int{partsBatch - 10, keptPage + 3}},
		{"a part of a batch alone", [][]byte{page(10, 'a'), page(partsBatch, 'b'), page(7, 'c')}, []int{10, partsBatch, 7}},
		{"none", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []int
			var out bytes.Buffer
			writeParts(writerFunc(func(p []byte) (int, error) { got = append(got, len(p)); return out.Write(p) }), c.parts)
			if !slices.Equal(got, c.writes) || !bytes.Equal(out.Bytes(), bytes.Join(c.parts, nil)) {
				t.Errorf("writes %v, want %v (bytes equal: %v)", got, c.writes, bytes.Equal(out.Bytes(), bytes.Join(c.parts, nil)))
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
