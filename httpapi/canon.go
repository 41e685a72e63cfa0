package httpapi

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// Two requests that ask the same thing get the same answer key (and so the
// same ETag and the same kept answer) whatever their spelling: the query's
// parameters are keyed by their declared order and normalized values, and
// a JSON body by its canonical form (no whitespace, object members sorted
// by key).

// appendQueryKey appends the normalized values of q's parameters to dst:
// in declaration order, an empty value as absent, integers in decimal,
// enums as declared (when matched ignoring case), timestamps as instants,
// list items trimmed. format is left out: the representation is keyed on
// its own. A value that does not parse is kept as sent (the handler
// refuses it).
func appendQueryKey(dst []byte, q *query) []byte {
	for i := range q.params {
		p := &q.params[i]
		v := q.vals[i]
		if q.seen&(1<<i) == 0 || v == "" || p.In != InQuery || p.Name == "format" {
			continue
		}
		dst = append(dst, byte(i), '=')
		switch p.Type {
		case TypeInteger:
			if n, err := strconv.Atoi(v); err == nil {
				dst = strconv.AppendInt(dst, int64(n), 10)
				break
			}
			dst = append(dst, v...)
		case TypeEnum:
			dst = append(dst, foldEnum(p, v)...)
		case TypeTimestamp:
			if t, err := parseTimestamp(v); err == nil {
				dst = strconv.AppendInt(dst, t.UnixNano(), 10)
				break
			}
			dst = append(dst, v...)
		case TypeAsOf:
			if t, _, err := parseAsOf(v); err == nil {
				dst = strconv.AppendInt(dst, t.UnixNano(), 10)
				break
			}
			dst = append(dst, v...)
		case TypeList:
			for j := 0; ; j++ {
				item, rest, more := strings.Cut(v, ",")
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, strings.TrimSpace(item)...)
				if !more {
					break
				}
				v = rest
			}
		default:
			dst = append(dst, v...)
		}
		dst = append(dst, 0)
	}
	return dst
}

// foldEnum returns the declared value v matches (ignoring case when the
// declaration folds), else v.
func foldEnum(p *Param, v string) string {
	for _, e := range p.Enum {
		if v == e || p.Fold && strings.EqualFold(v, e) {
			return e
		}
	}
	return v
}

// maxCanonDepth bounds the nesting appendCanonical follows; a deeper
// body is keyed as sent.
const maxCanonDepth = 64

// canonJSON writes JSON documents in canonical form. Its scratch is
// reused: one per call.
type canonJSON struct {
	src []byte
	mem []member // members of the objects being written, a stack
}

// member is an object member of src: its key (quotes included) and value
// spans.
type member struct{ k0, k1, v0, v1 int }

// appendCanonical appends the canonical form of the JSON document src to
// dst: no whitespace outside strings, object members sorted by their key
// as written (duplicates kept in order), strings and numbers as written.
// It reports false, with dst as given, when src is not one JSON value
// (the handler refuses it; it is keyed as sent).
func (c *canonJSON) appendCanonical(dst, src []byte) ([]byte, bool) {
	// Most bodies are sent the same way every time: their compact form,
	// when its members are already in order, is the canonical form.
	if out, sorted, ok := appendCompact(dst, src); ok && sorted {
		return out, true
	}
	c.src = src
	defer func() { c.src = nil; c.mem = c.mem[:0] }()
	start := len(dst)
	out, end, ok := c.value(dst, skipWS(src, 0), 0)
	if !ok || skipWS(src, end) != len(src) {
		return dst[:start], false
	}
	return out, true
}

// value appends the canonical form of the value at i and returns the
// index after it.
func (c *canonJSON) value(dst []byte, i, depth int) ([]byte, int, bool) {
	if i >= len(c.src) || depth > maxCanonDepth {
		return dst, i, false
	}
	switch c.src[i] {
	case '{':
		return c.object(dst, i, depth)
	case '[':
		return c.array(dst, i, depth)
	}
	end, ok := skipValue(c.src, i, depth)
	if !ok {
		return dst, i, false
	}
	return append(dst, c.src[i:end]...), end, true
}

