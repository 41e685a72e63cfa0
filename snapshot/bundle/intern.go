package bundle

import (
	"strings"

	"github.com/pregao/pregao/engine"
)

// maxInterned bounds the distinct strings one interner keeps: past it,
// new values are returned as they are (a bundle whose "repeated" field
// is in fact unique on every line costs no more than without interning).
const maxInterned = 1 << 16

// interner returns one shared copy of each distinct string it is given,
// so that values repeated on many lines (account codes and names, company
// ids, tickers, enum values...) are held once per Read instead of once
// per line. A bundle at scale 10 has tens of millions of such fields. An
// interner belongs to one goroutine; a nil interner returns its argument.
type interner struct {
	m map[string]string
}

// s returns the shared copy of v.
func (t *interner) s(v string) string {
	if t == nil || v == "" {
		return v
	}
	if w, ok := t.m[v]; ok {
		return w
	}
	if t.m == nil {
		t.m = make(map[string]string, 1024)
	}
	if len(t.m) >= maxInterned {
		return v
	}
	// The decoder's string may share a small memory block with the
	// line's other, short-lived values: keep a copy of its own.
	v = strings.Clone(v)
	t.m[v] = v
	return v
}

// sources returns ss with an exact capacity (the decoder grows slices
// in steps) and the low-cardinality strings of each source interned.
// nil stays nil and empty stays empty.
func (t *interner) sources(ss []engine.Source) []engine.Source {
	if ss == nil {
		return nil
	}
	out := make([]engine.Source, len(ss))
	copy(out, ss)
	for i := range out {
		t.source(&out[i])
	}
	return out
}

// source interns the repeated strings of one source (its name; the
// addresses are usually unique and are kept as decoded).
func (t *interner) source(s *engine.Source) {
	s.Name = t.s(s.Name)
	if s.DownloadURL.Template() == 0 { // a template's part is short or a number
		whole, _ := s.DownloadURL.Part()
		s.DownloadURL = engine.URLOf(t.s(whole))
	}
}
