package httpapi

import (
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
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

// pager walks a list's passing items in answer order: take counts each
// and reports whether it is within the window; total is the count, the
// whole filtered list (X-Total-Count, sent once the walk is over: the
// handlers that use it build their answer whole).
type pager struct {
	w     window
	total int
}

// take counts the next passing item and reports whether it is within
// the window.
func (p *pager) take() bool {
	k := p.total
	p.total++
	return p.w.in(k)
}

// hdrLink is the header of the next and previous pages (RFC 8288).
var hdrLink = http.CanonicalHeaderKey("Link")

// pageLinks returns the Link header of a page of a list of total items
// (RFC 8288): the request r's URL with offset moved, as rel="next" when
// items follow the window, rel="prev" when some precede it, and
// rel="first" and rel="last"; nil when the window is the whole list (no
// limit and no offset, or a first page holding every item). limit and
// offset are the request's, their declared defaults when absent (route's
// declarations).
func pageLinks(r *http.Request, rt *Route, totalText string) []string {
	if r == nil || rt == nil || r.URL == nil {
		return nil
	}
	if !strings.Contains(r.URL.RawQuery, "limit=") && !strings.Contains(r.URL.RawQuery, "offset=") && declaredInt(nil, rt, "limit") == 0 {
		return nil // the whole list (no allocation)
	}
	total, _ := strconv.Atoi(totalText)
	q := r.URL.Query()
	w := window{offset: declaredInt(q, rt, "offset"), limit: declaredInt(q, rt, "limit")}
	if w.limit <= 0 {
		if w.offset == 0 {
			return nil
		}
		w.limit = max(total-w.offset, w.offset) // no limit: "prev" is the start, "next" none
	}
	if w.offset == 0 && w.limit >= total {
		return nil // the whole list, in one page
	}
	link := func(offset int, rel string) string {
		q.Set("offset", strconv.Itoa(offset))
		return "<" + r.URL.EscapedPath() + "?" + q.Encode() + `>; rel="` + rel + `"`
	}
	last := 0
	if total > 0 {
		last = (total - 1) / w.limit * w.limit
	}
	var out []string
	if next := w.offset + w.limit; next < total {
		out = append(out, link(next, "next"))
	}
	if w.offset > 0 {
		// Past the end, the page before is the last one.
		out = append(out, link(min(max(0, w.offset-w.limit), last), "prev"))
	}
	out = append(out, link(0, "first"))
	out = append(out, link(last, "last"))
	return []string{strings.Join(out, ", ")}
}

// declaredInt is the integer query parameter name of q, else its default
// in rt's declarations (0 when undeclared or invalid: the handler has
// refused an invalid one already).
func declaredInt(q url.Values, rt *Route, name string) int {
	if s := q.Get(name); s != "" {
		v, _ := strconv.Atoi(s)
		return v
	}
	for i := range rt.Params {
		if p := &rt.Params[i]; p.Name == name && p.In == InQuery {
			d, _ := p.Default.(int)
			return d
		}
	}
	return 0
}

// cachedWindow is cachedList for a list that takes limit and offset: the
// whole list is encoded once per Dataset (slot) and a page is cut from it
// (arrayWindow), so every page agrees with the whole.
func cachedWindow(c *call, dst []byte, slot *atomic.Pointer[cachedAnswer], w window, enc func([]byte) ([]byte, int)) []byte {
	if w.all() {
		return cachedList(c, dst, slot, enc)
	}
	a := slot.Load()
	if a == nil {
		raw, n := enc(nil)
		a = &cachedAnswer{raw: raw, total: []string{strconv.Itoa(n)}}
		slot.Store(a)
	}
	dst, n := arrayWindow(dst, a.raw, w)
	c.setTotal(n)
	return dst
}

// arrayWindow appends to dst, as a JSON array, the items of the compact
// JSON array raw (as the encoders write it) within w, and returns the
// number of items of raw.
func arrayWindow(dst, raw []byte, w window) ([]byte, int) {
	dst = append(dst, '[')
	if len(raw) < 2 || raw[0] != '[' {
		return append(dst, ']'), 0
	}
	body := raw[1 : len(raw)-1]
	depth, inStr, esc, start, k, n := 0, false, false, 0, 0, 0
	item := func(end int) {
		if w.in(k) {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, body[start:end]...)
			n++
		}
		k++
	}
	for i, b := range body {
		switch {
		case esc:
			esc = false
		case inStr:
			switch b {
			case '\\':
				esc = true
			case '"':
				inStr = false
			}
		case b == '"':
			inStr = true
		case b == '{' || b == '[':
			depth++
		case b == '}' || b == ']':
			depth--
		case b == ',' && depth == 0:
			item(i)
			start = i + 1
		}
	}
	if len(body) > 0 {
		item(len(body))
	}
	return append(dst, ']'), k
}
