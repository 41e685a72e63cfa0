package httpapi

import (
	"iter"
	"net/http"
)

// Pagination of the lists that can be large (addition): limit and offset
// choose a window of the answer's items, in answer order, and the header
// X-Total-Count gives the number of items of the whole filtered list, so
// that the answer keeps the specification's array shape.

// MaxListLimit is the largest limit of a paginated list.
const MaxListLimit = 10_000

// listLimit is the limit of the paginated lists: absent, the whole list.
var listLimit = Param{Name: "limit", In: InQuery, Type: TypeInteger, Min: 1, Max: MaxListLimit,
	Desc: "at most this many items, after offset (default: every item); X-Total-Count gives the size of the whole list (addition)"}

// hdrTotal is the header of a paginated list's size.
var hdrTotal = http.CanonicalHeaderKey("X-Total-Count")

// window is the limit/offset window of a list (limit 0: no limit).
type window struct{ offset, limit int }

// readWindow reads limit (listLimit) and offset (listOffset).
func readWindow(q *query) window {
	return window{offset: q.integer("offset"), limit: q.integer("limit")}
}

// all reports whether w keeps every item.
func (w window) all() bool { return w.offset == 0 && w.limit == 0 }

// appendWindow appends, as a JSON array, the items of seq that pass keeps,
// within w, each encoded by enc; it sends their total first
// (X-Total-Count). Long answers are streamed.
func appendWindow[T any](c *call, dst []byte, seq iter.Seq[T], keep func(T) bool, w window, enc func([]byte, T) []byte) []byte {
	total := 0
	for e := range seq {
		if keep(e) {
			total++
		}
	}
	c.setTotal(total)
	dst = append(dst, '[')
	i, n := 0, 0
	for e := range seq {
		if !keep(e) {
			continue
		}
		if w.in(i) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = c.flush(enc(dst, e))
			n++
			if c.gone() || w.limit > 0 && n == w.limit {
				break
			}
		}
		i++
	}
	return append(dst, ']')
}

// sendCount sends the number of items i < n that pass (X-Total-Count).
func sendCount(c *call, n int, pass func(i int) bool) {
	total := 0
	for i := range n {
		if pass(i) {
			total++
		}
	}
	c.setTotal(total)
}

// in reports whether the k-th passing item (from 0) is within w.
func (w window) in(k int) bool {
	return k >= w.offset && (w.limit == 0 || k < w.offset+w.limit)
}