// object appends the object at i with its members sorted by key.
func (c *canonJSON) object(dst []byte, i, depth int) ([]byte, int, bool) {
	src := c.src
	base := len(c.mem)
	defer func() { c.mem = c.mem[:base] }()
	end, ok := eachItem(src, i, '}', func(j int) (int, bool) {
		k1, ok := skipString(src, j)
		if !ok || src[j] != '"' {
			return j, false
		}
		v0 := skipWS(src, k1)
		if v0 >= len(src) || src[v0] != ':' {
			return v0, false
		}
		v0 = skipWS(src, v0+1)
		v1, ok := skipValue(src, v0, depth+1)
		c.mem = append(c.mem, member{j, k1, v0, v1})
		return v1, ok
	})
	if !ok {
		return dst, end, false
	}
	ms := c.mem[base:]
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(src[a.k0:a.k1], src[b.k0:b.k1]) })
	dst = append(dst, '{')
	for k, m := range ms {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, src[m.k0:m.k1]...), ':')
		if dst, _, ok = c.value(dst, m.v0, depth+1); !ok {
			return dst, m.v0, false
		}
	}
	return append(dst, '}'), end, true
}

// array appends the array at i, its items in canonical form.
func (c *canonJSON) array(dst []byte, i, depth int) ([]byte, int, bool) {
	dst = append(dst, '[')
	n := 0
	end, ok := eachItem(c.src, i, ']', func(j int) (int, bool) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		var next int
		var ok bool
		dst, next, ok = c.value(dst, j, depth+1)
		return next, ok
	})
	return append(dst, ']'), end, ok
}

// eachItem walks the items of the object or array opened at b[i] and
// closed by close: item(j) reads the item at j and returns the index after
// it. It returns the index after the closing byte.
func eachItem(b []byte, i int, close byte, item func(j int) (int, bool)) (int, bool) {
	j := skipWS(b, i+1)
	if j < len(b) && b[j] == close {
		return j + 1, true
	}
	for {
		if j >= len(b) {
			return j, false
		}
		var ok bool
		if j, ok = item(j); !ok {
			return j, false
		}
		j = skipWS(b, j)
		switch {
		case j < len(b) && b[j] == ',':
			j = skipWS(b, j+1)
		case j < len(b) && b[j] == close:
			return j + 1, true
		default:
			return j, false
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"').
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(b), false
}

// skipValue returns the index after the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxCanonDepth {
		return i, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{':
		return eachItem(b, i, '}', func(j int) (int, bool) {
			k, ok := skipString(b, j)
			if !ok || b[j] != '"' {
				return j, false
			}
			if k = skipWS(b, k); k >= len(b) || b[k] != ':' {
				return k, false
			}
			return skipValue(b, skipWS(b, k+1), depth+1)
		})
	case '[':
		return eachItem(b, i, ']', func(j int) (int, bool) { return skipValue(b, j, depth+1) })
	}
	j := i
	for j < len(b) && scalarByte(b[j]) {
		j++
	}
	return j, j > i
}

// scalarByte reports whether c can be part of a number or a literal.
func scalarByte(c byte) bool {
	return c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == 'E'
}

// appendCompact appends src without the whitespace outside its strings
// and reports whether every object's keys are in ascending order (then
// the result is src's canonical form, when src is JSON). ok is false when
// removing the whitespace could join two tokens (1 2 into 12): the
// caller then takes the slow path, which refuses what is not JSON.
func appendCompact(dst, src []byte) (out []byte, sorted, ok bool) {
	type frame struct {
		obj, key bool // an object; the next string is a key
		k0, k1   int  // the last key's span in dst (k1 0: none yet)
	}
	var stack [maxCanonDepth + 1]frame
	depth := 0
	sorted = true
	start := len(dst)
	gap := false // whitespace since the last byte written
	for i := 0; i < len(src); i++ {
		switch b := src[i]; b {
		case ' ', '\t', '\n', '\r':
			gap = true
			continue
		case '"':
			j, closed := skipString(src, i)
			if !closed {
				return dst[:start], false, false
			}
			k0 := len(dst)
			dst = append(dst, src[i:j]...)
			if f := &stack[depth]; f.obj && f.key {
				if f.k1 > 0 && bytes.Compare(dst[f.k0:f.k1], dst[k0:]) > 0 {
					sorted = false
				}
				f.k0, f.k1, f.key = k0, len(dst), false
			}
			i = j - 1
		case '{', '[':
			if depth == maxCanonDepth {
				return dst[:start], false, false
			}
			depth++
			stack[depth] = frame{obj: b == '{', key: b == '{'}
			dst = append(dst, b)
		case '}', ']':
			if depth > 0 {
				depth--
			}
			dst = append(dst, b)
		case ',':
			if stack[depth].obj {
				stack[depth].key = true
			}
			dst = append(dst, b)
		default:
			if gap && len(dst) > start && scalarByte(dst[len(dst)-1]) && scalarByte(b) {
				return dst[:start], false, false
			}
			dst = append(dst, b)
		}
		gap = false
	}
	return dst, sorted, true
}
